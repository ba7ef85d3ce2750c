/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdktel_stats: the counters of cryptodevs, dmadevs, eventdevs and rawdevs (devices.h,
 * docs/dpdktel_stats.md "Device classes"). The commands and their replies, as DPDK 22.11 to
 * 26.07 register them (lib/cryptodev/rte_cryptodev.c, lib/dmadev/rte_dmadev.c,
 * lib/eventdev/rte_eventdev.c, lib/rawdev/rte_rawdev.c):
 *
 *   /cryptodev/list                   [0, 1]; null when there is no cryptodev at all
 *   /cryptodev/stats,<id>             {"enqueued_count":N, "dequeued_count":N,
 *                                      "enqueue_err_count":N, "dequeue_err_count":N}
 *   /dmadev/list                      [0]
 *   /dmadev/info,<id>                 {..., "nb_vchans":N, ...} (0 until the application
 *                                      configures the device)
 *   /dmadev/stats,<id>,<vchan>        {"submitted":N, "completed":N, "errors":N}; null for a
 *                                      vchan the device does not have
 *   /eventdev/dev_list                [0]
 *   /eventdev/port_list,<id>          [0, 1, ...] (nb_ports; [] until configured)
 *   /eventdev/queue_list,<id>         [0, 1, ...]
 *   /eventdev/dev_xstats,<id>         {"<name>":N, ...} the driver's
 *   /eventdev/port_xstats,<id>,<p>    likewise, of port p
 *   /eventdev/queue_xstats,<id>,<q>   likewise, of queue q
 *   /rawdev/list                      [0]
 *   /rawdev/xstats,<id>               {"<name>":N, ...}; null where the driver has none
 *
 * RTE_DMA_ALL_VCHAN (/dmadev/stats,<id>,65535) would take one request per device, but the
 * dpaa and dpaa2 drivers index their channel array with it: each vchan is asked by its id.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devices.h"

#define PLUGIN_LOG(level, t, ...) DTP_LOG(level, (t)->plugin, __VA_ARGS__)

static const struct dev_class {
	const char *name; /* of the class, first part of the type instance */
	const char *list; /* the command listing its devices */
	const char *stats; /* the command with a device's counters, "<stats>,<id>" */
	const char *type; /* of its values */
	size_t cap; /* offset of the bool in struct dtp_caps: the application has the class */
} classes[STATS_DEV_CLASSES] = {
	[STATS_DEV_CRYPTO] = {"cryptodev", "/cryptodev/list", "/cryptodev/stats", "cryptodev_ops",
		offsetof(struct dtp_caps, cryptodev)},
	[STATS_DEV_DMA] = {"dmadev", "/dmadev/list", "/dmadev/stats", "dmadev_ops",
		offsetof(struct dtp_caps, dmadev)},
	[STATS_DEV_EVENT] = {"eventdev", "/eventdev/dev_list", "/eventdev/dev_xstats",
		"eventdev_xstat", offsetof(struct dtp_caps, eventdev)},
	[STATS_DEV_RAW] = {"rawdev", "/rawdev/list", "/rawdev/xstats", "rawdev_xstat",
		offsetof(struct dtp_caps, rawdev)},
};

/*
 * The eventdev xstats of the drivers DPDK ships that are levels, not counters (EventdevGauge
 * unless given): event_sw (drivers/event/sw/sw_evdev_xstats.c sw_xstats_init: the stats it
 * does not let reset, its average packet cycles and the scheduler's last-iteration figures)
 * and event_dsw (drivers/event/dsw/dsw_xstats.c dsw_dev_xstats, dsw_port_xstats: credits,
 * loads, latencies, pending releases, the last background run).
 */
static const char *const event_gauges[] = {"*_inflight", "*_credits", "*_ring_used", "*_ring_free",
	"*_avg_pkt_cycles", "qid_*_iq_*_used", "*_pinned_flows", "dev_sched_last_iter_bitmask",
	"dev_sched_progress_last_iter", "dev_credits_on_loan", "*_migration_latency",
	"*_event_proc_latency", "*_pending_releases", "*_load", "*_last_bg"};

