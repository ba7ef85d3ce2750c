/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Code shared by the dpdktel collectd plugins (dtp_: "dpdktel plugin"), compiled into each
 * .so with hidden visibility, so each plugin has its own copy and its own state.
 *
 *   - configuration: a table of options per plugin, parsed into a plain struct, then
 *     validated in a separate step (unit-testable without collectd);
 *   - targets: one DPDK application, reached through libdpdktel's shared session for its
 *     socket, with gone/back logging, restart detection and the plugin's own health counters;
 *   - dispatch: value lists and notifications with the identifiers of docs/metrics.md.
 *
 * Nothing here talks to a socket or parses JSON: that is libdpdktel's job.
 *
 * Conventions: functions return 0 (or a count) or -errno, and fill ret_ pointers only on
 * success. Ownership: the caller owns every struct passed in; what a function allocates for
 * the caller is said at the function, with what frees it. Threads: a struct dtp_target and
 * a struct dtp_conf are used by one thread at a time (a plugin's poll thread, or the read
 * callback of that instance; the conf by the config, init and shutdown callbacks, which
 * collectd runs one after the other); struct dtp_instances has its own lock and is safe
 * from any thread; the dispatch functions are thread-safe (collectd copies what they pass).
 */
#ifndef DTP_H
#define DTP_H

#include <stdbool.h>
#include <stddef.h>
#include <pthread.h>
#include <stdint.h>

#include "collectd.h"
#include "plugin.h"
#include "utils/common/common.h"
#include "utils_complain.h"

#include "dtel.h"

/** Longest instance name (it is part of plugin_instance, DATA_MAX_NAME_LEN in all). */
#define DTP_NAME_MAX 64
/** Port ids the Ports option can name. */
#define DTP_PORTS_MAX 1024
/** Patterns per XStatsInclude / XStatsExclude. */
#define DTP_GLOBS_MAX 32

/** Log with the "<plugin> plugin: " prefix every line of ours carries. */
#define DTP_LOG(level, plugin, fmt, ...) plugin_log(level, "%s plugin: " fmt, plugin, ##__VA_ARGS__)

/* Configuration ------------------------------------------------------------------------ */

enum dtp_opt_type {
	DTP_OPT_BOOL, /* bool */
	DTP_OPT_SECONDS, /* double, within [min, max] */
	DTP_OPT_NUMBER, /* double, within [min, max] (not a duration) */
	DTP_OPT_UINT, /* unsigned int, within [min, max] */
	DTP_OPT_STRING, /* char[size] */
	DTP_OPT_PORTS, /* struct dtp_ports */
	DTP_OPT_GLOBS, /* struct dtp_globs, repeatable; the first one in a block replaces the
			* default or global list */
	DTP_OPT_CUSTOM, /* parsed by the row's parse(), repeatable; freed by its free() */
};

struct dtp_conf;

/** Where an option may appear. */
#define DTP_OPT_GLOBAL 1u /* in the <Plugin> block */
#define DTP_OPT_INSTANCE 2u /* in an <Instance> block (overrides the global value) */

struct dtp_option {
	const char *key;
	enum dtp_opt_type type;
	size_t offset; /* of the field in the plugin's options struct */
	size_t size; /* of that field */
	unsigned int where; /* DTP_OPT_GLOBAL | DTP_OPT_INSTANCE */
	double min, max; /* DTP_OPT_SECONDS, DTP_OPT_UINT */
	const char *expect; /* what a valid value looks like, for messages */
	/**
	 * DTP_OPT_CUSTOM: parse one occurrence @ci (a value, or a block with children) into
	 * @field, which is zeroed before the first occurrence in a block. Errors are reported
	 * with dtp_conf_error(c, where, ...), all of them; returns 0 or -1.
	 */
	int (*parse)(struct dtp_conf *c, const oconfig_item_t *ci, const char *where, void *field);
	/** DTP_OPT_CUSTOM: free what parse() allocated into @field. */
	void (*free)(void *field);
};

