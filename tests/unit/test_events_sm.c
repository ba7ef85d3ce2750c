/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The state machines of dpdktel_events (plugins/events/machines.h) with plain structs and a driven
 * clock: one test per row of the tables in docs/dpdktel_events.md, plus the checks each
 * reading asks for. No collectd, no socket.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "events/machines.h"

static const struct events_link_conf conf = {
	.flap_window_ms = 1000, .flap_threshold = 3, .report_initial = true};

static struct events_link_reading
link(enum events_link state)
{
	return (struct events_link_reading){.port = 0,
		.state = state,
		.speed = state == EVENTS_LINK_UP ? 10000 : 0,
		.duplex = state == EVENTS_LINK_UP ? DTEL_DUPLEX_FULL : DTEL_DUPLEX_UNKNOWN,
		.valid = true};
}

/* A port known to be up since t=0. */
static struct events_port
port_up(void)
{
	struct events_port p = {0};
	struct events_link_tr tr[EVENTS_LINK_TR_MAX];
	struct events_link_reading r = link(EVENTS_LINK_UP);

	assert_int_equal(events_link_apply(&p, &r, true, 0, &conf, tr), 0);
	assert_true(p.known && p.dirty);
	p.dirty = false;
	return p;
}

static void
first_reading_up_is_no_news(void **state)
{
	struct events_port p = port_up();

	(void)state;
	assert_int_equal(p.state, EVENTS_LINK_UP);
	events_port_fini(&p);
}

static void
first_reading_down_is_checked_then_reported_once(void **state)
{
	struct events_port p = {0};
	struct events_link_reading r = link(EVENTS_LINK_DOWN);
	struct events_link_tr tr[EVENTS_LINK_TR_MAX];

	(void)state;
	assert_int_equal(events_link_check(&p, &r, false), EVENTS_CHECK_FIRST_DOWN);
	/* Not started yet (or up by the second query): unknown, no news. */
	assert_int_equal(events_link_apply(&p, &r, false, 5, &conf, tr), 0);
	assert_int_equal(p.state, EVENTS_LINK_UNKNOWN);
	assert_false(p.known);
	/* Started and still down: one FAILURE from unknown. */
	assert_int_equal(events_link_apply(&p, &r, true, 10, &conf, tr), 1);
	assert_int_equal(tr[0].kind, EVENTS_TR_DOWN);
	assert_int_equal(tr[0].old, EVENTS_LINK_UNKNOWN);
	/* ReportInitialState false: known, silent. */
	struct events_link_conf quiet = conf;
	struct events_port q = {0};

	quiet.report_initial = false;
	assert_int_equal(events_link_apply(&q, &r, true, 10, &quiet, tr), 0);
	assert_int_equal(q.state, EVENTS_LINK_DOWN);
	events_port_fini(&p);
	events_port_fini(&q);
}

static void
link_goes_down_then_up(void **state)
{
	struct events_port p = port_up();
	struct events_link_reading down = link(EVENTS_LINK_DOWN), up = link(EVENTS_LINK_UP);
	struct events_link_tr tr[EVENTS_LINK_TR_MAX];

	(void)state;
	assert_int_equal(events_link_check(&p, &down, true), EVENTS_CHECK_AGAIN);
	assert_int_equal(events_link_check(&p, &down, false), EVENTS_CHECK_NONE);
	assert_int_equal(events_link_apply(&p, &down, true, 400, &conf, tr), 1);
	assert_int_equal(tr[0].kind, EVENTS_TR_DOWN);
	assert_int_equal(tr[0].old, EVENTS_LINK_UP);
	assert_int_equal(tr[0].lasted_ms, 400); /* up for */
	assert_true(p.dirty);
	assert_int_equal(p.changes, 1); /* counted by us: the application does not */
	assert_int_equal(events_link_apply(&p, &up, true, 900, &conf, tr), 1);
	assert_int_equal(tr[0].kind, EVENTS_TR_UP);
	assert_int_equal(tr[0].lasted_ms, 500); /* down for */
	assert_int_equal(p.changes, 2);
	events_port_fini(&p);
}

static void
contradicted_change_is_discarded(void **state)
{
	struct events_port p = port_up();
	struct events_link_reading down = link(EVENTS_LINK_DOWN);
	struct events_link_tr tr[EVENTS_LINK_TR_MAX];

	(void)state;
	assert_int_equal(events_link_apply(&p, &down, false, 10, &conf, tr), 1);
	assert_int_equal(tr[0].kind, EVENTS_TR_DISCARDED);
	assert_int_equal(p.state, EVENTS_LINK_UP);
	assert_false(p.dirty);
	events_port_fini(&p);
}

