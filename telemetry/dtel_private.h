/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Internal helpers of libdpdktel, shared between its source files and its unit tests.
 * Nothing here is exported from libdpdktel.so.
 */
#ifndef DTEL_PRIVATE_H
#define DTEL_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "dtel.h"

/** Longest request the 22.11 server reads (it reads into a 1024-byte buffer). */
#define DTEL__REQUEST_MAX 1023
/** Commands of this length or longer are never looked up by the server (MAX_CMD_LEN). */
#define DTEL__COMMAND_MAX 56

/** CLOCK_MONOTONIC now, in nanoseconds. */
static inline uint64_t
dtel__now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/** Milliseconds left until @deadline_ns (0 when it has passed), for poll(). */
static inline int
dtel__ms_left(uint64_t deadline_ns)
{
	uint64_t now = dtel__now_ns();

	if (now >= deadline_ns)
		return 0;
	/* Round up so that a wait never ends a fraction of a millisecond early. */
	return (int)((deadline_ns - now + 999999u) / 1000000u);
}

/**
 * Check a request: "/cmd" or "/cmd,params", at most DTEL__REQUEST_MAX bytes, a command part
 * of [A-Za-z0-9_/] shorter than DTEL__COMMAND_MAX, no control characters. On success writes
 * the length of the command part to *ret_cmd_len. Returns 0 or -EINVAL.
 */
int dtel__check_request(const char *req, size_t *ret_cmd_len);

/**
 * What the I/O of a request tells the shared session that owns it (registry.c), and what it
 * asks of it. NULL where nobody shares the session.
 */
struct dtel__io {
	/* When the application started on the request now awaited (its send, or the reply
	 * before it), CLOCK_MONOTONIC ns; 0 while none is awaited. Stored atomically: requests
	 * queued behind this one read it to tell a slow queue from an application that does
	 * not answer. */
	uint64_t *serving_since_ns;
	/* Batches: asked before sending more; true to send nothing more and return
	 * DTEL__YIELDED as soon as the requests sent are answered. */
	bool (*yield)(void *arg);
	void *arg;
	/* Added to: the application's time on the requests answered (each from the moment it
	 * could start on it: its send, or the previous reply), and their count. */
	uint64_t service_ns;
	size_t answered;
	/* When not NULL: the time of the i-th request answered goes to sample_ns[i] (room for
	 * every request of the call). */
	uint64_t *sample_ns;
};

/** dtel__session_query_many() stopped early for dtel__io.yield: every request sent is answered. */
#define DTEL__YIELDED 1

/**
 * Query over an open session. *ret_sent tells whether the request went out: a connection
 * found closed before sending (-ECONNRESET, *ret_sent false) can be reopened and the request
 * sent again without risk of running it twice. @io may be NULL.
 */
int dtel__session_query(struct dtel_session *s, const char *cmd, int timeout_ms,
	struct dtel_reply *ret_reply, bool *ret_sent, struct dtel__io *io);

/**
 * The checks of dtel_shared_query_many()'s arguments (every request as
 * dtel__check_request() wants it), and every result -ECANCELED with an empty reply.
 * 0 or -EINVAL.
 */
int dtel__many_prepare(const char *const *cmds, size_t n, unsigned int window, int timeout_ms,
	struct dtel_reply *ret_replies, int *ret_results);

/**
 * @n requests over an open session, at most @window of them unanswered at a time (the
 * application's telemetry thread reads one request at a time and answers each in order;
 * SOCK_SEQPACKET keeps the requests apart). ret_results[i]: 0 (ret_replies[i] then owned by
 * the caller), -ENODATA, -ENOMEM, or the error that ended the connection for the request it
 * met; -ECONNABORTED for those sent after it (their replies never read), -ECANCELED for
 * those never sent. Each reply must come within @timeout_ms of the moment the application
 * could start on it (its send, or the previous reply). Returns 0, DTEL__YIELDED (@io's
 * yield said so: requests [*ret_sent, n) were not sent, every one before is answered), or
 * the error that ended the batch; the connection is dropped when that error ends it or
 * when replies are still to come (no reply of ours is left in flight on a connection that
 * stays open); *ret_sent: how many requests went out (0 with -ECONNRESET: none ran). @io
 * may be NULL.
 */
int dtel__session_query_many(struct dtel_session *s, const char *const *cmds, size_t n,
	unsigned int window, int timeout_ms, struct dtel_reply *ret_replies, int *ret_results,
	size_t *ret_sent, struct dtel__io *io);

