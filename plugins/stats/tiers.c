/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdktel_stats' read tiers: which of a port's counters a read asks, and when the next read
 * comes, within ReadLoad (and MaxAppLoad where set).
 *
 * A port's basic counters (packets, bytes, errors, imissed, rx_nombuf, and before DPDK 25.11
 * the per-queue ones) come with its /ethdev/xstats, or from /ethdev/stats. On a driver whose
 * xstats cost much more than its stats (mlx5: ethtool's whole statistics against a software
 * sum; bnxt: twice the firmware commands), a read that asks every port's xstats may not fit
 * the budget at collectd's interval: the reads would stretch to a minute or two, and every
 * rate alert, which needs a counter step in each minute, would go blind. So:
 *
 *   - basic counters at every read, each port's xstats (extended counters, drop reasons, the
 *     per-queue counters of DPDK >= 25.11) every k-th read, spread over the ports (never
 *     both requests for one port in one read: the xstats bring the basic counters too);
 *   - dtel_plan_reads() picks the interval and k: everything every interval when it fits;
 *     else the xstats as often as what the basic reads leave allows, within XStatsMaxAge;
 *     else the reads stretch; see its comment in dtel.h;
 *   - what a request costs comes from libdpdktel (dtel_shared_cost()); where the xstats of
 *     every read do not fit, /ethdev/stats of one port is asked once besides its xstats (at
 *     the last of the first reads, which run as wanted: the first read alone at an
 *     Interval over 3 s), to learn its cost; the tiers are
 *     given up where it costs nearly as much as the xstats (nothing to gain);
 *   - the values of the xstats carry their own interval (k reads), so that collectd and
 *     write_prometheus keep them between two xstats reads.
 */
#include <errno.h>
#include <stdio.h>

#include "instance.h"

/* The first reads run as wanted (an application's first, cold replies cost more): at most
 * WARM_READS of them, and no more than WARM_NS of reads. At Interval 10 the warm-up is the
 * first read alone: three reads of every port's xstats would take 30 s at several times the
 * budget (measured: 3.41 % of a core with lsc's 15 ms xstats on 32 ports). */
#define WARM_READS 3
#define WARM_NS 3000000000ull
/* How old the basic counters may get: the alert rules' 1-minute rates need a step of theirs
 * in every minute (docs/alerts.md, "Timing"). */
#define BASIC_BOUND_NS 30000000000ull
/* The bounds are planned with this margin: reads come a little later than planned (the
 * queue, the polls first), and the rules' DpdkTelemetryDegraded fires at the bound itself
 * (measured: xstats every 123.8 s where 120 s was planned). */
#define BOUND_MARGIN 0.9
/* Tiers are worth it when a port's xstats cost at least this many times its stats. */
#define TIER_GAIN 1.5

/* Whether the plan after read @idx (0: the first) still runs as wanted, at Interval @want. */
static bool
warm_plan(uint64_t idx, uint64_t want)
{
	return idx + 1 < WARM_READS && (idx + 1) * want <= WARM_NS;
}

void
st_tiers_begin(struct stats_instance *si)
{
	uint64_t want = CDTIME_T_TO_NS(plugin_get_interval());
	int slot = 0;

	si->nx = si->ns = 0;
	/* A warm-up of this read alone: where its xstats turn out dear, it learns what
	 * /ethdev/stats costs too, so that the next read can already be planned in tiers. */
	si->probe_first = si->reads == 0 && !warm_plan(0, want) && !si->tiers_off;
	for (int i = 0; i < si->nport_ids; i++) {
		struct port_state *ps = st_port_state(si, si->port_ids[i]);
		unsigned int k = si->plan.xstats_every > 1 ? si->plan.xstats_every : 1;

		if (ps == NULL || !dtp_ports_has(&si->o->ports, ps->id))
			continue;
		ps->xstats_now = st_xstats_wanted(si, ps) &&
			(k == 1 || (si->round + (uint64_t)slot) % k == 0);
		slot++;
	}
}

/*
 * Once, where the xstats of every read do not fit: /ethdev/stats of one port besides its
 * xstats, to learn what the basic counters alone cost (one extra request, and no series
 * misses a read for it).
 */
static unsigned int xstats_ports(struct stats_instance *si);

/* Whether the xstats of every port, at their cost learnt so far, exceed the budget. */
static bool
xstats_dear(struct stats_instance *si)
{
	double pct = si->budget.budget_pct, want = (double)CDTIME_T_TO_NS(plugin_get_interval());
	uint64_t cx;

	if (si->budget.cap_pct >= 0 && si->budget.cap_pct < pct)
		pct = si->budget.cap_pct;
	if (pct <= 0 || want <= 0 || dtel_shared_cost(si->t.sh, "/ethdev/xstats", &cx) < 0)
		return false;
	return (double)xstats_ports(si) * (double)cx / want > pct / 100;
}

void
st_tiers_probe(struct stats_instance *si, const struct port_state *ps)
{
	struct dtel_reply r;

	if (!ps->xstats_now || !si->o->basic)
		return;
	if (!si->probe_stats && !(si->probe_first && xstats_dear(si)))
		return;
	si->probe_stats = si->probe_first = false;
	if (st_query_id(si, "/ethdev/stats", ps->id, &r) == 0)
		dtel_reply_release(&r);
}

