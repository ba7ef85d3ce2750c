/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a request costs the application. Two measures, and a turn of our requests costs the
 * larger of the two:
 *
 *   - the service time of each request, from when the application could start on it (its
 *     send, or the reply before it) to its reply, learnt per command: the least of its last
 *     DTEL__COST_SAMPLES, the time of a reply that did not also wait for a CPU. It is what
 *     the application's thread was held for: a driver that sleeps in the kernel (mlx5's
 *     ethtool ioctls under the RTNL lock) holds its locks and firmware that long while its
 *     CPU time is small;
 *   - where /proc shows the application's thread that serves our connection (appcpu.c), the
 *     CPU time that thread used since our last turn: exactly what the turn cost it on the
 *     CPU, wake-ups included (on a VM a lone request that wakes the thread costs it ten times
 *     a pipelined one, more than its service time).
 *
 * The estimates also size the batches' windows (queue.c) and tell the plugins what a command
 * costs (dtel_shared_cost()).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "shared.h"

/* The command of request @req ("/ethdev/xstats" of "/ethdev/xstats,3") into @buf. */
void
dtel__command_of(const char *req, char *buf)
{
	size_t n = strcspn(req, ",");

	n = n < DTEL__COMMAND_MAX - 1 ? n : DTEL__COMMAND_MAX - 1;
	memcpy(buf, req, n);
	buf[n] = '\0';
}

/* Under state_lock: the cost entry of @cmd, NULL when unknown (@make: a slot for it, the
 * least recently used one when all are taken). */
struct dtel__cmd_cost *
dtel__cost_of(struct dtel_shared *sh, const char *cmd, bool make)
{
	struct dtel__cmd_cost *lru = &sh->costs[0];

	for (int i = 0; i < DTEL__COST_CMDS; i++) {
		struct dtel__cmd_cost *c = &sh->costs[i];

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
cost_add(struct dtel__cmd_cost *c, uint64_t ns)
{
	uint32_t least = UINT32_MAX;

	c->ns[c->next] = ns > UINT32_MAX ? UINT32_MAX : (uint32_t)ns;
	c->next = (c->next + 1) % DTEL__COST_SAMPLES;
	if (c->n < DTEL__COST_SAMPLES)
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
uint64_t
dtel__learn_costs(struct dtel_shared *sh, const char *const *cmds, const struct dtel__io *io)
{
	struct call_cmd cc[CALL_CMDS];
	size_t n = io->answered, ncc = 0;
	uint64_t cost = 0;

	for (size_t i = 0; i < n; i++) {
		char name[DTEL__COMMAND_MAX];
		size_t j = 0;

		dtel__command_of(cmds[i], name);
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
		struct dtel__cmd_cost *c = dtel__cost_of(sh, cc[j].name, true);

		cost_add(c, cc[j].sum / cc[j].k);
		cost += c->est * cc[j].k;
	}
	return cost;
}

/*
 * How late /proc may show a thread's CPU time: the kernel brings a running thread's run time
 * up to date at its next tick or context switch (4 ms at Debian's HZ 250), and we read it
 * just after the reply, before the thread that wrote it has gone back to wait.
 */
#define CPU_LAG_NS (4ull * 1000000u)

/*
 * The owner's: what its turn cost the application, its requests costing @est by their
 * learnt service times: that, or the CPU time the application's thread that serves us spent
 * since our last turn where /proc shows it (nothing else is asked of that thread in between:
 * a reply it had not finished with then is counted now), whichever is larger.
 *
 * A turn whose CPU time showed less than its service time was charged its service time; up
 * to CPU_LAG_NS of the rest may still show, at the next turn. That part is not charged
 * again: a link poll after a 15 ms xstats read was charged a tick of the read's spin, and
 * its link, taken for 10 times dearer, was polled 10 times less often.
 */
uint64_t
dtel__turn_cost(struct dtel_shared *sh, uint64_t est)
{
	uint64_t cpu, used, late;

	if (sh->cpu_fd < 0)
		return est;
	if (dtel__thread_cpu_ns(sh->cpu_fd, &cpu) < 0) {
		close(sh->cpu_fd); /* the thread has gone: estimates alone */
		sh->cpu_fd = -1;
		return est;
	}
	used = cpu >= sh->cpu_ns ? cpu - sh->cpu_ns : 0;
	sh->cpu_ns = cpu;
	late = used < sh->cpu_owed_ns ? used : sh->cpu_owed_ns;
	used -= late;
	sh->cpu_owed_ns = est > used ? est - used : 0;
	if (sh->cpu_owed_ns > CPU_LAG_NS)
		sh->cpu_owed_ns = CPU_LAG_NS;
	return used > est ? used : est;
}

/*
 * The owner's, at a new connection: which thread of the application serves it. Only by the
 * pid SO_PEERCRED gave, the one valid in this process's pid namespace: the greeting's is the
 * application's own getpid(), another process's (or none) here when it runs in a container.
 */
void
dtel__server_thread_of(struct dtel_shared *sh)
{
	uint64_t opened;
	long pid;

	dtel__session_peer(sh->session, &pid, &opened);
	if (sh->cpu_fd >= 0)
		close(sh->cpu_fd);
	sh->cpu_fd = -1;
	sh->cpu_owed_ns = 0;
	if (pid <= 0)
		return; /* not visible from here: the estimates alone */
	if (dtel__server_thread(pid, opened, &sh->cpu_fd, NULL) == 0 &&
		dtel__thread_cpu_ns(sh->cpu_fd, &sh->cpu_ns) < 0) {
		close(sh->cpu_fd);
		sh->cpu_fd = -1;
	}
}

int
dtel_shared_cost(struct dtel_shared *shared, const char *cmd, uint64_t *ret_ns)
{
	char name[DTEL__COMMAND_MAX];
	const struct dtel__cmd_cost *c;
	int ret = -ENOENT;

	if (shared == NULL || cmd == NULL || ret_ns == NULL)
		return -EINVAL;
	dtel__command_of(cmd, name);
	pthread_mutex_lock(&shared->state_lock);
	c = dtel__cost_of(shared, name, false);
	if (c != NULL && c->n > 0) {
		*ret_ns = c->est;
		ret = 0;
	}
	pthread_mutex_unlock(&shared->state_lock);
	return ret;
}
