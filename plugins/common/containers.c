/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Telemetry sockets inside containers (containers.h). A containerized DPDK application keeps
 * its runtime dir in its own mount namespace (often a tmpfs the host never sees), but the
 * kernel lets a process with the right to trace it (root, CAP_SYS_PTRACE) into its file
 * system through /proc/<pid>/root (proc(5)), and a Unix socket is reached by its path from
 * any namespace. The scan: one readlink() of /proc/<pid>/ns/mnt per process to group them by
 * mount namespace (ours left out: its dirs are discovery's own), then per other namespace
 * its runtime dirs, through its lowest pid. The instance reaches the socket through a
 * symbolic link of ours (ContainerLinkDir/<name>) rather than /proc/<pid>/root/...: the link
 * keeps its path when the container restarts under another pid, so the instance, its
 * counters and its restart detection follow the container (the socket file behind the link
 * is new: a new generation, telemetry/owner.c).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "containers.h"

#define LINK_HOPS 16 /* symbolic links followed while resolving a dir in a container */
#define NAME_MAX_LEN 63 /* of a link name: an instance name (DTP_NAME_MAX - 1) */

/* FNV-1a, 32 bits: the suffix of a name cut to fit or made unique (stable: same input). */
static uint32_t
fnv1a(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* The scan --------------------------------------------------------------------------------- */

/* A mount namespace other than ours, by the lowest pid in it. */
struct ns_pid {
	uint64_t ns;
	long pid;
};

/* A socket found in one. */
struct found {
	long pid; /* of its namespace */
	uint64_t ns;
	uint64_t dev, ino;
	unsigned int index;
	char prefix[NAME_MAX + 1];
	char target[512]; /* /proc/<pid>/root/<dir>/<prefix>/<socket> */
	char name[NAME_MAX_LEN + 1];
};

struct scan {
	const struct dtp_container_where *w;
	struct dtp_container_scan *sc;
	uint64_t (*host)[2]; /* dev, ino of the host's sockets */
	int nhost;
	struct found *v;
	size_t n;
};

static uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The mount namespace of @pid ("self" too): the inode in "mnt:[4026531840]". 0 or -errno. */
static int
mnt_ns(const char *proc, const char *pid, uint64_t *ret)
{
	char path[PATH_MAX], buf[64], *end;
	ssize_t n;

	if (snprintf(path, sizeof(path), "%s/%s/ns/mnt", proc, pid) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	n = readlink(path, buf, sizeof(buf) - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	if (strncmp(buf, "mnt:[", 5) != 0)
		return -EINVAL;
	errno = 0;
	*ret = strtoull(buf + 5, &end, 10);
	return errno != 0 || *end != ']' ? -EINVAL : 0;
}

static void
denied(struct dtp_container_scan *sc, long pid)
{
	if (sc->denied++ == 0)
		sc->denied_pid = pid;
}

static int
cmp_ns_pid(const void *a, const void *b)
{
	const struct ns_pid *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns < y->ns ? -1 : 1;
	return (x->pid > y->pid) - (x->pid < y->pid);
}

/* Every mount namespace but @own, each with its lowest pid, into *ret (sorted by pid). */
static int
list_namespaces(const char *proc, uint64_t own, size_t max, struct dtp_container_scan *sc,
	struct ns_pid **ret, size_t *ret_n)
{
	struct ns_pid *v = NULL, *grown;
	size_t n = 0, cap = 0, u = 0;
	struct dirent *de;
	DIR *d = opendir(proc);

	if (d == NULL)
		return -errno;
	while ((de = readdir(d)) != NULL) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		uint64_t ns = 0;
		int r;

		if (pid <= 0 || *end != '\0')
			continue;
		sc->processes++;
		r = mnt_ns(proc, de->d_name, &ns);
		if (r == -EACCES || r == -EPERM)
			denied(sc, pid);
		else if (r < 0)
			sc->vanished++; /* exited since readdir() listed it */
		if (r < 0 || ns == own)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			grown = realloc(v, cap * sizeof(*v));
			if (grown == NULL) {
				closedir(d);
				free(v);
				return -ENOMEM;
			}
			v = grown;
		}
		v[n++] = (struct ns_pid){ns, pid};
	}
	closedir(d);
	if (n > 0)
		qsort(v, n, sizeof(*v), cmp_ns_pid);
	for (size_t i = 0; i < n; i++)
		if (i == 0 || v[i].ns != v[i - 1].ns)
			v[u++] = v[i];
	sc->namespaces = (unsigned int)u;
	if (u > max) {
		sc->over += (unsigned int)(u - max);
		u = max;
	}
	*ret = v;
	*ret_n = u;
	return 0;
}

/* Take the first component of @rest (a path) into @comp; false when there is none. */
static bool
next_component(char *rest, char *comp, size_t size)
{
	char *p = rest;
	size_t n;

	while (*p == '/')
		p++;
	n = strcspn(p, "/");
	if (n == 0 || n >= size)
		return false;
	memcpy(comp, p, n);
	comp[n] = '\0';
	memmove(rest, p + n, strlen(p + n) + 1);
	return true;
}

/*
 * @dir as the process whose root is @root ("/proc/<pid>/root") sees it, into @out (the root
 * and the path within it): a symbolic link's absolute target is taken inside @root, not in
 * ours (the kernel would resolve "/run" of /var/run -> /run against collectd's root), and ".."
 * never leaves it. 0, -ELOOP, -ENAMETOOLONG or readlink()'s error.
 */
static int
resolve_in(const char *root, const char *dir, char *out, size_t size)
{
	char rest[PATH_MAX], cur[PATH_MAX] = "", probe[PATH_MAX], target[PATH_MAX];
	char comp[NAME_MAX + 1];
	struct stat st;
	int hops = 0;

	if (snprintf(rest, sizeof(rest), "%s", dir) >= (int)sizeof(rest))
		return -ENAMETOOLONG;
	while (next_component(rest, comp, sizeof(comp))) {
		ssize_t t;

		if (strcmp(comp, ".") == 0)
			continue;
		if (strcmp(comp, "..") == 0) {
			char *s = strrchr(cur, '/');

			if (s != NULL)
				*s = '\0';
			continue;
		}
		if (snprintf(probe, sizeof(probe), "%s%s/%s", root, cur, comp) >=
			(int)sizeof(probe))
			return -ENAMETOOLONG;
		if (lstat(probe, &st) != 0 || !S_ISLNK(st.st_mode)) {
			size_t len = strlen(cur);

			if (snprintf(cur + len, sizeof(cur) - len, "/%s", comp) >=
				(int)(sizeof(cur) - len))
				return -ENAMETOOLONG;
			continue;
		}
		if (++hops > LINK_HOPS)
			return -ELOOP;
		t = readlink(probe, target, sizeof(target) - 1);
		if (t < 0)
			return -errno;
		target[t] = '\0';
		if (target[0] == '/')
			cur[0] = '\0';
		/* The link's target, then what was left after it. */
		if (snprintf(probe, sizeof(probe), "%s/%s", target, rest) >= (int)sizeof(probe))
			return -ENAMETOOLONG;
		memcpy(rest, probe, strlen(probe) + 1);
	}
	return snprintf(out, size, "%s%s", root, cur) >= (int)size ? -ENAMETOOLONG : 0;
}

/* "dpdk_telemetry.v2" -> 0, "dpdk_telemetry.v2:N" -> N (1..65535), else -1 (as path.c). */
static long
socket_index(const char *name)
{
	static const char base[] = "dpdk_telemetry.v2";
	char *end;
	long v;

	if (strncmp(name, base, sizeof(base) - 1) != 0)
		return -1;
	name += sizeof(base) - 1;
	if (*name == '\0')
		return 0;
	if (name[0] != ':' || name[1] < '1' || name[1] > '9')
		return -1;
	errno = 0;
	v = strtol(name + 1, &end, 10);
	return errno != 0 || *end != '\0' || v > 65535 ? -1 : v;
}

/* Whether a socket file (@dev, @ino) is the host's or already found. */
static bool
known(const struct scan *s, uint64_t dev, uint64_t ino)
{
	for (int i = 0; i < s->nhost; i++)
		if (s->host[i][0] == dev && s->host[i][1] == ino)
			return true;
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].dev == dev && s->v[i].ino == ino)
			return true;
	return false;
}

