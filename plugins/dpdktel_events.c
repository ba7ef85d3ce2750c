/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdktel_events: link and lcore health of DPDK applications, as values and as collectd
 * notifications, detected within a few poll intervals (docs/dpdktel_events.md).
 *
 * Each instance has its own poll thread, so a hung application never slows another one.
 * Every PollInterval it reads link states (/fwd/ports where the application has it, else
 * /ethdev/link_status of each port) and lcore health (/fwd/lcores, or /eal/lcore/info on
 * DPDK >= 23.03), through libdpdktel's shared session for the socket. A change is reported
 * only when a second query agrees: DPDK 22.11 can hand a client another client's answer.
 * Notifications go out the moment a change is confirmed; the collectd read callback
 * dispatches the latest state of everything at each interval, and discovers new sockets.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/dtp.h"

#define PLUGIN "dpdktel_events"
#define LOG(level, ...) DTP_LOG(level, PLUGIN, __VA_ARGS__)

/* Configuration ---------------------------------------------------------------------------- */

struct events_opts {
	double poll_interval;
	struct dtp_ports ports;
	bool link, link_confirm, lcores, instance_events, initial_state;
	double flap_window;
	unsigned int flap_threshold;
	double stall_threshold; /* 0: the application's own (/fwd/info stall_ms), else 0.1 s */
	double timeout;
	unsigned int not_responding_polls;
};

static const struct events_opts defaults = {
	.poll_interval = 0.02,
	.ports.all = true,
	.link = true,
	.link_confirm = true,
	.lcores = true,
	.instance_events = true,
	.initial_state = true,
	.flap_window = 10,
	.flap_threshold = 3,
	.stall_threshold = 0,
	.timeout = 0.2,
	.not_responding_polls = 3,
};

#define BOTH (DTP_OPT_GLOBAL | DTP_OPT_INSTANCE)
#define OPT(key, type, field, min, max, expect)                                          \
	{                                                                                \
		key, type, offsetof(struct events_opts, field),                          \
			sizeof(((struct events_opts *)0)->field), BOTH, min, max, expect \
	}
#define BOOL_OPT(key, field) OPT(key, DTP_OPT_BOOL, field, 0, 0, "true or false")

static const struct dtp_option options[] = {
	OPT("PollInterval", DTP_OPT_SECONDS, poll_interval, 0.001, 60,
		"seconds between polls, at least 0.001 and at most 60"),
	OPT("Ports", DTP_OPT_PORTS, ports, 0, 0,
		"\"all\" or a list of port ids below 1024 such as \"0-3,8\""),
	BOOL_OPT("Link", link),
	BOOL_OPT("LinkConfirm", link_confirm),
	OPT("FlapWindow", DTP_OPT_SECONDS, flap_window, 0.01, 86400,
		"seconds, more than 0 and at most 86400"),
	OPT("FlapThreshold", DTP_OPT_UINT, flap_threshold, 2, 1000,
		"a number of link changes from 2 to 1000"),
	BOOL_OPT("Lcores", lcores),
	OPT("StallThreshold", DTP_OPT_SECONDS, stall_threshold, 0.001, 3600,
		"seconds without a heartbeat, more than 0 and at most 3600"),
	BOOL_OPT("InstanceEvents", instance_events),
	BOOL_OPT("ReportInitialState", initial_state),
	OPT("Timeout", DTP_OPT_SECONDS, timeout, 0.001, 60,
		"seconds for one request, more than 0 and at most 60"),
	OPT("NotRespondingPolls", DTP_OPT_UINT, not_responding_polls, 1, 1000,
		"a number of unanswered polls from 1 to 1000"),
};

static struct dtp_conf conf;

/* Runtime state ------------------------------------------------------------------------- */

enum link_state { LINK_UNKNOWN, LINK_UP, LINK_DOWN };

/* What one poll saw of a port. */
struct link_reading {
	uint16_t port;
	enum link_state state;
	uint64_t speed;
	enum dtel_duplex duplex;
	bool have_changes;
	uint64_t changes; /* the application's link_changes */
	bool valid; /* false: listed by the application, but its link could not be read */
};

struct port_ev {
	unsigned int id; /* first: dtp_slot() */
	bool dirty; /* changed in this poll: its values go out at the end of the poll */
	enum link_state state; /* confirmed */
	uint64_t speed;
	enum dtel_duplex duplex;
	uint64_t since_ms; /* when the confirmed state began */
	uint64_t changes; /* dispatched link_changes */
	bool have_app_changes;
	uint64_t app_changes; /* the application's counter at the last reading */
	/* Times of the last changes (at most FlapThreshold of them), for flap detection. Owned
	 * by the poll thread's array; a snapshot's copy must not use it. */
	uint64_t *flap_ms;
	unsigned int nflaps;
	bool flapping;
	char name[DTEL_STRING_MAX]; /* device name, "" until known */
};

struct lcore_ev {
	unsigned int id; /* first: dtp_slot() */
	bool dirty; /* as for ports */
	bool seen; /* in this poll's reading */
	enum dtel_lcore_state state; /* confirmed */
	uint64_t since_ms;
	uint64_t age_us; /* heartbeat age at the last reading */
	uint64_t stalls;
	/* For /eal/lcore/info, where there is no heartbeat: cycles of the last reading and of
	 * the one before, and when they last advanced. */
	uint64_t total, prev_total, busy, advanced_ms;
};

/* What the read callback dispatches: a copy the poll thread publishes after each poll. */
struct snapshot {
	bool polled; /* false until the first poll: nothing is known to dispatch */
	bool up;
	bool not_responding;
	uint64_t restarts, sent, failed, discarded, invalid, truncated;
	struct port_ev *ports;
	size_t nports;
	struct lcore_ev *lcores;
	size_t nlcores;
};

struct ev_instance {
	struct dtp_target t;
	const struct events_opts *o;
	bool discovered;

	pthread_t thread;
	bool running; /* the poll thread was started */
	pthread_mutex_t lock; /* stop, shared with shutdown */
	/* Held while publishing snap and dispatching this instance's values, the time taken
	 * inside: values of one identifier from the poll thread and the read callback then
	 * never go out of order, and a read never sends a state older than a change. */
	pthread_mutex_t dispatch_lock;
	pthread_cond_t wake;
	bool stop;
	struct snapshot snap; /* under dispatch_lock (and lock) */

	/* Values above INT64_MAX that collectd could not take, counted by whichever thread
	 * dispatched them (atomic); added to telemetry_requests/invalid. */
	uint64_t range_invalid;

	/* Everything below belongs to the poll thread alone. */
	bool up; /* confirmed: the application answers */
	bool announced_gone;
	bool not_responding; /* announced: alive, but its polls go unanswered */
	unsigned int fails; /* consecutive polls refused (no socket, stale, closed, garbage) */
	uint64_t gone_ms;
	unsigned int unanswered; /* consecutive polls sent and not answered in time */
	uint64_t unanswered_ms; /* when the first of them began */
	bool main_stalled; /* announced: the main lcore no longer checks the links */
	uint64_t main_stalled_ms;
	unsigned int main_lcore;
	bool have_caps;
	bool caps_again; /* the command list came from a starting application: read it again */
	uint64_t caps_again_ms; /* ... at this time */
	bool has_fwd_ports, has_fwd_lcores, has_eal_lcore;
	bool has_link_check_age; /* /fwd/info reports link_check_age_ms */
	int poll_err; /* the connection error that ended this poll, 0: none yet */
	bool said_links_only;
	uint64_t stall_us; /* in force for lcores */
	struct port_ev *ports;
	size_t nports;
	struct lcore_ev *lcores;
	size_t nlcores;
};

