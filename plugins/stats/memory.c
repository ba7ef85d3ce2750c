/* SPDX-License-Identifier: BSD-3-Clause */
/* dpdktel_stats' memory values: see memory.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <string.h>

#include "memory.h"

/* The values of @keys in @d into v[]; false when one is missing or not an integer >= 0. */
static bool
dict_values(const struct dtel_dict *d, const char *const *keys, size_t n, double *v)
{
	for (size_t i = 0; i < n; i++) {
		const struct dtel_entry *e = dtel_dict_find(d, keys[i]);

		if (e == NULL || e->type != DTEL_VALUE_U64)
			return false;
		v[i] = (double)e->v.u64;
	}
	return true;
}

/* /eal/heap_list: the ids of the heaps into m->heaps. 0 or the request's -errno. */
static int
list_heaps(struct stats_memory *m, dtp_query_fn q, void *ctx, struct dtp_target *t)
{
	struct dtel_dict list;
	struct dtel_reply r;
	int ret;

	ret = q(ctx, "/eal/heap_list", &r);
	if (ret < 0)
		return ret;
	ret = dtel_parse_dict(&r, "/eal/heap_list", &list);
	dtel_reply_release(&r);
	if (ret < 0) {
		dtp_bad_reply(t, "/eal/heap_list", -EPROTO, 1);
		return 0; /* not worth asking again before the next list */
	}
	m->nheaps = 0;
	for (size_t i = 0; i < list.n && m->nheaps < STATS_HEAPS_MAX; i++)
		if (list.v[i].type == DTEL_VALUE_U64 && list.v[i].v.u64 <= UINT32_MAX)
			m->heaps[m->nheaps++] = (uint32_t)list.v[i].v.u64;
	dtel_dict_clear(&list);
	return 0;
}

/* /eal/heap_info,<id> of each listed heap: heap_bytes. */
static void
read_heaps(const struct stats_memory *m, dtp_query_fn q, void *ctx, struct dtp_target *t,
	const struct dtp_id *id)
{
	static const char *const keys[] = {
		"Heap_size", "Free_size", "Alloc_size", "Greatest_free_size"};
	struct dtel_reply r;
	struct dtel_dict h;
	char ti[32], what[48];
	double v[4];

	for (size_t i = 0; i < m->nheaps; i++) {
		snprintf(what, sizeof(what), "/eal/heap_info,%" PRIu32, m->heaps[i]);
		if (q(ctx, what, &r) < 0)
			continue;
		if (dtel_parse_dict(&r, "/eal/heap_info", &h) == 0) {
			snprintf(ti, sizeof(ti), "heap%" PRIu32, m->heaps[i]);
			if (dict_values(&h, keys, 4, v))
				dtp_gauge(id, "heap_bytes", ti, v, 4);
			else
				dtp_bad_reply(t, what, -EPROTO, 1);
			dtel_dict_clear(&h);
		} else {
			dtp_bad_reply(t, what, -EPROTO, 1);
		}
		dtel_reply_release(&r);
	}
}

#define PLUGIN "dpdktel_stats"
#define LOG(level, ...) DTP_LOG(level, PLUGIN, __VA_ARGS__)

/* What was logged once per application process (struct stats_memory logged). */
enum {
	LOGGED_MEMPOOLS_OVER = 1,
	LOGGED_RINGS_OVER = 2,
	LOGGED_ZONES_CUT = 4,
};

/* Rings have telemetry commands from DPDK 24.03 (lib/ring/rte_ring.c ring_init_telemetry). */
#define RING_TELEMETRY_SINCE 240300
/* /mempool/info has common_pool_count and total_cache_count from DPDK 23.03
 * (lib/mempool/rte_mempool.c mempool_info_cb); before, nothing in it moves between reads. */
#define MEMPOOL_COUNTS_SINCE 230300

/* The integer @key of @d into *v; false when missing or not an integer >= 0. */
static bool
dict_u64(const struct dtel_dict *d, const char *key, uint64_t *v)
{
	const struct dtel_entry *e = dtel_dict_find(d, key);

	if (e == NULL || e->type != DTEL_VALUE_U64)
		return false;
	*v = e->v.u64;
	return true;
}

/* Memzones ---------------------------------------------------------------------------------- */

/* The index of memzone @id in m->zones, or -1. */
static ssize_t
zone_find(const struct stats_memory *m, uint32_t id)
{
	for (size_t i = 0; i < m->nzones; i++)
		if (m->zones[i].id == id)
			return (ssize_t)i;
	return -1;
}