cdtime_t
st_xstats_interval(const struct stats_instance *si)
{
	uint64_t read = si->plan.interval_ns > 0 ? si->plan.interval_ns
						 : CDTIME_T_TO_NS(plugin_get_interval());

	return NS_TO_CDTIME_T(read * (si->plan.xstats_every > 1 ? si->plan.xstats_every : 1));
}

void
st_tiers_dispatch_ext(const struct stats_instance *si, bool ext)
{
	cdtime_t want = plugin_get_interval();
	cdtime_t read = NS_TO_CDTIME_T(si->plan.interval_ns);
	cdtime_t iv = ext ? st_xstats_interval(si) : read;

	dtp_dispatch_interval(iv > want ? iv : 0);
}

/* The ports whose xstats the reads ask (XStats, or PerQueue where they serve). */
static unsigned int
xstats_ports(struct stats_instance *si)
{
	unsigned int n = 0;

	for (int i = 0; i < si->nport_ids; i++) {
		struct port_state *ps = st_port_state(si, si->port_ids[i]);

		n += ps != NULL && dtp_ports_has(&si->o->ports, ps->id) && st_xstats_wanted(si, ps);
	}
	return n;
}

/* What the read cost beyond its port counter requests (smoothed): lists, links, lcores,
 * memory, the application's own counters. */
static void
learn_rest(struct stats_instance *si, uint64_t round_ns, uint64_t cx, uint64_t cs)
{
	double ports = (double)si->nx * (double)cx + (double)si->ns * (double)cs;
	double rest = (double)round_ns > ports ? (double)round_ns - ports : 0;

	si->rest_ns = si->reads == 0 ? rest : si->rest_ns + (rest - si->rest_ns) / 4;
}

/* The plan of a read with xstats: tiers where /ethdev/stats is known to be cheaper. */
static void
plan_xstats(struct stats_instance *si, uint64_t want, unsigned int n, uint64_t cx, bool have_cs,
	uint64_t cs)
{
	bool tiers = have_cs && !si->tiers_off && (double)cx >= TIER_GAIN * (double)cs;
	struct dtel_plan_reads o = {.want_ns = want,
		.basic_ns = (uint64_t)si->rest_ns + n * (tiers ? cs : cx),
		.extra_ns = tiers ? n * (cx - cs) : 0,
		.basic_bound_ns = (uint64_t)(BASIC_BOUND_NS * BOUND_MARGIN),
		.xstats_bound_ns = (uint64_t)(si->o->xstats_max_age * 1e9 * BOUND_MARGIN)};
	double grant = dtp_budget_grant(&si->budget, dtel_plan_reads_demand(&o));

	if (have_cs && (double)cx < TIER_GAIN * (double)cs && !si->tiers_off) {
		si->tiers_off = true;
		LOG(LOG_INFO,
			"DPDK application '%s': /ethdev/stats costs %.3g ms a port, nearly what "
			"/ethdev/xstats costs (%.3g ms): every read asks the xstats alone",
			si->t.name, (double)cs / 1e6, (double)cx / 1e6);
	}
	dtel_plan_reads(&o, warm_plan(si->reads, want) ? 0 : grant, &si->plan);
	/* The xstats of every read do not fit: the next read learns what /ethdev/stats costs
	 * (the last warm read, or any later one). */
	si->probe_stats = !tiers && !have_cs && !si->tiers_off && !warm_plan(si->reads + 1, want) &&
		grant > 0 && dtel_plan_reads_demand(&o) > grant;
}

void
st_tiers_plan(struct stats_instance *si, cdtime_t now, uint64_t round_ns)
{
	uint64_t want = CDTIME_T_TO_NS(plugin_get_interval()), cx = 0, cs = 0;
	unsigned int n = xstats_ports(si);
	bool have_cx = dtel_shared_cost(si->t.sh, "/ethdev/xstats", &cx) == 0;
	bool have_cs = dtel_shared_cost(si->t.sh, "/ethdev/stats", &cs) == 0;

	learn_rest(si, round_ns, have_cx ? cx : 0, have_cs ? cs : 0);
	si->budget.round_ns = round_ns;
	if (n == 0 || !have_cx || !si->o->basic) {
		si->plan.interval_ns = warm_plan(si->reads, want)
			? want
			: dtp_budget_plan(&si->budget, round_ns, want);
		si->plan.xstats_every = 1;
	} else {
		plan_xstats(si, want, n, cx, have_cs, cs);
		dtp_budget_note(&si->budget, si->plan.interval_ns, want);
	}
	si->reads++;
	si->round++;
	/* Within the budget, every callback reads, whenever collectd calls it. */
	si->read_next =
		si->plan.interval_ns > want ? now + NS_TO_CDTIME_T(si->plan.interval_ns) : 0;
}

/* A new process: what was learnt of the old one's costs no longer holds. */
void
st_tiers_reset(struct stats_instance *si)
{
	si->plan = (struct dtel_read_plan){0};
	si->reads = 0;
	si->probe_stats = false;
	si->tiers_off = false;
	si->rest_ns = 0;
}
