/* SPDX-License-Identifier: BSD-3-Clause */
/* Small helpers shared by the cmocka suites. */
#ifndef TEST_UTIL_H
#define TEST_UTIL_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dtel.h"

/** A reply struct over a string literal or golden text (not owned). */
static inline struct dtel_reply
reply_of(const char *json)
{
	struct dtel_reply r = {.json = (char *)json, .len = strlen(json), .flags = 0};

	return r;
}

/**
 * A new directory "/tmp/dtel-<tag>-XXXXXX" into @buf (@size at least 32): the one way the C
 * tests make their temporary directories. 0, or -1 (nothing made).
 */
static inline int
test_tmpdir(const char *tag, char *buf, size_t size)
{
	if ((size_t)snprintf(buf, size, "/tmp/dtel-%s-XXXXXX", tag) >= size)
		return -1;
	return mkdtemp(buf) == NULL ? -1 : 0;
}

/** Remove a test_tmpdir() and everything in it, whatever permissions a test left. 0 or -1. */
static inline int
test_rmdir(const char *dir)
{
	char cmd[512];

	if (dir[0] == '\0' || strncmp(dir, "/tmp/dtel-", 10) != 0 || strchr(dir, '\'') != NULL)
		return -1;
	snprintf(cmd, sizeof(cmd), "chmod -R u+rwx '%s' 2>/dev/null; rm -rf '%s'", dir, dir);
	return system(cmd) == 0 ? 0 : -1;
}

static inline uint64_t
test_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/**
 * A process that has just started (it waits until test_end_process()), for the greeting of
 * an application that is still starting: the plugins tell its age from /proc/<pid>.
 */
static inline pid_t
test_young_process(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		pause();
		_exit(0);
	}
	return pid;
}

static inline void
test_end_process(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

/**
 * A stale telemetry socket at @dir/@prefix/@sock (the directory is made): bound, then
 * closed, as an application that was killed leaves it. 0 or -1.
 */
static inline int
test_plant_stale(const char *dir, const char *prefix, const char *sock)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	char d[sizeof(a.sun_path)];
	int fd, r;

	snprintf(d, sizeof(d), "%s/%s", dir, prefix);
	mkdir(d, 0700);
	if ((size_t)snprintf(a.sun_path, sizeof(a.sun_path), "%s/%s", d, sock) >=
		sizeof(a.sun_path))
		return -1;
	fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	if (fd < 0)
		return -1;
	r = bind(fd, (struct sockaddr *)&a, sizeof(a));
	close(fd);
	return r;
}

/* Prefixes of 65 characters that agree in their first 63 (DTP_NAME_MAX - 1). */
#define TEST_LONG_A "long_prefix_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa_1"
#define TEST_LONG_B "long_prefix_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa_2"

/**
 * Plant, under runtime dir @dir, the discovered names that clash: a prefix "discover"; a
 * prefix "a_1" beside socket "a/dpdk_telemetry.v2:1"; two prefixes longer than 63
 * characters with the same start; "x.port1" (renamed "x_port1") beside a real "x_port1".
 * Returns the number of sockets planted (7), or -1.
 */
static inline int
test_plant_clashes(const char *dir)
{
	static const char *const p[][2] = {
		{"discover", "dpdk_telemetry.v2"},
		{"a", "dpdk_telemetry.v2:1"},
		{"a_1", "dpdk_telemetry.v2"},
		{TEST_LONG_A, "dpdk_telemetry.v2"},
		{TEST_LONG_B, "dpdk_telemetry.v2"},
		{"x.port1", "dpdk_telemetry.v2"},
		{"x_port1", "dpdk_telemetry.v2"},
	};

	for (size_t i = 0; i < sizeof(p) / sizeof(p[0]); i++)
		if (test_plant_stale(dir, p[i][0], p[i][1]) < 0)
			return -1;
	return (int)(sizeof(p) / sizeof(p[0]));
}

#endif
