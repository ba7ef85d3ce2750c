/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The load our requests put on an application, and its budgets.
 *
 * Every turn's cost (cost.c) is added up per second and per priority over the last
 * DTEL__LOAD_SECONDS. Periodic work registers a class of its priority and tells what it
 * wants (its demand, a fraction of one core); it is granted a share of its priority's budget:
 *
 *   - polls (links, lcores, liveness) share the poll budget, reads (counters) the read
 *     budget: the polls never give theirs up to the reads, however much the reads want;
 *   - within a priority, max-min fairness (plan.c): a class that wants less than an equal
 *     share gets it, the others share the rest equally;
 *   - a cap on everything (MaxAppLoad) where a class sets one: the polls get at most the cap,
 *     the reads what the polls leave of it; a cap of 0 from any class means no budget at
 *     all (nothing stretches), whichever plugin set it and whenever.
 *
 * The budget of a priority is the smallest one its classes bring (0 from any of them: that
 * priority has none); a priority without classes has none to share.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "shared.h"

void
dtel__load_add_locked(struct dtel_shared *sh, unsigned int prio, uint64_t cost_ns)
{
	uint64_t sec = dtel__now_ns() / 1000000000u;

	if (sec != sh->load_sec) {
		for (uint64_t s = sh->load_sec + 1;
			s <= sec && s <= sh->load_sec + DTEL__LOAD_SECONDS; s++)
			for (unsigned int p = 0; p < DTEL__PRIOS; p++)
				sh->load_ns[p][s % DTEL__LOAD_SECONDS] = 0;
		sh->load_sec = sec;
	}
	sh->load_ns[prio][sec % DTEL__LOAD_SECONDS] += cost_ns;
}

/* What is in force, under state_lock: each priority's budget and the cap (0: none). */
struct in_force {
	double prio[DTEL__PRIOS];
	double cap;
	bool has[DTEL__PRIOS];
};

static void
in_force_locked(const struct dtel_shared *sh, struct in_force *f)
{
	bool none[DTEL__PRIOS] = {false, false}, no_cap = false;

	memset(f, 0, sizeof(*f));
	for (const struct dtel_shared_class *c = sh->classes; c != NULL; c = c->next) {
		f->has[c->prio] = true;
		if (c->budget <= 0)
			none[c->prio] = true;
		else if (f->prio[c->prio] == 0 || c->budget < f->prio[c->prio])
			f->prio[c->prio] = c->budget;
		if (c->cap == 0)
			no_cap = true;
		else if (c->cap > 0 && (f->cap == 0 || c->cap < f->cap))
			f->cap = c->cap;
	}
	for (unsigned int p = 0; p < DTEL__PRIOS; p++)
		if (none[p] || no_cap)
			f->prio[p] = 0;
	if (no_cap)
		f->cap = 0;
}

/* The smaller of two budgets, 0 being none. */
static double
tighter(double a, double b)
{
	return a == 0 ? b : b == 0 ? a : a < b ? a : b;
}

/* Classes of one priority on one socket: two plugins make a few each. Any beyond this many
 * get what they want. */
#define CLASSES_MAX 64

/* Share @budget among the classes of @prio, under state_lock; returns what they got. */
static double
share_prio_locked(struct dtel_shared *sh, unsigned int prio, double budget)
{
	double demand[CLASSES_MAX], alloc[CLASSES_MAX], sum = 0;
	size_t n = 0;

	for (const struct dtel_shared_class *c = sh->classes; c != NULL; c = c->next)
		if (c->prio == prio && n < CLASSES_MAX)
			demand[n++] = c->demand;
	dtel_plan_share(demand, n, budget, alloc);
	n = 0;
	for (struct dtel_shared_class *c = sh->classes; c != NULL; c = c->next) {
		if (c->prio != prio)
			continue;
		c->alloc = n < CLASSES_MAX ? alloc[n++] : c->demand;
		sum += c->alloc;
	}
	return sum;
}

static void
regrant_locked(struct dtel_shared *sh)
{
	struct in_force f;
	double polls, reads;

	in_force_locked(sh, &f);
	polls = share_prio_locked(sh, DTEL_PRIO_POLL, tighter(f.prio[DTEL_PRIO_POLL], f.cap));
	reads = f.cap > 0 ? f.cap - polls : 0;
	if (f.cap > 0 && reads <= 0)
		reads = f.cap * 1e-6; /* the polls took it all: the reads next to nothing */
	share_prio_locked(sh, DTEL_PRIO_READ, tighter(f.prio[DTEL_PRIO_READ], reads));
}

