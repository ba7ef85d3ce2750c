/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The process-wide registry of shared sessions: one connection per socket path (DPDK 22.11's
 * strtok() race, see dtel.h), and on it one queue for every request of the process.
 *
 * DPDK answers a connection's requests in order, one at a time, so the connection is a queue
 * that every thread of ours shares. Who sends next is decided here, by priority: a poll
 * (DTEL_PRIO_POLL: links, lcores, liveness) goes before a read (DTEL_PRIO_READ: counters), a
 * read waits while a poll is waiting or in progress (dtel_shared_poll_begin()), and a batch
 * of reads yields between its requests to a waiting poll. Only one thread does I/O at a time
 * (the owner, sh->busy); the others wait on a condition variable, each at most until its
 * timeout. A request's timeout runs from the moment the application can start on it; one
 * that waited behind our own requests until its timeout is -EBUSY (not sent: our queue,
 * not the application), unless the request it waited behind has itself gone unanswered that
 * long (-ETIMEDOUT: the application does not answer).
 *
 * What our requests cost the application is, where /proc shows the thread of the
 * application that serves our connection, the CPU time that thread spends (appcpu.c): read
 * after each turn of ours, it is exactly what the turn cost, wake-ups included (on a VM a
 * lone request that wakes the thread costs it ten times a pipelined one). Elsewhere it is
 * learnt from service times (from when the application could start on a request to its
 * reply): per command, the least of the last COST_SAMPLES, the time of a reply that did not
 * also wait for a CPU. The service times also size the batches' windows. The cost of each
 * turn goes into the load per second, for dtel_shared_load(), and the periodic rounds of
 * the plugins (classes) are given intervals that keep their load on the application within
 * the smallest budget among them.
 *
 * state_lock guards everything of the queue, the load and the classes, and is never held
 * across I/O, so dtel_shared_status() answers at once even while a request is waiting. The
 * connection's own fields belong to the owner.
 *
 * Reconnecting backs off (25 ms doubling to 1 s) while connecting keeps being refused, except
 * when the socket file is not the one that failed: an application that starts again makes
 * a new socket, and waiting out the backoff would only delay its first values. Only a
 * refused connect backs off: a request that timed out or got a bad reply leaves the next
 * request free to ask again (a slow application must not look like a gone one), and so does
 * a connect whose greeting timed out (the application is there, but busy).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dtel_private.h"

#define BACKOFF_FIRST_NS (25ull * 1000000u)
#define BACKOFF_MAX_NS (1000ull * 1000000u)
/* Seconds of service time dtel_shared_load() averages over. */
#define LOAD_SECONDS 10
/* How much of our own work a batch keeps queued at the application: enough that its
 * telemetry thread goes from one reply to the next without waiting for us (we take tens of
 * microseconds to answer a reply with the next request), and no more, because a poll that
 * comes meanwhile waits behind all of it. */
#define BACKLOG_NS (500ull * 1000u)

/* Service times kept per command, and commands kept per shared session (least recently used
 * out). */
#define COST_SAMPLES 16
#define COST_CMDS 32

/* What one command costs the application. */
struct cmd_cost {
	char name[DTEL__COMMAND_MAX]; /* "": a free slot */
	uint32_t ns[COST_SAMPLES]; /* the last service times (ns, at most ~4.3 s) */
	unsigned int n, next;
	uint64_t used; /* for least recently used */
	uint64_t est; /* the least of ns[] */
};

/* Which socket file a path names: inode and change time (a new socket, or new permissions). */
struct sock_id {
	dev_t dev;
	ino_t ino; /* 0: no socket file there */
	struct timespec ctime;
};

struct dtel_shared_class {
	struct dtel_shared *sh;
	struct dtel_shared_class *next; /* sh->classes, under state_lock */
	double budget; /* fraction of one core */
	double round_ns; /* smoothed cost of one round, 0: not known yet */
	uint64_t want_ns;
	uint64_t interval_ns; /* the last one given, 0: none yet */
	unsigned int rounds; /* rounds of known cost so far */
	double alloc; /* scratch of plan() */
	bool done; /* scratch of plan() */
};

struct dtel_shared {
	struct dtel_shared *next; /* registry list, under registry_lock */
	unsigned int refs; /* under registry_lock */
	char path[DTEL_PATH_MAX];

