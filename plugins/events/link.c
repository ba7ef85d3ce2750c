/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The link state machine of dpdktel_events (events.h): first readings, confirmed changes,
 * changes counted by the application that no poll saw, flapping and settling, speed changes.
 */
#include <stdlib.h>
#include <string.h>

#include "machines.h"

enum events_link_check
events_link_check(const struct events_port *p, const struct events_link_reading *r, bool confirm)
{
	if (!r->valid)
		return EVENTS_CHECK_NONE;
	if (!p->known || p->state == EVENTS_LINK_UNKNOWN)
		return r->state == EVENTS_LINK_DOWN ? EVENTS_CHECK_FIRST_DOWN : EVENTS_CHECK_NONE;
	return r->state != p->state && confirm ? EVENTS_CHECK_AGAIN : EVENTS_CHECK_NONE;
}

void
events_port_fini(struct events_port *p)
{
	free(p->flap_ms);
	p->flap_ms = NULL;
	p->nflaps = 0;
}

/*
 * Keep the change times inside the window, at most flap_threshold of them (older ones cannot
 * change the verdict); true when the port now counts as flapping.
 */
static bool
note_change(struct events_port *p, uint64_t t, uint64_t count, const struct events_link_conf *c)
{
	unsigned int cap = c->flap_threshold, k = 0;

	if (p->flap_ms == NULL) {
		p->flap_ms = calloc(cap, sizeof(p->flap_ms[0]));
		if (p->flap_ms == NULL)
			return false;
	}
	if (count > cap)
		count = cap;
	for (uint64_t i = 0; i < count; i++) {
		if (p->nflaps == cap)
			memmove(p->flap_ms, p->flap_ms + 1, --p->nflaps * sizeof(p->flap_ms[0]));
		p->flap_ms[p->nflaps++] = t;
	}
	for (unsigned int i = 0; i < p->nflaps; i++)
		if (t - p->flap_ms[i] <= c->flap_window_ms)
			p->flap_ms[k++] = p->flap_ms[i];
	p->nflaps = k;
	return p->nflaps >= c->flap_threshold;
}

static size_t
start_flapping(struct events_port *p, struct events_link_tr *tr)
{
	if (p->flapping)
		return 0;
	p->flapping = true;
	*tr = (struct events_link_tr){.kind = EVENTS_TR_FLAPPING, .count = p->nflaps};
	return 1;
}

/* The first reading of a port (start, or after a restart). */
static size_t
first_reading(struct events_port *p, const struct events_link_reading *r, bool passed, uint64_t t,
	const struct events_link_conf *c, struct events_link_tr *tr)
{
	/* Down, but not started yet or up again at once: not news, still unknown. */
	if (r->state == EVENTS_LINK_DOWN && !passed) {
		p->state = EVENTS_LINK_UNKNOWN;
		return 0;
	}
	p->known = true;
	p->dirty = true;
	p->state = r->state;
	p->speed = r->speed;
	p->duplex = r->duplex;
	p->since_ms = t;
	p->have_app_changes = p->app_base = r->have_changes;
	p->app_changes = r->changes;
	p->own_changes = 0;
	if (r->have_changes)
		p->changes = r->changes;
	if (p->state != EVENTS_LINK_DOWN || !c->report_initial)
		return 0;
	*tr = (struct events_link_tr){.kind = EVENTS_TR_DOWN, .old = EVENTS_LINK_UNKNOWN};
	return 1;
}

/* The application counted changes that our polls did not see (a down and up in between). */
static size_t
missed_flaps(struct events_port *p, uint64_t missed, uint64_t t, const struct events_link_conf *c,
	struct events_link_tr *tr)
{
	if (note_change(p, t, missed, c))
		return start_flapping(p, tr);
	if (p->flapping)
		return 0;
	*tr = (struct events_link_tr){.kind = EVENTS_TR_FLAPPED, .count = missed};
	return 1;
}

