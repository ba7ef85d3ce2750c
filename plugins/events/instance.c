/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdktel_events' instances: configured or discovered, their start (session, budget,
 * poll thread), stop and retirement.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "instance.h"

static int start_discovered(const char *name, const char *path);
static void instance_retire(void *inst);

/* Every instance, configured or discovered (plugins/common/instances.c). */
struct dtp_instances ev_instances = DTP_INSTANCES_INIT(PLUGIN, start_discovered, instance_retire);

void
ev_instance_free(struct ev_instance *ei)
{
	if (ei == NULL)
		return;
	dtp_instances_remove(&ev_instances, ei);
	for (int k = 0; k < POLL_KINDS; k++)
		dtp_budget_fini(&ei->budget[k]);
	dtp_target_fini(&ei->t);
	ev_forget_state(ei);
	free(ei->link_ids);
	free(ei->sched);
	free(ei->snap.sched);
	pthread_mutex_destroy(&ei->lock);
	pthread_mutex_destroy(&ei->dispatch_lock);
	if (ei->wake_fd >= 0)
		close(ei->wake_fd);
	free(ei->ports);
	free(ei->lcores);
	free(ei->snap.ports);
	free(ei->snap.lcores);
	free(ei->port_sent);
	free(ei->lcore_sent);
	free(ei);
}

static int
budgets_init(struct ev_instance *ei)
{
	static const char *const what[POLL_KINDS] = {"link poll", "lcore poll", "liveness poll"};

	for (int k = 0; k < POLL_KINDS; k++)
		if (dtp_budget_init(&ei->budget[k], &ei->t, what[k], ei->o->poll_load,
			    ei->o->max_app_load) < 0)
			return -1;
	return 0;
}

int
ev_instance_start(const char *name, const char *path, const struct events_opts *o, bool discovered)
{
	struct ev_instance *ei = calloc(1, sizeof(*ei));
	char tname[16];
	int ret;

	if (ei == NULL)
		return -1;
	pthread_mutex_init(&ei->lock, NULL);
	pthread_mutex_init(&ei->dispatch_lock, NULL);
	/* The poll thread waits in poll() on it and on the netdev's socket (poll.c). */
	ei->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ei->o = o;
	ei->discovered = discovered;
	ei->link_conf = (struct events_link_conf){
		.flap_window_ms = (uint64_t)(o->flap_window * 1000 + 0.5),
		.flap_threshold = o->flap_threshold,
		.report_initial = o->initial_state,
	};
	if (ei->wake_fd < 0 ||
		dtp_target_init(&ei->t, PLUGIN, name, path, (int)(o->timeout * 1000 + 0.5)) < 0)
		goto fail;
	ei->t.prio = DTEL_PRIO_POLL; /* before its budget classes: polls */
	if (budgets_init(ei) < 0)
		goto fail;
	ret = dtp_instances_add(&ev_instances, ei, &ei->t, discovered);
	if (ret == -EEXIST) {
		LOG(LOG_ERR, "instance '%s' (%s): another instance has that name", name, path);
		ev_instance_free(ei);
		return -1;
	}
	if (ret < 0)
		goto fail;
	snprintf(tname, sizeof(tname), "dtev/%.10s", name);
	if (plugin_thread_create(&ei->thread, ev_poll_thread, ei, tname) != 0) {
		LOG(LOG_ERR, "instance '%s': cannot start its poll thread", name);
		return -1; /* stays in the list, freed at shutdown */
	}
	ei->running = true;
	LOG(LOG_INFO, "watching DPDK application '%s' at %s every %g s%s", name, path,
		o->poll_interval, discovered ? " (discovered)" : "");
	return 0;
fail:
	LOG(LOG_ERR, "instance '%s': cannot set up a session for %s", name, path);
	ev_instance_free(ei);
	return -1;
}

/* Ask the poll thread to stop; it ends after the poll in progress. */
void
ev_instance_stop(struct ev_instance *ei)
{
	pthread_mutex_lock(&ei->lock);
	ei->stop = true;
	pthread_mutex_unlock(&ei->lock);
	if (eventfd_write(ei->wake_fd, 1) < 0)
		LOG(LOG_ERR, "instance '%s': cannot wake its poll thread: %s", ei->t.name,
			strerror(errno));
}

/*
 * A discovered instance whose application has been gone for RetireAfter: unlisted, its
 * poll thread stopped and joined (it ends after the poll in progress, whose requests are
 * bounded by Timeout; to a gone application they fail at once), and freed. Discovery calls
 * this from the read callback, which is the only other user of instance pointers (it copies
 * the list after discovery), and collectd never runs it on two threads at once.
 */
static void
instance_retire(void *p)
{
	struct ev_instance *ei = p;

	dtp_instances_remove(&ev_instances, ei);
	ev_instance_stop(ei);
	if (ei->running)
		pthread_join(ei->thread, NULL);
	ev_instance_free(ei);
}

static int
start_discovered(const char *name, const char *path)
{
	return ev_instance_start(name, path, ev_conf.global, true);
}

void
ev_discover(void)
{
	dtp_instances_discover(
		&ev_instances, &ev_conf, (uint64_t)(ev_conf.retire_after * 1000), dtp_now_ms());
}