	/* The owner's (sh->busy): */
	struct dtel_session *session;
	/* What our requests really cost: the CPU time of the application's thread that serves
	 * this connection (appcpu.c), its schedstat open on cpu_fd (-1: not known), and its
	 * reading after our last turn. */
	int cpu_fd;
	uint64_t cpu_ns;
	unsigned int failures; /* consecutive refused connects */
	uint64_t retry_at_ns; /* no connect attempt before this */
	struct sock_id failed_at; /* the socket file at the last failure */

	pthread_mutex_t state_lock;
	pthread_cond_t turn; /* CLOCK_MONOTONIC: the owner gave the connection back */
	struct dtel_shared_status status;
	bool busy; /* a thread owns the connection */
	/* Threads waiting for it, by priority, and polls in progress: written under state_lock,
	 * read atomically by the owner (yield()). */
	unsigned int waiting[2];
	unsigned int polls;
	/* When the application started on the owner's request now awaited (atomic), 0: none. */
	uint64_t serving_since_ns;
	struct cmd_cost costs[COST_CMDS];
	uint64_t cost_clock;
	uint64_t load_ns[LOAD_SECONDS]; /* service time in each of the last seconds */
	uint64_t load_sec; /* the second load_ns[load_sec % LOAD_SECONDS] is of */
	struct dtel_shared_class *classes;
	/* The process of the current generation, under state_lock: see note_owner_locked(). */
	struct dtel__owner gen;
};

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct dtel_shared *registry;

static struct dtel_shared *
find_locked(const char *path)
{
	for (struct dtel_shared *sh = registry; sh != NULL; sh = sh->next)
		if (strcmp(sh->path, path) == 0)
			return sh;
	return NULL;
}

static struct dtel_shared *
shared_new(const char *path)
{
	struct dtel_shared *sh = calloc(1, sizeof(*sh));
	pthread_condattr_t ca;

	if (sh == NULL)
		return NULL;
	snprintf(sh->path, sizeof(sh->path), "%s", path); /* checked < DTEL_PATH_MAX */
	sh->cpu_fd = -1;
	pthread_mutex_init(&sh->state_lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&sh->turn, &ca);
	pthread_condattr_destroy(&ca);
	return sh;
}

int
dtel_shared_get(const char *path, struct dtel_shared **ret_shared)
{
	struct dtel_shared *sh;

	if (path == NULL || path[0] == '\0' || ret_shared == NULL)
		return -EINVAL;
	if (strnlen(path, DTEL_PATH_MAX) >= DTEL_PATH_MAX)
		return -ENAMETOOLONG;
	pthread_mutex_lock(&registry_lock);
	sh = find_locked(path);
	if (sh == NULL) {
		sh = shared_new(path);
		if (sh == NULL) {
			pthread_mutex_unlock(&registry_lock);
			return -ENOMEM;
		}
		sh->next = registry;
		registry = sh;
	}
	sh->refs++;
	pthread_mutex_unlock(&registry_lock);
	*ret_shared = sh;
	return 0;
}

static void
unlink_locked(struct dtel_shared *sh)
{
	for (struct dtel_shared **p = &registry; *p != NULL; p = &(*p)->next) {
		if (*p == sh) {
			*p = sh->next;
			return;
		}
	}
}

void
dtel_shared_put(struct dtel_shared *shared)
{
	bool last;

	if (shared == NULL)
		return;
	pthread_mutex_lock(&registry_lock);
	last = --shared->refs == 0;
	if (last)
		unlink_locked(shared);
	pthread_mutex_unlock(&registry_lock);
	if (!last)
		return;
	dtel_session_close(shared->session);
	if (shared->cpu_fd >= 0)
		close(shared->cpu_fd);
	pthread_mutex_destroy(&shared->state_lock);
	pthread_cond_destroy(&shared->turn);
	free(shared);
}

const char *
dtel_shared_path(const struct dtel_shared *shared)
{
	return shared->path;
}

void
dtel_shared_status(struct dtel_shared *shared, struct dtel_shared_status *ret_status)
{
	pthread_mutex_lock(&shared->state_lock);
	*ret_status = shared->status;
	pthread_mutex_unlock(&shared->state_lock);
}

