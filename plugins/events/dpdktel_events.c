/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdktel_events: link and lcore health of DPDK applications, as values and as collectd
 * notifications, detected within a few poll intervals (docs/dpdktel_events.md).
 *
 * Each instance has its own poll thread, so a hung application never slows another one.
 * Every PollInterval it reads link states (/fwd/ports where the application has it, else
 * /ethdev/link_status of each port) and lcore health (/fwd/lcores, or on DPDK >= 23.03 the
 * cycles of every lcore in one /eal/lcore/usage), through libdpdktel's shared session for
 * the socket. A change is reported only when a second query agrees: DPDK 22.11 to 25.11 can
 * hand a client another client's parameters (26.07 cannot: no second query there).
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
#include "machines.h"

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
	double max_app_load; /* percent of one core, both plugins together */
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
	.max_app_load = DTP_MAX_APP_LOAD_DEFAULT,
};

#define OPT(...) DTP_OPT(events_opts, __VA_ARGS__)
#define BOOL_OPT(...) DTP_BOOL_OPT(events_opts, __VA_ARGS__)

static const struct dtp_option options[] = {
	OPT("PollInterval", DTP_OPT_SECONDS, poll_interval, 0.001, 60,
		"seconds between polls, at least 0.001 and at most 60"),
	DTP_PORTS_OPT(events_opts),
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
	DTP_TIMEOUT_OPT(events_opts),
	OPT("NotRespondingPolls", DTP_OPT_UINT, not_responding_polls, 1, 1000,
		"a number of unanswered polls from 1 to 1000"),
	DTP_MAX_APP_LOAD_OPT(events_opts),
};

static struct dtp_conf conf;

/* Runtime state ------------------------------------------------------------------------- */

/* When the values of the instance, a port or an lcore last went to collectd. */
struct sent_at {
	unsigned int id; /* first: dtp_slot() */
	cdtime_t at;
	bool dirty; /* changed in a poll, not sent since (by the poll thread or a read) */
};

/* What the read callback dispatches: a copy the poll thread publishes after each poll. */
struct snapshot {
	bool polled; /* false until the first poll: nothing is known to dispatch */
	bool not_responding;
	struct dtp_target health; /* a copy: its counters, and up as this plugin says it */
	struct events_port *ports; /* copies: their flap_ms is not theirs to use */
	size_t nports;
	struct events_lcore *lcores;
	size_t nlcores;
	double link_interval, lcore_interval; /* in force, seconds; 0: not polled */
};

/* The kinds of poll, each run at its own interval within the budget (MaxAppLoad). */
enum poll_kind { POLL_LINKS, POLL_LCORES, POLL_ALIVE, POLL_KINDS };

struct ev_instance {
	struct dtp_target t;
	const struct events_opts *o;
	pthread_t thread;
	pthread_mutex_t lock; /* stop, shared with shutdown */
	/* Held while publishing snap and dispatching this instance's values, the time taken
	 * inside: values of one identifier from the poll thread and the read callback then
	 * never go out of order, and a read never sends a state older than a change. */
	pthread_mutex_t dispatch_lock;
	pthread_cond_t wake;
	struct snapshot snap; /* under dispatch_lock (and lock) */
	/* When the values of the instance, of each port and of each lcore last went to
	 * collectd, from either thread (under dispatch_lock): see dispatch_gap(). */
	struct sent_at inst_sent;
	struct sent_at *port_sent, *lcore_sent;
	cdtime_t last_read; /* when collectd's read callback last sent the snapshot, 0: never */
	size_t nport_sent, nlcore_sent;
	/* Values above INT64_MAX that collectd could not take, counted by whichever thread
	 * dispatched them (atomic); added to telemetry_requests/invalid. */
	uint64_t range_invalid;
	bool discovered;
	bool running; /* the poll thread was started */
	bool stop;

	/* Everything below belongs to the poll thread alone. */
	bool have_caps;
	bool caps_again; /* the command list came from a starting application: read it again */
	struct dtp_caps caps;
	bool usage_lcores; /* /eal/lcore/usage listed lcores when probed: the lcore source */
	bool has_link_check_age; /* /fwd/info reports link_check_age_ms */
	bool said_links_only;
	bool main_stalled; /* announced: the main lcore no longer checks the links */
	struct events_instance st; /* up, gone, not responding */
	struct events_link_conf link_conf;
	uint64_t caps_again_ms; /* ... at this time */
	uint64_t stall_us; /* in force for lcores */
	uint64_t main_stalled_ms;
	/* After a hang the instance event reported, heartbeats still date from it: until this
	 * time no lcore or main lcore goes into a stall (the instance event covered it). */
	uint64_t quiet_until_ms;
	unsigned int main_lcore;
	int poll_err; /* the connection error that ended this poll, 0: none yet */
	/* Links, lcores, and a request that only shows the application answers when neither
	 * is due: each at PollInterval, or less often when the budget says so. */
	struct dtp_budget budget[POLL_KINDS];
	uint64_t next_ms[POLL_KINDS]; /* when each is due */
	uint64_t round_ns[POLL_KINDS]; /* what this poll's requests of each cost */
	struct events_port *ports;
	size_t nports;
	struct events_lcore *lcores;
	size_t nlcores;
	/* The ports whose links the last /ethdev/list gave (those the Ports option selects):
	 * the next poll asks their links together with the list. */
	uint16_t *link_ids;
	size_t nlink_ids;
};

static int start_discovered(const char *name, const char *path);
static void instance_retire(void *inst);

