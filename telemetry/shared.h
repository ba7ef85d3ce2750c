/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A shared session's insides, for the files that each keep one rule of it (nothing here is
 * exported from libdpdktel.so):
 *
 *   registry.c  one shared session per socket path; connecting, backing off, and which
 *               process holds the socket (generations);
 *   request.c   dtel_shared_request() and dtel_shared_request_many(): a turn, the owner's
 *               attempts on the connection, and what the turn cost;
 *   queue.c     who sends next: polls before reads, a batch of reads yields to a poll, how
 *               much of our own work a batch keeps queued, and why a request that waited
 *               was not sent (-EBUSY, our queue, or -ETIMEDOUT, the application);
 *   cost.c      what a request costs the application: the service times learnt per command,
 *               and per turn the larger of those and the CPU time of the application's
 *               thread that serves us (appcpu.c);
 *   budget.c    the load of each priority over the last seconds, and the budgets: classes of
 *               periodic work, granted a share of their priority's budget (plan.c decides);
 *   plan.c      pure arithmetic of the budgets (max-min shares, per-port link periods, the
 *               stats read tiers), exported for the plugins and unit-tested alone.
 *
 * Locking: state_lock guards everything but the owner's fields, and is never held across I/O.
 */
#ifndef DTEL_SHARED_H
#define DTEL_SHARED_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "dtel_private.h"

/* Service times kept per command, and commands kept per shared session (least recently used
 * out). */
#define DTEL__COST_SAMPLES 16
#define DTEL__COST_CMDS 32
/* Seconds of load dtel_shared_load() averages over. */
#define DTEL__LOAD_SECONDS 10
#define DTEL__PRIOS 2

/* What one command costs the application. */
struct dtel__cmd_cost {
	char name[DTEL__COMMAND_MAX]; /* "": a free slot */
	uint32_t ns[DTEL__COST_SAMPLES]; /* the last service times (ns, at most ~4.3 s) */
	unsigned int n, next;
	uint64_t used; /* for least recently used */
	uint64_t est; /* the least of ns[] */
};

/* Which socket file a path names: inode and change time (a new socket, or new permissions). */
struct dtel__sock_id {
	dev_t dev;
	ino_t ino; /* 0: no socket file there */
	struct timespec ctime;
};

struct dtel_shared_class {
	struct dtel_shared *sh;
	struct dtel_shared_class *next; /* sh->classes, under state_lock */
	unsigned int prio; /* enum dtel_prio */
	double budget; /* its priority's budget (fraction of one core), 0: none */
	double cap; /* on everything of the session: < 0 not set, 0 no budget at all */
	double demand; /* what it wants, fraction of one core */
	double alloc; /* what it was granted */
	/* dtel_shared_class_plan()'s: */
	double round_ns; /* smoothed cost of one round, 0: not known yet */
	unsigned int rounds; /* rounds of known cost so far */
	uint64_t interval_ns; /* the last one given, 0: none yet */
};

struct dtel_shared {
	struct dtel_shared *next; /* registry list, under registry_lock */
	unsigned int refs; /* under registry_lock */
	char path[DTEL_PATH_MAX];

	/* The owner's (busy): */
	struct dtel_session *session;
	/* What our requests really cost: the CPU time of the application's thread that serves
	 * this connection (appcpu.c), its schedstat open on cpu_fd (-1: not known), and its
	 * reading after our last turn; cpu_owed_ns: of the last turn's service time, what that
	 * reading did not show yet and was charged (cost.c). */
	int cpu_fd;
	uint64_t cpu_ns;
	uint64_t cpu_owed_ns;
	unsigned int failures; /* consecutive refused connects */
	uint64_t retry_at_ns; /* no connect attempt before this */
	struct dtel__sock_id failed_at; /* the socket file at the last failure */

	pthread_mutex_t state_lock;
	pthread_cond_t turn; /* CLOCK_MONOTONIC: the owner gave the connection back */
	struct dtel_shared_status status;
	bool busy; /* a thread owns the connection */
	/* Threads waiting for it, by priority, and polls in progress: written under state_lock,
	 * read atomically by the owner (dtel__poll_waiting()). */
	unsigned int waiting[DTEL__PRIOS];
	unsigned int polls;
	/* When the application started on the owner's request now awaited (atomic), 0: none,
	 * and how long the owner waits for it (its timeout). */
	uint64_t serving_since_ns;
	uint64_t serving_timeout_ns;
	struct dtel__cmd_cost costs[DTEL__COST_CMDS];
	uint64_t cost_clock;
	uint64_t load_ns[DTEL__PRIOS][DTEL__LOAD_SECONDS]; /* cost in each of the last seconds */
	uint64_t load_sec; /* the second load_ns[][load_sec % DTEL__LOAD_SECONDS] is of */
	struct dtel_shared_class *classes;
	/* The process of the current generation, under state_lock: see registry.c
	 * note_owner_locked(). */
	struct dtel__owner gen;
};

/* registry.c */
int dtel__shared_connect(struct dtel_shared *sh, uint64_t deadline_ns);
void dtel__shared_close(struct dtel_shared *sh);
void dtel__shared_set_status(struct dtel_shared *sh, int err, bool connected);

/* queue.c */
int dtel__take_turn(struct dtel_shared *sh, struct dtel_request *rq, uint64_t deadline_ns);
void dtel__give_turn_locked(struct dtel_shared *sh);
bool dtel__poll_waiting(void *arg);
unsigned int dtel__batch_window(
	struct dtel_shared *sh, const char *const *cmds, size_t n, unsigned int want);

/* cost.c */
void dtel__command_of(const char *req, char *buf);
struct dtel__cmd_cost *dtel__cost_of(struct dtel_shared *sh, const char *cmd, bool make);
uint64_t dtel__learn_costs(
	struct dtel_shared *sh, const char *const *cmds, const struct dtel__io *io);
uint64_t dtel__turn_cost(struct dtel_shared *sh, uint64_t est);
void dtel__server_thread_of(struct dtel_shared *sh);

/* budget.c */
void dtel__load_add_locked(struct dtel_shared *sh, unsigned int prio, uint64_t cost_ns);

#endif /* DTEL_SHARED_H */
