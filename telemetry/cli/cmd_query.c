/* SPDX-License-Identifier: BSD-3-Clause */
/* dpdktel query CMD [--raw|--numbers]: one request, its reply as JSON, or its numbers. */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static int
print_pretty(const struct dtel_reply *r)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *o;
	int err;

	if (tok == NULL)
		return -ENOMEM;
	o = json_tokener_parse_ex(tok, r->json, (int)r->len);
	json_tokener_free(tok);
	if (o == NULL)
		return -EPROTO;
	/* json-c escapes C0 controls in strings but not DEL nor C1 (U+009B is CSI). */
	err = cli_put_json_text(json_object_to_json_string_ext(o,
		JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
			JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	return err < 0 ? -EIO : 0;
}

/*
 * --numbers: each number of the reply as dtel_parse_numbers() names it, "<key> <value>" a
 * line: the keys the rules of a dpdktel_stats <Command> block match (docs/dpdktel_stats.md).
 */
static int
print_numbers(const struct dtel_reply *r)
{
	char key[CLI_ESCAPED_SIZE(DTEL_KEY_MAX)];
	struct dtel_numbers n;
	int ret = dtel_parse_numbers(r, NULL, &n);

	if (ret < 0)
		return ret;
	for (size_t i = 0; i < n.n; i++) {
		const struct dtel_number *e = &n.v[i];

		cli_escape(e->key, key, sizeof(key));
		if (e->type == DTEL_VALUE_U64)
			printf("%s %" PRIu64 "\n", key, e->v.u64);
		else if (e->type == DTEL_VALUE_I64)
			printf("%s %" PRId64 "\n", key, e->v.i64);
		else
			printf("%s %.17g\n", key, e->v.d);
	}
	dtel_numbers_clear(&n);
	return fflush(stdout) == 0 ? 0 : -EIO;
}

/* --raw (-r) and --numbers. */
struct query_flags {
	bool raw, numbers;
};

static int
query_opt(int c, const char *arg, void *ctx)
{
	struct query_flags *f = ctx;

	(void)arg;
	if (c == 'r')
		f->raw = true;
	else
		f->numbers = true;
	return 0;
}

/* The reply as the flags ask, then released; EXIT_ERROR when it could not be written. */
static int
print_reply(const struct query_flags *f, const char *cmd, const char *path, struct dtel_reply *r)
{
	int ret;

	if (r->flags & DTEL_F_NEAR_LIMIT)
		cli_err("warning: the reply (%zu bytes) is near the application's limit and may "
			"have been cut",
			r->len);
	if (f->raw)
		ret = cli_put_json_text(r->json) < 0 ? -EIO : 0;
	else if (f->numbers)
		ret = print_numbers(r);
	else
		ret = print_pretty(r);
	dtel_reply_release(r);
	if (ret < 0) {
		cli_err("%s on %s: %s", cmd, path, dtel_strerror(ret));
		return EXIT_ERROR;
	}
	return 0;
}

int
cmd_query(struct cli_opts *o, int argc, char **argv)
{
	static const struct option opts[] = {
		{"raw", no_argument, NULL, 'r'},
		{"numbers", no_argument, NULL, 'k'},
		{NULL, 0, NULL, 0},
	};
	char path[DTEL_PATH_MAX];
	struct dtel_session *s;
	struct dtel_reply r;
	struct query_flags f = {0};
	const char *cmd;
	struct cli_cmd_opts opt = {"r", opts, query_opt, &f};
	int ret = cli_parse_opts(o, argc, argv, &opt);

	if (ret != 0)
		return ret;
	if (f.raw && f.numbers) {
		cli_err("--raw and --numbers cannot be combined");
		return EXIT_USAGE;
	}
	if (optind + 1 != argc) {
		cli_err("query takes one command, for example: dpdktel query /ethdev/stats,0");
		return EXIT_USAGE;
	}
	cmd = argv[optind];
	if (cmd[0] != '/') {
		cli_err("invalid command '%s': expected /command or /command,params", cmd);
		return EXIT_USAGE;
	}
	ret = cli_open(o, path, &s);
	if (ret != 0)
		return ret;
	ret = dtel_query(s, cmd, o->timeout_ms, &r);
	dtel_session_close(s);
	if (ret == -EINVAL) {
		cli_err("invalid command '%s': expected /command (letters, digits, '_' and '/', "
			"under 56 characters) or /command,params",
			cmd);
		return EXIT_USAGE;
	}
	if (ret < 0) {
		cli_err("%s on %s: %s", cmd, path, dtel_strerror(ret));
		return EXIT_ERROR;
	}
	return print_reply(&f, cmd, path, &r);
}
