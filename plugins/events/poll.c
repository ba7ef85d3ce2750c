/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdktel_events' poll thread: one per instance, every PollInterval read (read.c), judge
 * liveness (liveness.c), confirm (confirm.c), apply (apply.c), then publish and dispatch
 * (publish.c); each kind of poll planned within the budget (MaxAppLoad).
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>

#include "instance.h"

/* The most of the polls' budget the liveness request may take: on hardware (about 12 us a
 * request, 0.06 % of a core at PollInterval) it never needs it; where waking the
 * application's thread costs more (a VM: up to 0.2 ms) it would take most of PollLoad from
 * the link poll, which a page needs more. */
#define ALIVE_SHARE 0.25

/* The average of the liveness rounds' costs, with this one: the same average as libdpdktel
 * keeps of its class's rounds (dtel_shared_class_plan(): a quarter of the way to each new
 * round), which its demand is made of. */
static double
alive_average(struct ev_instance *ei)
{
	double r = (double)ei->round_ns[POLL_ALIVE];

	if (r > 0)
		ei->alive_avg = ei->alive_avg == 0 ? r : ei->alive_avg + (r - ei->alive_avg) / 4;
	return ei->alive_avg;
}

/*
 * The interval the liveness request asks for: PollInterval, or longer so that it asks at
 * most ALIVE_SHARE of the polls' budget in force (PollLoad, or MaxAppLoad when lower). The
 * cost is the average its demand is made of, not this round's: with this round's, a cheap
 * round after a dear one asked for the average at a short interval, up to half the budget,
 * and the link poll's grant swung between 0.5 % and 0.93 % from poll to poll.
 */
static uint64_t
alive_want(struct ev_instance *ei, uint64_t want)
{
	double budget = ei->o->poll_load, least, avg = alive_average(ei);

	if (ei->o->max_app_load >= 0 && (budget <= 0 || ei->o->max_app_load < budget))
		budget = ei->o->max_app_load;
	if (budget <= 0 || avg == 0)
		return want;
	least = avg / (budget / 100 * ALIVE_SHARE);
	if (least <= (double)want)
		return want;
	if (!ei->alive_capped) /* once per instance: its cost moves about the bound */
		plugin_log(LOG_INFO,
			"dpdktel_events plugin: DPDK application '%s': liveness request every "
			"%.3g s instead of %g s: it costs the application's telemetry thread %.3g "
			"ms, and may take at most a quarter of the polls' budget (%g %% of one "
			"core); the rest is the link poll's",
			ei->t.name, least / 1e9, ei->o->poll_interval, avg / 1e6, budget);
	ei->alive_capped = true;
	return (uint64_t)least;
}

/*
 * When each kind of poll that ran is due again: PollInterval, or longer within the budget;
 * links read port by port, each port when its schedule says (schedule.c). A kind whose
 * requests were not sent (our own queue was longer than its Timeout, or reconnecting backs
 * off) is due again at the next poll, not an interval later.
 */
static void
plan_next(struct ev_instance *ei, const struct reading *rd, uint64_t t)
{
	uint64_t want = (uint64_t)(ei->o->poll_interval * 1e9), next;
	bool held = ei->poll_err == -EBUSY || ei->poll_err == -EAGAIN;

	for (int k = 0; k < POLL_KINDS; k++) {
		if (!rd->due[k] || (held && ei->round_ns[k] == 0))
			continue;
		if (k == POLL_LINKS && !rd->links_from_fwd) {
			if (ei->check_poll)
				ev_sched_unplanned(ei, ei->round_ns[k], t);
			ei->check_poll = false;
			next = ev_sched_plan(ei);
			ei->next_ms[k] =
				next != UINT64_MAX && next != 0 ? next : t + want / 1000000u;
		} else {
			ei->next_ms[k] = t +
				dtp_budget_plan(&ei->budget[k], ei->round_ns[k],
					k == POLL_ALIVE ? alive_want(ei, want) : want) /
					1000000u;
		}
		ei->round_ns[k] = 0;
	}
}

