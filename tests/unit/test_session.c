/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dtel_session_* against the fake server: every bad-input case of the protocol gets its own
 * error, within the timeout, without a crash or a leak (this suite also runs under ASan).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "dtel_private.h"
#include "fake_server.h"
#include "test_util.h"

#define TIMEOUT_MS 300

/* Open a session on a socketpair served by cfg; returns the open result. */
static int
open_pair(const struct fake_config *cfg, struct fake_server **ret_fs, struct dtel_session **ret)
{
	int fd = -1;

	*ret_fs = fs_start_pair(cfg, &fd);
	assert_non_null(*ret_fs);
	return dtel__session_attach(fd, TIMEOUT_MS, ret);
}

static void
greeting_read(void **state)
{
	struct fake_config cfg = {.pid = 4242, .max_output_len = 4096};
	struct dtel_session *s = NULL;
	struct fake_server *fs;

	(void)state;
	assert_int_equal(open_pair(&cfg, &fs, &s), 0);
	assert_int_equal(dtel_session_greeting(s)->pid, 4242);
	assert_int_equal(dtel_session_greeting(s)->max_output_len, 4096);
	assert_string_equal(dtel_session_greeting(s)->version, "DPDK 22.11.11");
	dtel_session_close(s);
	fs_stop(fs);
}

static void
query_golden_reply(void **state)
{
	struct dtel_session *s = NULL;
	struct fake_server *fs;
	struct dtel_reply r;
	struct dtel_port_stats st;

	(void)state;
	assert_int_equal(open_pair(NULL, &fs, &s), 0);
	assert_int_equal(dtel_query(s, "/ethdev/stats,0", TIMEOUT_MS, &r), 0);
	assert_int_equal(r.flags, 0);
	assert_int_equal(dtel_parse_port_stats(&r, &st), 0);
	assert_int_equal(st.ipackets, 95060992);
	dtel_reply_release(&r);
	assert_null(r.json);
	dtel_session_close(s);
	fs_stop(fs);
}

static void
greeting_bad_cases(void **state)
{
	static const char *const bad[] = {
		"hello",
		"{\"version\":\"DPDK 22.11.11\",\"pid\":1}",
		"{\"version\":\"DPDK 22.11.11\",\"pid\":1,\"max_output_len\":0}",
		"{\"version\":\"DPDK 22.11.11\",\"pid\":1,\"max_output_len\":2000000}",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct fake_config cfg = {.greeting = bad[i]};
		struct dtel_session *s = NULL;
		struct fake_server *fs;

		assert_int_equal(open_pair(&cfg, &fs, &s), -EPROTO);
		assert_null(s);
		fs_stop(fs);
	}
}

static void
no_greeting_times_out(void **state)
{
	struct fake_config cfg = {.no_greeting = true};
	struct dtel_session *s = NULL;
	struct fake_server *fs;
	uint64_t t0 = test_now_ms(), dt;

	(void)state;
	assert_int_equal(open_pair(&cfg, &fs, &s), -ETIMEDOUT);
	dt = test_now_ms() - t0;
	/* It must wait for the timeout, and not much longer. */
	assert_true(dt >= TIMEOUT_MS - 5);
	assert_true(dt < TIMEOUT_MS + 2000);
	fs_stop(fs);
}

static void
closed_at_accept_is_connreset(void **state)
{
	struct fake_config cfg = {.close_at_accept = true};
	struct dtel_session *s = NULL;
	struct fake_server *fs;

	(void)state;
	assert_int_equal(open_pair(&cfg, &fs, &s), -ECONNRESET);
	fs_stop(fs);
}

/* Handlers for misbehaving replies. */
static void
h_silent(struct fake_server *fs, unsigned int c, const char *req, struct fake_reply *o, void *a)
{
	(void)fs, (void)c, (void)req, (void)a;
	o->action = FAKE_SILENT;
}

static void
h_close(struct fake_server *fs, unsigned int c, const char *req, struct fake_reply *o, void *a)
{
	(void)fs, (void)c, (void)req, (void)a;
	o->action = FAKE_CLOSE;
}

static void
h_garbage(struct fake_server *fs, unsigned int c, const char *req, struct fake_reply *o, void *a)
{
	(void)fs, (void)c, (void)req, (void)a;
	o->data = fs_printf("\x01\x02garbage");
}

static void
h_other_cmd(struct fake_server *fs, unsigned int c, const char *req, struct fake_reply *o, void *a)
{
	(void)fs, (void)c, (void)req, (void)a;
	o->data = fs_printf("{\"/ethdev/xstats\":{}}");
}

