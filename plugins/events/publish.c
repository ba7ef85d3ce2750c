/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdktel_events' values: what a poll publishes for the read callback (the snapshot),
 * and when the values of the instance, a port or an lcore go to collectd, from the poll
 * thread or the read callback, one identifier in one time order.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "instance.h"

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

/* How often the port's link is polled, and how late a link down may be seen (seconds), as
 * the last published snapshot says: its own schedule, or /fwd/ports for all ports. */
static void
port_timing(const struct ev_instance *ei, const struct dtp_id *id, unsigned int port)
{
	const struct snapshot *sn = &ei->snap;
	double period;

	if (sn->fwd_link_bound > 0) {
		dtp_gauge(id, "poll_interval", "link", &sn->link_interval, 1);
		dtp_gauge(id, "detection_bound", "link", &sn->fwd_link_bound, 1);
		return;
	}
	for (size_t i = 0; i < sn->nsched; i++) {
		double bound;

		if (sn->sched[i].id != port)
			continue;
		period = sn->sched[i].period_ns > 0 ? (double)sn->sched[i].period_ns / 1e9
						    : ei->o->poll_interval;
		bound = ev_sched_bound(ei, &sn->sched[i]);
		dtp_gauge(id, "poll_interval", "link", &period, 1);
		dtp_gauge(id, "detection_bound", "link", &bound, 1);
		return;
	}
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
	port_timing(ei, &id, p->id);
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

/* The interval in force of a kind of poll, in seconds (0: not polled). */
static double
interval_of(const struct ev_instance *ei, enum poll_kind k, bool polled)
{
	if (!polled)
		return 0;
	return ei->budget[k].interval_ns > 0 ? (double)ei->budget[k].interval_ns / 1e9
					     : ei->o->poll_interval;
}

/* The links' timing for the snapshot: each port's schedule, or /fwd/ports' bound for all. */
static void
publish_timing(const struct ev_instance *ei, struct snapshot *sn)
{
	struct link_sched *v = realloc(sn->sched, (ei->nsched + 1) * sizeof(*v));

	sn->fwd_link_bound = 0;
	if (ei->links_from_fwd && sn->link_interval > 0)
		sn->fwd_link_bound =
			sn->link_interval + ei->o->timeout + (double)ei->fwd_link_poll_ms / 1000;
	if (v == NULL)
		return;
	sn->sched = v;
	if (ei->nsched > 0)
		memcpy(v, ei->sched, ei->nsched * sizeof(*v));
	sn->nsched = ei->nsched;
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
	publish_timing(ei, sn);
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
void
ev_finish_poll(struct ev_instance *ei, bool instance_changed)
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

/* collectd callbacks ----------------------------------------------------------------------- */

/*
 * Dispatch an instance's last published state. Under the dispatch lock, which the poll thread
 * holds while it publishes a snapshot and dispatches its changes: the snapshot dispatched
 * here is never older than a change dispatched before it.
 */
void
ev_dispatch_snapshot(struct ev_instance *ei)
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