/**
 * A row of a plugin's option table, for a field of its options struct @st, allowed in the
 * <Plugin> block and in <Instance> blocks. DTP_BOOL_OPT for a bool; DTP_TIMEOUT_OPT and
 * DTP_PORTS_OPT for the options both plugins have, worded alike.
 */
#define DTP_OPT(st, key, type, field, min, max, expect)                                 \
	{                                                                               \
		key, type, offsetof(struct st, field), sizeof(((struct st *)0)->field), \
			DTP_OPT_GLOBAL | DTP_OPT_INSTANCE, min, max, expect, NULL, NULL \
	}
#define DTP_BOOL_OPT(st, key, field) DTP_OPT(st, key, DTP_OPT_BOOL, field, 0, 0, "true or false")
#define DTP_TIMEOUT_OPT(st)                                         \
	DTP_OPT(st, "Timeout", DTP_OPT_SECONDS, timeout, 0.001, 60, \
		"seconds for one request, more than 0 and at most 60")
/** PollLoad's and ReadLoad's default: percent of one core for the polls of dpdktel_events,
 * and as much again for the reads of dpdktel_stats, on an application. */
#define DTP_LOAD_DEFAULT 1.0
/** MaxAppLoad's default: not set (-1). */
#define DTP_MAX_APP_LOAD_UNSET (-1.0)
#define DTP_MAX_APP_LOAD_OPT(st)                                                                 \
	DTP_OPT(st, "MaxAppLoad", DTP_OPT_NUMBER, max_app_load, 0, 50,                           \
		"a percentage of one core from 0.01 to 50, or 0 for no budget at all: the most " \
		"time the application's telemetry thread may spend answering both dpdktel "      \
		"plugins together")
#define DTP_PORTS_OPT(st)                                \
	DTP_OPT(st, "Ports", DTP_OPT_PORTS, ports, 0, 0, \
		"\"all\" or a list of port ids below 1024 such as \"0-3,8\"")

/** Ports option: "all" or an id list. */
struct dtp_ports {
	bool all;
	uint64_t bm[DTP_PORTS_MAX / 64];
};

/** Shell patterns (fnmatch). */
struct dtp_globs {
	unsigned int n;
	char *v[DTP_GLOBS_MAX];
};

/** One <Instance "name"> block. */
struct dtp_instance_conf {
	char name[DTP_NAME_MAX];
	char file_prefix[DTEL_PATH_MAX];
	char socket_path[DTEL_PATH_MAX];
	char runtime_dir[DTEL_PATH_MAX];
	void *opts; /* the plugin's options struct: the global values, then the block's */
	uint64_t set; /* bit i: table option i was set in this block */
};

/** A parsed <Plugin> block. Owned by the plugin; free with dtp_conf_free(). */
struct dtp_conf {
	const char *plugin;
	const struct dtp_option *table;
	size_t ntable;
	size_t opts_size;
	void *global; /* the plugin's options struct, defaults first */
	uint64_t global_set;
	struct dtp_instance_conf *inst;
	size_t ninst;
	bool discover;
	bool discover_set;
	/* RuntimeDir, each time it is given; else dtel_runtime_dirs() (runtime_dirs_default) */
	char runtime_dirs[DTEL_RUNTIME_DIRS_MAX][DTEL_PATH_MAX];
	int nruntime_dirs;
	bool runtime_dirs_default;
	double retire_after; /* RetireAfter: seconds a discovered application may be gone */
	int errors; /* configuration errors logged so far: init refuses to start */
};

/** RetireAfter unless configured (seconds). */
#define DTP_RETIRE_AFTER_DEFAULT 60

/**
 * Start a conf: @defaults (opts_size bytes) are copied as the global values. A conf already
 * started is left as it is (a zeroed one, or one after dtp_conf_free(), is not), so the
 * config callback of each <Plugin> block and init (for <LoadPlugin> alone) both call it.
 * Returns 0 or -ENOMEM.
 */