static void
set_status(struct dtel_shared *sh, int err, bool connected)
{
	pthread_mutex_lock(&sh->state_lock);
	sh->status.last_error = err;
	sh->status.connected = connected;
	pthread_mutex_unlock(&sh->state_lock);
}

static void
sock_id_of(const char *path, struct sock_id *ret)
{
	struct stat st;

	memset(ret, 0, sizeof(*ret));
	if (stat(path, &st) == 0 && S_ISSOCK(st.st_mode)) {
		ret->dev = st.st_dev;
		ret->ino = st.st_ino;
		ret->ctime = st.st_ctim;
	}
}

static bool
sock_id_equal(const struct sock_id *a, const struct sock_id *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->ctime.tv_sec == b->ctime.tv_sec &&
		a->ctime.tv_nsec == b->ctime.tv_nsec;
}

/*
 * A connect attempt was refused: no new attempt before the backoff delay. Refused by a socket
 * file that had not refused before (an application starting again, not listening yet), the
 * backoff starts over at its first step: it is about to answer.
 */
static void
note_refused(struct dtel_shared *sh)
{
	struct sock_id now;
	unsigned int shift;
	uint64_t delay;

	sock_id_of(sh->path, &now);
	if (!sock_id_equal(&now, &sh->failed_at))
		sh->failures = 0;
	shift = sh->failures < 16 ? sh->failures : 16;
	delay = BACKOFF_FIRST_NS << shift;
	sh->failures++;
	sh->retry_at_ns = dtel__now_ns() + (delay < BACKOFF_MAX_NS ? delay : BACKOFF_MAX_NS);
	sh->failed_at = now;
}

/* The owner's, at a new connection: which thread of the application serves it. */
static void
find_server_thread(struct dtel_shared *sh)
{
	uint64_t opened;
	long pid;

	dtel__session_peer(sh->session, &pid, &opened);
	/* Not the greeting's pid when SO_PEERCRED says nothing: that is the application's pid in
	 * its own namespace, and in ours another process (or none). */
	if (sh->cpu_fd >= 0)
		close(sh->cpu_fd);
	sh->cpu_fd = -1;
	if (dtel__server_thread(pid, opened, &sh->cpu_fd, NULL) == 0 &&
		dtel__thread_cpu_ns(sh->cpu_fd, &sh->cpu_ns) < 0) {
		close(sh->cpu_fd);
		sh->cpu_fd = -1;
	}
}

/*
 * Which process holds the socket, from a connect: @now (owner.c: the pid SO_PEERCRED gave,
 * its start time, the socket file, and the greeting's pid unless @greeting is NULL: connected,
 * but no greeting came, from an application that hangs, or was stopped, right after it made
 * its socket). A process other than the generation's (dtel__owner_same()) starts a new
 * generation; the same one completes what is known of it (a greeting that comes later).
 * Under state_lock.
 */
static void
note_owner_locked(
	struct dtel_shared *sh, struct dtel__owner *now, const struct dtel_greeting *greeting)
{
	struct dtel_shared_status *st = &sh->status;

	now->greet = greeting != NULL ? greeting->pid : 0;
	if (now->peer != 0)
		st->peer_pid = now->peer;
	if (st->generation == 0 || !dtel__owner_same(&sh->gen, now)) {
		st->generation++;
		sh->gen = *now;
		/* Not this process's: its release and limits are not known until it greets. */
		if (greeting == NULL)
			memset(&st->greeting, 0, sizeof(st->greeting));
	} else {
		dtel__owner_merge(&sh->gen, now);
	}
	if (greeting != NULL)
		st->greeting = *greeting;
	st->owner_pid = sh->gen.peer;
	st->owner_start = sh->gen.peer != 0 ? sh->gen.start : 0;
}

static void
note_connect(struct dtel_shared *sh, struct dtel__owner *now)
{
	find_server_thread(sh);
	pthread_mutex_lock(&sh->state_lock);
	note_owner_locked(sh, now, dtel_session_greeting(sh->session));
	sh->status.connects++;
	sh->status.connected = true;
	pthread_mutex_unlock(&sh->state_lock);
}

/* Connected, but the greeting never came (or was not one): still, the socket's owner. */
static void
note_ungreeted(struct dtel_shared *sh, struct dtel__owner *now)
{
	pthread_mutex_lock(&sh->state_lock);
	note_owner_locked(sh, now, NULL);
	pthread_mutex_unlock(&sh->state_lock);
}

