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
};

#define FLAP_MAX 64

struct port_ev {
	unsigned int id; /* first: dtp_slot() */
	bool present; /* in the last reading */
	enum link_state state; /* confirmed */
	uint64_t speed;
	enum dtel_duplex duplex;
	uint64_t since_ms; /* when the confirmed state began */
	uint64_t changes; /* dispatched link_changes */
	bool have_app_changes;
	uint64_t app_changes; /* the application's counter at the last reading */
	uint64_t flap_ms[FLAP_MAX]; /* times of recent changes, for flap detection */
	unsigned int nflaps;
	bool flapping;
	char name[DTEL_STRING_MAX]; /* device name, "" until known */
};

struct lcore_ev {
	unsigned int id; /* first: dtp_slot() */
	bool present;
	enum dtel_lcore_state state; /* confirmed */
	uint64_t since_ms;
	uint64_t age_us; /* heartbeat age at the last reading */
	uint64_t stalls;
	/* For /eal/lcore/info, where there is no heartbeat: cycles at the last advance. */
	uint64_t total, busy, advanced_ms;
};

/* What the read callback dispatches: a copy the poll thread publishes after each poll. */
struct snapshot {
	bool polled; /* false until the first poll: nothing is known to dispatch */
	bool up;
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
	pthread_mutex_t lock; /* snap and stop, shared with the read callback and shutdown */
	/* Held while dispatching this instance's values, the time taken inside: values of one
	 * identifier from the poll thread and the read callback then never go out of order. */
	pthread_mutex_t dispatch_lock;
	pthread_cond_t wake;
	bool stop;
	struct snapshot snap;

	/* Everything below belongs to the poll thread alone. */
	bool up; /* confirmed: the application answers */
	bool announced_gone;
	unsigned int fails; /* consecutive failed polls */
	uint64_t gone_ms;
	bool have_caps;
	bool caps_again; /* the command list came from a starting application: read it again */
	uint64_t caps_again_ms; /* ... at this time */
	bool has_fwd_ports, has_fwd_lcores, has_eal_lcore;
	bool said_links_only;
	uint64_t stall_us; /* in force for lcores */
	struct port_ev *ports;
	size_t nports;
	struct lcore_ev *lcores;
	size_t nlcores;
};

static int start_discovered(const char *name, const char *path);
static void instance_retire(void *inst);

/* Every instance, configured or discovered (plugins/common/instances.c). */
static struct dtp_instances instances =
	DTP_INSTANCES_INIT(PLUGIN, start_discovered, instance_retire);

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

static void
derive(struct ev_instance *ei, const struct dtp_id *id, const char *type, const char *ti,
	uint64_t v)
{
	if (dtp_derive(id, type, ti, &v, 1) == -ERANGE)
		ei->t.invalid++;
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
	derive(ei, &id, "restarts", NULL, sn->restarts);
	derive(ei, &id, "telemetry_requests", "sent", sn->sent);
	derive(ei, &id, "telemetry_requests", "failed", sn->failed);
	derive(ei, &id, "telemetry_requests", "discarded", sn->discarded);
	derive(ei, &id, "telemetry_requests", "invalid", sn->invalid);
	derive(ei, &id, "telemetry_requests", "truncated", sn->truncated);
}

/* From the poll thread, at a change: under the dispatch lock, with the time taken inside it. */
static void
dispatch_port_now(struct ev_instance *ei, const struct port_ev *p)
{
	pthread_mutex_lock(&ei->dispatch_lock);
	dispatch_port_at(ei, p, cdtime());
	pthread_mutex_unlock(&ei->dispatch_lock);
}

static void
dispatch_lcore_now(struct ev_instance *ei, const struct lcore_ev *l)
{
	pthread_mutex_lock(&ei->dispatch_lock);
	dispatch_lcore_at(ei, l, cdtime());
	pthread_mutex_unlock(&ei->dispatch_lock);
}

