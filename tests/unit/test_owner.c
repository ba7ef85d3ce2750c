/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Which process holds a socket (telemetry/owner.c), in each arrangement of pid namespaces:
 * one row per case, pure (no socket, no /proc but the start time of this process).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <cmocka.h>

#include "dtel_private.h"
#include "test_util.h"

#define SOCK(i, c)                                       \
	{                                                \
		.dev = 2049, .ino = (i), .ctime_ns = (c) \
	}

static const struct {
	const char *what;
	struct dtel__owner gen, now;
	bool same;
} rows[] = {
	{"same process, same socket file, from the host", {4242, 900, 1, SOCK(7, 100)},
		{4242, 900, 1, SOCK(7, 100)}, true},
	{"host: another pid", {4242, 900, 1, SOCK(7, 100)}, {4300, 950, 1, SOCK(7, 100)}, false},
	{"host: the pid reused by another process", {4242, 900, 1, SOCK(7, 100)},
		{4242, 990, 1, SOCK(8, 300)}, false},
	{"host: a chmod of the socket (new change time) by the same process",
		{4242, 900, 1, SOCK(7, 100)}, {4242, 900, 1, SOCK(7, 200)}, true},
	{"sibling namespace: restarted as pid 1, ext4 gave the inode back (change time)",
		{0, 0, 1, SOCK(7, 100)}, {0, 0, 1, SOCK(7, 200)}, false},
	{"sibling namespace: restarted as pid 1, a new inode", {0, 0, 1, SOCK(7, 100)},
		{0, 0, 1, SOCK(9, 200)}, false},
	{"sibling namespace: the same process reconnected", {0, 0, 1, SOCK(7, 100)},
		{0, 0, 1, SOCK(7, 100)}, true},
	{"sibling namespace: another greeting pid", {0, 0, 1, SOCK(7, 100)},
		{0, 0, 12, SOCK(7, 100)}, false},
	{"a socket file on another file system", {0, 0, 1, {.dev = 1, .ino = 7, .ctime_ns = 100}},
		{0, 0, 1, {.dev = 2, .ino = 7, .ctime_ns = 100}}, false},
	{"no greeting yet (hung at start), the same socket file", {4242, 900, 0, SOCK(7, 100)},
		{4242, 900, 1, SOCK(7, 100)}, true},
	{"nothing known of the socket file: the pids decide", {0, 0, 1, SOCK(0, 0)},
		{0, 0, 1, SOCK(7, 100)}, true},
	{"the start time unknown (hidepid): a new change time is a new process",
		{4242, 0, 1, SOCK(7, 100)}, {4242, 0, 1, SOCK(7, 200)}, false},
};

static void
owner_rules(void **state)
{
	int bad = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		bool same = dtel__owner_same(&rows[i].gen, &rows[i].now);

		if (same != rows[i].same) {
			fprintf(stderr, "row %zu (%s): expected %s, got %s\n", i, rows[i].what,
				rows[i].same ? "the same process" : "a new process",
				same ? "the same process" : "a new process");
			bad++;
		}
	}
	assert_int_equal(bad, 0);
}

/* What a connect learns is taken into the generation: a greeting that comes after a connect
 * without one, the change time after a chmod. */
static void
merge_completes(void **state)
{
	struct dtel__owner gen = {4242, 900, 0, SOCK(7, 100)}, now = {4242, 900, 1, SOCK(7, 200)};

	(void)state;
	dtel__owner_merge(&gen, &now);
	assert_int_equal(gen.greet, 1);
	assert_true(gen.sock.ctime_ns == 200);
	/* What the new connect does not know stays. */
	now = (struct dtel__owner){0};
	dtel__owner_merge(&gen, &now);
	assert_int_equal(gen.peer, 4242);
	assert_true(gen.start == 900);
	assert_true(gen.sock.ino == 7);
}

static void
start_ticks_of_this_process(void **state)
{
	unsigned long long me = dtel__proc_start_ticks(getpid());

	(void)state;
	assert_true(me > 0);
	assert_true(me >= dtel__proc_start_ticks(1));
	assert_true(dtel__proc_start_ticks(0) == 0);
	assert_true(dtel__proc_start_ticks(-1) == 0);
	/* Beyond pid_max: no such process. */
	assert_true(dtel__proc_start_ticks(1L << 30) == 0);
}

/* A socket file is identified; a plain file or no file is not one. */
static void
sock_file(void **state)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	struct dtel__sock_file f;
	char dir[32], path[96];
	int fd;

	(void)state;
	assert_int_equal(test_tmpdir("own", dir, sizeof(dir)), 0);
	snprintf(path, sizeof(path), "%s/s", dir);
	dtel__sock_file_of(path, &f);
	assert_true(f.ino == 0);
	fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
	assert_int_equal(bind(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
	dtel__sock_file_of(path, &f);
	assert_true(f.ino != 0 && f.ctime_ns != 0);
	close(fd);
	unlink(path);
	assert_int_equal(mkfifo(path, 0600), 0); /* not a socket */
	dtel__sock_file_of(path, &f);
	assert_true(f.ino == 0);
	unlink(path);
	test_rmdir(dir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(owner_rules),
		cmocka_unit_test(merge_completes),
		cmocka_unit_test(start_ticks_of_this_process),
		cmocka_unit_test(sock_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
