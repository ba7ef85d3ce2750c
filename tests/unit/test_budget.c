/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The budgets of a shared session (telemetry/budget.c): polls and reads each within their
 * own budget, max-min within a priority, MaxAppLoad's cap (polls first, and 0 for no budget
 * at all from any class, in any order), and the load counted by priority.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "dtel_private.h"
#include "fake_server.h"
#include "shared_util.h"
#include "test_util.h"

#define PCT 0.01 /* 1 % of one core */

static bool
near(double a, double b)
{
	return a > b * 0.999 - 1e-12 && a < b * 1.001 + 1e-12;
}

#define assert_near(a, b)                                              \
	do {                                                           \
		double a_ = (a), b_ = (b);                             \
		if (!near(a_, b_))                                     \
			fail_msg("%s is %g, expected %g", #a, a_, b_); \
	} while (0)

static struct dtel_shared *
session(const char *name)
{
	char path[64];
	struct dtel_shared *sh;

	snprintf(path, sizeof(path), "/tmp/dtel-budget-%s/dpdk_telemetry.v2", name);
	assert_int_equal(dtel_shared_get(path, &sh), 0);
	return sh;
}

static struct dtel_shared_class *
class_of(struct dtel_shared *sh, enum dtel_prio prio, double budget, double cap)
{
	struct dtel_shared_class *c;

	assert_int_equal(dtel_shared_class_new(sh, prio, &c), 0);
	dtel_shared_class_budget(c, budget, cap);
	return c;
}

/*
 * The link poll keeps its budget however much the reads want: 32 links at 2 ms every 20 ms
 * (320 % of a core) and 32 xstats at 15 ms every 10 s (4.8 %) each get 1 %. Before, the two
 * shared one budget and the links got half of it.
 */
static void
polls_keep_their_budget(void **state)
{
	struct dtel_shared *sh = session("keep");
	struct dtel_shared_class *links = class_of(sh, DTEL_PRIO_POLL, PCT, -1);
	struct dtel_shared_class *reads = class_of(sh, DTEL_PRIO_READ, PCT, -1);
	struct dtel_shared_load load;

	(void)state;
	assert_near(dtel_shared_class_grant(reads, 0.048), PCT);
	assert_near(dtel_shared_class_grant(links, 3.2), PCT);
	assert_near(dtel_shared_class_grant(reads, 0.048), PCT);
	/* What fits is granted as wanted. */
	assert_near(dtel_shared_class_grant(reads, 0.004), 0.004);
	dtel_shared_load(sh, &load);
	assert_near(load.budget, 2 * PCT);
	assert_near(load.budget_prio[DTEL_PRIO_POLL], PCT);
	assert_near(load.budget_prio[DTEL_PRIO_READ], PCT);
	assert_near(load.planned, PCT + 0.004);
	dtel_shared_class_free(links);
	dtel_shared_class_free(reads);
	dtel_shared_put(sh);
}

/* Within the polls, max-min: the lcore and liveness polls get what they want, the links the
 * rest of the poll budget. */
static void
max_min_within_a_priority(void **state)
{
	struct dtel_shared *sh = session("maxmin");
	struct dtel_shared_class *links = class_of(sh, DTEL_PRIO_POLL, PCT, -1);
	struct dtel_shared_class *lcores = class_of(sh, DTEL_PRIO_POLL, PCT, -1);
	struct dtel_shared_class *alive = class_of(sh, DTEL_PRIO_POLL, PCT, -1);

	(void)state;
	assert_near(dtel_shared_class_grant(lcores, 0.0006), 0.0006);
	assert_near(dtel_shared_class_grant(alive, 0.0003), 0.0003);
	assert_near(dtel_shared_class_grant(links, 0.032), PCT - 0.0009);
	/* Two that both want much share equally. */
	assert_near(dtel_shared_class_grant(lcores, 1), (PCT - 0.0003) / 2);
	dtel_shared_class_free(links);
	dtel_shared_class_free(lcores);
	dtel_shared_class_free(alive);
	dtel_shared_put(sh);
}

/* MaxAppLoad caps both together: the polls first, the reads what the polls leave. */
static void
cap_serves_polls_first(void **state)
{
	struct dtel_shared *sh = session("cap");
	struct dtel_shared_class *links = class_of(sh, DTEL_PRIO_POLL, PCT, -1);
	struct dtel_shared_class *reads = class_of(sh, DTEL_PRIO_READ, PCT, PCT);
	struct dtel_shared_load load;

	(void)state;
	assert_near(dtel_shared_class_grant(links, 0.006), 0.006);
	assert_near(dtel_shared_class_grant(reads, 0.048), 0.004);
	assert_near(dtel_shared_class_grant(links, 3.2), PCT); /* the whole cap */
	assert_true(dtel_shared_class_grant(reads, 0.048) < 1e-6 * PCT + 1e-12);
	dtel_shared_load(sh, &load);
	assert_near(load.budget, PCT);
	dtel_shared_class_free(links);
	dtel_shared_class_free(reads);
	dtel_shared_put(sh);
}

/* MaxAppLoad 0 in one plugin is no budget for both, whichever plugin's classes came first;
 * and what is dispatched as the budget (0: none) does not depend on that order either.
 * Before, the plugin with 0 left its classes out of the budget, and the other's stretched. */
static void
cap_zero_holds_for_both_in_any_order(void **state)
{
	(void)state;
	for (int order = 0; order < 2; order++) {
		struct dtel_shared *sh = session(order ? "zero1" : "zero0");
		struct dtel_shared_class *a, *b;
		struct dtel_shared_load load;

		if (order == 0) {
			a = class_of(sh, DTEL_PRIO_POLL, PCT, 0);
			b = class_of(sh, DTEL_PRIO_READ, PCT, -1);
		} else {
			b = class_of(sh, DTEL_PRIO_READ, PCT, -1);
			a = class_of(sh, DTEL_PRIO_POLL, PCT, 0);
		}
		assert_near(dtel_shared_class_grant(a, 3.2), 3.2);
		assert_near(dtel_shared_class_grant(b, 0.048), 0.048);
		dtel_shared_load(sh, &load);
		assert_true(load.budget == 0);
		assert_true(load.budget_prio[DTEL_PRIO_POLL] == 0);
		assert_true(load.budget_prio[DTEL_PRIO_READ] == 0);
		dtel_shared_class_free(a);
		dtel_shared_class_free(b);
		dtel_shared_put(sh);
	}
}

/* The smallest budget of a priority holds (two stats instances on one socket), 0 from any
 * of its classes is none for it; a class that goes takes its budget with it. */
static void
smallest_budget_of_a_priority(void **state)
{
	struct dtel_shared *sh = session("small");
	struct dtel_shared_class *r1 = class_of(sh, DTEL_PRIO_READ, PCT, -1);
	struct dtel_shared_class *r2 = class_of(sh, DTEL_PRIO_READ, PCT / 2, -1);

	(void)state;
	assert_near(dtel_shared_class_grant(r1, 1), PCT / 2);
	dtel_shared_class_free(r2);
	assert_near(dtel_shared_class_grant(r1, 1), PCT);
	r2 = class_of(sh, DTEL_PRIO_READ, 0, -1);
	assert_near(dtel_shared_class_grant(r1, 1), 1);
	dtel_shared_class_free(r1);
	dtel_shared_class_free(r2);
	dtel_shared_put(sh);
}

/* A class of rounds runs as it wants for its first three, then within its grant. */
static void
rounds_warm_up_then_stretch(void **state)
{
	struct dtel_shared *sh = session("rounds");
	struct dtel_shared_class *reads = class_of(sh, DTEL_PRIO_READ, PCT, -1);
	uint64_t ms = 1000000, i = 0;

	(void)state;
	assert_int_equal(dtel_shared_class_plan(reads, 0, 10000 * ms), 10000 * ms);
	for (int k = 1; k < 3; k++)
		assert_int_equal(dtel_shared_class_plan(reads, 480 * ms, 10000 * ms), 10000 * ms);
	for (int k = 0; k < 30; k++) /* the smoothed cost settles */
		i = dtel_shared_class_plan(reads, 480 * ms, 10000 * ms);
	assert_true(i > 47900 * ms && i < 48100 * ms); /* 480 ms at 1 %: 48 s */
	dtel_shared_class_free(reads);
	dtel_shared_put(sh);
}

/* The load is counted by the priority of the requests that made it. */
static void
load_by_priority(void **state)
{
	struct fake_config cfg = {.handler = h_tagged};
	struct fake_server *fs = fs_start_path(&cfg);
	struct dtel_request poll = {.prio = DTEL_PRIO_POLL, .timeout_ms = 2000};
	struct dtel_request read = {.prio = DTEL_PRIO_READ, .timeout_ms = 2000};
	struct dtel_shared_load load;
	struct dtel_shared *sh;
	struct dtel_reply r;
	uint64_t second;

	(void)state;
	tagged_reset();
	tagged_spin = true;
	assert_int_equal(dtel_shared_get(fs_path(fs), &sh), 0);
	assert_int_equal(dtel_shared_request(sh, &poll, "/t,60,p", &r), 0);
	dtel_reply_release(&r);
	assert_int_equal(dtel_shared_request(sh, &read, "/t,20,r", &r), 0);
	dtel_reply_release(&r);
	second = test_now_ms() / 1000;
	while (test_now_ms() / 1000 == second)
		usleep(5000);
	dtel_shared_load(sh, &load);
	assert_true(load.measured_prio[DTEL_PRIO_POLL] >= 0.06 / 10);
	assert_true(load.measured_prio[DTEL_PRIO_READ] >= 0.02 / 10);
	assert_true(load.measured_prio[DTEL_PRIO_READ] < load.measured_prio[DTEL_PRIO_POLL]);
	assert_near(load.measured,
		load.measured_prio[DTEL_PRIO_POLL] + load.measured_prio[DTEL_PRIO_READ]);
	tagged_spin = false;
	dtel_shared_put(sh);
	fs_stop(fs);
}

static void
bad_arguments(void **state)
{
	struct dtel_shared *sh = session("bad");
	struct dtel_shared_class *c;

	(void)state;
	assert_int_equal(dtel_shared_class_new(NULL, DTEL_PRIO_POLL, &c), -EINVAL);
	assert_int_equal(dtel_shared_class_new(sh, (enum dtel_prio)7, &c), -EINVAL);
	assert_int_equal(dtel_shared_class_new(sh, DTEL_PRIO_READ, NULL), -EINVAL);
	dtel_shared_class_free(NULL);
	dtel_shared_put(sh);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(polls_keep_their_budget),
		cmocka_unit_test(max_min_within_a_priority),
		cmocka_unit_test(cap_serves_polls_first),
		cmocka_unit_test(cap_zero_holds_for_both_in_any_order),
		cmocka_unit_test(smallest_budget_of_a_priority),
		cmocka_unit_test(rounds_warm_up_then_stretch),
		cmocka_unit_test(load_by_priority),
		cmocka_unit_test(bad_arguments),
	};

	if (getenv("DTEL_TEST_FILTER"))
		cmocka_set_test_filter(getenv("DTEL_TEST_FILTER"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
