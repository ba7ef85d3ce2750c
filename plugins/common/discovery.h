/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Part of dtp.h (include that): the instances of a plugin, configured and discovered, the
 * names discovery gives, and discovery passes over the runtime dirs and, with
 * DiscoverContainers, into containers (instances.c, containers.c).
 */
#ifndef DTP_DISCOVERY_H
#define DTP_DISCOVERY_H

#ifndef DTP_H
#error "include dtp.h"
#endif

#include "containers.h"

/**
 * The plain instance name of a discovered socket: its prefix for dpdk_telemetry.v2; for a
 * further application on the prefix (dpdk_telemetry.v2:N) the prefix, '_' and @app, the
 * program name of the application listening there (dtp_socket_app()), so that the name
 * follows the application rather than the order they started in; "_N" when @app is NULL
 * or empty (not known). Every character a configured <Instance> name may not have (other
 * than letters, digits, '_', '-' and '.': a space, a quote, a newline of a file prefix)
 * becomes '_', and a '_' replaces the last '.' of a name that would read as a port or lcore
 * of another instance (dtp_name_ambiguous()). Cut to @size; dtp_instances_discover() makes
 * it unique.
 */
void dtp_discovered_name(
	const struct dtel_socket_info *si, const char *app, char *buf, size_t size);

/**
 * The program name (/proc/<pid>/comm, characters other than letters, digits, '-' and '_'
 * made '_') of the process listening on the socket at @path, into @buf ("" on failure).
 * 0, the error of dtel_probe_pid() (-ECONNREFUSED: nothing listens; -ETIMEDOUT: a full
 * backlog), or -ESRCH when /proc does not tell. Costs the application one connection.
 */
int dtp_socket_app(const char *path, char *buf, size_t size);

/**
 * The name dtp_discovered_name() gives when the plain one cannot be used: the first
 * size - 10 characters of @name, "_" and 8 hex digits of a hash of @path (and @salt, 0 but
 * when that name is taken too). The same path always gives the same name.
 */
void dtp_hashed_name(const char *name, const char *path, unsigned int salt, char *buf, size_t size);

/* Instances ------------------------------------------------------------------------------ */

/** One instance in a plugin's list. */
struct dtp_member {
	void *inst; /* the plugin's instance */
	char name[DTP_NAME_MAX];
	char path[DTEL_PATH_MAX];
	struct dtel_shared *sh; /* the instance's, valid while it is listed */
	bool discovered;
	bool retiring; /* handed to retire(): listed until the instance is freed */
	uint64_t missing_ms; /* discovered: since when its application is gone; 0: it is not */
	char app[32]; /* discovered at dpdk_telemetry.v2:N: the program its name follows */
};

/** A stale socket file whose instance was retired: not discovered again while it is the same
 * file (a new application binds a new one). */
struct dtp_tomb {
	char path[DTEL_PATH_MAX];
	uint64_t ino, mtime_ns;
};

/**
 * The instances of one plugin, configured and discovered, behind one lock. Names are unique:
 * dtp_instances_add() refuses a name that is taken, and discovery gives each new socket a
 * name no other instance has (dtp_instances_discover()).
 */
struct dtp_instances {
	const char *plugin;
	pthread_mutex_t lock;
	struct dtp_member *v;
	size_t n;
	struct dtp_tomb *tombs; /* only discovery passes use them: no lock */
	size_t ntombs;
	c_complain_t dir_complaint[DTEL_RUNTIME_DIRS_MAX]; /* one per dtp_conf.runtime_dirs */
	/* DiscoverContainers: the scan failed; processes it may not look into; over its limits */
	c_complain_t scan_complaint, denied_complaint, over_complaint;
	/** Start an instance for a socket discovery found; it calls dtp_instances_add(). */
	int (*start)(const char *name, const char *path);
	/**
	 * Stop a discovered instance whose application is gone; NULL: never. It is freed now or
	 * later, and calls dtp_instances_remove() then; until that it stays listed (its path
	 * known and its name taken) and retire() is not called for it again.
	 */
	void (*retire)(void *inst);
};