int dtp_conf_init(struct dtp_conf *c, const char *plugin, const struct dtp_option *table,
	size_t ntable, const void *defaults, size_t opts_size);

/**
 * A plugin's config callback: dtp_conf_init(), then dtp_conf_parse() of @ci. Returns 0
 * always: errors are logged now and refused in init (a config callback that fails would stop
 * collectd from starting at all).
 */
int dtp_conf_config(struct dtp_conf *c, const char *plugin, const struct dtp_option *table,
	size_t ntable, const void *defaults, size_t opts_size, const oconfig_item_t *ci);

/**
 * Parse a <Plugin> block into c. Every error is logged with the key, the value and what is
 * expected, and counted in c->errors; parsing goes on so that all of them are reported.
 */
void dtp_conf_parse(struct dtp_conf *c, const oconfig_item_t *ci);

/**
 * Check the parsed conf and give each instance the global values of the options its block
 * did not set. Logs and counts errors as dtp_conf_parse(). Returns c->errors == 0 ? 0 : -1.
 */
int dtp_conf_validate(struct dtp_conf *c);

/**
 * Log a configuration error (@where: "" or "<Instance \"name\">: ") and count it in
 * c->errors: for the parse() of DTP_OPT_CUSTOM options, with the key, the value and what is
 * expected.
 */
__attribute__((format(printf, 3, 4))) void dtp_conf_error(
	struct dtp_conf *c, const char *where, const char *fmt, ...);

/**
 * The values of option @ci as the user wrote them ("\"a\" 2 true"; "no value"), for the
 * messages of dtp_conf_error(): written into @buf (the caller's), which is returned.
 */
const char *dtp_conf_describe(const oconfig_item_t *ci, char *buf, size_t size);

/** Free everything the conf owns (not the struct). Accepts a zeroed conf. */
void dtp_conf_free(struct dtp_conf *c);

/**
 * True when instance name @s ends in ".port<N>" or ".lcore<N>": it would be read as a port
 * or lcore of another instance once the plugin instance is split into labels
 * (docs/grafana.md).
 */
bool dtp_name_ambiguous(const char *s);

/** True when port @id is selected. */
bool dtp_ports_has(const struct dtp_ports *p, unsigned int id);

/** True when @name passes: matches an include (or there are none) and no exclude. */
bool dtp_globs_pass(
	const struct dtp_globs *include, const struct dtp_globs *exclude, const char *name);

/* Targets -------------------------------------------------------------------------------- */

/** One DPDK application, as one plugin sees it. */
struct dtp_target {
	const char *plugin;
	char name[DTP_NAME_MAX];
	char path[DTEL_PATH_MAX];
	int timeout_ms;
	struct dtel_shared *sh;

	bool up; /* the last request got an answer */
	bool ever_up;
	int last_error; /* of the last failed request, 0 after a success */
	c_complain_t down_complaint;
	int down_logged; /* the error the current outage was last logged with; 0: none */
	uint64_t generation; /* the shared session's generation last seen */
	uint64_t connects; /* the shared session's connect count last seen */
	long pid; /* of the process that holds the socket (dtp_target_restarted()); 0: unknown */
	int dpdk_version; /* dtel_dpdk_version() of the greeting's version; -EINVAL: unknown */
	char dpdk_release[DTEL_STRING_MAX]; /* the greeting's version without "DPDK " */
	unsigned long long start_ticks; /* when pid started (/proc), 0: unknown */
	/* dtp_target_uptime(): the start of the process greeting connection number up_connects,
	 * read from /proc once per connection (a restart always reconnects, even to a reused
	 * pid). */
	uint64_t up_connects;
	long up_pid;
	unsigned long long up_start;
	bool bad_reply_logged; /* an unusable reply of this process was logged */

