/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdktel_stats' read orchestration: what is due in this read, the port list, the
 * prefetch of every port's request in one send, the ports, the rest (lcores, memory,
 * devices, commands), the instance's health values, and the next read within the budget.
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
 * What the application offers, from its command list: once per generation, and again at
 * each read while it is starting (it registers its own commands after the EAL opened the
 * socket).
 */
static void
probe_caps(struct stats_instance *si)
{
	if (dtp_caps_read(st_query_fn, si, &si->t, &si->caps) < 0)
		memset(&si->caps, 0, sizeof(si->caps));
	si->caps_generation = si->t.generation;
	si->caps_young = dtp_target_young(&si->t);
}

static void
read_uptime(struct stats_instance *si, const struct dtp_id *id)
{
	const struct dtel_entry *e;
	struct dtel_reply r;
	struct dtel_dict d;
	double up = -1;

	if (si->caps.fwd_info && st_query(si, "/fwd/info", &r) == 0) {
		if (dtel_parse_dict(&r, "/fwd/info", &d) == 0) {
			e = dtel_dict_find(&d, "uptime_ms");
			if (e != NULL && e->type == DTEL_VALUE_U64)
				up = (double)e->v.u64 / 1000.0;
			dtel_dict_clear(&d);
		}
		dtel_reply_release(&r);
	}
	if (up < 0)
		up = dtp_target_uptime(&si->t);
	if (up >= 0)
		st_gauge(id, "uptime", NULL, up);
}

/*
 * instance_info "<dpdk release>,<program>,<pid>,<dpdktel version>" (docs/metrics.md): what
 * runs behind the instance. It changes with each application process (its old series then
 * goes stale), so it is made once per generation.
 */
static void
dispatch_instance_info(struct stats_instance *si, const struct dtp_id *id)
{
	static const size_t max[] = {32, 32, 24, 32};
	char comm[32], pid[24];
	const char *parts[] = {si->t.dpdk_release, comm, pid, DPDKTEL_VERSION};

	if (si->info_generation != si->t.generation || si->info_ti[0] == '\0') {
		si->info_generation = si->t.generation;
		dtp_proc_comm(si->t.pid, comm, sizeof(comm));
		snprintf(pid, sizeof(pid), "%ld", si->t.pid);
		if (dtp_info_instance(si->info_ti, sizeof(si->info_ti), parts, max, 4) < 0)
			si->info_ti[0] = '\0';
	}
	if (si->info_ti[0] != '\0')
		st_gauge(id, "instance_info", si->info_ti, 1);
}

/* The instance's health; @read_seconds < 0: no read this time (the budget stretched them). */
void
st_dispatch_health(struct stats_instance *si, cdtime_t now, double read_seconds)
{
	double interval = si->plan.interval_ns > 0 ? (double)si->plan.interval_ns / 1e9
						   : CDTIME_T_TO_DOUBLE(plugin_get_interval());
	double xinterval = CDTIME_T_TO_DOUBLE(st_xstats_interval(si));
	struct dtp_id id;

	dtp_id_instance(&id, PLUGIN, si->t.name, now);
	si->t.invalid += (uint64_t)dtp_dispatch_health(&id, &si->t);
	if (read_seconds >= 0)
		dtp_gauge(&id, "duration", "read", &read_seconds, 1);
	dtp_gauge(&id, "poll_interval", "read", &interval, 1);
	if (si->o->xstats || si->o->per_queue)
		dtp_gauge(&id, "poll_interval", "xstats", &xinterval, 1);
}

/* What is known of a port that is gone (its id may come back as another device) or of an
 * application process that is gone: learnt again from the next replies. */
static void
forget_port(struct port_state *ps)
{
	ps->have_info = false;
	ps->queues_moved = 0;
	ps->hide_zero = false; /* another device, maybe of another release */
	ps->have_link = false;
	ps->names_hash = 0;
	ps->have_counts = false;
	dtel_xstats_clear(&ps->known);
	stats_drops_reset(&ps->drops);
}

static void
on_restart(struct stats_instance *si, long old_pid, cdtime_t now)
{
	struct dtp_meta meta = DTP_META_NONE;
	char old[24], new[24];
	struct dtp_id id;

	snprintf(old, sizeof(old), "%ld", old_pid);
	snprintf(new, sizeof(new), "%ld", si->t.pid);
	meta.old_state = old;
	meta.new_state = new;
	meta.name = si->t.name;
	dtp_id_instance(&id, PLUGIN, si->t.name, now);
	dtp_notify(&id, NOTIF_WARNING, "restarts", NULL, &meta,
		"DPDK application %s restarted (pid %ld → %ld)", si->t.name, old_pid, si->t.pid);
	/* Everything cached belonged to the old process, its costs too. */
	st_tiers_reset(si);
	for (size_t i = 0; i < si->nports; i++)
		forget_port(&si->ports[i]);
	for (size_t i = 0; i < si->nlcores; i++) {
		si->lcores[i].have = false;
		si->lcores[i].info_ti[0] = '\0';
	}
}

