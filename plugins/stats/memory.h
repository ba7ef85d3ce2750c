/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdktel_stats' memory values (MemoryStats): the EAL heaps, the memzones, the mempools and
 * the rings of an application (docs/dpdktel_stats.md, docs/metrics.md). Requests go through
 * the instance's query function, so a read that met a connection failure sends nothing more.
 *
 * Requests per read: /eal/heap_info,<id> of each heap, /mempool/info,<name> of each mempool
 * (DPDK >= 23.03: before, its reply has no count that moves, and it is asked again only with
 * the mempool list) and (DPDK >= 24.03) /ring/info,<name> of each ring. Every
 * STATS_MEMORY_LIST_EVERY reads (every read while the application is starting): /eal/heap_list and
 * /eal/memzone_list. Only now and then: /eal/memzone_info,<id> of the memzones that are new since
 * the last list (at most STATS_MEMZONE_INFO_PER_READ a read), and /mempool/list and /ring/list when
 * the memzone list changed (every mempool and every ring reserves a memzone), when the application
 * restarted, when a listed object has gone, and every STATS_MEMORY_RELIST reads.
 */
#ifndef STATS_MEMORY_H
#define STATS_MEMORY_H

#include "common/dtp.h"

/* Reads from one reading of the heap and memzone lists to the next. */
#define STATS_MEMORY_LIST_EVERY 6
/* Heaps read (RTE_MAX_HEAPS is 32). */
#define STATS_HEAPS_MAX 32
/* Mempools, and rings, read at each read: more are left out, with a log line. */
#define STATS_MEMORY_MAX 64
/* /eal/memzone_info requests a read sends at most (for the memzones new since the last). */
#define STATS_MEMZONE_INFO_PER_READ 32
/* Reads after which the mempool and ring lists are read again even if no memzone changed
 * (one that was freed and another reserved at the same index between two reads). */
#define STATS_MEMORY_RELIST 60

/* One memzone of the application's last /eal/memzone_list. */
struct stats_memzone {
	uint32_t id;
	bool known; /* len is from its /eal/memzone_info */
	uint64_t len;
};

/* Per instance: what is kept between reads; zeroed means "nothing known yet". */
struct stats_memory {
	bool started;
	uint64_t generation; /* of the application process the rest belongs to */
	unsigned int lists_in; /* reads until the heap and memzone lists are read again */
	bool relist; /* read /mempool/list and /ring/list at this read */
	uint32_t heaps[STATS_HEAPS_MAX];
	size_t nheaps;
	unsigned int reads; /* since the lists were last read */
	char mempools[STATS_MEMORY_MAX][DTEL_STRING_MAX];
	size_t nmempools;
	/* Before DPDK 23.03: each listed pool's size and populated size, from its last info. */
	struct {
		bool known;
		double size, populated;
	} pool_objects[STATS_MEMORY_MAX];
	char rings[STATS_MEMORY_MAX][DTEL_STRING_MAX];
	size_t nrings;
	struct stats_memzone *zones;
	size_t nzones;
	bool zones_listed; /* zones is from a memzone list of this process */
	bool zones_cut; /* the last memzone list may have been cut: no memzone values */
	unsigned int logged; /* bit per enum in memory.c: logged for this process */
};

/* Every read: the values, dispatched with @id (the instance's). */
void stats_memory_read(struct stats_memory *m, dtp_query_fn q, void *ctx, struct dtp_target *t,
	const struct dtp_id *id);

/* Free what m holds and zero it. Accepts a zeroed one. */
void stats_memory_free(struct stats_memory *m);

#endif