/*
 * The ids of /eal/memzone_list (an array of ints, DPDK lib/eal/common/eal_common_memory.c
 * handle_eal_memzone_list_request) as m->zones, keeping the length of the memzones that were
 * listed before. A list that differs from the previous one asks for the mempool and ring lists
 * again: each mempool and each ring reserves a memzone of its own. 0, or -EPROTO for a list
 * with an entry that is not an id (nothing of it is used), -ENOMEM.
 */
static int
zones_update(struct stats_memory *m, const struct dtel_dict *list)
{
	struct stats_memzone *z;
	bool same = list->n == m->nzones;

	for (size_t i = 0; i < list->n; i++)
		if (list->v[i].type != DTEL_VALUE_U64 || list->v[i].v.u64 > UINT32_MAX)
			return -EPROTO;
	for (size_t i = 0; i < list->n && same; i++)
		same = list->v[i].v.u64 == m->zones[i].id;
	if (same)
		return 0;
	m->relist = true;
	z = calloc(list->n + 1, sizeof(*z));
	if (z == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < list->n; i++) {
		ssize_t old;

		z[i].id = (uint32_t)list->v[i].v.u64;
		old = zone_find(m, z[i].id);
		if (old >= 0)
			z[i] = m->zones[old];
	}
	free(m->zones);
	m->zones = z;
	m->nzones = list->n;
	return 0;
}

/* The length of memzone z from /eal/memzone_info,<id> (handle_eal_memzone_info_request). */
static void
zone_info(dtp_query_fn q, void *ctx, struct dtp_target *t, struct stats_memzone *z)
{
	struct dtel_reply r;
	struct dtel_dict d;
	char cmd[48];
	uint64_t zone, len;
	int ret;

	snprintf(cmd, sizeof(cmd), "/eal/memzone_info,%" PRIu32, z->id);
	ret = q(ctx, cmd, &r);
	if (ret == -ENODATA) {
		/* null: freed since the list, or one DPDK cannot describe (no memseg list) */
		z->known = true;
		z->len = 0;
		return;
	}
	if (ret < 0)
		return;
	ret = dtel_parse_dict(&r, "/eal/memzone_info", &d);
	dtel_reply_release(&r);
	if (ret < 0) {
		dtp_bad_reply(t, cmd, ret, 1);
		return;
	}
	if (!dict_u64(&d, "Zone", &zone) || !dict_u64(&d, "Length", &len)) {
		dtp_bad_reply(t, cmd, -EPROTO, 1);
	} else if (zone != z->id) {
		t->discarded++; /* another client's parameters: DPDK before 26.07 */
	} else {
		z->known = true;
		z->len = len;
	}
	dtel_dict_clear(&d);
}

/* /eal/memzone_list into m->zones. 0 or the request's -errno. */
static int
list_memzones(struct stats_memory *m, dtp_query_fn q, void *ctx, struct dtp_target *t)
{
	struct dtel_dict list;
	struct dtel_reply r;
	int ret;

	ret = q(ctx, "/eal/memzone_list", &r);
	if (ret < 0)
		return ret;
	ret = dtel_parse_dict(&r, "/eal/memzone_list", &list);
	dtel_reply_release(&r);
	if (ret < 0) {
		dtp_bad_reply(t, "/eal/memzone_list", ret, 1);
		return 0;
	}
	ret = zones_update(m, &list);
	if (ret == 0) {
		m->zones_listed = true;
		m->zones_cut = (list.flags & DTEL_F_POSSIBLY_CUT) != 0;
	} else if (ret == -EPROTO) {
		dtp_bad_reply(t, "/eal/memzone_list", ret, 1);
	}
	dtel_dict_clear(&list);
	if (ret < 0)
		return 0; /* not worth asking again before the next list */
	if (m->zones_cut && !(m->logged & LOGGED_ZONES_CUT)) {
		m->logged |= LOGGED_ZONES_CUT;
		LOG(LOG_WARNING,
			"instance '%s': /eal/memzone_list may have been cut (%zu memzones, DPDK "
			"sends at most 512): no memzone values for this application",
			t->name, m->nzones);
	}
	return 0;
}

/*
 * count-memzones and, once the length of every listed memzone is known, bytes-memzones, as of
 * the last list. A memzone never changes its size: each length is read once, at most
 * STATS_MEMZONE_INFO_PER_READ a read, so hundreds of memzones (Open vSwitch) cost a few
 * reads' worth of requests once.
 */