/* Every instance, configured or discovered (plugins/common/instances.c). */
static struct dtp_instances instances =
	DTP_INSTANCES_INIT(PLUGIN, start_discovered, instance_retire);

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
link_word(enum events_link s)
{
	return s == EVENTS_LINK_UP ? "up" : s == EVENTS_LINK_DOWN ? "down" : "unknown";
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
dispatch_port_at(struct ev_instance *ei, const struct events_port *p, cdtime_t now)
{
	struct dtp_id id;

	if (p->state == EVENTS_LINK_UNKNOWN)
		return;
	dtp_id_port(&id, PLUGIN, ei->t.name, p->id, now);
	gauge(&id, "link_status", p->state == EVENTS_LINK_UP ? 1 : 0);
	if (p->speed != DTEL_SPEED_UNKNOWN)
		gauge(&id, "link_speed", p->state == EVENTS_LINK_UP ? (double)p->speed : 0);
	derive(ei, &id, "link_changes", NULL, p->changes);
	gauge(&id, "link_flapping", p->flapping ? 1 : 0);
}

static void
dispatch_lcore_at(struct ev_instance *ei, const struct events_lcore *l, cdtime_t now)
{
	struct dtp_id id;

	dtp_id_lcore(&id, PLUGIN, ei->t.name, l->id, now);
	gauge(&id, "lcore_state", l->state);
	gauge(&id, "heartbeat_age", (double)l->age_us / 1e6);
	derive(ei, &id, "stalls", NULL, l->stalls);
	if (l->have_busy_pct)
		dtp_gauge(&id, "percent", "busy", &l->busy_pct, 1);
}

static void
dispatch_instance_at(struct ev_instance *ei, const struct snapshot *sn, cdtime_t now)
{
	struct dtp_id id;
	int refused;

	dtp_id_instance(&id, PLUGIN, ei->t.name, now);
	gauge(&id, "not_responding", sn->not_responding ? 1 : 0);
	if (sn->link_interval > 0)
		dtp_gauge(&id, "poll_interval", "link", &sn->link_interval, 1);
	if (sn->lcore_interval > 0)
		dtp_gauge(&id, "poll_interval", "lcore", &sn->lcore_interval, 1);
	refused = dtp_dispatch_health(&id, &sn->health);
	if (refused > 0)
		__atomic_fetch_add(&ei->range_invalid, (uint64_t)refused, __ATOMIC_RELAXED);
}

/* Notifications -------------------------------------------------------------------------- */

/* A notification about port p; @what is the message after "Link <what> on <inst> port N". */
static void
notify_port(struct ev_instance *ei, const struct events_port *p, int severity, const char *old,
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
notify_down(
	struct ev_instance *ei, const struct events_port *p, enum events_link old, uint64_t up_ms)
{
	char detail[DTEL_STRING_MAX + 8];

	snprintf(detail, sizeof(detail), " (%s)", p->name[0] ? p->name : "?");
	notify_port(ei, p, NOTIF_FAILURE, link_word(old), "down",
		old == EVENTS_LINK_UP ? (int64_t)up_ms : -1, "down", detail);
}

static void
notify_up(
	struct ev_instance *ei, const struct events_port *p, enum events_link old, uint64_t down_ms)
{
	char detail[128], d[32];

	if (old == EVENTS_LINK_DOWN)
		snprintf(detail, sizeof(detail), ": %" PRIu64 " Mbps %s after %s down", p->speed,
			dtel_duplex_name(p->duplex), duration(down_ms, d, sizeof(d)));
	else
		snprintf(detail, sizeof(detail), ": %" PRIu64 " Mbps %s", p->speed,
			dtel_duplex_name(p->duplex));
	notify_port(ei, p, NOTIF_OKAY, link_word(old), "up",
		old == EVENTS_LINK_DOWN ? (int64_t)down_ms : -1, "up", detail);
}

/* One transition of the link machine, as the table of docs/dpdktel_events.md says. */
static void
notify_link(struct ev_instance *ei, const struct events_port *p, const struct events_link_tr *tr)
{
	const char *now = link_word(p->state);
	char detail[160];

	switch (tr->kind) {
	case EVENTS_TR_DOWN:
		notify_down(ei, p, tr->old, tr->lasted_ms);
		break;
	case EVENTS_TR_UP:
		notify_up(ei, p, tr->old, tr->lasted_ms);
		break;
	case EVENTS_TR_SPEED:
		snprintf(detail, sizeof(detail), ": %" PRIu64 " Mbps %s → %" PRIu64 " Mbps %s",
			tr->old_speed, dtel_duplex_name(tr->old_duplex), p->speed,
			dtel_duplex_name(p->duplex));
		notify_port(ei, p, NOTIF_WARNING, "up", "up", -1, "speed changed", detail);
		break;
	case EVENTS_TR_FLAPPED:
		snprintf(detail, sizeof(detail), ": %" PRIu64 " changes between two polls, now %s",
			tr->count, now);
		notify_port(ei, p, NOTIF_WARNING, now, now, -1, "flapped", detail);
		break;
	case EVENTS_TR_FLAPPING:
		snprintf(detail, sizeof(detail), ": %" PRIu64 " changes within %g s", tr->count,
			ei->o->flap_window);
		notify_port(ei, p, NOTIF_WARNING, "stable", "flapping", -1, "flapping", detail);
		break;
	case EVENTS_TR_SETTLED:
		if (p->state == EVENTS_LINK_UP)
			snprintf(detail, sizeof(detail), ": up, %" PRIu64 " Mbps %s", p->speed,
				dtel_duplex_name(p->duplex));
		else
			snprintf(detail, sizeof(detail), ": %s", now);
		notify_port(ei, p, p->state == EVENTS_LINK_UP ? NOTIF_OKAY : NOTIF_FAILURE,
			"flapping", now, -1, "stopped flapping", detail);
		break;
	case EVENTS_TR_DISCARDED:
		ei->t.discarded++; /* contradicted by the second query: not reported */
		break;
	}
}

static void
notify_lcore(struct ev_instance *ei, const struct events_lcore *l, const struct events_lcore_tr *tr)
{
	struct dtp_meta meta = DTP_META_NONE;
	char msg[NOTIF_MAX_MSG_LEN], d[32];
	int severity = NOTIF_FAILURE;
	struct dtp_id id;

	if (tr->kind == EVENTS_TR_LCORE_DISCARDED) {
		ei->t.discarded++;
		return;
	}
	if (l->state == DTEL_LCORE_STALLED && l->have_cycles)
		snprintf(msg, sizeof(msg),
			"lcore %u of %s stalled: total_cycles did not advance for %" PRIu64 " ms",
			l->id, ei->t.name, l->age_us / 1000);
	else if (l->state == DTEL_LCORE_STALLED)
		snprintf(msg, sizeof(msg),
			"lcore %u of %s stalled: no heartbeat for %" PRIu64 " ms", l->id,
			ei->t.name, l->age_us / 1000);
	else if (l->state == DTEL_LCORE_EXITED)
		snprintf(msg, sizeof(msg), "lcore %u of %s exited", l->id, ei->t.name);
	else if (events_lcore_bad(tr->old))
		severity = NOTIF_OKAY,
		snprintf(msg, sizeof(msg), "lcore %u of %s recovered after %s", l->id, ei->t.name,
			duration(tr->lasted_ms, d, sizeof(d)));
	else
		return; /* RUNNING <-> IDLE <-> STARTING is no news */
	dtp_id_lcore(&id, PLUGIN, ei->t.name, l->id, cdtime());
	meta.lcore_id = l->id;
	meta.old_state = dtel_lcore_state_name(tr->old);
	meta.new_state = dtel_lcore_state_name(l->state);
	if (severity == NOTIF_OKAY)
		meta.duration_ms = (int64_t)tr->lasted_ms;
	dtp_notify(&id, severity, "lcore_state", NULL, &meta, "%s", msg);
}

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
notify_instance_tr(struct ev_instance *ei, const struct events_instance_tr *tr)
{
	const char *n = ei->t.name;
	int64_t ms = (int64_t)tr->lasted_ms;
	char d[32];

	duration(tr->lasted_ms, d, sizeof(d));
	switch (tr->kind) {
	case EVENTS_TR_GONE:
		notify_instance(
			ei, NOTIF_FAILURE, tr->old, "gone", -1, "DPDK application %s is gone", n);
		break;
	case EVENTS_TR_BACK:
		notify_instance(ei, NOTIF_OKAY, tr->old, "up", ms,
			"DPDK application %s is back after %s", n, d);
		break;
	case EVENTS_TR_NOT_RESPONDING:
		if (ei->t.pid > 0)
			notify_instance(ei, NOTIF_FAILURE, tr->old, "not_responding", -1,
				"DPDK application %s is not responding (pid %ld alive, no reply "
				"for "
				"%s)",
				n, ei->t.pid, d);
		else /* the socket's owner not known (another pid namespace) */
			notify_instance(ei, NOTIF_FAILURE, tr->old, "not_responding", -1,
				"DPDK application %s is not responding (no reply for %s)", n, d);
		break;
	case EVENTS_TR_ANSWERS_AGAIN:
		notify_instance(ei, NOTIF_OKAY, tr->old, "up", ms,
			"DPDK application %s answers again after %s", n, d);
		break;
	}
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

/* Requests ----------------------------------------------------------------------------- */

static bool
connection_error(int err)
{
	return err < 0 && err != -ENODATA && err != -EMSGSIZE && err != -EPROTO && err != -EINVAL &&
		err != -ENOMEM;
}

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

/* query() as the readers of plugins/common call it. */
static int
query_fn(void *ctx, const char *cmd, struct dtel_reply *r)
{
	return query(ctx, cmd, r);
}

/* query() of @n requests in one batch: the first connection-level error ends the poll. */
static void
query_many(
	struct ev_instance *ei, const char *const *cmds, size_t n, struct dtel_reply *r, int *res)
{
	if (ei->poll_err != 0) {
		for (size_t i = 0; i < n; i++) {
			memset(&r[i], 0, sizeof(r[i]));
			res[i] = ei->poll_err;
		}
		return;
	}
	dtp_query_many(&ei->t, cmds, n, r, res);
	for (size_t i = 0; i < n && ei->poll_err == 0; i++)
		if (res[i] != -ECANCELED && connection_error(res[i]))
			ei->poll_err = res[i];
}

/* A reply that arrived but did not parse: counted and logged once (see dtp_bad_reply). */
static int
parsed(struct ev_instance *ei, const char *what, int ret)
{
	if (ret < 0 && ret != -ENODATA && ret != -ENOMEM)
		dtp_bad_reply(&ei->t, what, ret, 1);
	return ret;
}

/* The reply to @cmd as a dict (a reply that does not parse is counted and logged once). */
static int
query_dict(struct ev_instance *ei, const char *cmd, struct dtel_dict *d)
{
	struct dtel_reply r;
	int ret = query(ei, cmd, &r);

	if (ret < 0)
		return ret;
	ret = parsed(ei, cmd, dtel_parse_dict(&r, cmd, d));
	dtel_reply_release(&r);
	return ret;
}

/* How often the command list of a starting application is read again. */
#define CAPS_AGAIN_MS 100

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
	struct dtel_dict d;
	int ret = query_dict(ei, "/fwd/info", &d);

	if (ret < 0)
		return ret;
	out->stall_ms = dict_u64(&d, "stall_ms", NULL);
	out->link_poll_ms = dict_u64(&d, "link_poll_ms", NULL);
	out->link_check_age_ms = dict_u64(&d, "link_check_age_ms", &out->has_age);
	out->main_lcore = (unsigned int)dict_u64(&d, "main_lcore", NULL);
	dtel_dict_clear(&d);
	return 0;
}

/* Once per instance (again only when that changes, e.g. a restart with other options). */
static void
say_lcore_source(struct ev_instance *ei)
{
	bool have = ei->caps.fwd_lcores || ei->usage_lcores;

	if (!ei->o->lcores || have != ei->said_links_only)
		return;
	ei->said_links_only = !have;
	if (!have)
		LOG(LOG_INFO,
			"DPDK application '%s' reports no lcore data (no /fwd/lcores, no lcore in "
			"/eal/lcore/usage): only its links are watched",
			ei->t.name);
	else
		LOG(LOG_INFO,
			"DPDK application '%s' now reports lcore data: its lcores are watched",
			ei->t.name);
}

/*
 * What the application offers, from its command list, once per process; again every
 * CAPS_AGAIN_MS while it is starting and has none of its own commands yet (it registers
 * them after the EAL opened the socket).
 */
static int
probe_caps(struct ev_instance *ei, uint64_t t)
{
	int ret = dtp_caps_read(query_fn, ei, &ei->t, &ei->caps);

	if (ret < 0)
		return ret;
	ei->stall_us = (uint64_t)(ei->o->stall_threshold * 1e6);
	ei->has_link_check_age = false;
	if (ei->caps.fwd_lcores || ei->caps.fwd_ports) {
		struct fwd_info fi;

		if (read_fwd_info(ei, &fi) == 0) {
			/* The application's own threshold, so that both say STALLED together. */
			if (ei->stall_us == 0)
				ei->stall_us = fi.stall_ms * 1000;
			ei->has_link_check_age = fi.has_age;
			ei->main_lcore = fi.main_lcore;
		}
	}
	/* Which lcores report cycles is known only from the usage reply itself: an application
	 * without a usage callback (testpmd without --record-core-cycles) lists none, and is
	 * then watched for its links alone, without an lcore request per poll. */
	ei->usage_lcores = false;
	if (ei->o->lcores && !ei->caps.fwd_lcores && ei->caps.eal_usage) {
		struct dtel_eal_lcore_usage u;

		if (dtp_eal_usage(query_fn, ei, &ei->t, &u) == 0) {
			ei->usage_lcores = u.n > 0;
			dtel_eal_lcore_usage_clear(&u);
		}
	}
	if (ei->poll_err != 0)
		return ei->poll_err;
	if (ei->stall_us == 0)
		ei->stall_us = 100000;
	ei->have_caps = true;
	ei->caps_again = !ei->caps.fwd_ports && !ei->caps.fwd_lcores && !ei->usage_lcores &&
		dtp_target_young(&ei->t);
	ei->caps_again_ms = t + CAPS_AGAIN_MS;
	say_lcore_source(ei);
	return 0;
}

/* Reading -------------------------------------------------------------------------------- */

/* What one poll read, and what its checks said. */
struct reading {
	bool due[POLL_KINDS]; /* which kinds of poll this one runs */
	bool have_main; /* /fwd/info of the forwarder, for its main lcore */
	struct fwd_info main;
	bool main_passed;
	bool have_links;
	bool links_from_fwd; /* /fwd/ports, else /ethdev/link_status of each port */
	struct events_link_reading *links;
	bool *link_passed;
	size_t nlinks, caplinks;
	bool have_lcores;
	bool lcores_from_fwd; /* /fwd/lcores, else the cycles of /eal/lcore/usage */
	struct events_lcore_reading *lcores;
	uint64_t *total, *busy; /* /eal/lcore/usage cycles of each lcore */
	bool *lcore_passed;
	size_t nlcores;
};

static void
reading_free(struct reading *rd)
{
	free(rd->links);
	free(rd->link_passed);
	free(rd->lcores);
	free(rd->total);
	free(rd->busy);
	free(rd->lcore_passed);
}

static struct events_link_reading *
link_add(struct reading *rd, unsigned int port)
{
	if (rd->nlinks == rd->caplinks) {
		size_t cap = rd->caplinks ? rd->caplinks * 2 : 16;
		struct events_link_reading *v = realloc(rd->links, cap * sizeof(*v));

		if (v == NULL)
			return NULL;
		rd->links = v;
		rd->caplinks = cap;
	}
	rd->links[rd->nlinks] = (struct events_link_reading){.port = port};
	return &rd->links[rd->nlinks++];
}

static int
read_fwd_ports(struct ev_instance *ei, struct reading *rd)
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
	for (size_t i = 0; i < p.n; i++) {
		struct events_link_reading *lr;

		if (!dtp_ports_has(&ei->o->ports, p.v[i].port_id))
			continue;
		lr = link_add(rd, p.v[i].port_id);
		if (lr == NULL)
			break;
		lr->state = p.v[i].up ? EVENTS_LINK_UP : EVENTS_LINK_DOWN;
		lr->speed = p.v[i].speed_mbps;
		lr->duplex = p.v[i].duplex;
		lr->have_changes = true;
		lr->changes = p.v[i].link_changes;
		lr->valid = true;
	}
	dtel_fwd_ports_clear(&p);
	return 0;
}

/* The reply @r (result @ret) to /ethdev/link_status,@port into @out; @r is released. */
static int
link_reply(struct ev_instance *ei, unsigned int port, struct dtel_reply *r, int ret,
	struct events_link_reading *out)
{
	struct dtel_link l;

	if (ret < 0)
		return ret;
	ret = dtel_parse_link(r, &l);
	dtel_reply_release(r);
	if (ret < 0) {
		char what[48];

		snprintf(what, sizeof(what), "/ethdev/link_status,%u", port);
		return parsed(ei, what, ret);
	}
	out->port = port;
	out->state = l.up ? EVENTS_LINK_UP : EVENTS_LINK_DOWN;
	out->speed = l.speed_mbps;
	out->duplex = l.duplex;
	out->valid = true;
	return 0;
}

static int
read_one_link(struct ev_instance *ei, unsigned int port, struct events_link_reading *out)
{
	struct dtel_reply r;
	int ret = query_id(ei, "/ethdev/link_status", port, &r);

	return link_reply(ei, port, &r, ret, out);
}

/* The index of @port among the ports listed last time, or -1. */
static int
listed_before(const struct ev_instance *ei, uint16_t port)
{
	for (size_t i = 0; i < ei->nlink_ids; i++)
		if (ei->link_ids[i] == port)
			return (int)i;
	return -1;
}

/* The link of listed port @port: from the batch when it was asked there, else asked now. */
static int
read_listed_link(struct ev_instance *ei, uint16_t port, struct dtel_reply *r, const int *res,
	struct events_link_reading *out)
{
	int k = listed_before(ei, port);

	if (k < 0 || res[1 + k] == -ECANCELED)
		return read_one_link(ei, port, out);
	return link_reply(ei, port, &r[1 + k], res[1 + k], out);
}

/* The ports /ethdev/list gives that the Ports option selects, into ei->link_ids. */
static void
keep_listed(struct ev_instance *ei, const uint16_t *ids, int n)
{
	uint16_t *keep = malloc(((size_t)n + 1) * sizeof(*keep));
	size_t k = 0;

	if (keep == NULL)
		return; /* the next poll asks the list alone */
	for (int i = 0; i < n; i++)
		if (dtp_ports_has(&ei->o->ports, ids[i]))
			keep[k++] = ids[i];
	free(ei->link_ids);
	ei->link_ids = keep;
	ei->nlink_ids = k;
}

/*
 * /ethdev/list and the links of the ports it gave last time, in one batch (the application's
 * telemetry thread answers them back to back); a port listed for the first time is asked on
 * its own, and the replies of a port no longer listed are dropped.
 */
static int
read_ethdev_links(struct ev_instance *ei, struct reading *rd)
{
	size_t n = 1 + ei->nlink_ids;
	char(*cmd)[32] = malloc(n * sizeof(*cmd));
	const char **p = malloc(n * sizeof(*p));
	struct dtel_reply *r = calloc(n, sizeof(*r));
	int *res = malloc(n * sizeof(*res)), nids = 0, ret = -ENOMEM;
	uint16_t *ids = NULL;

	if (cmd == NULL || p == NULL || r == NULL || res == NULL)
		goto out;
	p[0] = "/ethdev/list";
	for (size_t i = 1; i < n; i++) {
		snprintf(cmd[i], sizeof(cmd[i]), "/ethdev/link_status,%u", ei->link_ids[i - 1]);
		p[i] = cmd[i];
	}
	query_many(ei, p, n, r, res);
	ret = res[0];
	if (ret < 0)
		goto out;
	nids = ret = parsed(ei, "/ethdev/list", dtel_parse_port_list(&r[0], &ids));
	if (ret < 0)
		goto out;
	for (int i = 0; i < nids; i++) {
		struct events_link_reading *lr;

		if (!dtp_ports_has(&ei->o->ports, ids[i]))
			continue;
		lr = link_add(rd, ids[i]);
		if (lr == NULL)
			break;
		/* Listed, but without a usable link answer: still there, nothing to apply. */
		ret = read_listed_link(ei, ids[i], r, res, lr);
		if (connection_error(ret))
			break;
	}
	keep_listed(ei, ids, nids);
	ret = connection_error(ret) ? ret : 0;
out:
	for (size_t i = 0; r != NULL && i < n; i++)
		dtel_reply_release(&r[i]);
	free(ids);
	free(cmd);
	free(p);
	free(r);
	free(res);
	return ret;
}

/* /fwd/ports is the main lcore's snapshot: while that lcore is stalled, ask the ports. */
static int
read_links(struct ev_instance *ei, struct reading *rd)
{
	bool stale = rd->have_main &&
		events_main_stale(rd->main.link_check_age_ms, rd->main.link_poll_ms, ei->stall_us);

	rd->links_from_fwd = ei->caps.fwd_ports && !ei->main_stalled && !stale;
	return rd->links_from_fwd ? read_fwd_ports(ei, rd) : read_ethdev_links(ei, rd);
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

static int
lcores_alloc(struct reading *rd, size_t n)
{
	rd->lcores = calloc(n + 1, sizeof(*rd->lcores));
	rd->total = calloc(n + 1, sizeof(*rd->total));
	rd->busy = calloc(n + 1, sizeof(*rd->busy));
	rd->lcore_passed = calloc(n + 1, sizeof(*rd->lcore_passed));
	return rd->lcores && rd->total && rd->busy && rd->lcore_passed ? 0 : -ENOMEM;
}

static int
read_fwd_lcore_set(struct ev_instance *ei, struct reading *rd)
{
	struct dtel_fwd_lcores l = {0};
	int ret = read_fwd_lcores(ei, &l);

	if (ret == 0)
		ret = lcores_alloc(rd, l.n);
	for (size_t i = 0; ret == 0 && i < l.n; i++)
		rd->lcores[rd->nlcores++] = (struct events_lcore_reading){.id = l.v[i].lcore_id,
			.state = l.v[i].state,
			.age_us = l.v[i].heartbeat_age_us,
			.stalls = l.v[i].stalls};
	dtel_fwd_lcores_clear(&l);
	return ret;
}

/* DPDK >= 23.03 without the forwarder: the cycles of every lcore, in one request. */
static int
read_usage_lcore_set(struct ev_instance *ei, struct reading *rd)
{
	struct dtel_eal_lcore_usage u;
	int ret = dtp_eal_usage(query_fn, ei, &ei->t, &u);

	if (ret < 0)
		return ret;
	ret = lcores_alloc(rd, u.n);
	for (size_t i = 0; ret == 0 && i < u.n; i++) {
		rd->lcores[rd->nlcores] = (struct events_lcore_reading){.id = u.v[i].lcore_id};
		rd->total[rd->nlcores] = u.v[i].total_cycles;
		rd->busy[rd->nlcores++] = u.v[i].busy_cycles;
	}
	dtel_eal_lcore_usage_clear(&u);
	return ret;
}

/* What the requests of a poll since @since (a service_ns of the target) cost, for @kind. */
static void
charge(struct ev_instance *ei, enum poll_kind kind, uint64_t since)
{
	ei->round_ns[kind] += ei->t.service_ns - since;
}

/*
 * Which kinds of poll are due at @t: links and lcores each at its interval, and when neither
 * is, a request that shows whether the application answers (NotRespondingPolls counts polls
 * whatever they asked). Half a PollInterval early counts as due: polls start a little late or
 * early, and an interval of one PollInterval must not become two.
 */
static void
due_at(struct ev_instance *ei, uint64_t t, struct reading *rd)
{
	uint64_t early = (uint64_t)(ei->o->poll_interval * 500);

	rd->due[POLL_LINKS] = ei->o->link && t + early >= ei->next_ms[POLL_LINKS];
	rd->due[POLL_LCORES] = ei->o->lcores && (ei->caps.fwd_lcores || ei->usage_lcores) &&
		t + early >= ei->next_ms[POLL_LCORES];
	rd->due[POLL_ALIVE] = !rd->due[POLL_LINKS] && !rd->due[POLL_LCORES] &&
		t + early >= ei->next_ms[POLL_ALIVE];
}

/* /info: the smallest reply every DPDK release has (lib/telemetry/telemetry.c json_info). */
static void
read_alive(struct ev_instance *ei)
{
	struct dtel_reply r;

	if (query(ei, "/info", &r) == 0)
		dtel_reply_release(&r);
}

static void
read_link_set(struct ev_instance *ei, struct reading *rd)
{
	if (ei->caps.fwd_ports && ei->has_link_check_age)
		rd->have_main = read_fwd_info(ei, &rd->main) == 0 && rd->main.has_age;
	rd->have_links = read_links(ei, rd) == 0;
	rd->link_passed = calloc(rd->nlinks + 1, sizeof(*rd->link_passed));
	rd->have_links &= rd->link_passed != NULL;
}

/* Read every source that is due; the first connection error ends the poll (ei->poll_err). */
static void
read_sources(struct ev_instance *ei, uint64_t t, struct reading *rd)
{
	uint64_t s0 = ei->t.service_ns;
	bool probed = !ei->have_caps || (ei->caps_again && t >= ei->caps_again_ms);

	/* The command list (again, while a starting application may register more) shows that
	 * it answers, as the liveness request would: charged to that. */
	if (probed && probe_caps(ei, t) < 0) {
		charge(ei, POLL_ALIVE, s0);
		return;
	}
	charge(ei, POLL_ALIVE, s0);
	due_at(ei, t, rd);
	rd->due[POLL_ALIVE] &= !probed;
	s0 = ei->t.service_ns;
	if (rd->due[POLL_LINKS])
		read_link_set(ei, rd);
	charge(ei, POLL_LINKS, s0);
	s0 = ei->t.service_ns;
	if (rd->due[POLL_LCORES]) {
		rd->lcores_from_fwd = ei->caps.fwd_lcores;
		rd->have_lcores = (ei->caps.fwd_lcores ? read_fwd_lcore_set(ei, rd)
						       : read_usage_lcore_set(ei, rd)) == 0;
	}
	charge(ei, POLL_LCORES, s0);
	s0 = ei->t.service_ns;
	if (rd->due[POLL_ALIVE])
		read_alive(ei);
	charge(ei, POLL_ALIVE, s0);
}

static enum events_poll
outcome(const struct ev_instance *ei, uint64_t sent_before)
{
	/* Nothing due in this poll (the budget stretched every kind): nothing was learnt. */
	if (ei->poll_err == 0 && ei->t.sent == sent_before)
		return EVENTS_POLL_NOT_SENT;
	/* Not sent (reconnecting backs off after a refusal): nothing was learnt. Unanswered in
	 * time: hung, or gone if its process exited. Refused, or answered only with what the
	 * protocol does not allow (garbage, a bad greeting): gone. A null reply, or one that
	 * does not parse, is an answer. */
	/* Not sent either: our own requests before it were still being answered when its
	 * Timeout ran out (-EBUSY): the application was answering. */
	if (ei->poll_err == -EAGAIN || ei->poll_err == -EBUSY)
		return EVENTS_POLL_NOT_SENT;
	if (ei->poll_err == -ETIMEDOUT)
		return EVENTS_POLL_UNANSWERED;
	if (ei->poll_err != 0 || !ei->t.up)
		return EVENTS_POLL_REFUSED;
	return EVENTS_POLL_ANSWERED;
}

/* Confirming ----------------------------------------------------------------------------- */

static struct events_port *
port_slot(struct ev_instance *ei, unsigned int id)
{
	return DTP_SLOT(ei->ports, ei->nports, id, NULL);
}

static struct events_lcore *
lcore_slot(struct ev_instance *ei, unsigned int id)
{
	return DTP_SLOT(ei->lcores, ei->nlcores, id, NULL);
}

/* /ethdev/info: the device name, and whether the port is started (true when unknown). */
static bool
learn_info(struct ev_instance *ei, struct events_port *p)
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

/* The same source again: does it say the same of r's port? */
static bool
link_again(struct ev_instance *ei, const struct reading *rd, const struct events_link_reading *r)
{
	struct reading again = {0};
	struct events_link_reading one = {0};
	bool agree = false;

	if (!rd->links_from_fwd)
		return read_one_link(ei, r->port, &one) == 0 && one.state == r->state;
	if (read_fwd_ports(ei, &again) == 0)
		for (size_t i = 0; i < again.nlinks; i++)
			if (again.links[i].port == r->port)
				agree = again.links[i].state == r->state;
	reading_free(&again);
	return agree;
}

/*
 * A port seen down for the first time (start, or after a restart) is news only when it is
 * started and still down: an application that is starting its ports is not a fault.
 */
static void
confirm_links(struct ev_instance *ei, struct reading *rd)
{
	bool confirm = dtp_needs_confirm(&ei->t);

	for (size_t i = 0; i < rd->nlinks && ei->poll_err == 0; i++) {
		const struct events_link_reading *r = &rd->links[i];
		struct events_port *p = port_slot(ei, r->port);

		if (p == NULL)
			continue;
		switch (events_link_check(p, r, ei->o->link_confirm && confirm)) {
		case EVENTS_CHECK_FIRST_DOWN:
			rd->link_passed[i] =
				learn_info(ei, p) && (!confirm || link_again(ei, rd, r));
			break;
		case EVENTS_CHECK_AGAIN:
			rd->link_passed[i] = link_again(ei, rd, r);
			break;
		case EVENTS_CHECK_NONE:
			rd->link_passed[i] = true;
			break;
		}
		/* The device name, for the link-down message: asked at each going down, as the
		 * device at a port id can change while the application runs (a port detached,
		 * another attached at its id). */
		if (r->valid && r->state == EVENTS_LINK_DOWN && p->known &&
			(p->state != EVENTS_LINK_DOWN || !p->name[0]))
			learn_info(ei, p);
	}
}

/* /fwd/lcores again: does it say the same of lcore @id? */
static bool
fwd_lcore_again(struct ev_instance *ei, unsigned int id, enum dtel_lcore_state want)
{
	struct dtel_fwd_lcores l = {0};
	bool agree = false;

	if (read_fwd_lcores(ei, &l) < 0)
		return false;
	for (size_t i = 0; i < l.n; i++) {
		struct events_lcore_reading r = {
			.id = id, .state = l.v[i].state, .age_us = l.v[i].heartbeat_age_us};

		if (l.v[i].lcore_id == id)
			agree = events_lcore_effective(&r, ei->stall_us) == want;
	}
	dtel_fwd_lcores_clear(&l);
	return agree;
}

/*
 * /eal/lcore/usage again, once for every lcore that needs it: stalled when its cycles still
 * have not moved since the reading, recovered when they moved on from where they stood still.
 */
static void
usage_again(struct ev_instance *ei, struct reading *rd, const bool *check)
{
	struct dtel_eal_lcore_usage u;

	if (dtp_eal_usage(query_fn, ei, &ei->t, &u) < 0)
		return; /* the checks stay failed */
	for (size_t i = 0; i < rd->nlcores; i++) {
		const struct events_lcore *l = check[i] ? lcore_slot(ei, rd->lcores[i].id) : NULL;
		enum dtel_lcore_state want;

		if (l == NULL)
			continue;
		want = events_lcore_effective(&rd->lcores[i], ei->stall_us);
		for (size_t k = 0; k < u.n; k++)
			if (u.v[k].lcore_id == l->id)
				rd->lcore_passed[i] = want == DTEL_LCORE_STALLED
					? u.v[k].total_cycles == l->total
					: u.v[k].total_cycles != l->prev_total;
	}
	dtel_eal_lcore_usage_clear(&u);
}

/*
 * A transition into or out of a bad state is confirmed by a second query to its source
 * (one for all lcores of /eal/lcore/usage), where the release needs it.
 */
static void
confirm_lcores(struct ev_instance *ei, struct reading *rd, uint64_t t)
{
	bool confirm = dtp_needs_confirm(&ei->t), *check = calloc(rd->nlcores + 1, sizeof(*check));
	bool any = false;

	for (size_t i = 0; i < rd->nlcores && ei->poll_err == 0; i++) {
		struct events_lcore_reading *r = &rd->lcores[i];
		struct events_lcore *l = lcore_slot(ei, r->id);

		if (l == NULL)
			continue;
		if (!rd->lcores_from_fwd)
			events_lcore_cycles(l, rd->total[i], rd->busy[i], t, r);
		rd->lcore_passed[i] = true;
		if (!confirm || !events_lcore_check(l, r, ei->stall_us))
			continue;
		if (rd->lcores_from_fwd) {
			rd->lcore_passed[i] =
				fwd_lcore_again(ei, r->id, events_lcore_effective(r, ei->stall_us));
			continue;
		}
		rd->lcore_passed[i] = false;
		if (check != NULL)
			check[i] = any = true;
	}
	if (any && ei->poll_err == 0)
		usage_again(ei, rd, check);
	free(check);
}

/* The main lcore's stall, or its end, confirmed by a second /fwd/info. */
static void
confirm_main(struct ev_instance *ei, struct reading *rd)
{
	struct fwd_info again;
	bool stale;

	if (!rd->have_main)
		return;
	stale = events_main_stale(rd->main.link_check_age_ms, rd->main.link_poll_ms, ei->stall_us);
	rd->main_passed = true;
	if (stale == ei->main_stalled || !ei->o->link_confirm || !dtp_needs_confirm(&ei->t))
		return;
	rd->main_passed = read_fwd_info(ei, &again) == 0 && again.has_age &&
		events_main_stale(again.link_check_age_ms, again.link_poll_ms, ei->stall_us) ==
			stale;
	if (rd->main_passed)
		rd->main = again;
}

/* Applying ------------------------------------------------------------------------------- */

static void
apply_main(struct ev_instance *ei, const struct reading *rd, uint64_t t)
{
	bool stale;

	if (!rd->have_main)
		return;
	stale = events_main_stale(rd->main.link_check_age_ms, rd->main.link_poll_ms, ei->stall_us);
	if (stale == ei->main_stalled || (stale && t < ei->quiet_until_ms))
		return;
	if (!rd->main_passed) {
		ei->t.discarded++;
		return;
	}
	ei->main_stalled = stale;
	if (stale)
		ei->main_stalled_ms = t - rd->main.link_check_age_ms;
	notify_main_lcore(ei, rd->main.link_check_age_ms, t);
}

static bool
listed(const struct reading *rd, unsigned int port)
{
	for (size_t i = 0; i < rd->nlinks; i++)
		if (rd->links[i].port == port)
			return true;
	return false;
}

/* Ports the application no longer lists: one line, and their values stop. */
static void
drop_unlisted_ports(struct ev_instance *ei, const struct reading *rd)
{
	size_t k = 0;

	for (size_t i = 0; i < ei->nports; i++) {
		struct events_port *p = &ei->ports[i];

		if (listed(rd, p->id)) {
			ei->ports[k++] = *p;
			continue;
		}
		if (p->known)
			LOG(LOG_INFO,
				"port %u of DPDK application '%s' is no longer listed: its values "
				"stop",
				p->id, ei->t.name);
		events_port_fini(p);
	}
	ei->nports = k;
}

static void
apply_links(struct ev_instance *ei, const struct reading *rd, uint64_t t)
{
	struct events_link_tr tr[EVENTS_LINK_TR_MAX];

	for (size_t i = 0; i < rd->nlinks; i++) {
		struct events_port *p = port_slot(ei, rd->links[i].port);
		size_t n;

		if (p == NULL)
			continue;
		n = events_link_apply(p, &rd->links[i], rd->link_passed[i], t, &ei->link_conf, tr);
		for (size_t k = 0; k < n; k++)
			notify_link(ei, p, &tr[k]);
	}
	drop_unlisted_ports(ei, rd);
	for (size_t i = 0; i < ei->nports; i++)
		if (events_link_tick(&ei->ports[i], t, &ei->link_conf, tr) > 0)
			notify_link(ei, &ei->ports[i], tr);
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
		if (ei->lcores[i].known)
			LOG(LOG_INFO,
				"lcore %u of DPDK application '%s' is no longer reported: its "
				"values stop",
				ei->lcores[i].id, ei->t.name);
	}
	ei->nlcores = k;
}

static void
apply_lcores(struct ev_instance *ei, const struct reading *rd, uint64_t t)
{
	struct events_lcore_tr tr;

	for (size_t i = 0; i < ei->nlcores; i++)
		ei->lcores[i].seen = false;
	for (size_t i = 0; i < rd->nlcores; i++) {
		struct events_lcore *l = lcore_slot(ei, rd->lcores[i].id);

		if (l == NULL)
			continue;
		if (t < ei->quiet_until_ms && l->known &&
			events_lcore_bad(events_lcore_effective(&rd->lcores[i], ei->stall_us))) {
			l->seen = true; /* still there; its heartbeat dates from the hang */
			continue;
		}
		if (events_lcore_apply(l, &rd->lcores[i], rd->lcore_passed[i], t, ei->stall_us,
			    ei->o->initial_state, &tr) > 0)
			notify_lcore(ei, l, &tr);
	}
	drop_unseen_lcores(ei);
}

/* One poll ----------------------------------------------------------------------------- */

/* Forget every port and lcore: they belong to a process that is gone. */
static void
forget_state(struct ev_instance *ei)
{
	for (size_t i = 0; i < ei->nports; i++)
		events_port_fini(&ei->ports[i]);
	ei->nports = 0;
	ei->nlcores = 0;
	ei->have_caps = false;
	ei->usage_lcores = false;
	ei->main_stalled = false;
}

/* "1234", or "?" for a pid that is not known. */
static const char *
pid_word(long pid, char *buf, size_t size)
{
	if (pid > 0)
		snprintf(buf, size, "%ld", pid);
	else
		snprintf(buf, size, "?");
	return buf;
}

/*
 * Another process behind the socket, whether this poll was answered or not (one that hangs
 * right after it made its socket never answers, and SO_PEERCRED names it at connect): one
 * warning, and what was known of the old one goes. Liveness is then the new process's.
 */
static void
check_restart(struct ev_instance *ei)
{
	char a[24], b[24];
	long old_pid;

	if (!dtp_target_restarted(&ei->t, &old_pid))
		return;
	pid_word(old_pid, a, sizeof(a));
	pid_word(ei->t.pid, b, sizeof(b));
	notify_instance(ei, NOTIF_WARNING, a, b, -1, "DPDK application %s restarted (pid %s → %s)",
		ei->t.name, a, b);
	forget_state(ei);
}

/* The interval in force of a kind of poll, in seconds (0: not polled). */
static double
interval_of(const struct ev_instance *ei, enum poll_kind k, bool polled)
{
	if (!polled)
		return 0;
	return ei->budget[k].interval_ns > 0 ? (double)ei->budget[k].interval_ns / 1e9
					     : ei->o->poll_interval;
}

/* Copy what the read callback dispatches. Called with the dispatch lock held. */
static void
publish(struct ev_instance *ei)
{
	struct snapshot *sn = &ei->snap;
	struct events_port *pv;
	struct events_lcore *lv;

	pthread_mutex_lock(&ei->lock);
	sn->polled = true;
	sn->not_responding = ei->st.not_responding;
	sn->health = ei->t;
	sn->health.up = ei->st.up;
	sn->health.invalid += __atomic_load_n(&ei->range_invalid, __ATOMIC_RELAXED);
	sn->link_interval = interval_of(ei, POLL_LINKS, ei->o->link);
	sn->lcore_interval = interval_of(
		ei, POLL_LCORES, ei->o->lcores && (ei->caps.fwd_lcores || ei->usage_lcores));
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

/*
 * One identifier, one time order. collectd 5.12's plugin_dispatch_values() only queues a
 * value; several write threads (WriteThreads, default 5) take values off the queue and store
 * them in the cache (src/daemon/plugin.c plugin_write_thread, src/daemon/utils_cache.c
 * uc_update), so two values of one identifier queued close together can reach the cache in
 * either order, and the older is then refused: "uc_update: Value too old" (seen at start-up,
 * when the first poll's change and the first read went out 2 ms apart). Taking their times
 * in order under one lock (dispatch_lock) cannot prevent that; keeping them apart in time
 * does: the values of the instance, of a port or of an lcore go out at most once per gap,
 * whichever thread sends them. The reads keep their cadence: a poll leaves a change to the
 * read when it is due within the gap (the read then sends it, from a snapshot that has it),
 * and otherwise sends it at once, at least a gap after the last dispatch of its group. Half
 * the interval, at most 0.5 s: a write thread would have to stall that long between taking
 * one off the queue and storing it for the other to overtake it.
 */
static cdtime_t
dispatch_gap(void)
{
	cdtime_t gap = plugin_get_interval() / 2;

	return gap < MS_TO_CDTIME_T(500) ? gap : MS_TO_CDTIME_T(500);
}

/* Whether a group of values last sent at s->at may go out at @now; if so, s->at = @now and
 * it is no longer dirty. NULL (no memory to remember it): yes. Under dispatch_lock. */
static bool
due(struct sent_at *s, cdtime_t now, cdtime_t gap)
{
	if (s != NULL && s->at != 0 && now - s->at < gap)
		return false;
	if (s != NULL) {
		s->at = now;
		s->dirty = false;
	}
	return true;
}

/* Whether collectd's next read of the instance comes within the gap (the interval after the
 * last one): a change then goes out with it. Under dispatch_lock. */
static bool
read_imminent(const struct ev_instance *ei, cdtime_t now, cdtime_t gap)
{
	cdtime_t next = ei->last_read + plugin_get_interval();

	return ei->last_read != 0 && next > now && next - now < gap;
}

/* A poll's: a group whose values changed (@changed, now or in an earlier poll) goes out
 * unless a read will send it within the gap, once due. */
static bool
poll_due(struct sent_at *s, bool changed, bool imminent, cdtime_t now, cdtime_t gap)
{
	if (s == NULL)
		return changed;
	s->dirty |= changed;
	return s->dirty && !imminent && due(s, now, gap);
}

static struct sent_at *
sent_slot(struct sent_at **v, size_t *n, unsigned int id)
{
	size_t i;
	struct sent_at *s = dtp_slot(*v, n, sizeof(**v), id, &i, NULL);

	if (s == NULL)
		return NULL;
	*v = s;
	return &s[i];
}

/*
 * The values that changed in this poll go out under the dispatch lock, after the snapshot
 * the read callback dispatches from was published under the same lock: a read can never
 * dispatch an older state with a later time than a change.
 */
static void
finish_poll(struct ev_instance *ei, bool instance_changed)
{
	cdtime_t now, gap = dispatch_gap();
	bool imminent;

	pthread_mutex_lock(&ei->dispatch_lock);
	publish(ei);
	now = cdtime();
	imminent = read_imminent(ei, now, gap);
	if (poll_due(&ei->inst_sent, instance_changed, imminent, now, gap))
		dispatch_instance_at(ei, &ei->snap, now);
	/* A change is the group's from now on (sent_at.dirty): the poll sends it once due, or
	 * the read does, from the snapshot just published. */
	for (size_t i = 0; i < ei->nports; i++) {
		struct events_port *p = &ei->ports[i];

		if (poll_due(sent_slot(&ei->port_sent, &ei->nport_sent, p->id), p->dirty, imminent,
			    now, gap))
			dispatch_port_at(ei, p, now);
		p->dirty = false;
	}
	for (size_t i = 0; i < ei->nlcores; i++) {
		struct events_lcore *l = &ei->lcores[i];

		if (poll_due(sent_slot(&ei->lcore_sent, &ei->nlcore_sent, l->id), l->dirty,
			    imminent, now, gap))
			dispatch_lcore_at(ei, l, now);
		l->dirty = false;
	}
	pthread_mutex_unlock(&ei->dispatch_lock);
}

/* The second queries of what changed, each charged to its kind of poll. */
static void
confirm(struct ev_instance *ei, struct reading *rd, uint64_t t)
{
	uint64_t s0 = ei->t.service_ns;

	confirm_main(ei, rd);
	if (rd->have_links)
		confirm_links(ei, rd);
	charge(ei, POLL_LINKS, s0);
	s0 = ei->t.service_ns;
	if (rd->have_lcores)
		confirm_lcores(ei, rd, t);
	charge(ei, POLL_LCORES, s0);
}

/* When each kind of poll that ran is due again: PollInterval, or longer within the budget. */
static void
plan_next(struct ev_instance *ei, const struct reading *rd, uint64_t t)
{
	uint64_t want = (uint64_t)(ei->o->poll_interval * 1e9);

	for (int k = 0; k < POLL_KINDS; k++) {
		if (!rd->due[k])
			continue;
		ei->next_ms[k] = t +
			dtp_budget_plan(
				&ei->budget[k], ei->round_ns[k], want, ei->o->max_app_load) /
				1000000u;
		ei->round_ns[k] = 0;
	}
}

/* Read every source, confirm the candidate changes (all the I/O), apply, notify, dispatch. */
static void
poll_once(struct ev_instance *ei)
{
	struct events_instance_tr itr;
	struct reading rd = {0};
	uint64_t t = dtp_now_ms();
	bool was_up = ei->st.up, was_hung = ei->st.not_responding;
	uint64_t sent = ei->t.sent;
	enum events_poll poll;

	ei->poll_err = 0;
	/* The stats plugin's reads wait while this poll asks (libdpdktel's queue). */
	dtel_shared_poll_begin(ei->t.sh);
	read_sources(ei, t, &rd);
	poll = outcome(ei, sent);
	/* A restart must be known before these readings meet the old state, and before an
	 * unanswered poll is judged: by the process that holds the socket now. */
	check_restart(ei);
	if (poll == EVENTS_POLL_ANSWERED) {
		confirm(ei, &rd, t);
		poll = outcome(ei, sent); /* a check may have met the hang */
	}
	dtel_shared_poll_end(ei->t.sh);
	plan_next(ei, &rd, t);
	/* /proc is read only for an unanswered poll, the one whose verdict it decides. */
	if (events_instance_apply(&ei->st, poll,
		    poll == EVENTS_POLL_UNANSWERED && dtp_target_exited(&ei->t), ei->t.ever_up, t,
		    dtp_now_ms(), ei->o->not_responding_polls, &itr) > 0) {
		notify_instance_tr(ei, &itr);
		if (itr.kind == EVENTS_TR_ANSWERS_AGAIN)
			ei->quiet_until_ms = dtp_now_ms() + ei->stall_us / 1000 +
				2 * (uint64_t)(ei->o->poll_interval * 1000);
	}
	if (poll == EVENTS_POLL_ANSWERED) {
		apply_main(ei, &rd, t);
		if (rd.have_links)
			apply_links(ei, &rd, t);
		if (rd.have_lcores)
			apply_lcores(ei, &rd, t);
	}
	reading_free(&rd);
	finish_poll(ei, ei->st.up != was_up || ei->st.not_responding != was_hung);
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
	dtp_instances_remove(&instances, ei);
	for (int k = 0; k < POLL_KINDS; k++)
		dtp_budget_fini(&ei->budget[k]);
	dtp_target_fini(&ei->t);
	forget_state(ei);
	free(ei->link_ids);
	pthread_mutex_destroy(&ei->lock);
	pthread_mutex_destroy(&ei->dispatch_lock);
	pthread_cond_destroy(&ei->wake);
	free(ei->ports);
	free(ei->lcores);
	free(ei->snap.ports);
	free(ei->snap.lcores);
	free(ei->port_sent);
	free(ei->lcore_sent);
	free(ei);
}

static int
budgets_init(struct ev_instance *ei)
{
	static const char *const what[POLL_KINDS] = {"link poll", "lcore poll", "liveness poll"};

	for (int k = 0; k < POLL_KINDS; k++)
		if (dtp_budget_init(&ei->budget[k], &ei->t, what[k]) < 0)
			return -1;
	return 0;
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
	ei->link_conf = (struct events_link_conf){
		.flap_window_ms = (uint64_t)(o->flap_window * 1000 + 0.5),
		.flap_threshold = o->flap_threshold,
		.report_initial = o->initial_state,
	};
	if (dtp_target_init(&ei->t, PLUGIN, name, path, (int)(o->timeout * 1000 + 0.5)) < 0 ||
		budgets_init(ei) < 0)
		goto fail;
	ei->t.prio = DTEL_PRIO_POLL;
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
		&instances, &conf, (uint64_t)(conf.retire_after * 1000), dtp_now_ms());
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
	cdtime_t now, gap = dispatch_gap();

	pthread_mutex_lock(&ei->dispatch_lock);
	/* Before the first poll: an "up 0" now would be a guess, not a reading. What a poll
	 * sent less than a gap ago is as fresh as this (see dispatch_gap()). */
	if (sn->polled) {
		now = cdtime();
		ei->last_read = now;
		if (due(&ei->inst_sent, now, gap))
			dispatch_instance_at(ei, sn, now);
		/* A gone application's ports and lcores are covered by its own event. */
		for (size_t k = 0; sn->health.up && k < sn->nports; k++)
			if (due(sent_slot(&ei->port_sent, &ei->nport_sent, sn->ports[k].id), now,
				    gap))
				dispatch_port_at(ei, &sn->ports[k], now);
		for (size_t k = 0; sn->health.up && k < sn->nlcores; k++)
			if (due(sent_slot(&ei->lcore_sent, &ei->nlcore_sent, sn->lcores[k].id), now,
				    gap))
				dispatch_lcore_at(ei, &sn->lcores[k], now);
	}
	pthread_mutex_unlock(&ei->dispatch_lock);
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
#define CONF_ARGS PLUGIN, options, sizeof(options) / sizeof(options[0]), &defaults, sizeof(defaults)

static int
events_config(oconfig_item_t *ci)
{
	return dtp_conf_config(&conf, CONF_ARGS, ci);
}

static const char *const types[] = {"link_status", "link_speed", "link_changes", "link_flapping",
	"lcore_state", "heartbeat_age", "stalls", "percent", "up", "not_responding", "restarts",
	"telemetry_requests", "app_load", "poll_interval"};

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
	LOG(LOG_INFO, "dpdktel %s (libdpdktel %s)", DPDKTEL_VERSION, dtel_version());
	if (dtp_conf_init(&conf, CONF_ARGS) < 0)
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