static void
h_oversized(struct fake_server *fs, unsigned int c, const char *req, struct fake_reply *o, void *a)
{
	size_t n = 20000;

	(void)fs, (void)c, (void)req, (void)a;
	o->data = malloc(n);
	memset(o->data, ' ', n);
	memcpy(o->data, "{\"/ethdev/stats\":", 17);
	o->len = n;
}

/* A reply of exactly the announced maximum, ending in a valid dict. */
static void
h_near_limit(struct fake_server *fs, unsigned int c, const char *req, struct fake_reply *o, void *a)
{
	size_t n = 16384 - 100, len;

	(void)fs, (void)c, (void)req, (void)a;
	o->data = malloc(n + 1);
	len = (size_t)snprintf(o->data, n + 1, "{\"/x\":{\"s\":\"");
	memset(o->data + len, 'a', n - len - 3);
	memcpy(o->data + n - 3, "\"}}", 3);
	o->len = n;
}

static void
h_null(struct fake_server *fs, unsigned int c, const char *req, struct fake_reply *o, void *a)
{
	(void)fs, (void)c, (void)a;
	if (strcmp(req, "/ok") == 0)
		o->data = fs_printf("{\"/ok\":[1]}");
	else
		o->data = fs_printf("{\"%.*s\":null}", (int)strcspn(req, ","), req);
}

static void
h_late(struct fake_server *fs, unsigned int c, const char *req, struct fake_reply *o, void *a)
{
	(void)fs, (void)c, (void)a;
	o->delay_ms = 2 * TIMEOUT_MS;
	o->data = fs_printf("{\"%.*s\":[1]}", (int)strcspn(req, ","), req);
}

/* Run one query against a handler; returns the query result. */
static int
query_with(fake_handler_t h, const char *cmd, struct dtel_reply *r, struct dtel_session **ret_s,
	struct fake_server **ret_fs)
{
	struct fake_config cfg = {.handler = h};
	struct dtel_session *s = NULL;
	struct fake_server *fs;
	int ret;

	assert_int_equal(open_pair(&cfg, &fs, &s), 0);
	ret = dtel_query(s, cmd, TIMEOUT_MS, r);
	if (ret_s != NULL) {
		*ret_s = s;
		*ret_fs = fs;
	} else {
		dtel_session_close(s);
		fs_stop(fs);
	}
	return ret;
}

static void
silent_server_times_out_then_notconn(void **state)
{
	struct dtel_session *s;
	struct fake_server *fs;
	struct dtel_reply r;
	uint64_t t0 = test_now_ms();

	(void)state;
	assert_int_equal(query_with(h_silent, "/ethdev/stats,0", &r, &s, &fs), -ETIMEDOUT);
	assert_true(test_now_ms() - t0 < TIMEOUT_MS + 2000);
	/* The session is closed: a late reply can never be taken for the next one's. */
	assert_int_equal(dtel_query(s, "/ethdev/stats,0", TIMEOUT_MS, &r), -ENOTCONN);
	dtel_session_close(s);
	fs_stop(fs);
}

static void
late_reply_not_read_as_next(void **state)
{
	struct dtel_session *s;
	struct fake_server *fs;
	struct dtel_reply r;

	(void)state;
	assert_int_equal(query_with(h_late, "/a", &r, &s, &fs), -ETIMEDOUT);
	assert_int_equal(dtel_query(s, "/b", TIMEOUT_MS, &r), -ENOTCONN);
	dtel_session_close(s);
	fs_stop(fs);
}

static void
close_after_request_is_connreset(void **state)
{
	struct dtel_reply r;

	(void)state;
	assert_int_equal(query_with(h_close, "/ethdev/stats,0", &r, NULL, NULL), -ECONNRESET);
}

static void
garbage_is_eproto(void **state)
{
	struct dtel_reply r;

	(void)state;
	assert_int_equal(query_with(h_garbage, "/ethdev/stats,0", &r, NULL, NULL), -EPROTO);
}

static void
reply_for_other_command_is_eproto(void **state)
{
	struct dtel_reply r;

	(void)state;
	assert_int_equal(query_with(h_other_cmd, "/ethdev/stats,0", &r, NULL, NULL), -EPROTO);
}

static void
oversized_reply_is_emsgsize(void **state)
{
	struct dtel_reply r;

	(void)state;
	assert_int_equal(query_with(h_oversized, "/ethdev/stats,0", &r, NULL, NULL), -EMSGSIZE);
}

