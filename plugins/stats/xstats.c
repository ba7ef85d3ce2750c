/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdktel_stats' extended counters: /ethdev/xstats of a port, which counters are
 * DERIVEs, GAUGEs or left out (XStats, XStatsInclude/Exclude/Gauge), hide_zero where the
 * release has it, and the basic counters taken from the same reply.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "instance.h"

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
	st_check_counts(si, ps, &st, id->time);
	if (!si->o->basic)
		return;
	st_dispatch_basic(si, id, &st);
	ps->basic_done = true;
	if (!si->o->per_queue || !xqueues_usable(si, ps))
		return;
	if (st.nb_queues > 0) {
		/* From 25.11 only the xstats have them: at the xstats' interval (tiers.c). */
		st_tiers_dispatch_ext(si, si->t.dpdk_version >= NO_QUEUE_ARRAYS_SINCE);
		st_dispatch_queues(si, ps, id, &st);
		st_tiers_dispatch_ext(si, false);
		ps->queues_done = true;
	} else if (si->t.dpdk_version >= NO_QUEUE_ARRAYS_SINCE) {
		st_no_queues(si, ps); /* nor has /ethdev/stats: do not ask it */
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
			st_derive(si, id, "xstat", e->name, &e->value, 1);
		} else if (k == XSTAT_GAUGE) {
			g = (double)e->value;
			dtp_gauge(id, "xstat_gauge", e->name, &g, 1);
		}
	}
}

/* Whether the port's /ethdev/xstats is asked: XStats, or PerQueue where they serve. */
bool
st_xstats_wanted(struct stats_instance *si, struct port_state *ps)
{
	return si->o->xstats || (si->o->basic && si->o->per_queue && xqueues_usable(si, ps));
}

/* The port's /ethdev/xstats request, with hide_zero=true where maybe_hide_zero() chose it. */
void
st_xstats_request(const struct port_state *ps, char *buf, size_t size)
{
	snprintf(buf, size, "/ethdev/xstats,%u%s", ps->id, ps->hide_zero ? ",hide_zero=true" : "");
}

/*
 * XStats, and the generic and per-queue counters (BasicStats, PerQueue) from the same reply:
 * one request per port. Not asked with XStats false unless PerQueue needs it.
 */
void
st_read_xstats(
	struct stats_instance *si, struct port_state *ps, const struct dtp_id *id, const char *cmd)
{
	struct dtel_xstats x;
	struct dtel_reply r;
	char req[96];
	uint64_t h;
	int ret;

	if (!ps->xstats_now)
		return;
	st_xstats_request(ps, req, sizeof(req));
	si->nx++;
	if (st_query(si, req, &r) < 0)
		return;
	ret = dtel_parse_xstats(&r, &x);
	dtel_reply_release(&r);
	if (ret < 0) {
		st_bad_port_reply(si, ps, cmd, ret, 1);
		return;
	}
	/* Whatever did arrive is dispatched, cut or not; entries that are not counters are not. */
	if (ps->hide_zero && fill_hidden(ps, &x) < 0) {
		dtel_xstats_clear(&x);
		return;
	}
	/* The names' hash, once for the caches keyed by it and the port's facts. */
	h = drops_names_hash(&x);
	st_check_names(si, ps, h, id->time);
	maybe_hide_zero(si, ps, &x);
	st_note_cut(si, ps, cmd, x.flags);
	if (x.nb_invalid > 0)
		st_bad_port_reply(si, ps, cmd, -EPROTO, x.nb_invalid);
	basic_from_xstats(si, ps, id, &x);
	if (si->o->drops)
		stats_drops_xstats(&ps->drops, ps->have_info ? ps->info.name : NULL, &x, h);
	if (!si->o->xstats) {
		dtel_xstats_clear(&x);
		return;
	}
	if (!si->globs_checked)
		check_globs(si, ps, &x);
	/* At the interval of the xstats (tiers.c), which may be several reads. */
	st_tiers_dispatch_ext(si, true);
	dispatch_xstats(si, ps, id, &x, h);
	st_tiers_dispatch_ext(si, false);
	dtel_xstats_clear(&x);
}