/* The sockets of one prefix directory @pdir of namespace @np. */
static int
scan_prefix(struct scan *s, const struct ns_pid *np, const char *pdir, const char *prefix)
{
	struct dirent *de;
	struct found *f;
	DIR *d = opendir(pdir);
	int ret = 0;

	if (d == NULL)
		return 0; /* not a directory, or gone meanwhile */
	while (ret == 0 && (de = readdir(d)) != NULL) {
		long index = socket_index(de->d_name);
		char path[PATH_MAX];
		struct stat st;

		if (index < 0 ||
			snprintf(path, sizeof(path), "%s/%s", pdir, de->d_name) >=
				(int)sizeof(f->target))
			continue;
		if (stat(path, &st) != 0)
			continue;
		if (!S_ISSOCK(st.st_mode)) {
			s->sc->not_sockets++;
			continue;
		}
		if (known(s, (uint64_t)st.st_dev, (uint64_t)st.st_ino))
			continue;
		if (s->n == DTP_CONTAINER_SOCKETS_MAX) {
			s->sc->over++;
			continue;
		}
		if (s->n % 16 == 0) {
			f = realloc(s->v, (s->n + 16) * sizeof(*f));
			if (f == NULL) {
				ret = -ENOMEM;
				break;
			}
			s->v = f;
		}
		f = &s->v[s->n++];
		memset(f, 0, sizeof(*f));
		*f = (struct found){.pid = np->pid,
			.ns = np->ns,
			.dev = (uint64_t)st.st_dev,
			.ino = (uint64_t)st.st_ino,
			.index = (unsigned int)index};
		snprintf(f->prefix, sizeof(f->prefix), "%s", prefix);
		memcpy(f->target, path, strlen(path) + 1); /* checked to fit above */
	}
	closedir(d);
	return ret;
}

