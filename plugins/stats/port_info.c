/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdktel_stats' port facts: /ethdev/info of a port (name, driver, MAC, ...) as the
 * port_info value, read again only when the port changed.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "instance.h"

/*
 * port_info "<device>,<driver>,<mac>,<numa>" (docs/metrics.md): the names an operator knows
 * the port by, for Prometheus to join onto the port's series.
 */
static void
make_port_info(struct port_state *ps)
{
	static const size_t max[] = {64, 32, 18, 12}; /* 126 bytes: within DATA_MAX_NAME_LEN */
	char driver[64], numa[16];
	const char *parts[] = {ps->info.name, driver, ps->info.mac_addr, numa};

	dtp_port_driver(ps->info.name, "/sys", driver, sizeof(driver));
	snprintf(numa, sizeof(numa), "%d", ps->info.numa_node);
	if (dtp_info_instance(ps->info_ti, sizeof(ps->info_ti), parts, max, 4) < 0)
		ps->info_ti[0] = '\0';
}

/*
 * /ethdev/info of the port into ps->info. Port configuration changes while the application
 * runs (testpmd "port config all rxq 4", Open vSwitch's n_rxq and mtu_request, a port
 * detached and another device attached at its id), so it is asked again when the port may
 * have changed (st_port_changed()), and at least every PortInfoInterval. @must: what was known
 * may be wrong: when the request fails, nothing is dispatched of it until it answers.
 */
static void
fetch_info(struct stats_instance *si, struct port_state *ps, cdtime_t now, bool must)
{
	struct dtel_port_info info;
	char was_ti[DATA_MAX_NAME_LEN];
	struct dtel_reply r;
	int ret;

	snprintf(was_ti, sizeof(was_ti), "%s", ps->have_info ? ps->info_ti : "");
	ps->info_read = now;
	if (st_query_id(si, "/ethdev/info", ps->id, &r) < 0) {
		if (must)
			ps->have_info = false;
		return;
	}
	ret = dtel_parse_port_info(&r, &info);
	dtel_reply_release(&r);
	if (ret < 0 || info.port_id != ps->id) {
		if (ret < 0)
			st_bad_port_reply(si, ps, "/ethdev/info", ret, 1);
		else
			si->t.invalid++; /* the answer for another port (the 22.11 race) */
		if (must)
			ps->have_info = false;
		return;
	}
	ps->info = info;
	ps->have_info = true;
	ps->info_next = now + DOUBLE_TO_CDTIME_T(si->o->port_info_interval);
	make_port_info(ps);
	if (was_ti[0] != '\0' && strcmp(was_ti, ps->info_ti) != 0)
		LOG(LOG_INFO,
			"instance '%s' port %u is now %s (was %s): port_info follows (the old "
			"series "
			"stops)",
			si->t.name, ps->id, ps->info_ti, was_ti);
}

/* A sign that the port may have changed (its xstats names, counters that went back): its
 * /ethdev/info is asked again at once, once per read. */
void
st_port_changed(struct stats_instance *si, struct port_state *ps, cdtime_t now)
{
	if (ps->info_read == now)
		return; /* asked in this read already */
	fetch_info(si, ps, now, true);
}

/* /ethdev/info, first of a port's sources (its dev_flags tell read_xstats whether the
 * per-queue xstats will do): when it is not known, when a sign of change was seen, and every
 * PortInfoInterval. Its values go out after the other sources (st_dispatch_info()), which may
 * see a change and ask it again. */
void
st_read_info(
	struct stats_instance *si, struct port_state *ps, const struct dtp_id *id, const char *cmd)
{
	(void)cmd;
	if (!ps->have_info)
		fetch_info(si, ps, id->time, true);
	else if (id->time >= ps->info_next)
		fetch_info(si, ps, id->time, false);
}

/* port_queues, port_mtu and port_info at every read, so that no series of them goes stale
 * while the port is there; the port_info of a device the port no longer is goes no more. */
void
st_dispatch_info(
	struct stats_instance *si, struct port_state *ps, const struct dtp_id *id, const char *cmd)
{
	(void)si, (void)cmd;
	if (!ps->have_info)
		return;
	dtp_gauge(id, "port_queues", NULL, (double[]){ps->info.nb_rx_queues, ps->info.nb_tx_queues},
		2);
	st_gauge(id, "port_mtu", NULL, ps->info.mtu);
	if (ps->info_ti[0] != '\0')
		st_gauge(id, "port_info", ps->info_ti, 1);
}