	/* DTEL_PRIO_POLL for the events plugin, whose requests go before the stats plugin's
	 * (set after dtp_target_init()). */
	enum dtel_prio prio;
	/* The application's service time of every request answered so far (ns): a plugin
	 * takes the difference over a round for its budget (dtp_budget_plan()). */
	uint64_t service_ns;

	/* The plugin's own health, dispatched as values (docs/metrics.md). queued: requests
	 * that waited for our own earlier requests to this application (the other plugin's,
	 * or a poll's); deferred: not sent, because they waited longer than the Timeout
	 * while the application was answering ours (neither is a failure of it). */
	uint64_t sent, failed, truncated, invalid, discarded, reconnects, restarts, queued,
		deferred;
};

/** Set up a target for @path (takes a reference on its shared session). 0 or -errno. */
int dtp_target_init(struct dtp_target *t, const char *plugin, const char *name, const char *path,
	int timeout_ms);
/** Drop the shared session reference. Accepts a zeroed target. */
void dtp_target_fini(struct dtp_target *t);

/**
 * Send one request with the target's priority and count it. -EBUSY: not sent, because our
 * own earlier requests to the application (the other plugin's, a poll's) were still being
 * answered when the Timeout ran out: counted deferred, not failed, and says nothing of the
 * application. -EAGAIN: not sent, because reconnecting backs off after a
 * refused connect (this plugin's or the other's: they share the connection): counted failed
 * but not sent, and the target is down for the refusal's reason (t->last_error), logged once
 * as below; a caller must not count it as a failed poll (nothing was asked). On failure: counts it,
 * marks the target down and logs once that it is gone (with the reason in the user's terms), and
 * once more if the reason becomes one the operator must fix (permission denied, not a telemetry
 * socket, garbage) while it stays down; the first success after that logs once that it is back. A
 * reply the application may have cut is counted as truncated.
 */
int dtp_query(struct dtp_target *t, const char *cmd, struct dtel_reply *ret);

/* Requests dtp_query_many() keeps unanswered at a time. */
#define DTP_QUERY_WINDOW 32

/**
 * dtp_query() of @n requests at once (dtel_shared_request_many(): a batch of reads yields to
 * polls between its requests): ret_results[i] and ret[i] are what dtp_query() would have
 * given for cmds[i], and counted as it counts them (when none could be sent, the first has
 * the error: -EAGAIN, -EBUSY, the connect's); -ECANCELED: never sent (the connection ended
 * at an earlier one, or the batch's turn did not come back), not counted; -ECONNABORTED:
 * sent, but its reply was left unread on a connection closed for it, counted sent and
 * discarded. Returns 0.
 */
int dtp_query_many(struct dtp_target *t, const char *const *cmds, size_t n, struct dtel_reply *ret,
	int *ret_results);
/** dtp_query_many(), and each request's service time into ret_sample_ns[i] (n entries; 0
 * for one not answered), for a caller that learns what each request costs. */
int dtp_query_many_timed(struct dtp_target *t, const char *const *cmds, size_t n,
	struct dtel_reply *ret, int *ret_results, uint64_t *ret_sample_ns);

/**
 * A reply that arrived but cannot be used (@err: -EPROTO from a parser: cut or malformed
 * JSON, nesting too deep, a counter that is negative or not an integer; -ERANGE: a counter
 * above INT64_MAX): counts @n values in invalid and logs the first one of each application
 * process, naming @what (the request, or the value). Nothing of it must be dispatched.
 */
void dtp_bad_reply(struct dtp_target *t, const char *what, int err, uint64_t n);

/**
 * Whether another process holds the socket since the last call (a restart: the shared
 * session's generation changed, see struct dtel_shared_status), answered or not: a process
 * that hangs right after it made its socket never greets, and SO_PEERCRED names it at
 * connect. *ret_old_pid gets the previous pid (0: never known). Takes the new process's pid
 * into t->pid (its greeting's, or SO_PEERCRED's until it greets; its start time read from
 * /proc once per pid), counts reconnects and sets t->dpdk_version from the greeting (an
 * upgrade is a restart; unknown until the new process greets).
 */
