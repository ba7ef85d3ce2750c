/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The load budgets both plugins register with an application's shared session (budget.c).
 * Included by dtp.h, after struct dtp_target.
 */
#ifndef DTP_BUDGET_H
#define DTP_BUDGET_H

#include <stdbool.h>
#include <stdint.h>

struct dtp_target;
struct dtp_conf;

/**
 * One kind of periodic work of a plugin instance on its application (the events plugin's
 * link poll, its lcore poll, its liveness poll; the stats plugin's read), registered with
 * the application's shared session as a class of its priority: polls share the poll budget
 * (PollLoad), reads the read budget (ReadLoad), and MaxAppLoad, where set, caps both
 * (libdpdktel: dtel_shared_class_grant()). Used by one thread at a time.
 */
struct dtp_budget {
	struct dtel_shared_class *cls;
	const struct dtp_target *t;
	const char *what; /* "link poll", for the log lines */
	const char *option; /* "PollLoad" or "ReadLoad", for the log lines */
	double budget_pct; /* of its priority; 0: none */
	double cap_pct; /* MaxAppLoad, < 0: not set */
	uint64_t interval_ns; /* in force; 0 until the first plan */
	uint64_t round_ns; /* what the last round cost the application */
	double grant; /* the fraction of one core it was last granted */
	bool stretched; /* announced */
	uint64_t change_since_ms; /* since when it is no longer what was announced, 0: it is */
};

/**
 * Register @b for @t's application, a class of @t's priority (polls for the events plugin,
 * reads for the stats plugin) whose priority may use @budget_pct percent of one core (0:
 * no budget) within MaxAppLoad @cap_pct (< 0: not set; 0: no budget at all). 0 or -errno.
 */
int dtp_budget_init(struct dtp_budget *b, const struct dtp_target *t, const char *what,
	double budget_pct, double cap_pct);
/** Unregister. Accepts a zeroed budget. */
void dtp_budget_fini(struct dtp_budget *b);

/**
 * After a round that cost the application @round_ns (0: none ran), the interval to run the
 * next at: @want_ns, or longer as the budgets require (dtel_shared_class_plan()). Logs as
 * dtp_budget_note().
 */
uint64_t dtp_budget_plan(struct dtp_budget *b, uint64_t round_ns, uint64_t want_ns);

/** The fraction of one core the class may use when it wants @demand (dtel_shared_class_grant()). */
double dtp_budget_grant(struct dtp_budget *b, double demand);

/**
 * The interval in force is now @interval_ns, where @want_ns was wanted (for a class whose
 * caller plans its own intervals from dtp_budget_grant()): logs one INFO line when it has
 * stayed at 1.5 times @want_ns or more for ten @want_ns (at least 1 s, at most 10 s), and
 * one when it has stayed within 1.1 times for as long.
 */
void dtp_budget_note(struct dtp_budget *b, uint64_t interval_ns, uint64_t want_ns);

/** Once at init where MaxAppLoad is set (@pct >= 0): one INFO line on what it means now. */
void dtp_say_max_app_load(const char *plugin, double pct);

/** The first MaxAppLoad set in a plugin's configuration (the <Plugin> block's, else an
 * instance's), < 0 when none is. @offset: of max_app_load in the plugin's options struct. */
double dtp_conf_max_app_load(const struct dtp_conf *c, size_t offset);

#endif
