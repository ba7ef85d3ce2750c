/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The arithmetic of the budgets, pure (no I/O, no clock, no lock): what a class of periodic
 * work may use of its priority's budget (max-min shares), how often each port's link is
 * polled within what the link poll was granted, and how the stats reads split into basic
 * counters at every read and extended counters every k-th read. Loads are fractions of one
 * core of the application's telemetry thread; costs and periods in nanoseconds.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dtel.h"

void
dtel_plan_share(const double *demand, size_t n, double budget, double *ret_alloc)
{
	double left = budget;
	size_t open = n;
	bool more = true;

	if (budget <= 0) {
		for (size_t i = 0; i < n; i++)
			ret_alloc[i] = demand[i];
		return;
	}
	for (size_t i = 0; i < n; i++)
		ret_alloc[i] = -1; /* not settled */
	/* Whoever wants less than an equal share of what is left gets it, until nobody does. */
	while (more && open > 0) {
		double each = left / (double)open;

		more = false;
		for (size_t i = 0; i < n; i++) {
			if (ret_alloc[i] >= 0 || demand[i] > each)
				continue;
			ret_alloc[i] = demand[i];
			left -= demand[i];
			open--;
			more = true;
		}
	}
	for (size_t i = 0; i < n; i++)
		if (ret_alloc[i] < 0)
			ret_alloc[i] = left / (double)open;
}

/* The shortest period a port may have: PollInterval, or the slower cadence of a down port or
 * of one whose changes the kernel netdev tells. */
static uint64_t
floor_of(const struct dtel_plan_port *p, const struct dtel_plan_links *o)
{
	uint64_t f = o->want_ns;

	if (p->down && o->down_ns > f)
		f = o->down_ns;
	if (p->quiet && o->quiet_ns > f)
		f = o->quiet_ns;
	return f;
}

double
dtel_plan_links_demand(
	const struct dtel_plan_port *ports, size_t n, const struct dtel_plan_links *o)
{
	double d = o->want_ns > 0 ? (double)o->fixed_ns / (double)o->want_ns : 0;

	d += o->unplanned > 0 ? o->unplanned : 0;
	for (size_t i = 0; i < n; i++)
		d += (double)ports[i].cost_ns / (double)floor_of(&ports[i], o);
	return d;
}

/*
 * Where polls carry a group's fixed cost (@per > 0, o->group > 1), the one period that the
 * stretched ports' shares buy them all (0: none): asked together, they share a poll only if they
 * share a period, and the longest period, which bounds detection, is then the shortest it can be.
 */
static double
common_period(const struct dtel_plan_port *ports, size_t n, const struct dtel_plan_links *o,
	double per, const double *want, const double *got)
{
	double cost = 0, share = 0;

	if (per <= 0 || o->group <= 1)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (got[i] >= want[i] || ports[i].cost_ns == 0)
			continue;
		cost += (double)ports[i].cost_ns + per;
		share += got[i];
	}
	return share > 0 ? cost / share : 0;
}

/*
 * Periods within @left, each port's request costing @per more (its part of the fixed
 * requests): into ports[].period_ns; returns the polls a second they make (@group ports each,
 * where stretched).
 */
static double
plan_pass(struct dtel_plan_port *ports, size_t n, const struct dtel_plan_links *o, double left,
	double per, double *want, double *got)
{
	double polls = 0, common;

	for (size_t i = 0; i < n; i++) {
		ports[i].period_ns = floor_of(&ports[i], o);
		want[i] = ports[i].cost_ns != 0
			? ((double)ports[i].cost_ns + per) / (double)ports[i].period_ns
			: 0;
	}
	dtel_plan_share(want, n, left, got);
	common = common_period(ports, n, o, per, want, got);
	for (size_t i = 0; i < n; i++) {
		double period = (double)ports[i].period_ns;

		if (got[i] < want[i] && ports[i].cost_ns != 0)
			period = common > 0 ? common : ((double)ports[i].cost_ns + per) / got[i];
		ports[i].period_ns =
			period > (double)UINT64_MAX / 2 ? UINT64_MAX / 2 : (uint64_t)period;
		polls += 1e9 / period / (o->group > 1 ? (double)o->group : 1);
	}
	return polls;
}

