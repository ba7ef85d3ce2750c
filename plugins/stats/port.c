/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdktel_stats' port reads: a port's counters from the source its options choose
 * (/ethdev/stats, /fwd/port, its link), per-queue counters, and the checks that its names
 * and counts did not change under it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "instance.h"

/*
 * Signs in the counters that the port is not what it was: its xstats names changed (another
 * device, or another number of queues: ethdev names a counter per queue), or its packet
 * counters went back (another device at the same id starts from 0, as does a port whose
 * counters were reset). Then /ethdev/info at once (st_port_changed()).
 */
void
st_check_names(struct stats_instance *si, struct port_state *ps, uint64_t h, cdtime_t now)
{
	if (ps->names_hash != 0 && h != ps->names_hash)
		st_port_changed(si, ps, now);
	ps->names_hash = h;
}

void
st_check_counts(struct stats_instance *si, struct port_state *ps, const struct dtel_port_stats *st,
	cdtime_t now)
{
	if (ps->have_counts && (st->ipackets < ps->ipackets || st->opackets < ps->opackets))
		st_port_changed(si, ps, now);
	ps->have_counts = true;
	ps->ipackets = st->ipackets;
	ps->opackets = st->opackets;
}

void
st_dispatch_queues(struct stats_instance *si, struct port_state *ps, const struct dtp_id *id,
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
		st_derive(si, id, "queue_packets", q,
			(uint64_t[]){st->q_ipackets[i], st->q_opackets[i]}, 2);
		st_derive(si, id, "queue_octets", q, (uint64_t[]){st->q_ibytes[i], st->q_obytes[i]},
			2);
		st_derive(si, id, "queue_errors", q, &st->q_errors[i], 1);
	}
}

void
st_dispatch_basic(
	struct stats_instance *si, const struct dtp_id *id, const struct dtel_port_stats *st)
{
	st_derive(si, id, "if_packets", NULL, (uint64_t[]){st->ipackets, st->opackets}, 2);
	st_derive(si, id, "if_octets", NULL, (uint64_t[]){st->ibytes, st->obytes}, 2);
	st_derive(si, id, "if_errors", NULL, (uint64_t[]){st->ierrors, st->oerrors}, 2);
	st_derive(si, id, "if_rx_dropped", "missed", &st->imissed, 1);
	st_derive(si, id, "if_rx_dropped", "nombuf", &st->rx_nombuf, 1);
}

void
st_no_queues(struct stats_instance *si, struct port_state *ps)
{
	if (ps->no_queues_logged)
		return;
	ps->no_queues_logged = true;
	LOG(LOG_WARNING,
		"instance '%s' port %u: PerQueue: neither /ethdev/stats nor /ethdev/xstats "
		"has per-queue counters (rx_q<N>_packets, ...): no queue values for it",
		si->t.name, ps->id);
}

/*
 * /ethdev/stats: only for what st_read_xstats() could not take from the port's xstats reply
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
	si->ns++;
	if (st_query_id(si, cmd, ps->id, &r) < 0)
		return;
	ret = dtel_parse_port_stats(&r, &st);
	dtel_reply_release(&r);
	if (ret < 0) {
		st_bad_port_reply(si, ps, cmd, ret, 1); /* nothing from it */
		return;
	}
	if (!ps->basic_done) {
		st_check_counts(si, ps, &st, id->time);
		st_dispatch_basic(si, id, &st);
	}
	/* Drops from /ethdev/stats only where no xstats are asked (XStats false). */
	if (si->o->drops && !st_xstats_wanted(si, ps))
		stats_drops_stats(&ps->drops, ps->have_info ? ps->info.name : NULL, &st);
	if (want_queues && st.nb_queues > 0)
		st_dispatch_queues(si, ps, id, &st);
	else if (want_queues)
		st_no_queues(si, ps);
}