static void
dispatch_instance_now(struct ev_instance *ei, const struct snapshot *sn)
{
	pthread_mutex_lock(&ei->dispatch_lock);
	dispatch_instance_at(ei, sn, cdtime());
	pthread_mutex_unlock(&ei->dispatch_lock);
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

/* Forget every port and lcore: they belong to a process that is gone. */
static void
forget_state(struct ev_instance *ei)
{
	ei->nports = 0;
	ei->nlcores = 0;
	ei->have_caps = false;
	ei->said_links_only = false;
}

/* A poll failed at the connection level (not a null reply). */
static void
instance_failed(struct ev_instance *ei, uint64_t t)
{
	if (ei->fails++ == 0)
		ei->gone_ms = t;
	/* Two failed polls in a row: one timeout alone is not an outage. */
	if (ei->fails < 2 || !ei->up)
		return;
	ei->up = false;
	ei->announced_gone = true;
	notify_instance(
		ei, NOTIF_FAILURE, "up", "gone", -1, "DPDK application %s is gone", ei->t.name);
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
	ei->fails = 0;
}

/* Requests ----------------------------------------------------------------------------- */

/* A query whose failure at the connection level counts against the instance. */
static int
query(struct ev_instance *ei, const char *cmd, struct dtel_reply *r)
{
	return dtp_query(&ei->t, cmd, r);
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
static int
probe_caps(struct ev_instance *ei, uint64_t t)
{
	const struct dtel_entry *e;
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
	if (ei->stall_us == 0 && ei->has_fwd_lcores && query(ei, "/fwd/info", &r) == 0) {
		/* The application's own threshold, so that both say STALLED at the same time. */
		if (dtel_parse_dict(&r, "/fwd/info", &d) == 0) {
			e = dtel_dict_find(&d, "stall_ms");
			if (e != NULL && e->type == DTEL_VALUE_U64 && e->v.u64 > 0)
				ei->stall_us = e->v.u64 * 1000;
			dtel_dict_clear(&d);
		}
		dtel_reply_release(&r);
	}
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
			.changes = p.v[i].link_changes};
	}
	dtel_fwd_ports_clear(&p);
	return 0;
}

static int
read_one_link(struct ev_instance *ei, uint16_t port, struct link_reading *out)
{
	struct dtel_reply r;
	struct dtel_link l;
	int ret = dtp_query_id(&ei->t, "/ethdev/link_status", port, &r);

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
		.duplex = l.duplex};
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
		if (ret < 0)
			s->n--;
		if (connection_error(ret)) {
			free(ids);
			return ret;
		}
	}
	free(ids);
	return 0;
}

