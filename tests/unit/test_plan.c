/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The budget arithmetic (telemetry/plan.c), pure: max-min shares, each port's link period
 * within a grant, and the stats read tiers. The driver costs are those of
 * /work/shared/research/driver-costs.md's profiles (docs/performance.md).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "dtel.h"

#define US 1000ull
#define MS 1000000ull
#define S 1000000000ull
#define PCT 0.01

#define assert_between(v, lo, hi)                                                     \
	do {                                                                          \
		double v_ = (double)(v);                                              \
		if (v_ < (double)(lo) || v_ > (double)(hi))                           \
			fail_msg("%s is %g, expected %g to %g", #v, v_, (double)(lo), \
				(double)(hi));                                        \
	} while (0)

static void
share_is_max_min(void **state)
{
	const double want[] = {0.001, 0.5, 0.002, 0.3};
	double got[4];

	(void)state;
	dtel_plan_share(want, 4, 0.01, got);
	assert_between(got[0], 0.000999, 0.001001);
	assert_between(got[2], 0.001999, 0.002001);
	assert_between(got[1], 0.003499, 0.003501);
	assert_between(got[3], 0.003499, 0.003501);
	dtel_plan_share(want, 4, 0, got); /* no budget */
	assert_between(got[1], 0.4999, 0.5001);
	dtel_plan_share(want, 0, 0.01, got); /* nothing to share */
}

static const struct dtel_plan_links opts = {
	.want_ns = 20 * MS, .down_ns = 3 * S, .quiet_ns = 3 * S, .fixed_ns = 12 * US};

static void
ports_of(struct dtel_plan_port *p, size_t n, uint64_t cost)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (struct dtel_plan_port){.cost_ns = cost};
}

/* 32 ports whose link answers from a cache (12 us): all of them every 20 ms fits 1 % only
 * just not; each at about 41 ms (the list, 12 us every 20 ms, comes off the top). */
static void
cheap_links_near_poll_interval(void **state)
{
	struct dtel_plan_port p[32];

	(void)state;
	ports_of(p, 32, 12 * US);
	assert_between(dtel_plan_links_demand(p, 32, &opts), 0.0197, 0.0199);
	assert_int_equal(dtel_plan_links(p, 32, &opts, PCT), 0);
	for (int i = 0; i < 32; i++)
		assert_between(p[i].period_ns, 40.5 * MS, 41.5 * MS);
	assert_int_equal(dtel_plan_links(p, 32, &opts, 0.05), 0); /* it fits */
	assert_int_equal(p[0].period_ns, 20 * MS);
}

/* 32 ports at 2 ms a request (mlx5 without link-state interrupts): 64 ms a sweep within 1 %
 * is every 6.4 s, the documented formula (sum of costs / budget). */
static void
dear_links_at_the_formula(void **state)
{
	struct dtel_plan_port p[32];

	(void)state;
	ports_of(p, 32, 2 * MS);
	assert_int_equal(dtel_plan_links(p, 32, &opts, PCT), 0);
	for (int i = 0; i < 32; i++)
		assert_between(p[i].period_ns, 6.40 * S, 6.45 * S);
	ports_of(p, 32, 500 * US); /* bnxt: 0.5 ms */
	assert_int_equal(dtel_plan_links(p, 32, &opts, PCT), 0);
	assert_between(p[0].period_ns, 1.60 * S, 1.65 * S);
}

/* Where a poll's fixed part is dear (a VM: the list's wake-up, 300 us, beside 100 us a port),
 * polls that come seldom carry it once per group of ports: 32 ports within 0.75 % are polled
 * every (100 + 300 / group) us x 32 / 0.75 %, and that is what they then cost. */
static void
wake_ups_shared_by_a_group(void **state)
{
	struct dtel_plan_links o = {.want_ns = 20 * MS, .down_ns = 3 * S, .fixed_ns = 300 * US};
	struct dtel_plan_port p[32];
	double cost;

	(void)state;
	ports_of(p, 32, 100 * US);
	assert_int_equal(dtel_plan_links(p, 32, &o, 0.0075), 0);
	assert_between(p[0].period_ns, 1.70 * S, 1.72 * S); /* one port a poll */
	o.group = 8;
	assert_int_equal(dtel_plan_links(p, 32, &o, 0.0075), 0);
	for (int i = 0; i < 32; i++)
		assert_between(p[i].period_ns, 0.58 * S, 0.59 * S);
	/* Within the grant: the ports' requests, and the list once every 8 of them. */
	cost = 32 * (100e-6 + 300e-6 / 8) / ((double)p[0].period_ns / 1e9);
	assert_between(cost * 1e4, 74.9, 75.1);
}