/* Whether the port's link is asked at this read (LinkInterval). */
bool
st_link_due(const struct stats_instance *si, const struct port_state *ps, cdtime_t now)
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

	if (!st_link_due(si, ps, id->time)) {
		if (ps->link_speed >= 0)
			st_gauge(id, "link_speed", NULL, ps->link_speed);
		return;
	}
	ps->have_link = false;
	if (st_query_id(si, cmd, ps->id, &r) < 0)
		return;
	ret = dtel_parse_link(&r, &l);
	dtel_reply_release(&r);
	if (ret < 0) {
		st_bad_port_reply(si, ps, cmd, ret, 1);
		return;
	}
	ps->have_link = true;
	ps->link_next = id->time + DOUBLE_TO_CDTIME_T(si->o->link_interval);
	ps->link_speed = l.speed_mbps == DTEL_SPEED_UNKNOWN ? -1 : l.up ? (double)l.speed_mbps : 0;
	if (ps->link_speed >= 0)
		st_gauge(id, "link_speed", NULL, ps->link_speed);
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

	if (st_query_id(si, cmd, ps->id, &r) < 0)
		return;
	ret = dtel_parse_dict(&r, cmd, &d);
	dtel_reply_release(&r);
	if (ret < 0) {
		st_bad_port_reply(si, ps, cmd, ret, 1);
		return;
	}
	pid = dtel_dict_find(&d, "port_id");
	drop = dtel_dict_find(&d, "tx_dropped");
	/* The reply names its port: an answer for another one (the 22.11 race) is refused. */
	if (pid == NULL || pid->type != DTEL_VALUE_U64 || drop == NULL ||
		drop->type != DTEL_VALUE_U64)
		st_bad_port_reply(si, ps, cmd, -EPROTO, 1);
	else if (pid->v.u64 != ps->id)
		si->t.invalid++;
	else {
		st_derive(si, id, "if_tx_dropped", NULL, &drop->v.u64, 1);
		stats_drops_fwd_port(&ps->drops, &d, ps->id, id, PLUGIN, si->t.name,
			si->o->drops && (ps->xstats_now || !st_xstats_wanted(si, ps)));
	}
	dtel_dict_clear(&d);
}

struct port_state *
st_port_state(struct stats_instance *si, uint16_t id)
{
	return DTP_SLOT(si->ports, si->nports, id, NULL);
}

/*
 * The sources of a port's values, read in this order. Adding a counter source is one row
 * here (the option that turns it on, the command it sends, its reader), its types in
 * dpdktel.types.db and in types[] (dpdktel_stats.c), and its identifiers in docs/metrics.md.
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
	{NO_OPTION, false, "/ethdev/info", st_read_info},
	/* XStats, BasicStats and PerQueue: read_xstats decides */
	{NO_OPTION, false, "/ethdev/xstats", st_read_xstats},
	/* what the xstats did not bring */
	{offsetof(struct stats_opts, basic), false, "/ethdev/stats", read_basic},
	{NO_OPTION, false, "/ethdev/link_status", read_link},
	{offsetof(struct stats_opts, app), true, "/fwd/port", read_fwd_port},
	/* last: the sources above may have seen a change and asked /ethdev/info again */
	{NO_OPTION, false, "/ethdev/info", st_dispatch_info},
};

static bool
source_on(const struct stats_instance *si, const struct port_source *src)
{
	bool on = true;

	if (src->option != NO_OPTION)
		memcpy(&on, (const char *)si->o + src->option, sizeof(on));
	return on && (!src->needs_fwd_port || si->caps.fwd_port);
}

void
st_read_port(struct stats_instance *si, uint16_t port, cdtime_t now)
{
	struct port_state *ps = st_port_state(si, port);
	struct dtp_id id;

	if (ps == NULL)
		return;
	ps->seen = true;
	ps->basic_done = ps->queues_done = false;
	/* From 25.11 a port's per-queue counters come with its xstats alone: not at a read
	 * that does not ask them (tiers.c); /ethdev/stats has none. */
	if (!ps->xstats_now && st_xstats_wanted(si, ps) && si->t.dpdk_version >= 251100)
		ps->queues_done = true;
	dtp_id_port(&id, PLUGIN, si->t.name, port, now);
	for (size_t i = 0; i < sizeof(port_sources) / sizeof(port_sources[0]); i++)
		if (source_on(si, &port_sources[i]))
			port_sources[i].read(si, ps, &id, port_sources[i].command);
	st_tiers_probe(si, ps);
	/* Drops where the xstats were read (or are never asked): at the xstats' interval. */
	if (si->o->drops && (ps->xstats_now || !st_xstats_wanted(si, ps))) {
		st_tiers_dispatch_ext(si, ps->xstats_now);
		stats_drops_dispatch(&ps->drops, &si->t, &id);
		st_tiers_dispatch_ext(si, false);
	}
}
