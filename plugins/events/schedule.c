/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdktel_events' link schedule, for applications whose links are read port by port
 * (/ethdev/link_status): when each port's link is due. What a port's link request costs the
 * application is learnt from its own replies (the least of its last LINK_SAMPLES service
 * times, scaled by what the polls' turns really cost against those times: wake-ups, CPU),
 * and the link poll's share of PollLoad (libdpdktel) is spread over the ports by
 * dtel_plan_links(): a port whose answer is cheap (the application enabled link-state
 * interrupts, or its driver caches the link) is polled every PollInterval, a dear one as
 * often as its cost allows, never faster; a port whose link is down every DownPollInterval
 * at most (a down ixgbe fiber port starts a link-setup thread at each request). Ports whose
 * periods stretch are spread over their period rather than asked together, so that a poll
 * never holds the application's telemetry thread, and our queue, for a whole sweep.
 *
 * When a port that is up cannot be polled within DETECT_TARGET_NS, one WARNING per
 * application process says what its link costs and what fixes it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "instance.h"

/* Link-down seen within a second: the detection this plugin is for. */
#define DETECT_TARGET_NS 1000000000ull
/* A link answer this cheap comes from a cached value (link-state interrupts, or a driver
 * that caches it): 150 us (docs/dpdktel_events.md). */
#define CACHED_NS 150000u
/* Samples before a port's cost counts for the WARNING. */
#define WARN_SAMPLES 4
/* Samples before a port's own least is trusted over what its command costs on the
 * application's other ports (schedule.c plan_cost()). */
#define TRUST_SAMPLES 3
/* The checks' cost is a rate over about this long (ms): a link that flaps is planned for
 * within seconds, and forgotten as fast once it stops. */
#define UNPLANNED_TAU_MS 10000.0
/* What the link requests of one poll may hold the application's telemetry thread for. */
#define HOLD_NS 5000000u

struct link_sched *
ev_sched_slot(struct ev_instance *ei, unsigned int id)
{
	return DTP_SLOT(ei->sched, ei->nsched, id, NULL);
}

static struct link_sched *
find(const struct ev_instance *ei, unsigned int port)
{
	for (size_t i = 0; i < ei->nsched; i++)
		if (ei->sched[i].id == port)
			return &ei->sched[i];
	return NULL;
}

bool
ev_sched_due(const struct ev_instance *ei, unsigned int port, uint64_t t)
{
	const struct link_sched *s = find(ei, port);
	uint64_t early = (uint64_t)(ei->o->poll_interval * 500);

	return s == NULL || t + early >= s->next_ms;
}

void
ev_sched_polled(struct ev_instance *ei, unsigned int port, uint64_t t, uint64_t sample_ns)
{
	struct link_sched *s = ev_sched_slot(ei, port);

	if (s == NULL)
		return;
	s->polled_ms = t;
	s->next_ms = t +
		(s->period_ns > 0 ? s->period_ns : (uint64_t)(ei->o->poll_interval * 1e9)) /
			1000000u;
	if (sample_ns == 0)
		return;
	s->samples[s->next] = sample_ns > UINT32_MAX ? UINT32_MAX : (uint32_t)sample_ns;
	s->next = (s->next + 1) % LINK_SAMPLES;
	if (s->n < LINK_SAMPLES)
		s->n++;
}

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * A link poll's turn cost @turn_ns, its ports' requests @ports_ns by their estimates (each
 * port's least service time): the rest is what every poll costs whatever it asks, the list
 * and, where it costs more than the answers (a VM: 250 us of CPU for an 80 us reply), waking
 * the application's thread. The plan counts it once a poll (dtel_plan_links() fixed_ns),
 * which a group of ports shares.
 */
void
ev_sched_overhead(struct ev_instance *ei, uint64_t turn_ns, uint64_t ports_ns)
{
	uint32_t sorted[LINK_SAMPLES];
	unsigned int mid;
	uint64_t f;

	if (turn_ns == 0)
		return;
	f = turn_ns > ports_ns ? turn_ns - ports_ns : 0;
	ei->fixed_samples[ei->fixed_next] = f > UINT32_MAX ? UINT32_MAX : (uint32_t)f;
	ei->fixed_next = (ei->fixed_next + 1) % LINK_SAMPLES;
	if (ei->nfixed < LINK_SAMPLES)
		ei->nfixed++;
	/* The lower quartile: a turn that met other work of the thread (the CPU time /proc
	 * shows is the thread's, whatever it served) must not move the plan, nor a lucky one.
	 * Not the median: on a VM, about every 511 ms the first turn to come is charged 2.5 to
	 * 5.7 ms that is no work of the application's (docs/performance.md, "The polls' budget
	 * as measured"); link polls that came about that often met it at nearly every turn,
	 * and the median of 2.8 ms against 0.08 ms stretched the 32 ports' period from 8.8 s
	 * to 14.5 s until the polls' cadence drifted off the VM's. */
	memcpy(sorted, ei->fixed_samples, sizeof(sorted));
	qsort(sorted, ei->nfixed, sizeof(sorted[0]), cmp_u32);
	mid = ei->nfixed / 4;
	ei->link_fixed = (double)sorted[mid];
}

/* What the checks cost at @t, fraction of one core: decayed since the last one. */
static double
unplanned_at(const struct ev_instance *ei, uint64_t t)
{
	double dt = t > ei->unplanned_ms ? (double)(t - ei->unplanned_ms) : 0;

	return ei->unplanned * UNPLANNED_TAU_MS / (UNPLANNED_TAU_MS + dt);
}

/*
 * A link poll that a carrier event brought (follow.c) cost @ns: it was not in the plan, and
 * each such check (the list, the link, its confirmation and /ethdev/info at a down) is as dear
 * as a poll. Its rate comes off the polls' grant (dtel_plan_links()), so that checks do not
 * take the application's telemetry thread past PollLoad: before, 46 changes in 56 s held
 * it 1.47 % of the time against 1 % (mlx5 profile, docs/performance.md).
 */
void
ev_sched_unplanned(struct ev_instance *ei, uint64_t ns, uint64_t t)
{
	ei->unplanned = unplanned_at(ei, t) + (double)ns / (UNPLANNED_TAU_MS * 1e6);
	ei->unplanned_ms = t;
}

/* The least of a port's service times: what its link request costs the application, beyond
 * what the poll costs anyway (ev_sched_overhead()); 0 while not known. */
static uint64_t
least_of(const struct link_sched *s)
{
	uint32_t least = UINT32_MAX;

	if (s == NULL || s->n == 0)
		return 0;
	for (unsigned int i = 0; i < s->n; i++)
		if (s->samples[i] < least)
			least = s->samples[i];
	return least;
}

/*
 * What the plan counts for a port's link request: the least of its service times, but while
 * it has fewer than TRUST_SAMPLES, no more than the least /ethdev/link_status costs on this
 * application (libdpdktel learns it from every port). An application's first replies are
 * cold (seen: 5.5 ms where the port answers in 2 ms), and a port planned at such a cost got
 * a period of 37 s instead of 15 s: its next sample, and the link down it would have seen,
 * that much later. A port truly dearer than the others is known as such a period later.
 */
static uint64_t
plan_cost(const struct ev_instance *ei, const struct link_sched *s)
{
	uint64_t own = least_of(s), cmd;

	if (own == 0 || s->n >= TRUST_SAMPLES ||
		dtel_shared_cost(ei->t.sh, "/ethdev/link_status", &cmd) < 0 || cmd == 0)
		return own;
	return cmd < own ? cmd : own;
}

uint64_t
ev_sched_least(const struct ev_instance *ei, unsigned int port)
{
	return plan_cost(ei, find(ei, port));
}

/* Keep the schedules of the ports listed last (ei->link_ids), in that order. */
static void
keep_listed(struct ev_instance *ei)
{
	size_t k = 0;

	for (size_t i = 0; i < ei->nsched; i++) {
		bool listed = false;

		for (size_t j = 0; j < ei->nlink_ids && !listed; j++)
			listed = ei->link_ids[j] == ei->sched[i].id;
		if (listed)
			ei->sched[k++] = ei->sched[i];
	}
	ei->nsched = k;
}

static bool
port_down(const struct ev_instance *ei, unsigned int id)
{
	for (size_t i = 0; i < ei->nports; i++)
		if (ei->ports[i].id == id)
			return ei->ports[i].state == EVENTS_LINK_DOWN;
	return false;
}

/* Whether a port's period is stretched (and spread): then it goes in a poll with at most a
 * group of others (read.c batch_make()); @ret_next_ms: when it is due. */
bool
ev_sched_stretched(const struct ev_instance *ei, unsigned int port, uint64_t *ret_next_ms)
{
	const struct link_sched *s = find(ei, port);

	*ret_next_ms = s != NULL ? s->next_ms : 0;
	return s != NULL && s->spread;
}

/*
 * Whether a port not yet due at @t goes along with the ports that are: its period stretched,
 * its link up, and due within a quarter of its period. A poll's wake-up of the application's
 * thread and its list then serve a group (the plan counts them once a group), where ports
 * whose periods differ a little would otherwise drift apart, each poll asking a few.
 */
bool
ev_sched_along(const struct ev_instance *ei, unsigned int port, uint64_t t)
{
	const struct link_sched *s = find(ei, port);

	return s != NULL && s->spread && !s->quiet && !port_down(ei, port) &&
		s->next_ms <= t + s->period_ns / 4000000u;
}

/* How many stretched ports one poll asks: as many as HOLD_NS of their link requests, so that
 * one wake-up of the application's thread and one list serve them all, while a poll still
 * never holds the thread (and the stats reads behind it) for long. */
static unsigned int
group_of(const struct dtel_plan_port *pp, size_t n)
{
	uint64_t dearest = 0, g;

	for (size_t i = 0; i < n; i++)
		if (!pp[i].down && pp[i].cost_ns > dearest)
			dearest = pp[i].cost_ns;
	if (dearest == 0)
		return 1;
	g = HOLD_NS / dearest;
	return g < 1 ? 1 : g > n ? (unsigned int)n : (unsigned int)g;
}

/*
 * Each port due a period after it was last asked; ports whose period stretched for the first
 * time start spread over it, not together: in groups of link_group, which share their phase
 * (a down port, or one whose netdev is followed, waits its whole slow period). A group that
 * doubled or halved spreads them anew. Each port's period becomes the plan's (@pp); where
 * a spread port's changed, what is left of its wait changes in the same ratio: the ports
 * keep their order and their spacing. Due a new period after their last request
 * instead, a plan between a sweep and the next (a grant that moved) made every port that
 * the sweep asked together due together again, for good (seen: no link poll for 14 s, then
 * the 32 ports in a row), and a shorter period made many due at once.
 */
static void
spread(struct ev_instance *ei, uint64_t want_ns, const struct dtel_plan_port *pp, uint64_t now)
{
	unsigned int g = ei->link_group > 1 ? ei->link_group : 1;
	size_t n = 0, rank = 0, slots;

	if (g >= 2 * ei->spread_group || 2 * g <= ei->spread_group) {
		for (size_t i = 0; i < ei->nsched; i++)
			ei->sched[i].spread = false;
		ei->spread_group = g;
	}
	for (size_t i = 0; i < ei->nsched; i++)
		n += pp[i].period_ns > 2 * want_ns && !ei->sched[i].spread && !pp[i].quiet &&
			!pp[i].down;
	slots = (n + g - 1) / g;
	for (size_t i = 0; i < ei->nsched; i++) {
		struct link_sched *s = &ei->sched[i];
		uint64_t was = s->period_ns;

		s->period_ns = pp[i].period_ns;
		if (s->period_ns <= 2 * want_ns) {
			/* Its period may have just shrunk (its link came up): due by the new one.
			 */
			if (s->polled_ms != 0)
				s->next_ms = s->polled_ms + s->period_ns / 1000000u;
			s->spread = false;
			continue;
		}
		if (!s->spread && s->polled_ms != 0 && (pp[i].quiet || pp[i].down))
			/* The slow cadence of a down port or a followed netdev's: a whole one. */
			s->next_ms = s->polled_ms + s->period_ns / 1000000u;
		else if (!s->spread && s->polled_ms != 0)
			s->next_ms = s->polled_ms +
				s->period_ns * (rank++ / g + 1) / (slots + 1) / 1000000u;
		else if (s->polled_ms != 0 && s->next_ms > now && was != 0)
			s->next_ms = now +
				(uint64_t)((double)(s->next_ms - now) * (double)s->period_ns /
					(double)was);
		s->spread = true;
	}
}

/* Whether every up port's link cost is known, and one of them well enough to warn on: the
 * WARNING counts them all, not the first few to reach WARN_SAMPLES (once the polls stretch
 * they are spread over their period, and the first ports in it get there first). */
static bool
costs_known(const struct ev_instance *ei, const struct dtel_plan_port *pp)
{
	bool trusted = false;

	for (size_t i = 0; i < ei->nsched; i++) {
		if (pp[i].down)
			continue;
		if (ei->sched[i].n == 0)
			return false;
		trusted |= ei->sched[i].n >= WARN_SAMPLES;
	}
	return trusted;
}

/* Once per application process: the ports that are up and cannot be polled within a second. */
static void
warn_slow(struct ev_instance *ei, const struct dtel_plan_port *pp)
{
	uint64_t cost = 0, worst = 0, sum = 0;
	char ids[64] = "";
	size_t nslow = 0, len = 0;

	if (ei->warned_slow || !costs_known(ei, pp))
		return;
	for (size_t i = 0; i < ei->nsched; i++) {
		const struct link_sched *s = &ei->sched[i];

		if (pp[i].down)
			continue;
		sum += pp[i].cost_ns;
		if (s->period_ns <= DETECT_TARGET_NS)
			continue;
		nslow++;
		cost = cost > pp[i].cost_ns ? cost : pp[i].cost_ns;
		worst = worst > s->period_ns ? worst : s->period_ns;
		if (len < sizeof(ids) - 8)
			len += (size_t)snprintf(
				ids + len, sizeof(ids) - len, "%s%u", len ? "," : "", s->id);
	}
	if (nslow == 0)
		return;
	ei->warned_slow = true;
	LOG(LOG_WARNING,
		"DPDK application '%s': the link of %zu port%s (%s%s) costs its telemetry thread "
		"up "
		"to %.3g ms a request%s, so within PollLoad %g %% of one core it is polled only "
		"every "
		"%.3g s, and a link down is seen that late instead of within 1 s. To fix: enable "
		"link-state interrupts in the application (intr_conf.lsc = 1; Open vSwitch: "
		"options:dpdk-lsc-interrupt=true), or raise PollLoad to %.2g %%, or let the plugin "
		"follow the ports' kernel netdevs (mlx5, mlx4, af_packet, af_xdp, tap)",
		ei->t.name, nslow, nslow > 1 ? "s" : "", ids, len >= sizeof(ids) - 8 ? ",..." : "",
		(double)cost / 1e6,
		cost > CACHED_NS ? " (its driver is asked each time: no link-state interrupts)"
				 : "",
		ei->budget[POLL_LINKS].budget_pct, (double)worst / 1e9,
		(double)sum / (double)DETECT_TARGET_NS * 100 * 1.2 + 0.01);
}

/* The plan's ports: one per schedule, in the same order. */
static struct dtel_plan_port *
plan_ports(struct ev_instance *ei)
{
	struct dtel_plan_port *pp = calloc(ei->nsched + 1, sizeof(*pp));

	for (size_t i = 0; pp != NULL && i < ei->nsched; i++)
		pp[i] = (struct dtel_plan_port){.cost_ns = plan_cost(ei, &ei->sched[i]),
			.down = port_down(ei, ei->sched[i].id),
			.quiet = ei->sched[i].quiet};
	return pp;
}

uint64_t
ev_sched_plan(struct ev_instance *ei)
{
	uint64_t want = (uint64_t)(ei->o->poll_interval * 1e9), list = 0, longest = want;
	uint64_t next = UINT64_MAX;
	struct dtel_plan_links o = {.want_ns = want,
		.down_ns = (uint64_t)(ei->o->down_poll_interval * 1e9),
		.quiet_ns = (uint64_t)(ei->o->down_poll_interval * 1e9),
		.unplanned = unplanned_at(ei, dtp_now_ms())};
	struct dtel_plan_port *pp;

	keep_listed(ei);
	pp = plan_ports(ei);
	if (pp == NULL)
		return 0;
	o.group = ei->link_group = group_of(pp, ei->nsched);
	if (dtel_shared_cost(ei->t.sh, "/ethdev/list", &list) < 0)
		list = 0;
	o.fixed_ns = (double)list > ei->link_fixed ? list : (uint64_t)ei->link_fixed;
	dtel_plan_links(pp, ei->nsched, &o,
		dtp_budget_grant(
			&ei->budget[POLL_LINKS], dtel_plan_links_demand(pp, ei->nsched, &o)));
	for (size_t i = 0; i < ei->nsched; i++)
		if (!pp[i].down && pp[i].period_ns > longest)
			longest = pp[i].period_ns;
	spread(ei, want, pp, dtp_now_ms());
	for (size_t i = 0; i < ei->nsched; i++)
		next = ei->sched[i].next_ms < next ? ei->sched[i].next_ms : next;
	warn_slow(ei, pp);
	free(pp);
	dtp_budget_note(&ei->budget[POLL_LINKS], longest, want);
	return next;
}

double
ev_sched_bound(const struct ev_instance *ei, const struct link_sched *s)
{
	double period = s->period_ns > 0 ? (double)s->period_ns / 1e9 : ei->o->poll_interval;

	/* A followed netdev wakes the poll at once (follow.c): the link's check with the
	 * telemetry takes a Timeout at most; where the netdev is the only signal, a poll. */
	if (s->quiet)
		return s->only_signal ? ei->o->poll_interval : ei->o->timeout;
	return period + ei->o->timeout;
}
