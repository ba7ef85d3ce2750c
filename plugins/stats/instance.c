/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdktel_stats' instances: configured or discovered (RuntimeDir), their start (session,
 * budget, read callback) and retirement.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "instance.h"

static int start_discovered(const char *name, const char *path);
static void instance_retire(void *inst);

/* Every instance, configured or discovered, so that discovery knows which sockets it has. */
struct dtp_instances st_instances = DTP_INSTANCES_INIT(PLUGIN, start_discovered, instance_retire);

/* The free_func of the instance's read callback: collectd calls it when the callback is
 * unregistered, at shutdown, and when registering it failed. */
static void
instance_free(void *p)
{
	struct stats_instance *si = p;

	if (si == NULL)
		return;
	dtp_instances_remove(&st_instances, si);
	dtp_budget_fini(&si->budget);
	dtp_target_fini(&si->t);
	for (size_t i = 0; i < si->nports; i++) {
		dtel_xstats_clear(&si->ports[i].known);
		free(si->ports[i].xkinds);
		stats_drops_free(&si->ports[i].drops);
	}
	free(si->ports);
	free(si->port_ids);
	free(si->lcores);
	free(si->cmd_state);
	stats_devices_fini(&si->devices);
	stats_memory_free(&si->mem);
	free(si);
}

/* Create an instance and register its read callback; 0 or -1. */
int
st_instance_start(const char *name, const char *path, const struct stats_opts *o, bool discovered)
{
	struct stats_instance *si = calloc(1, sizeof(*si));
	char cb[DTP_NAME_MAX + 32];
	int ret;

	if (si == NULL ||
		dtp_target_init(&si->t, PLUGIN, name, path, (int)(o->timeout * 1000 + 0.5)) < 0 ||
		dtp_budget_init(&si->budget, &si->t, "read", o->read_load, o->max_app_load) < 0) {
		LOG(LOG_ERR, "instance '%s': cannot set up a session for %s", name, path);
		if (si != NULL) {
			dtp_budget_fini(&si->budget);
			dtp_target_fini(&si->t);
		}
		free(si);
		return -1;
	}
	si->o = o;
	si->discovered = discovered;
	si->nport_ids = -1;
	st_tiers_reset(si);
	ret = dtp_instances_add(&st_instances, si, &si->t, discovered);
	if (ret < 0) {
		LOG(LOG_ERR, "instance '%s' (%s): %s", name, path,
			ret == -EEXIST ? "another instance has that name" : "out of memory");
		instance_free(si);
		return -1;
	}
	/* Each instance's callback is "dpdktel_stats/<name>", discovery's is "dpdktel_stats":
	 * names are unique, so collectd refuses none of them but for lack of memory. */
	snprintf(cb, sizeof(cb), PLUGIN "/%s", name);
	if (plugin_register_complex_read(PLUGIN, cb, stats_read, 0,
		    &(user_data_t){.data = si, .free_func = instance_free}) != 0) {
		/* collectd 5.12 has called instance_free already (plugin_register_complex_read
		 * frees the user data of a callback it refuses): si is gone. */
		LOG(LOG_ERR, "instance '%s': cannot register its read callback", name);
		return -1;
	}
	LOG(LOG_INFO, "collecting DPDK application '%s' at %s%s", name, path,
		discovered ? " (discovered)" : "");
	return 0;
}

/*
 * A discovered instance whose application has been gone for RetireAfter: its read callback
 * is unregistered, and collectd frees it (instance_free) on a read thread once a read that
 * may be running has returned. Until then it stays listed; it is not retired twice.
 */
static void
instance_retire(void *p)
{
	struct stats_instance *si = p;
	char cb[DTP_NAME_MAX + 32];

	snprintf(cb, sizeof(cb), PLUGIN "/%s", si->t.name);
	if (plugin_unregister_read(cb) != 0)
		LOG(LOG_ERR, "instance '%s': cannot unregister its read callback", si->t.name);
}

static int
start_discovered(const char *name, const char *path)
{
	return st_instance_start(name, path, st_conf.global, true);
}

int
st_discover_read(user_data_t *ud)
{
	(void)ud;
	dtp_instances_discover(
		&st_instances, &st_conf, (uint64_t)(st_conf.retire_after * 1000), dtp_now_ms());
	return 0;
}