static void
speed_change_while_up_warns(void **state)
{
	struct events_port p = port_up();
	struct events_link_reading r = link(EVENTS_LINK_UP);
	struct events_link_tr tr[EVENTS_LINK_TR_MAX];

	(void)state;
	r.speed = 25000;
	assert_int_equal(events_link_check(&p, &r, true), EVENTS_CHECK_NONE);
	assert_int_equal(events_link_apply(&p, &r, true, 10, &conf, tr), 1);
	assert_int_equal(tr[0].kind, EVENTS_TR_SPEED);
	assert_int_equal(tr[0].old_speed, 10000);
	assert_int_equal(p.speed, 25000);
	events_port_fini(&p);
}

static void
changes_no_poll_saw_are_flapped(void **state)
{
	struct events_port p = {0};
	struct events_link_reading r = link(EVENTS_LINK_UP);
	struct events_link_tr tr[EVENTS_LINK_TR_MAX];

	(void)state;
	r.have_changes = true;
	r.changes = 4;
	assert_int_equal(events_link_apply(&p, &r, true, 0, &conf, tr), 0);
	assert_int_equal(p.changes, 4); /* the application's own count */
	r.changes = 6; /* down and up between two polls */
	assert_int_equal(events_link_apply(&p, &r, true, 100, &conf, tr), 1);
	assert_int_equal(tr[0].kind, EVENTS_TR_FLAPPED);
	assert_int_equal(tr[0].count, 2);
	assert_int_equal(p.changes, 6);
	events_port_fini(&p);
}

static void
threshold_changes_in_window_flap_then_settle(void **state)
{
	struct events_port p = port_up();
	struct events_link_tr tr[EVENTS_LINK_TR_MAX];
	size_t n;

	(void)state;
	for (int i = 1; i <= 2; i++) {
		struct events_link_reading r = link(i % 2 ? EVENTS_LINK_DOWN : EVENTS_LINK_UP);

		n = events_link_apply(&p, &r, true, (uint64_t)i * 100, &conf, tr);
		assert_int_equal(n, 1);
		assert_int_equal(tr[0].kind, i % 2 ? EVENTS_TR_DOWN : EVENTS_TR_UP);
	}
	struct events_link_reading down = link(EVENTS_LINK_DOWN);

	assert_int_equal(events_link_apply(&p, &down, true, 300, &conf, tr), 1);
	assert_int_equal(tr[0].kind, EVENTS_TR_FLAPPING);
	assert_int_equal(tr[0].count, 3);
	assert_true(p.flapping);
	/* While flapping: no per-change news. */
	struct events_link_reading up = link(EVENTS_LINK_UP);

	assert_int_equal(events_link_apply(&p, &up, true, 400, &conf, tr), 0);
	/* Stable for a whole window: settled, in the state it is in. */
	assert_int_equal(events_link_tick(&p, 1300, &conf, tr), 0);
	assert_int_equal(events_link_tick(&p, 1401, &conf, tr), 1);
	assert_int_equal(tr[0].kind, EVENTS_TR_SETTLED);
	assert_false(p.flapping);
	assert_int_equal(p.state, EVENTS_LINK_UP);
	events_port_fini(&p);
}

/* Flapping that settles down: the other row of the table, a FAILURE with the state. */
static void
flapping_settles_down(void **state)
{
	struct events_port p = port_up();
	struct events_link_tr tr[EVENTS_LINK_TR_MAX];

	(void)state;
	for (int i = 1; i <= 3; i++) {
		struct events_link_reading r = link(i % 2 ? EVENTS_LINK_DOWN : EVENTS_LINK_UP);

		events_link_apply(&p, &r, true, (uint64_t)i * 100, &conf, tr);
	}
	assert_true(p.flapping);
	assert_int_equal(p.state, EVENTS_LINK_DOWN);
	assert_int_equal(events_link_tick(&p, 1301, &conf, tr), 1);
	assert_int_equal(tr[0].kind, EVENTS_TR_SETTLED);
	assert_int_equal(p.state, EVENTS_LINK_DOWN); /* reported as FAILURE: settled down */
	events_port_fini(&p);
}

