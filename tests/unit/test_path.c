/* SPDX-License-Identifier: BSD-3-Clause */
/* Runtime dirs, socket paths and discovery of dpdk_telemetry.v2[:N] sockets. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <cmocka.h>

#include "dtel.h"
#include "test_util.h"

static char root[64];

static int
setup(void **state)
{
	(void)state;
	return test_tmpdir("path", root, sizeof(root));
}

static int
teardown(void **state)
{
	(void)state;
	return test_rmdir(root);
}

/* Bind a SEQPACKET socket at root/prefix/name; listening (live) or closed (stale). */
static int
make_socket(const char *prefix, const char *name, bool live)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	char dir[80];
	int fd;

	snprintf(dir, sizeof(dir), "%s/%s", root, prefix);
	mkdir(dir, 0700);
	assert_true(strlen(dir) + strlen(name) + 2 <= sizeof(a.sun_path));
	strcpy(a.sun_path, dir);
	strcat(a.sun_path, "/");
	strcat(a.sun_path, name);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(fd, 4), 0);
	if (!live) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The default search list: own dir first, systemd's and OVS's, no duplicates. */
static void
runtime_dirs_default_list(void **state)
{
	char dirs[DTEL_RUNTIME_DIRS_MAX][DTEL_PATH_MAX];
	char tmp[64], link[DTEL_PATH_MAX];
	int n;

	(void)state;
	assert_int_equal(test_tmpdir("dirs", tmp, sizeof(tmp)), 0);
	setenv("RUNTIME_DIRECTORY", "/srv/unit", 1);
	n = dtel_runtime_dirs(dirs, DTEL_RUNTIME_DIRS_MAX);
	assert_true(n >= 3);
	assert_string_equal(dirs[0], "/srv/unit/dpdk"); /* dtel_runtime_dir() */
	for (int i = 1; i < n; i++)
		assert_string_not_equal(dirs[i], "/srv/unit/dpdk");
	assert_string_equal(dirs[1], "/run/openvswitch/dpdk");
	assert_string_equal(dirs[2], "/var/run/dpdk");
	assert_int_equal(dtel_runtime_dirs(dirs, 1), 1);
	assert_int_equal(dtel_runtime_dirs(dirs, 0), 0);
	/* A symlink to a dir listed after it is that dir (where /var/run/dpdk exists to
	 * resolve: a DPDK process ran on this host as root). */
	snprintf(link, sizeof(link), "%s/run", tmp);
	assert_int_equal(symlink("/var/run", link), 0);
	setenv("RUNTIME_DIRECTORY", link, 1);
	n = dtel_runtime_dirs(dirs, DTEL_RUNTIME_DIRS_MAX);
	if (access("/var/run/dpdk", F_OK) == 0)
		for (int i = 1; i < n; i++)
			assert_string_not_equal(dirs[i], "/var/run/dpdk");
	unsetenv("RUNTIME_DIRECTORY");
	unlink(link);
	test_rmdir(tmp);
}

static void
runtime_dir_follows_eal(void **state)
{
	char buf[128];

	(void)state;
	setenv("RUNTIME_DIRECTORY", "/run/svc", 1);
	assert_int_equal(dtel_runtime_dir(buf, sizeof(buf)), 13);
	assert_string_equal(buf, "/run/svc/dpdk");
	unsetenv("RUNTIME_DIRECTORY");
	dtel_runtime_dir(buf, sizeof(buf));
	if (geteuid() == 0)
		assert_string_equal(buf, "/var/run/dpdk");
	assert_int_equal(dtel_runtime_dir(buf, 4), -ENAMETOOLONG);
}

