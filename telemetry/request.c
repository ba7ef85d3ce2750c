/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Requests on a shared session: take a turn (queue.c), connect when needed (registry.c), the
 * owner's attempts on the connection, then give the turn back with what it cost (cost.c),
 * counted in the load of the request's priority (budget.c).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared.h"

/*
 * Give the connection back, with what the owner learnt of the costs of the requests of @cmds
 * it asked; the turn is counted at its cost in the load of @prio. Returns that cost.
 */
static uint64_t
give_turn(struct dtel_shared *sh, unsigned int prio, const char *const *cmds,
	const struct dtel__io *io)
{
	uint64_t cost;

	pthread_mutex_lock(&sh->state_lock);
	cost = dtel__learn_costs(sh, cmds, io);
	pthread_mutex_unlock(&sh->state_lock);
	cost = dtel__turn_cost(sh, cost);
	pthread_mutex_lock(&sh->state_lock);
	dtel__load_add_locked(sh, prio, cost);
	dtel__give_turn_locked(sh);
	pthread_mutex_unlock(&sh->state_lock);
	return cost;
}

/* One attempt of a request (or a batch) over an open session; *ret_sent: whether anything
 * went out. */
typedef int (*attempt_fn)(
	struct dtel_session *s, int timeout_ms, void *ctx, bool *ret_sent, struct dtel__io *io);

/*
 * The owner's part: connect when needed (a connect waits at most @timeout_ms), then @fn; a
 * connection found closed before anything went out (the application restarted between two
 * requests) is reopened once, as nothing has run yet. Then the shared status says how it went
 * (@ok: the result was an answer). Returns @fn's result, or the connect's error.
 */
static int
owner_attempts(struct dtel_shared *sh, int timeout_ms, attempt_fn fn, void *ctx, bool (*ok)(int),
	bool *ret_sent, struct dtel__io *io)
{
	int ret;

	*ret_sent = false;
	for (int attempt = 0; attempt < 2; attempt++) {
		ret = dtel__shared_connect(sh, dtel__now_ns() + (uint64_t)timeout_ms * 1000000u);
		if (ret < 0)
			break;
		ret = fn(sh->session, timeout_ms, ctx, ret_sent, io);
		/* Also a connection the session dropped for replies still to come on it. */
		if (dtel__error_closes(ret) || !dtel__session_is_open(sh->session))
			dtel__shared_close(sh);
		if (ret == -ECONNRESET && !*ret_sent && attempt == 0)
			continue;
		break;
	}
	if (ok(ret)) {
		sh->failures = 0;
		dtel__shared_set_status(sh, 0, true);
	} else if (ret != -EAGAIN && ret != -ENOMEM) {
		dtel__shared_set_status(sh, ret, sh->session != NULL);
	}
	return ret;
}

static int
check_request_opts(const struct dtel_request *rq)
{
	if (rq == NULL || rq->timeout_ms <= 0 ||
		(rq->prio != DTEL_PRIO_READ && rq->prio != DTEL_PRIO_POLL))
		return -EINVAL;
	return 0;
}

struct one {
	const char *cmd;
	struct dtel_reply *reply;
};

static int
attempt_one(struct dtel_session *s, int timeout_ms, void *ctx, bool *ret_sent, struct dtel__io *io)
{
	struct one *o = ctx;

	return dtel__session_query(s, o->cmd, timeout_ms, o->reply, ret_sent, io);
}

/* A null reply is an answer: the application is there. */
static bool
answered_one(int ret)
{
	return ret == 0 || ret == -ENODATA;
}

int
dtel_shared_request(struct dtel_shared *shared, struct dtel_request *rq, const char *cmd,
	struct dtel_reply *ret_reply)
{
	uint64_t sample = 0;
	struct dtel__io io = {.serving_since_ns = &shared->serving_since_ns, .sample_ns = &sample};
	struct one o = {cmd, ret_reply};
	uint64_t deadline_ns;
	size_t cmd_len;
	bool sent;
	int ret;

	if (shared == NULL || ret_reply == NULL || check_request_opts(rq) < 0)
		return -EINVAL;
	ret = dtel__check_request(cmd, &cmd_len);
	if (ret < 0)
		return ret;
	deadline_ns = dtel__now_ns() + (uint64_t)rq->timeout_ms * 1000000u;
	ret = dtel__take_turn(shared, rq, deadline_ns);
	if (ret < 0)
		return ret;
	ret = owner_attempts(shared, rq->timeout_ms, attempt_one, &o, answered_one, &sent, &io);
	rq->service_ns += give_turn(shared, rq->prio, &cmd, &io);
	if (rq->sample_ns != NULL)
		rq->sample_ns[0] = io.answered > 0 ? sample : 0;
	return ret;
}