/* FlapThreshold over its whole range: 1000 changes flap, 999 do not. */
static void
flap_threshold_1000(void **state)
{
	struct events_link_conf big = {
		.flap_window_ms = 60000, .flap_threshold = 1000, .report_initial = true};
	struct events_port p = {0};
	struct events_link_reading r = link(EVENTS_LINK_UP);
	struct events_link_tr tr[EVENTS_LINK_TR_MAX];

	(void)state;
	r.have_changes = true;
	assert_int_equal(events_link_apply(&p, &r, true, 0, &big, tr), 0);
	r.changes = 999;
	assert_int_equal(events_link_apply(&p, &r, true, 10, &big, tr), 1);
	assert_int_equal(tr[0].kind, EVENTS_TR_FLAPPED);
	r.changes = 1000;
	assert_int_equal(events_link_apply(&p, &r, true, 20, &big, tr), 1);
	assert_int_equal(tr[0].kind, EVENTS_TR_FLAPPING);
	assert_int_equal(tr[0].count, 1000);
	r.changes = 1500;
	assert_int_equal(events_link_apply(&p, &r, true, 30, &big, tr), 0);
	events_port_fini(&p);
}

/*
 * The forwarder's main lcore stalled: links were read from the ports (no counter), a down
 * was seen there; when its counter is back it has counted that down and the up after it.
 * Only the up is news: the down is not counted twice into a flap.
 */
static void
source_without_counter_then_with(void **state)
{
	struct events_port p = {0};
	struct events_link_reading r = link(EVENTS_LINK_UP);
	struct events_link_tr tr[EVENTS_LINK_TR_MAX];

	(void)state;
	r.have_changes = true;
	r.changes = 4;
	assert_int_equal(events_link_apply(&p, &r, true, 0, &conf, tr), 0);
	struct events_link_reading down = link(EVENTS_LINK_DOWN);

	assert_int_equal(events_link_apply(&p, &down, true, 100, &conf, tr), 1);
	assert_int_equal(tr[0].kind, EVENTS_TR_DOWN);
	r.changes = 6; /* its own count of that down and the up */
	assert_int_equal(events_link_apply(&p, &r, true, 200, &conf, tr), 1);
	assert_int_equal(tr[0].kind, EVENTS_TR_UP);
	assert_false(p.flapping);
	assert_int_equal(p.changes, 6);
	events_port_fini(&p);
}

/*
 * link_changes never goes back across a change of source. The counter was 100; while the
 * forwarder's main lcore stalled, the links were read without it and a down and an up were
 * seen (101, 102); its counter, back, missed that blip (still 100): 102 stays. Failed before:
 * 100 → 101 → 102 → 100, a counter reset to Prometheus (DpdkLinkFlapping then fired).
 */
static void
counter_behind_after_source_change_never_goes_back(void **state)
{
	struct events_port p = {0};
	struct events_link_reading fwd = link(EVENTS_LINK_UP);
	struct events_link_reading down = link(EVENTS_LINK_DOWN), up = link(EVENTS_LINK_UP);
	struct events_link_tr tr[EVENTS_LINK_TR_MAX];

	(void)state;
	fwd.have_changes = true;
	fwd.changes = 100;
	assert_int_equal(events_link_apply(&p, &fwd, true, 0, &conf, tr), 0);
	assert_int_equal(p.changes, 100);
	assert_int_equal(events_link_apply(&p, &down, true, 100, &conf, tr), 1);
	assert_int_equal(p.changes, 101);
	assert_int_equal(events_link_apply(&p, &up, true, 200, &conf, tr), 1);
	assert_int_equal(p.changes, 102);
	p.dirty = false;
	assert_int_equal(events_link_apply(&p, &fwd, true, 300, &conf, tr), 0);
	assert_int_equal(p.changes, 102);
	assert_false(p.dirty);
	/* From there on its counter's moves add up again. */
	fwd.changes = 101;
	fwd.state = EVENTS_LINK_DOWN;
	fwd.speed = 0;
	assert_int_equal(events_link_apply(&p, &fwd, true, 5000, &conf, tr), 1);
	assert_int_equal(p.changes, 103);
	/* A counter that counted more than was seen here (a flap between polls) adds the rest. */
	assert_int_equal(events_link_apply(&p, &up, true, 5100, &conf, tr), 1);
	assert_int_equal(p.changes, 104);
	fwd.changes = 104; /* it counted the up and a down+up besides */
	fwd.state = EVENTS_LINK_UP;
	fwd.speed = 10000;
	assert_int_equal(events_link_apply(&p, &fwd, true, 5200, &conf, tr), 0);
	assert_int_equal(p.changes, 106);
	events_port_fini(&p);
}