static pthread_mutex_t instances_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ev_instance **instances;
static size_t ninstances;

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* "2.5 s", "340 ms", "3 min 2 s": how long a state lasted. */
static const char *
duration(uint64_t ms, char *buf, size_t size)
{
	if (ms < 1000)
		snprintf(buf, size, "%" PRIu64 " ms", ms);
	else if (ms < 60000)
		snprintf(buf, size, "%.1f s", (double)ms / 1000.0);
	else
		snprintf(buf, size, "%" PRIu64 " min %" PRIu64 " s", ms / 60000, (ms / 1000) % 60);
	return buf;
}

static const char *
link_word(enum link_state s)
{
	return s == LINK_UP ? "up" : s == LINK_DOWN ? "down" : "unknown";
}

/* Values ----------------------------------------------------------------------------------- */

static void
gauge(const struct dtp_id *id, const char *type, double v)
{
	dtp_gauge(id, type, NULL, &v, 1);
}

/* Runs on the poll thread and in the read callback: the count it keeps is atomic. */
static void
derive(struct ev_instance *ei, const struct dtp_id *id, const char *type, const char *ti,
	uint64_t v)
{
	if (dtp_derive(id, type, ti, &v, 1) == -ERANGE)
		__atomic_fetch_add(&ei->range_invalid, 1, __ATOMIC_RELAXED);
}

static void
dispatch_port_at(struct ev_instance *ei, const struct port_ev *p, cdtime_t now)
{
	struct dtp_id id;

	if (p->state == LINK_UNKNOWN)
		return;
	dtp_id_port(&id, PLUGIN, ei->t.name, p->id, now);
	gauge(&id, "link_status", p->state == LINK_UP ? 1 : 0);
	if (p->speed != DTEL_SPEED_UNKNOWN)
		gauge(&id, "link_speed", p->state == LINK_UP ? (double)p->speed : 0);
	derive(ei, &id, "link_changes", NULL, p->changes);
	gauge(&id, "link_flapping", p->flapping ? 1 : 0);
}

static void
dispatch_lcore_at(struct ev_instance *ei, const struct lcore_ev *l, cdtime_t now)
{
	struct dtp_id id;

	dtp_id_lcore(&id, PLUGIN, ei->t.name, l->id, now);
	gauge(&id, "lcore_state", l->state);
	gauge(&id, "heartbeat_age", (double)l->age_us / 1e6);
	derive(ei, &id, "stalls", NULL, l->stalls);
}

static void
dispatch_instance_at(struct ev_instance *ei, const struct snapshot *sn, cdtime_t now)
{
	struct dtp_id id;

	dtp_id_instance(&id, PLUGIN, ei->t.name, now);
	gauge(&id, "up", sn->up ? 1 : 0);
	gauge(&id, "not_responding", sn->not_responding ? 1 : 0);
	derive(ei, &id, "restarts", NULL, sn->restarts);
	derive(ei, &id, "telemetry_requests", "sent", sn->sent);
	derive(ei, &id, "telemetry_requests", "failed", sn->failed);
	derive(ei, &id, "telemetry_requests", "discarded", sn->discarded);
	derive(ei, &id, "telemetry_requests", "invalid",
		sn->invalid + __atomic_load_n(&ei->range_invalid, __ATOMIC_RELAXED));
	derive(ei, &id, "telemetry_requests", "truncated", sn->truncated);
}

/* Notifications -------------------------------------------------------------------------- */

/* A notification about port p; @what is the message after "Link <what> on <inst> port N". */
static void
notify_port(struct ev_instance *ei, const struct port_ev *p, int severity, const char *old,
	const char *new, int64_t duration_ms, const char *what, const char *detail)
{
	struct dtp_meta meta = DTP_META_NONE;
	struct dtp_id id;

	dtp_id_port(&id, PLUGIN, ei->t.name, p->id, cdtime());
	meta.port_id = p->id;
	meta.name = p->name[0] ? p->name : NULL;
	meta.old_state = old;
	meta.new_state = new;
	meta.duration_ms = duration_ms;
	dtp_notify(&id, severity, "link_status", NULL, &meta, "Link %s on %s port %u%s", what,
		ei->t.name, p->id, detail);
}

static void
notify_down(struct ev_instance *ei, const struct port_ev *p, enum link_state old, uint64_t up_ms)
{
	char detail[DTEL_STRING_MAX + 8];

	snprintf(detail, sizeof(detail), " (%s)", p->name[0] ? p->name : "?");
	notify_port(ei, p, NOTIF_FAILURE, link_word(old), "down",
		old == LINK_UP ? (int64_t)up_ms : -1, "down", detail);
}

static void
notify_up(struct ev_instance *ei, const struct port_ev *p, enum link_state old, uint64_t down_ms)
{
	char detail[128], d[32];

	if (old == LINK_DOWN)
		snprintf(detail, sizeof(detail), ": %" PRIu64 " Mbps %s after %s down", p->speed,
			dtel_duplex_name(p->duplex), duration(down_ms, d, sizeof(d)));
	else
		snprintf(detail, sizeof(detail), ": %" PRIu64 " Mbps %s", p->speed,
			dtel_duplex_name(p->duplex));
	notify_port(ei, p, NOTIF_OKAY, link_word(old), "up",
		old == LINK_DOWN ? (int64_t)down_ms : -1, "up", detail);
}

/* Instance ----------------------------------------------------------------------------- */