void
dtel_shared_load(struct dtel_shared *shared, struct dtel_shared_load *ret_load)
{
	uint64_t sec = dtel__now_ns() / 1000000000u, sum[DTEL__PRIOS] = {0, 0};
	struct dtel_shared_load l = {0};
	struct in_force f;

	pthread_mutex_lock(&shared->state_lock);
	/* The last DTEL__LOAD_SECONDS full seconds. */
	for (uint64_t s = sec > DTEL__LOAD_SECONDS ? sec - DTEL__LOAD_SECONDS : 0; s < sec; s++)
		if (s + DTEL__LOAD_SECONDS > shared->load_sec && s <= shared->load_sec)
			for (unsigned int p = 0; p < DTEL__PRIOS; p++)
				sum[p] += shared->load_ns[p][s % DTEL__LOAD_SECONDS];
	for (const struct dtel_shared_class *c = shared->classes; c != NULL; c = c->next)
		l.planned += c->alloc;
	in_force_locked(shared, &f);
	pthread_mutex_unlock(&shared->state_lock);
	for (unsigned int p = 0; p < DTEL__PRIOS; p++) {
		l.measured_prio[p] = (double)sum[p] / (DTEL__LOAD_SECONDS * 1e9);
		l.measured += l.measured_prio[p];
		l.budget_prio[p] = f.has[p] ? tighter(f.prio[p], f.cap) : 0;
	}
	/* The whole: the cap, else the budgets of the priorities that have work, if all do. */
	l.budget = f.cap;
	if (l.budget == 0 && !(f.has[0] && f.prio[0] == 0) && !(f.has[1] && f.prio[1] == 0))
		l.budget = l.budget_prio[0] + l.budget_prio[1];
	*ret_load = l;
}

int
dtel_shared_class_new(
	struct dtel_shared *shared, enum dtel_prio prio, struct dtel_shared_class **ret_class)
{
	struct dtel_shared_class *c;

	if (shared == NULL || ret_class == NULL ||
		(prio != DTEL_PRIO_POLL && prio != DTEL_PRIO_READ))
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return -ENOMEM;
	c->sh = shared;
	c->prio = prio;
	c->cap = -1;
	pthread_mutex_lock(&shared->state_lock);
	c->next = shared->classes;
	shared->classes = c;
	regrant_locked(shared);
	pthread_mutex_unlock(&shared->state_lock);
	*ret_class = c;
	return 0;
}

void
dtel_shared_class_free(struct dtel_shared_class *cls)
{
	struct dtel_shared *sh;

	if (cls == NULL)
		return;
	sh = cls->sh;
	pthread_mutex_lock(&sh->state_lock);
	for (struct dtel_shared_class **p = &sh->classes; *p != NULL; p = &(*p)->next) {
		if (*p == cls) {
			*p = cls->next;
			break;
		}
	}
	regrant_locked(sh);
	pthread_mutex_unlock(&sh->state_lock);
	free(cls);
}

void
dtel_shared_class_budget(struct dtel_shared_class *cls, double budget, double cap)
{
	pthread_mutex_lock(&cls->sh->state_lock);
	cls->budget = budget > 0 ? budget : 0;
	cls->cap = cap < 0 ? -1 : cap;
	regrant_locked(cls->sh);
	pthread_mutex_unlock(&cls->sh->state_lock);
}

double
dtel_shared_class_grant(struct dtel_shared_class *cls, double demand)
{
	double alloc;

	pthread_mutex_lock(&cls->sh->state_lock);
	cls->demand = demand > 0 ? demand : 0;
	regrant_locked(cls->sh);
	alloc = cls->alloc;
	pthread_mutex_unlock(&cls->sh->state_lock);
	return alloc;
}

/* Rounds of a class before its interval may stretch. */
#define ROUNDS_BEFORE_PLAN 3

uint64_t
dtel_shared_class_plan(struct dtel_shared_class *cls, uint64_t round_ns, uint64_t want_ns)
{
	double alloc, interval;

	pthread_mutex_lock(&cls->sh->state_lock);
	if (round_ns > 0 && cls->rounds < ROUNDS_BEFORE_PLAN)
		cls->rounds++;
	if (round_ns > 0)
		cls->round_ns = cls->round_ns == 0
			? (double)round_ns
			: cls->round_ns + ((double)round_ns - cls->round_ns) / 4;
	cls->demand = want_ns > 0 ? cls->round_ns / (double)want_ns : 0;
	regrant_locked(cls->sh);
	alloc = cls->alloc;
	interval = alloc > 0 && alloc < cls->demand ? cls->round_ns / alloc : 0;
	/* Its first rounds: the costs of an application's first, cold replies are not yet weighed.
	 */
	if (interval < (double)want_ns || cls->rounds < ROUNDS_BEFORE_PLAN)
		interval = (double)want_ns;
	cls->interval_ns = (uint64_t)interval;
	pthread_mutex_unlock(&cls->sh->state_lock);
	return cls->interval_ns;
}