/* First read without the counter (the main lcore already stalled at start): when the counter
 * comes, the count goes on from ours, without a jump to the counter's value. */
static void
counter_first_seen_late_is_no_jump(void **state)
{
	struct events_port p = {0};
	struct events_link_reading fwd = link(EVENTS_LINK_UP);
	struct events_link_reading down = link(EVENTS_LINK_DOWN), up = link(EVENTS_LINK_UP);
	struct events_link_tr tr[EVENTS_LINK_TR_MAX];

	(void)state;
	assert_int_equal(events_link_apply(&p, &up, true, 0, &conf, tr), 0);
	assert_int_equal(events_link_apply(&p, &down, true, 100, &conf, tr), 1);
	assert_int_equal(p.changes, 1);
	fwd.state = EVENTS_LINK_DOWN;
	fwd.speed = 0;
	fwd.have_changes = true;
	fwd.changes = 57;
	assert_int_equal(events_link_apply(&p, &fwd, true, 200, &conf, tr), 0);
	assert_int_equal(p.changes, 1);
	events_port_fini(&p);
}

static void
unreadable_link_is_not_applied(void **state)
{
	struct events_port p = port_up();
	struct events_link_reading r = {.port = 0, .valid = false};
	struct events_link_tr tr[EVENTS_LINK_TR_MAX];

	(void)state;
	assert_int_equal(events_link_check(&p, &r, true), EVENTS_CHECK_NONE);
	assert_int_equal(events_link_apply(&p, &r, true, 10, &conf, tr), 0);
	assert_int_equal(p.state, EVENTS_LINK_UP);
	events_port_fini(&p);
}

/* Lcores --------------------------------------------------------------------------------- */

static struct events_lcore_reading
lcore(enum dtel_lcore_state s, uint64_t age_us)
{
	return (struct events_lcore_reading){.id = 1, .state = s, .age_us = age_us};
}

static struct events_lcore
lcore_running(void)
{
	struct events_lcore l = {.id = 1};
	struct events_lcore_reading r = lcore(DTEL_LCORE_RUNNING, 5);
	struct events_lcore_tr tr;

	assert_int_equal(events_lcore_apply(&l, &r, true, 0, 100000, true, &tr), 0);
	return l;
}

static void
no_heartbeat_for_threshold_is_stalled_then_recovers(void **state)
{
	struct events_lcore l = lcore_running();
	struct events_lcore_reading stalled = lcore(DTEL_LCORE_RUNNING, 150000), ok = lcore(1, 3);
	struct events_lcore_tr tr;

	(void)state;
	/* Before the application says so itself: our threshold. */
	assert_int_equal(events_lcore_effective(&stalled, 100000), DTEL_LCORE_STALLED);
	assert_true(events_lcore_check(&l, &stalled, 100000));
	assert_int_equal(events_lcore_apply(&l, &stalled, true, 200, 100000, true, &tr), 1);
	assert_int_equal(tr.kind, EVENTS_TR_LCORE);
	assert_int_equal(tr.old, DTEL_LCORE_RUNNING);
	assert_int_equal(l.state, DTEL_LCORE_STALLED);
	assert_true(events_lcore_check(&l, &ok, 100000));
	assert_int_equal(events_lcore_apply(&l, &ok, true, 700, 100000, true, &tr), 1);
	assert_int_equal(tr.old, DTEL_LCORE_STALLED);
	assert_int_equal(tr.lasted_ms, 500);
	assert_int_equal(l.state, DTEL_LCORE_RUNNING);
}

static void
loop_returned_is_exited(void **state)
{
	struct events_lcore l = lcore_running();
	struct events_lcore_reading r = lcore(DTEL_LCORE_EXITED, 999999999);
	struct events_lcore_tr tr;

	(void)state;
	assert_int_equal(events_lcore_effective(&r, 100000), DTEL_LCORE_EXITED);
	assert_int_equal(events_lcore_apply(&l, &r, true, 10, 100000, true, &tr), 1);
	assert_int_equal(l.state, DTEL_LCORE_EXITED);
}