static void notify_instance(struct ev_instance *ei, int severity, const char *old, const char *new,
	int64_t duration_ms, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static void
notify_instance(struct ev_instance *ei, int severity, const char *old, const char *new,
	int64_t duration_ms, const char *fmt, ...)
{
	struct dtp_meta meta = DTP_META_NONE;
	char msg[NOTIF_MAX_MSG_LEN];
	struct dtp_id id;
	va_list ap;

	if (!ei->o->instance_events)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	dtp_id_instance(&id, PLUGIN, ei->t.name, cdtime());
	meta.name = ei->t.name;
	meta.old_state = old;
	meta.new_state = new;
	meta.duration_ms = duration_ms;
	dtp_notify(&id, severity, "up", NULL, &meta, "%s", msg);
}

static void
ports_clear(struct ev_instance *ei)
{
	for (size_t i = 0; i < ei->nports; i++)
		free(ei->ports[i].flap_ms);
	ei->nports = 0;
}

/* Forget every port and lcore: they belong to a process that is gone. */
static void
forget_state(struct ev_instance *ei)
{
	ports_clear(ei);
	ei->nlcores = 0;
	ei->have_caps = false;
	ei->said_links_only = false;
	ei->main_stalled = false;
}

static const char *
instance_word(const struct ev_instance *ei)
{
	return ei->not_responding ? "not_responding" : ei->announced_gone ? "gone" : "up";
}

/*
 * A poll refused at the connection level (no socket, stale socket, closed, garbage), or
 * unanswered by a process that has exited. Two in a row: one alone is not an outage.
 */
static void
instance_refused(struct ev_instance *ei, uint64_t t)
{
	ei->unanswered = 0;
	if (ei->fails++ == 0)
		ei->gone_ms = t;
	if (ei->fails < 2 || ei->announced_gone || (!ei->up && !ei->not_responding))
		return;
	notify_instance(ei, NOTIF_FAILURE, instance_word(ei), "gone", -1,
		"DPDK application %s is gone", ei->t.name);
	ei->up = false;
	ei->not_responding = false;
	ei->announced_gone = true;
}

/*
 * A poll that was sent (or whose connection was accepted) and not answered within Timeout,
 * begun at @began. A process that still runs is hung, not gone: after NotRespondingPolls of
 * them in a row it is announced as not responding.
 */
static void
instance_unanswered(struct ev_instance *ei, uint64_t t, uint64_t began)
{
	char d[32];

	if (dtp_target_exited(&ei->t)) {
		instance_refused(ei, t);
		return;
	}
	ei->fails = 0;
	if (ei->unanswered++ == 0)
		ei->unanswered_ms = began;
	if (ei->unanswered < ei->o->not_responding_polls || ei->not_responding || !ei->t.ever_up)
		return;
	notify_instance(ei, NOTIF_FAILURE, instance_word(ei), "not_responding", -1,
		"DPDK application %s is not responding (pid %ld alive, no reply for %s)",
		ei->t.name, ei->t.pid, duration(t - ei->unanswered_ms, d, sizeof(d)));
	ei->up = false;
	ei->not_responding = true;
}

/* A poll succeeded: back after an outage, and/or restarted. */
static void
instance_answered(struct ev_instance *ei, uint64_t t)
{
	long old_pid;
	bool restarted = dtp_target_restarted(&ei->t, &old_pid);
	char d[32];

	if (!ei->up && ei->announced_gone)
		notify_instance(ei, NOTIF_OKAY, "gone", "up", (int64_t)(t - ei->gone_ms),
			"DPDK application %s is back after %s", ei->t.name,
			duration(t - ei->gone_ms, d, sizeof(d)));
	else if (ei->not_responding)
		notify_instance(ei, NOTIF_OKAY, "not_responding", "up",
			(int64_t)(t - ei->unanswered_ms),
			"DPDK application %s answers again after %s", ei->t.name,
			duration(t - ei->unanswered_ms, d, sizeof(d)));
	if (restarted) {
		char a[24], b[24];

		snprintf(a, sizeof(a), "%ld", old_pid);
		snprintf(b, sizeof(b), "%ld", ei->t.pid);
		notify_instance(ei, NOTIF_WARNING, a, b, -1,
			"DPDK application %s restarted (pid %ld → %ld)", ei->t.name, old_pid,
			ei->t.pid);
		forget_state(ei);
	}
	ei->up = true;
	ei->announced_gone = false;
	ei->not_responding = false;
	ei->fails = 0;
	ei->unanswered = 0;
}

/* Requests ----------------------------------------------------------------------------- */

static bool connection_error(int err);

/*
 * Every request of a poll goes through here. The first connection-level error ends the poll:
 * later requests of the same poll are not sent and return that error, so that a hung
 * application delays a poll by one Timeout at most, and the error stays the one of the
 * command that caused it.
 */
static int
query(struct ev_instance *ei, const char *cmd, struct dtel_reply *r)
{
	int ret;

	if (ei->poll_err != 0)
		return ei->poll_err;
	ret = dtp_query(&ei->t, cmd, r);
	if (connection_error(ret))
		ei->poll_err = ret;
	return ret;
}

static int
query_id(struct ev_instance *ei, const char *name, unsigned int id, struct dtel_reply *r)
{
	char cmd[96];

	snprintf(cmd, sizeof(cmd), "%s,%u", name, id);
	return query(ei, cmd, r);
}

/* A reply that arrived but did not parse: counted and logged once (see dtp_bad_reply). */
static int
parsed(struct ev_instance *ei, const char *what, int ret)
{
	if (ret < 0 && ret != -ENODATA && ret != -ENOMEM)
		dtp_bad_reply(&ei->t, what, ret, 1);
	return ret;
}

static bool
connection_error(int err)
{
	return err < 0 && err != -ENODATA && err != -EMSGSIZE && err != -EPROTO && err != -EINVAL &&
		err != -ENOMEM;
}

/* How often the command list of a starting application is read again. */
#define CAPS_AGAIN_MS 100

/*
 * What the application offers, from its command list, once per process; again every
 * CAPS_AGAIN_MS while it is starting and has none of its own commands yet (it registers
 * them after the EAL opened the socket).
 */
/* What /fwd/info says of the forwarder's own thresholds and its main lcore. */
struct fwd_info {
	uint64_t stall_ms; /* 0: not said */
	uint64_t link_poll_ms;
	bool has_age;
	uint64_t link_check_age_ms; /* since the main lcore last checked the links */
	unsigned int main_lcore;
};

static uint64_t
dict_u64(const struct dtel_dict *d, const char *key, bool *ret_found)
{
	const struct dtel_entry *e = dtel_dict_find(d, key);
	bool found = e != NULL && e->type == DTEL_VALUE_U64;

	if (ret_found != NULL)
		*ret_found = found;
	return found ? e->v.u64 : 0;
}

static int
read_fwd_info(struct ev_instance *ei, struct fwd_info *out)
{
	struct dtel_reply r;
	struct dtel_dict d;
	int ret = query(ei, "/fwd/info", &r);

	if (ret < 0)
		return ret;
	ret = parsed(ei, "/fwd/info", dtel_parse_dict(&r, "/fwd/info", &d));
	dtel_reply_release(&r);
	if (ret < 0)
		return ret;
	out->stall_ms = dict_u64(&d, "stall_ms", NULL);
	out->link_poll_ms = dict_u64(&d, "link_poll_ms", NULL);
	out->link_check_age_ms = dict_u64(&d, "link_check_age_ms", &out->has_age);
	out->main_lcore = (unsigned int)dict_u64(&d, "main_lcore", NULL);
	dtel_dict_clear(&d);
	return 0;
}

static int
probe_caps(struct ev_instance *ei, uint64_t t)
{
	struct dtel_reply r;
	struct dtel_dict d;
	int ret;

	ret = query(ei, "/", &r);
	if (ret < 0)
		return ret;
	ret = parsed(ei, "/", dtel_parse_dict(&r, "/", &d));
	dtel_reply_release(&r);
	if (ret < 0)
		return 0; /* look again next time */
	ei->has_fwd_ports = ei->has_fwd_lcores = ei->has_eal_lcore = false;
	for (size_t i = 0; i < d.n; i++) {
		ei->has_fwd_ports |= strcmp(d.v[i].str, "/fwd/ports") == 0;
		ei->has_fwd_lcores |= strcmp(d.v[i].str, "/fwd/lcores") == 0;
		ei->has_eal_lcore |= strcmp(d.v[i].str, "/eal/lcore/info") == 0;
	}
	dtel_dict_clear(&d);
	ei->stall_us = (uint64_t)(ei->o->stall_threshold * 1e6);
	ei->has_link_check_age = false;
	if (ei->has_fwd_lcores || ei->has_fwd_ports) {
		struct fwd_info fi;

		if (read_fwd_info(ei, &fi) == 0) {
			/* The application's own threshold, so that both say STALLED together. */
			if (ei->stall_us == 0)
				ei->stall_us = fi.stall_ms * 1000;
			ei->has_link_check_age = fi.has_age;
			ei->main_lcore = fi.main_lcore;
		}
	}
	if (ei->poll_err != 0)
		return ei->poll_err;
	if (ei->stall_us == 0)
		ei->stall_us = 100000;
	ei->have_caps = true;
	ei->caps_again = !ei->has_fwd_ports && !ei->has_fwd_lcores && !ei->has_eal_lcore &&
		dtp_target_young(&ei->t);
	ei->caps_again_ms = t + CAPS_AGAIN_MS;
	if (ei->o->lcores && !ei->has_fwd_lcores && !ei->has_eal_lcore && !ei->said_links_only) {
		ei->said_links_only = true;
		LOG(LOG_INFO,
			"DPDK application '%s' reports no lcore data (no /fwd/lcores, no "
			"/eal/lcore/info): only its links are watched",
			ei->t.name);
	} else if (ei->o->lcores && (ei->has_fwd_lcores || ei->has_eal_lcore) &&
		ei->said_links_only) {
		ei->said_links_only = false;
		LOG(LOG_INFO,
			"DPDK application '%s' now reports lcore data: its lcores are watched",
			ei->t.name);
	}
	return 0;
}

/* Reading links -------------------------------------------------------------------------- */

struct link_set {
	struct link_reading *v;
	size_t n, cap;
};

static struct link_reading *
link_add(struct link_set *s)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		struct link_reading *v = realloc(s->v, cap * sizeof(*v));

		if (v == NULL)
			return NULL;
		s->v = v;
		s->cap = cap;
	}
	return &s->v[s->n++];
}

