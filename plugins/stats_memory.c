/* SPDX-License-Identifier: BSD-3-Clause */
/* dpdktel_stats' memory values: see stats_memory.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "stats_memory.h"

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

static void
read_heaps(dtp_query_fn q, void *ctx, struct dtp_target *t, const struct dtp_id *id)
{
	static const char *const keys[] = {
		"Heap_size", "Free_size", "Alloc_size", "Greatest_free_size"};
	struct dtel_dict list, h;
	struct dtel_reply r;
	char ti[32], what[48];
	double v[4];

	if (q(ctx, "/eal/heap_list", &r) < 0)
		return;
	if (dtel_parse_dict(&r, "/eal/heap_list", &list) < 0) {
		dtp_bad_reply(t, "/eal/heap_list", -EPROTO, 1);
		memset(&list, 0, sizeof(list));
	}
	dtel_reply_release(&r);
	for (size_t i = 0; i < list.n; i++) {
		if (list.v[i].type != DTEL_VALUE_U64 || list.v[i].v.u64 > UINT32_MAX)
			continue;
		snprintf(what, sizeof(what), "/eal/heap_info,%" PRIu64, list.v[i].v.u64);
		if (q(ctx, what, &r) < 0)
			continue;
		if (dtel_parse_dict(&r, "/eal/heap_info", &h) == 0) {
			snprintf(ti, sizeof(ti), "heap%" PRIu64, list.v[i].v.u64);
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
	dtel_dict_clear(&list);
}

/* Mempool sizes are configuration: read them once per application generation. */
void
stats_memory_load(struct stats_memory *m, dtp_query_fn q, void *ctx, struct dtp_target *t)
{
	struct dtel_dict list;
	struct dtel_reply r;

	m->nmempools = 0;
	if (q(ctx, "/mempool/list", &r) < 0)
		return;
	if (dtel_parse_dict(&r, "/mempool/list", &list) == 0) {
		for (size_t i = 0; i < list.n && m->nmempools < 16; i++)
			if (list.v[i].type == DTEL_VALUE_STRING)
				snprintf(m->mempool_names[m->nmempools++], DTEL_STRING_MAX, "%s",
					list.v[i].str);
		dtel_dict_clear(&list);
	} else {
		dtp_bad_reply(t, "/mempool/list", -EPROTO, 1);
	}
	dtel_reply_release(&r);
}

static void
read_mempools(struct stats_memory *m, dtp_query_fn q, void *ctx, struct dtp_target *t,
	const struct dtp_id *id)
{
	static const char *const keys[] = {"size", "populated_size"};
	struct dtel_reply r;
	struct dtel_dict d;
	char cmd[DTEL_STRING_MAX + 16];
	double v[2];

	for (size_t i = 0; i < m->nmempools; i++) {
		snprintf(cmd, sizeof(cmd), "/mempool/info,%s", m->mempool_names[i]);
		if (q(ctx, cmd, &r) < 0)
			continue;
		if (dtel_parse_dict(&r, "/mempool/info", &d) == 0) {
			if (dict_values(&d, keys, 2, v))
				dtp_gauge(id, "mempool_objects", m->mempool_names[i], v, 2);
			else
				dtp_bad_reply(t, cmd, -EPROTO, 1);
			dtel_dict_clear(&d);
		} else {
			dtp_bad_reply(t, cmd, -EPROTO, 1);
		}
		dtel_reply_release(&r);
	}
}

void
stats_memory_read(struct stats_memory *m, dtp_query_fn q, void *ctx, struct dtp_target *t,
	const struct dtp_id *id)
{
	read_heaps(q, ctx, t, id);
	read_mempools(m, q, ctx, t, id);
}
