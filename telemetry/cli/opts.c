/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Option parsing shared by the commands: each takes its own options and the global ones
 * (-p, -N, -s, -d, -t) before or after its operands, as getopt_long() does in glibc when it
 * permutes argv.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define GLOBAL_SHORT "p:N:s:d:t:"
#define GLOBAL_LONG_N 5
#define MAX_LONG 16

static const struct option global_long[GLOBAL_LONG_N] = {
	{"prefix", required_argument, NULL, 'p'},
	{"instance", required_argument, NULL, 'N'},
	{"socket", required_argument, NULL, 's'},
	{"runtime-dir", required_argument, NULL, 'd'},
	{"timeout", required_argument, NULL, 't'},
};

static int
parse_index(const char *s, unsigned int *ret)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (*s == '\0' || *end != '\0' || v > 65535 || s[0] == '-')
		return -1;
	*ret = (unsigned int)v;
	return 0;
}

static int
parse_timeout(const char *s, int *ret_ms)
{
	double seconds;

	if (!cli_parse_seconds(s, &seconds) || seconds > 600) {
		cli_err("invalid timeout '%s': expected seconds, > 0 and <= 600", s);
		return EXIT_USAGE;
	}
	*ret_ms = (int)(seconds * 1000 + 0.5);
	if (*ret_ms < 1)
		*ret_ms = 1;
	return 0;
}

int
cli_global_opt(struct cli_opts *o, int c, const char *arg)
{
	switch (c) {
	case 'p':
		o->prefix = arg;
		return 0;
	case 'N':
		if (parse_index(arg, &o->index) == 0)
			return 0;
		cli_err("invalid instance '%s': expected a number 0-65535", arg);
		return EXIT_USAGE;
	case 's':
		o->socket = arg;
		return 0;
	case 'd':
		o->runtime_dir = arg;
		return 0;
	case 't':
		return parse_timeout(arg, &o->timeout_ms);
	default:
		return -1;
	}
}

int
cli_flag_opt(int c, const char *arg, void *ctx)
{
	(void)c;
	(void)arg;
	*(bool *)ctx = true;
	return 0;
}

/* The global options together make sense: 0, or EXIT_USAGE after printing why. */
static int
check_opts(const struct cli_opts *o)
{
	if (o->socket != NULL && (o->prefix != NULL || o->index > 0)) {
		cli_err("-s SOCKET cannot be combined with -p or -N");
		return EXIT_USAGE;
	}
	return 0;
}

/* The global options followed by the command's own, NULL-terminated; -1 if too many. */
static int
merge_long(const struct option *own, struct option *all)
{
	size_t n = GLOBAL_LONG_N;

	memcpy(all, global_long, sizeof(global_long));
	for (; own != NULL && own->name != NULL; own++) {
		if (n + 1 >= MAX_LONG)
			return -1;
		all[n++] = *own;
	}
	all[n] = (struct option){NULL, 0, NULL, 0};
	return 0;
}

int
cli_parse_opts(struct cli_opts *o, int argc, char **argv, const struct cli_cmd_opts *cmd)
{
	struct option all[MAX_LONG];
	char shortopts[64];
	int c, r;

	r = snprintf(shortopts, sizeof(shortopts), "%s%s", GLOBAL_SHORT, cmd->shortopts);
	if (merge_long(cmd->longopts, all) < 0 || r < 0 || (size_t)r >= sizeof(shortopts))
		return EXIT_USAGE; /* a programming error: the tables above are too small */
	/*
	 * 0, not 1: glibc then starts afresh (after main's "+" parse, which stops at the
	 * command) and permutes, so that options after the operands are options too.
	 */
	optind = 0;
	while ((c = getopt_long(argc, argv, shortopts, all, NULL)) != -1) {
		r = cli_global_opt(o, c, optarg);
		if (r < 0)
			r = c == '?' || c == ':' ? EXIT_USAGE : cmd->handle(c, optarg, cmd->ctx);
		if (r != 0)
			return r;
	}
	return check_opts(o);
}
