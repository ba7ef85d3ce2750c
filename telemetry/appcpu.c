/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The application's CPU time for our connection, from /proc: DPDK serves each telemetry
 * client on a thread of its own (lib/telemetry/telemetry.c socket_listener() starts
 * client_handler() for every accepted connection, in every release), so the CPU time of
 * that thread is exactly what our requests cost the application, wake-ups and all. It is the
 * one thread of the application's process that started once we connected (by its start
 * time, read right after the greeting, which that thread sends) and bears the v2 listener's
 * name: socket_listener() creates it, so it inherits that thread's name, "telemetry-v2" in
 * 22.11 (pthread_setname_np in telemetry_v2_init()), "dpdk-telemet-v2" from 23.11 on
 * (set_thread_name()). Any other thread started then (a forwarding core, an OVS pmd thread)
 * is not it; two such threads (another client connected within a clock tick of us) cannot
 * be told apart, and then none is taken. Its schedstat file stays open and is read again
 * with one pread() after each turn of ours. Where /proc does not show it (another pid
 * namespace without the pid, no schedstat), the caller does without.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
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

/* A thread that serves a v2 telemetry client: named after the v2 listener (above). */
static bool
serves_v2(long pid, long tid)
{
	char path[320], name[64];
	size_t n;

	snprintf(path, sizeof(path), "/proc/%ld/task/%ld/comm", pid, tid);
	if (read_line(path, name, sizeof(name)) < 0)
		return false;
	name[strcspn(name, "\n")] = '\0';
	n = strlen(name);
	return strstr(name, "telemet") != NULL && n >= 3 && strcmp(name + n - 3, "-v2") == 0;
}

/* When thread @tid of @pid started, in clock ticks since boot (owner.c reads the field); 0 when
 * it cannot be read. */
static unsigned long long
start_ticks(long pid, long tid)
{
	char path[320];

	snprintf(path, sizeof(path), "/proc/%ld/task/%ld/stat", pid, tid);
	return dtel__stat_start_ticks(path);
}

/* The application's threads named after the v2 listener: the listener and its clients'. */
#define V2_MAX 64 /* DPDK serves at most 10 clients at once (MAX_CONNECTIONS) */
struct v2_threads {
	long tid[V2_MAX];
	unsigned long long start[V2_MAX];
	unsigned int n;
	bool overflow;
};

static int
list_v2_threads(long pid, struct v2_threads *v)
{
	char path[320];
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%ld/task", pid);
	d = opendir(path);
	if (d == NULL)
		return -errno;
	while ((e = readdir(d)) != NULL) {
		char *end;
		long tid = strtol(e->d_name, &end, 10);

		if (tid <= 0 || *end != '\0' || tid == pid || !serves_v2(pid, tid))
			continue;
		if (v->n == V2_MAX) {
			v->overflow = true;
			break;
		}
		v->tid[v->n] = tid;
		v->start[v->n++] = start_ticks(pid, tid);
	}
	closedir(d);
	return 0;
}

/* Which of @v is the listener: the first started (then the lowest tid, made first). */
static unsigned int
listener_of(const struct v2_threads *v)
{
	unsigned int first = 0;

	for (unsigned int i = 1; i < v->n; i++)
		if (v->start[i] < v->start[first] ||
			(v->start[i] == v->start[first] && v->tid[i] < v->tid[first]))
			first = i;
	return first;
}

int
dtel__server_thread(long pid, uint64_t opened_boot_ns, int *ret_fd, long *ret_tid)
{
	long hz = sysconf(_SC_CLK_TCK);
	unsigned long long since;
	struct v2_threads v = {.n = 0};
	unsigned int first, found = 0, ours = 0;
	char path[320];
	int fd, ret;

	if (pid <= 0 || hz <= 0)
		return -EINVAL;
	since = (unsigned long long)(opened_boot_ns / 1000000u) * (unsigned long long)hz / 1000u;
	ret = list_v2_threads(pid, &v);
	if (ret < 0)
		return ret;
	if (v.overflow)
		return -EEXIST;
	first = listener_of(&v);
	/* A client's thread started once we connected (a tick early: ticks are rounded down);
	 * the listener is not one, even when it started within that tick too. */
	for (unsigned int i = 0; i < v.n; i++)
		if (i != first && v.start[i] + 1 >= since && found++ == 0)
			ours = i;
	if (found != 1)
		return found == 0 ? -ENOENT : -EEXIST;
	snprintf(path, sizeof(path), "/proc/%ld/task/%ld/schedstat", pid, v.tid[ours]);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	*ret_fd = fd;
	if (ret_tid != NULL)
		*ret_tid = v.tid[ours];
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
