/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Which process holds a telemetry socket, told in every arrangement of pid namespaces.
 *
 * Three things name the process behind a connection, and each fails somewhere:
 *   - SO_PEERCRED's pid is the process's pid in *our* pid namespace, so it is the one to
 *     read /proc with; it is 0 when the application runs in a namespace ours does not
 *     contain (collectd in one container, the application in a sibling one), and a pid can be
 *     reused, which its start time (/proc/<pid>/stat) tells apart;
 *   - the greeting's pid is the application's getpid() in *its* namespace (DPDK
 *     lib/telemetry/telemetry.c client_handler()): pid 1 for a container's entrypoint, at
 *     every restart;
 *   - the socket file: DPDK makes a new one at each start (unlink and bind in
 *     create_socket()), so its inode changes, or, where a file system hands the freed inode
 *     straight back (ext4), its change time does. A chmod or chown of the socket (dpdktel-fwd
 *     --telemetry-group) changes the change time too, without a new process.
 * A new process is any difference that can be seen (each compared with its own kind), except a
 * change time alone while the pid and start time show the same process.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dtel_private.h"

unsigned long long
dtel__stat_start_ticks(const char *stat_path)
{
	char buf[1024], *p, *end;
	unsigned long long v;
	FILE *f = fopen(stat_path, "re");
	bool ok;

	if (f == NULL)
		return 0;
	ok = fgets(buf, sizeof(buf), f) != NULL;
	fclose(f);
	/* Field 22 is starttime; comm (field 2) may hold spaces and ')': count from the last. */
	p = ok ? strrchr(buf, ')') : NULL;
	for (int field = 0; p != NULL && field < 20; field++)
		p = strchr(p + 1, ' ');
	if (p == NULL)
		return 0;
	errno = 0;
	v = strtoull(p + 1, &end, 10);
	return errno != 0 || end == p + 1 ? 0 : v;
}

unsigned long long
dtel__proc_start_ticks(long pid)
{
	char path[64];

	if (pid <= 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	return dtel__stat_start_ticks(path);
}

void
dtel__sock_file_of(const char *path, struct dtel__sock_file *ret)
{
	struct stat st;

	memset(ret, 0, sizeof(*ret));
	if (stat(path, &st) != 0 || !S_ISSOCK(st.st_mode))
		return;
	ret->dev = (uint64_t)st.st_dev;
	ret->ino = (uint64_t)st.st_ino;
	ret->ctime_ns = (uint64_t)st.st_ctim.tv_sec * 1000000000u + (uint64_t)st.st_ctim.tv_nsec;
}

/* Whether two values of one kind are both known and differ. */
static bool
differ(uint64_t a, uint64_t b)
{
	return a != 0 && b != 0 && a != b;
}

bool
dtel__owner_same(const struct dtel__owner *gen, const struct dtel__owner *now)
{
	bool same_pid = gen->peer != 0 && gen->peer == now->peer;
	/* The same pid since the same moment: the same process, whatever its socket says. */
	bool proven = same_pid && gen->start != 0 && gen->start == now->start;

	if (differ((uint64_t)gen->peer, (uint64_t)now->peer) ||
		(same_pid && differ(gen->start, now->start)) ||
		differ((uint64_t)gen->greet, (uint64_t)now->greet))
		return false;
	if (gen->sock.ino == 0 || now->sock.ino == 0)
		return true;
	if (gen->sock.dev != now->sock.dev || gen->sock.ino != now->sock.ino)
		return false;
	return proven || gen->sock.ctime_ns == now->sock.ctime_ns;
}

void
dtel__owner_merge(struct dtel__owner *gen, const struct dtel__owner *now)
{
	if (now->peer != 0) {
		gen->peer = now->peer;
		if (now->start != 0)
			gen->start = now->start;
	}
	if (now->greet != 0)
		gen->greet = now->greet;
	if (now->sock.ino != 0)
		gen->sock = now->sock;
}
