/* SPDX-License-Identifier: BSD-3-Clause */
/* dpdktel list [--json]: every DPDK application with a telemetry socket under the runtime dir. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

struct instance {
	const struct dtel_socket_info *si;
	struct dtel_greeting g;
	char app[DTEL_STRING_MAX];
	int err;
};

static const char *
state_word(int err)
{
	switch (err) {
	case 0:
		return "live";
	case -ECONNREFUSED:
		return "stale";
	case -EACCES:
		return "no-permission";
	case -ECONNRESET:
		return "full"; /* accepted and closed: 10 clients already */
	case -ETIMEDOUT:
		return "not-answering";
	default:
		return "error";
	}
}

static void
look(const struct cli_opts *o, struct instance *in)
{
	struct dtel_eal_params p;
	struct dtel_session *s;
	struct dtel_reply r;

	if (in->si->state == DTEL_SOCKET_NO_PERMISSION || in->si->error < 0) {
		in->err = in->si->error < 0 ? in->si->error : -EACCES;
		return;
	}
	in->err = dtel_session_open(in->si->path, o->timeout_ms, &s);
	if (in->err < 0)
		return;
	in->g = *dtel_session_greeting(s);
	if (dtel_query(s, "/eal/params", o->timeout_ms, &r) == 0) {
		if (dtel_parse_eal_params(&r, &p) == 0)
			snprintf(in->app, sizeof(in->app), "%s", p.app);
		dtel_reply_release(&r);
	}
	dtel_session_close(s);
}

static void
print_json(const struct instance *v, int n)
{
	putchar('[');
	for (int i = 0; i < n; i++) {
		printf("%s{\"prefix\":", i ? "," : "");
		cli_put_json_string(v[i].si->prefix);
		printf(",\"index\":%u,\"socket\":", v[i].si->index);
		cli_put_json_string(v[i].si->path);
		printf(",\"state\":\"%s\"", state_word(v[i].err));
		if (v[i].err == 0) {
			printf(",\"pid\":%ld,\"app\":", v[i].g.pid);
			cli_put_json_string(v[i].app);
			printf(",\"version\":");
			cli_put_json_string(v[i].g.version);
		} else {
			printf(",\"error\":");
			cli_put_json_string(dtel_strerror(v[i].err));
		}
		putchar('}');
	}
	puts("]");
}

/* Every string of a row comes from the application (or its runtime dir): escaped. */
static void
print_row(const struct instance *in)
{
	char prefix[DTEL_PATH_MAX + 8], pid[16] = "-";
	char e[4][CLI_ESCAPED_SIZE(DTEL_STRING_MAX)];
	bool live = in->err == 0;

	snprintf(prefix, sizeof(prefix), in->si->index ? "%s:%u" : "%s", in->si->prefix,
		in->si->index);
	if (live)
		snprintf(pid, sizeof(pid), "%ld", in->g.pid);
	printf("%-16s %-7s %-20s %-14s %-46s %s\n", cli_escape(prefix, e[0], sizeof(e[0])), pid,
		cli_escape(live && in->app[0] ? in->app : "-", e[1], sizeof(e[1])),
		cli_escape(live ? in->g.version : "-", e[2], sizeof(e[2])),
		cli_escape(in->si->path, e[3], sizeof(e[3])), state_word(in->err));
}

static void
print_table(const struct instance *v, int n)
{
	printf("%-16s %-7s %-20s %-14s %-46s %s\n", "PREFIX", "PID", "APP", "VERSION", "SOCKET",
		"STATE");
	for (int i = 0; i < n; i++)
		print_row(&v[i]);
}

int
cmd_list(struct cli_opts *o, int argc, char **argv)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'},
		{NULL, 0, NULL, 0},
	};
	struct dtel_socket_info *list = NULL;
	struct instance *v = NULL;
	char dir[DTEL_PATH_MAX];
	bool json = false;
	struct cli_cmd_opts cmd = {"j", opts, cli_flag_opt, &json};
	int n = cli_parse_opts(o, argc, argv, &cmd);

	if (n != 0)
		return n;
	if (optind != argc) {
		cli_err("list takes no arguments besides --json");
		return EXIT_USAGE;
	}
	n = cli_discover(o, 0, &list, dir, sizeof(dir));
	if (n < 0) {
		dtel_discover_free(list); /* NULL: for the analyzer, which cannot tell */
		cli_err("cannot read the DPDK runtime dir %s: %s", dir, dtel_strerror(n));
		return EXIT_ERROR;
	}
	if (n > 0) {
		v = calloc((size_t)n, sizeof(*v));
		if (v == NULL) {
			dtel_discover_free(list);
			cli_err("out of memory");
			return EXIT_ERROR;
		}
	}
	for (int i = 0; i < n; i++) {
		v[i].si = &list[i];
		look(o, &v[i]);
	}
	if (json)
		print_json(v, n);
	else if (n == 0)
		fprintf(stderr, "dpdktel: no DPDK telemetry socket under %s\n",
			o->runtime_dir ? o->runtime_dir : "the runtime dirs (see dpdktel(1))");
	else
		print_table(v, n);
	free(v);
	dtel_discover_free(list);
	return 0;
}