/* The runtime dir @dir of namespace @np. */
static int
scan_dir(struct scan *s, const struct ns_pid *np, const char *root, const char *dir)
{
	char rdir[PATH_MAX], pdir[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int ret = 0;

	if (resolve_in(root, dir, rdir, sizeof(rdir)) < 0)
		return 0;
	d = opendir(rdir);
	if (d == NULL) {
		if (errno == EACCES || errno == EPERM)
			denied(s->sc, np->pid);
		return 0;
	}
	while (ret == 0 && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' ||
			snprintf(pdir, sizeof(pdir), "%s/%s", rdir, de->d_name) >=
				(int)sizeof(pdir))
			continue;
		ret = scan_prefix(s, np, pdir, de->d_name);
	}
	closedir(d);
	return ret;
}

/* Every runtime dir of namespace @np, and /var/run/dpdk (root's default in any container). */
static int
scan_ns(struct scan *s, const struct ns_pid *np)
{
	char root[PATH_MAX];
	struct stat st;
	bool var_run = false;
	int ret = 0;

	snprintf(root, sizeof(root), "%s/%ld/root", s->w->proc, np->pid);
	if (stat(root, &st) != 0) {
		if (errno == EACCES || errno == EPERM)
			denied(s->sc, np->pid);
		else
			s->sc->vanished++;
		return 0;
	}
	for (int k = 0; ret == 0 && k < s->w->ndirs; k++) {
		var_run |= strcmp(s->w->dirs[k], "/var/run/dpdk") == 0;
		ret = scan_dir(s, np, root, s->w->dirs[k]);
	}
	return ret == 0 && !var_run ? scan_dir(s, np, root, "/var/run/dpdk") : ret;
}

/* Naming and links --------------------------------------------------------------------------- */

/* The cgroup file of @pid into @buf ("" when it cannot be read). */
static void
read_cgroup(const char *proc, long pid, char *buf, size_t size)
{
	char path[PATH_MAX];
	size_t n = 0;
	FILE *f;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "%s/%ld/cgroup", proc, pid);
	f = fopen(path, "re");
	if (f == NULL)
		return;
	n = fread(buf, 1, size - 1, f);
	buf[n] = '\0';
	fclose(f);
}

