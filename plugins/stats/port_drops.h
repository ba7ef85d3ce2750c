/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdktel_stats' drop attribution (Drops, docs/dpdktel_stats.md "Drop reasons"): the glue
 * between a port's replies and drops.c, and the values it dispatches:
 *
 *   <instance>.port<N>/drops-<reason>[.<xstat>]   every lost packet of the port once
 *   <instance>.lcore<L>/lcore_rx_queue-<port>,<queue>  1: lcore L polls that rx queue
 *                                                 (dpdktel-fwd's /fwd/port rx_queue_lcores)
 *
 * No request of its own: it reads the replies port.c and xstats.c ask for anyway
 * (/ethdev/xstats, /ethdev/info's name, /fwd/port).
 */
#ifndef STATS_DROPS_H
#define STATS_DROPS_H

#include "common/dtp.h"
#include "drops.h"

/* Per port; zeroed is "nothing known". */
struct stats_drops {
	struct drops_port p;
	bool have_driver;
	char driver[64]; /* port_info's driver of the port (dtp_port_driver) */
	char device[DTEL_STRING_MAX]; /* the /ethdev/info name it was learnt from */
};

/* This read's /ethdev/xstats of the port (hidden zeros filled in), @hash its
 * drops_names_hash(); @device its /ethdev/info name, NULL when not known (then only the names
 * tell its driver). */
void stats_drops_xstats(
	struct stats_drops *d, const char *device, const struct dtel_xstats *x, uint64_t hash);

/* XStats false: this read's /ethdev/stats of the port (no driver counters). */
void stats_drops_stats(struct stats_drops *d, const char *device, const struct dtel_port_stats *st);

/* The port's /fwd/port reply (dpdktel-fwd, already checked to be of this port): with @drops
 * tx_full from tx_dropped; and lcore_rx_queue of each rx queue, dispatched with @port_id's
 * time (AppStats, whatever Drops). */
void stats_drops_fwd_port(struct stats_drops *d, const struct dtel_dict *reply, unsigned int port,
	const struct dtp_id *port_id, const char *plugin, const char *instance, bool drops);

/* The port's drops values of this read, with @id (the port's); a value above INT64_MAX is
 * counted as a bad reply of @t. */
void stats_drops_dispatch(struct stats_drops *d, struct dtp_target *t, const struct dtp_id *id);

/* After an application restart. */
void stats_drops_reset(struct stats_drops *d);
void stats_drops_free(struct stats_drops *d);

#endif
