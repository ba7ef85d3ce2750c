/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The lcore and application state machines of dpdktel_events (events.h): stalls from a
 * heartbeat age or from cycle counters that stand still, exits, recovery; an application that
 * is gone, back, not responding, answering again.
 */
#include "machines.h"

bool
events_lcore_bad(enum dtel_lcore_state s)
{
	return s == DTEL_LCORE_STALLED || s == DTEL_LCORE_EXITED;
}

enum dtel_lcore_state
events_lcore_effective(const struct events_lcore_reading *r, uint64_t stall_us)
{
	if (r->state == DTEL_LCORE_EXITED)
		return DTEL_LCORE_EXITED;
	/* Not launched yet: no loop to be late for (a forwarder answering before its launch
	 * reported the time since boot as the age). */
	if (r->state == DTEL_LCORE_STARTING)
		return DTEL_LCORE_STARTING;
	if (r->age_us >= stall_us)
		return DTEL_LCORE_STALLED;
	/* The heartbeat is back although the application has not reclassified yet. */
	if (r->state == DTEL_LCORE_STALLED)
		return DTEL_LCORE_RUNNING;
	return r->state;
}

bool
events_lcore_check(
	const struct events_lcore *l, const struct events_lcore_reading *r, uint64_t stall_us)
{
	enum dtel_lcore_state s = events_lcore_effective(r, stall_us);

	return l->known && s != l->state && (events_lcore_bad(s) || events_lcore_bad(l->state));
}

/* The busy percent over the window that ends at this reading, when it is long enough. */
static void
busy_window(struct events_lcore *l, uint64_t total, uint64_t busy, uint64_t t, bool first)
{
	if (first || total < l->win_total || busy < l->win_busy) {
		l->win_total = total;
		l->win_busy = busy;
		l->win_ms = t;
		l->have_busy_pct = false;
		return;
	}
	if (t - l->win_ms < EVENTS_BUSY_WINDOW_MS)
		return;
	/* A window in which the lcore's loop did not run at all did no work. */
	l->busy_pct = total == l->win_total
		? 0
		: 100.0 * (double)(busy - l->win_busy) / (double)(total - l->win_total);
	if (l->busy_pct > 100)
		l->busy_pct = 100;
	l->have_busy_pct = true;
	l->win_total = total;
	l->win_busy = busy;
	l->win_ms = t;
}

void
events_lcore_cycles(struct events_lcore *l, uint64_t total, uint64_t busy, uint64_t t,
	struct events_lcore_reading *ret_reading)
{
	bool first = !l->have_cycles;

	if (first || total != l->total || total == 0)
		l->advanced_ms = t;
	ret_reading->id = l->id;
	ret_reading->age_us = (t - l->advanced_ms) * 1000;
	ret_reading->state = total == 0 ? DTEL_LCORE_STARTING
		: busy != l->busy       ? DTEL_LCORE_RUNNING
					: DTEL_LCORE_IDLE;
	ret_reading->stalls = l->stalls;
	busy_window(l, total, busy, t, first);
	l->prev_total = first ? total : l->total;
	l->total = total;
	l->busy = busy;
	l->have_cycles = true;
}

size_t
events_lcore_apply(struct events_lcore *l, const struct events_lcore_reading *r, bool passed,
	uint64_t t, uint64_t stall_us, bool report_initial, struct events_lcore_tr *tr)
{
	enum dtel_lcore_state s = events_lcore_effective(r, stall_us), old = l->state;

	l->seen = true;
	l->age_us = r->age_us;
	l->stalls = r->stalls;
	if (!l->known) {
		l->known = true;
		l->dirty = true;
		l->state = s;
		l->since_ms = t;
		if (!events_lcore_bad(s) || !report_initial)
			return 0;
		*tr = (struct events_lcore_tr){.kind = EVENTS_TR_LCORE, .old = DTEL_LCORE_STARTING};
		return 1;
	}
	if (s == l->state)
		return 0;
	if (!passed) {
		*tr = (struct events_lcore_tr){.kind = EVENTS_TR_LCORE_DISCARDED};
		return 1;
	}
	l->state = s;
	l->dirty = true;
	/* The application counts its own stall episodes; from cycles we count them. */
	if (l->have_cycles && s == DTEL_LCORE_STALLED)
		l->stalls++;
	*tr = (struct events_lcore_tr){
		.kind = EVENTS_TR_LCORE, .old = old, .lasted_ms = t - l->since_ms};
	l->since_ms = t;
	return 1;
}

/* The application ------------------------------------------------------------------------ */

const char *
events_instance_word(const struct events_instance *s)
{
	return s->not_responding ? "not_responding" : s->gone ? "gone" : "up";
}

static size_t
refused(struct events_instance *s, uint64_t began, struct events_instance_tr *tr)
{
	s->unanswered = 0;
	if (s->fails++ == 0)
		s->gone_ms = began;
	/* One refusal alone is not an outage; one that never answered is not announced. */
	if (s->fails < 2 || s->gone || (!s->up && !s->not_responding))
		return 0;
	*tr = (struct events_instance_tr){.kind = EVENTS_TR_GONE, .old = events_instance_word(s)};
	s->up = false;
	s->not_responding = false;
	s->gone = true;
	return 1;
}

static size_t
unanswered(struct events_instance *s, bool ever_up, uint64_t began, uint64_t t, unsigned int polls,
	struct events_instance_tr *tr)
{
	s->fails = 0;
	if (s->unanswered++ == 0)
		s->unanswered_ms = began;
	if (s->unanswered < polls || s->not_responding || !ever_up)
		return 0;
	*tr = (struct events_instance_tr){.kind = EVENTS_TR_NOT_RESPONDING,
		.old = events_instance_word(s),
		.lasted_ms = t - s->unanswered_ms};
	s->up = false;
	s->not_responding = true;
	return 1;
}

static size_t
answered(struct events_instance *s, uint64_t began, struct events_instance_tr *tr)
{
	size_t n = 0;

	if (!s->up && s->gone)
		tr[n++] = (struct events_instance_tr){
			.kind = EVENTS_TR_BACK, .old = "gone", .lasted_ms = began - s->gone_ms};
	else if (s->not_responding)
		tr[n++] = (struct events_instance_tr){.kind = EVENTS_TR_ANSWERS_AGAIN,
			.old = "not_responding",
			.lasted_ms = began - s->unanswered_ms};
	s->up = true;
	s->gone = false;
	s->not_responding = false;
	s->fails = 0;
	s->unanswered = 0;
	return n;
}

size_t
events_instance_apply(struct events_instance *s, enum events_poll poll, bool exited, bool ever_up,
	uint64_t began, uint64_t t, unsigned int polls, struct events_instance_tr *tr)
{
	switch (poll) {
	case EVENTS_POLL_ANSWERED:
		return answered(s, began, tr);
	case EVENTS_POLL_UNANSWERED:
		if (!exited)
			return unanswered(s, ever_up, began, t, polls, tr);
		return refused(s, began, tr);
	case EVENTS_POLL_REFUSED:
		return refused(s, began, tr);
	case EVENTS_POLL_NOT_SENT:
	default:
		return 0;
	}
}