/* Read every source, confirm the candidate changes (all the I/O), apply, notify, dispatch. */
static void
poll_once(struct ev_instance *ei)
{
	struct reading rd = {0};
	uint64_t t = dtp_now_ms();
	bool was_up = ei->st.up, was_hung = ei->st.not_responding;
	uint64_t sent = ei->t.sent;
	enum events_poll poll;

	ei->poll_err = 0;
	/* The stats plugin's reads wait while this poll asks (libdpdktel's queue). */
	dtel_shared_poll_begin(ei->t.sh);
	ev_read_sources(ei, t, &rd);
	poll = ev_outcome(ei, sent);
	/* A restart must be known before these readings meet the old state, and before an
	 * unanswered poll is judged: by the process that holds the socket now. */
	ev_check_restart(ei);
	if (poll == EVENTS_POLL_ANSWERED) {
		ev_follow_readings(ei, &rd);
		ev_confirm(ei, &rd, t);
		ev_follow_map(ei, &rd);
		poll = ev_outcome(ei, sent); /* a check may have met the hang */
	}
	dtel_shared_poll_end(ei->t.sh);
	ev_tell_restart(ei);
	plan_next(ei, &rd, t);
	ev_judge(ei, poll, t);
	if (poll == EVENTS_POLL_ANSWERED) {
		ev_apply_main(ei, &rd, t);
		if (rd.have_links)
			ev_apply_links(ei, &rd, t);
		if (rd.have_lcores)
			ev_apply_lcores(ei, &rd, t);
		if (rd.have_links)
			ev_follow_check(ei, t);
	}
	ev_reading_free(&rd);
	ev_finish_poll(ei, ei->st.up != was_up || ei->st.not_responding != was_hung);
}

static bool
stopped(struct ev_instance *ei)
{
	bool stop;

	pthread_mutex_lock(&ei->lock);
	stop = ei->stop;
	pthread_mutex_unlock(&ei->lock);
	return stop;
}

/* Milliseconds from now to @until, rounded up: poll() must not wake just before it. */
static int
ms_until(const struct timespec *until)
{
	struct timespec now;
	int64_t ns;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ns = (int64_t)(until->tv_sec - now.tv_sec) * 1000000000 + (until->tv_nsec - now.tv_nsec);
	return ns <= 0 ? 0 : (int)((ns + 999999) / 1000000);
}

/*
 * Sleep until @until, or until a stop (ev_instance_stop() writes the eventfd) or a carrier
 * event that makes a port's link due at once (follow.c). Returns -1 to stop, 1 when woken
 * early by a link event, 0 at @until.
 */
static int
wait_until(struct ev_instance *ei, const struct timespec *until)
{
	for (;;) {
		struct pollfd p[2] = {{.fd = ei->wake_fd, .events = POLLIN},
			{.fd = ev_follow_fd(ei), .events = POLLIN}};
		int ms, n;

		if (stopped(ei))
			return -1;
		ms = ms_until(until);
		if (ms == 0)
			return 0;
		n = poll(p, p[1].fd >= 0 ? 2 : 1, ms);
		if (n < 0 && errno != EINTR)
			return 0; /* cannot wait: poll at the period, as if it had passed */
		if (n > 0 && p[0].revents != 0) {
			eventfd_t v;

			(void)eventfd_read(ei->wake_fd, &v);
		}
		if (n > 0 && p[1].revents != 0 && ev_follow_drain(ei) > 0 &&
			ei->next_ms[POLL_LINKS] == 0)
			return 1;
	}
}

void *
ev_poll_thread(void *arg)
{
	struct ev_instance *ei = arg;
	uint64_t period_ns = (uint64_t)(ei->o->poll_interval * 1e9);
	struct timespec next;
	int woke = 0;

	clock_gettime(CLOCK_MONOTONIC, &next);
	for (;;) {
		struct timespec now;
		bool late;

		poll_once(ei);
		/* A poll that overran its period (a timeout) restarts the schedule from now: the
		 * polls it missed are not run back to back. One that a link event brought early
		 * keeps the period's deadline. */
		clock_gettime(CLOCK_MONOTONIC, &now);
		late = now.tv_sec > next.tv_sec ||
			(now.tv_sec == next.tv_sec && now.tv_nsec > next.tv_nsec);
		if (late)
			next = now;
		if (woke == 0 || late) {
			next.tv_nsec += (long)(period_ns % 1000000000u);
			next.tv_sec +=
				(time_t)(period_ns / 1000000000u) + next.tv_nsec / 1000000000;
			next.tv_nsec %= 1000000000;
		}
		woke = wait_until(ei, &next);
		if (woke < 0)
			return NULL;
	}
}
