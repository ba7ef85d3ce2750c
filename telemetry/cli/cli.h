/* SPDX-License-Identifier: BSD-3-Clause */
/* The dpdktel command-line client: shared declarations. */
#ifndef DPDKTEL_CLI_H
#define DPDKTEL_CLI_H

#include <stdbool.h>
#include <stdint.h>

#include "dtel.h"

#define EXIT_ERROR 1
#define EXIT_USAGE 2

/** Options that come before the subcommand. */
struct cli_opts {
	const char *runtime_dir; /* NULL: dtel_runtime_dir() */
	const char *prefix; /* -p */
	const char *socket; /* -s */
	unsigned int index; /* -N: dpdk_telemetry.v2:N */
	int timeout_ms; /* -t */
};

/** Print "dpdktel: <message>" on stderr. */
void cli_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/**
 * Resolve the socket the options name into path (DTEL_PATH_MAX bytes). Without -p and -s,
 * takes the default prefix "rte" when it exists, else the only live application. Prints the
 * reason and returns EXIT_ERROR or EXIT_USAGE when there is no single answer; 0 on success.
 */
int cli_resolve_socket(const struct cli_opts *o, char *path);

/** Print why talking to path failed (err < 0) in the user's terms; returns EXIT_ERROR. */
int cli_fail(const struct cli_opts *o, const char *path, int err);

/** Open a session to the socket the options name; prints the error itself. */
int cli_open(const struct cli_opts *o, char *path, struct dtel_session **ret);

/** Parse a number of seconds > 0 ("0.5", "2"); false on anything else. */
bool cli_parse_seconds(const char *s, double *ret);

/** Format a rate with an SI suffix ("12.3M") into buf. */
const char *cli_si(double v, char *buf, size_t size);

int cmd_list(const struct cli_opts *o, int argc, char **argv);
int cmd_query(const struct cli_opts *o, int argc, char **argv);
int cmd_ports(const struct cli_opts *o, int argc, char **argv);
int cmd_watch(const struct cli_opts *o, int argc, char **argv);

/** What ports and watch show of one port. */
struct port_sample {
	uint16_t port_id;
	struct dtel_port_info info; /* info.name "" when /ethdev/info failed */
	struct dtel_link link;
	bool have_link;
	struct dtel_port_stats stats;
};

/**
 * Read the port list, then info, link status and stats of each port over @sh. On success
 * *ret is a malloc'ed array (free()) and the count is returned; -errno on failure.
 */
int cli_sample_ports(struct dtel_shared *sh, int timeout_ms, struct port_sample **ret);

/** Take the shared session for the socket the options name; prints errors itself. */
int cli_shared(const struct cli_opts *o, char *path, struct dtel_shared **ret);
#endif
