/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The instances of one plugin, configured and discovered: which sockets it knows, the
 * unique name each one gets, discovery passes over the runtime dir, and the retirement of
 * discovered instances whose application is gone for good (docs/dpdktel_stats.md,
 * "Discovery"). Both plugins keep their list here, so they name and retire alike.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dtp.h"

/* The member of @inst, or NULL. Under the lock. */
static struct dtp_member *
member(struct dtp_instances *l, const void *inst)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].inst == inst)
			return &l->v[i];
	return NULL;
}

/* The member named @name, or NULL. Under the lock. */
static struct dtp_member *
named(struct dtp_instances *l, const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i].name, name) == 0)
			return &l->v[i];
	return NULL;
}

static struct dtp_member *
at_path(struct dtp_instances *l, const char *path)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i].path, path) == 0)
			return &l->v[i];
	return NULL;
}

int
dtp_instances_add(struct dtp_instances *l, void *inst, const struct dtp_target *t, bool discovered)
{
	struct dtp_member *v;
	int ret = 0;

	pthread_mutex_lock(&l->lock);
	if (named(l, t->name) != NULL) {
		ret = -EEXIST;
		goto out;
	}
	v = realloc(l->v, (l->n + 1) * sizeof(*v));
	if (v == NULL) {
		ret = -ENOMEM;
		goto out;
	}
	l->v = v;
	v = &l->v[l->n++];
	memset(v, 0, sizeof(*v));
	v->inst = inst;
	snprintf(v->name, sizeof(v->name), "%s", t->name);
	snprintf(v->path, sizeof(v->path), "%s", t->path);
	v->sh = t->sh;
	v->discovered = discovered;
out:
	pthread_mutex_unlock(&l->lock);
	return ret;
}

void
dtp_instances_remove(struct dtp_instances *l, const void *inst)
{
	struct dtp_member *m;

	pthread_mutex_lock(&l->lock);
	m = member(l, inst);
	if (m != NULL)
		*m = l->v[--l->n];
	if (l->n == 0) {
		free(l->v);
		l->v = NULL;
	}
	pthread_mutex_unlock(&l->lock);
}

bool
dtp_instances_known(struct dtp_instances *l, const char *path)
{
	bool found;

	pthread_mutex_lock(&l->lock);
	found = at_path(l, path) != NULL;
	pthread_mutex_unlock(&l->lock);
	return found;
}

size_t
dtp_instances_count(struct dtp_instances *l)
{
	size_t n;

	pthread_mutex_lock(&l->lock);
	n = l->n;
	pthread_mutex_unlock(&l->lock);
	return n;
}

size_t
dtp_instances_take(struct dtp_instances *l, bool all, void ***ret_list)
{
	size_t n = 0;

	pthread_mutex_lock(&l->lock);
	*ret_list = l->n ? malloc(l->n * sizeof(void *)) : NULL;
	for (size_t i = 0; *ret_list != NULL && i < l->n; i++)
		(*ret_list)[n++] = l->v[i].inst;
	if (all) {
		free(l->v);
		l->v = NULL;
		l->n = 0;
	}
	pthread_mutex_unlock(&l->lock);
	return n;
}

