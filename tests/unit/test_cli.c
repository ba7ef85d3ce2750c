/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The dpdktel client's commands, run in-process against the fake server: options before or
 * after the operands, and strings from the application escaped in every output.
 */
#include <errno.h>
#include <json-c/json.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "cli.h"
#include "fake_server.h"
#include "test_util.h"

/*
 * A device name no real DPDK 22.11 sends: its telemetry library escapes '"', '\\', \n, \r and
 * \t and drops other control characters (lib/telemetry/telemetry_json.h,
 * __json_format_str_to_buf()). A newline thus arrives as \n, and another server (or a later
 * DPDK) may send \u001b; the library decodes both, so the client must escape them again.
 */
#define EVIL_JSON "ev\\u001b[31mil\\nname\\\"q\\u009b\\u00e9"
/* What the client prints for it: JSON string contents, controls as \u00XX. */
/* The name itself, which the client's JSON must give back. */
#define EVIL_NAME "ev\x1b[31mil\nname\"q\xc2\x9b\xc3\xa9"
#define EVIL_SHOWN "ev\\u001b[31mil\\u000aname\\\"q\\u009b\xc3\xa9"

static char *
golden_with_name(const char *file, const char *name)
{
	size_t len;
	char *g = fs_golden(file, &len), *at = strstr(g, "net_null0");
	char *out = fs_printf("%.*s%s%s", (int)(at - g), g, name, at + strlen("net_null0"));

	free(g);
	return out;
}

/* One port (0) named EVIL_JSON, an application named with controls; 22.11 replies else. */
static void
h_evil(struct fake_server *fs, unsigned int c, const char *req, struct fake_reply *o, void *a)
{
	(void)fs, (void)c, (void)a;
	if (strcmp(req, "/ethdev/list") == 0)
		o->data = fs_printf("{\"/ethdev/list\":[0]}");
	else if (strcmp(req, "/ethdev/stats,0") == 0)
		o->data = fs_golden("dpdk-22.11/ethdev_stats-0.json", &o->len);
	else if (strcmp(req, "/ethdev/link_status,0") == 0)
		o->data = fs_golden("dpdk-22.11/ethdev_link_status-0.json", &o->len);
	else if (strcmp(req, "/ethdev/info,0") == 0)
		o->data = golden_with_name("dpdk-22.11/ethdev_info-0.json", EVIL_JSON);
	else if (strcmp(req, "/x") == 0)
		o->data = fs_printf("{\"/x\":\"a\\u007fb\\u009bc\\u001bd\"}");
	else if (strcmp(req, "/raw") == 0) /* not JSON: raw controls in a string */
		o->data = fs_printf("{\"/raw\":\"a\x7f\tb\xc2\x9b\x1b[2J\"}");
	else if (strcmp(req, "/n") == 0)
		o->data = fs_printf("{\"/n\":{\"e\\u001bk\":-3,\"f\":0.5,"
				    "\"big\":18446744073709551615,\"q\":[1,2],\"s\":\"str\"}}");
	else if (strcmp(req, "/fwd/lcores") == 0)
		o->data = fs_golden("fwd/lcores.json", &o->len);
	else if (strcmp(req, "/eal/params") == 0)
		o->data = fs_printf("{\"/eal/params\":[\"app\\u001b]0;title\\u0007\"]}");
	else
		o->data = fs_printf("{\"%.*s\":null}", (int)strcspn(req, ","), req);
}

struct result {
	int code;
	char *out, *err; /* what it printed on stdout and stderr */
};

static void
result_free(struct result *r)
{
	free(r->out);
	free(r->err);
}

/* Point fd at a new temporary file; returns the file, *ret_saved the old fd. */
static int
capture_start(int fd, int *ret_saved)
{
	char tmpl[] = "/tmp/dtel-cli-out-XXXXXX";
	int f = mkstemp(tmpl);

	assert_true(f >= 0);
	unlink(tmpl);
	*ret_saved = dup(fd);
	assert_true(*ret_saved >= 0);
	assert_true(dup2(f, fd) >= 0);
	return f;
}

/* Put fd back and return what was written, malloc'ed. */
static char *
capture_end(int fd, int f, int saved)
{
	struct stat st;
	char *text;

	dup2(saved, fd);
	close(saved);
	assert_int_equal(fstat(f, &st), 0);
	text = calloc(1, (size_t)st.st_size + 1);
	assert_non_null(text);
	assert_int_equal(pread(f, text, (size_t)st.st_size, 0), st.st_size);
	close(f);
	return text;
}