/* Whether this read asks /ethdev/list (else it reads the ports of the last list). */
static bool
ports_due(struct stats_instance *si, cdtime_t now)
{
	return si->nport_ids < 0 || si->relist_ports || now >= si->ports_next ||
		!st_same_connection(si, false) || dtp_target_young(&si->t);
}

/* Whether a list has the same ports as the last one. */
static bool
same_ports(const struct stats_instance *si, const uint16_t *ids, int n)
{
	return si->nport_ids == n &&
		(n == 0 || memcmp(si->port_ids, ids, (size_t)n * sizeof(*ids)) == 0);
}

/*
 * The ports of the last list, and when to ask again: in a second, or at the next read when
 * the list changed (a port detached is often one about to be replaced: its successor then
 * shows at the next read). A port that is not in it is gone: if its id comes back, it is
 * another port, learnt anew.
 */
static void
keep_port_list(struct stats_instance *si, uint16_t *ids, int n, cdtime_t now)
{
	bool changed = si->nport_ids >= 0 && !same_ports(si, ids, n);

	for (size_t i = 0; i < si->nports; i++) {
		bool listed = false;

		for (int k = 0; k < n && !listed; k++)
			listed = ids[k] == si->ports[i].id;
		if (!listed)
			forget_port(&si->ports[i]);
	}
	free(si->port_ids);
	si->port_ids = ids;
	si->nport_ids = n;
	si->relist_ports = changed;
	si->ports_next = now + PORT_LIST_EVERY;
}

/*
 * An application without ethdev (a DPDK program built without librte_ethdev): DPDK answers
 * null for a command nobody registered (lib/telemetry/telemetry.c, unknown_command). No port
 * then, but its other sources stand on their own: said once per application process.
 * (Debian's shared build always has ethdev and answers [] when there is no port.)
 */
static void
no_ethdev(struct stats_instance *si, cdtime_t now)
{
	if (si->no_ethdev_generation != si->t.generation) {
		si->no_ethdev_generation = si->t.generation;
		LOG(LOG_INFO,
			"DPDK application '%s' has no ethdev (/ethdev/list answers null): no port "
			"values; its other values are read",
			si->t.name);
	}
	keep_port_list(si, NULL, 0, now);
}

/*
 * /ethdev/list into si->port_ids. 0; -1 when the request failed (the read ends); a list that
 * cannot be used is counted, and the ports of the last one are read; a null one is no port
 * at all (no_ethdev()).
 */
static int
list_ports(struct stats_instance *si, cdtime_t now, long *ret_old_pid, bool *ret_restarted)
{
	struct dtel_reply list;
	uint16_t *ids = NULL;
	int n, ret = st_query(si, "/ethdev/list", &list);

	if (ret < 0 && ret != -ENODATA)
		return -1;
	*ret_restarted = dtp_target_restarted(&si->t, ret_old_pid);
	if (ret == -ENODATA) {
		no_ethdev(si, now);
		return 0;
	}
	n = dtel_parse_port_list(&list, &ids);
	dtel_reply_release(&list);
	if (n < 0) {
		dtp_bad_reply(&si->t, "/ethdev/list", n, 1);
		if (*ret_restarted)
			si->nport_ids = 0; /* none known of this process */
		return 0;
	}
	keep_port_list(si, ids, n, now);
	return 0;
}

/*
 * Send the /ethdev/xstats of ports port_ids[from, to) and the /ethdev/link_status that are
 * due, all at once, for their readers to take (st_query()). Nothing when the read has failed or
 * the ports' state cannot be had: the readers then ask one request at a time.
 */
void
st_prefetch(struct stats_instance *si, int from, int to, cdtime_t now)
{
	const char *cmds[2 * PREFETCH_PORTS];
	struct dtel_reply replies[2 * PREFETCH_PORTS];
	int results[2 * PREFETCH_PORTS];
	size_t n = 0;

	for (int i = from; i < to && !si->halted; i++) {
		struct port_state *ps;

		if (!dtp_ports_has(&si->o->ports, si->port_ids[i]))
			continue;
		ps = st_port_state(si, si->port_ids[i]);
		if (ps == NULL)
			continue;
		if (ps->xstats_now)
			st_xstats_request(ps, si->pre[n++].cmd, sizeof(si->pre[0].cmd));
		else if (si->o->basic && st_xstats_wanted(si, ps))
			snprintf(si->pre[n++].cmd, sizeof(si->pre[0].cmd), "/ethdev/stats,%u",
				ps->id);
		if (st_link_due(si, ps, now))
			snprintf(si->pre[n++].cmd, sizeof(si->pre[0].cmd), "/ethdev/link_status,%u",
				ps->id);
	}
	if (n < 2)
		return; /* nothing to gain */
	for (size_t i = 0; i < n; i++)
		cmds[i] = si->pre[i].cmd;
	dtp_query_many(&si->t, cmds, n, replies, results);
	for (size_t i = 0; i < n; i++) {
		si->pre[i].reply = replies[i];
		si->pre[i].result = results[i];
		si->pre[i].taken = false;
		/* The connection failed there: nothing more is sent in this read (st_query()). */
		if (results[i] < 0 && results[i] != -ENODATA && results[i] != -EMSGSIZE &&
			results[i] != -ECANCELED && results[i] != -ECONNABORTED)
			si->halted = true;
	}
	si->npre = n;
}