static int
read_fwd_ports(struct ev_instance *ei, struct link_set *s)
{
	struct dtel_fwd_ports p;
	struct dtel_reply r;
	int ret = query(ei, "/fwd/ports", &r);

	if (ret < 0)
		return ret;
	ret = parsed(ei, "/fwd/ports", dtel_parse_fwd_ports(&r, &p));
	dtel_reply_release(&r);
	if (ret < 0)
		return ret;
	s->n = 0;
	for (size_t i = 0; i < p.n; i++) {
		struct link_reading *lr;

		if (!dtp_ports_has(&ei->o->ports, p.v[i].port_id))
			continue;
		lr = link_add(s);
		if (lr == NULL)
			break;
		*lr = (struct link_reading){.port = p.v[i].port_id,
			.state = p.v[i].up ? LINK_UP : LINK_DOWN,
			.speed = p.v[i].speed_mbps,
			.duplex = p.v[i].duplex,
			.have_changes = true,
			.changes = p.v[i].link_changes,
			.valid = true};
	}
	dtel_fwd_ports_clear(&p);
	return 0;
}

static int
read_one_link(struct ev_instance *ei, uint16_t port, struct link_reading *out)
{
	struct dtel_reply r;
	struct dtel_link l;
	int ret = query_id(ei, "/ethdev/link_status", port, &r);

	if (ret < 0)
		return ret;
	ret = dtel_parse_link(&r, &l);
	dtel_reply_release(&r);
	if (ret < 0) {
		char what[48];

		snprintf(what, sizeof(what), "/ethdev/link_status,%u", port);
		return parsed(ei, what, ret);
	}
	*out = (struct link_reading){.port = port,
		.state = l.up ? LINK_UP : LINK_DOWN,
		.speed = l.speed_mbps,
		.duplex = l.duplex,
		.valid = true};
	return 0;
}

static int
read_ethdev_links(struct ev_instance *ei, struct link_set *s)
{
	struct dtel_reply r;
	uint16_t *ids = NULL;
	int n, ret = query(ei, "/ethdev/list", &r);

	if (ret < 0)
		return ret;
	n = parsed(ei, "/ethdev/list", dtel_parse_port_list(&r, &ids));
	dtel_reply_release(&r);
	if (n < 0)
		return n;
	s->n = 0;
	for (int i = 0; i < n; i++) {
		struct link_reading *lr;

		if (!dtp_ports_has(&ei->o->ports, ids[i]))
			continue;
		lr = link_add(s);
		if (lr == NULL)
			break;
		ret = read_one_link(ei, ids[i], lr);
		if (connection_error(ret)) {
			free(ids);
			return ret;
		}
		/* Listed, but no usable link answer: still there, nothing to apply. */
		if (ret < 0)
			*lr = (struct link_reading){.port = ids[i]};
	}
	free(ids);
	return 0;
}

/* /fwd/ports is the main lcore's snapshot: while that lcore is stalled, ask the ports. */
static int
read_links(struct ev_instance *ei, struct link_set *s)
{
	return ei->has_fwd_ports && !ei->main_stalled ? read_fwd_ports(ei, s)
						      : read_ethdev_links(ei, s);
}

/* Link state machine --------------------------------------------------------------------- */

static struct port_ev *
port_ev(struct ev_instance *ei, uint16_t id, bool *ret_new)
{
	return DTP_SLOT(ei->ports, ei->nports, id, ret_new);
}

/*
 * The device name, for the link-down message, once per port; returns whether the port is
 * started (true when that cannot be told).
 */
static bool
learn_info(struct ev_instance *ei, struct port_ev *p)
{
	struct dtel_port_info info;
	struct dtel_reply r;
	bool started = true;

	if (query_id(ei, "/ethdev/info", p->id, &r) < 0)
		return true;
	if (dtel_parse_port_info(&r, &info) == 0 && info.port_id == p->id) {
		snprintf(p->name, sizeof(p->name), "%s", info.name);
		started = info.dev_started;
	}
	dtel_reply_release(&r);
	return started;
}

static void
learn_name(struct ev_instance *ei, struct port_ev *p)
{
	if (!p->name[0])
		learn_info(ei, p);
}

/*
 * Keep the change times inside the window, at most FlapThreshold of them (older ones cannot
 * change the verdict); true when the port now counts as flapping.
 */
static bool
note_change(struct ev_instance *ei, struct port_ev *p, uint64_t t, uint64_t count)
{
	uint64_t window = (uint64_t)(ei->o->flap_window * 1000);
	unsigned int cap = ei->o->flap_threshold, k = 0;

	if (p->flap_ms == NULL) {
		p->flap_ms = calloc(cap, sizeof(p->flap_ms[0]));
		if (p->flap_ms == NULL)
			return false; /* without memory, no flap detection for this port */
	}
	if (count > cap)
		count = cap;
	for (uint64_t i = 0; i < count; i++) {
		if (p->nflaps == cap)
			memmove(p->flap_ms, p->flap_ms + 1, --p->nflaps * sizeof(p->flap_ms[0]));
		p->flap_ms[p->nflaps++] = t;
	}
	for (unsigned int i = 0; i < p->nflaps; i++)
		if (t - p->flap_ms[i] <= window)
			p->flap_ms[k++] = p->flap_ms[i];
	p->nflaps = k;
	return p->nflaps >= ei->o->flap_threshold;
}

static void
start_flapping(struct ev_instance *ei, struct port_ev *p)
{
	char detail[64];

	p->flapping = true;
	snprintf(detail, sizeof(detail), ": %u changes within %g s", p->nflaps, ei->o->flap_window);
	notify_port(ei, p, NOTIF_WARNING, "stable", "flapping", -1, "flapping", detail);
}

/* Stable for a full window: one notification with the state it settled in. */
static void
check_settled(struct ev_instance *ei, struct port_ev *p, uint64_t t)
{
	char detail[96];

	if (!p->flapping ||
		(p->nflaps > 0 &&
			t - p->flap_ms[p->nflaps - 1] <= (uint64_t)(ei->o->flap_window * 1000)))
		return;
	p->dirty = true;
	p->flapping = false;
	p->nflaps = 0;
	if (p->state == LINK_UP)
		snprintf(detail, sizeof(detail), ": up, %" PRIu64 " Mbps %s", p->speed,
			dtel_duplex_name(p->duplex));
	else
		snprintf(detail, sizeof(detail), ": %s", link_word(p->state));
	notify_port(ei, p, p->state == LINK_UP ? NOTIF_OKAY : NOTIF_FAILURE, "flapping",
		link_word(p->state), -1, "stopped flapping", detail);
}

/* The confirmed state changed from old to p->state. */
static void
link_changed(struct ev_instance *ei, struct port_ev *p, enum link_state old, uint64_t t)
{
	uint64_t lasted = t - p->since_ms;

	p->since_ms = t;
	if (!note_change(ei, p, t, 1) && !p->flapping) {
		if (p->state == LINK_DOWN)
			notify_down(ei, p, old, lasted);
		else
			notify_up(ei, p, old, lasted);
		return;
	}
	if (!p->flapping)
		start_flapping(ei, p);
}

/* The application counted changes that our polls did not see (a down and up in between). */
static void
missed_flaps(struct ev_instance *ei, struct port_ev *p, uint64_t missed, uint64_t t)
{
	char detail[96];

	snprintf(detail, sizeof(detail), ": %" PRIu64 " changes between two polls, now %s", missed,
		link_word(p->state));
	if (note_change(ei, p, t, missed)) {
		if (!p->flapping)
			start_flapping(ei, p);
		return;
	}
	if (!p->flapping)
		notify_port(ei, p, NOTIF_WARNING, link_word(p->state), link_word(p->state), -1,
			"flapped", detail);
}

