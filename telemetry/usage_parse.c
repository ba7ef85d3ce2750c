/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * /eal/lcore/usage (DPDK 23.03 and later): the cycle counters of every lcore whose
 * application registered a usage callback, in one reply of index-aligned arrays:
 * {"lcore_ids":[1],"total_cycles":[...],"busy_cycles":[...],"usage_ratio":["97.89%"]}
 * (lib/eal/common/eal_common_lcore.c handle_lcore_usage; usage_ratio from 23.11, not used:
 * the ratio of two counters is computed from the counters).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dtel_private.h"
#include "json.h"

enum usage_col { COL_IDS, COL_TOTAL, COL_BUSY, NCOLS };

static const char *const col_names[NCOLS] = {"lcore_ids", "total_cycles", "busy_cycles"};

struct usage_ctx {
	struct dtel_eal_lcore_usage u;
	size_t cap;
	size_t len[NCOLS];
	unsigned int seen;
	int cur; /* the column being read, -1: another key */
};

static struct dtel_eal_lcore_use *
use_at(struct usage_ctx *c, size_t i)
{
	if (i >= DTEL_ARRAY_MAX_ENTRIES)
		return NULL;
	if (i >= c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 8;
		struct dtel_eal_lcore_use *v;

		while (cap <= i)
			cap *= 2;
		v = realloc(c->u.v, cap * sizeof(*v));
		if (v == NULL)
			return NULL;
		memset(v + c->cap, 0, (cap - c->cap) * sizeof(*v));
		c->u.v = v;
		c->cap = cap;
	}
	return &c->u.v[i];
}

static int
usage_visit(void *ctx, const struct dtel__jframe *path, int depth, const struct dtel__jtok *t)
{
	struct usage_ctx *c = ctx;
	struct dtel_eal_lcore_use *e;
	int64_t id;

	if (depth == 0)
		return t->type == DTEL__J_OBJECT || t->type == DTEL__J_END ? 0 : -EPROTO;
	if (depth == 1) {
		if (t->type == DTEL__J_END) {
			if (c->cur >= 0)
				c->len[c->cur] = t->count;
			c->cur = -1;
			return 0;
		}
		c->cur = -1;
		for (int i = 0; i < NCOLS; i++) {
			if (!dtel__json_key_is(&path[0], col_names[i]))
				continue;
			if (t->type != DTEL__J_ARRAY)
				return -EPROTO;
			c->cur = i;
			c->seen |= 1u << i;
		}
		return 0; /* usage_ratio, or a key of a later release */
	}
	if (c->cur < 0)
		return 0;
	if (depth > 2)
		return -EPROTO;
	e = use_at(c, path[1].index);
	if (e == NULL)
		return path[1].index >= DTEL_ARRAY_MAX_ENTRIES ? -EPROTO : -ENOMEM;
	switch (c->cur) {
	case COL_IDS:
		if (!dtel__json_int(t, 0, UINT32_MAX, &id))
			return -EPROTO;
		e->lcore_id = (unsigned int)id;
		return 0;
	case COL_TOTAL:
		return dtel__json_u64(t, &e->total_cycles) ? 0 : -EPROTO;
	default:
		return dtel__json_u64(t, &e->busy_cycles) ? 0 : -EPROTO;
	}
}

int
dtel_parse_eal_lcore_usage(const struct dtel_reply *reply, struct dtel_eal_lcore_usage *ret)
{
	struct usage_ctx c = {.cur = -1};
	unsigned int flags = 0;
	int r;

	if (ret == NULL)
		return -EINVAL;
	r = dtel__walk_reply(reply, "/eal/lcore/usage", usage_visit, &c, &flags);
	if (r == 0 && c.seen != (1u << NCOLS) - 1)
		r = -EPROTO; /* a column missing */
	if (r == 0 && (c.len[COL_TOTAL] != c.len[COL_IDS] || c.len[COL_BUSY] != c.len[COL_IDS]))
		r = -EPROTO; /* columns of different lengths */
	if (r < 0) {
		free(c.u.v);
		return r;
	}
	c.u.n = c.len[COL_IDS];
	c.u.flags = flags;
	*ret = c.u;
	return 0;
}

void
dtel_eal_lcore_usage_clear(struct dtel_eal_lcore_usage *u)
{
	if (u == NULL)
		return;
	free(u->v);
	memset(u, 0, sizeof(*u));
}
