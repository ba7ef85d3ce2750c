/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdktel_stats' memory values (MemoryStats): the EAL heaps and the mempools of an
 * application (docs/dpdktel_stats.md, docs/metrics.md). Requests go through the instance's
 * query function, so a read that met a connection failure sends nothing more.
 */
#ifndef STATS_MEMORY_H
#define STATS_MEMORY_H

#include "common/dtp.h"

/* Per instance: what is kept between reads. */
struct stats_memory {
	char mempool_names[16][DTEL_STRING_MAX];
	size_t nmempools;
};

/* Mempool names are configuration: once per application generation. */
void stats_memory_load(struct stats_memory *m, dtp_query_fn q, void *ctx, struct dtp_target *t);

/* Every read: the values, dispatched with @id (the instance's). */
void stats_memory_read(struct stats_memory *m, dtp_query_fn q, void *ctx, struct dtp_target *t,
	const struct dtp_id *id);

#endif