/* Query the link of r's port again: does it say the same as r? */
static bool
link_again(struct ev_instance *ei, const struct link_reading *r)
{
	struct link_set again = {0};
	struct link_reading one;
	bool agree = false;

	if (!ei->has_fwd_ports || ei->main_stalled)
		return read_one_link(ei, r->port, &one) == 0 && one.state == r->state;
	if (read_fwd_ports(ei, &again) == 0)
		for (size_t i = 0; i < again.n; i++)
			if (again.v[i].port == r->port)
				agree = again.v[i].state == r->state;
	free(again.v);
	return agree;
}

/*
 * The first reading of a port (start, or after a restart): report it once if down. A port
 * the application has not started yet is down without anything being wrong: its state stays
 * unknown until it is started. The link is read again after the port was found started: a
 * port started between the two queries (an application that is starting) was down only
 * because it had not been started yet.
 */
static void
first_reading(struct ev_instance *ei, struct port_ev *p, const struct link_reading *r, uint64_t t)
{
	if (r->state == LINK_DOWN && (!learn_info(ei, p) || !link_again(ei, r))) {
		p->state = LINK_UNKNOWN;
		return;
	}
	p->state = r->state;
	p->speed = r->speed;
	p->duplex = r->duplex;
	p->since_ms = t;
	p->have_app_changes = r->have_changes;
	p->app_changes = r->changes;
	if (r->have_changes)
		p->changes = r->changes;
	if (p->state == LINK_DOWN && ei->o->initial_state)
		notify_down(ei, p, LINK_UNKNOWN, 0);
}

static void
speed_changed(struct ev_instance *ei, struct port_ev *p, const struct link_reading *r)
{
	char detail[160];

	snprintf(detail, sizeof(detail), ": %" PRIu64 " Mbps %s → %" PRIu64 " Mbps %s", p->speed,
		dtel_duplex_name(p->duplex), r->speed, dtel_duplex_name(r->duplex));
	p->speed = r->speed;
	p->duplex = r->duplex;
	if (!p->flapping)
		notify_port(ei, p, NOTIF_WARNING, "up", "up", -1, "speed changed", detail);
}

/* Second query for one port: does it agree with the first reading? */
static bool
confirm_link(struct ev_instance *ei, const struct link_reading *r)
{
	return !ei->o->link_confirm || link_again(ei, r);
}

/* Apply one reading of a port; true when its values changed (they go out with this poll). */
static bool
apply_link(struct ev_instance *ei, const struct link_reading *r, uint64_t t)
{
	uint64_t seen_changes = 0;
	bool fresh, changed = false, state_changed = false;
	struct port_ev *p = port_ev(ei, r->port, &fresh);
	enum link_state old;

	if (p == NULL || !r->valid)
		return false;
	if (fresh || p->state == LINK_UNKNOWN) {
		first_reading(ei, p, r, t);
		return p->state != LINK_UNKNOWN;
	}
	if (r->have_changes && p->have_app_changes && r->changes > p->app_changes)
		seen_changes = r->changes - p->app_changes;
	if (r->state != p->state) {
		if (!confirm_link(ei, r)) {
			ei->t.discarded++; /* contradicted by the next query: not reported */
			return false;
		}
		old = p->state;
		p->state = r->state;
		p->speed = r->speed;
		p->duplex = r->duplex;
		if (p->state == LINK_DOWN)
			learn_name(ei, p);
		/* One change seen; the application may have counted more in between. */
		link_changed(ei, p, old, t);
		if (seen_changes > 1)
			missed_flaps(ei, p, seen_changes - 1, t);
		changed = state_changed = true;
	} else if (seen_changes > 0) {
		missed_flaps(ei, p, seen_changes, t);
		changed = true;
	} else if (p->state == LINK_UP && (r->speed != p->speed || r->duplex != p->duplex)) {
		speed_changed(ei, p, r);
		changed = true;
	}
	if (r->have_changes) {
		p->app_changes = r->changes;
		p->have_app_changes = true;
		p->changes = r->changes;
	} else if (state_changed) {
		p->changes++; /* the application does not count: count what we confirmed */
	}
	check_settled(ei, p, t);
	return changed;
}

static bool
listed(const struct link_set *s, unsigned int port)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].port == port)
			return true;
	return false;
}

/* Ports the application no longer lists: one line, and their values stop. */
static void
drop_unlisted_ports(struct ev_instance *ei, const struct link_set *s)
{
	size_t k = 0;

	for (size_t i = 0; i < ei->nports; i++) {
		struct port_ev *p = &ei->ports[i];

		if (listed(s, p->id)) {
			ei->ports[k++] = *p;
			continue;
		}
		LOG(LOG_INFO,
			"port %u of DPDK application '%s' is no longer listed: its values stop",
			p->id, ei->t.name);
		free(p->flap_ms);
	}
	ei->nports = k;
}

static int
poll_links(struct ev_instance *ei, uint64_t t)
{
	struct link_set s = {0};
	int ret = read_links(ei, &s);

	if (ret == 0) {
		/* A restart must be known before these readings are compared with the old ones. */
		instance_answered(ei, t);
		for (size_t i = 0; i < s.n; i++) {
			if (apply_link(ei, &s.v[i], t)) {
				struct port_ev *p = port_ev(ei, s.v[i].port, NULL);

				if (p != NULL)
					p->dirty = true;
			}
		}
		/* A confirmation query that failed ended the poll: the list may be partial. */
		if (ei->poll_err == 0)
			drop_unlisted_ports(ei, &s);
		for (size_t i = 0; i < ei->nports; i++)
			check_settled(ei, &ei->ports[i], t);
	}
	free(s.v);
	return ret;
}

/* Lcores ----------------------------------------------------------------------------------- */

static struct lcore_ev *
lcore_ev(struct ev_instance *ei, unsigned int id, bool *ret_new)
{
	return DTP_SLOT(ei->lcores, ei->nlcores, id, ret_new);
}

/* The state we report: EXITED as the application says, STALLED by our own threshold. */
static enum dtel_lcore_state
effective_state(const struct ev_instance *ei, const struct dtel_fwd_lcore *c)
{
	if (c->state == DTEL_LCORE_EXITED)
		return DTEL_LCORE_EXITED;
	if (c->heartbeat_age_us >= ei->stall_us)
		return DTEL_LCORE_STALLED;
	/* The heartbeat is back although the application has not reclassified yet. */
	if (c->state == DTEL_LCORE_STALLED)
		return DTEL_LCORE_RUNNING;
	return c->state;
}

static void
notify_lcore(struct ev_instance *ei, const struct lcore_ev *l, enum dtel_lcore_state old,
	uint64_t lasted_ms)
{
	struct dtp_meta meta = DTP_META_NONE;
	char msg[NOTIF_MAX_MSG_LEN], d[32];
	int severity = NOTIF_FAILURE;
	struct dtp_id id;

	if (l->state == DTEL_LCORE_STALLED)
		snprintf(msg, sizeof(msg),
			"lcore %u of %s stalled: no heartbeat for %" PRIu64 " ms", l->id,
			ei->t.name, l->age_us / 1000);
	else if (l->state == DTEL_LCORE_EXITED)
		snprintf(msg, sizeof(msg), "lcore %u of %s exited", l->id, ei->t.name);
	else if (old == DTEL_LCORE_STALLED || old == DTEL_LCORE_EXITED)
		severity = NOTIF_OKAY,
		snprintf(msg, sizeof(msg), "lcore %u of %s recovered after %s", l->id, ei->t.name,
			duration(lasted_ms, d, sizeof(d)));
	else
		return; /* RUNNING <-> IDLE <-> STARTING is no news */
	dtp_id_lcore(&id, PLUGIN, ei->t.name, l->id, cdtime());
	meta.lcore_id = l->id;
	meta.old_state = dtel_lcore_state_name(old);
	meta.new_state = dtel_lcore_state_name(l->state);
	if (severity == NOTIF_OKAY)
		meta.duration_ms = (int64_t)lasted_ms;
	dtp_notify(&id, severity, "lcore_state", NULL, &meta, "%s", msg);
}