static void
reply_near_limit_is_flagged(void **state)
{
	struct dtel_reply r;
	struct dtel_dict d;

	(void)state;
	assert_int_equal(query_with(h_near_limit, "/x", &r, NULL, NULL), 0);
	assert_true(r.flags & DTEL_F_NEAR_LIMIT);
	assert_int_equal(dtel_parse_dict(&r, "/x", &d), 0);
	assert_true(d.flags & DTEL_F_POSSIBLY_CUT);
	dtel_dict_clear(&d);
	dtel_reply_release(&r);
}

static void
null_reply_keeps_session(void **state)
{
	struct dtel_session *s;
	struct fake_server *fs;
	struct dtel_reply r;

	(void)state;
	assert_int_equal(query_with(h_null, "/nosuch,3", &r, &s, &fs), -ENODATA);
	assert_int_equal(dtel_query(s, "/ok", TIMEOUT_MS, &r), 0);
	assert_string_equal(r.json, "{\"/ok\":[1]}");
	dtel_reply_release(&r);
	dtel_session_close(s);
	fs_stop(fs);
}

static void
bad_requests_are_einval(void **state)
{
	static const char *const bad[] = {
		"ethdev/stats", "/ethdev/stats\n", "/eth-dev", "/a b", "",
		"/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", /* 56 chars */
	};
	struct dtel_session *s = NULL;
	struct fake_server *fs;
	struct dtel_reply r;
	char big[1100];

	(void)state;
	assert_int_equal(open_pair(NULL, &fs, &s), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(dtel_query(s, bad[i], TIMEOUT_MS, &r), -EINVAL);
	memset(big, 'x', sizeof(big));
	memcpy(big, "/echo,", 6);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(dtel_query(s, big, TIMEOUT_MS, &r), -EINVAL);
	assert_int_equal(dtel_query(s, "/ethdev/stats,0", 0, &r), -EINVAL);
	assert_int_equal(dtel_query(s, NULL, TIMEOUT_MS, &r), -EINVAL);
	/* Still usable: parameters may hold anything printable. */
	assert_int_equal(dtel_query(s, "/echo,a b;c", TIMEOUT_MS, &r), 0);
	assert_string_equal(r.json, "{\"/echo\":\"a b;c\"}");
	dtel_reply_release(&r);
	fs_stop(fs);
	dtel_session_close(s);
}

/* Path-level errors --------------------------------------------------------------------- */

static char tmpdir[64];

static int
make_tmpdir(void **state)
{
	(void)state;
	return test_tmpdir("test", tmpdir, sizeof(tmpdir));
}

static int
remove_tmpdir(void **state)
{
	(void)state;
	return test_rmdir(tmpdir);
}

static int
open_path(const char *path)
{
	struct dtel_session *s = NULL;
	int r = dtel_session_open(path, TIMEOUT_MS, &s);

	dtel_session_close(s);
	return r;
}

static int
bind_at(const char *path, int type, bool do_listen)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);

	strcpy(a.sun_path, path);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	if (do_listen)
		assert_int_equal(listen(fd, 1), 0);
	return fd;
}

static void
absent_socket(void **state)
{
	char p[128];

	(void)state;
	snprintf(p, sizeof(p), "%s/nothing/dpdk_telemetry.v2", tmpdir);
	assert_int_equal(open_path(p), -ENOENT);
	assert_int_equal(dtel_probe(p), -ENOENT);
}

static void
stale_socket(void **state)
{
	char p[128];

	(void)state;
	snprintf(p, sizeof(p), "%s/stale.sock", tmpdir);
	close(bind_at(p, SOCK_SEQPACKET, true)); /* the file stays, nobody listens */
	assert_int_equal(open_path(p), -ECONNREFUSED);
	assert_int_equal(dtel_probe(p), -ECONNREFUSED);
}

static void
regular_file(void **state)
{
	char p[128];
	int fd;

	(void)state;
	snprintf(p, sizeof(p), "%s/file", tmpdir);
	fd = open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(open_path(p), -ENOTSOCK);
}

static void
stream_socket(void **state)
{
	char p[128];
	int fd;

	(void)state;
	snprintf(p, sizeof(p), "%s/stream.sock", tmpdir);
	fd = bind_at(p, SOCK_STREAM, true);
	assert_int_equal(open_path(p), -EPROTOTYPE);
	close(fd);
}