/* @name cut to fit NAME_MAX_LEN with "_" and 8 hex digits of @hash_of (stable). */
static void
fit_name(char *name, const char *hash_of, bool always)
{
	char h[10];

	if (!always && strlen(name) <= NAME_MAX_LEN)
		return;
	snprintf(h, sizeof(h), "_%08x", fnv1a(hash_of));
	snprintf(name + NAME_MAX_LEN - 9, 10, "%s", h);
}

static bool
name_taken(const struct scan *s, size_t upto, const char *name)
{
	for (size_t i = 0; i < upto; i++)
		if (strcmp(s->v[i].name, name) == 0)
			return true;
	return false;
}

static int
cmp_found(const void *a, const void *b)
{
	const struct found *x = a, *y = b;
	int c;

	if (x->pid != y->pid)
		return (x->pid > y->pid) - (x->pid < y->pid);
	c = strcmp(x->prefix, y->prefix);
	return c != 0 ? c : (x->index > y->index) - (x->index < y->index);
}

/* Name every socket found: "<container>_<prefix>[_<N>]" (containers.h). In pid order, so that
 * both plugins (each scans) give the same names. */
static void
name_all(struct scan *s)
{
	char cgroup[4096] = "", key[DTP_CONTAINER_KEY_MAX], plain[2 * PATH_MAX];
	long cg_pid = 0;

	if (s->n > 1)
		qsort(s->v, s->n, sizeof(*s->v), cmp_found);
	for (size_t i = 0; i < s->n; i++) {
		struct found *f = &s->v[i];
		char idx[16] = "";

		if (f->pid != cg_pid) {
			read_cgroup(s->w->proc, f->pid, cgroup, sizeof(cgroup));
			dtp_container_name(cgroup, key, sizeof(key));
			/* The root cgroup names nothing: the namespace does, while it lasts. */
			if (key[0] == '\0')
				snprintf(key, sizeof(key), "mnt%llu", (unsigned long long)f->ns);
			cg_pid = f->pid;
		}
		if (f->index > 0)
			snprintf(idx, sizeof(idx), "_%u", f->index);
		snprintf(plain, sizeof(plain), "%s_%s%s", key, f->prefix, idx);
		dtp_sanitize_name(plain);
		snprintf(f->name, sizeof(f->name), "%.*s", NAME_MAX_LEN, plain);
		fit_name(f->name, plain, strlen(plain) > NAME_MAX_LEN);
		/* Two of one name (two containers of a pod with the same prefix): the later one
		 * by a hash of its cgroup, then of its target. */
		if (name_taken(s, i, f->name)) {
			snprintf(plain, sizeof(plain), "%s%s%s", cgroup, f->prefix, idx);
			fit_name(f->name, plain, true);
		}
		for (unsigned int salt = 0; name_taken(s, i, f->name) && salt < 1000; salt++) {
			snprintf(plain, sizeof(plain), "%s%u", f->target, salt);
			fit_name(f->name, plain, true);
		}
	}
}

/* @dir made when missing (0700), and ours alone: a link another user could plant or move
 * would send collectd to any socket. 0 or -errno (-EPERM: not ours alone). */
static int
own_dir(const char *dir)
{
	char p[PATH_MAX];
	struct stat st;

	if (dir[0] != '/' || snprintf(p, sizeof(p), "%s", dir) >= (int)sizeof(p))
		return -EINVAL;
	for (char *c = p + 1; *c != '\0'; c++) {
		if (*c != '/')
			continue;
		*c = '\0';
		if (mkdir(p, 0755) != 0 && errno != EEXIST)
			return -errno;
		*c = '/';
	}
	if (mkdir(p, 0700) != 0 && errno != EEXIST)
		return -errno;
	if (lstat(p, &st) != 0)
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022) != 0)
		return -EPERM;
	return 0;
}

/* Links of @dir whose target is gone (the container stopped): removed. */
static void
sweep_links(const char *dir, struct dtp_container_scan *sc)
{
	char path[PATH_MAX];
	struct dirent *de;
	struct stat st;
	DIR *d = opendir(dir);

	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' ||
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >= (int)sizeof(path))
			continue;
		if (lstat(path, &st) != 0 || !S_ISLNK(st.st_mode))
			continue;
		if (stat(path, &st) != 0 &&
			(errno == ENOENT || errno == ENOTDIR || errno == ESRCH) &&
			unlink(path) == 0)
			sc->links_removed++;
	}
	closedir(d);
}