static void
contradicted_stall_is_discarded_and_idle_is_no_news(void **state)
{
	struct events_lcore l = lcore_running();
	struct events_lcore_reading stalled = lcore(1, 150000), idle = lcore(DTEL_LCORE_IDLE, 3);
	struct events_lcore_tr tr;

	(void)state;
	assert_int_equal(events_lcore_apply(&l, &stalled, false, 10, 100000, true, &tr), 1);
	assert_int_equal(tr.kind, EVENTS_TR_LCORE_DISCARDED);
	assert_int_equal(l.state, DTEL_LCORE_RUNNING);
	/* RUNNING -> IDLE needs no check, and is a change of value only. */
	assert_false(events_lcore_check(&l, &idle, 100000));
	assert_int_equal(events_lcore_apply(&l, &idle, true, 20, 100000, true, &tr), 1);
	assert_false(events_lcore_bad(l.state) || events_lcore_bad(tr.old));
}

static void
first_reading_stalled_is_reported_from_starting(void **state)
{
	struct events_lcore l = {.id = 1};
	struct events_lcore_reading r = lcore(DTEL_LCORE_RUNNING, 500000);
	struct events_lcore_tr tr;

	(void)state;
	assert_false(events_lcore_check(&l, &r, 100000)); /* nothing to compare with yet */
	assert_int_equal(events_lcore_apply(&l, &r, true, 0, 100000, true, &tr), 1);
	assert_int_equal(tr.old, DTEL_LCORE_STARTING);
	struct events_lcore q = {.id = 1};

	assert_int_equal(events_lcore_apply(&q, &r, true, 0, 100000, false, &tr), 0);
	assert_int_equal(q.state, DTEL_LCORE_STALLED);
}

static void
cycles_that_stand_still_age(void **state)
{
	struct events_lcore l = {.id = 1};
	struct events_lcore_reading r;

	(void)state;
	events_lcore_cycles(&l, 1000, 500, 0, &r);
	assert_int_equal(r.age_us, 0);
	events_lcore_cycles(&l, 2000, 900, 50, &r);
	assert_int_equal(r.age_us, 0);
	assert_int_equal(r.state, DTEL_LCORE_RUNNING);
	events_lcore_cycles(&l, 2000, 900, 170, &r);
	assert_int_equal(r.age_us, 120000);
	assert_int_equal(r.state, DTEL_LCORE_IDLE);
	assert_int_equal(events_lcore_effective(&r, 100000), DTEL_LCORE_STALLED);
	assert_int_equal(l.prev_total, 2000);
	events_lcore_cycles(&l, 2500, 1000, 200, &r);
	assert_int_equal(r.age_us, 0);
	assert_int_equal(
		l.prev_total, 2000); /* where it stood still: recovery is checked against it */
}

/* An lcore whose loop never ran (total_cycles 0: testpmd before forwarding) is STARTING and
 * never ages into a stall; once it runs, standing still ages it. */
static void
cycles_at_zero_never_stall(void **state)
{
	struct events_lcore l = {.id = 1};
	struct events_lcore_reading r;

	(void)state;
	events_lcore_cycles(&l, 0, 0, 0, &r);
	events_lcore_cycles(&l, 0, 0, 5000, &r);
	assert_int_equal(r.age_us, 0);
	assert_int_equal(r.state, DTEL_LCORE_STARTING);
	assert_int_equal(events_lcore_effective(&r, 100000), DTEL_LCORE_STARTING);
	events_lcore_cycles(&l, 10, 0, 5010, &r);
	events_lcore_cycles(&l, 10, 0, 5200, &r);
	assert_int_equal(r.age_us, 190000);
	assert_int_equal(events_lcore_effective(&r, 100000), DTEL_LCORE_STALLED);
}

/* A forwarder asked before it launched its lcores reported STARTING with the time since boot
 * as heartbeat age (13 hours, seen in a restart test): not a stall. */
static void
starting_lcore_is_not_aged(void **state)
{
	struct events_lcore l = {.id = 1};
	struct events_lcore_reading r = {
		.state = DTEL_LCORE_STARTING, .age_us = 49475006ull * 1000};
	struct events_lcore_tr tr;

	(void)state;
	assert_int_equal(events_lcore_effective(&r, 100000), DTEL_LCORE_STARTING);
	assert_int_equal(events_lcore_apply(&l, &r, true, 0, 100000, true, &tr), 0);
	assert_false(events_lcore_check(&l, &r, 100000));
	assert_int_equal(l.state, DTEL_LCORE_STARTING);
}

