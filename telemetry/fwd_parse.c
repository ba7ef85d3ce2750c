/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Parsers for columnar replies, a dict of arrays, index-aligned: dpdktel-fwd's /fwd/lcores
 * and /fwd/ports, and DPDK's /eal/lcore/usage (23.03 and later; lib/eal/common/
 * eal_common_lcore.c handle_lcore_usage: {"lcore_ids":[1],"total_cycles":[...],
 * "busy_cycles":[...],"usage_ratio":["97.89%"]}, usage_ratio from 23.11 and not used: the
 * ratio of two counters is computed from the counters). Each column is described once; the walker's
 * events fill entry i of the column being read, growing the entry array as indexes appear.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dtel_private.h"
#include "json.h"

enum col_kind { COL_U64, COL_INT, COL_STRING, COL_STATE, COL_LINK, COL_DUPLEX };

struct column {
	const char *name;
	size_t offset; /* in the entry struct */
	size_t size; /* of the field (strings, ints) */
	enum col_kind kind;
	bool required;
};

struct columnar {
	const struct column *cols;
	size_t ncols;
	size_t entry_size;
	char *v; /* entries */
	size_t cap, n;
	size_t len[16]; /* length of each column seen */
	unsigned int seen; /* bitmask of columns seen */
	int cur; /* column being read, or -1 */
};

#define FIELD(type, f, k, req)                                                           \
	{                                                                                \
		.name = #f, .offset = offsetof(type, f), .size = sizeof(((type *)0)->f), \
		.kind = (k), .required = (req)                                           \
	}

static const struct column lcore_cols[] = {
	FIELD(struct dtel_fwd_lcore, lcore_id, COL_INT, true),
	{"state_code", offsetof(struct dtel_fwd_lcore, state), 0, COL_STATE, true},
	FIELD(struct dtel_fwd_lcore, heartbeat, COL_U64, true),
	FIELD(struct dtel_fwd_lcore, heartbeat_age_us, COL_U64, true),
	FIELD(struct dtel_fwd_lcore, stalls, COL_U64, true),
	FIELD(struct dtel_fwd_lcore, last_change_age_ms, COL_U64, false),
	FIELD(struct dtel_fwd_lcore, rx_packets, COL_U64, false),
	FIELD(struct dtel_fwd_lcore, tx_packets, COL_U64, false),
	FIELD(struct dtel_fwd_lcore, busy_cycles, COL_U64, false),
	FIELD(struct dtel_fwd_lcore, total_cycles, COL_U64, false),
	FIELD(struct dtel_fwd_lcore, ports, COL_STRING, false),
};

static const struct column port_cols[] = {
	{"port_id", offsetof(struct dtel_fwd_port, port_id), sizeof(uint16_t), COL_INT, true},
	{"link_status", offsetof(struct dtel_fwd_port, up), 0, COL_LINK, true},
	{"link_speed", offsetof(struct dtel_fwd_port, speed_mbps), 8, COL_U64, false},
	{"link_duplex", offsetof(struct dtel_fwd_port, duplex), 0, COL_DUPLEX, false},
	FIELD(struct dtel_fwd_port, link_changes, COL_U64, true),
	FIELD(struct dtel_fwd_port, last_change_age_ms, COL_U64, false),
};

static const struct column usage_cols[] = {
	{"lcore_ids", offsetof(struct dtel_eal_lcore_use, lcore_id), sizeof(unsigned int), COL_INT,
		true},
	FIELD(struct dtel_eal_lcore_use, total_cycles, COL_U64, true),
	FIELD(struct dtel_eal_lcore_use, busy_cycles, COL_U64, true),
};

static char *
entry_at(struct columnar *c, size_t i)
{
	if (i >= c->cap) {
		size_t cap = c->cap ? c->cap : 16;
		char *nv;

		while (cap <= i)
			cap *= 2;
		if (cap > (size_t)DTEL_ARRAY_MAX_ENTRIES * 2)
			return NULL;
		nv = realloc(c->v, cap * c->entry_size);
		if (nv == NULL)
			return NULL;
		memset(nv + c->cap * c->entry_size, 0, (cap - c->cap) * c->entry_size);
		c->v = nv;
		c->cap = cap;
	}
	if (i + 1 > c->n)
		c->n = i + 1;
	return c->v + i * c->entry_size;
}

static int
store(const struct column *col, void *field, const struct dtel__jtok *t)
{
	char buf[16];
	int64_t v;

	switch (col->kind) {
	case COL_U64:
		return dtel__json_u64(t, field) ? 0 : -EPROTO;
	case COL_INT:
		if (!dtel__json_int(t, 0, col->size == 2 ? UINT16_MAX : INT32_MAX, &v))
			return -EPROTO;
		if (col->size == 2)
			*(uint16_t *)field = (uint16_t)v;
		else
			*(unsigned int *)field = (unsigned int)v;
		return 0;
	case COL_STATE:
		if (!dtel__json_int(t, 0, DTEL_LCORE_STATE_MAX, &v))
			return -EPROTO;
		*(enum dtel_lcore_state *)field = (enum dtel_lcore_state)v;
		return 0;
	case COL_STRING:
		if (t->type != DTEL__J_STRING ||
			dtel__json_str(t->p, t->len, t->escaped, field, col->size) < 0)
			return -EPROTO;
		return 0;
	case COL_LINK:
		if (t->type != DTEL__J_STRING ||
			dtel__json_str(t->p, t->len, t->escaped, buf, sizeof(buf)) < 0)
			return -EPROTO;
		if (strcmp(buf, "UP") != 0 && strcmp(buf, "DOWN") != 0)
			return -EPROTO;
		*(bool *)field = buf[0] == 'U';
		return 0;
	case COL_DUPLEX:
		if (t->type != DTEL__J_STRING ||
			dtel__json_str(t->p, t->len, t->escaped, buf, sizeof(buf)) < 0)
			return -EPROTO;
		*(enum dtel_duplex *)field = strcmp(buf, "full-duplex") == 0 ? DTEL_DUPLEX_FULL
			: strcmp(buf, "half-duplex") == 0                    ? DTEL_DUPLEX_HALF
									     : DTEL_DUPLEX_UNKNOWN;
		return 0;
	}
	return -EPROTO;
}