bool dtp_target_restarted(struct dtp_target *t, long *ret_old_pid);

/**
 * Whether the process that holds the socket, as dtp_target_restarted() last saw it, has
 * surely exited: its pid is no longer in /proc, or belongs to a process with another start
 * time (a reused pid). False while it runs and when that cannot be told (never reached;
 * another pid namespace). Reads /proc: call it when a poll went unanswered, not at every
 * poll.
 */
bool dtp_target_exited(const struct dtp_target *t);

/** Milliseconds of CLOCK_MONOTONIC: the plugins' clock for polls, outages and retiring. */
uint64_t dtp_now_ms(void);

/**
 * Seconds since the process behind the target's connection started; -1 when that cannot be
 * told. /proc is read once per connection (the start time), then CLOCK_BOOTTIME, which is
 * /proc/uptime's clock: no file is opened at every read.
 */
double dtp_target_uptime(struct dtp_target *t);

/**
 * The program name of process @pid (/proc/<pid>/comm, without its newline) into @buf.
 * 0, or -ESRCH when /proc does not tell (@buf then ""). The caller's thread.
 */
int dtp_proc_comm(long pid, char *buf, size_t size);

/** An application younger than this is still starting (see dtp_target_young()). */
#define DTP_YOUNG_S 30

/**
 * Whether the application the target last reached started less than DTP_YOUNG_S seconds ago
 * (dtp_target_uptime(); false when that cannot be told). DPDK applications register their own
 * telemetry commands and create their mempools after the EAL has opened the socket, so a
 * command list read from a young application may still grow: the plugins read it again.
 */
bool dtp_target_young(struct dtp_target *t);

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
 * in two dirs get distinct names). Each socket no instance has gets start(name, path): the name
 * is dtp_discovered_name(), unless that is longer than DTP_NAME_MAX - 1 or taken by another
 * instance; then dtp_hashed_name(), logged once (INFO) with the reason. With a retire
 * callback, a discovered instance whose socket is gone from @dir or refuses connections
 * (stale: no process behind it) is retire()d once it has been so for @retire_after_ms
 * (monotonic @now_ms), with one INFO line; it comes back as a new instance when its socket
 * does. A dir that cannot be read is logged once (and its return once), a missing dir
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

/* Readers both plugins use ----------------------------------------------------------------- */

/**
 * A request as a plugin sends it (through its own accounting, with its own rule for ending a
 * poll or a read): 0 or -errno, *ret as dtel_shared_query() fills it.
 */
typedef int (*dtp_query_fn)(void *ctx, const char *cmd, struct dtel_reply *ret);

/** @q with "<name>,<id>" (a port, a device, an lcore): what @q returns. */
int dtp_query_id(
	dtp_query_fn q, void *ctx, const char *name, unsigned int id, struct dtel_reply *ret);

/** What an application offers, from its command list. */
struct dtp_caps {
	bool fwd_info, fwd_ports, fwd_port, fwd_lcores; /* dpdktel-fwd's own commands */
	bool eal_lcore; /* /eal/lcore/info: DPDK >= 23.03 */
	bool eal_usage; /* /eal/lcore/usage: DPDK >= 23.03 */
	bool cryptodev, dmadev, eventdev, rawdev; /* their /<class>/list... (devices.c) */
};

/**
 * Send @cmd through @q and parse its reply as a dict under @key (NULL: @cmd) into *ret_d
 * (the caller clears it). 0, @q's error, or the parser's -errno: an unusable reply is
 * counted invalid and logged once through @t, except -ENOMEM, and a null reply (-ENODATA)
 * when @null_ok (for commands whose null means "none").
 */
int dtp_query_dict(dtp_query_fn q, void *ctx, struct dtp_target *t, const char *cmd,
	const char *key, bool null_ok, struct dtel_dict *ret_d);