static bool
is_gauge(const struct dtp_globs *g, const char *name)
{
	if (g->n > 0)
		return dtp_globs_pass(g, &(struct dtp_globs){0}, name);
	for (size_t i = 0; i < sizeof(event_gauges) / sizeof(event_gauges[0]); i++)
		if (fnmatch(event_gauges[i], name, 0) == 0)
			return true;
	return false;
}

/* One read of one class. */
struct dev_read {
	const struct stats_devices_io *io;
	const struct dtp_id *id;
	const struct dev_class *cl;
	const struct dtp_globs *include, *exclude;
	const struct dtp_globs *gauge; /* NULL: every value is a counter */
};

static bool
halted(const struct stats_devices_io *io)
{
	return io->halted != NULL && io->halted(io->ctx) != 0;
}

/*
 * @cmd (whose name is @name) into *d. 0; -ENODATA for a null reply (not counted invalid: it
 * means "none" for the lists and the drivers without counters); another -errno otherwise
 * (an unusable reply counted and logged once).
 */
static int
query_dict(
	const struct stats_devices_io *io, const char *cmd, const char *name, struct dtel_dict *d)
{
	return dtp_query_dict(io->query, io->ctx, io->t, cmd, name, true, d);
}

/* The ids of a list reply ([0, 1, ...]) into *ret (malloc'ed, or NULL for none). */
static int
query_ids(const struct stats_devices_io *io, const char *cmd, const char *name, unsigned int **ret,
	size_t *ret_n)
{
	struct dtel_dict d;
	unsigned int *ids;
	size_t n = 0;
	int ret_q = query_dict(io, cmd, name, &d);

	if (ret_q < 0)
		return ret_q;
	ids = d.n > 0 ? calloc(d.n, sizeof(*ids)) : NULL;
	if (d.n > 0 && ids == NULL) {
		dtel_dict_clear(&d);
		return -ENOMEM;
	}
	for (size_t i = 0; i < d.n; i++)
		if (d.v[i].type == DTEL_VALUE_U64 && d.v[i].v.u64 <= UINT16_MAX)
			ids[n++] = (unsigned int)d.v[i].v.u64;
	if (n < d.n || d.nb_invalid > 0)
		dtp_bad_reply(io->t, cmd, -EPROTO, d.n - n + d.nb_invalid);
	dtel_dict_clear(&d);
	*ret = ids;
	*ret_n = n;
	return 0;
}

/* How many entries a list reply has (eventdev ports and queues are 0 .. n-1). */
static int
query_count(const struct stats_devices_io *io, const char *cmd, const char *name, unsigned int *ret)
{
	unsigned int *ids = NULL;
	size_t n = 0;
	int r = query_ids(io, cmd, name, &ids, &n);

	free(ids);
	if (r == 0)
		*ret = (unsigned int)n;
	return r;
}

/* What a device has below it: dmadev vchans, eventdev ports and queues. */
static int
load_sub(const struct stats_devices_io *io, enum stats_dev_class c, struct stats_dev *dev)
{
	const struct dtel_entry *e;
	struct dtel_dict d;
	char cmd[64];
	int ret;

	if (c == STATS_DEV_DMA) {
		snprintf(cmd, sizeof(cmd), "/dmadev/info,%u", dev->id);
		ret = query_dict(io, cmd, "/dmadev/info", &d);
		if (ret < 0)
			return ret;
		e = dtel_dict_find(&d, "nb_vchans");
		/* At most as many vchans as an eventdev has ports (uint8_t): a request each. */
		if (e != NULL && e->type == DTEL_VALUE_U64 && e->v.u64 <= UINT16_MAX)
			dev->nsub = e->v.u64 < 256 ? (unsigned int)e->v.u64 : 256;
		else
			dtp_bad_reply(io->t, cmd, -EPROTO, 1);
		dtel_dict_clear(&d);
		return 0;
	}
	if (c != STATS_DEV_EVENT)
		return 0;
	snprintf(cmd, sizeof(cmd), "/eventdev/port_list,%u", dev->id);
	ret = query_count(io, cmd, "/eventdev/port_list", &dev->nsub);
	if (ret < 0 && ret != -ENODATA)
		return ret;
	snprintf(cmd, sizeof(cmd), "/eventdev/queue_list,%u", dev->id);
	ret = query_count(io, cmd, "/eventdev/queue_list", &dev->nqueues);
	return ret == -ENODATA ? 0 : ret;
}