/* Ports asked in groups share one period, whatever their costs: ports whose periods differ
 * drift apart and each poll would ask a few, each paying the fixed cost the plan counted
 * once a group. The periods buy no more than the grant, and the longest is the shortest the
 * grant allows (16 x 50 us + 16 x 150 us, the list once every 8 ports, at 0.75 %). */
static void
grouped_ports_share_one_period(void **state)
{
	struct dtel_plan_links o = {
		.want_ns = 20 * MS, .down_ns = 3 * S, .fixed_ns = 300 * US, .group = 8};
	struct dtel_plan_port p[32];
	double cost = 0;

	(void)state;
	ports_of(p, 16, 50 * US);
	ports_of(p + 16, 16, 150 * US);
	assert_int_equal(dtel_plan_links(p, 32, &o, 0.0075), 0);
	for (int i = 1; i < 32; i++)
		assert_int_equal(p[i].period_ns, p[0].period_ns);
	for (int i = 0; i < 32; i++)
		cost += ((double)p[i].cost_ns + 300e3 / 8) / (double)p[i].period_ns;
	assert_between(cost * 1e4, 74.9, 75.1);
	assert_between(p[0].period_ns, 0.58 * S, 0.59 * S);
	/* One port a poll (no group): the dear ports wait longer than the cheap. */
	o.group = 0;
	assert_int_equal(dtel_plan_links(p, 32, &o, 0.0075), 0);
	assert_true(p[31].period_ns > p[0].period_ns);
}

/* Cheap ports keep PollInterval beside dear ones, which share the rest. */
static void
cheap_ports_unslowed_by_dear_ones(void **state)
{
	struct dtel_plan_port p[4];

	(void)state;
	ports_of(p, 4, 12 * US);
	p[2].cost_ns = p[3].cost_ns = 2 * MS;
	assert_int_equal(dtel_plan_links(p, 4, &opts, PCT), 0);
	assert_int_equal(p[0].period_ns, 20 * MS);
	assert_int_equal(p[1].period_ns, 20 * MS);
	/* (1 % - the list's 0.06 % - the cheap ports' 2 x 0.06 %) / 2 each: 2 ms / 0.41 % */
	assert_between(p[2].period_ns, 0.48 * S, 0.49 * S);
	assert_int_equal(p[2].period_ns, p[3].period_ns);
}

/* A down port every DownPollInterval, at most; a quiet one (its netdev tells) as rarely; a
 * port of unknown cost at PollInterval until it is known. */
static void
down_and_quiet_ports_slower(void **state)
{
	struct dtel_plan_port p[3] = {{.cost_ns = 12 * US, .down = true},
		{.cost_ns = 2 * MS, .quiet = true}, {.cost_ns = 0}};

	(void)state;
	assert_int_equal(dtel_plan_links(p, 3, &opts, PCT), 0);
	assert_int_equal(p[0].period_ns, 3 * S);
	assert_int_equal(p[1].period_ns, 3 * S);
	assert_int_equal(p[2].period_ns, 20 * MS);
	p[0].cost_ns = 100 * MS; /* a down port too dear even for that: later still */
	assert_int_equal(dtel_plan_links(p, 3, &opts, PCT), 0);
	assert_true(p[0].period_ns > 3 * S);
	assert_int_equal(dtel_plan_links(p, 3, &(struct dtel_plan_links){0}, PCT), -EINVAL);
}

/* What a followed netdev's carrier events cost in checks comes off the grant first: with
 * 0.4 % of a core in checks, 32 ports at 2 ms share 0.6 % (10.7 s, not 6.4 s); checks that
 * would take it all leave the planned ports half the grant. */