/* The whole cycle of a stall read from cycles: RUNNING, total_cycles stand still for the
 * threshold (STALLED, one transition, a stall counted, confirmed against where they stood),
 * they move again (recovered after the time they stood still). */
static void
cycles_stall_and_recovery(void **state)
{
	const uint64_t stall_us = 100000;
	struct events_lcore l = {.id = 2};
	struct events_lcore_reading r;
	struct events_lcore_tr tr;
	uint64_t t = 0, total = 1000;

	(void)state;
	for (; t <= 100; t += 20, total += 1000) {
		events_lcore_cycles(&l, total, total / 2, t, &r);
		assert_false(events_lcore_check(&l, &r, stall_us));
		assert_int_equal(events_lcore_apply(&l, &r, true, t, stall_us, true, &tr), 0);
	}
	assert_int_equal(l.state, DTEL_LCORE_RUNNING);
	total -= 1000; /* the last reading's: from here on they stand still */
	for (; t < 100 + 100; t += 20) {
		events_lcore_cycles(&l, total, total / 2, t, &r);
		assert_false(events_lcore_check(&l, &r, stall_us));
		events_lcore_apply(&l, &r, true, t, stall_us, true, &tr); /* RUNNING -> IDLE */
		assert_int_equal(l.state, DTEL_LCORE_IDLE);
	}
	events_lcore_cycles(&l, total, total / 2, t, &r); /* 100 ms standing still */
	assert_int_equal(r.age_us, stall_us);
	assert_true(events_lcore_check(&l, &r, stall_us));
	assert_int_equal(l.total, total); /* a second query must still find it here */
	assert_int_equal(events_lcore_apply(&l, &r, true, t, stall_us, true, &tr), 1);
	assert_int_equal(tr.kind, EVENTS_TR_LCORE);
	assert_int_equal(tr.old, DTEL_LCORE_IDLE);
	assert_int_equal(l.state, DTEL_LCORE_STALLED);
	assert_int_equal(l.stalls, 1);
	t += 20;
	events_lcore_cycles(&l, total, total / 2, t, &r);
	assert_int_equal(events_lcore_apply(&l, &r, true, t, stall_us, true, &tr), 0);
	t += 20;
	events_lcore_cycles(&l, total + 7, total / 2 + 7, t, &r);
	assert_true(events_lcore_check(&l, &r, stall_us));
	assert_int_equal(l.prev_total, total); /* recovery is checked against it */
	assert_int_equal(events_lcore_apply(&l, &r, true, t, stall_us, true, &tr), 1);
	assert_int_equal(tr.old, DTEL_LCORE_STALLED);
	assert_int_equal(tr.lasted_ms, 40);
	assert_int_equal(l.state, DTEL_LCORE_RUNNING);
	assert_int_equal(l.stalls, 1);
}

/* A stall that the second query contradicts is discarded, and counts no stall. */
static void
cycles_stall_discarded(void **state)
{
	struct events_lcore l = {.id = 1};
	struct events_lcore_reading r;
	struct events_lcore_tr tr;

	(void)state;
	events_lcore_cycles(&l, 100, 0, 0, &r);
	events_lcore_apply(&l, &r, true, 0, 100000, true, &tr);
	events_lcore_cycles(&l, 100, 0, 150, &r);
	assert_true(events_lcore_check(&l, &r, 100000));
	assert_int_equal(events_lcore_apply(&l, &r, false, 150, 100000, true, &tr), 1);
	assert_int_equal(tr.kind, EVENTS_TR_LCORE_DISCARDED);
	assert_int_equal(l.state, DTEL_LCORE_IDLE);
	assert_int_equal(l.stalls, 0);
}

/* Busy percent: 100 × Δbusy / Δtotal over windows of a second or more. */
static void
cycles_busy_percent(void **state)
{
	struct events_lcore l = {.id = 1};
	struct events_lcore_reading r;

	(void)state;
	events_lcore_cycles(&l, 1000, 100, 0, &r);
	assert_false(l.have_busy_pct);
	events_lcore_cycles(&l, 2000, 350, 500, &r);
	assert_false(l.have_busy_pct); /* half a window */
	events_lcore_cycles(&l, 5000, 1100, 1000, &r);
	assert_true(l.have_busy_pct);
	assert_true(l.busy_pct > 24.99 && l.busy_pct < 25.01); /* 1000 of 4000 */
	events_lcore_cycles(&l, 9000, 5100, 2000, &r);
	assert_true(l.busy_pct > 99.99 && l.busy_pct <= 100);
	/* Standing still over a window (a stalled lcore): no work, 0 %. */
	events_lcore_cycles(&l, 9000, 5100, 2500, &r);
	assert_true(l.busy_pct > 99.99); /* half a window */
	events_lcore_cycles(&l, 9000, 5100, 3500, &r);
	assert_true(l.busy_pct == 0);
	/* Counters that went back (a restart) start a new window. */
	events_lcore_cycles(&l, 10, 0, 3600, &r);
	assert_false(l.have_busy_pct);
	events_lcore_cycles(&l, 1010, 0, 4600, &r);
	assert_true(l.have_busy_pct);
	assert_true(l.busy_pct == 0);
}