/* The devices of a class, and what each has below it. A device known from an earlier list of
 * the same process keeps its no_stats. */
static int
load_list(const struct stats_devices_io *io, enum stats_dev_class c, struct stats_dev_list *l)
{
	unsigned int *ids = NULL;
	struct stats_dev *v;
	size_t n = 0;
	int ret = query_ids(io, classes[c].list, classes[c].list, &ids, &n);

	/* DPDK's empty list, not a failure: /cryptodev/list and /eventdev/dev_list answer null
	 * where there is no device (cryptodev_handle_dev_list, handle_dev_list return an error
	 * when the count is 0; seen on 22.11). */
	if (ret == -ENODATA) {
		io->t->failed--;
		ret = 0;
	}
	if (ret < 0)
		return ret;
	v = n > 0 ? calloc(n, sizeof(*v)) : NULL;
	if (n > 0 && v == NULL) {
		free(ids);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n && ret == 0; i++) {
		v[i].id = ids[i];
		for (size_t k = 0; k < l->n && l->generation == io->t->generation; k++)
			if (l->v[k].id == ids[i])
				v[i].no_stats = l->v[k].no_stats;
		ret = load_sub(io, c, &v[i]);
		if (ret == -ENODATA)
			ret = 0;
	}
	free(ids);
	if (ret < 0) {
		free(v);
		return ret;
	}
	free(l->v);
	l->v = v;
	l->n = n;
	return 0;
}

/*
 * The counters of one reply, dispatched as "<prefix>.<name>" where the name passes the
 * class's patterns. A null reply (-ENODATA) is returned for the caller to decide.
 */
static int
read_counters(const struct dev_read *rd, struct stats_dev *dev, const char *cmd, const char *name,
	const char *prefix)
{
	char ti[DATA_MAX_NAME_LEN], what[DATA_MAX_NAME_LEN + 64];
	struct dtel_dict d;
	uint64_t bad = 0;
	int ret = query_dict(rd->io, cmd, name, &d);

	if (ret < 0)
		return ret;
	if ((d.flags & DTEL_F_DICT_FULL) && !(d.flags & DTEL_F_NEAR_LIMIT))
		rd->io->t->truncated++; /* dtp_query counted the near-limit ones */
	if ((d.flags & DTEL_F_POSSIBLY_CUT) && !dev->cut_logged) {
		dev->cut_logged = true;
		PLUGIN_LOG(LOG_WARNING, rd->io->t,
			"instance '%s': the %s reply may have been cut by the application (%zu "
			"counters, %s): counters past the cut are missing",
			rd->io->t->name, cmd, d.n,
			d.flags & DTEL_F_DICT_FULL ? "256 entries" : "near its size limit");
	}
	for (size_t i = 0; i < d.n; i++) {
		const struct dtel_entry *e = &d.v[i];

		if (e->type != DTEL_VALUE_U64) {
			bad++;
			continue;
		}
		if (!dtp_globs_pass(rd->include, rd->exclude, e->key))
			continue;
		if ((size_t)snprintf(ti, sizeof(ti), "%s.%s", prefix, e->key) >= sizeof(ti)) {
			bad++;
			continue;
		}
		if (rd->gauge != NULL && is_gauge(rd->gauge, e->key)) {
			double level = (double)e->v.u64;

			dtp_gauge(rd->id, "eventdev_gauge", ti, &level, 1);
			continue;
		}
		if (dtp_derive(rd->id, rd->cl->type, ti, &e->v.u64, 1) == -ERANGE) {
			snprintf(what, sizeof(what), "%s-%s", rd->cl->type, ti);
			dtp_bad_reply(rd->io->t, what, -ERANGE, 1);
		}
	}
	if (bad + d.nb_invalid > 0)
		dtp_bad_reply(rd->io->t, cmd, -EPROTO, bad + d.nb_invalid);
	dtel_dict_clear(&d);
	return 0;
}

/* A device whose counters answered null: its driver has none (rawdev_skeleton), or it is
 * gone. Not asked again until the application restarts. */
