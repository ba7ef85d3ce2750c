/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A scripted fake DPDK telemetry v2 server for unit and plugin tests.
 *
 * It speaks the protocol of DPDK 22.11 (greeting, one reply datagram per request) and can
 * misbehave on purpose: no greeting, a bad greeting, EOF, silence, garbage, oversized or cut
 * replies, delays. It serves either one end of a socketpair() or a listening socket at a
 * temporary path (for code that connects by path), each connection in its own thread, like
 * DPDK does.
 */
#ifndef FAKE_SERVER_H
#define FAKE_SERVER_H

#include <stdbool.h>
#include <stddef.h>

/** The name of the server's threads, as DPDK 23.11 and later name their telemetry v2
 * listener and so its client threads (lib/telemetry/telemetry.c, set_thread_name()). */
#define FAKE_V2_THREAD_NAME "dpdk-telemet-v2"

/** What the server does with one request. */
enum fake_action {
	FAKE_REPLY, /* send reply (len bytes; len 0 = strlen) */
	FAKE_SILENT, /* send nothing, keep the connection, answer nothing more on it */
	FAKE_CLOSE, /* send the reply, if any, then close the connection */
};

struct fake_reply {
	enum fake_action action;
	char *data; /* malloc'ed by the handler, freed by the server */
	size_t len;
	int delay_ms; /* wait this long before acting */
	/* ... busy, on the CPU, as a driver that polls its firmware does (i40e's admin queue:
	 * drivers/net/i40e/base/i40e_adminq.c i40e_asq_send_command() spins in
	 * i40e_usec_delay(), rte_delay_us_block), not asleep as in an ioctl (mlx5) */
	bool spin;
	/* then, once the reply is sent, this long more on the CPU: work of the application's
	 * thread around a request that its service time does not show (waking up, its own
	 * bookkeeping) */
	int after_ms;
};

struct fake_server;

/**
 * Called for each request (NUL-terminated, as received) on one connection. Runs on that
 * connection's thread; must be thread-safe when several connections exist. @conn counts
 * connections from 0.
 */
typedef void (*fake_handler_t)(struct fake_server *fs, unsigned int conn, const char *req,
	struct fake_reply *out, void *arg);

struct fake_config {
	const char *path; /* socket path for fs_start_path (NULL: a new temporary one) */
	const char *greeting; /* NULL: the DPDK 22.11 greeting with this process's pid; copied */
	bool no_greeting; /* accept and say nothing */
	bool close_at_accept; /* accept and close at once (the 10-client cap) */
	long pid; /* pid in the default greeting (0: getpid()) */
	unsigned int max_output_len; /* in the default greeting (0: 16384) */
	fake_handler_t handler; /* NULL: a handler that answers golden-style defaults */
	void *arg;
};

/** Start a server on a temporary socket path; fs_path() gives the path. NULL on failure. */
struct fake_server *fs_start_path(const struct fake_config *cfg);
/** Start a server on one end of a socketpair; *ret_fd is the client end. */
struct fake_server *fs_start_pair(const struct fake_config *cfg, int *ret_fd);
/** Stop: close the listener and every connection, join the threads, unlink the path. */
void fs_stop(struct fake_server *fs);
/** Stop accepting and close the listener but leave its file: a stale socket. */
void fs_make_stale(struct fake_server *fs);

const char *fs_path(const struct fake_server *fs);
/** Requests received so far (all connections). */
unsigned int fs_requests(struct fake_server *fs);
/** Connections accepted so far. */
unsigned int fs_connections(struct fake_server *fs);
/** Connections the server has closed so far. */
unsigned int fs_closed(struct fake_server *fs);
/** True when a request arrived while one of another connection was being answered (what
 * DPDK before 26.07 can mix up: its parser's state is shared between connections). */
bool fs_saw_overlap(struct fake_server *fs);
/** True when a request arrived on a connection before its previous one was answered. */
bool fs_saw_pipelined(struct fake_server *fs);
/* Greet the connections accepted from now on (a server started with no_greeting that greets at
 * last, on the same socket file), or not. */
void fs_greet(struct fake_server *fs, bool greet);

/** Helper for handlers: a malloc'ed printf. */
char *fs_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/** The contents of tests/data/<name>, malloc'ed and NUL-terminated; aborts the test if absent. */
char *fs_golden(const char *name, size_t *ret_len);

#endif