static void
netdev_checks_come_off_the_grant(void **state)
{
	struct dtel_plan_port p[32];
	struct dtel_plan_links o = opts;

	(void)state;
	ports_of(p, 32, 2 * MS);
	o.unplanned = 0.004;
	assert_between(dtel_plan_links_demand(p, 32, &o),
		dtel_plan_links_demand(p, 32, &opts) + 0.0039,
		dtel_plan_links_demand(p, 32, &opts) + 0.0041);
	assert_int_equal(dtel_plan_links(p, 32, &o, PCT), 0);
	assert_between(p[0].period_ns, 10.6 * S, 10.8 * S);
	o.unplanned = 0.05;
	assert_int_equal(dtel_plan_links(p, 32, &o, PCT), 0);
	assert_between(p[0].period_ns, 12.8 * S, 12.95 * S);
	ports_of(p, 2, 12 * US); /* cheap ports that fit beside the checks keep PollInterval */
	o.unplanned = 0.004;
	assert_int_equal(dtel_plan_links(p, 2, &o, PCT), 0);
	assert_int_equal(p[0].period_ns, 20 * MS);
}

static struct dtel_read_plan
plan(uint64_t rest, unsigned int ports, uint64_t stats, uint64_t xstats, uint64_t want)
{
	struct dtel_plan_reads o = {.want_ns = want,
		.basic_ns = rest + ports * stats,
		.extra_ns = xstats > stats ? ports * (xstats - stats) : 0,
		.basic_bound_ns = 30 * S,
		.xstats_bound_ns = 120 * S};
	struct dtel_read_plan p;

	dtel_plan_reads(&o, PCT, &p);
	return p;
}

/* Virtual devices: everything at every read. */
static void
reads_that_fit(void **state)
{
	struct dtel_read_plan p = plan(200 * US, 32, 12 * US, 14 * US, 1 * S);

	(void)state;
	assert_int_equal(p.interval_ns, 1 * S);
	assert_int_equal(p.xstats_every, 1);
}

/* mlx5 (stats 0.3 ms, xstats 15 ms), 32 ports, collectd's 10 s: the basic counters at every
 * read, each port's xstats every sixth (52 s, within 120 s). */
static void
mlx5_reads_in_tiers(void **state)
{
	struct dtel_read_plan p = plan(1 * MS, 32, 300 * US, 15 * MS, 10 * S);

	(void)state;
	assert_int_equal(p.interval_ns, 10 * S);
	assert_int_equal(p.xstats_every, 6);
	/* 64 ports at collectd's 1 s: the basic counters alone would take 1.9 %: the xstats at
	 * their bound, the reads as often as the rest allows (within 30 s). */
	p = plan(1 * MS, 64, 300 * US, 15 * MS, 1 * S);
	assert_between(p.interval_ns, 8 * S, 9.5 * S);
	assert_between((double)p.interval_ns * p.xstats_every, 110 * S, 130 * S);
}

/* idpf (stats 30 ms, xstats 60 ms, spinning), 32 ports: no plan keeps the bounds; half the
 * budget each, 192 s. */
static void
idpf_reads_cannot_keep_the_bounds(void **state)
{
	struct dtel_read_plan p = plan(1 * MS, 32, 30 * MS, 60 * MS, 10 * S);

	(void)state;
	assert_between(p.interval_ns, 192 * S, 193 * S);
	assert_int_equal(p.xstats_every, 1);
}

/* One kind of read (no tiers): it stretches. */
static void
one_kind_stretches(void **state)
{
	struct dtel_plan_reads o = {.want_ns = 10 * S, .basic_ns = 480 * MS};
	struct dtel_read_plan p;

	(void)state;
	dtel_plan_reads(&o, PCT, &p);
	assert_int_equal(p.interval_ns, 48 * S);
	assert_int_equal(p.xstats_every, 1);
	dtel_plan_reads(&o, 0, &p); /* no budget */
	assert_int_equal(p.interval_ns, 10 * S);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(share_is_max_min),
		cmocka_unit_test(cheap_links_near_poll_interval),
		cmocka_unit_test(dear_links_at_the_formula),
		cmocka_unit_test(cheap_ports_unslowed_by_dear_ones),
		cmocka_unit_test(wake_ups_shared_by_a_group),
		cmocka_unit_test(grouped_ports_share_one_period),
		cmocka_unit_test(down_and_quiet_ports_slower),
		cmocka_unit_test(netdev_checks_come_off_the_grant),
		cmocka_unit_test(reads_that_fit),
		cmocka_unit_test(mlx5_reads_in_tiers),
		cmocka_unit_test(idpf_reads_cannot_keep_the_bounds),
		cmocka_unit_test(one_kind_stretches),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