static bool
is_bad(enum dtel_lcore_state s)
{
	return s == DTEL_LCORE_STALLED || s == DTEL_LCORE_EXITED;
}

static int read_fwd_lcores(struct ev_instance *ei, struct dtel_fwd_lcores *out);
static int read_eal_lcore(struct ev_instance *ei, unsigned int id, struct dtel_eal_lcore_info *li);

/* /fwd/lcores again: does it say the same of lcore @id? */
static bool
fwd_lcore_again(struct ev_instance *ei, unsigned int id, enum dtel_lcore_state want)
{
	struct dtel_fwd_lcores l;
	bool agree = false;

	if (read_fwd_lcores(ei, &l) < 0)
		return false;
	for (size_t i = 0; i < l.n; i++)
		if (l.v[i].lcore_id == id)
			agree = effective_state(ei, &l.v[i]) == want;
	dtel_fwd_lcores_clear(&l);
	return agree;
}

/*
 * /eal/lcore/info again: stalled when its cycles still have not moved since the reading,
 * recovered when they moved on from where they stood still.
 */
static bool
eal_lcore_again(struct ev_instance *ei, const struct lcore_ev *l, enum dtel_lcore_state want)
{
	struct dtel_eal_lcore_info li;

	if (read_eal_lcore(ei, l->id, &li) < 0)
		return false;
	return want == DTEL_LCORE_STALLED ? li.total_cycles == l->total
					  : li.total_cycles != l->prev_total;
}

/* A transition into or out of a bad state is confirmed by a second query to its source. */
static bool
confirm_lcore(struct ev_instance *ei, const struct lcore_ev *l, enum dtel_lcore_state want)
{
	return ei->has_fwd_lcores ? fwd_lcore_again(ei, l->id, want) : eal_lcore_again(ei, l, want);
}

/* Apply one reading of an lcore; true when its values should go out now. */
static bool
apply_lcore(struct ev_instance *ei, const struct dtel_fwd_lcore *c, uint64_t t)
{
	enum dtel_lcore_state s = effective_state(ei, c), old;
	bool fresh;
	struct lcore_ev *l = lcore_ev(ei, c->lcore_id, &fresh);

	if (l == NULL)
		return false;
	l->seen = true;
	l->age_us = c->heartbeat_age_us;
	l->stalls = c->stalls;
	if (fresh) {
		l->state = s;
		l->since_ms = t;
		if (is_bad(s) && ei->o->initial_state)
			notify_lcore(ei, l, DTEL_LCORE_STARTING, 0);
		return true;
	}
	if (s == l->state)
		return false;
	if ((is_bad(s) || is_bad(l->state)) && !confirm_lcore(ei, l, s)) {
		ei->t.discarded++;
		return false;
	}
	old = l->state;
	l->state = s;
	notify_lcore(ei, l, old, t - l->since_ms);
	l->since_ms = t;
	return true;
}

static int
read_fwd_lcores(struct ev_instance *ei, struct dtel_fwd_lcores *out)
{
	struct dtel_reply r;
	int ret = query(ei, "/fwd/lcores", &r);

	if (ret < 0)
		return ret;
	ret = parsed(ei, "/fwd/lcores", dtel_parse_fwd_lcores(&r, out));
	dtel_reply_release(&r);
	return ret;
}

/* /eal/lcore/info of lcore @id; an answer about another lcore (a swapped reply) is refused. */
static int
read_eal_lcore(struct ev_instance *ei, unsigned int id, struct dtel_eal_lcore_info *li)
{
	struct dtel_reply r;
	int ret = query_id(ei, "/eal/lcore/info", id, &r);

	if (ret < 0)
		return ret;
	ret = dtel_parse_eal_lcore_info(&r, li);
	dtel_reply_release(&r);
	if (ret < 0)
		return parsed(ei, "/eal/lcore/info", ret);
	if (li->lcore_id != id) {
		ei->t.discarded++;
		return -EPROTO;
	}
	return 0;
}

/*
 * DPDK >= 23.03 without the forwarder: an lcore whose cycle counters stop advancing for the
 * stall threshold is STALLED (only for applications that report cycles at all).
 */
static int
read_eal_lcores(struct ev_instance *ei, struct dtel_fwd_lcores *out, uint64_t t)
{
	struct dtel_eal_lcore_info li;
	struct dtel_reply r;
	struct dtel_dict ids;
	int ret = query(ei, "/eal/lcore/list", &r);

	if (ret < 0)
		return ret;
	ret = parsed(ei, "/eal/lcore/list", dtel_parse_dict(&r, "/eal/lcore/list", &ids));
	dtel_reply_release(&r);
	if (ret < 0)
		return ret;
	memset(out, 0, sizeof(*out));
	out->v = calloc(ids.n + 1, sizeof(*out->v));
	for (size_t i = 0; out->v != NULL && i < ids.n && ei->poll_err == 0; i++) {
		struct dtel_fwd_lcore *c = &out->v[out->n];
		struct lcore_ev *l;
		bool fresh;

		if (ids.v[i].type != DTEL_VALUE_U64 ||
			read_eal_lcore(ei, (unsigned int)ids.v[i].v.u64, &li) < 0 ||
			!li.has_cycles || strcmp(li.role, "RTE") != 0)
			continue;
		l = lcore_ev(ei, li.lcore_id, &fresh);
		if (l == NULL)
			continue;
		if (fresh || li.total_cycles != l->total)
			l->advanced_ms = t;
		c->lcore_id = li.lcore_id;
		c->heartbeat_age_us = (t - l->advanced_ms) * 1000;
		c->state = li.busy_cycles != l->busy ? DTEL_LCORE_RUNNING : DTEL_LCORE_IDLE;
		l->prev_total = fresh ? li.total_cycles : l->total;
		l->total = li.total_cycles;
		l->busy = li.busy_cycles;
		out->n++;
	}
	dtel_dict_clear(&ids);
	if (out->v == NULL)
		return -ENOMEM;
	return ei->poll_err;
}

/* Lcores the application no longer reports: one line, and their values stop. */
static void
drop_unseen_lcores(struct ev_instance *ei)
{
	size_t k = 0;

	for (size_t i = 0; i < ei->nlcores; i++) {
		if (ei->lcores[i].seen) {
			ei->lcores[k++] = ei->lcores[i];
			continue;
		}
		LOG(LOG_INFO,
			"lcore %u of DPDK application '%s' is no longer reported: its values stop",
			ei->lcores[i].id, ei->t.name);
	}
	ei->nlcores = k;
}

static int
poll_lcores(struct ev_instance *ei, uint64_t t)
{
	struct dtel_fwd_lcores l = {0};
	int ret;

	if (ei->has_fwd_lcores)
		ret = read_fwd_lcores(ei, &l);
	else if (ei->has_eal_lcore)
		ret = read_eal_lcores(ei, &l, t);
	else
		return 0;
	if (ret < 0) {
		dtel_fwd_lcores_clear(&l);
		return ret;
	}
	instance_answered(ei, t);
	for (size_t i = 0; i < ei->nlcores; i++)
		ei->lcores[i].seen = false;
	for (size_t i = 0; i < l.n; i++) {
		if (apply_lcore(ei, &l.v[i], t)) {
			struct lcore_ev *c = lcore_ev(ei, l.v[i].lcore_id, NULL);

			if (c != NULL)
				c->dirty = true;
		}
	}
	dtel_fwd_lcores_clear(&l);
	if (ei->poll_err == 0)
		drop_unseen_lcores(ei);
	return 0;
}

/* One poll ----------------------------------------------------------------------------- */

