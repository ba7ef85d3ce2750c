/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdktel_stats: port, queue, extended and application counters of every DPDK application
 * on the host, read from its telemetry v2 socket (docs/dpdktel_stats.md, docs/metrics.md).
 *
 * Each instance (an <Instance> block, or a socket found under RuntimeDir) has its own read
 * callback, so a hung application delays only itself, by at most Timeout per request. All
 * requests go through libdpdktel's shared session for the socket: one connection per socket
 * for the whole collectd process, one request at a time (DPDK 22.11's strtok race). A read
 * never fails towards collectd (that would make collectd back off for up to a day): an
 * application that does not answer is reported as up 0.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/dtp.h"
#include "command.h"
#include "devices.h"
#include "port_drops.h"
#include "memory.h"

#define PLUGIN "dpdktel_stats"
#define LOG(level, ...) DTP_LOG(level, PLUGIN, __VA_ARGS__)

/* Configuration ---------------------------------------------------------------------------- */

struct stats_opts {
	bool basic, per_queue, xstats, app, memory;
	bool drops; /* Drops: port_drops.c */
	unsigned int hide_zero_from; /* xstats of a full reply from which to ask hide_zero=true */
	double timeout;
	double link_interval; /* seconds between two /ethdev/link_status of a port; 0: every read */
	double port_info_interval; /* seconds between two /ethdev/info of a port; 0: every read */
	struct dtp_ports ports;
	struct dtp_globs include, exclude;
	struct dtp_globs xgauge; /* XStatsGauge */
	struct stats_cmds commands; /* <Command> blocks */
	struct stats_devices_opts devices;
	double max_app_load; /* percent of one core, both plugins together */
};

static const struct stats_opts defaults = {
	.basic = true,
	.per_queue = false,
	.xstats = true,
	.app = true,
	.memory = true,
	.drops = true,
	.timeout = 0.5,
	.hide_zero_from = DTEL_DICT_MAX_ENTRIES,
	.port_info_interval = 60,
	.ports.all = true,
	.xgauge = STATS_XSTATS_GAUGE_DEFAULT,
	.devices = STATS_DEVICES_DEFAULTS,
	.max_app_load = DTP_MAX_APP_LOAD_DEFAULT,
};

#define OPT(...) DTP_OPT(stats_opts, __VA_ARGS__)
#define BOOL_OPT(...) DTP_BOOL_OPT(stats_opts, __VA_ARGS__)

static const struct dtp_option options[] = {
	BOOL_OPT("BasicStats", basic),
	BOOL_OPT("PerQueue", per_queue),
	BOOL_OPT("XStats", xstats),
	OPT("XStatsInclude", DTP_OPT_GLOBS, include, 0, 0,
		"one or more shell patterns such as \"rx_*_packets\""),
	OPT("XStatsExclude", DTP_OPT_GLOBS, exclude, 0, 0,
		"one or more shell patterns such as \"*_bad_*\""),
	OPT("XStatsGauge", DTP_OPT_GLOBS, xgauge, 0, 0,
		"one or more shell patterns such as \"*_available\""),
	{"Command", DTP_OPT_CUSTOM, offsetof(struct stats_opts, commands),
		sizeof(struct stats_cmds), DTP_OPT_GLOBAL | DTP_OPT_INSTANCE, 0, 0,
		"a <Command \"/path\"> block", stats_commands_parse, stats_commands_free},
	OPT("XStatsHideZeroFrom", DTP_OPT_UINT, hide_zero_from, 1, DTEL_DICT_MAX_ENTRIES,
		"a number of extended counters from 1 to 256"),
	OPT("LinkInterval", DTP_OPT_SECONDS, link_interval, 0, 86400,
		"seconds from 0 (the link at every read) to 86400"),
	OPT("PortInfoInterval", DTP_OPT_SECONDS, port_info_interval, 0, 86400,
		"seconds from 0 (/ethdev/info at every read) to 86400"),
	BOOL_OPT("AppStats", app),
	BOOL_OPT("MemoryStats", memory),
	BOOL_OPT("Drops", drops),
	DTP_TIMEOUT_OPT(stats_opts),
	DTP_MAX_APP_LOAD_OPT(stats_opts),
	DTP_PORTS_OPT(stats_opts),
	STATS_DEVICES_OPTS(stats_opts, devices),
};

static struct dtp_conf conf;

/* Runtime state ------------------------------------------------------------------------- */

/* Why a reply may have been cut; each is logged once per port. */
enum cut_cause { CUT_NEAR_LIMIT, CUT_DICT_FULL, CUT_ARRAY_FULL, CUT_CAUSES };

struct port_state {
	unsigned int id; /* first: dtp_slot() */
	bool seen; /* in the application's last /ethdev/list */
	uint64_t queues_moved; /* bit q: queue q moved a packet at some point */
	bool have_info;
	bool have_counts; /* ipackets and opackets below are known */
	struct dtel_port_info info; /* see read_info() for when it is read again */
	char info_ti[DATA_MAX_NAME_LEN]; /* port_info's type instance, made from info */
	unsigned int cut_logged; /* bit per enum cut_cause */
	bool no_queues_logged; /* PerQueue found no per-queue counters for the port: logged */
	bool hide_zero; /* ask /ethdev/xstats with hide_zero=true (DPDK >= 23.03) */
	struct dtel_xstats known; /* with hide_zero: every counter of the port seen so far */
	bool basic_done, queues_done; /* this read: dispatched from the xstats already */
	/* What XStats does with each counter of the last reply (enum xstat_kind), kept while
	 * the reply has the same names (their hash): see xstat_kinds(). */
	uint8_t *xkinds;
	size_t nxkinds;
	uint64_t xnames_hash;
	bool have_link; /* link_speed below is of the last /ethdev/link_status */
	double link_speed; /* -1: the application did not know it */
	cdtime_t link_next; /* LinkInterval: when to ask /ethdev/link_status again */
	cdtime_t info_next; /* PortInfoInterval: when to ask /ethdev/info again */
	cdtime_t info_read; /* the read that asked it last (its time) */
	uint64_t names_hash; /* of the names of its last xstats reply; 0: none yet */
	uint64_t ipackets, opackets; /* at the last read, to see them go back */
	struct stats_drops drops; /* Drops */
};

struct lcore_state {
	unsigned int id; /* first: dtp_slot() */
	bool have;
	uint64_t busy, total; /* at the previous read, for the busy percentage */
	char info_ti[DATA_MAX_NAME_LEN]; /* lcore_info's type instance; "": none */
};

/* Ports whose /ethdev/xstats (and /ethdev/link_status when due) go out together: the
 * application's telemetry thread then answers them back to back, not woken again for each
 * between collectd's work on the replies, which costs it less CPU (docs/performance.md). */
#define PREFETCH_PORTS 32

struct stats_instance {
	struct dtp_target t;
	const struct stats_opts *o;
	bool discovered;
	bool halted; /* this read met a connection-level failure: it asks nothing more */
	/* MaxAppLoad: the reads run every Interval, or less often when their requests would
	 * cost the application more than the budget leaves them (dtp_budget_plan()). */
	struct dtp_budget budget;
	cdtime_t read_next; /* no read before this */

	struct port_state *ports;
	size_t nports;
	struct lcore_state *lcores;
	size_t nlcores;

	uint64_t caps_generation; /* capabilities below were probed for this generation */
	bool caps_young; /* ... while the application was starting: probe again */
	struct dtp_caps caps;
	bool globs_checked;
	struct stats_memory mem; /* MemoryStats: memory.c */
	uint64_t lcore_info_generation; /* the lcores' info was read for this generation */
	uint64_t no_usage_generation; /* /eal/lcore/usage listed no lcore in this generation */
	uint64_t info_generation; /* instance_info below is of this generation */
	uint64_t no_ethdev_generation; /* "no ethdev" was logged for this generation */
	char info_ti[DATA_MAX_NAME_LEN]; /* instance_info's type instance */
	struct stats_cmd_state *cmd_state; /* of each <Command>, made at the first read */
	struct stats_devices devices; /* cryptodev, dmadev, eventdev, rawdev */

	/* The ports of the last /ethdev/list, asked again after PORT_LIST_EVERY (see
	 * ports_due()); between two lists, a reply from another process ends the read. */
	uint16_t *port_ids;
	int nport_ids; /* -1: not listed */
	cdtime_t ports_next;
	bool relist_ports; /* a port answered null: maybe gone */
	bool on_listed; /* this read uses the list of an earlier read */
	bool stale; /* ... and a reply of it came from another process */

	/* The port requests of the next PREFETCH_PORTS ports, sent at once (prefetch());
	 * query() hands their replies out. */
	struct prefetched {
		char cmd[96];
		struct dtel_reply reply;
		int result; /* -ECANCELED, -ECONNABORTED: never answered, asked again by query() */
		bool taken;
	} pre[2 * PREFETCH_PORTS];
	size_t npre;
};

/* At most one /ethdev/list a second, and one at every read of an application still starting
 * or just reconnected: a port an application adds (Open vSwitch does) shows within a second,
 * or at the next read when the Interval is longer. */
#define PORT_LIST_EVERY TIME_T_TO_CDTIME_T(1)

static int start_discovered(const char *name, const char *path);
static void instance_retire(void *inst);

/* Every instance, configured or discovered, so that discovery knows which sockets it has. */
static struct dtp_instances instances =
	DTP_INSTANCES_INIT(PLUGIN, start_discovered, instance_retire);

/* Values and requests -------------------------------------------------------------------- */

/* Whether the shared connection is the one the last port list came over (@any_conn: or
 * another one, to the same process). */
static bool
same_connection(struct stats_instance *si, bool any_conn)
{
	struct dtel_shared_status st;

	dtel_shared_status(si->t.sh, &st);
	return (any_conn || st.connects == si->t.connects) && st.generation == si->t.generation;
}

/* The reply prefetch() got for @cmd, as dtp_query() would give it (it has been counted);
 * -ECANCELED when there is none. */
static int
take_prefetched(struct stats_instance *si, const char *cmd, struct dtel_reply *r)
{
	for (size_t i = 0; i < si->npre; i++) {
		struct prefetched *p = &si->pre[i];

		/* Never sent, or sent and left unread on a connection closed for it: asked
		 * again (a null or cut reply before it ends nothing). */
		if (p->taken || p->result == -ECANCELED || p->result == -ECONNABORTED ||
			strcmp(p->cmd, cmd) != 0)
			continue;
		p->taken = true;
		*r = p->reply;
		memset(&p->reply, 0, sizeof(p->reply));
		return p->result;
	}
	return -ECANCELED;
}

/* Release what prefetch() got and no reader took. */
static void
prefetch_release(struct stats_instance *si)
{
	for (size_t i = 0; i < si->npre; i++)
		dtel_reply_release(&si->pre[i].reply);
	si->npre = 0;
}

/*
 * One request of the current read. After a failure of the connection (a timeout, -EBUSY, a
 * closed or refused connection, garbage) the rest of the read sends nothing: a hung
 * application delays one read by at most one Timeout, and the next read asks it again. A
 * null reply or one cut by the application concerns that command only.
 */
static int
query(struct stats_instance *si, const char *cmd, struct dtel_reply *r)
{
	int ret;

	/* Replies prefetched before a failure are handed out, as if asked before it. */
	ret = take_prefetched(si, cmd, r);
	if (ret == -ECANCELED && si->halted)
		return -ECANCELED;
	if (ret == -ECANCELED)
		ret = dtp_query(&si->t, cmd, r);
	if (ret < 0 && ret != -ENODATA && ret != -EMSGSIZE)
		si->halted = true;
	if (ret == -ENODATA && strncmp(cmd, "/ethdev/", 8) == 0 && strchr(cmd, ',') != NULL)
		si->relist_ports = true; /* a port that has gone answers null */
	if ((ret == 0 || ret == -ENODATA) && si->on_listed && !same_connection(si, true)) {
		/* Maybe another process, with other ports: the next read lists them. */
		if (ret == 0)
			dtel_reply_release(r);
		si->stale = si->halted = true;
		si->relist_ports = true;
		return -ESTALE;
	}
	return ret;
}

/* query() as the readers of plugins/common call it. */
static int
query_fn(void *ctx, const char *cmd, struct dtel_reply *r)
{
	return query(ctx, cmd, r);
}

/* For those readers: did this read meet a connection-level failure? */
static int
read_halted(void *ctx)
{
	return ((const struct stats_instance *)ctx)->halted ? -ECANCELED : 0;
}

/* query() with "<name>,<id>". */
static int
query_id(struct stats_instance *si, const char *name, unsigned int id, struct dtel_reply *r)
{
	char cmd[96];

	snprintf(cmd, sizeof(cmd), "%s,%u", name, id);
	return query(si, cmd, r);
}

static void
derive(struct stats_instance *si, const struct dtp_id *id, const char *type, const char *ti,
	const uint64_t *v, size_t n)
{
	char what[DATA_MAX_NAME_LEN * 2 + 16];

	if (dtp_derive(id, type, ti, v, n) == -ERANGE) {
		snprintf(what, sizeof(what), "%s/%s%s%s", id->plugin_instance, type, ti ? "-" : "",
			ti ? ti : "");
		dtp_bad_reply(&si->t, what, -ERANGE, 1);
	}
}

/* A reply to "<cmd>,<port>" that cannot be used, n values of it (see dtp_bad_reply). */
static void
bad_port_reply(struct stats_instance *si, const struct port_state *ps, const char *cmd, int err,
	uint64_t n)
{
	char what[64];

	snprintf(what, sizeof(what), "%s,%u", cmd, ps->id);
	dtp_bad_reply(&si->t, what, err, n);
}

static void
gauge(const struct dtp_id *id, const char *type, const char *ti, double v)
{
	dtp_gauge(id, type, ti, &v, 1);
}

/* Log once per port and cause that a reply may have been cut. */
static void
note_cut(struct stats_instance *si, struct port_state *ps, const char *cmd, unsigned int flags)
{
	static const char *const what[CUT_CAUSES] = {
		[CUT_NEAR_LIMIT] = "is within 512 bytes of the application's size limit",
		[CUT_DICT_FULL] = "has a dict of 256 entries, the most DPDK sends",
		[CUT_ARRAY_FULL] = "has an array of 512 entries, the most DPDK sends",
	};
	unsigned int causes = (flags & DTEL_F_NEAR_LIMIT ? 1u << CUT_NEAR_LIMIT : 0) |
		(flags & DTEL_F_DICT_FULL ? 1u << CUT_DICT_FULL : 0) |
		(flags & DTEL_F_ARRAY_FULL ? 1u << CUT_ARRAY_FULL : 0);

	/* dtp_query counted near-limit replies already (and logged oversized ones): count the
	 * rest here. */
	if ((flags & (DTEL_F_DICT_FULL | DTEL_F_ARRAY_FULL)) && !(flags & DTEL_F_NEAR_LIMIT))
		si->t.truncated++;
	for (unsigned int c = 0; c < CUT_CAUSES; c++) {
		if (!(causes & (1u << c)) || (ps->cut_logged & (1u << c)))
			continue;
		ps->cut_logged |= 1u << c;
		LOG(LOG_WARNING,
			"instance '%s' port %u: the %s reply %s: counters past the cut are "
			"missing",
			si->t.name, ps->id, cmd, what[c]);
	}
}

/* Port facts -------------------------------------------------------------------------------- */

/*
 * port_info "<device>,<driver>,<mac>,<numa>" (docs/metrics.md): the names an operator knows
 * the port by, for Prometheus to join onto the port's series.
 */
static void
make_port_info(struct port_state *ps)
{
	static const size_t max[] = {64, 32, 18, 12}; /* 126 bytes: within DATA_MAX_NAME_LEN */
	char driver[64], numa[16];
	const char *parts[] = {ps->info.name, driver, ps->info.mac_addr, numa};

	dtp_port_driver(ps->info.name, "/sys", driver, sizeof(driver));
	snprintf(numa, sizeof(numa), "%d", ps->info.numa_node);
	if (dtp_info_instance(ps->info_ti, sizeof(ps->info_ti), parts, max, 4) < 0)
		ps->info_ti[0] = '\0';
}

/*
 * /ethdev/info of the port into ps->info. Port configuration changes while the application
 * runs (testpmd "port config all rxq 4", Open vSwitch's n_rxq and mtu_request, a port
 * detached and another device attached at its id), so it is asked again when the port may
 * have changed (port_changed()), and at least every PortInfoInterval. @must: what was known
 * may be wrong: when the request fails, nothing is dispatched of it until it answers.
 */
static void
fetch_info(struct stats_instance *si, struct port_state *ps, cdtime_t now, bool must)
{
	struct dtel_port_info info;
	char was_ti[DATA_MAX_NAME_LEN];
	struct dtel_reply r;
	int ret;

	snprintf(was_ti, sizeof(was_ti), "%s", ps->have_info ? ps->info_ti : "");
	ps->info_read = now;
	if (query_id(si, "/ethdev/info", ps->id, &r) < 0) {
		if (must)
			ps->have_info = false;
		return;
	}
	ret = dtel_parse_port_info(&r, &info);
	dtel_reply_release(&r);
	if (ret < 0 || info.port_id != ps->id) {
		if (ret < 0)
			bad_port_reply(si, ps, "/ethdev/info", ret, 1);
		else
			si->t.invalid++; /* the answer for another port (the 22.11 race) */
		if (must)
			ps->have_info = false;
		return;
	}
	ps->info = info;
	ps->have_info = true;
	ps->info_next = now + DOUBLE_TO_CDTIME_T(si->o->port_info_interval);
	make_port_info(ps);
	if (was_ti[0] != '\0' && strcmp(was_ti, ps->info_ti) != 0)
		LOG(LOG_INFO,
			"instance '%s' port %u is now %s (was %s): port_info follows (the old "
			"series "
			"stops)",
			si->t.name, ps->id, ps->info_ti, was_ti);
}

/* A sign that the port may have changed (its xstats names, counters that went back): its
 * /ethdev/info is asked again at once, once per read. */
static void
port_changed(struct stats_instance *si, struct port_state *ps, cdtime_t now)
{
	if (ps->info_read == now)
		return; /* asked in this read already */
	fetch_info(si, ps, now, true);
}

/* /ethdev/info, first of a port's sources (its dev_flags tell read_xstats whether the
 * per-queue xstats will do): when it is not known, when a sign of change was seen, and every
 * PortInfoInterval. Its values go out after the other sources (dispatch_info()), which may
 * see a change and ask it again. */
static void
read_info(
	struct stats_instance *si, struct port_state *ps, const struct dtp_id *id, const char *cmd)
{
	(void)cmd;
	if (!ps->have_info)
		fetch_info(si, ps, id->time, true);
	else if (id->time >= ps->info_next)
		fetch_info(si, ps, id->time, false);
}

/* port_queues, port_mtu and port_info at every read, so that no series of them goes stale
 * while the port is there; the port_info of a device the port no longer is goes no more. */
static void
dispatch_info(
	struct stats_instance *si, struct port_state *ps, const struct dtp_id *id, const char *cmd)
{
	(void)si, (void)cmd;
	if (!ps->have_info)
		return;
	dtp_gauge(id, "port_queues", NULL, (double[]){ps->info.nb_rx_queues, ps->info.nb_tx_queues},
		2);
	gauge(id, "port_mtu", NULL, ps->info.mtu);
	if (ps->info_ti[0] != '\0')
		gauge(id, "port_info", ps->info_ti, 1);
}

/*
 * Signs in the counters that the port is not what it was: its xstats names changed (another
 * device, or another number of queues: ethdev names a counter per queue), or its packet
 * counters went back (another device at the same id starts from 0, as does a port whose
 * counters were reset). Then /ethdev/info at once (port_changed()).
 */
static void
check_names(struct stats_instance *si, struct port_state *ps, uint64_t h, cdtime_t now)
{
	if (ps->names_hash != 0 && h != ps->names_hash)
		port_changed(si, ps, now);
	ps->names_hash = h;
}

static void
check_counts(struct stats_instance *si, struct port_state *ps, const struct dtel_port_stats *st,
	cdtime_t now)
{
	if (ps->have_counts && (st->ipackets < ps->ipackets || st->opackets < ps->opackets))
		port_changed(si, ps, now);
	ps->have_counts = true;
	ps->ipackets = st->ipackets;
	ps->opackets = st->opackets;
}

/* Per port --------------------------------------------------------------------------------- */

static void
dispatch_queues(struct stats_instance *si, struct port_state *ps, const struct dtp_id *id,
	const struct dtel_port_stats *st)
{
	char q[16];

	for (unsigned int i = 0; i < st->nb_queues; i++) {
		if (st->q_ipackets[i] | st->q_opackets[i] | st->q_ibytes[i] | st->q_obytes[i] |
			st->q_errors[i])
			ps->queues_moved |= 1ull << i;
		if (!(ps->queues_moved & (1ull << i)))
			continue;
		snprintf(q, sizeof(q), "q%u", i);
		derive(si, id, "queue_packets", q,
			(uint64_t[]){st->q_ipackets[i], st->q_opackets[i]}, 2);
		derive(si, id, "queue_octets", q, (uint64_t[]){st->q_ibytes[i], st->q_obytes[i]},
			2);
		derive(si, id, "queue_errors", q, &st->q_errors[i], 1);
	}
}

static void
dispatch_basic(struct stats_instance *si, const struct dtp_id *id, const struct dtel_port_stats *st)
{
	derive(si, id, "if_packets", NULL, (uint64_t[]){st->ipackets, st->opackets}, 2);
	derive(si, id, "if_octets", NULL, (uint64_t[]){st->ibytes, st->obytes}, 2);
	derive(si, id, "if_errors", NULL, (uint64_t[]){st->ierrors, st->oerrors}, 2);
	derive(si, id, "if_rx_dropped", "missed", &st->imissed, 1);
	derive(si, id, "if_rx_dropped", "nombuf", &st->rx_nombuf, 1);
}

static void
no_queues(struct stats_instance *si, struct port_state *ps)
{
	if (ps->no_queues_logged)
		return;
	ps->no_queues_logged = true;
	LOG(LOG_WARNING,
		"instance '%s' port %u: PerQueue: neither /ethdev/stats nor /ethdev/xstats "
		"has per-queue counters (rx_q<N>_packets, ...): no queue values for it",
		si->t.name, ps->id);
}

static bool xstats_wanted(struct stats_instance *si, struct port_state *ps);

/*
 * /ethdev/stats: only for what read_xstats() could not take from the port's xstats reply
 * this read (XStats false without PerQueue, a reply without ethdev's basic counters, one
 * that failed, or the per-queue counters of a driver whose rx_q<N>_* are its own).
 */
static void
read_basic(
	struct stats_instance *si, struct port_state *ps, const struct dtp_id *id, const char *cmd)
{
	bool want_queues = si->o->per_queue && !ps->queues_done;
	struct dtel_port_stats st;
	struct dtel_reply r;
	int ret;

	if (ps->basic_done && !want_queues)
		return;
	if (query_id(si, cmd, ps->id, &r) < 0)
		return;
	ret = dtel_parse_port_stats(&r, &st);
	dtel_reply_release(&r);
	if (ret < 0) {
		bad_port_reply(si, ps, cmd, ret, 1); /* nothing from it */
		return;
	}
	if (!ps->basic_done) {
		check_counts(si, ps, &st, id->time);
		dispatch_basic(si, id, &st);
	}
	/* Drops from /ethdev/stats only where no xstats are asked (XStats false). */
	if (si->o->drops && !xstats_wanted(si, ps))
		stats_drops_stats(&ps->drops, ps->have_info ? ps->info.name : NULL, &st);
	if (want_queues && st.nb_queues > 0)
		dispatch_queues(si, ps, id, &st);
	else if (want_queues)
		no_queues(si, ps);
}

/* A pattern that matches nothing is probably a typo: say so once (it is not an error). */
static void
check_globs(struct stats_instance *si, const struct port_state *ps, const struct dtel_xstats *x)
{
	const struct dtp_globs *inc = &si->o->include;

	si->globs_checked = true;
	for (unsigned int g = 0; g < inc->n; g++) {
		bool hit = false;

		for (size_t i = 0; i < x->n && !hit; i++)
			hit = dtp_globs_pass(&(struct dtp_globs){.n = 1, .v = {inc->v[g]}},
				&(struct dtp_globs){0}, x->v[i].name);
		if (!hit)
			LOG(LOG_WARNING,
				"instance '%s': XStatsInclude \"%s\" matches none of the %zu "
				"extended counters of port %u",
				si->t.name, inc->v[g], x->n, ps->id);
	}
}

/* hide_zero=true is understood from DPDK 23.03 (22.11 ignores it, with a NOTICE per request). */
#define HIDE_ZERO_SINCE 230300

/*
 * A full reply that may have been cut (256 entries, or near the size limit), or that has
 * XStatsHideZeroFrom counters: from now on the port is asked with hide_zero=true, which
 * leaves out the counters that are 0, and keeps the names of this reply to dispatch those
 * as 0 (a hidden counter is 0), so that no series stops.
 */
static void
maybe_hide_zero(struct stats_instance *si, struct port_state *ps, const struct dtel_xstats *x)
{
	struct dtel_xstat *v;

	if (ps->hide_zero || si->t.dpdk_version < HIDE_ZERO_SINCE ||
		(!(x->flags & DTEL_F_POSSIBLY_CUT) && x->n < si->o->hide_zero_from))
		return;
	v = malloc((x->n + 1) * sizeof(*v));
	if (v == NULL)
		return;
	memcpy(v, x->v, x->n * sizeof(*v));
	dtel_xstats_clear(&ps->known);
	ps->known.v = v;
	ps->known.n = x->n;
	ps->hide_zero = true;
	LOG(LOG_INFO,
		"instance '%s' port %u: %zu extended counters%s: asking "
		"/ethdev/xstats,%u,hide_zero=true from now on (counters it leaves out are 0)",
		si->t.name, ps->id, x->n,
		x->flags & DTEL_F_POSSIBLY_CUT ? ", and the reply may have been cut" : "", ps->id);
}

/* With hide_zero: put back the counters the application left out as 0, and remember the
 * names that are new. */
static int
fill_hidden(struct port_state *ps, struct dtel_xstats *x)
{
	struct dtel_xstat *v;
	int ret = dtel_xstats_fill_hidden(x, &ps->known);

	if (ret < 0 || x->n == ps->known.n)
		return ret;
	v = realloc(ps->known.v, (x->n + 1) * sizeof(*v));
	if (v == NULL)
		return -ENOMEM;
	memcpy(v, x->v, x->n * sizeof(*v));
	ps->known.v = v;
	ps->known.n = x->n;
	return 0;
}

/* /ethdev/stats lost its q_* arrays in DPDK 25.11: the xstats are the only per-queue source. */
#define NO_QUEUE_ARRAYS_SINCE 251100
/* RTE_ETH_DEV_AUTOFILL_QUEUE_XSTATS of rte_ethdev.h (RTE_BIT32(6) in 22.11 to 26.07). */
#define AUTOFILL_QUEUE_XSTATS (1u << 6)

/*
 * Whether the rx_q<N>_* and tx_q<N>_* xstats of the port give what the q_* arrays of
 * /ethdev/stats gave: from 25.11 they are all there is; before, only where ethdev fills them
 * from the same rte_eth_stats (drivers with RTE_ETH_DEV_AUTOFILL_QUEUE_XSTATS in the
 * dev_flags of /ethdev/info, net_null among them: lib/ethdev/rte_ethdev.c,
 * eth_basic_stats_get); another driver's own counters of those names might count otherwise.
 */
static bool
xqueues_usable(const struct stats_instance *si, const struct port_state *ps)
{
	return si->t.dpdk_version >= NO_QUEUE_ARRAYS_SINCE ||
		(ps->have_info && (ps->info.dev_flags & AUTOFILL_QUEUE_XSTATS));
}

/*
 * The generic and per-queue counters from the xstats reply, so that /ethdev/stats need not
 * be asked (dtel_xstats_port_stats). A reply that may have been cut still has them: ethdev
 * puts them first, DPDK keeps the first 256 entries of a dict, and its JSON writer drops
 * only entries that no longer fit, which the first ones, written into an empty buffer,
 * always do; the names are checked all the same, and /ethdev/stats is asked when one is
 * missing. With hide_zero=true a counter that is 0 is left out: fill_hidden() has put it
 * back as 0 from the port's full reply, which is its value; should the names still be
 * incomplete, /ethdev/stats is asked.
 */
static void
basic_from_xstats(struct stats_instance *si, struct port_state *ps, const struct dtp_id *id,
	const struct dtel_xstats *x)
{
	struct dtel_port_stats st;

	if (dtel_xstats_port_stats(x, &st) < 0)
		return;
	check_counts(si, ps, &st, id->time);
	if (!si->o->basic)
		return;
	dispatch_basic(si, id, &st);
	ps->basic_done = true;
	if (!si->o->per_queue || !xqueues_usable(si, ps))
		return;
	if (st.nb_queues > 0) {
		dispatch_queues(si, ps, id, &st);
		ps->queues_done = true;
	} else if (si->t.dpdk_version >= NO_QUEUE_ARRAYS_SINCE) {
		no_queues(si, ps); /* nor has /ethdev/stats: do not ask it */
		ps->queues_done = true;
	}
}

enum xstat_kind { XSTAT_LEFT_OUT, XSTAT_DERIVE, XSTAT_GAUGE };

static enum xstat_kind
xstat_kind(const struct stats_instance *si, const char *name)
{
	if (!dtp_globs_pass(&si->o->include, &si->o->exclude, name))
		return XSTAT_LEFT_OUT;
	return xstat_is_gauge(&si->o->xgauge, name) ? XSTAT_GAUGE : XSTAT_DERIVE;
}

/*
 * The kind of each counter of @x, from the port's cache when the names are those of its last
 * reply (@h, drops_names_hash() of them, which Drops keys its mapping by too): matching every
 * name against XStatsInclude, XStatsExclude and XStatsGauge at every read cost 3 % of
 * collectd's CPU at 32 ports. NULL without memory (then each name is matched).
 */
static const uint8_t *
xstat_kinds(const struct stats_instance *si, struct port_state *ps, const struct dtel_xstats *x,
	uint64_t h)
{
	uint8_t *k;

	if (ps->xkinds != NULL && ps->nxkinds == x->n && ps->xnames_hash == h)
		return ps->xkinds;
	k = realloc(ps->xkinds, x->n + 1);
	if (k == NULL)
		return NULL;
	for (size_t i = 0; i < x->n; i++)
		k[i] = (uint8_t)xstat_kind(si, x->v[i].name);
	ps->xkinds = k;
	ps->nxkinds = x->n;
	ps->xnames_hash = h;
	return k;
}

/* xstat-<name> (DERIVE) and xstat_gauge-<name> (XStatsGauge) of a port. */
static void
dispatch_xstats(struct stats_instance *si, struct port_state *ps, const struct dtp_id *id,
	const struct dtel_xstats *x, uint64_t h)
{
	const uint8_t *kinds = xstat_kinds(si, ps, x, h);

	for (size_t i = 0; i < x->n; i++) {
		const struct dtel_xstat *e = &x->v[i];
		enum xstat_kind k = kinds != NULL ? kinds[i] : xstat_kind(si, e->name);
		double g;

		if (k == XSTAT_DERIVE) {
			derive(si, id, "xstat", e->name, &e->value, 1);
		} else if (k == XSTAT_GAUGE) {
			g = (double)e->value;
			dtp_gauge(id, "xstat_gauge", e->name, &g, 1);
		}
	}
}

/* Whether the port's /ethdev/xstats is asked: XStats, or PerQueue where they serve. */
static bool
xstats_wanted(struct stats_instance *si, struct port_state *ps)
{
	return si->o->xstats || (si->o->basic && si->o->per_queue && xqueues_usable(si, ps));
}

/* The port's /ethdev/xstats request, with hide_zero=true where maybe_hide_zero() chose it. */
static void
xstats_request(const struct port_state *ps, char *buf, size_t size)
{
	snprintf(buf, size, "/ethdev/xstats,%u%s", ps->id, ps->hide_zero ? ",hide_zero=true" : "");
}

/*
 * XStats, and the generic and per-queue counters (BasicStats, PerQueue) from the same reply:
 * one request per port. Not asked with XStats false unless PerQueue needs it.
 */
static void
read_xstats(
	struct stats_instance *si, struct port_state *ps, const struct dtp_id *id, const char *cmd)
{
	struct dtel_xstats x;
	struct dtel_reply r;
	char req[96];
	uint64_t h;
	int ret;

	if (!xstats_wanted(si, ps))
		return;
	xstats_request(ps, req, sizeof(req));
	if (query(si, req, &r) < 0)
		return;
	ret = dtel_parse_xstats(&r, &x);
	dtel_reply_release(&r);
	if (ret < 0) {
		bad_port_reply(si, ps, cmd, ret, 1);
		return;
	}
	/* Whatever did arrive is dispatched, cut or not; entries that are not counters are not. */
	if (ps->hide_zero && fill_hidden(ps, &x) < 0) {
		dtel_xstats_clear(&x);
		return;
	}
	/* The names' hash, once for the caches keyed by it and the port's facts. */
	h = drops_names_hash(&x);
	check_names(si, ps, h, id->time);
	maybe_hide_zero(si, ps, &x);
	note_cut(si, ps, cmd, x.flags);
	if (x.nb_invalid > 0)
		bad_port_reply(si, ps, cmd, -EPROTO, x.nb_invalid);
	basic_from_xstats(si, ps, id, &x);
	if (si->o->drops)
		stats_drops_xstats(&ps->drops, ps->have_info ? ps->info.name : NULL, &x, h);
	if (!si->o->xstats) {
		dtel_xstats_clear(&x);
		return;
	}
	if (!si->globs_checked)
		check_globs(si, ps, &x);
	dispatch_xstats(si, ps, id, &x, h);
	dtel_xstats_clear(&x);
}

/* Whether the port's link is asked at this read (LinkInterval). */
static bool
link_due(const struct stats_instance *si, const struct port_state *ps, cdtime_t now)
{
	return !ps->have_link || si->o->link_interval <= 0 || now >= ps->link_next;
}

/* link_speed; with LinkInterval, asked only when that long has passed since the port's last
 * answer, and the speed of that answer dispatched at the reads between (no series stops). */
static void
read_link(
	struct stats_instance *si, struct port_state *ps, const struct dtp_id *id, const char *cmd)
{
	struct dtel_link l;
	struct dtel_reply r;
	int ret;

	if (!link_due(si, ps, id->time)) {
		if (ps->link_speed >= 0)
			gauge(id, "link_speed", NULL, ps->link_speed);
		return;
	}
	ps->have_link = false;
	if (query_id(si, cmd, ps->id, &r) < 0)
		return;
	ret = dtel_parse_link(&r, &l);
	dtel_reply_release(&r);
	if (ret < 0) {
		bad_port_reply(si, ps, cmd, ret, 1);
		return;
	}
	ps->have_link = true;
	ps->link_next = id->time + DOUBLE_TO_CDTIME_T(si->o->link_interval);
	ps->link_speed = l.speed_mbps == DTEL_SPEED_UNKNOWN ? -1 : l.up ? (double)l.speed_mbps : 0;
	if (ps->link_speed >= 0)
		gauge(id, "link_speed", NULL, ps->link_speed);
}

/* The forwarder's own counters for the port: packets it could not send. */
static void
read_fwd_port(
	struct stats_instance *si, struct port_state *ps, const struct dtp_id *id, const char *cmd)
{
	const struct dtel_entry *pid, *drop;
	struct dtel_reply r;
	struct dtel_dict d;
	int ret;

	if (query_id(si, cmd, ps->id, &r) < 0)
		return;
	ret = dtel_parse_dict(&r, cmd, &d);
	dtel_reply_release(&r);
	if (ret < 0) {
		bad_port_reply(si, ps, cmd, ret, 1);
		return;
	}
	pid = dtel_dict_find(&d, "port_id");
	drop = dtel_dict_find(&d, "tx_dropped");
	/* The reply names its port: an answer for another one (the 22.11 race) is refused. */
	if (pid == NULL || pid->type != DTEL_VALUE_U64 || drop == NULL ||
		drop->type != DTEL_VALUE_U64)
		bad_port_reply(si, ps, cmd, -EPROTO, 1);
	else if (pid->v.u64 != ps->id)
		si->t.invalid++;
	else {
		derive(si, id, "if_tx_dropped", NULL, &drop->v.u64, 1);
		stats_drops_fwd_port(&ps->drops, &d, ps->id, id, PLUGIN, si->t.name, si->o->drops);
	}
	dtel_dict_clear(&d);
}

static struct port_state *
port_state(struct stats_instance *si, uint16_t id)
{
	return DTP_SLOT(si->ports, si->nports, id, NULL);
}

/*
 * The sources of a port's values, read in this order. Adding a counter source is one row
 * here (the option that turns it on, the command it sends, its reader), its types in
 * dpdktel.types.db and in types[] below, and its identifiers in docs/metrics.md.
 */
static const struct port_source {
	size_t option; /* offset of the bool in struct stats_opts that turns it on; NO_OPTION */
	bool needs_fwd_port; /* only where the application has /fwd/port (dpdktel-fwd) */
	const char *command; /* what the reader sends, with the port id */
	void (*read)(struct stats_instance *si, struct port_state *ps, const struct dtp_id *id,
		const char *cmd);
} port_sources[] = {
#define NO_OPTION SIZE_MAX
	/* first: its dev_flags tell read_xstats whether the per-queue xstats will do */
	{NO_OPTION, false, "/ethdev/info", read_info},
	/* XStats, BasicStats and PerQueue: read_xstats decides */
	{NO_OPTION, false, "/ethdev/xstats", read_xstats},
	/* what the xstats did not bring */
	{offsetof(struct stats_opts, basic), false, "/ethdev/stats", read_basic},
	{NO_OPTION, false, "/ethdev/link_status", read_link},
	{offsetof(struct stats_opts, app), true, "/fwd/port", read_fwd_port},
	/* last: the sources above may have seen a change and asked /ethdev/info again */
	{NO_OPTION, false, "/ethdev/info", dispatch_info},
};

static bool
source_on(const struct stats_instance *si, const struct port_source *src)
{
	bool on = true;

	if (src->option != NO_OPTION)
		memcpy(&on, (const char *)si->o + src->option, sizeof(on));
	return on && (!src->needs_fwd_port || si->caps.fwd_port);
}

static void
read_port(struct stats_instance *si, uint16_t port, cdtime_t now)
{
	struct port_state *ps = port_state(si, port);
	struct dtp_id id;

	if (ps == NULL)
		return;
	ps->seen = true;
	ps->basic_done = ps->queues_done = false;
	dtp_id_port(&id, PLUGIN, si->t.name, port, now);
	for (size_t i = 0; i < sizeof(port_sources) / sizeof(port_sources[0]); i++)
		if (source_on(si, &port_sources[i]))
			port_sources[i].read(si, ps, &id, port_sources[i].command);
	if (si->o->drops)
		stats_drops_dispatch(&ps->drops, &si->t, &id);
}

/* Lcores ----------------------------------------------------------------------------------- */

static struct lcore_state *
lcore_state(struct stats_instance *si, unsigned int id)
{
	return DTP_SLOT(si->lcores, si->nlcores, id, NULL);
}

/* Cycles, and the busy share of the cycles since the previous read. */
static void
dispatch_cycles(struct stats_instance *si, const struct dtp_id *id, unsigned int lcore,
	uint64_t busy, uint64_t total)
{
	struct lcore_state *ls = lcore_state(si, lcore);

	derive(si, id, "lcore_cycles", NULL, (uint64_t[]){busy, total}, 2);
	if (ls == NULL)
		return;
	if (ls->have && total > ls->total && busy >= ls->busy)
		gauge(id, "percent", "busy",
			100.0 * (double)(busy - ls->busy) / (double)(total - ls->total));
	ls->have = true;
	ls->busy = busy;
	ls->total = total;
}

static void
read_fwd_lcores(struct stats_instance *si, cdtime_t now)
{
	struct dtel_fwd_lcores l;
	struct dtel_reply r;
	struct dtp_id id;
	int ret;

	if (query(si, "/fwd/lcores", &r) < 0)
		return;
	ret = dtel_parse_fwd_lcores(&r, &l);
	dtel_reply_release(&r);
	if (ret < 0) {
		dtp_bad_reply(&si->t, "/fwd/lcores", ret, 1);
		return;
	}
	for (size_t i = 0; i < l.n; i++) {
		const struct dtel_fwd_lcore *c = &l.v[i];

		dtp_id_lcore(&id, PLUGIN, si->t.name, c->lcore_id, now);
		derive(si, &id, "lcore_packets", NULL, (uint64_t[]){c->rx_packets, c->tx_packets},
			2);
		derive(si, &id, "stalls", NULL, &c->stalls, 1);
		dispatch_cycles(si, &id, c->lcore_id, c->busy_cycles, c->total_cycles);
	}
	dtel_fwd_lcores_clear(&l);
}

/* CPUs as ranges joined by '_' ("2-3_70"): a ',' would end the part of lcore_info. */
static void
cpu_ranges(const uint64_t *set, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (int c = 0; c < DTEL_CPUSET_WORDS * 64 && len < size; c++) {
		int last = c;

		if (!(set[c / 64] >> (c % 64) & 1))
			continue;
		while (last + 1 < DTEL_CPUSET_WORDS * 64 &&
			(set[(last + 1) / 64] >> ((last + 1) % 64) & 1))
			last++;
		len += (size_t)snprintf(buf + len, size - len, last > c ? "%s%d-%d" : "%s%d",
			len ? "_" : "", c, last);
		c = last;
	}
}

/* lcore_info "<role>,<cpus>,<numa>" of one lcore, kept for every read of this generation. */
static void
keep_lcore_info(void *arg, const struct dtel_eal_lcore_info *li)
{
	static const size_t max[] = {32, 64, 12};
	struct stats_instance *si = arg;
	struct lcore_state *ls = lcore_state(si, li->lcore_id);
	char cpus[64], numa[16];
	const char *parts[] = {li->role, cpus, numa};

	if (ls == NULL)
		return;
	cpu_ranges(li->cpuset, cpus, sizeof(cpus));
	snprintf(numa, sizeof(numa), "%d", li->socket);
	if (dtp_info_instance(ls->info_ti, sizeof(ls->info_ti), parts, max, 3) < 0)
		ls->info_ti[0] = '\0';
}

/*
 * The role and CPUs of each lcore (DPDK >= 23.03): read once per application generation
 * (again at the next read when a request failed), sent at every read. Where the cycles come
 * from /eal/lcore/info too, read_eal_lcores() has kept them from its replies already.
 */
static void
read_lcore_info(struct stats_instance *si, cdtime_t now)
{
	struct dtp_id id;

	if (si->caps.eal_lcore && si->lcore_info_generation != si->t.generation &&
		dtp_eal_lcores(query_fn, si, &si->t, read_halted, keep_lcore_info, si) == 0)
		si->lcore_info_generation = si->t.generation;
	for (size_t i = 0; i < si->nlcores; i++) {
		if (si->lcores[i].info_ti[0] == '\0')
			continue;
		dtp_id_lcore(&id, PLUGIN, si->t.name, si->lcores[i].id, now);
		gauge(&id, "lcore_info", si->lcores[i].info_ti, 1);
	}
}

struct eal_read {
	struct stats_instance *si;
	cdtime_t now;
};

static void
dispatch_eal_lcore(void *arg, const struct dtel_eal_lcore_info *li)
{
	struct eal_read *er = arg;
	struct dtp_id id;

	if (er->si->lcore_info_generation != er->si->t.generation)
		keep_lcore_info(er->si, li);
	if (!li->has_cycles)
		return;
	dtp_id_lcore(&id, PLUGIN, er->si->t.name, li->lcore_id, er->now);
	dispatch_cycles(er->si, &id, li->lcore_id, li->busy_cycles, li->total_cycles);
}

/* DPDK >= 23.03 without the forwarder's commands: cycles from /eal/lcore/info, and the
 * lcores' role and CPUs from the same replies (read_lcore_info). */
static void
read_eal_lcores(struct stats_instance *si, cdtime_t now)
{
	struct eal_read er = {.si = si, .now = now};

	if (dtp_eal_lcores(query_fn, si, &si->t, read_halted, dispatch_eal_lcore, &er) == 0)
		si->lcore_info_generation = si->t.generation;
}

/*
 * DPDK >= 23.03 without the forwarder's commands: the cycles of every lcore in one
 * /eal/lcore/usage, the counters /eal/lcore/info carries one lcore a request (both ask the
 * application's rte_lcore_register_usage_cb callback: lib/eal/common/eal_common_lcore.c,
 * lcore_telemetry_usage_cb and lcore_telemetry_info_cb). An application that registered none
 * lists no lcore: past its start-up it is not asked again until it restarts.
 */
static void
read_usage_lcores(struct stats_instance *si, cdtime_t now)
{
	struct dtel_eal_lcore_usage u;
	struct dtp_id id;

	if (si->no_usage_generation == si->t.generation)
		return;
	if (dtp_eal_usage(query_fn, si, &si->t, &u) < 0)
		return;
	if (u.n == 0 && !dtp_target_young(&si->t))
		si->no_usage_generation = si->t.generation;
	for (size_t i = 0; i < u.n; i++) {
		dtp_id_lcore(&id, PLUGIN, si->t.name, u.v[i].lcore_id, now);
		dispatch_cycles(si, &id, u.v[i].lcore_id, u.v[i].busy_cycles, u.v[i].total_cycles);
	}
	dtel_eal_lcore_usage_clear(&u);
}

/* The instance ----------------------------------------------------------------------------- */

/*
 * What the application offers, from its command list: once per generation, and again at
 * each read while it is starting (it registers its own commands after the EAL opened the
 * socket).
 */
static void
probe_caps(struct stats_instance *si)
{
	if (dtp_caps_read(query_fn, si, &si->t, &si->caps) < 0)
		memset(&si->caps, 0, sizeof(si->caps));
	si->caps_generation = si->t.generation;
	si->caps_young = dtp_target_young(&si->t);
}

static void
read_uptime(struct stats_instance *si, const struct dtp_id *id)
{
	const struct dtel_entry *e;
	struct dtel_reply r;
	struct dtel_dict d;
	double up = -1;

	if (si->caps.fwd_info && query(si, "/fwd/info", &r) == 0) {
		if (dtel_parse_dict(&r, "/fwd/info", &d) == 0) {
			e = dtel_dict_find(&d, "uptime_ms");
			if (e != NULL && e->type == DTEL_VALUE_U64)
				up = (double)e->v.u64 / 1000.0;
			dtel_dict_clear(&d);
		}
		dtel_reply_release(&r);
	}
	if (up < 0)
		up = dtp_target_uptime(&si->t);
	if (up >= 0)
		gauge(id, "uptime", NULL, up);
}

/*
 * instance_info "<dpdk release>,<program>,<pid>,<dpdktel version>" (docs/metrics.md): what
 * runs behind the instance. It changes with each application process (its old series then
 * goes stale), so it is made once per generation.
 */
static void
dispatch_instance_info(struct stats_instance *si, const struct dtp_id *id)
{
	static const size_t max[] = {32, 32, 24, 32};
	char comm[32], pid[24];
	const char *parts[] = {si->t.dpdk_release, comm, pid, DPDKTEL_VERSION};

	if (si->info_generation != si->t.generation || si->info_ti[0] == '\0') {
		si->info_generation = si->t.generation;
		dtp_proc_comm(si->t.pid, comm, sizeof(comm));
		snprintf(pid, sizeof(pid), "%ld", si->t.pid);
		if (dtp_info_instance(si->info_ti, sizeof(si->info_ti), parts, max, 4) < 0)
			si->info_ti[0] = '\0';
	}
	if (si->info_ti[0] != '\0')
		gauge(id, "instance_info", si->info_ti, 1);
}

/* The instance's health; @read_seconds < 0: no read this time (the budget stretched them). */
static void
dispatch_health(struct stats_instance *si, cdtime_t now, double read_seconds)
{
	double interval = si->budget.interval_ns > 0 ? (double)si->budget.interval_ns / 1e9
						     : CDTIME_T_TO_DOUBLE(plugin_get_interval());
	struct dtp_id id;

	dtp_id_instance(&id, PLUGIN, si->t.name, now);
	si->t.invalid += (uint64_t)dtp_dispatch_health(&id, &si->t);
	if (read_seconds >= 0)
		dtp_gauge(&id, "duration", "read", &read_seconds, 1);
	dtp_gauge(&id, "poll_interval", "read", &interval, 1);
}

/* What is known of a port that is gone (its id may come back as another device) or of an
 * application process that is gone: learnt again from the next replies. */
static void
forget_port(struct port_state *ps)
{
	ps->have_info = false;
	ps->queues_moved = 0;
	ps->hide_zero = false; /* another device, maybe of another release */
	ps->have_link = false;
	ps->names_hash = 0;
	ps->have_counts = false;
	dtel_xstats_clear(&ps->known);
	stats_drops_reset(&ps->drops);
}

static void
on_restart(struct stats_instance *si, long old_pid, cdtime_t now)
{
	struct dtp_meta meta = DTP_META_NONE;
	char old[24], new[24];
	struct dtp_id id;

	snprintf(old, sizeof(old), "%ld", old_pid);
	snprintf(new, sizeof(new), "%ld", si->t.pid);
	meta.old_state = old;
	meta.new_state = new;
	meta.name = si->t.name;
	dtp_id_instance(&id, PLUGIN, si->t.name, now);
	dtp_notify(&id, NOTIF_WARNING, "restarts", NULL, &meta,
		"DPDK application %s restarted (pid %ld → %ld)", si->t.name, old_pid, si->t.pid);
	/* Everything cached belonged to the old process. */
	for (size_t i = 0; i < si->nports; i++)
		forget_port(&si->ports[i]);
	for (size_t i = 0; i < si->nlcores; i++) {
		si->lcores[i].have = false;
		si->lcores[i].info_ti[0] = '\0';
	}
}

/* Whether this read asks /ethdev/list (else it reads the ports of the last list). */
static bool
ports_due(struct stats_instance *si, cdtime_t now)
{
	return si->nport_ids < 0 || si->relist_ports || now >= si->ports_next ||
		!same_connection(si, false) || dtp_target_young(&si->t);
}

/* Whether a list has the same ports as the last one. */
static bool
same_ports(const struct stats_instance *si, const uint16_t *ids, int n)
{
	return si->nport_ids == n &&
		(n == 0 || memcmp(si->port_ids, ids, (size_t)n * sizeof(*ids)) == 0);
}

/*
 * The ports of the last list, and when to ask again: in a second, or at the next read when
 * the list changed (a port detached is often one about to be replaced: its successor then
 * shows at the next read). A port that is not in it is gone: if its id comes back, it is
 * another port, learnt anew.
 */
static void
keep_port_list(struct stats_instance *si, uint16_t *ids, int n, cdtime_t now)
{
	bool changed = si->nport_ids >= 0 && !same_ports(si, ids, n);

	for (size_t i = 0; i < si->nports; i++) {
		bool listed = false;

		for (int k = 0; k < n && !listed; k++)
			listed = ids[k] == si->ports[i].id;
		if (!listed)
			forget_port(&si->ports[i]);
	}
	free(si->port_ids);
	si->port_ids = ids;
	si->nport_ids = n;
	si->relist_ports = changed;
	si->ports_next = now + PORT_LIST_EVERY;
}

/*
 * An application without ethdev (a DPDK program built without librte_ethdev): DPDK answers
 * null for a command nobody registered (lib/telemetry/telemetry.c, unknown_command). No port
 * then, but its other sources stand on their own: said once per application process.
 * (Debian's shared build always has ethdev and answers [] when there is no port.)
 */
static void
no_ethdev(struct stats_instance *si, cdtime_t now)
{
	if (si->no_ethdev_generation != si->t.generation) {
		si->no_ethdev_generation = si->t.generation;
		LOG(LOG_INFO,
			"DPDK application '%s' has no ethdev (/ethdev/list answers null): no port "
			"values; its other values are read",
			si->t.name);
	}
	keep_port_list(si, NULL, 0, now);
}

/*
 * /ethdev/list into si->port_ids. 0; -1 when the request failed (the read ends); a list that
 * cannot be used is counted, and the ports of the last one are read; a null one is no port
 * at all (no_ethdev()).
 */
static int
list_ports(struct stats_instance *si, cdtime_t now, long *ret_old_pid, bool *ret_restarted)
{
	struct dtel_reply list;
	uint16_t *ids = NULL;
	int n, ret = query(si, "/ethdev/list", &list);

	if (ret < 0 && ret != -ENODATA)
		return -1;
	*ret_restarted = dtp_target_restarted(&si->t, ret_old_pid);
	if (ret == -ENODATA) {
		no_ethdev(si, now);
		return 0;
	}
	n = dtel_parse_port_list(&list, &ids);
	dtel_reply_release(&list);
	if (n < 0) {
		dtp_bad_reply(&si->t, "/ethdev/list", n, 1);
		if (*ret_restarted)
			si->nport_ids = 0; /* none known of this process */
		return 0;
	}
	keep_port_list(si, ids, n, now);
	return 0;
}

/*
 * Send the /ethdev/xstats of ports port_ids[from, to) and the /ethdev/link_status that are
 * due, all at once, for their readers to take (query()). Nothing when the read has failed or
 * the ports' state cannot be had: the readers then ask one request at a time.
 */
static void
prefetch(struct stats_instance *si, int from, int to, cdtime_t now)
{
	const char *cmds[2 * PREFETCH_PORTS];
	struct dtel_reply replies[2 * PREFETCH_PORTS];
	int results[2 * PREFETCH_PORTS];
	size_t n = 0;

	for (int i = from; i < to && !si->halted; i++) {
		struct port_state *ps;

		if (!dtp_ports_has(&si->o->ports, si->port_ids[i]))
			continue;
		ps = port_state(si, si->port_ids[i]);
		if (ps == NULL)
			continue;
		if (xstats_wanted(si, ps))
			xstats_request(ps, si->pre[n++].cmd, sizeof(si->pre[0].cmd));
		if (link_due(si, ps, now))
			snprintf(si->pre[n++].cmd, sizeof(si->pre[0].cmd), "/ethdev/link_status,%u",
				ps->id);
	}
	if (n < 2)
		return; /* nothing to gain */
	for (size_t i = 0; i < n; i++)
		cmds[i] = si->pre[i].cmd;
	dtp_query_many(&si->t, cmds, n, replies, results);
	for (size_t i = 0; i < n; i++) {
		si->pre[i].reply = replies[i];
		si->pre[i].result = results[i];
		si->pre[i].taken = false;
		/* The connection failed there: nothing more is sent in this read (query()). */
		if (results[i] < 0 && results[i] != -ENODATA && results[i] != -EMSGSIZE &&
			results[i] != -ECANCELED && results[i] != -ECONNABORTED)
			si->halted = true;
	}
	si->npre = n;
}

static void
read_ports(struct stats_instance *si, cdtime_t now)
{
	for (size_t i = 0; i < si->nports; i++)
		si->ports[i].seen = false;
	for (int i = 0; i < si->nport_ids && !si->stale; i += PREFETCH_PORTS) {
		int to = si->nport_ids - i > PREFETCH_PORTS ? i + PREFETCH_PORTS : si->nport_ids;

		prefetch(si, i, to, now);
		for (int j = i; j < to && !si->stale; j++)
			if (dtp_ports_has(&si->o->ports, si->port_ids[j]))
				read_port(si, si->port_ids[j], now);
		prefetch_release(si);
	}
}

/* Everything but the ports, after them. */
static void
read_rest(struct stats_instance *si, cdtime_t now)
{
	struct dtp_id id;

	if (si->o->app && si->caps.fwd_lcores)
		read_fwd_lcores(si, now);
	else if (si->o->app && si->caps.eal_usage)
		read_usage_lcores(si, now);
	else if (si->o->app && si->caps.eal_lcore)
		read_eal_lcores(si, now);
	read_lcore_info(si, now);
	dtp_id_instance(&id, PLUGIN, si->t.name, now);
	if (si->o->memory)
		stats_memory_read(&si->mem, query_fn, si, &si->t, &id);
	stats_devices_read(&si->devices, &si->o->devices, &si->caps,
		&(struct stats_devices_io){query_fn, si, &si->t, read_halted}, &id);
	read_uptime(si, &id);
	stats_commands_read(&si->o->commands, &si->cmd_state, &si->t, query_fn, si, &id);
	dispatch_instance_info(si, &id);
}

/*
 * The ports, then the rest. Between two port lists (ports_due()) the first request may
 * reconnect to another process: then this read starts over with the list, as a read after
 * a restart does.
 */
/*
 * Whether this callback reads: at every Interval, or at the interval the budget allows (half
 * an Interval early counts: callbacks come a little early or late). The values of a read
 * carry the interval in force, so that collectd does not take them for missing in between.
 */
static bool
read_due(struct stats_instance *si, cdtime_t now)
{
	cdtime_t want = plugin_get_interval();

	if (si->read_next != 0 && now + want / 2 < si->read_next)
		return false;
	dtp_dispatch_interval(si->budget.interval_ns > CDTIME_T_TO_NS(want)
			? NS_TO_CDTIME_T(si->budget.interval_ns)
			: 0);
	return true;
}

/* After a read that began at @now and cost the application @round_ns: when the next is. */
static void
plan_next(struct stats_instance *si, cdtime_t now, uint64_t round_ns)
{
	uint64_t want = CDTIME_T_TO_NS(plugin_get_interval()),
		 iv = dtp_budget_plan(&si->budget, round_ns, want, si->o->max_app_load);

	/* Within the budget, every callback reads, whenever collectd calls it. */
	si->read_next = iv > want ? now + NS_TO_CDTIME_T(iv) : 0;
	dtp_dispatch_interval(0);
}

/*
 * The ports, then the rest. Between two port lists (ports_due()) the first request may
 * reconnect to another process: then this read starts over with the list, as a read after
 * a restart does.
 */
static void
read_all(struct stats_instance *si, cdtime_t now)
{
	bool restarted = false;
	long old_pid;

	si->on_listed = !ports_due(si, now);
	for (int pass = 0; pass < 2; pass++) {
		si->halted = si->stale = false;
		if (!si->on_listed && list_ports(si, now, &old_pid, &restarted) < 0)
			return;
		if (restarted)
			on_restart(si, old_pid, now);
		if (si->caps_generation != si->t.generation || si->caps_young)
			probe_caps(si);
		/* Everything of this read goes to collectd in one burst (dtp_batch_begin). */
		dtp_batch_begin();
		read_ports(si, now);
		if (!si->stale)
			read_rest(si, now);
		if (!si->stale) {
			dtp_batch_end();
			break;
		}
		/* Starting over: what this pass read goes nowhere (the next pass sends the
		 * same identifiers, and one identifier gets one value per read). */
		dtp_batch_cancel();
		si->on_listed = false;
	}
}

static int
stats_read(user_data_t *ud)
{
	struct stats_instance *si = ud->data;
	cdtime_t now = cdtime();
	uint64_t s0 = si->t.service_ns;

	if (!read_due(si, now)) {
		dispatch_health(si, now, -1);
		return 0;
	}
	read_all(si, now);
	plan_next(si, now, si->t.service_ns - s0);
	dispatch_health(si, now, CDTIME_T_TO_DOUBLE(cdtime() - now));
	return 0;
}

/* The free_func of the instance's read callback: collectd calls it when the callback is
 * unregistered, at shutdown, and when registering it failed. */
static void
instance_free(void *p)
{
	struct stats_instance *si = p;

	if (si == NULL)
		return;
	dtp_instances_remove(&instances, si);
	dtp_budget_fini(&si->budget);
	dtp_target_fini(&si->t);
	for (size_t i = 0; i < si->nports; i++) {
		dtel_xstats_clear(&si->ports[i].known);
		free(si->ports[i].xkinds);
		stats_drops_free(&si->ports[i].drops);
	}
	free(si->ports);
	free(si->port_ids);
	free(si->lcores);
	free(si->cmd_state);
	stats_devices_fini(&si->devices);
	stats_memory_free(&si->mem);
	free(si);
}

/* Create an instance and register its read callback; 0 or -1. */
static int
instance_start(const char *name, const char *path, const struct stats_opts *o, bool discovered)
{
	struct stats_instance *si = calloc(1, sizeof(*si));
	char cb[DTP_NAME_MAX + 32];
	int ret;

	if (si == NULL ||
		dtp_target_init(&si->t, PLUGIN, name, path, (int)(o->timeout * 1000 + 0.5)) < 0 ||
		dtp_budget_init(&si->budget, &si->t, "read") < 0) {
		LOG(LOG_ERR, "instance '%s': cannot set up a session for %s", name, path);
		if (si != NULL) {
			dtp_budget_fini(&si->budget);
			dtp_target_fini(&si->t);
		}
		free(si);
		return -1;
	}
	si->o = o;
	si->discovered = discovered;
	si->nport_ids = -1;
	ret = dtp_instances_add(&instances, si, &si->t, discovered);
	if (ret < 0) {
		LOG(LOG_ERR, "instance '%s' (%s): %s", name, path,
			ret == -EEXIST ? "another instance has that name" : "out of memory");
		instance_free(si);
		return -1;
	}
	/* Each instance's callback is "dpdktel_stats/<name>", discovery's is "dpdktel_stats":
	 * names are unique, so collectd refuses none of them but for lack of memory. */
	snprintf(cb, sizeof(cb), PLUGIN "/%s", name);
	if (plugin_register_complex_read(PLUGIN, cb, stats_read, 0,
		    &(user_data_t){.data = si, .free_func = instance_free}) != 0) {
		/* collectd 5.12 has called instance_free already (plugin_register_complex_read
		 * frees the user data of a callback it refuses): si is gone. */
		LOG(LOG_ERR, "instance '%s': cannot register its read callback", name);
		return -1;
	}
	LOG(LOG_INFO, "collecting DPDK application '%s' at %s%s", name, path,
		discovered ? " (discovered)" : "");
	return 0;
}

/*
 * A discovered instance whose application has been gone for RetireAfter: its read callback
 * is unregistered, and collectd frees it (instance_free) on a read thread once a read that
 * may be running has returned. Until then it stays listed; it is not retired twice.
 */
static void
instance_retire(void *p)
{
	struct stats_instance *si = p;
	char cb[DTP_NAME_MAX + 32];

	snprintf(cb, sizeof(cb), PLUGIN "/%s", si->t.name);
	if (plugin_unregister_read(cb) != 0)
		LOG(LOG_ERR, "instance '%s': cannot unregister its read callback", si->t.name);
}

/* Discovery -------------------------------------------------------------------------------- */

static int
start_discovered(const char *name, const char *path)
{
	return instance_start(name, path, conf.global, true);
}

static int
discover_read(user_data_t *ud)
{
	(void)ud;
	dtp_instances_discover(
		&instances, &conf, (uint64_t)(conf.retire_after * 1000), dtp_now_ms());
	return 0;
}

/* collectd callbacks ----------------------------------------------------------------------- */

/* The conf starts at the first <Plugin> block, or in init for <LoadPlugin> alone. */
#define CONF_ARGS PLUGIN, options, sizeof(options) / sizeof(options[0]), &defaults, sizeof(defaults)

static int
stats_config(oconfig_item_t *ci)
{
	return dtp_conf_config(&conf, CONF_ARGS, ci);
}

/* Every type the plugin dispatches: init refuses to start when one is not defined (ours
 * come from dpdktel.types.db; without it every value would be refused, a line at a time). */
static const char *const types[] = {"if_packets", "if_octets", "if_errors", "if_rx_dropped",
	"if_tx_dropped", "xstat", "queue_packets", "queue_octets", "queue_errors", "link_speed",
	"port_queues", "port_mtu", "port_info", "lcore_packets", "lcore_info", "stalls",
	"lcore_cycles", "percent", "heap_bytes", "mempool_objects", "mempool_use", "ring_entries",
	"count", "bytes", "uptime", "instance_info", "up", "telemetry_requests", "reconnects",
	"restarts", "duration", "xstat_gauge", "gauge", "derive", "app_load", "poll_interval",
	"drops", "lcore_rx_queue"};

static int
stats_init(void)
{
	LOG(LOG_INFO, "dpdktel %s (libdpdktel %s)", DPDKTEL_VERSION, dtel_version());
	/* <LoadPlugin> without a <Plugin> block: discover with the defaults. */
	if (dtp_conf_init(&conf, CONF_ARGS) < 0)
		return -1;
	if (dtp_conf_validate(&conf) < 0 ||
		stats_commands_check_types(&conf, offsetof(struct stats_opts, commands)) < 0) {
		LOG(LOG_ERR, "%d configuration error%s (see above): not collecting anything",
			conf.errors, conf.errors == 1 ? "" : "s");
		return -1;
	}
	if (!dtp_types_defined(
		    PLUGIN, types, sizeof(types) / sizeof(types[0]), "docs/dpdktel_stats.md") ||
		!stats_devices_types_defined(PLUGIN))
		return -1;
	for (size_t i = 0; i < conf.ninst; i++)
		if (instance_start(conf.inst[i].name, conf.inst[i].socket_path, conf.inst[i].opts,
			    false) < 0)
			return -1;
	if (conf.discover &&
		plugin_register_complex_read(PLUGIN, PLUGIN, discover_read, 0, NULL) != 0)
		return -1;
	return 0;
}

static int
stats_shutdown(void)
{
	/* collectd has stopped the read threads and freed the instances with their read
	 * callbacks by now: nothing points into the conf any more. */
	dtp_instances_forget(&instances);
	dtp_conf_free(&conf);
	return 0;
}

__attribute__((visibility("default"))) void
module_register(void)
{
	plugin_register_complex_config(PLUGIN, stats_config);
	plugin_register_init(PLUGIN, stats_init);
	plugin_register_shutdown(PLUGIN, stats_shutdown);
}