static int
read_links(struct ev_instance *ei, struct link_set *s)
{
	return ei->has_fwd_ports ? read_fwd_ports(ei, s) : read_ethdev_links(ei, s);
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

	if (dtp_query_id(&ei->t, "/ethdev/info", p->id, &r) < 0)
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

/* Keep the change times inside the window; true when the port now counts as flapping. */
static bool
note_change(struct ev_instance *ei, struct port_ev *p, uint64_t t, unsigned int count)
{
	uint64_t window = (uint64_t)(ei->o->flap_window * 1000);
	unsigned int k = 0;

	for (unsigned int i = 0; i < count; i++) {
		if (p->nflaps == FLAP_MAX)
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
link_changed(struct ev_instance *ei, struct port_ev *p, enum link_state old, uint64_t t,
	unsigned int count)
{
	uint64_t lasted = t - p->since_ms;

	p->since_ms = t;
	if (!note_change(ei, p, t, count) && !p->flapping) {
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
	if (note_change(ei, p, t, (unsigned int)(missed < FLAP_MAX ? missed : FLAP_MAX))) {
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

	if (!ei->has_fwd_ports)
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

/* Apply one reading of a port; true when its values changed (dispatch them now). */
static bool
apply_link(struct ev_instance *ei, const struct link_reading *r, uint64_t t)
{
	uint64_t seen_changes = 0;
	bool fresh, changed = false, state_changed = false;
	struct port_ev *p = port_ev(ei, r->port, &fresh);
	enum link_state old;

	if (p == NULL)
		return false;
	p->present = true;
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
		link_changed(ei, p, old, t, 1);
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

static int
poll_links(struct ev_instance *ei, uint64_t t)
{
	struct link_set s = {0};
	int ret = read_links(ei, &s);

	if (ret == 0) {
		/* A restart must be known before these readings are compared with the old ones. */
		instance_answered(ei, t);
		for (size_t i = 0; i < s.n; i++)
			if (apply_link(ei, &s.v[i], t))
				dispatch_port_now(ei, port_ev(ei, s.v[i].port, &(bool){0}));
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

/* A transition into or out of a bad state is confirmed by a second query. */
static bool
confirm_lcore(struct ev_instance *ei, unsigned int id, enum dtel_lcore_state want)
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

/* Apply one reading of an lcore; true when its values should go out now. */
static bool
apply_lcore(struct ev_instance *ei, const struct dtel_fwd_lcore *c, uint64_t t)
{
	enum dtel_lcore_state s = effective_state(ei, c), old;
	bool fresh;
	struct lcore_ev *l = lcore_ev(ei, c->lcore_id, &fresh);

	if (l == NULL)
		return false;
	l->present = true;
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
	if ((is_bad(s) || is_bad(l->state)) && !confirm_lcore(ei, c->lcore_id, s)) {
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
	ret = dtel_parse_dict(&r, "/eal/lcore/list", &ids);
	dtel_reply_release(&r);
	if (ret < 0)
		return ret;
	memset(out, 0, sizeof(*out));
	out->v = calloc(ids.n + 1, sizeof(*out->v));
	for (size_t i = 0; out->v != NULL && i < ids.n; i++) {
		struct dtel_fwd_lcore *c = &out->v[out->n];
		struct lcore_ev *l;
		bool fresh;

		if (ids.v[i].type != DTEL_VALUE_U64 ||
			dtp_query_id(&ei->t, "/eal/lcore/info", (unsigned int)ids.v[i].v.u64, &r) <
				0)
			continue;
		ret = dtel_parse_eal_lcore_info(&r, &li);
		dtel_reply_release(&r);
		if (ret < 0 || !li.has_cycles || strcmp(li.role, "RTE") != 0)
			continue;
		l = lcore_ev(ei, li.lcore_id, &fresh);
		if (l == NULL)
			continue;
		if (fresh || li.total_cycles != l->total)
			l->advanced_ms = t;
		c->lcore_id = li.lcore_id;
		c->heartbeat_age_us = (t - l->advanced_ms) * 1000;
		c->state = li.busy_cycles != l->busy ? DTEL_LCORE_RUNNING : DTEL_LCORE_IDLE;
		l->total = li.total_cycles;
		l->busy = li.busy_cycles;
		out->n++;
	}
	dtel_dict_clear(&ids);
	return 0;
}

static int
poll_lcores(struct ev_instance *ei, uint64_t t)
{
	struct dtel_fwd_lcores l;
	int ret;

	if (ei->has_fwd_lcores)
		ret = read_fwd_lcores(ei, &l);
	else if (ei->has_eal_lcore)
		ret = read_eal_lcores(ei, &l, t);
	else
		return 0;
	if (ret < 0)
		return ret;
	instance_answered(ei, t);
	for (size_t i = 0; i < l.n; i++)
		if (apply_lcore(ei, &l.v[i], t))
			dispatch_lcore_now(ei, lcore_ev(ei, l.v[i].lcore_id, &(bool){0}));
	dtel_fwd_lcores_clear(&l);
	return 0;
}

/* One poll ----------------------------------------------------------------------------- */

/* Copy what the read callback dispatches; the lock is held only for the copy. */
static void
publish(struct ev_instance *ei)
{
	struct snapshot *sn = &ei->snap;
	struct port_ev *pv;
	struct lcore_ev *lv;

	pthread_mutex_lock(&ei->lock);
	sn->polled = true;
	sn->up = ei->up;
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
poll_once(struct ev_instance *ei)
{
	uint64_t t = now_ms();
	bool was_up = ei->up;
	int ret = 0;

	if (!ei->have_caps || (ei->caps_again && t >= ei->caps_again_ms))
		ret = probe_caps(ei, t);
	if (ret == 0 && ei->o->link)
		ret = poll_links(ei, t);
	if (!connection_error(ret) && ei->o->lcores)
		ret = poll_lcores(ei, t);
	if (!ei->have_caps && !connection_error(ret))
		ret = -EAGAIN; /* the command list was not readable: not an outage either */
	/* Failed: a connection error, or the last request got no answer that the protocol
	 * allows (garbage, a bad greeting): the application does not answer its polls. A null
	 * reply or one that does not parse is an answer. */
	if ((connection_error(ret) && ret != -EAGAIN) || !ei->t.up)
		instance_failed(ei, t);
	else
		instance_answered(ei, t);
	publish(ei);
	if (ei->up != was_up) {
		struct snapshot sn = {.up = ei->up,
			.restarts = ei->t.restarts,
			.sent = ei->t.sent,
			.failed = ei->t.failed,
			.discarded = ei->t.discarded,
			.invalid = ei->t.invalid,
			.truncated = ei->t.truncated};

		dispatch_instance_now(ei, &sn);
	}
}

static void *
poll_thread(void *arg)
{
	struct ev_instance *ei = arg;
	uint64_t period_ns = (uint64_t)(ei->o->poll_interval * 1e9);
	struct timespec next;

	clock_gettime(CLOCK_MONOTONIC, &next);
	for (;;) {
		poll_once(ei);
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
		/* A poll that overran its period starts the next one at once, not a burst. */
		struct timespec now;

		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec > next.tv_sec + 1)
			next = now;
	}
}

/* Instances ------------------------------------------------------------------------------ */

static void
instance_free(struct ev_instance *ei)
{
	if (ei == NULL)
		return;
	dtp_instances_remove(&instances, ei);
	dtp_target_fini(&ei->t);
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
	struct ev_instance *ei = calloc(1, sizeof(*ei));
	pthread_condattr_t ca;
	char tname[16];
	int ret;

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
	ret = dtp_instances_add(&instances, ei, &ei->t, discovered);
	if (ret == -EEXIST) {
		LOG(LOG_ERR, "instance '%s' (%s): another instance has that name", name, path);
		instance_free(ei);
		return -1;
	}
	if (ret < 0)
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

/* Ask the poll thread to stop; it ends after the poll in progress. */
static void
instance_stop(struct ev_instance *ei)
{
	pthread_mutex_lock(&ei->lock);
	ei->stop = true;
	pthread_cond_signal(&ei->wake);
	pthread_mutex_unlock(&ei->lock);
}

/*
 * A discovered instance whose application has been gone for RetireAfter: unlisted, its
 * poll thread stopped and joined (it ends after the poll in progress, whose requests are
 * bounded by Timeout; to a gone application they fail at once), and freed. Discovery calls
 * this from the read callback, which is the only other user of instance pointers (it copies
 * the list after discovery), and collectd never runs it on two threads at once.
 */
static void
instance_retire(void *p)
{
	struct ev_instance *ei = p;

	dtp_instances_remove(&instances, ei);
	instance_stop(ei);
	if (ei->running)
		pthread_join(ei->thread, NULL);
	instance_free(ei);
}

static int
start_discovered(const char *name, const char *path)
{
	return instance_start(name, path, conf.global, true);
}

static void
discover(void)
{
	dtp_instances_discover(
		&instances, conf.runtime_dir, (uint64_t)(conf.retire_after * 1000), now_ms());
}

/* collectd callbacks ----------------------------------------------------------------------- */

/* Dispatch an instance's last published state. */
static void
dispatch_snapshot(struct ev_instance *ei)
{
	struct snapshot sn;
	cdtime_t now;

	pthread_mutex_lock(&ei->lock);
	sn = ei->snap;
	if (!sn.polled) {
		/* Before the first poll: an "up 0" now would be a guess, not a reading. */
		pthread_mutex_unlock(&ei->lock);
		return;
	}
	sn.ports = sn.nports ? malloc(sn.nports * sizeof(*sn.ports)) : NULL;
	sn.lcores = sn.nlcores ? malloc(sn.nlcores * sizeof(*sn.lcores)) : NULL;
	if (sn.ports != NULL)
		memcpy(sn.ports, ei->snap.ports, sn.nports * sizeof(*sn.ports));
	else
		sn.nports = 0;
	if (sn.lcores != NULL)
		memcpy(sn.lcores, ei->snap.lcores, sn.nlcores * sizeof(*sn.lcores));
	else
		sn.nlcores = 0;
	pthread_mutex_unlock(&ei->lock);
	pthread_mutex_lock(&ei->dispatch_lock);
	now = cdtime();
	dispatch_instance_at(ei, &sn, now);
	/* A gone application's ports and lcores are covered by its own event. */
	for (size_t k = 0; sn.up && k < sn.nports; k++)
		if (sn.ports[k].present)
			dispatch_port_at(ei, &sn.ports[k], now);
	for (size_t k = 0; sn.up && k < sn.nlcores; k++)
		if (sn.lcores[k].present)
			dispatch_lcore_at(ei, &sn.lcores[k], now);
	pthread_mutex_unlock(&ei->dispatch_lock);
	free(sn.ports);
	free(sn.lcores);
}

/* At each interval: the latest state of everything, whether it changed or not. */
static int
events_read(user_data_t *ud)
{
	void **list;
	size_t n;

	(void)ud;
	if (conf.discover)
		discover();
	/* Instances are freed only here (discovery retires them) and at shutdown, and collectd
	 * never runs one read callback on two threads at once: a copy of the list is safe. */
	n = dtp_instances_take(&instances, false, &list);
	for (size_t i = 0; i < n; i++)
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
	"lcore_state", "heartbeat_age", "stalls", "up", "restarts", "telemetry_requests"};

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
	void **list;
	size_t n = dtp_instances_take(&instances, true, &list);

	for (size_t i = 0; i < n; i++)
		instance_stop(list[i]);
	for (size_t i = 0; i < n; i++) {
		struct ev_instance *ei = list[i];

		if (ei->running)
			pthread_join(ei->thread, NULL);
		instance_free(ei);
	}
	free(list);
	dtp_instances_forget(&instances);
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
