/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdktel_events: link and lcore health of DPDK applications, as values and as collectd
 * notifications, detected within a few poll intervals (docs/dpdktel_events.md).
 *
 * Each instance has its own poll thread, so a hung application never slows another one.
 * Every PollInterval it reads link states (/fwd/ports where the application has it, else
 * /ethdev/link_status of each port) and lcore health (/fwd/lcores, or on DPDK >= 23.03 the
 * cycles of every lcore in one /eal/lcore/usage), through libdpdktel's shared session for
 * the socket. A change is reported only when a second query agrees: DPDK 22.11 to 25.11 can
 * hand a client another client's parameters (26.07 cannot: no second query there).
 * Notifications go out the moment a change is confirmed; the collectd read callback
 * dispatches the latest state of everything at each interval, and discovers new sockets.
 *
 * What lives where (plugins/events/):
 *   dpdktel_events.c  this file: collectd glue only (options, config, init, read, shutdown,
 *                     registration)
 *   instance.h        struct ev_instance, and what each file below gives the others
 *   instance.c        instances, configured or discovered: start, stop, retirement
 *   poll.c            the poll thread: one poll is read, judge, confirm, apply, publish
 *   read.c            the poll's reads: every source due, charged to its kind of poll
 *   liveness.c        whether the application answers: the poll's outcome, restarts, and
 *                     the verdict (gone, back, not responding, answering again)
 *   confirm.c         the second query of each candidate change
 *   apply.c           confirmed readings into the state machines, transitions notified
 *   notify.c          the notifications' texts and meta data
 *   publish.c         the snapshot the read callback dispatches, and when values go out
 *   machines.h, link.c, lcore.c  the state machines: pure, unit-tested row by row
 *   netdev.h          the kernel netdev as a link source (rtnetlink), no collectd in it:
 *                     netdev.c the socket in the application's network namespace, netlink.c
 *                     its messages, netdev_map.c which netdev backs a port
 * Shared with dpdktel_stats: plugins/common/ (dtp.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/dtp.h"
#include "instance.h"

static const struct events_opts defaults = {
	.poll_interval = 0.02,
	.ports.all = true,
	.link = true,
	.link_confirm = true,
	.lcores = true,
	.instance_events = true,
	.initial_state = true,
	.flap_window = 10,
	.flap_threshold = 3,
	.stall_threshold = 0,
	.timeout = 0.2,
	.not_responding_polls = 3,
	.poll_load = DTP_LOAD_DEFAULT,
	.max_app_load = DTP_MAX_APP_LOAD_UNSET,
	.down_poll_interval = 3,
	.link_netdev = true,
};

#define PORT_NETDEV_EXPECT "one or more \"<port id>=<netdev>\" such as \"0=eth3\""

/* PortNetdev "0=eth3" "1=eth4": the netdev of a port where it cannot be told. Port ids are
 * one application's: <Instance> blocks only. */
static int
port_netdev_parse(struct dtp_conf *c, const oconfig_item_t *ci, const char *where, void *field)
{
	struct ev_port_netdevs *pn = field;
	char why[EV_NETDEV_WHY_MAX], vals[256];
	int errors = c->errors;

	if (where[0] == '\0')
		dtp_conf_error(c, where,
			"option 'PortNetdev' belongs in an <Instance \"name\"> block (port ids are "
			"an application's own); did you forget to add one?");
	else if (ci->values_num < 1)
		dtp_conf_error(c, where,
			"option 'PortNetdev' has the invalid value no value: "
			"expected " PORT_NETDEV_EXPECT);
	for (int i = 0; c->errors == errors && i < ci->values_num; i++) {
		const char *v = ci->values[i].value.string;
		struct ev_port_netdev e, *nv;

		if (ci->values[i].type != OCONFIG_TYPE_STRING) {
			dtp_conf_error(c, where,
				"option 'PortNetdev' has the invalid value %s: "
				"expected " PORT_NETDEV_EXPECT,
				dtp_conf_describe(ci, vals, sizeof(vals)));
		} else if (ev_netdev_parse_spec(v, &e.port, e.ifname, why, sizeof(why)) < 0) {
			dtp_conf_error(c, where,
				"option 'PortNetdev' has the invalid value \"%s\": %s", v, why);
		} else if (ev_port_netdev_of(pn, e.port) != NULL) {
			dtp_conf_error(c, where,
				"option 'PortNetdev' names port %u twice (\"%u=%s\" and \"%s\"): "
				"expected one netdev per port",
				e.port, e.port, ev_port_netdev_of(pn, e.port), v);
		} else if ((nv = realloc(pn->v, (pn->n + 1) * sizeof(*nv))) == NULL) {
			dtp_conf_error(c, where, "out of memory");
		} else {
			pn->v = nv;
			pn->v[pn->n++] = e;
		}
	}
	return c->errors == errors ? 0 : -1;
}

static void
port_netdev_free(void *field)
{
	struct ev_port_netdevs *pn = field;

	free(pn->v);
	memset(pn, 0, sizeof(*pn));
}

#define OPT(...) DTP_OPT(events_opts, __VA_ARGS__)
#define BOOL_OPT(...) DTP_BOOL_OPT(events_opts, __VA_ARGS__)

static const struct dtp_option options[] = {
	OPT("PollInterval", DTP_OPT_SECONDS, poll_interval, 0.001, 60,
		"seconds between polls, at least 0.001 and at most 60"),
	DTP_PORTS_OPT(events_opts),
	BOOL_OPT("Link", link),
	BOOL_OPT("LinkConfirm", link_confirm),
	OPT("FlapWindow", DTP_OPT_SECONDS, flap_window, 0.01, 86400,
		"seconds, more than 0 and at most 86400"),
	OPT("FlapThreshold", DTP_OPT_UINT, flap_threshold, 2, 1000,
		"a number of link changes from 2 to 1000"),
	BOOL_OPT("Lcores", lcores),
	OPT("StallThreshold", DTP_OPT_SECONDS, stall_threshold, 0.001, 3600,
		"seconds without a heartbeat, more than 0 and at most 3600"),
	BOOL_OPT("InstanceEvents", instance_events),
	BOOL_OPT("ReportInitialState", initial_state),
	DTP_TIMEOUT_OPT(events_opts),
	OPT("NotRespondingPolls", DTP_OPT_UINT, not_responding_polls, 1, 1000,
		"a number of unanswered polls from 1 to 1000"),
	OPT("PollLoad", DTP_OPT_NUMBER, poll_load, 0, 50,
		"a percentage of one core from 0.01 to 50, or 0 for no budget: the most time the "
		"application's telemetry thread may spend answering this plugin's polls"),
	DTP_MAX_APP_LOAD_OPT(events_opts),
	OPT("DownPollInterval", DTP_OPT_SECONDS, down_poll_interval, 0.001, 3600,
		"seconds between two polls of a port whose link is down, more than 0 and at most "
		"3600"),
	BOOL_OPT("LinkNetdev", link_netdev),
	{"PortNetdev", DTP_OPT_CUSTOM, offsetof(struct events_opts, port_netdev),
		sizeof(struct ev_port_netdevs), DTP_OPT_INSTANCE, 0, 0, PORT_NETDEV_EXPECT,
		port_netdev_parse, port_netdev_free},
};

struct dtp_conf ev_conf;

/* At each interval: the latest state of everything, whether it changed or not. */
static int
events_read(user_data_t *ud)
{
	void **list;
	size_t n;

	(void)ud;
	if (ev_conf.discover)
		ev_discover();
	/* Instances are freed only here (discovery retires them) and at shutdown, and collectd
	 * never runs one read callback on two threads at once: a copy of the list is safe. */
	n = dtp_instances_take(&ev_instances, false, &list);
	for (size_t i = 0; i < n; i++)
		ev_dispatch_snapshot(list[i]);
	free(list);
	return 0;
}

/* The conf starts at the first <Plugin> block, or in init for <LoadPlugin> alone. */
#define CONF_ARGS PLUGIN, options, sizeof(options) / sizeof(options[0]), &defaults, sizeof(defaults)

static int
events_config(oconfig_item_t *ci)
{
	return dtp_conf_config(&ev_conf, CONF_ARGS, ci);
}

static const char *const types[] = {"link_status", "link_speed", "link_changes", "link_flapping",
	"lcore_state", "heartbeat_age", "stalls", "percent", "up", "not_responding", "restarts",
	"telemetry_requests", "app_load", "poll_interval", "detection_bound"};

/* PollInterval must leave room for a request that times out. */
static int
check_poll(const struct dtp_conf *c)
{
	const struct events_opts *g = c->global;
	int errors = 0;

	/* The <Plugin> block first; an instance only for values of its own (an inherited pair
	 * was reported with the block already). */
	for (size_t k = 0; k <= c->ninst; k++) {
		size_t i = k == 0 ? c->ninst : k - 1;
		const struct events_opts *o = i < c->ninst ? c->inst[i].opts : g;

		if (o->flap_window >= o->poll_interval ||
			(o != g && o->flap_window == g->flap_window &&
				o->poll_interval == g->poll_interval))
			continue;
		LOG(LOG_ERR,
			"%s%s%sFlapWindow %g is shorter than PollInterval %g: expected a window "
			"of several polls",
			i < c->ninst ? "<Instance \"" : "", i < c->ninst ? c->inst[i].name : "",
			i < c->ninst ? "\">: " : "", o->flap_window, o->poll_interval);
		errors++;
	}
	return errors ? -1 : 0;
}

static int
events_init(void)
{
	LOG(LOG_INFO, "dpdktel %s (libdpdktel %s)", DPDKTEL_VERSION, dtel_version());
	if (dtp_conf_init(&ev_conf, CONF_ARGS) < 0)
		return -1;
	if (dtp_conf_validate(&ev_conf) < 0 || check_poll(&ev_conf) < 0) {
		LOG(LOG_ERR, "configuration errors (see above): not watching anything");
		return -1;
	}
	if (!dtp_types_defined(
		    PLUGIN, types, sizeof(types) / sizeof(types[0]), "docs/dpdktel_events.md"))
		return -1;
	dtp_say_max_app_load(PLUGIN,
		dtp_conf_max_app_load(&ev_conf, offsetof(struct events_opts, max_app_load)));
	for (size_t i = 0; i < ev_conf.ninst; i++)
		if (ev_instance_start(ev_conf.inst[i].name, ev_conf.inst[i].socket_path,
			    ev_conf.inst[i].opts, false) < 0)
			return -1;
	if (ev_conf.discover)
		ev_discover();
	return plugin_register_complex_read(PLUGIN, PLUGIN, events_read, 0, NULL);
}

static int
events_shutdown(void)
{
	void **list;
	size_t n = dtp_instances_take(&ev_instances, true, &list);

	for (size_t i = 0; i < n; i++)
		ev_instance_stop(list[i]);
	for (size_t i = 0; i < n; i++) {
		struct ev_instance *ei = list[i];

		if (ei->running)
			pthread_join(ei->thread, NULL);
		ev_instance_free(ei);
	}
	free(list);
	dtp_instances_forget(&ev_instances);
	dtp_conf_free(&ev_conf);
	return 0;
}

__attribute__((visibility("default"))) void
module_register(void)
{
	plugin_register_complex_config(PLUGIN, events_config);
	plugin_register_init(PLUGIN, events_init);
	plugin_register_shutdown(PLUGIN, events_shutdown);
}