/**
 * Read the command list ("/") through @q into *ret_caps. 0, @q's error, or a parser's
 * -errno (counted invalid and logged once through @t); *ret_caps untouched on failure.
 * Thread: the caller's (one request at a time per target).
 */
int dtp_caps_read(dtp_query_fn q, void *ctx, struct dtp_target *t, struct dtp_caps *ret_caps);

/**
 * /eal/lcore/info,<id> through @q. An answer about another lcore is refused (-EPROTO,
 * counted in t->discarded): DPDK before 26.07 can hand a client another client's
 * parameters. A reply that does not parse is counted invalid and logged once.
 */
int dtp_eal_lcore(dtp_query_fn q, void *ctx, struct dtp_target *t, unsigned int id,
	struct dtel_eal_lcore_info *ret_info);

/**
 * /eal/lcore/list, then dtp_eal_lcore() of each listed lcore: each(arg, info) for every one
 * that answers for itself (whether it reports cycles or not: li->has_cycles). stop(ctx), when not
 * NULL, is asked before each request: non-zero ends the walk and is returned (a poll that met a
 * timeout). Returns 0, the list request's error, or stop's.
 */
int dtp_eal_lcores(dtp_query_fn q, void *ctx, struct dtp_target *t, int (*stop)(void *ctx),
	void (*each)(void *arg, const struct dtel_eal_lcore_info *li), void *arg);

/**
 * /eal/lcore/usage through @q: the cycles of every lcore with a usage callback, in one
 * request (ret_usage->n 0: none has one). 0, @q's error, or a parser's -errno (counted
 * invalid and logged once through @t; -ENODATA for a null reply). The caller frees
 * *ret_usage with dtel_eal_lcore_usage_clear(); untouched on failure.
 */
int dtp_eal_usage(
	dtp_query_fn q, void *ctx, struct dtp_target *t, struct dtel_eal_lcore_usage *ret_usage);

/** Whether a second, confirming query is needed against the application @t last reached:
 * DPDK 22.11 to 25.11 parse commands with strtok(), so two clients querying at once can get
 * each other's parameters; 26.07 fixed that (strtok_r). True when the release is unknown. */
static inline bool
dtp_needs_confirm(const struct dtp_target *t)
{
	return t->dpdk_version < 260700;
}

/* Dispatch ------------------------------------------------------------------------------ */

/** Identifiers shared by the values of one read. */
struct dtp_id {
	const char *plugin;
	char plugin_instance[DATA_MAX_NAME_LEN];
	cdtime_t time; /* the time of the read */
};

/** plugin_instance "<instance>", "<instance>.port<N>" or "<instance>.lcore<N>". */
void dtp_id_instance(struct dtp_id *id, const char *plugin, const char *inst, cdtime_t time);
void dtp_id_port(
	struct dtp_id *id, const char *plugin, const char *inst, unsigned int port, cdtime_t time);
void dtp_id_lcore(
	struct dtp_id *id, const char *plugin, const char *inst, unsigned int lcore, cdtime_t time);

/**
 * Dispatch one DERIVE value list of n counters. A counter above INT64_MAX (collectd's
 * derive_t is signed) is not dispatched: returns -ERANGE and the caller counts it invalid.
 */
int dtp_derive(const struct dtp_id *id, const char *type, const char *type_instance,
	const uint64_t *v, size_t n);
/** Dispatch one GAUGE value list of n values. */
int dtp_gauge(const struct dtp_id *id, const char *type, const char *type_instance, const double *v,
	size_t n);