int
dtel_shared_query(
	struct dtel_shared *shared, const char *cmd, int timeout_ms, struct dtel_reply *ret_reply)
{
	struct dtel_request rq = {.prio = DTEL_PRIO_READ, .timeout_ms = timeout_ms};

	return dtel_shared_request(shared, &rq, cmd, ret_reply);
}

struct many_args {
	const char *const *cmds;
	size_t n;
	unsigned int window;
	struct dtel_reply *replies;
	int *results;
	size_t sent;
};

static int
attempt_many(struct dtel_session *s, int timeout_ms, void *ctx, bool *ret_sent, struct dtel__io *io)
{
	struct many_args *m = ctx;
	int ret = dtel__session_query_many(
		s, m->cmds, m->n, m->window, timeout_ms, m->replies, m->results, &m->sent, io);

	*ret_sent = m->sent > 0;
	return ret;
}

/* Every reply came (each its own result), or all that were sent before a yield. */
static bool
answered_many(int ret)
{
	return ret == 0 || ret == DTEL__YIELDED;
}

/* One turn of a batch: the requests [done, n) that its window allows (only the first when
 * the cost of its command is not known yet). */
static void
next_turn(struct dtel_shared *sh, const struct dtel_request *rq, const char *const *cmds, size_t n,
	size_t done, struct dtel_reply *replies, int *results, struct many_args *m)
{
	unsigned int w = dtel__batch_window(sh, cmds + done, n - done, rq->window);

	*m = (struct many_args){cmds + done, w == 0 ? 1 : n - done, w == 0 ? 1 : w, replies + done,
		results + done, 0};
}

int
dtel_shared_request_many(struct dtel_shared *shared, struct dtel_request *rq,
	const char *const *cmds, size_t n, struct dtel_reply *ret_replies, int *ret_results)
{
	struct dtel__io io = {.serving_since_ns = &shared->serving_since_ns,
		.yield = dtel__poll_waiting,
		.arg = shared};
	uint64_t *samples = rq != NULL ? rq->sample_ns : NULL;
	size_t done = 0, last = 0;
	bool sent, any = false, own = samples == NULL, more = false;
	int ret;

	if (shared == NULL || check_request_opts(rq) < 0)
		return -EINVAL;
	ret = dtel__many_prepare(cmds, n, rq->window, rq->timeout_ms, ret_replies, ret_results);
	if (ret < 0)
		return ret;
	if (rq->prio == DTEL_PRIO_POLL)
		io.yield = NULL; /* a poll waits for no one */
	if (own)
		samples = malloc((n + 1) * sizeof(*samples)); /* NULL: a mean for every command */
	if (samples != NULL)
		memset(samples, 0, n * sizeof(*samples));
	do {
		struct many_args m;
		size_t left = n - done;

		next_turn(shared, rq, cmds, n, done, ret_replies, ret_results, &m);
		last = 0;
		ret = dtel__take_turn(
			shared, rq, dtel__now_ns() + (uint64_t)rq->timeout_ms * 1000000u);
		if (ret < 0)
			break;
		io.service_ns = 0;
		io.answered = 0;
		io.sample_ns = samples != NULL ? samples + done : NULL;
		ret = owner_attempts(
			shared, rq->timeout_ms, attempt_many, &m, answered_many, &sent, &io);
		rq->service_ns += give_turn(shared, rq->prio, cmds + done, &io);
		any |= sent;
		last = m.sent;
		done += m.sent;
		/* A turn cut short (a yield, or a request of unknown cost sent alone): the rest in
		 * the next. */
		more = ret == DTEL__YIELDED || (ret == 0 && m.n < left);
	} while (more && done < n);
	if (own)
		free(samples);
	/* A round after a yield that sent nothing (no turn, no connection): the first request
	 * left has the reason. A round that sent requests put its error on the one it was on;
	 * those it never sent stay -ECANCELED (they were not asked, so they did not fail). */
	if (ret < 0 && any && last == 0 && done < n)
		ret_results[done] = ret;
	/* Nothing asked: the caller's own requests will say why. */
	return !any && ret < 0 ? ret : 0;
}

int
dtel_shared_query_many(struct dtel_shared *shared, const char *const *cmds, size_t n,
	unsigned int window, int timeout_ms, struct dtel_reply *ret_replies, int *ret_results)
{
	struct dtel_request rq = {
		.prio = DTEL_PRIO_READ, .timeout_ms = timeout_ms, .window = window};

	return dtel_shared_request_many(shared, &rq, cmds, n, ret_replies, ret_results);
}
