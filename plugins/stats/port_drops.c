/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdktel_stats' drop attribution: see port_drops.h; the attribution itself is drops.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "port_drops.h"

/* The port's driver as port_info names it, once its /ethdev/info name is known, and again
 * when that name changes: another device at the port's id (a port detached and another
 * attached between two reads) may be of another driver, with the same xstats names. */
static void
know_driver(struct stats_drops *d, const char *device)
{
	if (device == NULL || (d->have_driver && strcmp(d->device, device) == 0))
		return;
	snprintf(d->device, sizeof(d->device), "%s", device);
	dtp_port_driver(device, "/sys", d->driver, sizeof(d->driver));
	d->have_driver = true;
	d->p.mapped = d->p.mapped_stats = false; /* the driver may tell more than the names */
}

void
stats_drops_stats(struct stats_drops *d, const char *device, const struct dtel_port_stats *st)
{
	know_driver(d, device);
	drops_take_stats(&d->p, &drops_builtin, d->driver, st);
}

void
stats_drops_xstats(
	struct stats_drops *d, const char *device, const struct dtel_xstats *x, uint64_t hash)
{
	know_driver(d, device);
	/* Without memory for the mapping this read has no drops values; the next tries again. */
	(void)drops_take_xstats(&d->p, &drops_builtin, d->driver, x, hash);
}

/* lcore_rx_queue "<port>,<queue>" of the lcore that polls it. */
static void
rx_queue(const struct dtp_id *port_id, const char *plugin, const char *instance, unsigned int port,
	unsigned long queue, uint64_t lcore)
{
	char ti[48];
	struct dtp_id id;
	double one = 1;

	if (lcore > UINT32_MAX)
		return;
	dtp_id_lcore(&id, plugin, instance, (unsigned int)lcore, port_id->time);
	snprintf(ti, sizeof(ti), "%u,%lu", port, queue);
	dtp_gauge(&id, "lcore_rx_queue", ti, &one, 1);
}

void
stats_drops_fwd_port(struct stats_drops *d, const struct dtel_dict *reply, unsigned int port,
	const struct dtp_id *port_id, const char *plugin, const char *instance, bool drops)
{
	static const char prefix[] = "rx_queue_lcores.";
	const struct dtel_entry *e = dtel_dict_find(reply, "tx_dropped");
	bool listed = false;

	if (drops && e != NULL && e->type == DTEL_VALUE_U64)
		drops_take_tx_full(&d->p, e->v.u64);
	/* rx_queue_lcores: entry q is the lcore that polls rx queue q (docs/fwd-telemetry.md). */
	for (size_t i = 0; i < reply->n; i++) {
		const struct dtel_entry *q = &reply->v[i];
		char *end;
		unsigned long n;

		if (strncmp(q->key, prefix, sizeof(prefix) - 1) != 0 || q->type != DTEL_VALUE_U64)
			continue;
		n = strtoul(q->key + sizeof(prefix) - 1, &end, 10);
		if (*end != '\0')
			continue;
		rx_queue(port_id, plugin, instance, port, n, q->v.u64);
		listed = true;
	}
	/* A forwarder without the array: its one rx queue is polled by lcore_id. */
	e = dtel_dict_find(reply, "lcore_id");
	if (!listed && e != NULL && e->type == DTEL_VALUE_U64)
		rx_queue(port_id, plugin, instance, port, 0, e->v.u64);
}

struct emit_ctx {
	struct dtp_target *t;
	const struct dtp_id *id;
};

static void
emit(void *arg, const char *ti, uint64_t v)
{
	struct emit_ctx *c = arg;
	char what[DATA_MAX_NAME_LEN * 2 + 16];

	if (dtp_derive(c->id, "drops", ti, &v, 1) == -ERANGE) {
		snprintf(what, sizeof(what), "%s/drops-%s", c->id->plugin_instance, ti);
		dtp_bad_reply(c->t, what, -ERANGE, 1);
	}
}

void
stats_drops_dispatch(struct stats_drops *d, struct dtp_target *t, const struct dtp_id *id)
{
	drops_result(&d->p, emit, &(struct emit_ctx){t, id});
}

void
stats_drops_reset(struct stats_drops *d)
{
	drops_reset(&d->p);
	d->have_driver = false;
	d->driver[0] = d->device[0] = '\0';
}

void
stats_drops_free(struct stats_drops *d)
{
	drops_free(&d->p);
	d->have_driver = false;
}
