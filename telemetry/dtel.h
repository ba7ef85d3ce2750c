/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libdpdktel: a client for the DPDK telemetry v2 socket.
 *
 * Protocol (DPDK 20.05 and later, see docs/architecture.md):
 *   - AF_UNIX SOCK_SEQPACKET socket <runtime dir>/<file prefix>/dpdk_telemetry.v2, or
 *     dpdk_telemetry.v2:N for the N-th further process sharing that runtime dir;
 *   - on connect the application sends one greeting datagram
 *     {"version":"DPDK 22.11.11","pid":N,"max_output_len":16384};
 *   - each request is one datagram "/cmd" or "/cmd,params" (no newline) and each reply one
 *     datagram {"/cmd":<value>}; an unknown command or bad parameter gives {"/cmd":null};
 *   - the application cuts replies silently at max_output_len bytes, 256 dict entries and
 *     512 array entries, and serves at most 10 clients (the 11th is accepted, then closed).
 *
 * Conventions of every function here:
 *   - returns 0 (or a count) on success and a negative errno value on failure; results go
 *     through ret_* pointers, which are left untouched on failure;
 *   - never logs, never exits, never blocks longer than the timeout it is given;
 *   - is thread-safe unless it takes a struct dtel_session, which must be used by one
 *     thread at a time (use struct dtel_shared to share a connection between threads).
 *
 * Error values (dtel_strerror() describes each in these terms):
 *   -ENOENT        no socket at the path: the application is not running
 *   -ECONNREFUSED  stale socket: the application that created it is gone
 *   -EACCES        no permission to connect (run as the application's user or group)
 *   -ENOTSOCK      the path is not a socket
 *   -EPROTOTYPE    the socket is not SOCK_SEQPACKET: not a DPDK telemetry v2 socket
 *   -ENAMETOOLONG  the path does not fit in sun_path (107 bytes)
 *   -ETIMEDOUT     no greeting or reply within the timeout (the session is then closed)
 *   -ECONNRESET    the application closed the connection (also how the 10-client cap looks)
 *   -EPROTO        the greeting or reply is not what the protocol says (bad JSON, wrong key)
 *   -EMSGSIZE      the reply datagram was larger than max_output_len: it was cut
 *   -ENODATA       the application answered null: unknown command or bad parameter
 *   -EBUSY         not sent: our own earlier requests on the shared session were still being
 *                  answered when the timeout ran out (the application was answering them)
 *   -EAGAIN        not sent: reconnecting to the shared session's socket is backing off
 *   -ECONNABORTED  (dtel_shared_query_many) sent, but its reply was never read: an error
 *                  ended the batch before it, and the connection was closed
 *   -EINVAL        bad argument (command syntax, timeout <= 0, NULL pointer)
 *   -ENOMEM        out of memory
 */
#ifndef DTEL_H
#define DTEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** File name of the telemetry v2 socket inside a runtime dir. */
#define DTEL_SOCKET_NAME "dpdk_telemetry.v2"
/** DPDK's default file prefix. */
#define DTEL_DEFAULT_PREFIX "rte"
/** Size of a socket path buffer, terminating NUL included (sizeof sun_path). */
#define DTEL_PATH_MAX 108
/** Greetings announcing a larger max_output_len than this are refused (-EPROTO). */
#define DTEL_MAX_OUTPUT_LEN_LIMIT (1024L * 1024)
/** Longest string DPDK 22.11 puts in a reply (dict keys and values), NUL included. */
#define DTEL_STRING_MAX 128
/** Entries of a dict / array at which DPDK stops adding (the rest is dropped silently). */
#define DTEL_DICT_MAX_ENTRIES 256
#define DTEL_ARRAY_MAX_ENTRIES 512
/**
 * A reply closer than this to max_output_len may have lost elements: DPDK appends an element
 * only if it fits, and the largest flat element it can append (a 127-byte key with a 127-byte
 * string value, every character escaped) is under this size.
 */
#define DTEL_CUT_MARGIN 512

/** Flags of a reply and of parse results. */
#define DTEL_F_NEAR_LIMIT (1u << 0) /**< reply within DTEL_CUT_MARGIN of max_output_len */
#define DTEL_F_DICT_FULL (1u << 1) /**< a dict had 256 entries: later ones may be missing */
#define DTEL_F_ARRAY_FULL (1u << 2) /**< an array had 512 entries: later ones may be missing */
#define DTEL_F_INVALID (1u << 3) /**< entries of the wrong type or range were skipped */
/** The flags that say the application may have cut the reply. */
#define DTEL_F_POSSIBLY_CUT (DTEL_F_NEAR_LIMIT | DTEL_F_DICT_FULL | DTEL_F_ARRAY_FULL)

/**
 * Describe a negative error value returned by this library, in terms of the telemetry
 * protocol (for example -ECONNRESET: "connection closed by the application (it serves at most
 * 10 clients)"). Returns a static string; never NULL.
 */
const char *dtel_strerror(int err);

/* ------------------------------------------------------------------------------------------
 * Discovery
 */

/** What is known about a socket file found by dtel_discover(). */
enum dtel_socket_state {
	DTEL_SOCKET_UNPROBED = 0, /**< a socket file; not probed (no DTEL_DISCOVER_PROBE) */
	DTEL_SOCKET_LIVE, /**< an application accepted a connection */
	DTEL_SOCKET_STALE, /**< connection refused: the application that made it is gone */
	DTEL_SOCKET_NO_PERMISSION, /**< not allowed to connect, or to read the directory */
	DTEL_SOCKET_ERROR, /**< anything else: see dtel_socket_info.error */
};

/** One telemetry v2 socket under a runtime dir. */
struct dtel_socket_info {
	char prefix[DTEL_PATH_MAX]; /**< file prefix: the name of its directory */
	char path[DTEL_PATH_MAX]; /**< full socket path */
	unsigned int index; /**< N of dpdk_telemetry.v2:N; 0 for dpdk_telemetry.v2 */
	enum dtel_socket_state state;
	int error; /**< 0, or the negative errno of the probe (DTEL_SOCKET_STALE: -ECONNREFUSED) */
};

/** Probe each socket with a connect() (costs the application one accept and a thread). */
#define DTEL_DISCOVER_PROBE (1u << 0)

/**
 * Write the runtime dir DPDK applications of this user create their sockets under:
 * $RUNTIME_DIRECTORY/dpdk when that is set (systemd), else /var/run/dpdk for root, else
 * $XDG_RUNTIME_DIR/dpdk, else /tmp/dpdk. Returns the length, or -ENAMETOOLONG.
 */
int dtel_runtime_dir(char *buf, size_t size);

/** The most runtime dirs dtel_runtime_dirs() returns. */
#define DTEL_RUNTIME_DIRS_MAX 5

/**
 * The runtime dirs DPDK applications on this host create their sockets under, as discovery
 * should look at them, in order: dtel_runtime_dir() (this process's own), then
 * $RUNTIME_DIRECTORY/dpdk (an application started by a systemd unit with RuntimeDirectory=),
 * /run/openvswitch/dpdk (OVS on Fedora and RHEL runs as user openvswitch with
 * XDG_RUNTIME_DIR=/run/openvswitch), /var/run/dpdk (applications run as root), and for a
 * user other than root $XDG_RUNTIME_DIR/dpdk. A dir that resolves to one listed before (a
 * symlink, /var/run to /run) is left out; dirs that do not exist are listed (an application
 * may create them later). Writes up to @max paths into @ret_dirs and returns how many.
 */
int dtel_runtime_dirs(char (*ret_dirs)[DTEL_PATH_MAX], int max);

/**
 * Write the socket path of file prefix @prefix (DTEL_DEFAULT_PREFIX when NULL) and instance
 * @index under @runtime_dir; when NULL, under the first of dtel_runtime_dirs() that holds
 * the prefix's directory now, else under dtel_runtime_dir(). Returns the length, -EINVAL for
 * a prefix with '/' or an empty one, or -ENAMETOOLONG when the path would not fit sun_path.
 */
int dtel_socket_path(
	const char *runtime_dir, const char *prefix, unsigned int index, char *buf, size_t size);

/**
 * List every telemetry v2 socket (dpdk_telemetry.v2 and dpdk_telemetry.v2:N) in the
 * subdirectories of @runtime_dir (dtel_runtime_dir() when NULL), sorted by prefix and index.
 * Subdirectories that cannot be read are listed once with index 0 and state
 * DTEL_SOCKET_NO_PERMISSION. @flags: 0 or DTEL_DISCOVER_PROBE.
 *
 * On success *ret_list is a malloc'ed array owned by the caller (free it with
 * dtel_discover_free()), or NULL when the count is 0; returns the count. Returns -ENOENT when
 * @runtime_dir does not exist, -EACCES when it cannot be read.
 */
int dtel_discover(const char *runtime_dir, unsigned int flags, struct dtel_socket_info **ret_list);

/**
 * dtel_discover() of each of @ndirs dirs (at most DTEL_RUNTIME_DIRS_MAX), their sockets in
 * one list, in the order of the dirs. ret_errors[k] gets dir k's result: 0, or the error
 * dtel_discover() gave for it (-ENOENT: missing, which lists nothing; -EACCES ...). On
 * success *ret_list is as dtel_discover()'s and the count is returned; -ENOMEM or -EINVAL.
 */
int dtel_discover_dirs(const char (*dirs)[DTEL_PATH_MAX], int ndirs, unsigned int flags,
	struct dtel_socket_info **ret_list, int *ret_errors);

/** Free a list returned by dtel_discover(). Accepts NULL. */
void dtel_discover_free(struct dtel_socket_info *list);

/** Connect to @path once and close at once: 0 when live, else the error dtel_session_open()
 * would return (-ENOENT, -ECONNREFUSED, -EACCES, ...). Does not read the greeting. */
int dtel_probe(const char *path);

/** As dtel_probe(), and on success *ret_pid gets the process id of the application that
 * listens on @path (SO_PEERCRED), without waiting for its greeting. */
int dtel_probe_pid(const char *path, long *ret_pid);

/* ------------------------------------------------------------------------------------------
 * Sessions: one connection, used by one thread at a time
 */

/** The greeting an application sends on connect. */
struct dtel_greeting {
	char version[DTEL_STRING_MAX]; /**< for example "DPDK 22.11.11" */
	long pid; /**< the application's process id */
	size_t max_output_len; /**< largest reply it sends (1 .. DTEL_MAX_OUTPUT_LEN_LIMIT) */
};

/** One reply datagram. The caller owns the struct; json is owned by the library. */
struct dtel_reply {
	char *json; /**< the datagram as received, NUL-terminated; release with dtel_reply_release
		     */
	size_t len; /**< its length in bytes */
	unsigned int flags; /**< DTEL_F_NEAR_LIMIT when it may have been cut by the application */
};

struct dtel_session;

/**
 * Connect to the telemetry socket at @path and read the greeting, all within @timeout_ms
 * (> 0). On success *ret_session is owned by the caller until dtel_session_close(). Errors:
 * those of the list at the top, -ETIMEDOUT when no greeting came, -ECONNRESET when the
 * application closed instead (10 clients already), -EPROTO for a bad greeting.
 */
int dtel_session_open(const char *path, int timeout_ms, struct dtel_session **ret_session);

/** Close the connection and free the session. Accepts NULL. */
void dtel_session_close(struct dtel_session *session);

/** The greeting read at open; valid until dtel_session_close(). */
const struct dtel_greeting *dtel_session_greeting(const struct dtel_session *session);

/**
 * Send one request (@cmd: "/cmd" or "/cmd,params") and wait up to @timeout_ms (> 0) for its
 * reply, which must be {"/cmd": ...} for the same command. On success fills *ret_reply (release
 * it with dtel_reply_release()). On -ETIMEDOUT, -ECONNRESET, -EPROTO or -EMSGSIZE, and on any
 * other failure to receive the reply of a request that was sent (-ENOBUFS, -ENOMEM), the
 * connection is closed, since a late or partial reply would be read as the next one's, and
 * every later call returns -ENOTCONN. -ENODATA (null reply) and -EINVAL keep it open.
 */
int dtel_query(struct dtel_session *session, const char *cmd, int timeout_ms,
	struct dtel_reply *ret_reply);

/** Free the datagram of a reply and clear the struct. Accepts NULL and a cleared reply. */
void dtel_reply_release(struct dtel_reply *reply);

/* ------------------------------------------------------------------------------------------
 * Shared sessions: one connection per socket path for the whole process
 *
 * DPDK 22.11 parses requests with strtok(), so two clients querying at the same moment can
 * get each other's parameters. Every thread (and every collectd plugin) of a process that
 * takes its connection from here sends over one connection per socket, one request at a time.
 * The connection is opened lazily and reopened after errors, with a backoff that starts at
 * 25 ms and doubles up to 1 s while connecting keeps being refused (no socket, stale socket,
 * permission denied, closed at once); a socket file that appears, is replaced or changes its
 * mode (the application started again) is tried at once. Nothing else backs off: after a
 * timeout (also of the greeting) or a bad reply the next request asks the application again.
 */

struct dtel_shared;

/** State of a shared session. */
struct dtel_shared_status {
	bool connected; /**< a connection is open now */
	int last_error; /**< 0 after a successful request, else the last failure's error */
	/**
	 * 0 until the first connection; +1 whenever another process holds the socket, as a
	 * connect tells: the pid SO_PEERCRED gives changed, or its start time did (a reused pid),
	 * or the greeting's pid did (each compared with its own kind: they differ when the
	 * application runs in another pid namespace), or the socket file is another one (its
	 * inode, or its change time unless the pid and start time show the same process). The
	 * socket file is what tells a restart where neither pid does: an application that is
	 * pid 1 of its own namespace at every start, seen from a sibling namespace (SO_PEERCRED
	 * gives 0). A connect whose greeting never comes (an application hung or stopped right
	 * after it made its socket) is enough to see a new process.
	 */
	uint64_t generation;
	uint64_t connects; /**< greetings read so far (reconnects = connects - 1) */
	/** Of the current or last connection; zeroed while the process of the current generation
	 * has not greeted yet (its release and limits are not known). */
	struct dtel_greeting greeting;
	/** The process of the current generation, by its pid in this process's pid namespace
	 * (SO_PEERCRED at connect): the one to read /proc with. 0 when this namespace does not
	 * contain the application's (a sibling container), or not known yet. What the
	 * application calls itself is greeting.pid. */
	long owner_pid;
	/** The pid SO_PEERCRED gave at the last connect (in this process's pid namespace), also
	 * of one whose greeting never came; 0 when not known. */
	long peer_pid;
	/** When owner_pid started (/proc/<pid>/stat starttime: clock ticks since boot, the
	 * CLOCK_BOOTTIME clock), read at its first connect; 0 when not known. */
	unsigned long long owner_start;
};

/**
 * Take a reference to the process-wide shared session for @path, creating it (not
 * connected) on first use. *ret_shared stays valid until the matching dtel_shared_put().
 * Errors: -EINVAL, -ENAMETOOLONG, -ENOMEM.
 */
int dtel_shared_get(const char *path, struct dtel_shared **ret_shared);

/** Drop a reference; the last one closes the connection. Accepts NULL. */
void dtel_shared_put(struct dtel_shared *shared);

/** The socket path of a shared session. */
const char *dtel_shared_path(const struct dtel_shared *shared);

/**
 * Priorities of the requests on a shared session. DPDK answers a connection's requests in
 * order, so the connection is a queue that every thread of the process shares: polls go
 * first, and reads wait while a poll waits or is in progress (dtel_shared_poll_begin()).
 */
enum dtel_prio {
	DTEL_PRIO_READ = 0, /**< reads of counters: wait for polls, batches yield to them */
	DTEL_PRIO_POLL = 1, /**< health polls (links, lcores, liveness): served first */
};

/**
 * How to send a request (or a batch) on a shared session, and what it cost. The caller sets
 * the inputs and zeroes the outputs once: each call adds to them.
 */
struct dtel_request {
	enum dtel_prio prio;
	/** For each reply, from the moment the application can start on it (the request's send,
	 * or the reply before it). Also the longest wait for our own earlier requests: a
	 * request still waiting then is not sent (-EBUSY), or -ETIMEDOUT when the request it
	 * waits for has itself gone unanswered that long. */
	int timeout_ms;
	/** Batches: at most this many unanswered at a time (1 to DTEL_QUERY_MANY_WINDOW_MAX);
	 * fewer when replies are slow, so that a poll never waits behind more than about half
	 * a millisecond of our own requests, or one of them. */
	unsigned int window;
	/** Optional, the caller's: room for one entry per request; each gets its request's
	 * service time (ns, from when the application could start on it to its reply), 0 for
	 * one not answered. Per-request costs, for a caller that plans per request. */
	uint64_t *sample_ns;
	uint64_t service_ns; /**< out: what the turns of these requests cost the application
				(cost.c: the larger of their service times and the CPU time of
				its thread that serves us, where /proc shows it) */
	uint64_t queued_ns; /**< out: time spent waiting for our own earlier requests */
	unsigned int queued; /**< out: waits for our own earlier requests (a batch may wait
			       several times: it yields to polls between its requests) */
};

/**
 * dtel_query() over the shared connection, connecting first when needed, with @rq's priority
 * and timeout: it waits for our own earlier requests (at most the timeout), the connect and
 * greeting, and the reply (each at most the timeout). While reconnecting is backing off it
 * returns -EAGAIN at once: the request was not sent, and dtel_shared_status().last_error
 * keeps the error of the refused connect (a caller does not count this as a new failure).
 * -EBUSY: not sent, our own queue was longer than the timeout (not a failure of the
 * application). A connection found closed before the request is sent is reopened once,
 * transparently (the application restarted between two requests); check
 * dtel_shared_status().generation to see a restart. Errors: those of dtel_query(), -EBUSY,
 * -EAGAIN, -EINVAL (also for a bad @rq).
 */
int dtel_shared_request(struct dtel_shared *shared, struct dtel_request *rq, const char *cmd,
	struct dtel_reply *ret_reply);

/** dtel_shared_request() with DTEL_PRIO_READ and @timeout_ms. */
int dtel_shared_query(
	struct dtel_shared *shared, const char *cmd, int timeout_ms, struct dtel_reply *ret_reply);

/** The most requests dtel_shared_query_many() keeps unanswered at a time. */
#define DTEL_QUERY_MANY_WINDOW_MAX 64

/**
 * Several requests over the shared connection in one go: up to rq->window are sent before
 * their replies are read, in order. The application's telemetry thread answers them one
 * after another, without waiting for this process between two (DPDK reads one request per
 * read() from its SOCK_SEQPACKET socket, lib/telemetry/telemetry.c client_handler), which
 * costs it less CPU than the same requests one at a time. A batch of reads yields to polls:
 * when one waits, it sends nothing more, lets the poll go once its requests in flight are
 * answered, then waits for its turn again. For each i, ret_results[i] is what
 * dtel_shared_request() would have returned for cmds[i], and ret_replies[i] is the caller's
 * on 0 (dtel_reply_release()); -ECANCELED: never sent, because the connection ended at an
 * earlier request or its turn did not come back (that one has the error); -ECONNABORTED:
 * sent, but an error ended the batch at an earlier request before its reply was read.
 * Whenever replies are left unread the connection is closed (the next request reconnects),
 * so that a reply is never taken for another request's. Returns 0 when
 * requests went out, else what kept any from going: -EINVAL, -EBUSY, -EAGAIN (backing off),
 * -ETIMEDOUT, or the connect's error (then every result is -ECANCELED).
 */
int dtel_shared_request_many(struct dtel_shared *shared, struct dtel_request *rq,
	const char *const *cmds, size_t n, struct dtel_reply *ret_replies, int *ret_results);

/** dtel_shared_request_many() with DTEL_PRIO_READ, @window and @timeout_ms. */
int dtel_shared_query_many(struct dtel_shared *shared, const char *const *cmds, size_t n,
	unsigned int window, int timeout_ms, struct dtel_reply *ret_replies, int *ret_results);

/**
 * A poll of several requests begins: until the matching dtel_shared_poll_end(), reads wait
 * and batches of reads yield, so that the poll's requests do not wait behind reads that
 * would slip in between two of them. Every begin must have its end.
 */
void dtel_shared_poll_begin(struct dtel_shared *shared);
void dtel_shared_poll_end(struct dtel_shared *shared);

/** Copy the state of @shared into *ret_status. */
void dtel_shared_status(struct dtel_shared *shared, struct dtel_shared_status *ret_status);

/* ------------------------------------------------------------------------------------------
 * The load we put on an application, and its budgets
 *
 * What each turn of our requests costs the application (the larger of the requests' service
 * times, from when the application could start on a request to its reply, and the CPU time
 * of its thread that serves our connection where /proc shows it) is added up per shared
 * session and priority. Periodic work registers a class of its priority and, as it goes,
 * tells what it wants (its demand: the fraction of one core its work would cost at the rate
 * it wants); it is granted a share of its priority's budget. Polls and reads have budgets of
 * their own: the polls never give theirs up to the reads. Within a priority, a class that
 * wants less than an equal share gets it, and the others share the rest equally (max-min
 * fairness). A cap on everything may be set too: the polls get at most the cap, the reads
 * what the polls leave of it.
 */

struct dtel_shared_class;

/** The load of a shared session, fractions of one core. */
struct dtel_shared_load {
	double measured; /**< what our requests cost over the last 10 whole seconds, per second */
	double measured_prio[2]; /**< the same, by priority (DTEL_PRIO_READ, DTEL_PRIO_POLL) */
	double planned; /**< what the classes were granted, together */
	/** The budget in force for everything: the cap where one is set, else the budgets of
	 * the priorities that have classes, added; 0: none (a priority without a budget). */
	double budget;
	double budget_prio[2]; /**< each priority's budget in force (the cap included), 0: none */
};

/** The load of @shared now. */
void dtel_shared_load(struct dtel_shared *shared, struct dtel_shared_load *ret_load);

/**
 * What a command costs the application by its learnt service times (the least of its last
 * ones: a reply that did not also wait for a CPU), in ns, for a request of it ("/cmd" or
 * "/cmd,params": the command's). -ENOENT while none of its replies came yet, -EINVAL.
 */
int dtel_shared_cost(struct dtel_shared *shared, const char *cmd, uint64_t *ret_ns);

/**
 * A class of periodic work of priority @prio on @shared, until dtel_shared_class_free()
 * (before the last dtel_shared_put() of the caller's reference). It has no budget until
 * dtel_shared_class_budget(). Errors: -EINVAL, -ENOMEM.
 */
int dtel_shared_class_new(
	struct dtel_shared *shared, enum dtel_prio prio, struct dtel_shared_class **ret_class);
/** Remove a class from its session and free it. Accepts NULL. */
void dtel_shared_class_free(struct dtel_shared_class *cls);

/**
 * The budgets a class brings (fractions of one core): @budget for its priority (0: none;
 * where the classes of a priority differ, the smallest holds, and 0 from any means none),
 * @cap on everything of the session (< 0: not set; 0: no budget at all, for every class of
 * the session, whichever set it; where several set one, the smallest). Thread-safe.
 */
void dtel_shared_class_budget(struct dtel_shared_class *cls, double budget, double cap);

/**
 * The class wants @demand (the fraction of one core its work would cost at the rate it
 * wants). Returns the fraction it may use: @demand where the budgets allow it, else its share
 * (see above). Thread-safe.
 */
double dtel_shared_class_grant(struct dtel_shared_class *cls, double demand);

/**
 * For a class whose work comes in rounds: a round cost the application @round_ns (0: no new
 * round; the cost is smoothed over rounds), and it wants to run every @want_ns. Returns the
 * interval in ns to run it at: @want_ns, or longer as the class's grant requires (not before
 * its third round: an application's first replies are cold). Thread-safe.
 */
uint64_t dtel_shared_class_plan(struct dtel_shared_class *cls, uint64_t round_ns, uint64_t want_ns);

/* ------------------------------------------------------------------------------------------
 * Budget arithmetic: pure functions (no I/O, no clock), for the plugins' schedules
 */

/**
 * Max-min fair shares of @budget (<= 0: none, each gets its demand) among @n demands
 * (fractions of one core): each that wants less than an equal share of what is left gets it,
 * the others share the rest equally. Writes ret_alloc[0..n).
 */
void dtel_plan_share(const double *demand, size_t n, double budget, double *ret_alloc);

/** A port in a link poll plan. */
struct dtel_plan_port {
	uint64_t cost_ns; /**< what one link request of the port costs, 0: not known yet */
	bool down; /**< its link is down: polled every down_ns at the most */
	bool quiet; /**< its changes are told otherwise (its kernel netdev): every quiet_ns */
	uint64_t period_ns; /**< out: how often to poll it */
};

/** The cadences of a link poll plan (ns). */
struct dtel_plan_links {
	uint64_t want_ns; /**< the shortest period of any port (PollInterval) */
	uint64_t down_ns; /**< the shortest of a port whose link is down */
	uint64_t quiet_ns; /**< the shortest of a quiet port */
	/** What each link poll costs besides its ports' requests: the /ethdev/list it asks
	 * and, where that costs more than an answer, waking the application's thread. */
	uint64_t fixed_ns;
	/** Ports asked together in one poll where their periods stretch (0: one): the fixed
	 * cost comes once a group, and the stretched ports all get one period (the one their
	 * shares buy together), so that a group stays together. */
	unsigned int group;
	/** What link requests outside the plan cost, fraction of one core: the checks that a
	 * kernel netdev's carrier events bring, with their confirmations. It comes off the
	 * grant first, at most half of it: the planned ports keep the other half. */
	double unplanned;
};

/** What polling @ports at their shortest periods costs, fraction of one core. */
double dtel_plan_links_demand(
	const struct dtel_plan_port *ports, size_t n, const struct dtel_plan_links *o);

/**
 * Each port's period (period_ns) within @grant (fraction of one core; <= 0: none): its
 * shortest when everything fits; else max-min by load: a port that costs less than an equal
 * share of what is left keeps its shortest period, the others share the rest equally and are
 * polled every cost / share (with a group, every sum of costs / sum of shares). The fixed
 * cost comes off the top once a want_ns where polls come that often, else once a group of
 * stretched ports. 0, or -EINVAL (want_ns 0), -ENOMEM.
 */
int dtel_plan_links(
	struct dtel_plan_port *ports, size_t n, const struct dtel_plan_links *o, double grant);

/** What a stats read costs (ns), for dtel_plan_reads(). */
struct dtel_plan_reads {
	uint64_t want_ns; /**< the interval wanted (collectd's) */
	uint64_t basic_ns; /**< a read without extended counters (everything but them) */
	uint64_t extra_ns; /**< the extended counters of every port, beyond basic_ns */
	uint64_t basic_bound_ns; /**< how old basic counters should get at the most */
	uint64_t xstats_bound_ns; /**< how old extended counters should get at the most */
};

/** How to read. */
struct dtel_read_plan {
	uint64_t interval_ns; /**< between two reads */
	unsigned int xstats_every; /**< each port's extended counters every this many reads */
};

/** What reading everything every want_ns costs, fraction of one core. */
double dtel_plan_reads_demand(const struct dtel_plan_reads *o);

/**
 * How to read within @grant (fraction of one core; <= 0: none): everything at every read
 * when it fits; else the basic counters at every want_ns and the extended ones every k-th
 * read as the rest allows, while that keeps them within xstats_bound_ns; else the extended
 * ones at their bound and the reads as often as the rest allows, while that keeps the basic
 * counters within basic_bound_ns; else, when no plan keeps both bounds, half the grant each.
 * With extra_ns 0, the reads stretch.
 */
void dtel_plan_reads(const struct dtel_plan_reads *o, double grant, struct dtel_read_plan *ret);

/* ------------------------------------------------------------------------------------------
 * Parsers: pure functions from a reply to plain structs (no I/O)
 *
 * Each checks that the reply is {"<cmd>": value} for the command it parses, returns -ENODATA
 * for a null value and -EPROTO for a reply of the wrong shape, and ORs the reply's flags
 * with its own DTEL_F_* findings into the result's flags. Values that DPDK sends as u64 are
 * parsed exactly, above INT64_MAX included; a negative or non-integer counter is -EPROTO
 * unless the function says it skips such entries.
 */

/** Parse a greeting datagram. -EPROTO when version, pid or max_output_len is missing, not of
 * its type, or out of range (max_output_len 0 or above DTEL_MAX_OUTPUT_LEN_LIMIT). */
int dtel_parse_greeting(const char *json, size_t len, struct dtel_greeting *ret);

/**
 * The DPDK release in a greeting's version string ("DPDK 24.11.6", "DPDK 26.07.0-rc1") as
 * one number, year * 10000 + month * 100 + patch (241106), so that features can be compared
 * with `>=`: 230300 is 23.03. Returns -EINVAL when @version does not start with
 * "DPDK <year>.<month>" (an application of an unknown kind: assume the oldest behaviour).
 */
int dtel_dpdk_version(const char *version);

/**
 * /ethdev/list: the port ids. On success *ret_ids is a malloc'ed array owned by the caller
 * (free()), or NULL for an empty list; returns the count.
 */
int dtel_parse_port_list(const struct dtel_reply *reply, uint16_t **ret_ids);

/** Entries of each per-queue array kept by dtel_parse_port_stats (DPDK's default is 16). */
#define DTEL_QUEUE_STATS_MAX 64

/** /ethdev/stats,<port>. */
struct dtel_port_stats {
	uint64_t ipackets, opackets, ibytes, obytes, imissed, ierrors, oerrors, rx_nombuf;
	unsigned int nb_queues; /**< entries in the q_* arrays; 0 when absent (DPDK >= 25.11) */
	uint64_t q_ipackets[DTEL_QUEUE_STATS_MAX];
	uint64_t q_opackets[DTEL_QUEUE_STATS_MAX];
	uint64_t q_ibytes[DTEL_QUEUE_STATS_MAX];
	uint64_t q_obytes[DTEL_QUEUE_STATS_MAX];
	uint64_t q_errors[DTEL_QUEUE_STATS_MAX];
	unsigned int flags;
};
/** -EPROTO when one of the eight counters is missing or not a u64. */
int dtel_parse_port_stats(const struct dtel_reply *reply, struct dtel_port_stats *ret);

/** One extended counter. */
struct dtel_xstat {
	char name[DTEL_STRING_MAX];
	uint64_t value;
};
/** /ethdev/xstats,<port>. Owned by the caller; free with dtel_xstats_clear(). */
struct dtel_xstats {
	size_t n;
	struct dtel_xstat *v;
	unsigned int flags; /**< DTEL_F_DICT_FULL at 256 entries; DTEL_F_INVALID when skipping */
	size_t nb_invalid; /**< entries skipped: value not a u64, or name too long */
};
/** Entries whose value is not a u64 are skipped and counted. */
int dtel_parse_xstats(const struct dtel_reply *reply, struct dtel_xstats *ret);
/** Free the entries of @x and zero it. Accepts NULL. */
void dtel_xstats_clear(struct dtel_xstats *x);

/**
 * The per-queue counters among extended counters: ethdev's generic rx_q<N>_packets,
 * rx_q<N>_bytes, rx_q<N>_errors, tx_q<N>_packets and tx_q<N>_bytes (from DPDK 25.11 the only
 * source of per-queue counters: /ethdev/stats lost its q_* arrays) into the q_* arrays of
 * *st, as /ethdev/stats of earlier releases fills them (q_errors: rx errors). Sets
 * st->nb_queues to one more than the highest queue found below DTEL_QUEUE_STATS_MAX (0: none)
 * and leaves the other fields of *st alone; counters absent from @x are 0 (hide_zero=true
 * leaves out exactly the counters that are 0). Returns nb_queues; -EINVAL for NULL.
 */
int dtel_xstats_queue_stats(const struct dtel_xstats *x, struct dtel_port_stats *st);

/**
 * What /ethdev/stats,<port> says, from the reply to /ethdev/xstats,<port> of the same port:
 * ethdev puts its basic counters first in every xstats reply (rx_good_packets,
 * tx_good_packets, rx_good_bytes, tx_good_bytes, rx_missed_errors, rx_errors, tx_errors,
 * rx_mbuf_allocation_errors: lib/ethdev/rte_ethdev.c, eth_dev_stats_strings and
 * eth_basic_stats_get, read from the same rte_eth_stats_get() as /ethdev/stats), then, for
 * drivers with RTE_ETH_DEV_AUTOFILL_QUEUE_XSTATS, the per-queue ones that
 * dtel_xstats_queue_stats() reads. Fills all of *st: the eight counters from the first entry
 * of each name, the q_* arrays and nb_queues as dtel_xstats_queue_stats() does, flags from
 * x->flags. Returns nb_queues; -ENOENT when one of the eight names is missing (a reply of
 * something else than ethdev, or completed by dtel_xstats_fill_hidden() with a list that
 * lacks one), -EINVAL for NULL; *st untouched on failure.
 */
int dtel_xstats_port_stats(const struct dtel_xstats *x, struct dtel_port_stats *st);

/**
 * Complete the reply to "/ethdev/xstats,<port>,hide_zero=true" (DPDK >= 23.03 leaves out each
 * counter whose value is 0 and keeps the order of the others; lib/ethdev/
 * rte_ethdev_telemetry.c, eth_dev_handle_port_xstats) with @known, the counters of an earlier
 * reply of the port: each name of @known that @x lacks is put back with the value 0, in
 * @known's order; names of @x that @known lacks keep their place. Returns the new x->n, or
 * -ENOMEM / -EINVAL with @x untouched.
 */
int dtel_xstats_fill_hidden(struct dtel_xstats *x, const struct dtel_xstats *known);

/** Link speed DPDK reports when it does not know it (RTE_ETH_SPEED_NUM_UNKNOWN). */
#define DTEL_SPEED_UNKNOWN UINT32_MAX

enum dtel_duplex { DTEL_DUPLEX_UNKNOWN = 0, DTEL_DUPLEX_HALF, DTEL_DUPLEX_FULL };

/** /ethdev/link_status,<port>. DPDK sends speed and duplex only when the link is up. */
struct dtel_link {
	bool up;
	uint64_t speed_mbps; /**< 0 when down; DTEL_SPEED_UNKNOWN when unknown */
	enum dtel_duplex duplex;
	unsigned int flags;
};
/** -EPROTO when status is not "UP" or "DOWN". */
int dtel_parse_link(const struct dtel_reply *reply, struct dtel_link *ret);

/** Name of a duplex value: "full-duplex", "half-duplex" or "unknown". */
const char *dtel_duplex_name(enum dtel_duplex duplex);

/** /ethdev/info,<port> (the fields every DPDK >= 21.11 has; others are ignored). */
struct dtel_port_info {
	char name[DTEL_STRING_MAX]; /**< device name, for example "net_null0" or a PCI address */
	uint16_t port_id;
	int state;
	unsigned int nb_rx_queues, nb_tx_queues;
	unsigned int mtu;
	char mac_addr[32];
	int numa_node;
	bool promiscuous;
	bool dev_started;
	uint64_t dev_flags; /**< an integer before DPDK 23.03, a hex string since: both accepted */
	unsigned int flags;
};
/** -EPROTO when name or port_id is missing. */
int dtel_parse_port_info(const struct dtel_reply *reply, struct dtel_port_info *ret);

/** /eal/params: what the application's EAL was started with. */
struct dtel_eal_params {
	char app[DTEL_STRING_MAX]; /**< argv[0] without its directory */
	char file_prefix[DTEL_PATH_MAX]; /**< --file-prefix, or "rte" */
	char lcores[DTEL_STRING_MAX]; /**< the -l, --lcores or -c argument as given, or "" */
	bool in_memory; /**< --in-memory or --no-shconf: several can share a prefix (:N sockets) */
	bool no_huge;
	unsigned int flags;
};
int dtel_parse_eal_params(const struct dtel_reply *reply, struct dtel_eal_params *ret);
/**
 * /eal/params as the list of the application's EAL arguments, argv[0] first (for the
 * arguments of a --vdev, say). On success *ret_argv is a malloc'ed array owned by the caller
 * (free()), or NULL for an empty list; returns the count. An argument that is not a string
 * of at most DTEL_STRING_MAX - 1 bytes is "" (DPDK cuts longer ones itself).
 */
int dtel_parse_eal_argv(const struct dtel_reply *reply, char (**ret_argv)[DTEL_STRING_MAX]);

/** Words of struct dtel_eal_lcore_info's cpuset: CPUs 0 to 1023. */
#define DTEL_CPUSET_WORDS 16

/** /eal/lcore/info,<id> (DPDK 23.03 and later; cycles only when the application reports
 * them through rte_lcore_register_usage_cb). */
struct dtel_eal_lcore_info {
	unsigned int lcore_id;
	int socket;
	char role[32]; /**< "RTE", "SERVICE", "NON_EAL", ... */
	/** The CPUs of "cpuset": bit c of word c / 64 for CPU c (CPUs from 1024 left out). */
	uint64_t cpuset[DTEL_CPUSET_WORDS];
	bool has_cycles;
	uint64_t total_cycles, busy_cycles;
	unsigned int flags;
};
int dtel_parse_eal_lcore_info(const struct dtel_reply *reply, struct dtel_eal_lcore_info *ret);

/** Type of a value in a generic dict. */
enum dtel_value_type {
	DTEL_VALUE_U64, /**< an integer >= 0 (exact up to UINT64_MAX) */
	DTEL_VALUE_I64, /**< a negative integer */
	DTEL_VALUE_DOUBLE,
	DTEL_VALUE_STRING,
	DTEL_VALUE_BOOL,
	DTEL_VALUE_NULL,
};

/** Longest key of a generic dict entry, NUL included (nested keys are joined with '.'). */
#define DTEL_KEY_MAX 256

/** One entry of a generic dict. */
struct dtel_entry {
	char key[DTEL_KEY_MAX];
	enum dtel_value_type type;
	union {
		uint64_t u64;
		int64_t i64;
		double d;
		bool b;
	} v;
	char str[DTEL_STRING_MAX]; /**< for DTEL_VALUE_STRING */
};

/** A generic dict, owned by the caller; free with dtel_dict_clear(). */
struct dtel_dict {
	size_t n;
	struct dtel_entry *v;
	unsigned int flags;
	size_t nb_invalid; /**< entries skipped: key or string too long */
};

/**
 * Any reply whose value is a dict or an array (@cmd: the command it answers, "/cmd" without
 * params; NULL takes whatever the reply's key is). Nested dicts and arrays are flattened into
 * keys joined with '.': {"a":{"b":1},"q":[5,6]} gives "a.b"=1, "q.0"=5, "q.1"=6, and the
 * array ["x","y"] gives "0"="x", "1"="y". Nesting deeper than 8 levels is -EPROTO.
 */
int dtel_parse_dict(const struct dtel_reply *reply, const char *cmd, struct dtel_dict *ret);
/** Free the entries of @d and zero it. Accepts NULL. */
void dtel_dict_clear(struct dtel_dict *d);
/** The entry with key @key, or NULL. */
const struct dtel_entry *dtel_dict_find(const struct dtel_dict *d, const char *key);

/* ------------------------------------------------------------------------------------------
 * The numbers of any reply (for commands the library has no parser for)
 */

/** One number of a reply, named by dtel_parse_numbers(). */
struct dtel_number {
	char key[DTEL_KEY_MAX];
	enum dtel_value_type type; /**< DTEL_VALUE_U64, DTEL_VALUE_I64 or DTEL_VALUE_DOUBLE */
	union {
		uint64_t u64; /**< exact up to UINT64_MAX */
		int64_t i64; /**< a negative integer */
		double d; /**< a number with a fraction or an exponent */
	} v;
};

/** The numbers of a reply, owned by the caller; free with dtel_numbers_clear(). */
struct dtel_numbers {
	size_t n;
	struct dtel_number *v;
	unsigned int flags; /**< the reply's DTEL_F_*, and DTEL_F_INVALID when nb_invalid > 0 */
	size_t nb_other; /**< leaves that are not numbers (strings, true, false, null) */
	size_t nb_invalid; /**< numbers left out: key too long, or an integer beyond 64 bits */
	/** A hash of every leaf's key and whether it is a number, in order: two replies of the
	 * same shape (the same keys, numbers where numbers were) have the same one. */
	uint64_t shape;
};

/**
 * Every number of any reply (@cmd: the command it answers, without params; NULL: any), with
 * a key that names where it sits, the same at every read of the same shape:
 *   - dict members by their key, array entries by their index, joined with '.':
 *     {"a":{"b":1},"q":[5,6]} gives "a.b"=1, "q.0"=5, "q.1"=6; a reply that is one number
 *     gives the key "";
 *   - columnar replies (dpdktel-fwd's /fwd/lcores, DPDK's /eal/lcore/usage): a dict whose
 *     members are all arrays of scalars of one length, one of them (the first) named
 *     "<what>_id" or "<what>_ids" with distinct integers >= 0: the entries of the other
 *     arrays are named by that id instead of their index, "<member>.<what><id>":
 *     {"lcore_id":[1,2],"stalls":[0,3]} gives "stalls.lcore1"=0, "stalls.lcore2"=3, and
 *     the id array itself is not listed.
 * Strings, booleans and nulls are counted in nb_other and not listed. -ENODATA for a null
 * reply, -EPROTO for one that is not JSON or nests deeper than 8 levels, -ENOMEM.
 */
int dtel_parse_numbers(const struct dtel_reply *reply, const char *cmd, struct dtel_numbers *ret);
/** Free the entries of @n and zero it. Accepts NULL. */
void dtel_numbers_clear(struct dtel_numbers *n);

/* ------------------------------------------------------------------------------------------
 * Replies of dpdktel-fwd's own commands (docs/fwd-telemetry.md). The list commands are
 * columnar, like DPDK's /eal/lcore/usage: a dict of index-aligned arrays, one entry per lcore
 * or port, so that 64 of them stay far under the reply limits.
 */

/** Lcore states of /fwd/lcores (state_code), also the lcore_state value the plugins publish. */
enum dtel_lcore_state {
	DTEL_LCORE_STARTING = 0, /**< not classified yet */
	DTEL_LCORE_RUNNING = 1, /**< heartbeat advancing, packets moving */
	DTEL_LCORE_IDLE = 2, /**< heartbeat advancing, nothing to do */
	DTEL_LCORE_STALLED = 3, /**< no heartbeat for the stall threshold */
	DTEL_LCORE_EXITED = 4, /**< its loop function returned */
};
#define DTEL_LCORE_STATE_MAX DTEL_LCORE_EXITED

/** Name of a state: "STARTING", "RUNNING", "IDLE", "STALLED", "EXITED" or "UNKNOWN". */
const char *dtel_lcore_state_name(enum dtel_lcore_state state);

/** One forwarding lcore of /fwd/lcores. */
struct dtel_fwd_lcore {
	unsigned int lcore_id;
	enum dtel_lcore_state state;
	uint64_t heartbeat; /**< the lcore's loop counter */
	uint64_t heartbeat_age_us; /**< time since its last loop, at the time of the reply */
	uint64_t stalls; /**< stall episodes so far */
	uint64_t last_change_age_ms; /**< time since its state last changed */
	uint64_t rx_packets, tx_packets;
	uint64_t busy_cycles, total_cycles;
	char ports[DTEL_STRING_MAX]; /**< ports it serves, as an id list ("0-1") */
};

/** /fwd/lcores. Owned by the caller; free with dtel_fwd_lcores_clear(). */
struct dtel_fwd_lcores {
	size_t n;
	struct dtel_fwd_lcore *v;
	unsigned int flags;
};

/**
 * -EPROTO when lcore_id, state_code, heartbeat, heartbeat_age_us or stalls is missing, when
 * the columns differ in length, or a value is of the wrong type; the other columns are
 * optional (0 or "" when absent).
 */
int dtel_parse_fwd_lcores(const struct dtel_reply *reply, struct dtel_fwd_lcores *ret);
/** Free the entries of @l and zero it. Accepts NULL. */
void dtel_fwd_lcores_clear(struct dtel_fwd_lcores *l);

/** One port of /fwd/ports. */
struct dtel_fwd_port {
	uint16_t port_id;
	bool up;
	uint64_t speed_mbps; /**< 0 when down */
	enum dtel_duplex duplex;
	uint64_t link_changes; /**< link state changes the application saw (monotonic) */
	uint64_t last_change_age_ms;
};

/** /fwd/ports. Owned by the caller; free with dtel_fwd_ports_clear(). */
struct dtel_fwd_ports {
	size_t n;
	struct dtel_fwd_port *v;
	unsigned int flags;
};

/** -EPROTO when port_id, link_status or link_changes is missing, or on any inconsistency as
 * for dtel_parse_fwd_lcores(). */
int dtel_parse_fwd_ports(const struct dtel_reply *reply, struct dtel_fwd_ports *ret);
/** Free the entries of @p and zero it. Accepts NULL. */
void dtel_fwd_ports_clear(struct dtel_fwd_ports *p);

/* ------------------------------------------------------------------------------------------
 * Id lists ("0-3,8")
 */

/**
 * Parse a list of ids such as "0-3,8" or "all" into a bitmap of @nbits bits (@bitmap has
 * (nbits + 63) / 64 words, cleared first). "all" sets every bit. Returns the number of ids
 * set; -EINVAL for a syntax error, a reversed range or an empty list, -ERANGE for an id >=
 * @nbits. @errpos, when not NULL, gets the offset of the first bad character: it is written on
 * error only (the one out-parameter that is, hence not named ret_), for the caller's message.
 */
int dtel_parse_id_list(const char *s, uint64_t *bitmap, unsigned int nbits, size_t *errpos);

/**
 * Format the ids set in @bitmap as "0-3,8" into @buf. Returns the length (as snprintf: may be
 * >= @size when cut), "" for no id.
 */
int dtel_format_id_list(const uint64_t *bitmap, unsigned int nbits, char *buf, size_t size);

/* ------------------------------------------------------------------------------------------
 * /eal/lcore/usage (DPDK 23.03 and later)
 */

/** One lcore of /eal/lcore/usage: its cycle counters as the application's callback says. */
struct dtel_eal_lcore_use {
	unsigned int lcore_id;
	uint64_t total_cycles; /**< cycles the lcore's loop ran (stands still when it stalls) */
	uint64_t busy_cycles; /**< of those, cycles with work */
};

/** /eal/lcore/usage. Owned by the caller; free with dtel_eal_lcore_usage_clear(). */
struct dtel_eal_lcore_usage {
	size_t n; /**< 0: the application registered no usage callback (no lcore reports) */
	struct dtel_eal_lcore_use *v;
	unsigned int flags;
};

/**
 * Parse /eal/lcore/usage: every lcore whose application registered a usage callback
 * (rte_lcore_register_usage_cb; testpmd with --record-core-cycles), in one reply.
 * -ENODATA for a null reply (DPDK before 23.03 does not know the command), -EPROTO when
 * lcore_ids, total_cycles or busy_cycles is missing, not an array of integers (>= 0), or
 * when their lengths differ; usage_ratio and other keys are ignored.
 */
int dtel_parse_eal_lcore_usage(const struct dtel_reply *reply, struct dtel_eal_lcore_usage *ret);
/** Free the entries of @u and zero it. Accepts NULL. */
void dtel_eal_lcore_usage_clear(struct dtel_eal_lcore_usage *u);

/* ------------------------------------------------------------------------------------------
 * Version
 */

/**
 * The version of the loaded libdpdktel, as in the project's meson.build ("0.1.0"): the same
 * string the dpdktel CLI (--version), the plugins (logged at init) and the packages report.
 * A static string, never NULL.
 */
const char *dtel_version(void);

#ifdef __cplusplus
}
#endif

#endif /* DTEL_H */