/* Run a command with *o on its arguments (after main() took the options before it). */
static struct result
vrun(struct cli_opts o, int (*cmd)(struct cli_opts *, int, char **), va_list ap)
{
	struct result r;
	char *argv[16];
	int argc = 0, out, err, saved_out, saved_err;

	while ((argv[argc] = va_arg(ap, char *)) != NULL)
		assert_true(++argc < 16);
	fflush(stdout);
	fflush(stderr);
	out = capture_start(STDOUT_FILENO, &saved_out);
	err = capture_start(STDERR_FILENO, &saved_err);
	r.code = cmd(&o, argc, argv);
	fflush(stdout);
	fflush(stderr);
	r.err = capture_end(STDERR_FILENO, err, saved_err);
	r.out = capture_end(STDOUT_FILENO, out, saved_out);
	return r;
}

/* The command's arguments, NULL after the last; no global option before the command. */
static struct result
run(int (*cmd)(struct cli_opts *, int, char **), ...)
{
	struct result r;
	va_list ap;

	va_start(ap, cmd);
	r = vrun((struct cli_opts){.timeout_ms = 2000}, cmd, ap);
	va_end(ap);
	return r;
}

/* The same with "-s where" (list: "-d where") before the command. */
static struct result
run_at(const char *where, int (*cmd)(struct cli_opts *, int, char **), ...)
{
	struct cli_opts o = {.timeout_ms = 2000};
	struct result r;
	va_list ap;

	if (cmd == cmd_list)
		o.runtime_dir = where;
	else
		o.socket = where;
	va_start(ap, cmd);
	r = vrun(o, cmd, ap);
	va_end(ap);
	return r;
}

/* No byte that a terminal acts on: no C0 control but the line ends, no DEL, no C1 (UTF-8). */
static void
assert_terminal_safe(const char *out)
{
	for (const unsigned char *p = (const unsigned char *)out; *p; p++) {
		if (*p == '\n')
			continue;
		assert_false(*p < 0x20 || *p == 0x7f);
		assert_false(p[0] == 0xc2 && p[1] >= 0x80 && p[1] < 0xa0);
		assert_false(*p >= 0x80 && *p < 0xc0 &&
			(p == (const unsigned char *)out || p[-1] < 0xc0));
	}
}

/* out is valid JSON, an array whose first object has field = want. */
static void
assert_json_field(const char *out, const char *field, const char *want)
{
	struct json_object *all = json_tokener_parse(out), *v;

	assert_non_null(all);
	assert_true(json_object_object_get_ex(json_object_array_get_idx(all, 0), field, &v));
	assert_string_equal(json_object_get_string(v), want);
	json_object_put(all);
}

static struct fake_server *
evil_server(void)
{
	struct fake_config cfg = {.handler = h_evil};
	struct fake_server *fs = fs_start_path(&cfg);

	assert_non_null(fs);
	return fs;
}

static void
expect_out(struct result r, const char *want)
{
	assert_int_equal(r.code, 0);
	assert_string_equal(r.out, want);
	result_free(&r);
}

static void
expect_usage(struct result r, const char *message)
{
	assert_int_equal(r.code, EXIT_USAGE);
	assert_non_null(strstr(r.err, message));
	result_free(&r);
}

static void
test_query_raw_after_the_command(void **state)
{
	struct fake_server *fs = fs_start_path(&(struct fake_config){0});
	char *path = (char *)fs_path(fs);
	const char *want = "{\"/ethdev/list\":[0,1,2,3]}\n";

	(void)state;
	/* The form --help and the man page give: an option after the operand. */
	expect_out(run(cmd_query, "query", "/ethdev/list", "--raw", "-s", path, NULL), want);
	expect_out(run(cmd_query, "query", "-s", path, "/ethdev/list", "-r", NULL), want);
	expect_out(run(cmd_query, "query", "--raw", "/ethdev/list", "--socket", path, NULL), want);
	fs_stop(fs);
}