/* @dir/@name -> @target, unless it is so already; replaced in one rename(). */
static int
put_link(const char *dir, const char *name, const char *target, struct dtp_container_scan *sc)
{
	char link[PATH_MAX], tmp[PATH_MAX], was[PATH_MAX];
	ssize_t n;

	if (snprintf(link, sizeof(link), "%s/%s", dir, name) >= DTEL_PATH_MAX ||
		snprintf(tmp, sizeof(tmp), "%s/.%s.%ld", dir, name, (long)getpid()) >=
			(int)sizeof(tmp))
		return -ENAMETOOLONG;
	n = readlink(link, was, sizeof(was) - 1);
	if (n >= 0 && (size_t)n == strlen(target) && memcmp(was, target, (size_t)n) == 0)
		return 0;
	unlink(tmp);
	if (symlink(target, tmp) != 0)
		return -errno;
	if (rename(tmp, link) != 0) {
		int err = -errno;

		unlink(tmp);
		return err;
	}
	sc->links_made++;
	return 0;
}

/* The host's sockets by file, so that one a container shares with it is not found twice. */
static int
host_files(struct scan *s, const struct dtel_socket_info *host, int nhost)
{
	struct stat st;

	s->host = nhost > 0 ? calloc((size_t)nhost, sizeof(*s->host)) : NULL;
	if (nhost > 0 && s->host == NULL)
		return -ENOMEM;
	for (int i = 0; i < nhost; i++)
		if (stat(host[i].path, &st) == 0 && S_ISSOCK(st.st_mode)) {
			s->host[s->nhost][0] = (uint64_t)st.st_dev;
			s->host[s->nhost++][1] = (uint64_t)st.st_ino;
		}
	return 0;
}

/* The list for the caller, links made: their number or -errno. */
static int
publish(struct scan *s, struct dtel_socket_info **ret_list)
{
	struct dtel_socket_info *l = s->n ? calloc(s->n, sizeof(*l)) : NULL;
	int n = 0;

	if (s->n > 0 && l == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < s->n; i++) {
		struct dtel_socket_info *si = &l[n];

		if (put_link(s->w->link_dir, s->v[i].name, s->v[i].target, s->sc) < 0)
			continue; /* found again at the next pass */
		snprintf(si->prefix, sizeof(si->prefix), "%s", s->v[i].name);
		snprintf(si->path, sizeof(si->path), "%s/%s", s->w->link_dir, s->v[i].name);
		si->state = DTEL_SOCKET_UNPROBED;
		n++;
	}
	*ret_list = n > 0 ? l : NULL;
	if (n == 0)
		free(l);
	return n;
}

int
dtp_containers_scan(const struct dtp_container_where *w, const struct dtel_socket_info *host,
	int nhost, struct dtel_socket_info **ret_list, struct dtp_container_scan *ret_scan)
{
	struct scan s = {.w = w, .sc = ret_scan};
	struct ns_pid *ns = NULL;
	uint64_t start = mono_ns(), own = 0;
	size_t nns = 0;
	int ret;

	memset(ret_scan, 0, sizeof(*ret_scan));
	*ret_list = NULL;
	ret = own_dir(w->link_dir);
	if (ret == 0)
		ret = mnt_ns(w->proc, "self", &own);
	if (ret == 0)
		ret = host_files(&s, host, nhost);
	if (ret == 0)
		ret = list_namespaces(w->proc, own, w->ns_max ? w->ns_max : DTP_CONTAINER_NS_MAX,
			ret_scan, &ns, &nns);
	for (size_t i = 0; ret == 0 && i < nns; i++)
		ret = scan_ns(&s, &ns[i]);
	if (ret == 0) {
		sweep_links(w->link_dir, ret_scan);
		name_all(&s);
		ret = publish(&s, ret_list);
	}
	free(ns);
	free(s.host);
	free(s.v);
	ret_scan->ns_ns = mono_ns() - start;
	return ret;
}
