/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdktel_events' poll, third step: apply the confirmed readings to the state machines
 * (machines.h) and notify each transition they return (notify.c).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "instance.h"

void
ev_apply_main(struct ev_instance *ei, const struct reading *rd, uint64_t t)
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
	ev_notify_main_lcore(ei, rd->main.link_check_age_ms, t);
}

bool
ev_listed(const struct reading *rd, unsigned int port)
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

		if (ev_listed(rd, p->id)) {
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

void
ev_apply_links(struct ev_instance *ei, const struct reading *rd, uint64_t t)
{
	struct events_link_tr tr[EVENTS_LINK_TR_MAX];

	for (size_t i = 0; i < rd->nlinks; i++) {
		struct events_port *p = ev_port_slot(ei, rd->links[i].port);
		size_t n;

		if (p == NULL)
			continue;
		n = events_link_apply(p, &rd->links[i], rd->link_passed[i], t, &ei->link_conf, tr);
		for (size_t k = 0; k < n; k++)
			ev_notify_link(ei, p, &tr[k]);
	}
	drop_unlisted_ports(ei, rd);
	for (size_t i = 0; i < ei->nports; i++)
		if (events_link_tick(&ei->ports[i], t, &ei->link_conf, tr) > 0)
			ev_notify_link(ei, &ei->ports[i], tr);
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

void
ev_apply_lcores(struct ev_instance *ei, const struct reading *rd, uint64_t t)
{
	struct events_lcore_tr tr;

	for (size_t i = 0; i < ei->nlcores; i++)
		ei->lcores[i].seen = false;
	for (size_t i = 0; i < rd->nlcores; i++) {
		struct events_lcore *l = ev_lcore_slot(ei, rd->lcores[i].id);

		if (l == NULL)
			continue;
		if (t < ei->quiet_until_ms && l->known &&
			events_lcore_bad(events_lcore_effective(&rd->lcores[i], ei->stall_us))) {
			l->seen = true; /* still there; its heartbeat dates from the hang */
			continue;
		}
		if (events_lcore_apply(l, &rd->lcores[i], rd->lcore_passed[i], t, ei->stall_us,
			    ei->o->initial_state, &tr) > 0)
			ev_notify_lcore(ei, l, &tr);
	}
	drop_unseen_lcores(ei);
}

/* Forget every port and lcore: they belong to a process that is gone. */
void
ev_forget_state(struct ev_instance *ei)
{
	for (size_t i = 0; i < ei->nports; i++)
		events_port_fini(&ei->ports[i]);
	ei->nports = 0;
	ei->nlcores = 0;
	ei->have_caps = false;
	ei->caps_again_step_ms = 0;
	ei->usage_lcores = false;
	ei->main_stalled = false;
	/* Its links' costs are the new process's to show (it may have LSC where the old had
	 * not), and so is the warning about slow ones. */
	ei->nsched = 0;
	ei->link_fixed = 0;
	ei->nfixed = 0;
	ei->warned_slow = false;
	/* Its netdevs may be in another namespace, its ports other devices. */
	ev_follow_forget(ei);
}