static void
close_session(struct dtel_shared *sh)
{
	dtel_session_close(sh->session);
	sh->session = NULL;
}

/* Whether a failed connect attempt backs off: refused, not merely slow. */
static bool
connect_refused(int err)
{
	return err != -ETIMEDOUT && err != -ENOMEM && err != -EBUSY;
}

/*
 * Connect when there is no connection. While backing off, returns -EAGAIN at once without
 * trying: the request is not sent, and status.last_error keeps the refusal's error.
 */
static int
ensure_connected(struct dtel_shared *sh, uint64_t deadline_ns)
{
	struct dtel__owner owner = {0};
	struct sock_id now;
	long peer = -1; /* not connected */
	bool wait;
	int ret;

	if (sh->session != NULL)
		return 0;
	wait = dtel__now_ns() < sh->retry_at_ns;
	/* Backing off, unless a socket file appeared, was replaced or changed its mode. */
	if (wait) {
		sock_id_of(sh->path, &now);
		wait = now.ino == 0 || sock_id_equal(&now, &sh->failed_at);
	}
	if (wait)
		return -EAGAIN;
	/* The socket file of the process we are about to reach (after the connect it could be
	 * another's: one that starts right then is seen as new once more, never missed). */
	dtel__sock_file_of(sh->path, &owner.sock);
	/* Waiting for the greeting is waiting for the application. */
	__atomic_store_n(&sh->serving_since_ns, dtel__now_ns(), __ATOMIC_RELAXED);
	ret = dtel__session_open_until(sh->path, deadline_ns, &sh->session, &peer);
	__atomic_store_n(&sh->serving_since_ns, 0, __ATOMIC_RELAXED);
	if (peer > 0) {
		owner.peer = peer;
		owner.start = dtel__proc_start_ticks(peer);
	}
	if (ret == 0) {
		note_connect(sh, &owner);
		return 0;
	}
	if (peer >= 0)
		note_ungreeted(sh, &owner);
	if (connect_refused(ret))
		note_refused(sh);
	return ret;
}

/* The queue -------------------------------------------------------------------------------- */

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

/* For a batch of reads between two of its requests: is a poll waiting or in progress? */
static bool
poll_waiting(void *arg)
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
 * application is on has gone unanswered for @timeout_ns too (-ETIMEDOUT: the application does
 * not answer), or our queue was longer than that (-EBUSY).
 */
static int
why_not_sent(struct dtel_shared *sh, uint64_t timeout_ns)
{
	uint64_t since = __atomic_load_n(&sh->serving_since_ns, __ATOMIC_RELAXED);

	return since != 0 && dtel__now_ns() >= since + timeout_ns ? -ETIMEDOUT : -EBUSY;
}

/*
 * Wait for the connection, at most until @deadline_ns (a request's timeout from when it
 * asked): 0 when it is this thread's, else why_not_sent(). Time spent waiting goes to @rq.
 */
static int
take_turn(struct dtel_shared *sh, struct dtel_request *rq, uint64_t deadline_ns)
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
		ret = my_turn(sh, prio) ? 0 : why_not_sent(sh, (uint64_t)rq->timeout_ms * 1000000u);
		/* A poll that gives up may be all that held reads back. */
		if (ret < 0 && prio == DTEL_PRIO_POLL)
			pthread_cond_broadcast(&sh->turn);
	}
	if (ret == 0)
		sh->busy = true;
	pthread_mutex_unlock(&sh->state_lock);
	return ret;
}

/* Costs ------------------------------------------------------------------------------------ */

/* The command of request @req ("/ethdev/xstats" of "/ethdev/xstats,3") into @buf. */
static void
command_of(const char *req, char *buf)
{
	size_t n = strcspn(req, ",");

	n = n < DTEL__COMMAND_MAX - 1 ? n : DTEL__COMMAND_MAX - 1;
	memcpy(buf, req, n);
	buf[n] = '\0';
}

/* Under state_lock: the cost entry of @cmd, NULL when unknown (@make: a slot for it, the
 * least recently used one when all are taken). */