/* Copy what the read callback dispatches. Called with the dispatch lock held. */
static void
publish(struct ev_instance *ei)
{
	struct snapshot *sn = &ei->snap;
	struct port_ev *pv;
	struct lcore_ev *lv;

	pthread_mutex_lock(&ei->lock);
	sn->polled = true;
	sn->up = ei->up;
	sn->not_responding = ei->not_responding;
	sn->restarts = ei->t.restarts;
	sn->sent = ei->t.sent;
	sn->failed = ei->t.failed;
	sn->discarded = ei->t.discarded;
	sn->invalid = ei->t.invalid;
	sn->truncated = ei->t.truncated;
	pv = realloc(sn->ports, (ei->nports + 1) * sizeof(*pv));
	lv = realloc(sn->lcores, (ei->nlcores + 1) * sizeof(*lv));
	/* ei->ports and ei->lcores are NULL until the first port or lcore is seen. */
	if (pv != NULL) {
		sn->ports = pv;
		if (ei->nports > 0)
			memcpy(pv, ei->ports, ei->nports * sizeof(*pv));
		sn->nports = ei->nports;
	}
	if (lv != NULL) {
		sn->lcores = lv;
		if (ei->nlcores > 0)
			memcpy(lv, ei->lcores, ei->nlcores * sizeof(*lv));
		sn->nlcores = ei->nlcores;
	}
	pthread_mutex_unlock(&ei->lock);
}

static void
notify_main_lcore(struct ev_instance *ei, uint64_t age_ms, uint64_t t)
{
	struct dtp_meta meta = DTP_META_NONE;
	struct dtp_id id;
	char d[32];

	dtp_id_lcore(&id, PLUGIN, ei->t.name, ei->main_lcore, cdtime());
	meta.lcore_id = ei->main_lcore;
	meta.old_state = ei->main_stalled ? "RUNNING" : "STALLED";
	meta.new_state = ei->main_stalled ? "STALLED" : "RUNNING";
	if (ei->main_stalled) {
		dtp_notify(&id, NOTIF_FAILURE, "lcore_state", "main", &meta,
			"main lcore %u of %s stalled: links not checked for %" PRIu64
			" ms (read from the ports meanwhile)",
			ei->main_lcore, ei->t.name, age_ms);
		return;
	}
	meta.duration_ms = (int64_t)(t - ei->main_stalled_ms);
	dtp_notify(&id, NOTIF_OKAY, "lcore_state", "main", &meta,
		"main lcore %u of %s checks the links again after %s", ei->main_lcore, ei->t.name,
		duration(t - ei->main_stalled_ms, d, sizeof(d)));
}

/*
 * The forwarder's /fwd/ports is a snapshot its main lcore takes every link_poll_ms: older
 * than three periods (and than the stall threshold, so that a busy host's scheduling delay is
 * no alarm), the main lcore is stalled and the links are read from the ports themselves.
 */
static int
check_main_lcore(struct ev_instance *ei, uint64_t t)
{
	struct fwd_info fi;
	uint64_t limit;
	bool stale;
	int ret;

	if (!ei->has_fwd_ports || !ei->has_link_check_age)
		return 0;
	ret = read_fwd_info(ei, &fi);
	if (ret < 0)
		return ret;
	limit = 3 * fi.link_poll_ms > ei->stall_us / 1000 ? 3 * fi.link_poll_ms
							  : ei->stall_us / 1000;
	stale = fi.has_age && fi.link_check_age_ms > limit;
	if (stale == ei->main_stalled)
		return 0;
	/* Confirmed by a second answer, as every alarm (DPDK 22.11's strtok race). */
	if (ei->o->link_confirm &&
		(read_fwd_info(ei, &fi) < 0 || !fi.has_age ||
			(fi.link_check_age_ms > limit) != stale)) {
		ei->t.discarded++;
		return ei->poll_err;
	}
	ei->main_stalled = stale;
	if (stale)
		ei->main_stalled_ms = t - fi.link_check_age_ms;
	notify_main_lcore(ei, fi.link_check_age_ms, t);
	return 0;
}

/* Read every source; the first connection error ends the poll (ei->poll_err). */
static void
poll_sources(struct ev_instance *ei, uint64_t t)
{
	if ((!ei->have_caps || (ei->caps_again && t >= ei->caps_again_ms)) && probe_caps(ei, t) < 0)
		return;
	if (ei->o->link) {
		check_main_lcore(ei, t);
		poll_links(ei, t);
	}
	if (ei->o->lcores)
		poll_lcores(ei, t);
}

/*
 * The values that changed in this poll go out under the dispatch lock, after the snapshot
 * the read callback dispatches from was published under the same lock: a read can never
 * dispatch an older state with a later time than a change.
 */
static void
finish_poll(struct ev_instance *ei, bool instance_changed)
{
	cdtime_t now;

	pthread_mutex_lock(&ei->dispatch_lock);
	publish(ei);
	now = cdtime();
	if (instance_changed) {
		struct snapshot sn = {.up = ei->up,
			.not_responding = ei->not_responding,
			.restarts = ei->t.restarts,
			.sent = ei->t.sent,
			.failed = ei->t.failed,
			.discarded = ei->t.discarded,
			.invalid = ei->t.invalid,
			.truncated = ei->t.truncated};

		dispatch_instance_at(ei, &sn, now);
	}
	for (size_t i = 0; i < ei->nports; i++) {
		if (ei->ports[i].dirty)
			dispatch_port_at(ei, &ei->ports[i], now);
		ei->ports[i].dirty = false;
	}
	for (size_t i = 0; i < ei->nlcores; i++) {
		if (ei->lcores[i].dirty)
			dispatch_lcore_at(ei, &ei->lcores[i], now);
		ei->lcores[i].dirty = false;
	}
	pthread_mutex_unlock(&ei->dispatch_lock);
}

static void
poll_once(struct ev_instance *ei)
{
	uint64_t t = now_ms();
	bool was_up = ei->up, was_hung = ei->not_responding;

	ei->poll_err = 0;
	poll_sources(ei, t);
	/* Not sent (reconnecting backs off after a refusal): nothing was learnt. Unanswered in
	 * time: hung, or gone if its process exited. Refused, or answered only with what the
	 * protocol does not allow (garbage, a bad greeting): gone. A null reply, or one that
	 * does not parse, is an answer. */
	if (ei->poll_err == -EAGAIN)
		;
	else if (ei->poll_err == -ETIMEDOUT || ei->poll_err == -EBUSY)
		instance_unanswered(ei, now_ms(), t);
	else if (ei->poll_err != 0 || !ei->t.up)
		instance_refused(ei, t);
	else
		instance_answered(ei, t);
	finish_poll(ei, ei->up != was_up || ei->not_responding != was_hung);
}

static void *
poll_thread(void *arg)
{
	struct ev_instance *ei = arg;
	uint64_t period_ns = (uint64_t)(ei->o->poll_interval * 1e9);
	struct timespec next;

	clock_gettime(CLOCK_MONOTONIC, &next);
	for (;;) {
		struct timespec now;

		poll_once(ei);
		/* A poll that overran its period (a timeout) restarts the schedule from now: the
		 * polls it missed are not run back to back. */
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec > next.tv_sec ||
			(now.tv_sec == next.tv_sec && now.tv_nsec > next.tv_nsec))
			next = now;
		next.tv_nsec += (long)(period_ns % 1000000000u);
		next.tv_sec += (time_t)(period_ns / 1000000000u) + next.tv_nsec / 1000000000;
		next.tv_nsec %= 1000000000;
		pthread_mutex_lock(&ei->lock);
		while (!ei->stop &&
			pthread_cond_timedwait(&ei->wake, &ei->lock, &next) != ETIMEDOUT)
			;
		if (ei->stop) {
			pthread_mutex_unlock(&ei->lock);
			return NULL;
		}
		pthread_mutex_unlock(&ei->lock);
	}
}

/* Instances ------------------------------------------------------------------------------ */