#define DTP_INSTANCES_INIT(plugin_, start_, retire_)                                       \
	{                                                                                  \
		.plugin = (plugin_), .lock = PTHREAD_MUTEX_INITIALIZER, .start = (start_), \
		.retire = (retire_)                                                        \
	}

/** List @inst under the name and path of target @t. 0, -EEXIST (name taken) or -ENOMEM. */
int dtp_instances_add(
	struct dtp_instances *l, void *inst, const struct dtp_target *t, bool discovered);
/** Unlist @inst (before its target is finalized). Accepts one that is not listed. */
void dtp_instances_remove(struct dtp_instances *l, const void *inst);
/** Whether an instance has socket @path. */
bool dtp_instances_known(struct dtp_instances *l, const char *path);
/** Forget the tombstones of retired stale sockets (at shutdown). */
void dtp_instances_forget(struct dtp_instances *l);
/** How many instances are listed. */
size_t dtp_instances_count(struct dtp_instances *l);
/**
 * A malloc'ed copy of the instance pointers into *ret_list (NULL when there are none or no
 * memory); returns their number. With @all the list is emptied too (shutdown).
 */
size_t dtp_instances_take(struct dtp_instances *l, bool all, void ***ret_list);

/**
 * One discovery pass over the runtime dirs of @c (their sockets together: two prefixes "rte"
 * in two dirs get distinct names) and, with DiscoverContainers, over the runtime dirs of
 * other mount namespaces (dtp_containers_scan(): each socket named after its container and
 * reached through a link in ContainerLinkDir; a scan that fails, a process it may not look
 * into, more than it takes: one WARNING each while it lasts, and one INFO when it is over). Each
 * socket no instance has gets start(name, path): the name is dtp_discovered_name(), unless that is
 * longer than DTP_NAME_MAX - 1 or taken by another instance; then dtp_hashed_name(), logged once
 * (INFO) with the reason. With a retire callback, a discovered instance whose socket is gone from
 * @dir or refuses connections (stale: no process behind it) is retire()d once it has been so for
 * @retire_after_ms (monotonic @now_ms), with one INFO line; it comes back as a new instance when
 * its socket does. A dir that cannot be read is logged once (and its return once), a missing dir
 * counts as empty (logged once when the user named it); an error other than a missing dir
 * retires nothing. Returns the number of sockets or -errno.
 */
int dtp_instances_discover(struct dtp_instances *l, const struct dtp_conf *c,
	uint64_t retire_after_ms, uint64_t now_ms);

/**
 * Whether every type in @types is in collectd's types (TypesDB); else one error naming the
 * missing type and @doc, where dpdktel.types.db is explained.
 */
bool dtp_types_defined(const char *plugin, const char *const *types, size_t n, const char *doc);

/**
 * The per-port or per-lcore state of an instance: in an array of *n structs of `size` bytes
 * whose first member is `unsigned int id`, the index of the one with `id` in *ret_i, appended
 * zeroed with that id when missing (*ret_new then true; ret_new may be NULL). Returns the
 * array, moved if it grew, which the caller stores back and owns; NULL without memory, the
 * array then unchanged.
 */
void *dtp_slot(void *arr, size_t *n, size_t size, unsigned int id, size_t *ret_i, bool *ret_new);

/** dtp_slot() on the array `arr` of `n` elements: a pointer to the element, or NULL. */
#define DTP_SLOT(arr, n, id, ret_new)                                                              \
	__extension__({                                                                            \
		size_t i_;                                                                         \
		__typeof__(arr) v_ = dtp_slot((arr), &(n), sizeof(*(arr)), (id), &i_, (ret_new));  \
		_Static_assert(offsetof(__typeof__(*(arr)), id) == 0, "id first, for dtp_slot()"); \
		if (v_ != NULL)                                                                    \
			(arr) = v_;                                                                \
		v_ != NULL ? &v_[i_] : NULL;                                                       \
	})

#endif
