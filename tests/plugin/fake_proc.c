/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the kernel tells collectd of the process behind a fake application's socket.
 *
 * A real DPDK application both listens on its socket and greets with its own getpid() (DPDK
 * lib/telemetry/telemetry.c: create_socket() calls listen(), client_handler() writes
 * getpid() into the greeting). Seen from the same pid namespace, the pid SO_PEERCRED gives is
 * then the greeting's (Linux net/unix/af_unix.c unix_listen() records the listener's pid,
 * net/core/sock.c SO_PEERCRED gives it with pid_vnr(), in the caller's namespace). The fake
 * servers of these tests listen in this process and greet with any pid a test chooses, so
 * libdpdktel's status names this process: this file stands in for dtel_shared_status() in
 * the plugins compiled into the test (the plugins' calls resolve to the program's definition
 * first) and, for a socket this process listens on, names the greeting's pid and its start
 * time as /proc has it, as for a real application in collectd's namespace. A socket another
 * process listens on (a test's forked child) is left as the kernel named it.
 *
 * fp_hide_pid(true): as from a sibling pid namespace, SO_PEERCRED gives no pid (0), so no start
 * time either; the greeting is left as it is.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dtel.h"
#include "fake_proc.h"

static bool hide_pid;

void
fp_hide_pid(bool hide)
{
	__atomic_store_n(&hide_pid, hide, __ATOMIC_RELAXED);
}

/* /proc/<pid>/stat field 22, as libdpdktel reads it (telemetry/owner.c). */
static unsigned long long
start_of(long pid)
{
	char path[64], buf[1024], *p;
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	f = pid > 0 ? fopen(path, "re") : NULL;
	if (f == NULL)
		return 0;
	p = fgets(buf, sizeof(buf), f) != NULL ? strrchr(buf, ')') : NULL;
	fclose(f);
	for (int field = 0; p != NULL && field < 20; field++)
		p = strchr(p + 1, ' ');
	if (p != NULL)
		v = strtoull(p + 1, NULL, 10);
	return v;
}

/* libdpdktel reads the start time at a connect and keeps the first it had for the process of
 * a generation (telemetry/owner.c dtel__owner_merge()): so does this (a test may count the
 * /proc reads of the plugins), keyed by the generation and the pid. */
static struct {
	const struct dtel_shared *sh;
	uint64_t generation;
	long pid;
	unsigned long long start;
} seen[16];
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned long long
start_at_connect(const struct dtel_shared *sh, uint64_t generation, long pid)
{
	unsigned long long start;
	size_t i, free_slot = 0;

	pthread_mutex_lock(&seen_lock);
	for (i = 0; i < sizeof(seen) / sizeof(seen[0]); i++) {
		if (seen[i].sh == sh && seen[i].generation == generation && seen[i].pid == pid)
			break;
		if (seen[i].sh == sh || seen[i].sh == NULL)
			free_slot = i;
	}
	if (i == sizeof(seen) / sizeof(seen[0])) {
		i = free_slot;
		seen[i].sh = sh;
		seen[i].generation = generation;
		seen[i].pid = pid;
		seen[i].start = start_of(pid);
	}
	start = seen[i].start;
	pthread_mutex_unlock(&seen_lock);
	return start;
}

void
dtel_shared_status(struct dtel_shared *shared, struct dtel_shared_status *ret)
{
	static void (*real)(struct dtel_shared *, struct dtel_shared_status *);

	if (real == NULL)
		real = (void (*)(struct dtel_shared *, struct dtel_shared_status *))dlsym(
			RTLD_NEXT, "dtel_shared_status");
	real(shared, ret);
	if (__atomic_load_n(&hide_pid, __ATOMIC_RELAXED)) {
		ret->owner_pid = ret->peer_pid = 0;
		ret->owner_start = 0;
		return;
	}
	if (ret->owner_pid != (long)getpid())
		return; /* another process listens there: the kernel's word stands */
	ret->owner_pid = ret->greeting.pid;
	ret->owner_start = start_at_connect(shared, ret->generation, ret->greeting.pid);
	if (ret->peer_pid == (long)getpid())
		ret->peer_pid = ret->greeting.pid;
}