/**
 * The thread of application process @pid that serves our connection, opened at
 * @opened_boot_ns (CLOCK_BOOTTIME): its /proc schedstat file, opened into *ret_fd (the
 * caller's, close() it), and its tid into *ret_tid (may be NULL). -ENOENT when no telemetry
 * v2 client thread started after that, -EEXIST when several did (which one is ours is not
 * known), or /proc's error (appcpu.c).
 */
int dtel__server_thread(long pid, uint64_t opened_boot_ns, int *ret_fd, long *ret_tid);

/** The CPU time (ns) of the thread whose schedstat file is open on @fd. 0 or -errno. */
int dtel__thread_cpu_ns(int fd, uint64_t *ret_ns);

/** CLOCK_BOOTTIME now, in nanoseconds (the clock of /proc's start times). */
uint64_t dtel__boottime_ns(void);

/** The socket file a path names (stat(), following links): 0s when there is none. */
struct dtel__sock_file {
	uint64_t dev, ino; /* ino 0: no socket file */
	uint64_t ctime_ns; /* its change time: a new file, or new permissions */
};

/** What tells the process behind a connection (owner.c); 0 for what is not known. */
struct dtel__owner {
	long peer; /* SO_PEERCRED: its pid in our pid namespace (0: not in it) */
	unsigned long long start; /* when @peer started (/proc/<pid>/stat, clock ticks) */
	long greet; /* its greeting's pid: its getpid() in its own pid namespace */
	struct dtel__sock_file sock; /* the socket file, as it was just before we connected */
};

/** When process @pid (of our pid namespace) started, in clock ticks since boot; 0 when
 * /proc does not say (no such process, hidepid, @pid 0). */
unsigned long long dtel__proc_start_ticks(long pid);
/** The same from a stat file of /proc (a process's or a thread's: .../task/<tid>/stat). */
unsigned long long dtel__stat_start_ticks(const char *stat_path);

/** The socket file at @path into *ret (zeroed when there is none, or it is no socket). */
void dtel__sock_file_of(const char *path, struct dtel__sock_file *ret);

/**
 * Whether @now (a new connection) is the process @gen names: false when anything known of
 * both differs (a pid, a start time, a greeting's pid, the socket file's inode), or the
 * socket file's change time does while the pid and start time do not prove the same process
 * (owner.c says why). Pure.
 */
bool dtel__owner_same(const struct dtel__owner *gen, const struct dtel__owner *now);

/** Take into @gen what @now knows of the same process (its greeting after a connect without
 * one, the socket file's new change time after a chmod). */
void dtel__owner_merge(struct dtel__owner *gen, const struct dtel__owner *now);

/**
 * Who is at the other end of a session: the process's pid in our pid namespace (SO_PEERCRED;
 * 0 when unknown) and when we connected (CLOCK_BOOTTIME ns).
 */
void dtel__session_peer(const struct dtel_session *s, long *ret_pid, uint64_t *ret_opened_boot_ns);

/** False once an error closed the session's connection (it is of no more use). */
bool dtel__session_is_open(const struct dtel_session *s);

/**
 * Open with an absolute CLOCK_MONOTONIC deadline instead of a timeout. Once connected,
 * *ret_peer_pid (when not NULL) gets the pid of the process listening on the socket
 * (SO_PEERCRED, 0: unknown), also when its greeting then never comes; it is left untouched
 * when the connect itself failed.
 */
int dtel__session_open_until(
	const char *path, uint64_t deadline_ns, struct dtel_session **ret, long *ret_peer_pid);

/**
 * Make a session of an already connected SOCK_SEQPACKET socket (takes ownership of @fd, also
 * on failure) and read its greeting. For the unit tests' socketpair() fake server.
 */
int dtel__session_attach(int fd, int timeout_ms, struct dtel_session **ret);

struct dtel__jframe;
struct dtel__jtok;
/**
 * Walk a reply {"<cmd>": value} (any key when @cmd is NULL), handing the events of value to
 * @inner with paths relative to it; *ret_flags gets the reply's flags and DTEL_F_DICT_FULL /
 * DTEL_F_ARRAY_FULL. -ENODATA for a null value, -EPROTO for anything malformed. (parse.c)
 */
int dtel__walk_reply(const struct dtel_reply *reply, const char *cmd,
	int (*inner)(void *, const struct dtel__jframe *, int, const struct dtel__jtok *),
	void *ctx, unsigned int *ret_flags);

/** True for errors after which a session cannot be used any more. */
bool dtel__error_closes(int err);

#endif /* DTEL_PRIVATE_H */
