/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Where DPDK applications put their telemetry sockets, and finding them.
 *
 * EAL makes its runtime dir <base>/dpdk/<file prefix>, with base $RUNTIME_DIRECTORY, or
 * /var/run for root, or $XDG_RUNTIME_DIR, or /tmp. The v2 socket in it is dpdk_telemetry.v2;
 * a further primary process sharing the dir (--in-memory, --no-shconf) takes
 * dpdk_telemetry.v2:1, :2, ...
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dtel_private.h"

int
dtel_runtime_dir(char *buf, size_t size)
{
	const char *base = getenv("RUNTIME_DIRECTORY");
	int n;

	if (base == NULL || base[0] == '\0') {
		if (geteuid() == 0)
			base = "/var/run";
		else
			base = getenv("XDG_RUNTIME_DIR");
	}
	if (base == NULL || base[0] == '\0')
		base = "/tmp";
	n = snprintf(buf, size, "%s/dpdk", base);
	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	return n;
}

/* Whether @dir names the same directory as one of the first @n of @dirs. */
static bool
seen_dir(char (*dirs)[DTEL_PATH_MAX], int n, const char *dir)
{
	char a[PATH_MAX], b[PATH_MAX];
	bool ra = realpath(dir, a) != NULL;

	for (int i = 0; i < n; i++) {
		if (strcmp(dirs[i], dir) == 0)
			return true;
		if (ra && realpath(dirs[i], b) != NULL && strcmp(a, b) == 0)
			return true;
	}
	return false;
}

static void
add_dir(char (*dirs)[DTEL_PATH_MAX], int *n, int max, const char *base, const char *sub)
{
	char dir[DTEL_PATH_MAX];
	int len;

	if (base == NULL || base[0] == '\0' || *n >= max)
		return;
	len = snprintf(dir, sizeof(dir), "%s%s", base, sub);
	if (len < 0 || (size_t)len >= sizeof(dir) || seen_dir(dirs, *n, dir))
		return;
	memcpy(dirs[(*n)++], dir, (size_t)len + 1);
}

int
dtel_runtime_dirs(char (*ret_dirs)[DTEL_PATH_MAX], int max)
{
	char own[DTEL_PATH_MAX];
	int n = 0;

	if (ret_dirs == NULL || max <= 0)
		return 0;
	if (dtel_runtime_dir(own, sizeof(own)) > 0)
		add_dir(ret_dirs, &n, max, own, "");
	add_dir(ret_dirs, &n, max, getenv("RUNTIME_DIRECTORY"), "/dpdk");
	add_dir(ret_dirs, &n, max, "/run/openvswitch", "/dpdk");
	add_dir(ret_dirs, &n, max, "/var/run", "/dpdk");
	if (geteuid() != 0)
		add_dir(ret_dirs, &n, max, getenv("XDG_RUNTIME_DIR"), "/dpdk");
	return n;
}

/* The first of dtel_runtime_dirs() that holds @prefix (an application may run elsewhere than
 * this process's own dir: OVS under /run/openvswitch), else dtel_runtime_dir(). */
static int
prefix_dir(const char *prefix, char *buf, size_t size)
{
	char dirs[DTEL_RUNTIME_DIRS_MAX][DTEL_PATH_MAX], p[DTEL_PATH_MAX * 2];
	int n = dtel_runtime_dirs(dirs, DTEL_RUNTIME_DIRS_MAX);

	for (int k = 0; k < n; k++) {
		int len = snprintf(p, sizeof(p), "%s/%s", dirs[k], prefix);
		size_t dlen = strlen(dirs[k]);

		if (len > 0 && (size_t)len < sizeof(p) && access(p, F_OK) == 0 && dlen < size) {
			memcpy(buf, dirs[k], dlen + 1);
			return (int)dlen;
		}
	}
	return dtel_runtime_dir(buf, size);
}

int
dtel_socket_path(
	const char *runtime_dir, const char *prefix, unsigned int index, char *buf, size_t size)
{
	char dir[DTEL_PATH_MAX];
	int n;

	if (prefix == NULL)
		prefix = DTEL_DEFAULT_PREFIX;
	if (prefix[0] == '\0' || strchr(prefix, '/') != NULL || strcmp(prefix, ".") == 0 ||
		strcmp(prefix, "..") == 0 || buf == NULL)
		return -EINVAL;
	if (runtime_dir == NULL) {
		n = prefix_dir(prefix, dir, sizeof(dir));
		if (n < 0)
			return n;
		runtime_dir = dir;
	}
	if (index == 0)
		n = snprintf(buf, size, "%s/%s/" DTEL_SOCKET_NAME, runtime_dir, prefix);
	else
		n = snprintf(
			buf, size, "%s/%s/" DTEL_SOCKET_NAME ":%u", runtime_dir, prefix, index);
	if (n < 0 || (size_t)n >= size || (size_t)n >= DTEL_PATH_MAX)
		return -ENAMETOOLONG;
	return n;
}

/* "dpdk_telemetry.v2" -> 0, "dpdk_telemetry.v2:N" -> N (N > 0, no leading zero), else -1. */
static long
socket_index(const char *name)
{
	static const char base[] = DTEL_SOCKET_NAME;
	const char *p;
	char *end;
	long v;

	if (strncmp(name, base, sizeof(base) - 1) != 0)
		return -1;
	p = name + sizeof(base) - 1;
	if (*p == '\0')
		return 0;
	if (p[0] != ':' || p[1] < '1' || p[1] > '9')
		return -1;
	errno = 0;
	v = strtol(p + 1, &end, 10);
	if (errno != 0 || *end != '\0' || v > 65535)
		return -1;
	return v;
}