int
dtel_plan_links(
	struct dtel_plan_port *ports, size_t n, const struct dtel_plan_links *o, double grant)
{
	double *want = NULL, *got = NULL, left, off;
	int ret = 0;

	if (o->want_ns == 0)
		return -EINVAL;
	off = o->unplanned > 0 ? o->unplanned : 0;
	off = off < grant / 2 ? off : grant / 2;
	for (size_t i = 0; i < n; i++)
		ports[i].period_ns = floor_of(&ports[i], o);
	if (grant <= 0 || n == 0 || dtel_plan_links_demand(ports, n, o) <= grant)
		return 0;
	want = malloc(n * sizeof(*want));
	got = malloc(n * sizeof(*got));
	if (want == NULL || got == NULL) {
		ret = -ENOMEM;
		goto out;
	}
	/* The requests every link poll adds (the list): polls that come every PollInterval
	 * carry them once a PollInterval, off the top; where the periods stretch so far that
	 * polls come less often, each stretched port carries its group's part of them. */
	left = grant - off - (double)o->fixed_ns / (double)o->want_ns;
	if (left > 0 && plan_pass(ports, n, o, left, 0, want, got) >= 1e9 / (double)o->want_ns)
		goto out;
	left = grant - off;
	plan_pass(ports, n, o, left > 0 ? left : grant / 1e6,
		(double)o->fixed_ns / (o->group > 1 ? (double)o->group : 1), want, got);
out:
	free(want);
	free(got);
	return ret;
}

double
dtel_plan_reads_demand(const struct dtel_plan_reads *o)
{
	return o->want_ns > 0 ? (double)(o->basic_ns + o->extra_ns) / (double)o->want_ns : 0;
}

/* Extended counters every ceil(@period / @interval) reads (libc only: no libm). */
static unsigned int
every(double period, double interval)
{
	double q = period / interval - 1e-9;
	unsigned int k;

	if (q > 1e6)
		return 1000000u;
	k = q > 0 ? (unsigned int)q : 0;
	return (double)k < q ? k + 1 : k < 1 ? 1 : k;
}

static double
larger(double a, double b)
{
	return a > b ? a : b;
}

void
dtel_plan_reads(const struct dtel_plan_reads *o, double grant, struct dtel_read_plan *ret)
{
	double want = (double)o->want_ns, basic = (double)o->basic_ns, extra = (double)o->extra_ns;
	double bound = (double)o->xstats_bound_ns, room, interval;
	double basic_bound = larger((double)o->basic_bound_ns, want);

	*ret = (struct dtel_read_plan){.interval_ns = o->want_ns, .xstats_every = 1};
	if (grant <= 0 || want <= 0 || dtel_plan_reads_demand(o) <= grant)
		return;
	if (extra <= 0) { /* one kind of read: it stretches */
		ret->interval_ns = (uint64_t)(basic / grant);
		return;
	}
	/* Basic counters at every read, the extended ones as often as what is left allows. */
	room = grant - basic / want;
	if (room > 0 && extra / room <= bound) {
		ret->xstats_every = every(extra / room, want);
		return;
	}
	/* The extended counters at their bound, the basic ones as often as the rest allows. */
	room = grant - extra / bound;
	if (room > 0 && basic / room <= basic_bound) {
		interval = larger(want, basic / room);
		ret->interval_ns = (uint64_t)interval;
		ret->xstats_every = every(extra / (grant - basic / interval), interval);
		return;
	}
	/* No plan keeps both bounds: half the grant each. */
	interval = larger(want, basic / (grant / 2));
	ret->interval_ns = (uint64_t)interval;
	ret->xstats_every = every(larger(interval, extra / (grant / 2)), interval);
}
