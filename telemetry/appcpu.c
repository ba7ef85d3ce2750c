/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The application's CPU time for our connection, from /proc: DPDK serves each telemetry
 * client on a thread of its own (lib/telemetry/telemetry.c socket_listener() starts
 * client_handler() for every accepted connection, in every release), so the CPU time of
 * that thread is exactly what our requests cost the application, wake-ups and all. It is the
 * thread of the application's process created last once we connected: found by its start
 * time, right after the greeting (which that thread sends). Its schedstat file stays open
 * and is read again with one pread() after each turn of ours. Where /proc does not show it
 * (another pid namespace without the pid, no schedstat), the caller does without.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dtel_private.h"

static int
read_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "re");
	int ret = 0;

	if (f == NULL)
		return -errno;
	if (fgets(buf, (int)size, f) == NULL)
		ret = -EIO;
	fclose(f);
	return ret;
}

/* Field 22 of /proc/<pid>/task/<tid>/stat: when the thread started, in clock ticks since
 * boot. The name (field 2) may hold spaces and parentheses: fields are counted from the last
 * ")". 0 when it cannot be read. */
static unsigned long long
start_ticks(long pid, const char *tid)
{
	char path[320], buf[1024], *p, *end;
	unsigned long long v;

	snprintf(path, sizeof(path), "/proc/%ld/task/%s/stat", pid, tid);
	if (read_line(path, buf, sizeof(buf)) < 0)
		return 0;
	p = strrchr(buf, ')');
	for (int field = 0; p != NULL && field < 20; field++)
		p = strchr(p + 1, ' ');
	if (p == NULL)
		return 0;
	errno = 0;
	v = strtoull(p + 1, &end, 10);
	return errno != 0 || end == p + 1 ? 0 : v;
}

int
dtel__server_thread(long pid, uint64_t opened_boot_ns, int *ret_fd)
{
	long hz = sysconf(_SC_CLK_TCK);
	unsigned long long since, best = 0;
	char path[320], tid[256] = "";
	struct dirent *e;
	DIR *d;
	int fd;

	if (pid <= 0 || hz <= 0)
		return -EINVAL;
	since = (unsigned long long)(opened_boot_ns / 1000000u) * (unsigned long long)hz / 1000u;
	snprintf(path, sizeof(path), "/proc/%ld/task", pid);
	d = opendir(path);
	if (d == NULL)
		return -errno;
	while ((e = readdir(d)) != NULL) {
		unsigned long long t;
		char *end;

		if (e->d_name[0] < '1' || e->d_name[0] > '9' ||
			strtol(e->d_name, &end, 10) == pid || *end != '\0')
			continue;
		t = start_ticks(pid, e->d_name);
		/* Started once we connected (a tick early: the ticks are rounded down). */
		if (t + 1 >= since && t >= best) {
			best = t;
			snprintf(tid, sizeof(tid), "%s", e->d_name);
		}
	}
	closedir(d);
	if (tid[0] == '\0')
		return -ENOENT;
	snprintf(path, sizeof(path), "/proc/%ld/task/%s/schedstat", pid, tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	*ret_fd = fd;
	return 0;
}

int
dtel__thread_cpu_ns(int fd, uint64_t *ret_ns)
{
	char buf[128], *end;
	unsigned long long v;
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return n < 0 ? -errno : -EIO;
	buf[n] = '\0';
	errno = 0;
	v = strtoull(buf, &end, 10);
	if (errno != 0 || end == buf)
		return -EIO;
	*ret_ns = v;
	return 0;
}

uint64_t
dtel__boottime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