static void
path_too_long(void **state)
{
	char p[200], out[200];

	(void)state;
	memset(p, 'a', sizeof(p));
	p[0] = '/';
	p[sizeof(p) - 1] = '\0';
	assert_int_equal(open_path(p), -ENAMETOOLONG);
	assert_int_equal(
		dtel_socket_path("/var/run/dpdk", p + 1, 0, out, sizeof(out)), -ENAMETOOLONG);
}

static void
permission_denied(void **state)
{
	char dir[128], p[160];
	pid_t pid;
	int fd, status;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/private", tmpdir);
	assert_int_equal(mkdir(dir, 0700), 0);
	snprintf(p, sizeof(p), "%s/dpdk_telemetry.v2", dir);
	fd = bind_at(p, SOCK_SEQPACKET, true);
	/* Root passes every permission check: try as an unprivileged user in a child. */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (geteuid() == 0 && (setgid(65534) < 0 || setuid(65534) < 0))
			_exit(99);
		if (geteuid() != 0)
			chmod(dir, 0); /* not root from the start: take our own access away */
		_exit(open_path(p) == -EACCES ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	chmod(dir, 0700);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	close(fd);
}

static void
live_fake_by_path(void **state)
{
	struct fake_server *fs = fs_start_path(NULL);
	struct dtel_session *s = NULL;
	struct dtel_reply r;

	(void)state;
	assert_non_null(fs);
	assert_int_equal(dtel_probe(fs_path(fs)), 0);
	assert_int_equal(dtel_session_open(fs_path(fs), TIMEOUT_MS, &s), 0);
	assert_int_equal(dtel_query(s, "/ethdev/list", TIMEOUT_MS, &r), 0);
	dtel_reply_release(&r);
	dtel_session_close(s);
	/* The probe and the session: two connections. */
	assert_int_equal(fs_connections(fs), 2);
	fs_stop(fs);
}

static void
server_restart_seen_before_send(void **state)
{
	struct fake_server *fs = fs_start_path(NULL);
	struct dtel_session *s = NULL;
	struct dtel_reply r;
	bool sent = true;

	(void)state;
	assert_int_equal(dtel_session_open(fs_path(fs), TIMEOUT_MS, &s), 0);
	fs_stop(fs); /* closes the connection: EOF waits on the socket */
	assert_int_equal(
		dtel__session_query(s, "/ethdev/list", TIMEOUT_MS, &r, &sent, NULL), -ECONNRESET);
	assert_false(sent);
	dtel_session_close(s);
}

static void
strerror_covers_protocol_errors(void **state)
{
	static const int errs[] = {-ENOENT, -ECONNREFUSED, -EACCES, -ENOTSOCK, -EPROTOTYPE,
		-ENAMETOOLONG, -ETIMEDOUT, -ECONNRESET, -EPROTO, -EMSGSIZE, -ENODATA, -EBUSY};

	(void)state;
	for (size_t i = 0; i < sizeof(errs) / sizeof(errs[0]); i++)
		assert_non_null(dtel_strerror(errs[i]));
	assert_non_null(strstr(dtel_strerror(-ECONNRESET), "10 clients"));
	assert_non_null(strstr(dtel_strerror(-ENODATA), "null"));
	assert_non_null(dtel_strerror(-9999));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(greeting_read),
		cmocka_unit_test(query_golden_reply),
		cmocka_unit_test(greeting_bad_cases),
		cmocka_unit_test(no_greeting_times_out),
		cmocka_unit_test(closed_at_accept_is_connreset),
		cmocka_unit_test(silent_server_times_out_then_notconn),
		cmocka_unit_test(late_reply_not_read_as_next),
		cmocka_unit_test(close_after_request_is_connreset),
		cmocka_unit_test(garbage_is_eproto),
		cmocka_unit_test(reply_for_other_command_is_eproto),
		cmocka_unit_test(oversized_reply_is_emsgsize),
		cmocka_unit_test(reply_near_limit_is_flagged),
		cmocka_unit_test(null_reply_keeps_session),
		cmocka_unit_test(bad_requests_are_einval),
		cmocka_unit_test(absent_socket),
		cmocka_unit_test(stale_socket),
		cmocka_unit_test(regular_file),
		cmocka_unit_test(stream_socket),
		cmocka_unit_test(path_too_long),
		cmocka_unit_test(permission_denied),
		cmocka_unit_test(live_fake_by_path),
		cmocka_unit_test(server_restart_seen_before_send),
		cmocka_unit_test(strerror_covers_protocol_errors),
	};

	return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