static void
no_stats(const struct dev_read *rd, struct stats_dev *dev, const char *cmd)
{
	dev->no_stats = true;
	PLUGIN_LOG(LOG_INFO, rd->io->t,
		"instance '%s': %s answers null (the driver has no counters, or the device is "
		"gone): %s%u is not read again until the application restarts",
		rd->io->t->name, cmd, rd->cl->name, dev->id);
}

static void
read_device(const struct dev_read *rd, enum stats_dev_class c, struct stats_dev *dev)
{
	char cmd[96], prefix[48];
	int ret;

	snprintf(prefix, sizeof(prefix), "%s%u", rd->cl->name, dev->id);
	if (c == STATS_DEV_DMA) {
		/* No vchan: the application has not configured the device, nothing to count. */
		for (unsigned int v = 0; v < dev->nsub && !halted(rd->io); v++) {
			snprintf(cmd, sizeof(cmd), "%s,%u,%u", rd->cl->stats, dev->id, v);
			snprintf(prefix, sizeof(prefix), "%s%u.vchan%u", rd->cl->name, dev->id, v);
			if (read_counters(rd, dev, cmd, rd->cl->stats, prefix) == -ENODATA) {
				no_stats(rd, dev, cmd);
				return;
			}
		}
		return;
	}
	snprintf(cmd, sizeof(cmd), "%s,%u", rd->cl->stats, dev->id);
	ret = read_counters(rd, dev, cmd, rd->cl->stats, prefix);
	if (ret == -ENODATA) {
		no_stats(rd, dev, cmd);
		return;
	}
	if (c != STATS_DEV_EVENT || ret < 0)
		return;
	for (unsigned int p = 0; p < dev->nsub && !halted(rd->io); p++) {
		snprintf(cmd, sizeof(cmd), "/eventdev/port_xstats,%u,%u", dev->id, p);
		snprintf(prefix, sizeof(prefix), "eventdev%u.port%u", dev->id, p);
		read_counters(rd, dev, cmd, "/eventdev/port_xstats", prefix);
	}
	for (unsigned int q = 0; q < dev->nqueues && !halted(rd->io); q++) {
		snprintf(cmd, sizeof(cmd), "/eventdev/queue_xstats,%u,%u", dev->id, q);
		snprintf(prefix, sizeof(prefix), "eventdev%u.queue%u", dev->id, q);
		read_counters(rd, dev, cmd, "/eventdev/queue_xstats", prefix);
	}
}

void
stats_devices_read(struct stats_devices *s, const struct stats_devices_opts *o,
	const struct dtp_caps *caps, const struct stats_devices_io *io, const struct dtp_id *id)
{
	for (int c = 0; c < STATS_DEV_CLASSES; c++) {
		struct stats_dev_list *l = &s->c[c];
		struct dev_read rd = {io, id, &classes[c], &o->include[c], &o->exclude[c],
			c == STATS_DEV_EVENT ? &o->event_gauge : NULL};
		bool has;

		memcpy(&has, (const char *)caps + classes[c].cap, sizeof(has));
		if (!o->on[c] || !has || halted(io))
			continue;
		/* Devices are created at start (--vdev, probing) or by the application while it
		 * starts: listed once per process, and again while it is young. */
		if (l->generation != io->t->generation || l->young) {
			if (load_list(io, c, l) < 0)
				continue; /* again at the next read */
			l->generation = io->t->generation;
			l->young = dtp_target_young(io->t);
		}
		for (size_t i = 0; i < l->n && !halted(io); i++)
			if (!l->v[i].no_stats)
				read_device(&rd, c, &l->v[i]);
	}
}

void
stats_devices_fini(struct stats_devices *s)
{
	if (s == NULL)
		return;
	for (int c = 0; c < STATS_DEV_CLASSES; c++) {
		free(s->c[c].v);
		memset(&s->c[c], 0, sizeof(s->c[c]));
	}
}

bool
stats_devices_types_defined(const char *plugin)
{
	const char *types[STATS_DEV_CLASSES + 1] = {[STATS_DEV_CLASSES] = "eventdev_gauge"};

	for (int c = 0; c < STATS_DEV_CLASSES; c++)
		types[c] = classes[c].type;
	return dtp_types_defined(plugin, types, STATS_DEV_CLASSES + 1, "docs/dpdktel_stats.md");
}