/* The application -------------------------------------------------------------------------- */

static struct events_instance
answering(void)
{
	struct events_instance s = {0};
	struct events_instance_tr tr;

	assert_int_equal(
		events_instance_apply(&s, EVENTS_POLL_ANSWERED, false, true, 0, 1, 3, &tr), 0);
	assert_true(s.up);
	return s;
}

static void
two_refused_polls_are_gone_then_back(void **state)
{
	struct events_instance s = answering();
	struct events_instance_tr tr;

	(void)state;
	assert_int_equal(
		events_instance_apply(&s, EVENTS_POLL_REFUSED, false, true, 100, 101, 3, &tr), 0);
	assert_int_equal(
		events_instance_apply(&s, EVENTS_POLL_REFUSED, false, true, 120, 121, 3, &tr), 1);
	assert_int_equal(tr.kind, EVENTS_TR_GONE);
	assert_string_equal(tr.old, "up");
	assert_false(s.up);
	assert_int_equal(
		events_instance_apply(&s, EVENTS_POLL_REFUSED, false, true, 140, 141, 3, &tr), 0);
	assert_int_equal(
		events_instance_apply(&s, EVENTS_POLL_ANSWERED, false, true, 600, 601, 3, &tr), 1);
	assert_int_equal(tr.kind, EVENTS_TR_BACK);
	assert_int_equal(tr.lasted_ms, 500); /* from the first refused poll */
}

static void
not_sent_counts_for_nothing(void **state)
{
	struct events_instance s = answering();
	struct events_instance_tr tr;

	(void)state;
	assert_int_equal(
		events_instance_apply(&s, EVENTS_POLL_REFUSED, false, true, 100, 101, 3, &tr), 0);
	for (int i = 0; i < 5; i++)
		assert_int_equal(events_instance_apply(
					 &s, EVENTS_POLL_NOT_SENT, false, true, 110, 111, 3, &tr),
			0);
	assert_true(s.up);
	assert_int_equal(s.fails, 1);
}

static void
unanswered_polls_of_a_live_process_are_not_responding(void **state)
{
	struct events_instance s = answering();
	struct events_instance_tr tr;

	(void)state;
	for (int i = 0; i < 2; i++)
		assert_int_equal(events_instance_apply(&s, EVENTS_POLL_UNANSWERED, false, true,
					 100 + 200 * (uint64_t)i, 300 + 200 * (uint64_t)i, 3, &tr),
			0);
	assert_true(s.up); /* one or two slow answers are no news */
	assert_int_equal(
		events_instance_apply(&s, EVENTS_POLL_UNANSWERED, false, true, 500, 700, 3, &tr),
		1);
	assert_int_equal(tr.kind, EVENTS_TR_NOT_RESPONDING);
	assert_string_equal(tr.old, "up");
	assert_int_equal(tr.lasted_ms, 600); /* since the first unanswered poll began */
	assert_false(s.up);
	assert_string_equal(events_instance_word(&s), "not_responding");
	assert_int_equal(
		events_instance_apply(&s, EVENTS_POLL_ANSWERED, false, true, 900, 901, 3, &tr), 1);
	assert_int_equal(tr.kind, EVENTS_TR_ANSWERS_AGAIN);
	assert_int_equal(tr.lasted_ms, 800);
	assert_true(s.up);
}

static void
slow_answer_between_answers_is_no_news(void **state)
{
	struct events_instance s = answering();
	struct events_instance_tr tr;

	(void)state;
	for (int i = 0; i < 10; i++) {
		assert_int_equal(events_instance_apply(
					 &s, EVENTS_POLL_UNANSWERED, false, true, 0, 1, 3, &tr),
			0);
		assert_int_equal(events_instance_apply(
					 &s, EVENTS_POLL_UNANSWERED, false, true, 0, 1, 3, &tr),
			0);
		assert_int_equal(
			events_instance_apply(&s, EVENTS_POLL_ANSWERED, false, true, 0, 1, 3, &tr),
			0);
	}
}