static int
columnar_visit(void *ctx, const struct dtel__jframe *path, int depth, const struct dtel__jtok *t)
{
	struct columnar *c = ctx;
	char *e;

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
		for (size_t i = 0; i < c->ncols; i++) {
			if (!dtel__json_key_is(&path[0], c->cols[i].name))
				continue;
			if (t->type != DTEL__J_ARRAY)
				return -EPROTO;
			c->cur = (int)i;
			c->seen |= 1u << i;
		}
		return 0; /* a column we do not know, or the start of ours */
	}
	if (c->cur < 0)
		return 0;
	if (depth > 2)
		return -EPROTO;
	if (path[1].index >= DTEL_ARRAY_MAX_ENTRIES)
		return -EPROTO; /* more than a DPDK array holds */
	e = entry_at(c, path[1].index);
	if (e == NULL)
		return -ENOMEM;
	return store(&c->cols[c->cur], e + c->cols[c->cur].offset, t);
}

/* Parse into c; then every required column must be there and all of one length. */
static int
parse_columnar(const struct dtel_reply *reply, const char *cmd, struct columnar *c,
	unsigned int *ret_flags)
{
	size_t n = 0;
	bool first = true;
	int r;

	c->cur = -1;
	r = dtel__walk_reply(reply, cmd, columnar_visit, c, ret_flags);
	if (r < 0)
		return r;
	for (size_t i = 0; i < c->ncols; i++) {
		if (!(c->seen & (1u << i))) {
			if (c->cols[i].required)
				return -EPROTO;
			continue;
		}
		if (!first && c->len[i] != n)
			return -EPROTO;
		n = c->len[i];
		first = false;
	}
	c->n = n;
	return 0;
}

int
dtel_parse_fwd_lcores(const struct dtel_reply *reply, struct dtel_fwd_lcores *ret)
{
	struct columnar c = {.cols = lcore_cols,
		.ncols = sizeof(lcore_cols) / sizeof(lcore_cols[0]),
		.entry_size = sizeof(struct dtel_fwd_lcore)};
	unsigned int flags;
	int r;

	if (ret == NULL)
		return -EINVAL;
	r = parse_columnar(reply, "/fwd/lcores", &c, &flags);
	if (r < 0) {
		free(c.v);
		return r;
	}
	ret->n = c.n;
	ret->v = (struct dtel_fwd_lcore *)c.v;
	ret->flags = flags;
	return 0;
}

void
dtel_fwd_lcores_clear(struct dtel_fwd_lcores *l)
{
	if (l == NULL)
		return;
	free(l->v);
	memset(l, 0, sizeof(*l));
}

int
dtel_parse_fwd_ports(const struct dtel_reply *reply, struct dtel_fwd_ports *ret)
{
	struct columnar c = {.cols = port_cols,
		.ncols = sizeof(port_cols) / sizeof(port_cols[0]),
		.entry_size = sizeof(struct dtel_fwd_port)};
	unsigned int flags;
	int r;

	if (ret == NULL)
		return -EINVAL;
	r = parse_columnar(reply, "/fwd/ports", &c, &flags);
	if (r < 0) {
		free(c.v);
		return r;
	}
	ret->n = c.n;
	ret->v = (struct dtel_fwd_port *)c.v;
	ret->flags = flags;
	return 0;
}

void
dtel_fwd_ports_clear(struct dtel_fwd_ports *p)
{
	if (p == NULL)
		return;
	free(p->v);
	memset(p, 0, sizeof(*p));
}

const char *
dtel_lcore_state_name(enum dtel_lcore_state state)
{
	static const char *const names[] = {"STARTING", "RUNNING", "IDLE", "STALLED", "EXITED"};

	return (unsigned int)state <= DTEL_LCORE_STATE_MAX ? names[state] : "UNKNOWN";
}

int
dtel_parse_eal_lcore_usage(const struct dtel_reply *reply, struct dtel_eal_lcore_usage *ret)
{
	struct columnar c = {.cols = usage_cols,
		.ncols = sizeof(usage_cols) / sizeof(usage_cols[0]),
		.entry_size = sizeof(struct dtel_eal_lcore_use)};
	unsigned int flags = 0;
	int r;

	if (ret == NULL)
		return -EINVAL;
	r = parse_columnar(reply, "/eal/lcore/usage", &c, &flags);
	if (r < 0) {
		free(c.v);
		return r;
	}
	ret->n = c.n;
	ret->v = (struct dtel_eal_lcore_use *)c.v;
	ret->flags = flags;
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