static void
test_usage_errors_after_the_operands(void **state)
{
	(void)state;
	expect_usage(run(cmd_query, "query", "/a", "/b", "--raw", NULL), "query takes one command");
	expect_usage(run(cmd_query, "query", "--", "--raw", NULL), "invalid command '--raw'");
	expect_usage(run(cmd_ports, "ports", "--json", "-s", "/x", "-p", "y", NULL),
		"-s SOCKET cannot be combined with -p or -N");
	expect_usage(run(cmd_ports, "ports", "x", "--json", NULL), "ports takes no arguments");
	expect_usage(run(cmd_watch, "watch", "-s", "/x", "-c", "0", NULL), "invalid count '0'");
	expect_usage(run(cmd_watch, "watch", "-c", "1", "-t", "soon", NULL), "invalid timeout");
	expect_usage(run(cmd_list, "list", "--json", "-N", "x", NULL), "invalid instance 'x'");
	expect_usage(run(cmd_list, "list", "extra", "--json", NULL), "list takes no arguments");
}

static void
test_ports_json_escapes_the_name(void **state)
{
	struct fake_server *fs = evil_server();
	struct result r = run_at(fs_path(fs), cmd_ports, "ports", "--json", NULL);

	(void)state;
	assert_int_equal(r.code, 0);
	assert_non_null(strstr(r.out, "\"name\":\"" EVIL_SHOWN "\","));
	assert_json_field(r.out, "name", EVIL_NAME);
	assert_terminal_safe(r.out);
	result_free(&r);
	fs_stop(fs);
}

static void
test_ports_table_escapes_the_name(void **state)
{
	struct fake_server *fs = evil_server();
	struct result r = run_at(fs_path(fs), cmd_ports, "ports", NULL);

	(void)state;
	assert_int_equal(r.code, 0);
	assert_non_null(strstr(r.out, "\n0    " EVIL_SHOWN " up "));
	assert_terminal_safe(r.out);
	result_free(&r);
	fs_stop(fs);
}

static void
test_watch_lines_escape_the_name(void **state)
{
	struct fake_server *fs = evil_server();
	struct result r = run_at(fs_path(fs), cmd_watch, "watch", "-i", "0.1", "-c", "1", NULL);

	(void)state;
	assert_int_equal(r.code, 0);
	assert_non_null(strstr(r.out, " port=0 name=" EVIL_SHOWN " link=up rx_pps="));
	assert_terminal_safe(r.out);
	result_free(&r);
	fs_stop(fs);
}

/* json-c's pretty print lets DEL and C1 through; --raw prints what came, escaped too. */
static void
test_query_output_is_terminal_safe(void **state)
{
	struct fake_server *fs = evil_server();

	(void)state;
	expect_out(run_at(fs_path(fs), cmd_query, "query", "/x", NULL),
		"{\n  \"/x\": \"a\\u007fb\\u009bc\\u001bd\"\n}\n");
	expect_out(run_at(fs_path(fs), cmd_query, "query", "--raw", "/x", NULL),
		"{\"/x\":\"a\\u007fb\\u009bc\\u001bd\"}\n");
	expect_out(run_at(fs_path(fs), cmd_query, "query", "--raw", "/raw", NULL),
		"{\"/raw\":\"a\\u007f\tb\\u009b\\u001b[2J\"}\n");
	fs_stop(fs);
}

/* --numbers: the keys of dtel_parse_numbers(), escaped, and exact values. */
static void
test_query_numbers(void **state)
{
	struct fake_server *fs = evil_server();
	struct result r;

	(void)state;
	expect_out(run_at(fs_path(fs), cmd_query, "query", "/n", "--numbers", NULL),
		"e\\u001bk -3\nf 0.5\nbig 18446744073709551615\nq.0 1\nq.1 2\n");
	r = run_at(fs_path(fs), cmd_query, "query", "--numbers", "/fwd/lcores", NULL);
	assert_int_equal(r.code, 0);
	assert_non_null(strstr(r.out, "\nheartbeat.lcore1 18446744073709551615\n"));
	assert_non_null(strstr(r.out, "\nstalls.lcore2 2\n"));
	assert_null(strstr(r.out, "lcore_id"));
	result_free(&r);
	expect_usage(run_at(fs_path(fs), cmd_query, "query", "/n", "--numbers", "--raw", NULL),
		"--raw and --numbers cannot be combined");
	fs_stop(fs);
}

