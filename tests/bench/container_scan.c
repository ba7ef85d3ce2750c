/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * container_scan: what one DiscoverContainers pass costs (plugins/common/containers.c
 * dtp_containers_scan(), against this machine's real /proc), by the number of processes and
 * of containers. Each plugin runs one pass per collectd Interval.
 *
 * Processes: idle children in collectd's own mount namespace (each costs the scan one
 * readlink() of /proc/<pid>/ns/mnt). Containers: children in a mount namespace of their own
 * (unshare(CLONE_NEWNS)) with a tmpfs over /var/run/dpdk holding one listening
 * dpdk_telemetry.v2 socket, as a containerized DPDK application has it; each also costs its
 * runtime dirs' listing, a stat() of its socket, its cgroup file and, at the first pass, its
 * link. Per row, the median of 9 passes (links already made) of the scan's CPU time (user and
 * system: what collectd spends, steady on a shared machine) and of its wall time; the cost per
 * process and per container from the differences between rows. Prints a table, asserts
 * nothing. Needs root (unshare, mount); prints why and exits 77 otherwise.
 *
 *   meson test -C build --benchmark --verbose container_scan
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include "common/containers.h"

#define ROUNDS 9
#define MAX_CHILDREN 6000

static pid_t children[MAX_CHILDREN];
static int nchildren;

static int
cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* A child that waits (in a container of its own when @container) until killed; 0 or -1. */
static int
child(int container, int i)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int ready[2], fd;
	pid_t pid;
	char c;

	if (nchildren == MAX_CHILDREN || pipe(ready) != 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(ready[0]);
		if (container) {
			if (unshare(CLONE_NEWNS) != 0 ||
				mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
				mount("tmpfs", "/var/run/dpdk", "tmpfs", 0, "size=64k") != 0)
				_exit(1);
			snprintf(a.sun_path, sizeof(a.sun_path), "/var/run/dpdk/b%d", i);
			mkdir(a.sun_path, 0700);
			snprintf(a.sun_path, sizeof(a.sun_path),
				"/var/run/dpdk/b%d/dpdk_telemetry.v2", i);
			fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
			if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
				listen(fd, 1) != 0)
				_exit(1);
		}
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(ready[1]);
	children[nchildren++] = pid;
	if (read(ready[0], &c, 1) != 1) {
		close(ready[0]);
		return -1;
	}
	close(ready[0]);
	return 0;
}

static void
end_children(void)
{
	for (int i = 0; i < nchildren; i++)
		kill(children[i], SIGKILL);
	for (int i = 0; i < nchildren; i++)
		waitpid(children[i], NULL, 0);
	nchildren = 0;
}

static double
now_us(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* The median CPU time of a pass (µs) and its median wall time into *ret_wall, and what the
 * last one saw. */
static double
measure(const struct dtp_container_where *w, struct dtp_container_scan *sc, int *ret_found,
	double *ret_wall)
{
	double cpu[ROUNDS], wall[ROUNDS];

	for (int r = -1; r < ROUNDS; r++) { /* one more first: it makes the links */
		struct dtel_socket_info *list = NULL;
		double c0 = now_us(CLOCK_PROCESS_CPUTIME_ID), w0 = now_us(CLOCK_MONOTONIC);

		*ret_found = dtp_containers_scan(w, NULL, 0, &list, sc);
		if (r >= 0) {
			cpu[r] = now_us(CLOCK_PROCESS_CPUTIME_ID) - c0;
			wall[r] = now_us(CLOCK_MONOTONIC) - w0;
		}
		free(list);
	}
	qsort(cpu, ROUNDS, sizeof(cpu[0]), cmp);
	qsort(wall, ROUNDS, sizeof(wall[0]), cmp);
	*ret_wall = wall[ROUNDS / 2];
	return cpu[ROUNDS / 2];
}

int
main(void)
{
	static const char dirs[1][DTEL_PATH_MAX] = {"/var/run/dpdk"};
	static const struct {
		int procs, containers;
	} rows[] = {{0, 0}, {1000, 0}, {3000, 0}, {3000, 30}, {3000, 300}};
	char links[] = "/tmp/dtel-bench-links-XXXXXX";
	struct dtp_container_where w = {.proc = "/proc", .dirs = dirs, .ndirs = 1};
	double base = 0, with_procs = 0, base_procs = 0;
	int made_procs = 0, made_ctrs = 0;

	if (geteuid() != 0) {
		printf("container_scan: needs root (unshare and mount for the containers)\n");
		return 77;
	}
	if (mkdtemp(links) == NULL || (mkdir("/var/run/dpdk", 0700) != 0 && errno != EEXIST))
		return 1;
	w.link_dir = links;
	printf("%-10s %-10s %-10s %-10s %-14s %-14s\n", "children", "processes", "namespaces",
		"sockets", "pass CPU (ms)", "pass wall (ms)");
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct dtp_container_scan sc;
		double us, wall;
		int found;

		while (made_procs < rows[i].procs && child(0, 0) == 0)
			made_procs++;
		while (made_ctrs < rows[i].containers && child(1, made_ctrs) == 0)
			made_ctrs++;
		us = measure(&w, &sc, &found, &wall);
		printf("%-10d %-10u %-10u %-10d %-14.2f %-14.2f\n", made_procs + made_ctrs,
			sc.processes, sc.namespaces, found, us / 1000.0, wall / 1000.0);
		if (i == 0)
			base = us;
		if (rows[i].procs == 3000 && rows[i].containers == 0) {
			with_procs = us;
			base_procs = made_procs;
		}
		if (i + 1 == sizeof(rows) / sizeof(rows[0]) && made_ctrs > 0 && base_procs > 0)
			printf("\nCPU per process: %.2f us; per container with one socket: %.1f us "
			       "(medians of %d passes, links made)\n",
				(with_procs - base) / base_procs, (us - with_procs) / made_ctrs,
				ROUNDS);
	}
	end_children();
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", links);
		if (system(cmd) != 0)
			return 1;
	}
	return 0;
}
