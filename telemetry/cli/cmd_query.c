/* SPDX-License-Identifier: BSD-3-Clause */
/* dpdktel query CMD [--raw]: one request, its reply as JSON. */
#include <errno.h>
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

int
cmd_query(struct cli_opts *o, int argc, char **argv)
{
	static const struct option opts[] = {
		{"raw", no_argument, NULL, 'r'},
		{NULL, 0, NULL, 0},
	};
	char path[DTEL_PATH_MAX];
	struct dtel_session *s;
	struct dtel_reply r;
	bool raw = false;
	const char *cmd;
	struct cli_cmd_opts opt = {"r", opts, cli_flag_opt, &raw};
	int ret = cli_parse_opts(o, argc, argv, &opt);

	if (ret != 0)
		return ret;
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
			"under "
			"56 characters) or /command,params",
			cmd);
		return EXIT_USAGE;
	}
	if (ret < 0) {
		cli_err("%s on %s: %s", cmd, path, dtel_strerror(ret));
		return EXIT_ERROR;
	}
	if (r.flags & DTEL_F_NEAR_LIMIT)
		cli_err("warning: the reply (%zu bytes) is near the application's limit and may "
			"have been cut",
			r.len);
	if (raw)
		ret = cli_put_json_text(r.json) < 0 ? -EIO : 0;
	else
		ret = print_pretty(&r);
	dtel_reply_release(&r);
	if (ret < 0) {
		cli_err("%s on %s: %s", cmd, path, dtel_strerror(ret));
		return EXIT_ERROR;
	}
	return 0;
}