/* The confirmed state changed: one change seen, the application may have counted more. */
static size_t
changed(struct events_port *p, const struct events_link_reading *r, uint64_t seen, uint64_t t,
	const struct events_link_conf *c, struct events_link_tr *tr)
{
	enum events_link old = p->state;
	uint64_t lasted = t - p->since_ms;
	size_t n = 0;

	p->state = r->state;
	p->speed = r->speed;
	p->duplex = r->duplex;
	p->since_ms = t;
	if (!note_change(p, t, 1, c) && !p->flapping)
		tr[n++] = (struct events_link_tr){
			.kind = p->state == EVENTS_LINK_DOWN ? EVENTS_TR_DOWN : EVENTS_TR_UP,
			.old = old,
			.lasted_ms = lasted};
	else
		n += start_flapping(p, &tr[n]);
	if (seen > 1)
		n += missed_flaps(p, seen - 1, t, c, &tr[n]);
	p->changes++; /* what we confirmed; the application's counter may add more (below) */
	p->own_changes++;
	return n;
}

static size_t
settle(struct events_port *p, uint64_t t, const struct events_link_conf *c,
	struct events_link_tr *tr)
{
	if (!p->flapping || (p->nflaps > 0 && t - p->flap_ms[p->nflaps - 1] <= c->flap_window_ms))
		return 0;
	p->flapping = false;
	p->nflaps = 0;
	p->dirty = true;
	*tr = (struct events_link_tr){.kind = EVENTS_TR_SETTLED};
	return 1;
}

/*
 * link_changes never goes back. Each change confirmed here counts at once; a reading with the
 * application's own counter adds what it counted beyond those since its last such reading
 * (changes no poll saw). That covers a change of source too: while the forwarder's main lcore
 * is stalled the links are read from /ethdev/link_status, without its counter, and the
 * changes seen there are counted here; the counter, when it is back, may have missed them (it
 * counts what its main lcore saw, and a down and up during the stall is no change to it), so
 * the larger of the two counts goes in, never the counter itself (100 → 101 → 102 → 100
 * before: a counter reset to Prometheus, and DpdkLinkFlapping fired after two changes).
 */
static void
follow_app_counter(struct events_port *p, const struct events_link_reading *r)
{
	p->have_app_changes = r->have_changes;
	if (!r->have_changes)
		return;
	if (p->app_base && r->changes > p->app_changes &&
		r->changes - p->app_changes > p->own_changes) {
		p->changes += r->changes - p->app_changes - p->own_changes;
		p->dirty = true;
	}
	p->app_base = true;
	p->app_changes = r->changes;
	p->own_changes = 0;
}

size_t
events_link_apply(struct events_port *p, const struct events_link_reading *r, bool passed,
	uint64_t t, const struct events_link_conf *c, struct events_link_tr *tr)
{
	uint64_t seen = 0;
	size_t n = 0;

	if (!r->valid)
		return 0;
	if (!p->known || p->state == EVENTS_LINK_UNKNOWN)
		return first_reading(p, r, passed, t, c, tr);
	if (r->have_changes && p->have_app_changes && r->changes > p->app_changes)
		seen = r->changes - p->app_changes;
	if (r->state != p->state && !passed) {
		tr[0] = (struct events_link_tr){.kind = EVENTS_TR_DISCARDED};
		return 1; /* contradicted by the second query: not applied */
	}
	if (r->state != p->state) {
		n = changed(p, r, seen, t, c, tr);
		p->dirty = true;
	} else if (seen > 0) {
		n = missed_flaps(p, seen, t, c, tr);
		p->dirty = true;
	} else if (p->state == EVENTS_LINK_UP && (r->speed != p->speed || r->duplex != p->duplex)) {
		if (!p->flapping) /* no per-change news while flapping */
			tr[n++] = (struct events_link_tr){.kind = EVENTS_TR_SPEED,
				.old_speed = p->speed,
				.old_duplex = p->duplex};
		p->speed = r->speed;
		p->duplex = r->duplex;
		p->dirty = true;
	}
	follow_app_counter(p, r);
	return n + settle(p, t, c, &tr[n]);
}

size_t
events_link_tick(struct events_port *p, uint64_t t, const struct events_link_conf *c,
	struct events_link_tr *tr)
{
	return settle(p, t, c, tr);
}

bool
events_main_stale(uint64_t link_check_age_ms, uint64_t link_poll_ms, uint64_t stall_us)
{
	uint64_t limit = 3 * link_poll_ms;

	if (stall_us / 1000 > limit)
		limit = stall_us / 1000;
	return link_check_age_ms > limit;
}