/**
 * Hold back the value lists the calling thread dispatches (dtp_derive, dtp_gauge) until
 * dtp_batch_end(), which hands them to collectd in one burst, in order, each with its own
 * time. Why: collectd 5.12 queues every value for its write threads and wakes one that is
 * asleep; values dispatched between blocking requests find them asleep again each time, and
 * those wake-ups cost more than the collection (dpdktel_stats at 32 ports: 5.0 ms of CPU per
 * read interleaved, 2.3 ms batched; tests/bench/stats_cost). Per thread: read callbacks of
 * different instances may run at the same time. Without memory, values go out at once.
 */
void dtp_batch_begin(void);
/** Dispatch what was held back since dtp_batch_begin() and stop holding. */
void dtp_batch_end(void);
/** Drop what was held back since dtp_batch_begin() and stop holding (a read that starts
 * over: its values would go out twice with one time, and collectd refuses the second). */
void dtp_batch_cancel(void);

/** Meta data of a notification (docs/metrics.md): unset fields are left out. */
struct dtp_meta {
	int64_t port_id; /* -1: none */
	int64_t lcore_id; /* -1: none */
	const char *name;
	const char *old_state;
	const char *new_state;
	int64_t duration_ms; /* -1: none */
};
#define DTP_META_NONE                                            \
	{                                                        \
		.port_id = -1, .lcore_id = -1, .duration_ms = -1 \
	}

/**
 * The plugin's own health, the same in both plugins (docs/metrics.md): up, and the target's
 * counters as telemetry_requests (sent, failed, discarded, invalid, truncated, queued,
 * deferred), reconnects and restarts, and app_load: what both plugins cost the application
 * (percent of one core, measured over the last 10 s) and its budget. Returns how many
 * counters collectd could not take (above INT64_MAX): the caller adds them to its invalid
 * count.
 */
int dtp_dispatch_health(const struct dtp_id *id, const struct dtp_target *t);

/* The load budgets (PollLoad, ReadLoad, MaxAppLoad): budget.h */
#include "budget.h"

/**
 * The interval for the values of the next dispatches of this thread (0: collectd's, the
 * read callback's): a read that runs less often than its callback says so, so that collectd
 * does not take its values for missing between two reads.
 */
void dtp_dispatch_interval(cdtime_t interval);

/*
 * Info values: a GAUGE of 1 whose type instance carries names, "<part>,<part>,...", so that
 * PromQL can split them into labels with label_replace and join them onto other series
 * (docs/metrics.md). Each part keeps only [A-Za-z0-9_.:-]; every other character ('/',
 * ',', spaces, quotes) becomes '_', so that the parts stay apart and the identifier is safe
 * for collectd (a '/' separates the parts of an identifier), csv file names and Prometheus.
 */

/**
 * "<part>,<part>,..." of @n parts into @buf, each sanitized as above and cut to @max[i] - 1
 * characters (a NULL part is ""). Returns 0, or -ENAMETOOLONG (nothing written) when the
 * @max add up to more than @size: then a long part could push the last ones out.
 */
int dtp_info_instance(
	char *buf, size_t size, const char *const *parts, const size_t *max, size_t n);

/**
 * The driver of the ethdev named @name, into @buf ("" when unknown): DPDK's telemetry does
 * not name it. A virtual device is named after its driver and a suffix ("net_null0",
 * "net_tap1", "net_ring0_in": net_null, net_tap, net_ring), so that is the name up to the
 * first character other than a lowercase letter or '_' (a '_' before it dropped); a PCI
 * address ("0000:3b:00.0", also with a suffix as "0000:3b:00.0_representor_vf0") gives the
 * kernel driver the device is bound to (vfio-pci, igb_uio, mlx5_core) from
 * @sysfs/bus/pci/devices/<address>/driver (@sysfs: "/sys", or a test's directory).
 */
void dtp_port_driver(const char *name, const char *sysfs, char *buf, size_t size);

/** Dispatch a notification with the identifiers of the value it is about. */
__attribute__((format(printf, 6, 7))) int dtp_notify(const struct dtp_id *id, int severity,
	const char *type, const char *type_instance, const struct dtp_meta *meta, const char *fmt,
	...);

#endif