/* list: a runtime dir whose one prefix, application name and version hold controls. */
static void
test_list_escapes_prefix_app_and_version(void **state)
{
	char dir[32], prefix[256], path[300], greeting[160];
	struct fake_config cfg = {.handler = h_evil, .greeting = greeting};
	struct fake_server *fs;
	struct result r;

	(void)state;
	assert_int_equal(test_tmpdir("cli-rt", dir, sizeof(dir)), 0);
	snprintf(prefix, sizeof(prefix), "%s/p\x1b[8m", dir);
	snprintf(path, sizeof(path), "%s/dpdk_telemetry.v2", prefix);
	snprintf(greeting, sizeof(greeting),
		"{\"version\":\"DPDK\\u001b[2J 22.11\",\"pid\":%ld,\"max_output_len\":16384}",
		(long)getpid());
	assert_int_equal(mkdir(prefix, 0700), 0);
	cfg.path = path;
	fs = fs_start_path(&cfg);
	assert_non_null(fs);
	r = run_at(dir, cmd_list, "list", NULL);
	assert_int_equal(r.code, 0);
	assert_non_null(strstr(r.out, "\np\\u001b[8m "));
	assert_non_null(strstr(r.out, " app\\u001b]0;title\\u0007 "));
	assert_non_null(strstr(r.out, " DPDK\\u001b[2J 22.11 "));
	assert_terminal_safe(r.out);
	result_free(&r);
	r = run_at(dir, cmd_list, "list", "--json", NULL);
	assert_int_equal(r.code, 0);
	assert_non_null(strstr(r.out, "{\"prefix\":\"p\\u001b[8m\","));
	assert_non_null(strstr(r.out, "\"app\":\"app\\u001b]0;title\\u0007\","));
	assert_non_null(strstr(r.out, "\"version\":\"DPDK\\u001b[2J 22.11\""));
	assert_json_field(r.out, "app", "app\x1b]0;title\x07");
	assert_terminal_safe(r.out);
	result_free(&r);
	fs_stop(fs);
	rmdir(prefix);
	test_rmdir(dir);
}

static void
expect_escaped(const char *in, const char *want)
{
	char buf[CLI_ESCAPED_SIZE(64)];

	assert_string_equal(cli_escape(in, buf, sizeof(buf)), want);
}

static void
test_escape(void **state)
{
	char small[8];

	(void)state;
	expect_escaped("net_null0", "net_null0");
	expect_escaped("0000:01:00.0", "0000:01:00.0");
	expect_escaped("a\"b\\c", "a\\\"b\\\\c");
	expect_escaped("\x1b[31m\n\r\t\x01\x1f\x7f",
		"\\u001b[31m\\u000a\\u000d\\u0009\\u0001"
		"\\u001f\\u007f");
	expect_escaped("\xc2\x9b"
		       "1m\xc2\x80",
		"\\u009b1m\\u0080"); /* C1 controls in UTF-8 */
	expect_escaped("\x9b"
		       "1m\xff\xc3",
		"\\u009b1m\\u00ff\\u00c3"); /* bytes, not UTF-8 */
	expect_escaped("\xc2\xa0\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80",
		"\xc2\xa0\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"); /* nbsp, e acute, euro, emoji */
	expect_escaped("\xe0\x80\xaf", "\\u00e0\\u0080\\u00af"); /* overlong '/' */
	expect_escaped("\xed\xa0\x80", "\\u00ed\\u00a0\\u0080"); /* a surrogate */
	expect_escaped("\xf4\x90\x80\x80", "\\u00f4\\u0090\\u0080\\u0080"); /* above U+10FFFF */
	/* Cut before an escape that does not fit, never inside it. */
	assert_string_equal(cli_escape("ab\x1b", small, sizeof(small)), "ab");
	assert_string_equal(cli_escape("abcdefghij", small, sizeof(small)), "abcdefg");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_query_raw_after_the_command),
		cmocka_unit_test(test_usage_errors_after_the_operands),
		cmocka_unit_test(test_ports_json_escapes_the_name),
		cmocka_unit_test(test_ports_table_escapes_the_name),
		cmocka_unit_test(test_watch_lines_escape_the_name),
		cmocka_unit_test(test_query_output_is_terminal_safe),
		cmocka_unit_test(test_query_numbers),
		cmocka_unit_test(test_list_escapes_prefix_app_and_version),
		cmocka_unit_test(test_escape),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