/* FNV-1a, 32 bits: the same path always gives the same suffix. */
static uint32_t
fnv1a(const char *s, unsigned int salt)
{
	uint32_t h = 2166136261u;

	for (; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	for (; salt != 0; salt >>= 8)
		h = (h ^ (salt & 0xff)) * 16777619u;
	return h;
}

void
dtp_hashed_name(const char *name, const char *path, unsigned int salt, char *buf, size_t size)
{
	/* "_" and 8 hex digits after at most size - 10 characters of the name. */
	int keep = size > 10 ? (int)(size - 10) : 0;

	snprintf(buf, size, "%.*s_%08x", keep, name, fnv1a(path, salt));
}

/*
 * The name of a newly found socket: the plain one (dtp_discovered_name) unless it was cut
 * or another instance has it; then dtp_hashed_name(), with a salt while that is taken too.
 * Under the lock. *ret_why says why it is not the plain name ("" when it is).
 */
static void
unique_name(struct dtp_instances *l, const struct dtel_socket_info *si, const char *app, char *buf,
	size_t size, char *why, size_t why_size)
{
	char plain[DTEL_PATH_MAX + 48];
	const struct dtp_member *other;

	why[0] = '\0';
	dtp_discovered_name(si, app, plain, sizeof(plain));
	if (strlen(plain) >= size) {
		snprintf(why, why_size, "is longer than %zu characters", size - 1);
	} else if ((other = named(l, plain)) != NULL) {
		snprintf(why, why_size, "is already the name of %s %s",
			other->discovered ? "the application at" : "the <Instance> block for",
			other->path);
	} else {
		snprintf(buf, size, "%s", plain);
		return;
	}
	for (unsigned int salt = 0;; salt++) {
		dtp_hashed_name(plain, si->path, salt, buf, size);
		if (named(l, buf) == NULL)
			return;
	}
}

/* The identity of the socket file at @path; false when there is none. */
static bool
file_id(const char *path, uint64_t *ino, uint64_t *mtime_ns)
{
	struct stat st;

	if (stat(path, &st) != 0)
		return false;
	*ino = (uint64_t)st.st_ino;
	*mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec;
	return true;
}

/* Whether @path is the stale socket file an instance was retired for (still the same file). */
static bool
entombed(struct dtp_instances *l, const char *path)
{
	uint64_t ino, mt;

	for (size_t i = 0; i < l->ntombs; i++) {
		if (strcmp(l->tombs[i].path, path) != 0)
			continue;
		if (file_id(path, &ino, &mt) && ino == l->tombs[i].ino &&
			mt == l->tombs[i].mtime_ns)
			return true;
		l->tombs[i] = l->tombs[--l->ntombs]; /* another file now: discover it */
		return false;
	}
	return false;
}

/* Remember a retired instance's socket file while it stays there (a stale socket). */
static void
entomb(struct dtp_instances *l, const char *path)
{
	struct dtp_tomb *v, t = {0};

	if (!file_id(path, &t.ino, &t.mtime_ns))
		return;
	v = realloc(l->tombs, (l->ntombs + 1) * sizeof(*v));
	if (v == NULL)
		return; /* it is discovered again, then retired again */
	snprintf(t.path, sizeof(t.path), "%s", path);
	l->tombs = v;
	l->tombs[l->ntombs++] = t;
}

/* Drop the tombstones of files that are gone. */
static void
sweep_tombs(struct dtp_instances *l, const struct dtel_socket_info *list, int n)
{
	for (size_t i = 0; i < l->ntombs;) {
		bool listed = false;

		for (int k = 0; k < n && !listed; k++)
			listed = strcmp(list[k].path, l->tombs[i].path) == 0;
		if (listed)
			i++;
		else
			l->tombs[i] = l->tombs[--l->ntombs];
	}
}

void
dtp_instances_forget(struct dtp_instances *l)
{
	free(l->tombs);
	l->tombs = NULL;
	l->ntombs = 0;
}

/* Whether a discovered member's application is gone: its socket is not there, or refuses
 * connections (a stale socket: nothing behind it). Under the lock. */
static bool
vanished(const struct dtp_member *m, const struct dtel_socket_info *list, int n)
{
	struct dtel_shared_status st;
	bool listed = false;

	for (int k = 0; k < n && !listed; k++)
		listed = strcmp(list[k].path, m->path) == 0;
	if (!listed)
		return true;
	dtel_shared_status(m->sh, &st);
	return !st.connected && (st.last_error == -ECONNREFUSED || st.last_error == -ENOENT);
}

/* Retire what has been gone for retire_after_ms; the list of what to retire into *ret. */
static size_t
find_retired(struct dtp_instances *l, const struct dtel_socket_info *list, int n,
	uint64_t retire_after_ms, uint64_t now_ms, struct dtp_member **ret)
{
	size_t nret = 0;

	pthread_mutex_lock(&l->lock);
	*ret = l->n ? malloc(l->n * sizeof(**ret)) : NULL;
	for (size_t i = 0; i < l->n; i++) {
		struct dtp_member *m = &l->v[i];

		if (!m->discovered || m->retiring)
			continue;
		if (!vanished(m, list, n)) {
			m->missing_ms = 0;
			continue;
		}
		if (m->missing_ms == 0)
			m->missing_ms = now_ms ? now_ms : 1;
		if (now_ms - m->missing_ms < retire_after_ms || *ret == NULL)
			continue;
		m->retiring = true;
		(*ret)[nret++] = *m;
	}
	pthread_mutex_unlock(&l->lock);
	return nret;
}

/* Whether the plain name of @si is its prefix as it is. */
static bool
plain_first(const struct dtel_socket_info *si)
{
	return si->index == 0 && !dtp_name_ambiguous(si->prefix);
}

/* A container's socket (a link of DiscoverContainers) says where it is, once at its start. */
static void
note_container(struct dtp_instances *l, const char *name, const char *path)
{
	char target[PATH_MAX];
	ssize_t n = readlink(path, target, sizeof(target) - 1);

	if (n < 0)
		return;
	target[n] = '\0';
	DTP_LOG(LOG_INFO, l->plugin,
		"DPDK application '%s' runs in a container: its socket %s is reached through %s",
		name, target, path);
}

/* Start an instance for @si unless one has its path (or it is a retired stale file). */
static void
discover_one(struct dtp_instances *l, const struct dtel_socket_info *si)
{
	char name[DTP_NAME_MAX], why[DTEL_PATH_MAX + 64], app[32] = "";
	bool skip;

	if (si->error == -ENAMETOOLONG || entombed(l, si->path))
		return;
	pthread_mutex_lock(&l->lock);
	skip = at_path(l, si->path) != NULL;
	pthread_mutex_unlock(&l->lock);
	if (skip)
		return;
	/* Only this pass adds instances (one collectd callback at a time): the socket is
	 * still not collected after the probe, which must not run under the lock. */
	/* Busy (a full backlog while it starts): its name can wait for the next pass. */
	if (si->index > 0 && dtp_socket_app(si->path, app, sizeof(app)) == -ETIMEDOUT)
		return;
	pthread_mutex_lock(&l->lock);
	unique_name(l, si, app, name, sizeof(name), why, sizeof(why));
	pthread_mutex_unlock(&l->lock);
	if (why[0] != '\0')
		DTP_LOG(LOG_INFO, l->plugin,
			"the DPDK application at %s is named '%s': the name its file prefix gives "
			"%s",
			si->path, name, why);
	if (l->start(name, si->path) != 0)
		return;
	note_container(l, name, si->path);
	if (app[0] == '\0')
		return;
	pthread_mutex_lock(&l->lock);
	struct dtp_member *m = at_path(l, si->path);
	if (m != NULL)
		snprintf(m->app, sizeof(m->app), "%s", app);
	pthread_mutex_unlock(&l->lock);
}

/*
 * Another program now listens at the dpdk_telemetry.v2:N socket of a discovered instance
 * named after the program that was there (applications sharing a prefix restarted in
 * another order): retire it, so that the next pass names the socket after its program.
 * Costs each such socket one connection per pass.
 */
static void
retire_reassigned(struct dtp_instances *l)
{
	struct dtp_member copy;
	char app[32];

	for (size_t i = 0;; i++) {
		bool found;

		/* The list may change while the probe runs unlocked: re-found by path below. */
		pthread_mutex_lock(&l->lock);
		while (i < l->n &&
			!(l->v[i].discovered && !l->v[i].retiring && l->v[i].app[0] != '\0'))
			i++;
		found = i < l->n;
		if (found)
			copy = l->v[i];
		pthread_mutex_unlock(&l->lock);
		if (!found)
			return;
		dtp_socket_app(copy.path, app, sizeof(app));
		if (app[0] == '\0' || strcmp(app, copy.app) == 0)
			continue;
		pthread_mutex_lock(&l->lock);
		struct dtp_member *m = at_path(l, copy.path);
		bool take = m != NULL && m->inst == copy.inst && !m->retiring;
		if (take)
			m->retiring = true;
		pthread_mutex_unlock(&l->lock);
		if (!take)
			continue;
		DTP_LOG(LOG_INFO, l->plugin,
			"DPDK application '%s' (%s): %s now listens there instead of %s: retired, "
			"found again under the name of %s",
			copy.name, copy.path, app, copy.app, app);
		l->retire(copy.inst);
	}
}

/* Say once that runtime dir @k cannot be read (@err), or that it can again. A missing dir
 * is said only when the user named it: without it no application runs there. */
static void
dir_state(struct dtp_instances *l, const struct dtp_conf *c, int k, int err)
{
	const char *dir = c->runtime_dirs[k];

	if (err == 0 || (err == -ENOENT && c->runtime_dirs_default))
		c_release(LOG_INFO, &l->dir_complaint[k], "%s plugin: reading %s again", l->plugin,
			dir);
	else
		c_complain_once(LOG_WARNING, &l->dir_complaint[k],
			"%s plugin: cannot read the DPDK runtime dir %s: %s", l->plugin, dir,
			dtel_strerror(err));
}

/* Whether @path is a link of ContainerLinkDir (a container's socket). */
static bool
in_link_dir(const struct dtp_conf *c, const char *path)
{
	size_t n = strlen(c->container_link_dir);

	return strncmp(path, c->container_link_dir, n) == 0 && path[n] == '/';
}

/* The sockets discovery must not find again in a container: those found on the host, and
 * those of the instances (a configured one may reach a container's socket by a host path). */
static struct dtel_socket_info *
known_sockets(struct dtp_instances *l, const struct dtp_conf *c,
	const struct dtel_socket_info *list, int n, int *ret_n)
{
	struct dtel_socket_info *v;
	int k = n;

	pthread_mutex_lock(&l->lock);
	v = calloc((size_t)n + l->n + 1, sizeof(*v));
	for (size_t i = 0; v != NULL && i < l->n; i++)
		if (!in_link_dir(c, l->v[i].path))
			snprintf(v[k++].path, sizeof(v[0].path), "%s", l->v[i].path);
	pthread_mutex_unlock(&l->lock);
	if (v != NULL && n > 0)
		memcpy(v, list, (size_t)n * sizeof(*v));
	*ret_n = k;
	return v;
}

/* What a container scan met, said once while it lasts. */
static void
scan_state(struct dtp_instances *l, const struct dtp_conf *c, int ret,
	const struct dtp_container_scan *sc)
{
	if (ret < 0)
		c_complain_once(LOG_WARNING, &l->scan_complaint,
			"%s plugin: DiscoverContainers: cannot look into containers: %s%s",
			l->plugin, dtel_strerror(ret),
			ret == -EPERM ? ": ContainerLinkDir must be a directory owned by "
					"collectd's user that no one else may write to"
				      : "");
	else
		c_release(LOG_INFO, &l->scan_complaint,
			"%s plugin: DiscoverContainers: looking into containers again", l->plugin);
	if (ret == 0 && sc->denied > 0)
		c_complain_once(LOG_WARNING, &l->denied_complaint,
			"%s plugin: DiscoverContainers: cannot look into the mount namespace of %u "
			"processes (the first: pid %ld): permission denied: collectd needs root, "
			"or "
			"CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH (docs/deployment.md)",
			l->plugin, sc->denied, sc->denied_pid);
	else if (ret == 0)
		c_release(LOG_INFO, &l->denied_complaint,
			"%s plugin: DiscoverContainers: every mount namespace can be looked into",
			l->plugin);
	if (ret == 0 && sc->over > 0)
		c_complain_once(LOG_WARNING, &l->over_complaint,
			"%s plugin: DiscoverContainers: %u mount namespaces and %u sockets at most "
			"per pass: %u left out (of %u namespaces among %u processes)",
			l->plugin, DTP_CONTAINER_NS_MAX, DTP_CONTAINER_SOCKETS_MAX, sc->over,
			sc->namespaces, sc->processes);
	else if (ret == 0)
		c_release(LOG_INFO, &l->over_complaint,
			"%s plugin: DiscoverContainers: within its limits again", l->plugin);
}

/* Add the sockets of containers to *list (n of them): the new count, or -errno (a scan that
 * failed: the caller retires nothing, a container's instance may still run). */
static int
add_containers(
	struct dtp_instances *l, const struct dtp_conf *c, struct dtel_socket_info **list, int n)
{
	const struct dtp_container_where w = {.proc = "/proc",
		.link_dir = c->container_link_dir,
		.dirs = (const char(*)[DTEL_PATH_MAX])c->runtime_dirs,
		.ndirs = c->nruntime_dirs};
	struct dtel_socket_info *known, *found = NULL, *all;
	struct dtp_container_scan sc;
	int nknown, m;

	known = known_sockets(l, c, *list, n, &nknown);
	if (known == NULL)
		return -ENOMEM;
	m = dtp_containers_scan(&w, known, nknown, &found, &sc);
	free(known);
	scan_state(l, c, m < 0 ? m : 0, &sc);
	if (m <= 0)
		return m < 0 ? m : n;
	all = realloc(*list, (size_t)(n + m) * sizeof(*all));
	if (all == NULL) {
		free(found);
		return -ENOMEM;
	}
	memcpy(all + n, found, (size_t)m * sizeof(*all));
	free(found);
	*list = all;
	return n + m;
}

int
dtp_instances_discover(struct dtp_instances *l, const struct dtp_conf *c, uint64_t retire_after_ms,
	uint64_t now_ms)
{
	struct dtel_socket_info *list = NULL;
	struct dtp_member *gone = NULL;
	int errors[DTEL_RUNTIME_DIRS_MAX], n, err = 0;
	size_t ngone;

	n = dtel_discover_dirs(
		(const char(*)[DTEL_PATH_MAX])c->runtime_dirs, c->nruntime_dirs, 0, &list, errors);
	if (n < 0)
		return n;
	for (int k = 0; k < c->nruntime_dirs; k++) {
		dir_state(l, c, k, errors[k]);
		/* A dir we may not read says nothing about the applications in it. */
		if (errors[k] < 0 && errors[k] != -ENOENT && err == 0)
			err = errors[k];
	}
	if (c->discover_containers) {
		int m = add_containers(l, c, &list, n);

		if (m < 0 && err == 0)
			err = m;
		n = m < 0 ? n : m;
	}
	/* Only this pass adds discovered instances, and collectd runs one callback on one
	 * thread at a time: the name stays free between the check and the start. Sockets
	 * whose name is their prefix as it is go first, so that a prefix "a_1" keeps its name
	 * beside an "a/dpdk_telemetry.v2:1" found in the same pass, and "x_port1" beside
	 * "x.port1". */
	for (int phase = 0; phase < 2; phase++)
		for (int i = 0; i < n; i++)
			if (plain_first(&list[i]) == (phase == 0))
				discover_one(l, &list[i]);
	if (l->retire != NULL)
		retire_reassigned(l);
	sweep_tombs(l, list, n);
	/* A dir we could not read may hold applications that still run: retire nothing. */
	if (l->retire != NULL && err == 0) {
		ngone = find_retired(l, list, n, retire_after_ms, now_ms, &gone);
		for (size_t i = 0; i < ngone; i++) {
			bool stale = false;

			for (int k = 0; k < n && !stale; k++)
				stale = strcmp(list[k].path, gone[i].path) == 0;
			DTP_LOG(LOG_INFO, l->plugin,
				"DPDK application '%s' (%s) has been gone for %.0f s, more than "
				"RetireAfter: retired (found again when %s)",
				gone[i].name, gone[i].path,
				(double)(now_ms - gone[i].missing_ms) / 1000.0,
				stale ? "an application binds that socket anew"
				      : "its socket comes back");
			if (stale)
				entomb(l, gone[i].path);
			l->retire(gone[i].inst);
		}
		free(gone);
	}
	free(list); /* the entries hold no pointers: dtel_discover_free() is free() */
	return err < 0 ? err : n;
}