static void
instance_free(struct ev_instance *ei)
{
	if (ei == NULL)
		return;
	dtp_target_fini(&ei->t);
	ports_clear(ei);
	pthread_mutex_destroy(&ei->lock);
	pthread_mutex_destroy(&ei->dispatch_lock);
	pthread_cond_destroy(&ei->wake);
	free(ei->ports);
	free(ei->lcores);
	free(ei->snap.ports);
	free(ei->snap.lcores);
	free(ei);
}

static int
instance_start(const char *name, const char *path, const struct events_opts *o, bool discovered)
{
	struct ev_instance *ei = calloc(1, sizeof(*ei)), **v;
	pthread_condattr_t ca;
	char tname[16];

	if (ei == NULL)
		return -1;
	pthread_mutex_init(&ei->lock, NULL);
	pthread_mutex_init(&ei->dispatch_lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&ei->wake, &ca);
	pthread_condattr_destroy(&ca);
	ei->o = o;
	ei->discovered = discovered;
	ei->up = false;
	if (dtp_target_init(&ei->t, PLUGIN, name, path, (int)(o->timeout * 1000 + 0.5)) < 0)
		goto fail;
	pthread_mutex_lock(&instances_lock);
	v = realloc(instances, (ninstances + 1) * sizeof(struct ev_instance *));
	if (v != NULL) {
		instances = v;
		instances[ninstances++] = ei;
	}
	pthread_mutex_unlock(&instances_lock);
	if (v == NULL)
		goto fail;
	snprintf(tname, sizeof(tname), "dtev/%.10s", name);
	if (plugin_thread_create(&ei->thread, poll_thread, ei, tname) != 0) {
		LOG(LOG_ERR, "instance '%s': cannot start its poll thread", name);
		return -1; /* stays in the list, freed at shutdown */
	}
	ei->running = true;
	LOG(LOG_INFO, "watching DPDK application '%s' at %s every %g s%s", name, path,
		o->poll_interval, discovered ? " (discovered)" : "");
	return 0;
fail:
	LOG(LOG_ERR, "instance '%s': cannot set up a session for %s", name, path);
	instance_free(ei);
	return -1;
}

static bool
known(const char *path)
{
	bool found = false;

	pthread_mutex_lock(&instances_lock);
	for (size_t k = 0; k < ninstances && !found; k++)
		found = strcmp(instances[k]->t.path, path) == 0;
	pthread_mutex_unlock(&instances_lock);
	return found;
}

static void
start_discovered(const char *name, const char *path)
{
	instance_start(name, path, conf.global, true);
}

static void
discover(void)
{
	static c_complain_t dir_complaint = C_COMPLAIN_INIT_STATIC;

	dtp_discover_pass(PLUGIN, conf.runtime_dir, &dir_complaint, known, start_discovered, NULL);
}

/* collectd callbacks ----------------------------------------------------------------------- */

/*
 * Dispatch an instance's last published state. Under the dispatch lock, which the poll thread
 * holds while it publishes a snapshot and dispatches its changes: the snapshot dispatched
 * here is never older than a change dispatched before it.
 */
static void
dispatch_snapshot(struct ev_instance *ei)
{
	const struct snapshot *sn = &ei->snap;
	cdtime_t now;

	pthread_mutex_lock(&ei->dispatch_lock);
	/* Before the first poll: an "up 0" now would be a guess, not a reading. */
	if (sn->polled) {
		now = cdtime();
		dispatch_instance_at(ei, sn, now);
		/* A gone application's ports and lcores are covered by its own event. */
		for (size_t k = 0; sn->up && k < sn->nports; k++)
			dispatch_port_at(ei, &sn->ports[k], now);
		for (size_t k = 0; sn->up && k < sn->nlcores; k++)
			dispatch_lcore_at(ei, &sn->lcores[k], now);
	}
	pthread_mutex_unlock(&ei->dispatch_lock);
}

/* At each interval: the latest state of everything, whether it changed or not. */
static int
events_read(user_data_t *ud)
{
	struct ev_instance **list;
	size_t n;

	(void)ud;
	if (conf.discover)
		discover();
	/* Instances are freed only at shutdown: a copy of the list is enough. */
	pthread_mutex_lock(&instances_lock);
	n = ninstances;
	list = n ? malloc(n * sizeof(struct ev_instance *)) : NULL;
	if (list != NULL)
		memcpy(list, instances, n * sizeof(struct ev_instance *));
	pthread_mutex_unlock(&instances_lock);
	for (size_t i = 0; list != NULL && i < n; i++)
		dispatch_snapshot(list[i]);
	free(list);
	return 0;
}

/* The conf starts at the first <Plugin> block, or in init for <LoadPlugin> alone. */
static int
conf_start(void)
{
	return dtp_conf_init(&conf, PLUGIN, options, sizeof(options) / sizeof(options[0]),
		&defaults, sizeof(defaults));
}

static int
events_config(oconfig_item_t *ci)
{
	if (conf_start() < 0)
		return 0;
	dtp_conf_parse(&conf, ci);
	return 0; /* errors are refused in init: see dpdktel_stats */
}

static const char *const types[] = {"link_status", "link_speed", "link_changes", "link_flapping",
	"lcore_state", "heartbeat_age", "stalls", "up", "not_responding", "restarts",
	"telemetry_requests"};

/* PollInterval must leave room for a request that times out. */
static int
check_poll(const struct dtp_conf *c)
{
	const struct events_opts *g = c->global;
	int errors = 0;

	/* The <Plugin> block first; an instance only for values of its own (an inherited pair
	 * was reported with the block already). */
	for (size_t k = 0; k <= c->ninst; k++) {
		size_t i = k == 0 ? c->ninst : k - 1;
		const struct events_opts *o = i < c->ninst ? c->inst[i].opts : g;

		if (o->flap_window >= o->poll_interval ||
			(o != g && o->flap_window == g->flap_window &&
				o->poll_interval == g->poll_interval))
			continue;
		LOG(LOG_ERR,
			"%s%s%sFlapWindow %g is shorter than PollInterval %g: expected a window "
			"of several polls",
			i < c->ninst ? "<Instance \"" : "", i < c->ninst ? c->inst[i].name : "",
			i < c->ninst ? "\">: " : "", o->flap_window, o->poll_interval);
		errors++;
	}
	return errors ? -1 : 0;
}

static int
events_init(void)
{
	if (conf_start() < 0)
		return -1;
	if (dtp_conf_validate(&conf) < 0 || check_poll(&conf) < 0) {
		LOG(LOG_ERR, "configuration errors (see above): not watching anything");
		return -1;
	}
	if (!dtp_types_defined(
		    PLUGIN, types, sizeof(types) / sizeof(types[0]), "docs/dpdktel_events.md"))
		return -1;
	for (size_t i = 0; i < conf.ninst; i++)
		if (instance_start(conf.inst[i].name, conf.inst[i].socket_path, conf.inst[i].opts,
			    false) < 0)
			return -1;
	if (conf.discover)
		discover();
	return plugin_register_complex_read(PLUGIN, PLUGIN, events_read, 0, NULL);
}

static int
events_shutdown(void)
{
	pthread_mutex_lock(&instances_lock);
	for (size_t i = 0; i < ninstances; i++) {
		struct ev_instance *ei = instances[i];

		pthread_mutex_lock(&ei->lock);
		ei->stop = true;
		pthread_cond_signal(&ei->wake);
		pthread_mutex_unlock(&ei->lock);
	}
	for (size_t i = 0; i < ninstances; i++) {
		if (instances[i]->running)
			pthread_join(instances[i]->thread, NULL);
		instance_free(instances[i]);
	}
	free(instances);
	instances = NULL;
	ninstances = 0;
	pthread_mutex_unlock(&instances_lock);
	dtp_conf_free(&conf);
	return 0;
}

__attribute__((visibility("default"))) void
module_register(void)
{
	plugin_register_complex_config(PLUGIN, events_config);
	plugin_register_init(PLUGIN, events_init);
	plugin_register_shutdown(PLUGIN, events_shutdown);
}
