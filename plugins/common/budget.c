/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The load budgets: what the dpdktel plugins may cost an application's telemetry thread.
 * Each periodic kind of work registers a class with the application's shared session: the
 * events plugin's polls share PollLoad, the stats plugin's reads ReadLoad, and MaxAppLoad,
 * where set, caps both (libdpdktel shares them: dtel_shared_class_grant()). A class whose
 * work would cost more than its share runs less often, with one log line when it stretches
 * and one when it is back (docs/dpdktel_events.md, "The load on the application").
 */
#include <errno.h>
#include <string.h>

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
dtp_budget_init(struct dtp_budget *b, const struct dtp_target *t, const char *what,
	double budget_pct, double cap_pct)
{
	int ret;

	*b = (struct dtp_budget){.t = t,
		.what = what,
		.option = t->prio == DTEL_PRIO_POLL ? "PollLoad" : "ReadLoad",
		.budget_pct = budget_pct,
		.cap_pct = cap_pct};
	ret = dtel_shared_class_new(t->sh, t->prio, &b->cls);
	if (ret == 0)
		dtel_shared_class_budget(
			b->cls, budget_pct / 100, cap_pct < 0 ? -1 : cap_pct / 100);
	return ret;
}

void
dtp_budget_fini(struct dtp_budget *b)
{
	dtel_shared_class_free(b->cls);
	b->cls = NULL;
}

/* What holds the class back, for the log line: its own budget, or MaxAppLoad's cap. */
static void
say(const struct dtp_budget *b, uint64_t want_ns)
{
	const struct dtp_target *t = b->t;

	if (!b->stretched) {
		plugin_log(LOG_INFO, "%s plugin: DPDK application '%s': %s every %.3g s again",
			t->plugin, t->name, b->what, (double)b->interval_ns / 1e9);
		return;
	}
	plugin_log(LOG_INFO,
		"%s plugin: DPDK application '%s': %s every %.3g s instead of %.3g s, to keep "
		"what it costs the application's telemetry thread within %s %g %% of one core%s "
		"(one %s costs it %.3g ms; see \"The load on the application\" in "
		"docs/dpdktel_events.md)",
		t->plugin, t->name, b->what, (double)b->interval_ns / 1e9, (double)want_ns / 1e9,
		b->option, b->budget_pct, b->cap_pct > 0 ? " and MaxAppLoad" : "", b->what,
		(double)b->round_ns / 1e6);
}

void
dtp_budget_note(struct dtp_budget *b, uint64_t interval_ns, uint64_t want_ns)
{
	uint64_t now = dtp_now_ms();
	bool change;

	b->interval_ns = interval_ns;
	change = b->stretched ? (double)interval_ns <= BACK * (double)want_ns
			      : (double)interval_ns >= STRETCHED * (double)want_ns;
	if (!change) {
		b->change_since_ms = 0;
		return;
	}
	if (b->change_since_ms == 0)
		b->change_since_ms = now;
	if (now - b->change_since_ms >= settle_ms(want_ns)) {
		b->stretched = !b->stretched;
		b->change_since_ms = 0;
		say(b, want_ns);
	}
}

uint64_t
dtp_budget_plan(struct dtp_budget *b, uint64_t round_ns, uint64_t want_ns)
{
	if (b->cls == NULL)
		return b->interval_ns = want_ns;
	if (round_ns > 0)
		b->round_ns = round_ns;
	dtp_budget_note(b, dtel_shared_class_plan(b->cls, round_ns, want_ns), want_ns);
	return b->interval_ns;
}

double
dtp_budget_grant(struct dtp_budget *b, double demand)
{
	if (b->cls == NULL)
		return b->grant = demand;
	return b->grant = dtel_shared_class_grant(b->cls, demand);
}

void
dtp_say_max_app_load(const char *plugin, double pct)
{
	if (pct < 0)
		return;
	if (pct == 0) {
		plugin_log(LOG_INFO,
			"%s plugin: MaxAppLoad 0: no load budget at all, for both dpdktel plugins "
			"(nothing they ask of an application ever stretches)",
			plugin);
		return;
	}
	plugin_log(LOG_INFO,
		"%s plugin: MaxAppLoad %g caps what both dpdktel plugins together cost an "
		"application's telemetry thread: within it the link, lcore and liveness polls "
		"(dpdktel_events, PollLoad, default 1 %%) go first, and the counter reads "
		"(dpdktel_stats, ReadLoad, default 1 %%) get what the polls leave; without it each "
		"has its own budget (see \"The load on the application\" in "
		"docs/dpdktel_events.md)",
		plugin, pct);
}

double
dtp_conf_max_app_load(const struct dtp_conf *c, size_t offset)
{
	double v;

	memcpy(&v, (const char *)c->global + offset, sizeof(v));
	for (size_t i = 0; v < 0 && i < c->ninst; i++)
		memcpy(&v, (const char *)c->inst[i].opts + offset, sizeof(v));
	return v;
}
