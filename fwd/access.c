/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --telemetry-group GROUP: let a non-root reader in GROUP (collectd, the dpdktel CLI) use
 * the telemetry sockets. To connect to a UNIX socket a process needs write permission on
 * the socket file and search permission on every directory above it. So:
 *
 *  - our telemetry sockets (dpdk_telemetry.v2[:N], and the legacy v1 "telemetry" if it is
 *    ours): group GROUP, mode 0660;
 *  - the runtime dir /var/run/dpdk/<prefix>: group GROUP, mode 0750 (list and search;
 *    no write, so members cannot create, delete or replace anything in it);
 *  - its parent (/var/run/dpdk, made 0700 by EAL): add search permission for others
 *    (o+x) if missing. That lets anyone traverse it, but not list it, and every other
 *    prefix dir stays 0700, so nothing else becomes reachable. We never remove bits.
 *
 * Directories further up that members cannot search are reported, not changed.
 */
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <rte_eal.h>

#include "fwd.h"

#define SOCKET_MODE 0660
#define DIR_MODE 0750
/* How many ":N" suffixes to look through for our own v2 socket. */
#define MAX_SOCKET_INDEX 32

static int
resolve_group(const char *name, gid_t *gid)
{
	struct group gr, *res = NULL;
	char buf[16384];
	char *end;
	unsigned long v;

	if (getgrnam_r(name, &gr, buf, sizeof(buf), &res) == 0 && res != NULL) {
		*gid = res->gr_gid;
		return 0;
	}
	errno = 0;
	v = strtoul(name, &end, 10);
	if (name[0] >= '0' && name[0] <= '9' && *end == '\0' && errno == 0 &&
		v < (unsigned long)UINT32_MAX) {
		*gid = (gid_t)v;
		return 0;
	}
	return -ENOENT;
}

/* The pid in a telemetry greeting {"version":...,"pid":N,...}, or -1. */
static long
greeting_pid(const char *path)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	struct timeval tv = {.tv_sec = 1, .tv_usec = 0};
	char buf[1024];
	const char *p;
	long pid = -1;
	ssize_t n;
	int fd;

	if (strlen(path) >= sizeof(sun.sun_path))
		return -1;
	memcpy(sun.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
		connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0)
		goto out;
	n = recv(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		goto out;
	buf[n] = '\0';
	p = strstr(buf, "\"pid\":");
	if (p != NULL)
		pid = strtol(p + 6, NULL, 10);
out:
	close(fd);
	return pid;
}

/* Find the v2 socket this process serves; its path in path, its :N index returned. */
static int
own_socket(const char *dir, char *path, size_t len)
{
	for (int i = 0; i < MAX_SOCKET_INDEX; i++) {
		if (i == 0)
			snprintf(path, len, "%s/dpdk_telemetry.v2", dir);
		else
			snprintf(path, len, "%s/dpdk_telemetry.v2:%d", dir, i);
		if (access(path, F_OK) != 0)
			continue;
		if (greeting_pid(path) == (long)getpid())
			return i;
	}
	return -ENOENT;
}

static void
give(const char *path, gid_t gid, mode_t mode, const char *group)
{
	if (chown(path, (uid_t)-1, gid) != 0 || chmod(path, mode) != 0)
		rte_exit(EXIT_FAILURE,
			"%s: --telemetry-group '%s': cannot give %s to the group: "
			"%s\n",
			FWD_APP_NAME, group, path, strerror(errno));
}

/* Can a member of gid (not the owner) search directory st? */
static bool
searchable(const struct stat *st, gid_t gid)
{
	if (st->st_mode & S_IXOTH)
		return true;
	return st->st_gid == gid && (st->st_mode & S_IXGRP);
}

void
fwd_access_apply(const struct fwd_ctx *ctx)
{
	const char *group = ctx->cfg.telemetry_group;
	const char *dir = rte_eal_get_runtime_dir();
	char path[PATH_MAX], parent[PATH_MAX];
	struct stat st;
	char *slash;
	gid_t gid;
	int index;

	if (group[0] == '\0')
		return;
	if (resolve_group(group, &gid) != 0)
		rte_exit(EXIT_FAILURE, "%s: --telemetry-group '%s': no such group\n", FWD_APP_NAME,
			group);
	give(dir, gid, DIR_MODE, group);
	index = own_socket(dir, path, sizeof(path));
	if (index < 0)
		rte_exit(EXIT_FAILURE,
			"%s: --telemetry-group '%s': cannot find this process's "
			"telemetry socket in %s\n",
			FWD_APP_NAME, group, dir);
	give(path, gid, SOCKET_MODE, group);
	/* Only the first process of a runtime dir gets the legacy socket. */
	snprintf(path, sizeof(path), "%s/telemetry", dir);
	if (index == 0 && stat(path, &st) == 0 && S_ISSOCK(st.st_mode))
		give(path, gid, SOCKET_MODE, group);

	snprintf(parent, sizeof(parent), "%s", dir);
	slash = strrchr(parent, '/');
	if (slash == NULL || slash == parent)
		return;
	*slash = '\0';
	if (stat(parent, &st) == 0 && !searchable(&st, gid)) {
		if (chmod(parent, (st.st_mode & 07777) | S_IXOTH) != 0)
			rte_exit(EXIT_FAILURE,
				"%s: --telemetry-group '%s': cannot add search "
				"permission to %s: %s\n",
				FWD_APP_NAME, group, parent, strerror(errno));
		FWD_LOG(NOTICE,
			"added search permission for others (o+x) to %s, so that group "
			"'%s' can reach %s",
			parent, group, dir);
	}
	/* Further up: report what would still keep members out. */
	while ((slash = strrchr(parent, '/')) != NULL && slash != parent) {
		*slash = '\0';
		if (stat(parent, &st) == 0 && !searchable(&st, gid))
			FWD_LOG(WARNING,
				"members of group '%s' cannot search %s: they will not "
				"reach the telemetry socket",
				group, parent);
	}
	FWD_LOG(NOTICE, "telemetry sockets in %s are readable and writable by group '%s'", dir,
		group);
}