static void
socket_paths(void **state)
{
	char buf[DTEL_PATH_MAX];

	(void)state;
	assert_true(dtel_socket_path("/var/run/dpdk", "fwd1", 0, buf, sizeof(buf)) > 0);
	assert_string_equal(buf, "/var/run/dpdk/fwd1/dpdk_telemetry.v2");
	assert_true(dtel_socket_path("/var/run/dpdk", NULL, 2, buf, sizeof(buf)) > 0);
	assert_string_equal(buf, "/var/run/dpdk/rte/dpdk_telemetry.v2:2");
	assert_int_equal(dtel_socket_path("/d", "a/b", 0, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(dtel_socket_path("/d", "", 0, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(dtel_socket_path("/d", "..", 0, buf, sizeof(buf)), -EINVAL);
}

static void
discover_all_kinds(void **state)
{
	struct dtel_socket_info *l = NULL;
	int a, b, fd, n;
	char p[160];

	(void)state;
	a = make_socket("alpha", "dpdk_telemetry.v2", true);
	b = make_socket("alpha", "dpdk_telemetry.v2:1", true);
	make_socket("beta", "dpdk_telemetry.v2", false);
	make_socket("beta", "dpdk_telemetry.v2:01", true); /* not a name EAL makes */
	make_socket("gamma", "telemetry", true); /* the legacy v1 socket */
	snprintf(p, sizeof(p), "%s/notadir", root);
	fd = open(p, O_CREAT | O_WRONLY, 0600);
	close(fd);

	n = dtel_discover(root, DTEL_DISCOVER_PROBE, &l);
	assert_int_equal(n, 3);
	assert_string_equal(l[0].prefix, "alpha");
	assert_int_equal(l[0].index, 0);
	assert_int_equal(l[0].state, DTEL_SOCKET_LIVE);
	assert_string_equal(l[1].prefix, "alpha");
	assert_int_equal(l[1].index, 1);
	snprintf(p, sizeof(p), "%s/alpha/dpdk_telemetry.v2:1", root);
	assert_string_equal(l[1].path, p);
	assert_int_equal(l[1].state, DTEL_SOCKET_LIVE);
	assert_string_equal(l[2].prefix, "beta");
	assert_int_equal(l[2].state, DTEL_SOCKET_STALE);
	assert_int_equal(l[2].error, -ECONNREFUSED);
	dtel_discover_free(l);

	/* Without probing nothing is connected to. */
	n = dtel_discover(root, 0, &l);
	assert_int_equal(n, 3);
	assert_int_equal(l[0].state, DTEL_SOCKET_UNPROBED);
	dtel_discover_free(l);
	close(a);
	close(b);
}

static void
discover_missing_dir(void **state)
{
	struct dtel_socket_info *l = (struct dtel_socket_info *)&l;
	char p[128];

	(void)state;
	snprintf(p, sizeof(p), "%s/none", root);
	assert_int_equal(dtel_discover(p, 0, &l), -ENOENT);
	assert_int_equal(dtel_discover(p, 0, NULL), -EINVAL);
}

/* Several dirs at once: their sockets in one list, each dir's own result (a missing one).
 * The root holds the sockets of the tests before (run last): counted relative to them. */
static void
discover_several_dirs(void **state)
{
	char dirs[3][DTEL_PATH_MAX];
	struct dtel_socket_info *l = NULL, *one = NULL;
	int errors[3] = {1, 1, 1}, a, b, n;

	(void)state;
	a = make_socket("zz1", "dpdk_telemetry.v2", true);
	b = make_socket("zz2", "dpdk_telemetry.v2:1", true);
	n = dtel_discover(root, 0, &one);
	assert_true(n >= 2);
	snprintf(dirs[0], sizeof(dirs[0]), "%s", root);
	snprintf(dirs[1], sizeof(dirs[1]), "%s/none", root);
	snprintf(dirs[2], sizeof(dirs[2]), "%s", root);
	assert_int_equal(
		dtel_discover_dirs((const char(*)[DTEL_PATH_MAX])dirs, 3, 0, &l, errors), 2 * n);
	assert_int_equal(errors[0], 0);
	assert_int_equal(errors[1], -ENOENT);
	assert_int_equal(errors[2], 0);
	for (int i = 0; i < n; i++) /* dir 0's, then dir 2's: the same, in the same order */
		assert_string_equal(l[i].path, l[n + i].path);
	assert_string_equal(l[n - 1].prefix, "zz2");
	assert_int_equal(l[n - 1].index, 1);
	dtel_discover_free(one);
	dtel_discover_free(l);
	assert_int_equal(dtel_discover_dirs((const char(*)[DTEL_PATH_MAX])dirs,
				 DTEL_RUNTIME_DIRS_MAX + 1, 0, &l, errors),
		-EINVAL);
	close(a);
	close(b);
}

static void
discover_empty_dir(void **state)
{
	struct dtel_socket_info *l = (struct dtel_socket_info *)&l;
	char p[128];

	(void)state;
	snprintf(p, sizeof(p), "%s/empty", root);
	mkdir(p, 0700);
	assert_int_equal(dtel_discover(p, 0, &l), 0);
	assert_null(l);
}

static void
discover_unreadable_prefix(void **state)
{
	struct dtel_socket_info *l = NULL;
	char p[128], sub[160];
	int n;

	(void)state;
	if (geteuid() == 0)
		skip(); /* root reads every directory */
	snprintf(p, sizeof(p), "%s/locked", root);
	mkdir(p, 0700);
	snprintf(sub, sizeof(sub), "%s/app", p);
	mkdir(sub, 0);
	n = dtel_discover(p, 0, &l);
	assert_int_equal(n, 1);
	assert_int_equal(l[0].state, DTEL_SOCKET_NO_PERMISSION);
	dtel_discover_free(l);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(runtime_dir_follows_eal),
		cmocka_unit_test(runtime_dirs_default_list),
		cmocka_unit_test(socket_paths),
		cmocka_unit_test(discover_all_kinds),
		cmocka_unit_test(discover_missing_dir),
		cmocka_unit_test(discover_empty_dir),
		cmocka_unit_test(discover_unreadable_prefix),
		/* Last: it adds sockets to the shared root the tests above count. */
		cmocka_unit_test(discover_several_dirs),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
