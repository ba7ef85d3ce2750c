/* SPDX-License-Identifier: BSD-3-Clause */
/* The dpdktel command-line client: shared declarations. */
#ifndef DPDKTEL_CLI_H
#define DPDKTEL_CLI_H

#include <getopt.h>
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

/** A command's own options, for cli_parse_opts(). */
struct cli_cmd_opts {
	const char *shortopts; /* getopt letters, "" for none */
	const struct option *longopts; /* NULL-terminated, or NULL */
	/* One of the command's options: 0, or EXIT_USAGE after printing why. */
	int (*handle)(int c, const char *arg, void *ctx);
	void *ctx;
};

/**
 * Parse a command's argv (argv[0] the command name): its own options (@cmd) and the global
 * ones (-p, -N, -s, -d, -t, into *o), before or after the operands, which are then
 * argv[optind..argc-1] ("--" ends the options). Returns 0, or EXIT_USAGE after printing why.
 */
int cli_parse_opts(struct cli_opts *o, int argc, char **argv, const struct cli_cmd_opts *cmd);

/** A handler for a command with one option, a flag: sets *(bool *)ctx. */
int cli_flag_opt(int c, const char *arg, void *ctx);

/** One global option letter into *o: 0, EXIT_USAGE (bad value, printed), -1 not global. */
int cli_global_opt(struct cli_opts *o, int c, const char *arg);

/** Print "dpdktel: <message>" on stderr. */
void cli_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/**
 * Resolve the socket the options name into path (DTEL_PATH_MAX bytes). Without -p and -s,
 * takes the default prefix "rte" when it exists, else the only live application. Prints the
 * reason and returns EXIT_ERROR or EXIT_USAGE when there is no single answer; 0 on success.
 */
int cli_resolve_socket(const struct cli_opts *o, char *path);

/**
 * The sockets under -d DIR, or without -d under every default runtime dir
 * (dtel_runtime_dirs(): this user's own, systemd's, OVS's /run/openvswitch/dpdk, /var/run/dpdk)
 * together. Missing dirs count as empty. Returns the count (*ret: free with free()) or -errno
 * of a dir that could not be read, whose path is then in @ret_dir.
 */
int cli_discover(const struct cli_opts *o, unsigned int flags, struct dtel_socket_info **ret,
	char *ret_dir, size_t size);

/** Print why talking to path failed (err < 0) in the user's terms; returns EXIT_ERROR. */
int cli_fail(const struct cli_opts *o, const char *path, int err);

/** Open a session to the socket the options name; prints the error itself. */
int cli_open(const struct cli_opts *o, char *path, struct dtel_session **ret);

/** Parse a number of seconds > 0 ("0.5", "2"); false on anything else. */
bool cli_parse_seconds(const char *s, double *ret);

/** Room for n bytes escaped by cli_escape(), its NUL included. */
#define CLI_ESCAPED_SIZE(n) (6 * (n) + 1)

/**
 * A string from the application, safe on a terminal and inside a JSON string: controls (C0,
 * DEL, C1) and bytes that are not UTF-8 become \u00XX, '"' and '\\' become \" and \\.
 * Cut before a character that does not fit in @size bytes (CLI_ESCAPED_SIZE of the source's
 * limit fits all). Returns buf.
 */
const char *cli_escape(const char *s, char *buf, size_t size);

/** Print s, escaped, as a JSON string (s at most DTEL_STRING_MAX bytes; longer is cut). */
void cli_put_json_string(const char *s);

/**
 * Print JSON text and a newline, safe on a terminal: as cli_escape() but for quotes,
 * backslashes and whitespace (\\n, \\t, \\r), so that valid JSON stays valid and means the
 * same (a control can only stand inside a string). 0, or -1 on an output error.
 */
int cli_put_json_text(const char *json);

/** Format a rate with an SI suffix ("12.3M") into buf. */
const char *cli_si(double v, char *buf, size_t size);

int cmd_list(struct cli_opts *o, int argc, char **argv);
int cmd_query(struct cli_opts *o, int argc, char **argv);
int cmd_ports(struct cli_opts *o, int argc, char **argv);
int cmd_watch(struct cli_opts *o, int argc, char **argv);

/** What ports and watch show of one port. */
struct port_sample {
	uint16_t port_id;
	struct dtel_port_info info; /* info.name "" when /ethdev/info failed */
	struct dtel_link link;
	bool have_link;
	struct dtel_port_stats stats;
};

/** The port's device name, escaped (cli_escape()), or "-" when unknown. */
#define CLI_NAME_SIZE CLI_ESCAPED_SIZE(DTEL_STRING_MAX)
const char *cli_port_name(const struct port_sample *p, char buf[CLI_NAME_SIZE]);

/**
 * Read the port list, then info, link status and stats of each port over @sh. On success
 * *ret is a malloc'ed array (free()) and the count is returned; -errno on failure.
 */
int cli_sample_ports(struct dtel_shared *sh, int timeout_ms, struct port_sample **ret);

/** Take the shared session for the socket the options name; prints errors itself. */
int cli_shared(const struct cli_opts *o, char *path, struct dtel_shared **ret);
#endif