static void
unanswered_after_its_process_exited_is_gone(void **state)
{
	struct events_instance s = answering();
	struct events_instance_tr tr;

	(void)state;
	assert_int_equal(
		events_instance_apply(&s, EVENTS_POLL_UNANSWERED, false, true, 0, 200, 3, &tr), 0);
	assert_int_equal(
		events_instance_apply(&s, EVENTS_POLL_UNANSWERED, false, true, 200, 400, 3, &tr),
		0);
	assert_int_equal(
		events_instance_apply(&s, EVENTS_POLL_UNANSWERED, false, true, 400, 600, 3, &tr),
		1);
	/* Hung, then its process died: gone, from not responding. */
	assert_int_equal(
		events_instance_apply(&s, EVENTS_POLL_UNANSWERED, true, true, 600, 800, 3, &tr), 0);
	assert_int_equal(
		events_instance_apply(&s, EVENTS_POLL_REFUSED, true, true, 800, 801, 3, &tr), 1);
	assert_int_equal(tr.kind, EVENTS_TR_GONE);
	assert_string_equal(tr.old, "not_responding");
}

static void
never_answered_is_never_announced(void **state)
{
	struct events_instance s = {0};
	struct events_instance_tr tr;

	(void)state;
	for (int i = 0; i < 5; i++) {
		assert_int_equal(
			events_instance_apply(&s, EVENTS_POLL_REFUSED, false, false, 0, 1, 3, &tr),
			0);
		assert_int_equal(events_instance_apply(
					 &s, EVENTS_POLL_UNANSWERED, false, false, 0, 1, 3, &tr),
			0);
	}
}

static void
main_lcore_stale_past_three_polls_and_the_stall_threshold(void **state)
{
	(void)state;
	assert_false(events_main_stale(30, 10, 20000)); /* 3 x 10 ms */
	assert_true(events_main_stale(31, 10, 20000));
	assert_false(events_main_stale(90, 10, 100000)); /* the stall threshold is longer */
	assert_true(events_main_stale(101, 10, 100000));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(starting_lcore_is_not_aged),
		cmocka_unit_test(first_reading_up_is_no_news),
		cmocka_unit_test(first_reading_down_is_checked_then_reported_once),
		cmocka_unit_test(link_goes_down_then_up),
		cmocka_unit_test(contradicted_change_is_discarded),
		cmocka_unit_test(speed_change_while_up_warns),
		cmocka_unit_test(changes_no_poll_saw_are_flapped),
		cmocka_unit_test(threshold_changes_in_window_flap_then_settle),
		cmocka_unit_test(flapping_settles_down),
		cmocka_unit_test(flap_threshold_1000),
		cmocka_unit_test(source_without_counter_then_with),
		cmocka_unit_test(counter_behind_after_source_change_never_goes_back),
		cmocka_unit_test(counter_first_seen_late_is_no_jump),
		cmocka_unit_test(unreadable_link_is_not_applied),
		cmocka_unit_test(no_heartbeat_for_threshold_is_stalled_then_recovers),
		cmocka_unit_test(loop_returned_is_exited),
		cmocka_unit_test(contradicted_stall_is_discarded_and_idle_is_no_news),
		cmocka_unit_test(first_reading_stalled_is_reported_from_starting),
		cmocka_unit_test(cycles_that_stand_still_age),
		cmocka_unit_test(cycles_at_zero_never_stall),
		cmocka_unit_test(cycles_stall_and_recovery),
		cmocka_unit_test(cycles_stall_discarded),
		cmocka_unit_test(cycles_busy_percent),
		cmocka_unit_test(two_refused_polls_are_gone_then_back),
		cmocka_unit_test(not_sent_counts_for_nothing),
		cmocka_unit_test(unanswered_polls_of_a_live_process_are_not_responding),
		cmocka_unit_test(slow_answer_between_answers_is_no_news),
		cmocka_unit_test(unanswered_after_its_process_exited_is_gone),
		cmocka_unit_test(never_answered_is_never_announced),
		cmocka_unit_test(main_lcore_stale_past_three_polls_and_the_stall_threshold),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
