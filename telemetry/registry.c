/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The process-wide registry of shared sessions: one connection per socket path (DPDK 22.11's
 * strtok() race, see dtel.h), connecting it, and which process holds the socket. What each
 * other file of the shared session keeps: shared.h.
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

#include "shared.h"

#define BACKOFF_FIRST_NS (25ull * 1000000u)
#define BACKOFF_MAX_NS (1000ull * 1000000u)

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

void
dtel__shared_set_status(struct dtel_shared *sh, int err, bool connected)
{
	pthread_mutex_lock(&sh->state_lock);
	sh->status.last_error = err;
	sh->status.connected = connected;
	pthread_mutex_unlock(&sh->state_lock);
}

static void
sock_id_of(const char *path, struct dtel__sock_id *ret)
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
sock_id_equal(const struct dtel__sock_id *a, const struct dtel__sock_id *b)
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
	struct dtel__sock_id now;
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
	dtel__server_thread_of(sh);
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

void
dtel__shared_close(struct dtel_shared *sh)
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
int
dtel__shared_connect(struct dtel_shared *sh, uint64_t deadline_ns)
{
	struct dtel__sock_id now;
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
	/* Waiting for the greeting is waiting for the application. */
	__atomic_store_n(&sh->serving_since_ns, dtel__now_ns(), __ATOMIC_RELAXED);
	ret = dtel__session_open_until(sh->path, deadline_ns, &sh->session, &peer);
	__atomic_store_n(&sh->serving_since_ns, 0, __ATOMIC_RELAXED);
	if (ret == 0) {
		note_connect(sh, peer);
		return 0;
	}
	note_ungreeted(sh, peer);
	if (connect_refused(ret))
		note_refused(sh);
	return ret;
}
