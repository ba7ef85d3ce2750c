/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Who sends next on a shared session. DPDK answers a connection's requests in order, one at
 * a time, so the connection is a queue that every thread of ours shares:
 *
 *   - a poll (DTEL_PRIO_POLL: links, lcores, liveness) goes before a read (DTEL_PRIO_READ:
 *     counters): a read waits while a poll is waiting or in progress
 *     (dtel_shared_poll_begin()), and a batch of reads yields between its requests to a
 *     waiting poll;
 *   - a batch keeps at most about BACKLOG_NS of our requests queued at the application (by
 *     their learnt costs), and a request whose cost is not known yet goes alone, so that a
 *     poll never waits behind a whole window of requests of unknown, maybe slow, cost;
 *   - one thread does I/O at a time (the owner, sh->busy); the others wait on a condition
 *     variable, each at most until its timeout. A timeout measures the application from the
 *     moment it can start on a request: one that waited behind our own requests until its
 *     timeout is not sent (-EBUSY: our queue, not the application), unless the request it
 *     waited behind has gone unanswered for that request's own timeout (-ETIMEDOUT: the
 *     application does not answer). A poll of Timeout 0.2 s behind a 0.3 s read of
 *     Timeout 0.5 s is therefore not sent, and not failed.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "shared.h"

/* How much of our own work a batch keeps queued at the application: enough that its
 * telemetry thread goes from one reply to the next without waiting for us (we take tens of
 * microseconds to answer a reply with the next request), and no more, because a poll that
 * comes meanwhile waits behind all of it. */
#define BACKLOG_NS (500ull * 1000u)

static void
ns_to_timespec(uint64_t ns, struct timespec *ret)
{
	ret->tv_sec = (time_t)(ns / 1000000000u);
	ret->tv_nsec = (long)(ns % 1000000000u);
}

/* Under state_lock: may a request of priority @prio take the connection now? */
static bool
my_turn(const struct dtel_shared *sh, unsigned int prio)
{
	if (sh->busy)
		return false;
	return prio == DTEL_PRIO_POLL || (sh->waiting[DTEL_PRIO_POLL] == 0 && sh->polls == 0);
}

bool
dtel__poll_waiting(void *arg)
{
	struct dtel_shared *sh = arg;

	return __atomic_load_n(&sh->waiting[DTEL_PRIO_POLL], __ATOMIC_RELAXED) > 0 ||
		__atomic_load_n(&sh->polls, __ATOMIC_RELAXED) > 0;
}

static void
add_waiting(struct dtel_shared *sh, unsigned int prio, int d)
{
	__atomic_store_n(&sh->waiting[prio], sh->waiting[prio] + (unsigned int)d, __ATOMIC_RELAXED);
}

/*
 * Why a request that waited until its deadline was not sent: the request of ours that the
 * application is on has gone unanswered for as long as its own timeout allows (-ETIMEDOUT:
 * the application does not answer), or our queue was longer than the waiter's timeout
 * (-EBUSY). A waiter's shorter timeout says nothing of an application that answers a slower
 * request within that request's timeout.
 */
static int
why_not_sent(struct dtel_shared *sh)
{
	uint64_t since = __atomic_load_n(&sh->serving_since_ns, __ATOMIC_RELAXED);
	uint64_t allowed = __atomic_load_n(&sh->serving_timeout_ns, __ATOMIC_RELAXED);

	return since != 0 && dtel__now_ns() >= since + allowed ? -ETIMEDOUT : -EBUSY;
}

/*
 * Wait for the connection, at most until @deadline_ns (a request's timeout from when it
 * asked): 0 when it is this thread's, else why_not_sent(). Time spent waiting goes to @rq.
 */
int
dtel__take_turn(struct dtel_shared *sh, struct dtel_request *rq, uint64_t deadline_ns)
{
	unsigned int prio = rq->prio == DTEL_PRIO_POLL ? DTEL_PRIO_POLL : DTEL_PRIO_READ;
	struct timespec until;
	uint64_t t0;
	int ret = 0;

	pthread_mutex_lock(&sh->state_lock);
	if (!my_turn(sh, prio)) {
		t0 = dtel__now_ns();
		ns_to_timespec(deadline_ns, &until);
		add_waiting(sh, prio, 1);
		while (!my_turn(sh, prio) && ret == 0)
			ret = pthread_cond_timedwait(&sh->turn, &sh->state_lock, &until);
		add_waiting(sh, prio, -1);
		rq->queued++;
		rq->queued_ns += dtel__now_ns() - t0;
		ret = my_turn(sh, prio) ? 0 : why_not_sent(sh);
		/* A poll that gives up may be all that held reads back. */
		if (ret < 0 && prio == DTEL_PRIO_POLL)
			pthread_cond_broadcast(&sh->turn);
	}
	if (ret == 0) {
		sh->busy = true;
		__atomic_store_n(&sh->serving_timeout_ns, (uint64_t)rq->timeout_ms * 1000000u,
			__ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&sh->state_lock);
	return ret;
}

/* Under state_lock: the owner gives the connection back. */
void
dtel__give_turn_locked(struct dtel_shared *sh)
{
	sh->busy = false;
	pthread_cond_broadcast(&sh->turn);
}

void
dtel_shared_poll_begin(struct dtel_shared *shared)
{
	pthread_mutex_lock(&shared->state_lock);
	__atomic_store_n(&shared->polls, shared->polls + 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&shared->state_lock);
}

void
dtel_shared_poll_end(struct dtel_shared *shared)
{
	pthread_mutex_lock(&shared->state_lock);
	if (shared->polls > 0)
		__atomic_store_n(&shared->polls, shared->polls - 1, __ATOMIC_RELAXED);
	pthread_cond_broadcast(&shared->turn);
	pthread_mutex_unlock(&shared->state_lock);
}

/*
 * What a batch of @cmds may keep unanswered in one turn: @want, fewer when its requests are
 * slow (BACKLOG_NS, by the dearest command among its first DTEL_QUERY_MANY_WINDOW_MAX), and 0
 * when the cost of its first command is not known yet: that one then goes alone, and the
 * rest once its reply has taught what it costs.
 */
unsigned int
dtel__batch_window(struct dtel_shared *sh, const char *const *cmds, size_t n, unsigned int want)
{
	uint64_t per = 0;
	bool unknown = false;
	unsigned int w;

	pthread_mutex_lock(&sh->state_lock);
	for (size_t i = 0; i < n && i < DTEL_QUERY_MANY_WINDOW_MAX; i++) {
		char name[DTEL__COMMAND_MAX];
		const struct dtel__cmd_cost *c;

		dtel__command_of(cmds[i], name);
		c = dtel__cost_of(sh, name, false);
		if (c == NULL || c->n == 0) {
			unknown |= i == 0;
			continue;
		}
		if (c->est > per)
			per = c->est;
	}
	pthread_mutex_unlock(&sh->state_lock);
	if (unknown)
		return 0;
	if (per == 0)
		return want;
	w = per >= BACKLOG_NS ? 1 : 1 + (unsigned int)(BACKLOG_NS / per);
	return w < want ? w : want;
}