struct list {
	struct dtel_socket_info *v;
	size_t n, cap;
};

static struct dtel_socket_info *
list_add(struct list *l)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 8;
		struct dtel_socket_info *v = realloc(l->v, cap * sizeof(*v));

		if (v == NULL)
			return NULL;
		l->v = v;
		l->cap = cap;
	}
	memset(&l->v[l->n], 0, sizeof(l->v[0]));
	return &l->v[l->n++];
}

static void
probe_into(struct dtel_socket_info *si)
{
	si->error = dtel_probe(si->path);
	switch (si->error) {
	case 0:
		si->state = DTEL_SOCKET_LIVE;
		break;
	case -ECONNREFUSED:
		si->state = DTEL_SOCKET_STALE;
		break;
	case -EACCES:
		si->state = DTEL_SOCKET_NO_PERMISSION;
		break;
	default:
		si->state = DTEL_SOCKET_ERROR;
	}
}

/* Add an entry for one socket file name in dir (prefix); 0 when skipped or added. */
static int
add_socket(struct list *l, const char *runtime_dir, const char *prefix, const char *name,
	unsigned int flags)
{
	struct dtel_socket_info *si;
	long index = socket_index(name);
	int n;

	if (index < 0)
		return 0;
	si = list_add(l);
	if (si == NULL)
		return -ENOMEM;
	snprintf(si->prefix, sizeof(si->prefix), "%s", prefix);
	si->index = (unsigned int)index;
	n = dtel_socket_path(runtime_dir, prefix, si->index, si->path, sizeof(si->path));
	if (n < 0) {
		/* Such a path cannot be a live socket: EAL fails to bind it. */
		si->state = DTEL_SOCKET_ERROR;
		si->error = n;
		return 0;
	}
	if (flags & DTEL_DISCOVER_PROBE)
		probe_into(si);
	return 0;
}

static int
scan_prefix(struct list *l, const char *runtime_dir, const char *prefix, unsigned int flags)
{
	char dir[4096];
	struct dirent *de;
	struct dtel_socket_info *si;
	DIR *d;
	int ret = 0;

	snprintf(dir, sizeof(dir), "%s/%s", runtime_dir, prefix);
	d = opendir(dir);
	if (d == NULL) {
		if (errno != EACCES)
			return 0; /* not a directory, or gone meanwhile */
		si = list_add(l);
		if (si == NULL)
			return -ENOMEM;
		snprintf(si->prefix, sizeof(si->prefix), "%s", prefix);
		dtel_socket_path(runtime_dir, prefix, 0, si->path, sizeof(si->path));
		si->state = DTEL_SOCKET_NO_PERMISSION;
		si->error = -EACCES;
		return 0;
	}
	while (ret == 0 && (de = readdir(d)) != NULL)
		ret = add_socket(l, runtime_dir, prefix, de->d_name, flags);
	closedir(d);
	return ret;
}

static int
cmp_info(const void *a, const void *b)
{
	const struct dtel_socket_info *x = a, *y = b;
	int c = strcmp(x->prefix, y->prefix);

	if (c != 0)
		return c;
	return (x->index > y->index) - (x->index < y->index);
}

int
dtel_discover(const char *runtime_dir, unsigned int flags, struct dtel_socket_info **ret_list)
{
	char rdir[DTEL_PATH_MAX];
	struct list l = {0};
	struct dirent *de;
	DIR *d;
	int ret = 0;

	if (ret_list == NULL)
		return -EINVAL;
	if (runtime_dir == NULL) {
		ret = dtel_runtime_dir(rdir, sizeof(rdir));
		if (ret < 0)
			return ret;
		runtime_dir = rdir;
		ret = 0;
	}
	d = opendir(runtime_dir);
	if (d == NULL)
		return errno == ENOTDIR ? -ENOENT : -errno;
	while (ret == 0 && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		ret = scan_prefix(&l, runtime_dir, de->d_name, flags);
	}
	closedir(d);
	if (ret < 0) {
		free(l.v);
		return ret;
	}
	if (l.n > 1)
		qsort(l.v, l.n, sizeof(l.v[0]), cmp_info);
	if (l.n > (size_t)INT32_MAX)
		l.n = INT32_MAX;
	*ret_list = l.v;
	return (int)l.n;
}

int
dtel_discover_dirs(const char (*dirs)[DTEL_PATH_MAX], int ndirs, unsigned int flags,
	struct dtel_socket_info **ret_list, int *ret_errors)
{
	struct dtel_socket_info *all = NULL, *found, *grown;
	int n = 0;

	if (dirs == NULL || ret_list == NULL || ret_errors == NULL || ndirs < 0 ||
		ndirs > DTEL_RUNTIME_DIRS_MAX)
		return -EINVAL;
	for (int k = 0; k < ndirs; k++) {
		int m;

		found = NULL;
		m = dtel_discover(dirs[k], flags, &found);
		ret_errors[k] = m < 0 ? m : 0;
		if (m <= 0 || found == NULL) /* the list is NULL when the count is 0 */
			continue;
		grown = realloc(all, (size_t)(n + m) * sizeof(*all));
		if (grown == NULL) {
			dtel_discover_free(found);
			free(all);
			return -ENOMEM;
		}
		memcpy(grown + n, found, (size_t)m * sizeof(*found));
		dtel_discover_free(found);
		all = grown;
		n += m;
	}
	*ret_list = all;
	return n;
}

void
dtel_discover_free(struct dtel_socket_info *list)
{
	free(list);
}
