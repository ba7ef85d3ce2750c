/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Benchmark client: N requests over one persistent libdpdktel session. Prints one JSON line:
 * round trip median and p99, and the CPU time per request of this process and of the
 * application's telemetry threads (from /proc/<pid>/task/<tid>/schedstat, in ns).
 *
 * Usage: query_latency_client SOCKET CMD N [MODE]
 *   MODE query (default): dtel_query() only
 *        parse: dtel_query() and dtel_parse_port_stats(), as a plugin does
 *        raw:   send() and recv() on a plain socket, no library: the floor of a request
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <time.h>

#include "dtel.h"

static uint64_t
now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#define MAX_THREADS 256

/* On-CPU ns of each thread of pid named "telemetry-v2" (DPDK's listener and client threads). */
struct threads {
	int n;
	long tid[MAX_THREADS];
	uint64_t ns[MAX_THREADS];
};

static void
read_thread(long pid, const char *tid, struct threads *t)
{
	char path[300], comm[64];
	unsigned long long ns;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/task/%s/comm", pid, tid);
	f = fopen(path, "r");
	if (f == NULL)
		return;
	if (fgets(comm, sizeof(comm), f) == NULL)
		comm[0] = '\0';
	fclose(f);
	if (strncmp(comm, "telemetry-v2", 12) != 0)
		return;
	snprintf(path, sizeof(path), "/proc/%ld/task/%s/schedstat", pid, tid);
	f = fopen(path, "r");
	if (f == NULL)
		return;
	if (fscanf(f, "%llu", &ns) == 1 && t->n < MAX_THREADS) {
		t->tid[t->n] = strtol(tid, NULL, 10);
		t->ns[t->n++] = ns;
	}
	fclose(f);
}

static void
telemetry_threads(long pid, struct threads *t)
{
	char path[64];
	struct dirent *de;
	DIR *d;

	t->n = 0;
	snprintf(path, sizeof(path), "/proc/%ld/task", pid);
	d = opendir(path);
	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.')
			read_thread(pid, de->d_name, t);
	closedir(d);
}

/* CPU the telemetry threads alive at both times spent in between (others come and go). */
static uint64_t
threads_delta(const struct threads *a, const struct threads *b)
{
	uint64_t sum = 0;

	for (int i = 0; i < b->n; i++)
		for (int j = 0; j < a->n; j++)
			if (a->tid[j] == b->tid[i])
				sum += b->ns[i] - a->ns[j];
	return sum;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

enum mode { MODE_QUERY, MODE_PARSE, MODE_RAW };

static int raw_fd = -1;
static char raw_buf[1 << 20];

static int
raw_query(const char *cmd)
{
	if (send(raw_fd, cmd, strlen(cmd), MSG_NOSIGNAL) < 0)
		return -1;
	return recv(raw_fd, raw_buf, sizeof(raw_buf), 0) > 0 ? 0 : -1;
}

static int
raw_open(const char *path)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};

	raw_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	if (raw_fd < 0 || connect(raw_fd, (struct sockaddr *)&a, sizeof(a)) < 0)
		return -1;
	return recv(raw_fd, raw_buf, sizeof(raw_buf), 0) > 0 ? 0 : -1;
}

/* One request in the chosen mode; 0 on success. */
static int
one(struct dtel_session *s, enum mode m, const char *cmd)
{
	struct dtel_port_stats st;
	struct dtel_reply rep;
	int r;

	if (m == MODE_RAW)
		return raw_query(cmd);
	r = dtel_query(s, cmd, 2000, &rep);
	if (r < 0)
		return r;
	if (m == MODE_PARSE)
		r = dtel_parse_port_stats(&rep, &st);
	dtel_reply_release(&rep);
	return r;
}

int
main(int argc, char **argv)
{
	enum mode m = MODE_QUERY;
	struct dtel_session *s;
	uint64_t *lat, cpu0, cpu1;
	struct threads srv0, srv1;
	long n, pid;
	int r;

	if (argc < 4 || argc > 5 || (n = strtol(argv[3], NULL, 10)) <= 0) {
		fprintf(stderr, "usage: %s SOCKET CMD N [query|parse|raw]\n", argv[0]);
		return 2;
	}
	if (argc == 5)
		m = strcmp(argv[4], "raw") == 0         ? MODE_RAW
			: strcmp(argv[4], "parse") == 0 ? MODE_PARSE
							: MODE_QUERY;
	if (m == MODE_RAW && raw_open(argv[1]) < 0) {
		perror(argv[1]);
		return 1;
	}
	r = dtel_session_open(argv[1], 2000, &s);
	if (r < 0) {
		fprintf(stderr, "%s: %s\n", argv[1], dtel_strerror(r));
		return 1;
	}
	pid = dtel_session_greeting(s)->pid;
	lat = calloc((size_t)n, sizeof(*lat));
	if (lat == NULL)
		return 1;
	/* Warm up: the server thread and both caches. */
	for (int i = 0; i < 100; i++)
		one(s, m, argv[2]);
	cpu0 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
	telemetry_threads(pid, &srv0);
	for (long i = 0; i < n; i++) {
		uint64_t t0 = now_ns(CLOCK_MONOTONIC);

		r = one(s, m, argv[2]);
		lat[i] = now_ns(CLOCK_MONOTONIC) - t0;
		if (r < 0) {
			fprintf(stderr, "%s: %s\n", argv[2], dtel_strerror(r));
			return 1;
		}
	}
	cpu1 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
	telemetry_threads(pid, &srv1);
	qsort(lat, (size_t)n, sizeof(*lat), cmp_u64);
	printf("{\"n\":%ld,\"median_us\":%.2f,\"p99_us\":%.2f,\"client_cpu_us\":%.2f,"
	       "\"server_cpu_us\":%.2f}\n",
		n, (double)lat[n / 2] / 1e3, (double)lat[(n * 99) / 100] / 1e3,
		(double)(cpu1 - cpu0) / 1e3 / (double)n,
		(double)threads_delta(&srv0, &srv1) / 1e3 / (double)n);
	free(lat);
	if (raw_fd >= 0)
		close(raw_fd);
	dtel_session_close(s);
	return 0;
}