static struct cmd_cost *
cost_of(struct dtel_shared *sh, const char *cmd, bool make)
{
	struct cmd_cost *lru = &sh->costs[0];

	for (int i = 0; i < COST_CMDS; i++) {
		struct cmd_cost *c = &sh->costs[i];

		if (c->name[0] != '\0' && strcmp(c->name, cmd) == 0) {
			c->used = ++sh->cost_clock;
			return c;
		}
		if (c->used < lru->used)
			lru = c;
	}
	if (!make)
		return NULL;
	memset(lru, 0, sizeof(*lru));
	snprintf(lru->name, sizeof(lru->name), "%s", cmd);
	lru->used = ++sh->cost_clock;
	return lru;
}

/* Add a service time of a command: its estimate is the least of the last ones, the time of a
 * reply that did not also wait for a CPU or for our reading it. */
static void
cost_add(struct cmd_cost *c, uint64_t ns)
{
	uint32_t least = UINT32_MAX;

	c->ns[c->next] = ns > UINT32_MAX ? UINT32_MAX : (uint32_t)ns;
	c->next = (c->next + 1) % COST_SAMPLES;
	if (c->n < COST_SAMPLES)
		c->n++;
	for (unsigned int i = 0; i < c->n; i++)
		if (c->ns[i] < least)
			least = c->ns[i];
	c->est = least;
}

/* The distinct commands of one call, with the sum and count of their service times. */
#define CALL_CMDS 16

struct call_cmd {
	char name[DTEL__COMMAND_MAX];
	uint64_t sum;
	size_t k;
};

/*
 * Under state_lock: learn from the io->answered requests of @cmds just answered (one service
 * time per command and call: the mean of its requests, because in a batch the time of one
 * reply depends on when this thread got to read it), and return what they cost by the
 * estimates. A call of more than CALL_CMDS commands learns of its first CALL_CMDS only.
 */
static uint64_t
learn_costs(struct dtel_shared *sh, const char *const *cmds, const struct dtel__io *io)
{
	struct call_cmd cc[CALL_CMDS];
	size_t n = io->answered, ncc = 0;
	uint64_t cost = 0;

	for (size_t i = 0; i < n; i++) {
		char name[DTEL__COMMAND_MAX];
		size_t j = 0;

		command_of(cmds[i], name);
		while (j < ncc && strcmp(cc[j].name, name) != 0)
			j++;
		if (j == ncc) {
			if (ncc == CALL_CMDS)
				continue;
			memcpy(cc[ncc].name, name, sizeof(name));
			cc[ncc].sum = 0;
			cc[ncc++].k = 0;
		}
		cc[j].sum += io->sample_ns != NULL ? io->sample_ns[i] : io->service_ns / n;
		cc[j].k++;
	}
	for (size_t j = 0; j < ncc; j++) {
		struct cmd_cost *c = cost_of(sh, cc[j].name, true);

		cost_add(c, cc[j].sum / cc[j].k);
		cost += c->est * cc[j].k;
	}
	return cost;
}

/*
 * The owner's: what its turn cost the application. The CPU time its thread that serves us
 * spent since our last turn, where /proc shows it (nothing else is asked of that thread in
 * between: a reply it had not finished with then is counted now); else @est, what the
 * requests cost by the estimates.
 */
static uint64_t
turn_cost(struct dtel_shared *sh, uint64_t est)
{
	uint64_t cpu;

	if (sh->cpu_fd < 0)
		return est;
	if (dtel__thread_cpu_ns(sh->cpu_fd, &cpu) < 0) {
		close(sh->cpu_fd); /* the thread has gone: estimates alone */
		sh->cpu_fd = -1;
		return est;
	}
	est = cpu >= sh->cpu_ns ? cpu - sh->cpu_ns : 0;
	sh->cpu_ns = cpu;
	return est;
}

/*
 * Give the connection back, with what the owner learnt of the costs of the requests of @cmds
 * it asked; the requests are counted at those costs in the load. Returns their cost.
 */
