/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The process-wide registry of shared sessions: one connection per socket path, one request
 * at a time (DPDK 22.11's strtok() race, see dtel.h).
 *
 * Each shared session has two locks: req_lock is held for a whole request (connect included)
 * and is only ever taken with a deadline; state_lock guards the status fields and is never
 * held across I/O, so dtel_shared_status() answers at once even while a request is waiting.
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

#include "dtel_private.h"

#define BACKOFF_FIRST_NS (25ull * 1000000u)
#define BACKOFF_MAX_NS (1000ull * 1000000u)

/* Which socket file a path names: inode and change time (a new socket, or new permissions). */
struct sock_id {
	dev_t dev;
	ino_t ino; /* 0: no socket file there */
	struct timespec ctime;
};

struct dtel_shared {
	struct dtel_shared *next; /* registry list, under registry_lock */
	unsigned int refs; /* under registry_lock */
	char path[DTEL_PATH_MAX];

	pthread_mutex_t req_lock;
	struct dtel_session *session; /* under req_lock */
	unsigned int failures; /* consecutive failures, under req_lock */
	uint64_t retry_at_ns; /* no connect attempt before this, under req_lock */
	struct sock_id failed_at; /* the socket file at the last failure, under req_lock */

	pthread_mutex_t state_lock;
	struct dtel_shared_status status; /* under state_lock */
	/* The process of the current generation, as SO_PEERCRED and its greeting name it (0:
	 * not known yet), under state_lock: see note_owner(). */
	long gen_peer, gen_greet;
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

	if (sh == NULL)
		return NULL;
	snprintf(sh->path, sizeof(sh->path), "%s", path); /* checked < DTEL_PATH_MAX */
	pthread_mutex_init(&sh->req_lock, NULL);
	pthread_mutex_init(&sh->state_lock, NULL);
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
	pthread_mutex_destroy(&shared->req_lock);
	pthread_mutex_destroy(&shared->state_lock);
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

/*
 * Which process holds the socket: the pid SO_PEERCRED gave at connect (@peer, 0: not known)
 * and, when it greeted, the greeting's (@greeting NULL: connected, but no greeting came: an
 * application that hangs, or was stopped, right after it made its socket). A new process
 * starts a new generation: a peer pid other than the generation's, or a greeting pid other
 * than the generation's greeting. The two are compared each with its own kind, because
 * they differ when the application runs in another pid namespace (the greeting has its own
 * getpid()). A generation begun without a greeting takes the one that comes later as its
 * own. Under state_lock.
 */
static void
note_owner_locked(struct dtel_shared *sh, long peer, const struct dtel_greeting *greeting)
{
	struct dtel_shared_status *st = &sh->status;
	long greet = greeting != NULL ? greeting->pid : 0;
	bool new_gen = st->generation == 0 ||
		(peer != 0 && sh->gen_peer != 0 && peer != sh->gen_peer) ||
		(greet != 0 && sh->gen_greet != 0 && greet != sh->gen_greet);

	if (peer != 0)
		st->peer_pid = peer;
	if (new_gen) {
		st->generation++;
		sh->gen_peer = peer;
		sh->gen_greet = greet;
		/* Not this process's: its release and limits are not known until it greets. */
		if (greeting == NULL)
			memset(&st->greeting, 0, sizeof(st->greeting));
	} else {
		if (peer != 0)
			sh->gen_peer = peer;
		if (greet != 0)
			sh->gen_greet = greet;
	}
	if (greeting != NULL)
		st->greeting = *greeting;
	st->owner_pid = sh->gen_greet != 0 ? sh->gen_greet : sh->gen_peer;
}

static void
note_connect(struct dtel_shared *sh, long peer)
{
	pthread_mutex_lock(&sh->state_lock);
	note_owner_locked(sh, peer, dtel_session_greeting(sh->session));
	sh->status.connects++;
	sh->status.connected = true;
	pthread_mutex_unlock(&sh->state_lock);
}

/* Connected, but the greeting never came (or was not one): still, the socket's owner. */
static void
note_ungreeted(struct dtel_shared *sh, long peer)
{
	if (peer == 0)
		return;
	pthread_mutex_lock(&sh->state_lock);
	note_owner_locked(sh, peer, NULL);
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
	struct sock_id now;
	long peer = 0;
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
	ret = dtel__session_open_until(sh->path, deadline_ns, &sh->session, &peer);
	if (ret == 0) {
		note_connect(sh, peer);
		return 0;
	}
	note_ungreeted(sh, peer);
	if (connect_refused(ret))
		note_refused(sh);
	return ret;
}

#if defined(__SANITIZE_THREAD__)
#define DTEL_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define DTEL_TSAN 1
#endif
#endif

static int
lock_until(pthread_mutex_t *m, uint64_t deadline_ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(deadline_ns / 1000000000u),
		.tv_nsec = (long)(deadline_ns % 1000000000u),
	};

#ifdef DTEL_TSAN
	/* ThreadSanitizer (GCC 12, LLVM 14) does not intercept pthread_mutex_clocklock(), then
	 * takes every unlock for a bug: under it, the same wait against CLOCK_REALTIME. */
	uint64_t left = deadline_ns - dtel__now_ns(), rt;

	if ((int64_t)left < 0)
		left = 0;
	clock_gettime(CLOCK_REALTIME, &ts);
	rt = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec + left;
	ts.tv_sec = (time_t)(rt / 1000000000u);
	ts.tv_nsec = (long)(rt % 1000000000u);
	return pthread_mutex_timedlock(m, &ts) == 0 ? 0 : -EBUSY;
#else
	return pthread_mutex_clocklock(m, CLOCK_MONOTONIC, &ts) == 0 ? 0 : -EBUSY;
#endif
}

static int
ms_until(uint64_t deadline_ns)
{
	int ms = dtel__ms_left(deadline_ns);

	return ms > 0 ? ms : 1;
}

/* One attempt of a request (or a batch) over an open session; *ret_sent: whether anything
 * went out. */
typedef int (*attempt_fn)(struct dtel_session *s, int timeout_ms, void *ctx, bool *ret_sent);

/*
 * Under the request lock: connect when needed, then @fn; a connection found closed before
 * anything went out (the application restarted between two requests) is reopened once, as
 * nothing has run yet. Then the shared status says how it went (@ok: the result was an
 * answer). Returns @fn's result, or the lock's or the connect's error; *ret_sent as @fn's.
 */
static int
locked_attempts(struct dtel_shared *sh, int timeout_ms, attempt_fn fn, void *ctx, bool (*ok)(int),
	bool *ret_sent)
{
	uint64_t deadline_ns = dtel__now_ns() + (uint64_t)timeout_ms * 1000000u;
	int ret;

	*ret_sent = false;
	if (lock_until(&sh->req_lock, deadline_ns) < 0)
		return -EBUSY;
	for (int attempt = 0; attempt < 2; attempt++) {
		ret = ensure_connected(sh, deadline_ns);
		if (ret < 0)
			break;
		ret = fn(sh->session, ms_until(deadline_ns), ctx, ret_sent);
		/* Also a connection the session dropped for replies still to come on it. */
		if (dtel__error_closes(ret) || dtel__session_dropped(sh->session))
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
	pthread_mutex_unlock(&sh->req_lock);
	return ret;
}

struct one {
	const char *cmd;
	struct dtel_reply *reply;
};

static int
attempt_one(struct dtel_session *s, int timeout_ms, void *ctx, bool *ret_sent)
{
	struct one *o = ctx;

	return dtel__session_query(s, o->cmd, timeout_ms, o->reply, ret_sent);
}

/* A null reply is an answer: the application is there. */
static bool
answered_one(int ret)
{
	return ret == 0 || ret == -ENODATA;
}

int
dtel_shared_query(
	struct dtel_shared *shared, const char *cmd, int timeout_ms, struct dtel_reply *ret_reply)
{
	struct one o = {cmd, ret_reply};
	size_t cmd_len;
	bool sent;
	int ret;

	if (shared == NULL || ret_reply == NULL || timeout_ms <= 0)
		return -EINVAL;
	ret = dtel__check_request(cmd, &cmd_len);
	if (ret < 0)
		return ret;
	return locked_attempts(shared, timeout_ms, attempt_one, &o, answered_one, &sent);
}

struct many_args {
	const char *const *cmds;
	size_t n;
	unsigned int window;
	struct dtel_reply *replies;
	int *results;
};

static int
attempt_many(struct dtel_session *s, int timeout_ms, void *ctx, bool *ret_sent)
{
	struct many_args *m = ctx;
	size_t sent;
	int ret = dtel__session_query_many(
		s, m->cmds, m->n, m->window, timeout_ms, m->replies, m->results, &sent);

	*ret_sent = sent > 0;
	return ret;
}

/* Every reply came (each its own result); an error ended the connection otherwise. */
static bool
answered_many(int ret)
{
	return ret == 0;
}

int
dtel_shared_query_many(struct dtel_shared *shared, const char *const *cmds, size_t n,
	unsigned int window, int timeout_ms, struct dtel_reply *ret_replies, int *ret_results)
{
	struct many_args m = {cmds, n, window, ret_replies, ret_results};
	bool sent;
	int ret;

	ret = dtel__many_prepare(cmds, n, window, timeout_ms, ret_replies, ret_results);
	if (ret < 0 || shared == NULL)
		return ret < 0 ? ret : -EINVAL;
	if (n == 0)
		return 0;
	ret = locked_attempts(shared, timeout_ms, attempt_many, &m, answered_many, &sent);
	/* Nothing asked: the caller's own requests will say why. */
	return !sent && ret < 0 ? ret : 0;
}