static void
read_memzones(struct stats_memory *m, dtp_query_fn q, void *ctx, struct dtp_target *t,
	const struct dtp_id *id)
{
	unsigned int asked = 0;
	double bytes = 0, count;
	bool complete = true;

	if (!m->zones_listed || m->zones_cut)
		return;
	for (size_t i = 0; i < m->nzones; i++) {
		if (!m->zones[i].known && asked < STATS_MEMZONE_INFO_PER_READ) {
			asked++;
			zone_info(q, ctx, t, &m->zones[i]);
		}
		complete = complete && m->zones[i].known;
		bytes += (double)m->zones[i].len;
	}
	count = (double)m->nzones;
	dtp_gauge(id, "count", "memzones", &count, 1);
	if (complete)
		dtp_gauge(id, "bytes", "memzones", &bytes, 1);
}

/* Mempools and rings ------------------------------------------------------------------------ */

/* The names of a /mempool/list or /ring/list reply (an array of strings) into names[]: 0, or
 * the request's -errno (names[] untouched but for a null reply: none). */
static int
load_names(dtp_query_fn q, void *ctx, struct dtp_target *t, const char *cmd, const char *what,
	unsigned int over_bit, unsigned int *logged, char (*names)[DTEL_STRING_MAX], size_t *n)
{
	struct dtel_dict list;
	struct dtel_reply r;
	size_t all = 0;
	int ret;

	ret = q(ctx, cmd, &r);
	if (ret == -ENODATA)
		*n = 0; /* none */
	if (ret < 0)
		return ret;
	ret = dtel_parse_dict(&r, cmd, &list);
	dtel_reply_release(&r);
	if (ret < 0) {
		dtp_bad_reply(t, cmd, ret, 1);
		return ret;
	}
	*n = 0;
	for (size_t i = 0; i < list.n; i++) {
		if (list.v[i].type != DTEL_VALUE_STRING)
			continue;
		all++;
		if (*n < STATS_MEMORY_MAX)
			snprintf(names[(*n)++], DTEL_STRING_MAX, "%s", list.v[i].str);
	}
	dtel_dict_clear(&list);
	if (all > STATS_MEMORY_MAX && !(*logged & over_bit)) {
		*logged |= over_bit;
		LOG(LOG_WARNING,
			"instance '%s': %zu %s, more than the %d read at each read: the %zu after "
			"'%s' are left out",
			t->name, all, what, STATS_MEMORY_MAX, all - STATS_MEMORY_MAX,
			names[STATS_MEMORY_MAX - 1]);
	}
	return 0;
}

/*
 * /<kind>/info,<name> as a dict, refused unless it names @name (DPDK before 26.07 can hand a
 * client another client's parameters). 0; -ENOENT when the object has gone (DPDK answers
 * {}: lib/mempool/rte_mempool.c mempool_handle_info, lib/ring/rte_ring.c ring_handle_info
 * start the dict and walk the objects); another -errno (counted) otherwise.
 */
static int
object_info(dtp_query_fn q, void *ctx, struct dtp_target *t, const char *cmd, const char *key,
	const char *name, struct dtel_dict *d)
{
	const struct dtel_entry *e;
	int ret = dtp_query_dict(q, ctx, t, cmd, key, false, d);

	if (ret < 0)
		return ret;
	if (d->n == 0) {
		dtel_dict_clear(d);
		return -ENOENT;
	}
	e = dtel_dict_find(d, "name");
	if (e == NULL || e->type != DTEL_VALUE_STRING || strcmp(e->str, name) != 0) {
		t->discarded++;
		dtel_dict_clear(d);
		return -EPROTO;
	}
	return 0;
}

/*
 * mempool_objects (size, populated) on every release (before 23.03 asked once per mempool
 * list, and sent again at the reads between); mempool_use (in_use, available, cached)
 * where the reply has total_cache_count and common_pool_count (DPDK >= 23.03,
 * lib/mempool/rte_mempool.c mempool_info_cb). Objects in a per-lcore cache are available to
 * that lcore: available = common_pool_count + total_cache_count, in_use = size - available.
 */