static void
read_ports(struct stats_instance *si, cdtime_t now)
{
	for (size_t i = 0; i < si->nports; i++)
		si->ports[i].seen = false;
	for (int i = 0; i < si->nport_ids && !si->stale; i += PREFETCH_PORTS) {
		int to = si->nport_ids - i > PREFETCH_PORTS ? i + PREFETCH_PORTS : si->nport_ids;

		st_prefetch(si, i, to, now);
		for (int j = i; j < to && !si->stale; j++)
			if (dtp_ports_has(&si->o->ports, si->port_ids[j]))
				st_read_port(si, si->port_ids[j], now);
		st_prefetch_release(si);
	}
}

/* Everything but the ports, after them. */
static void
read_rest(struct stats_instance *si, cdtime_t now)
{
	struct dtp_id id;

	if (si->o->app && si->caps.fwd_lcores)
		st_read_fwd_lcores(si, now);
	else if (si->o->app && si->caps.eal_usage)
		st_read_usage_lcores(si, now);
	else if (si->o->app && si->caps.eal_lcore)
		st_read_eal_lcores(si, now);
	st_read_lcore_info(si, now);
	dtp_id_instance(&id, PLUGIN, si->t.name, now);
	if (si->o->memory)
		stats_memory_read(&si->mem, st_query_fn, si, &si->t, &id);
	stats_devices_read(&si->devices, &si->o->devices, &si->caps,
		&(struct stats_devices_io){st_query_fn, si, &si->t, st_read_halted}, &id);
	read_uptime(si, &id);
	stats_commands_read(&si->o->commands, &si->cmd_state, &si->t, st_query_fn, si, &id);
	dispatch_instance_info(si, &id);
}

/*
 * The ports, then the rest. Between two port lists (ports_due()) the first request may
 * reconnect to another process: then this read starts over with the list, as a read after
 * a restart does.
 */
/*
 * Whether this callback reads: at every Interval, or at the interval the budget allows (half
 * an Interval early counts: callbacks come a little early or late). The values of a read
 * carry the interval in force, so that collectd does not take them for missing in between.
 */
bool
st_read_due(struct stats_instance *si, cdtime_t now)
{
	cdtime_t want = plugin_get_interval();

	if (si->read_next != 0 && now + want / 2 < si->read_next)
		return false;
	st_tiers_dispatch_ext(si, false);
	return true;
}

/* Between two reads the budget stretched: /info, so that `up` follows the application at every
 * interval, not at every read. */
void
st_read_alive(struct stats_instance *si)
{
	struct dtel_reply r;

	if (si->plan.interval_ns <= CDTIME_T_TO_NS(plugin_get_interval()))
		return;
	if (st_query(si, "/info", &r) == 0)
		dtel_reply_release(&r);
}

/* After a read that began at @now and cost the application @round_ns: when the next is. */
void
st_plan_next(struct stats_instance *si, cdtime_t now, uint64_t round_ns)
{
	st_tiers_plan(si, now, round_ns);
	dtp_dispatch_interval(0);
}

/*
 * The ports, then the rest. Between two port lists (ports_due()) the first request may
 * reconnect to another process: then this read starts over with the list, as a read after
 * a restart does.
 */
void
st_read_all(struct stats_instance *si, cdtime_t now)
{
	bool restarted = false;
	long old_pid;

	si->on_listed = !ports_due(si, now);
	for (int pass = 0; pass < 2; pass++) {
		si->halted = si->stale = false;
		if (!si->on_listed && list_ports(si, now, &old_pid, &restarted) < 0)
			return;
		if (restarted)
			on_restart(si, old_pid, now);
		if (si->caps_generation != si->t.generation || si->caps_young)
			probe_caps(si);
		/* Everything of this read goes to collectd in one burst (dtp_batch_begin). */
		dtp_batch_begin();
		st_tiers_begin(si);
		read_ports(si, now);
		if (!si->stale)
			read_rest(si, now);
		if (!si->stale) {
			dtp_batch_end();
			break;
		}
		/* Starting over: what this pass read goes nowhere (the next pass sends the
		 * same identifiers, and one identifier gets one value per read). */
		dtp_batch_cancel();
		si->on_listed = false;
	}
}
