/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MaxAppLoad: what both plugins together may cost an application's telemetry thread. Each
 * periodic kind of work registers a class with the application's shared session
 * (libdpdktel shares the budget between the classes of both plugins); a class whose rounds
 * would take more than its share runs less often, with one log line when it stretches and one
 * when it is back (docs/dpdktel_events.md, "The load on the application").
 */
#include <errno.h>

#include "dtp.h"

/* The log lines: stretched when the interval stays at 1.5 times the wanted one or more for
 * ten wanted intervals (at least 1 s, at most 10 s), back when it stays within 1.1 times for
 * as long (costs learnt from replies vary: an interval near the limit must not log a line at
 * every crossing). */
#define STRETCHED 1.5
#define BACK 1.1
#define SETTLE_MIN_MS 1000
#define SETTLE_MAX_MS 10000

static uint64_t
settle_ms(uint64_t want_ns)
{
	uint64_t ms = want_ns / 100000; /* ten intervals */

	return ms < SETTLE_MIN_MS ? SETTLE_MIN_MS : ms > SETTLE_MAX_MS ? SETTLE_MAX_MS : ms;
}

int
dtp_budget_init(struct dtp_budget *b, const struct dtp_target *t, const char *what)
{
	*b = (struct dtp_budget){.t = t, .what = what};
	return dtel_shared_class_new(t->sh, &b->cls);
}

void
dtp_budget_fini(struct dtp_budget *b)
{
	dtel_shared_class_free(b->cls);
	b->cls = NULL;
}

static void
say(const struct dtp_budget *b, uint64_t want_ns, double max_load_pct)
{
	const struct dtp_target *t = b->t;

	if (b->stretched)
		plugin_log(LOG_INFO,
			"%s plugin: DPDK application '%s': %s every %.3g s instead of %.3g s, to "
			"keep what both dpdktel plugins cost its telemetry thread within "
			"MaxAppLoad %g %% of one core (one %s costs it %.3g ms; see \"The load on "
			"the application\" in docs/dpdktel_events.md)",
			t->plugin, t->name, b->what, (double)b->interval_ns / 1e9,
			(double)want_ns / 1e9, max_load_pct, b->what, (double)b->round_ns / 1e6);
	else
		plugin_log(LOG_INFO, "%s plugin: DPDK application '%s': %s every %.3g s again",
			t->plugin, t->name, b->what, (double)b->interval_ns / 1e9);
}

uint64_t
dtp_budget_plan(struct dtp_budget *b, uint64_t round_ns, uint64_t want_ns, double max_load_pct)
{
	uint64_t now = dtp_now_ms();
	bool change;

	if (b->cls == NULL || max_load_pct <= 0)
		return b->interval_ns = want_ns;
	if (round_ns > 0)
		b->round_ns = round_ns;
	b->interval_ns = dtel_shared_class_plan(b->cls, round_ns, want_ns, max_load_pct / 100);
	change = b->stretched ? (double)b->interval_ns <= BACK * (double)want_ns
			      : (double)b->interval_ns >= STRETCHED * (double)want_ns;
	if (!change) {
		b->change_since_ms = 0;
		return b->interval_ns;
	}
	if (b->change_since_ms == 0)
		b->change_since_ms = now;
	if (now - b->change_since_ms >= settle_ms(want_ns)) {
		b->stretched = !b->stretched;
		b->change_since_ms = 0;
		say(b, want_ns, max_load_pct);
	}
	return b->interval_ns;
}