static void
read_mempool(struct stats_memory *m, dtp_query_fn q, void *ctx, struct dtp_target *t,
	const struct dtp_id *id, size_t i)
{
	const char *name = m->mempools[i];
	char cmd[DTEL_STRING_MAX + 16];
	uint64_t size, populated, cached, common;
	struct dtel_dict d;
	int ret;

	if (m->pool_objects[i].known) {
		dtp_gauge(id, "mempool_objects", name,
			(double[]){m->pool_objects[i].size, m->pool_objects[i].populated}, 2);
		return;
	}
	snprintf(cmd, sizeof(cmd), "/mempool/info,%s", name);
	ret = object_info(q, ctx, t, cmd, "/mempool/info", name, &d);
	if (ret == -ENOENT)
		m->relist = true;
	if (ret < 0)
		return;
	if (!dict_u64(&d, "size", &size) || !dict_u64(&d, "populated_size", &populated)) {
		dtp_bad_reply(t, cmd, -EPROTO, 1);
	} else {
		dtp_gauge(id, "mempool_objects", name, (double[]){(double)size, (double)populated},
			2);
		if (dict_u64(&d, "total_cache_count", &cached) &&
			dict_u64(&d, "common_pool_count", &common)) {
			uint64_t avail = cached + common;

			dtp_gauge(id, "mempool_use", name,
				(double[]){(double)(avail < size ? size - avail : 0), (double)avail,
					(double)cached},
				3);
		} else if (t->dpdk_version >= 0 && t->dpdk_version < MEMPOOL_COUNTS_SINCE) {
			/* Populated once, after a memzone is reserved: the next list asks again. */
			m->pool_objects[i].known = true;
			m->pool_objects[i].size = (double)size;
			m->pool_objects[i].populated = (double)populated;
		}
	}
	dtel_dict_clear(&d);
}

/* ring_entries (used, capacity) from /ring/info (lib/ring/rte_ring.c ring_info_cb). */
static void
read_ring(struct stats_memory *m, dtp_query_fn q, void *ctx, struct dtp_target *t,
	const struct dtp_id *id, const char *name)
{
	char cmd[DTEL_STRING_MAX + 16];
	uint64_t used, capacity;
	struct dtel_dict d;
	int ret;

	snprintf(cmd, sizeof(cmd), "/ring/info,%s", name);
	ret = object_info(q, ctx, t, cmd, "/ring/info", name, &d);
	if (ret == -ENOENT)
		m->relist = true;
	if (ret < 0)
		return;
	if (!dict_u64(&d, "used_count", &used) || !dict_u64(&d, "capacity", &capacity))
		dtp_bad_reply(t, cmd, -EPROTO, 1);
	else
		dtp_gauge(id, "ring_entries", name, (double[]){(double)used, (double)capacity}, 2);
	dtel_dict_clear(&d);
}

/* The instance -------------------------------------------------------------------------------- */

void
stats_memory_free(struct stats_memory *m)
{
	free(m->zones);
	memset(m, 0, sizeof(*m));
}

void
stats_memory_read(struct stats_memory *m, dtp_query_fn q, void *ctx, struct dtp_target *t,
	const struct dtp_id *id)
{
	bool rings = t->dpdk_version >= RING_TELEMETRY_SINCE;

	/* Another process: nothing known of it. */
	if (!m->started || m->generation != t->generation) {
		stats_memory_free(m);
		m->started = true;
		m->generation = t->generation;
		m->relist = true;
	}
	/* The heap and memzone lists every STATS_MEMORY_LIST_EVERY reads, and at each read
	 * while the application starts (it creates its pools after the socket appeared). */
	if (m->lists_in > 0 && !dtp_target_young(t)) {
		m->lists_in--;
	} else {
		/* Each list on its own: a null heap list (a command the application does not
		 * have) does not keep the memzones from being listed, nor the other way round. */
		int heaps = list_heaps(m, q, ctx, t), zones = list_memzones(m, q, ctx, t);

		if (heaps == 0 && zones == 0)
			m->lists_in = STATS_MEMORY_LIST_EVERY - 1;
	}
	read_heaps(m, q, ctx, t, id);
	read_memzones(m, q, ctx, t, id);
	if (++m->reads >= STATS_MEMORY_RELIST)
		m->relist = true;
	/* Until both lists have been read, at each read. */
	if (m->relist)
		memset(m->pool_objects, 0, sizeof(m->pool_objects));
	if (m->relist) {
		/* Each list on its own, as above. */
		int pools = load_names(q, ctx, t, "/mempool/list", "mempools", LOGGED_MEMPOOLS_OVER,
			&m->logged, m->mempools, &m->nmempools);
		int ringl = rings ? load_names(q, ctx, t, "/ring/list", "rings", LOGGED_RINGS_OVER,
					    &m->logged, m->rings, &m->nrings)
				  : 0;

		if (pools == 0 && ringl == 0) {
			m->relist = false;
			m->reads = 0;
		}
	}
	for (size_t i = 0; i < m->nmempools; i++)
		read_mempool(m, q, ctx, t, id, i);
	for (size_t i = 0; rings && i < m->nrings; i++)
		read_ring(m, q, ctx, t, id, m->rings[i]);
}
