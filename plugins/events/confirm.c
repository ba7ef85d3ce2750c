/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdktel_events' poll, second step: confirm each candidate change with a second query
 * to the same source (DPDK 22.11 to 25.11 can hand a client another client's parameters).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "instance.h"

struct events_port *
ev_port_slot(struct ev_instance *ei, unsigned int id)
{
	return DTP_SLOT(ei->ports, ei->nports, id, NULL);
}

struct events_lcore *
ev_lcore_slot(struct ev_instance *ei, unsigned int id)
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

	if (ev_query_id(ei, "/ethdev/info", p->id, &r) < 0)
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
		return ev_read_one_link(ei, r->port, &one) == 0 && one.state == r->state;
	if (ev_read_fwd_ports(ei, &again) == 0)
		for (size_t i = 0; i < again.nlinks; i++)
			if (again.links[i].port == r->port)
				agree = again.links[i].state == r->state;
	ev_reading_free(&again);
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
		struct events_port *p = ev_port_slot(ei, r->port);

		if (p == NULL)
			continue;
		/* Its link is its netdev's carrier (follow.c): the telemetry cannot confirm it. */
		if (ev_follow_only_signal(ei, r->port)) {
			rd->link_passed[i] =
				events_link_check(p, r, false) != EVENTS_CHECK_FIRST_DOWN ||
				learn_info(ei, p);
			continue;
		}
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

	if (ev_read_fwd_lcores(ei, &l) < 0)
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

	if (dtp_eal_usage(ev_query_fn, ei, &ei->t, &u) < 0)
		return; /* the checks stay failed */
	for (size_t i = 0; i < rd->nlcores; i++) {
		const struct events_lcore *l =
			check[i] ? ev_lcore_slot(ei, rd->lcores[i].id) : NULL;
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
		struct events_lcore *l = ev_lcore_slot(ei, r->id);

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
	rd->main_passed = ev_read_fwd_info(ei, &again) == 0 && again.has_age &&
		events_main_stale(again.link_check_age_ms, again.link_poll_ms, ei->stall_us) ==
			stale;
	if (rd->main_passed)
		rd->main = again;
}

/* The second queries of what changed, each charged to its kind of poll. */
void
ev_confirm(struct ev_instance *ei, struct reading *rd, uint64_t t)
{
	uint64_t s0 = ei->t.service_ns;

	confirm_main(ei, rd);
	if (rd->have_links)
		confirm_links(ei, rd);
	ev_charge(ei, POLL_LINKS, s0);
	s0 = ei->t.service_ns;
	if (rd->have_lcores)
		confirm_lcores(ei, rd, t);
	ev_charge(ei, POLL_LCORES, s0);
}