static uint64_t
give_turn(struct dtel_shared *sh, const char *const *cmds, const struct dtel__io *io)
{
	uint64_t sec = dtel__now_ns() / 1000000000u, cost;

	pthread_mutex_lock(&sh->state_lock);
	cost = learn_costs(sh, cmds, io);
	pthread_mutex_unlock(&sh->state_lock);
	cost = turn_cost(sh, cost);
	pthread_mutex_lock(&sh->state_lock);
	if (sec != sh->load_sec) {
		for (uint64_t s = sh->load_sec + 1; s <= sec && s <= sh->load_sec + LOAD_SECONDS;
			s++)
			sh->load_ns[s % LOAD_SECONDS] = 0;
		sh->load_sec = sec;
	}
	sh->load_ns[sec % LOAD_SECONDS] += cost;
	sh->busy = false;
	pthread_cond_broadcast(&sh->turn);
	pthread_mutex_unlock(&sh->state_lock);
	return cost;
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

/* Requests --------------------------------------------------------------------------------- */

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
		ret = ensure_connected(sh, dtel__now_ns() + (uint64_t)timeout_ms * 1000000u);
		if (ret < 0)
			break;
		ret = fn(sh->session, timeout_ms, ctx, ret_sent, io);
		/* Also a connection the session dropped for replies still to come on it. */
		if (dtel__error_closes(ret) || !dtel__session_is_open(sh->session))
			close_session(sh);
		if (ret == -ECONNRESET && !*ret_sent && attempt == 0)
			continue;
		break;
	}
	if (ok(ret)) {
		sh->failures = 0;
		set_status(sh, 0, true);
	} else if (ret != -EAGAIN && ret != -ENOMEM) {
		set_status(sh, ret, sh->session != NULL);
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
	uint64_t sample;
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
	ret = take_turn(shared, rq, deadline_ns);
	if (ret < 0)
		return ret;
	ret = owner_attempts(shared, rq->timeout_ms, attempt_one, &o, answered_one, &sent, &io);
	rq->service_ns += give_turn(shared, &cmd, &io);
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

/*
 * What a batch of @cmds may keep unanswered: @want, fewer when its requests are slow
 * (BACKLOG_NS, by the dearest command among its first DTEL_QUERY_MANY_WINDOW_MAX).
 */
static unsigned int
batch_window(struct dtel_shared *sh, const char *const *cmds, size_t n, unsigned int want)
{
	uint64_t per = 0;
	unsigned int w;

	pthread_mutex_lock(&sh->state_lock);
	for (size_t i = 0; i < n && i < DTEL_QUERY_MANY_WINDOW_MAX; i++) {
		char name[DTEL__COMMAND_MAX];
		const struct cmd_cost *c;

		command_of(cmds[i], name);
		c = cost_of(sh, name, false);
		if (c != NULL && c->est > per)
			per = c->est;
	}
	pthread_mutex_unlock(&sh->state_lock);
	if (per == 0)
		return want;
	w = per >= BACKLOG_NS ? 1 : 1 + (unsigned int)(BACKLOG_NS / per);
	return w < want ? w : want;
}

int
dtel_shared_request_many(struct dtel_shared *shared, struct dtel_request *rq,
	const char *const *cmds, size_t n, struct dtel_reply *ret_replies, int *ret_results)
{
	struct dtel__io io = {.serving_since_ns = &shared->serving_since_ns,
		.yield = poll_waiting,
		.arg = shared};
	uint64_t *samples;
	size_t done = 0, last = 0;
	bool sent, any = false;
	int ret;

	if (shared == NULL || check_request_opts(rq) < 0)
		return -EINVAL;
	ret = dtel__many_prepare(cmds, n, rq->window, rq->timeout_ms, ret_replies, ret_results);
	if (ret < 0)
		return ret;
	if (rq->prio == DTEL_PRIO_POLL)
		io.yield = NULL; /* a poll waits for no one */
	samples = malloc((n + 1) * sizeof(*samples)); /* NULL: a mean for every command */
	do {
		struct many_args m = {cmds + done, n - done,
			batch_window(shared, cmds + done, n - done, rq->window), ret_replies + done,
			ret_results + done, 0};

		last = 0;
		ret = take_turn(shared, rq, dtel__now_ns() + (uint64_t)rq->timeout_ms * 1000000u);
		if (ret < 0)
			break;
		io.service_ns = 0;
		io.answered = 0;
		io.sample_ns = samples != NULL ? samples + done : NULL;
		ret = owner_attempts(
			shared, rq->timeout_ms, attempt_many, &m, answered_many, &sent, &io);
		rq->service_ns += give_turn(shared, cmds + done, &io);
		any |= sent;
		last = m.sent;
		done += m.sent;
	} while (ret == DTEL__YIELDED && done < n);
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

/* Load and budget ---------------------------------------------------------------------------- */

void
dtel_shared_load(struct dtel_shared *shared, struct dtel_shared_load *ret_load)
{
	uint64_t sec = dtel__now_ns() / 1000000000u, sum = 0;
	double planned = 0, budget = 0;

	pthread_mutex_lock(&shared->state_lock);
	/* The last LOAD_SECONDS full seconds. */
	for (uint64_t s = sec > LOAD_SECONDS ? sec - LOAD_SECONDS : 0; s < sec; s++)
		if (s + LOAD_SECONDS > shared->load_sec && s <= shared->load_sec)
			sum += shared->load_ns[s % LOAD_SECONDS];
	for (const struct dtel_shared_class *c = shared->classes; c != NULL; c = c->next) {
		if (budget == 0 || c->budget < budget)
			budget = c->budget;
		planned += c->alloc;
	}
	pthread_mutex_unlock(&shared->state_lock);
	ret_load->measured = (double)sum / (LOAD_SECONDS * 1e9);
	ret_load->planned = planned;
	ret_load->budget = budget;
}

int
dtel_shared_class_new(struct dtel_shared *shared, struct dtel_shared_class **ret_class)
{
	struct dtel_shared_class *c;

	if (shared == NULL || ret_class == NULL)
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return -ENOMEM;
	c->sh = shared;
	pthread_mutex_lock(&shared->state_lock);
	c->next = shared->classes;
	shared->classes = c;
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
	pthread_mutex_unlock(&sh->state_lock);
	free(cls);
}

/* Rounds of a class before its interval may stretch. */
#define ROUNDS_BEFORE_PLAN 3

/* A class's load at the interval it wants (fraction of one core). */
static double
demand(const struct dtel_shared_class *c)
{
	return c->round_ns > 0 && c->want_ns > 0 ? c->round_ns / (double)c->want_ns : 0;
}

/*
 * Share @budget between the classes of @sh (under state_lock): each gets what it wants when
 * it wants less than an equal share, and the rest is shared equally by the others (max-min
 * fairness): a cheap class is never slowed for an expensive one.
 */
static void
share(struct dtel_shared *sh, double budget)
{
	double left = budget;
	unsigned int open = 0;
	bool more = true;

	for (struct dtel_shared_class *c = sh->classes; c != NULL; c = c->next) {
		c->done = false;
		open++;
	}
	while (more && open > 0) {
		double each = left / open;

		more = false;
		for (struct dtel_shared_class *c = sh->classes; c != NULL; c = c->next) {
			if (c->done || demand(c) > each)
				continue;
			c->alloc = demand(c);
			c->done = more = true;
			left -= c->alloc;
			open--;
		}
	}
	for (struct dtel_shared_class *c = sh->classes; c != NULL; c = c->next)
		if (!c->done)
			c->alloc = left / open;
}

uint64_t
dtel_shared_class_plan(
	struct dtel_shared_class *cls, uint64_t round_ns, uint64_t want_ns, double budget)
{
	struct dtel_shared *sh = cls->sh;
	double budget_min = budget, interval;

	pthread_mutex_lock(&sh->state_lock);
	if (round_ns > 0 && cls->rounds < ROUNDS_BEFORE_PLAN)
		cls->rounds++;
	if (round_ns > 0)
		cls->round_ns = cls->round_ns == 0
			? (double)round_ns
			: cls->round_ns + ((double)round_ns - cls->round_ns) / 4;
	cls->want_ns = want_ns;
	cls->budget = budget;
	for (const struct dtel_shared_class *c = sh->classes; c != NULL; c = c->next)
		if (c->budget > 0 && c->budget < budget_min)
			budget_min = c->budget;
	share(sh, budget_min);
	interval = cls->alloc > 0 ? cls->round_ns / cls->alloc : 0;
	/* Its first rounds: the costs of an application's first, cold replies are not yet weighed.
	 */
	if (interval < (double)want_ns || cls->rounds < ROUNDS_BEFORE_PLAN)
		interval = (double)want_ns;
	cls->interval_ns = (uint64_t)interval;
	pthread_mutex_unlock(&sh->state_lock);
	return cls->interval_ns;
}
