/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reply parsers: pure functions from a datagram to plain structs, on top of the JSON walker
 * (json.h). Each parser is a visitor: it sees every value of the reply with its path, picks
 * the ones it knows, and checks their types; the walker has already refused anything that is
 * not one complete, valid JSON value.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtel_private.h"
#include "json.h"

/* Nesting below the reply's value that any parser accepts (the walker bounds the total). */
#define MAX_VALUE_DEPTH 8

/*
 * The envelope {"<cmd>": value}: checks it and hands the events of value to the inner
 * visitor, with paths relative to value (depth 0 = value itself).
 */
struct envelope {
	const char *cmd; /* NULL: any key */
	dtel__jvisit_t inner;
	void *ctx;
	unsigned int flags;
	bool is_null;
};

static int
envelope_visit(void *ctx, const struct dtel__jframe *path, int depth, const struct dtel__jtok *t)
{
	struct envelope *e = ctx;

	if (depth == 0) {
		if (t->type == DTEL__J_END)
			return t->count == 1 ? 0 : -EPROTO;
		return t->type == DTEL__J_OBJECT ? 0 : -EPROTO;
	}
	if (depth == 1 && t->type != DTEL__J_END) {
		if (path[0].index > 0 || (e->cmd != NULL && !dtel__json_key_is(&path[0], e->cmd)))
			return -EPROTO;
		if (t->type == DTEL__J_NULL) {
			e->is_null = true;
			return 0;
		}
	}
	if (t->type == DTEL__J_END) {
		if (t->end_array ? t->count >= DTEL_ARRAY_MAX_ENTRIES
				 : t->count >= DTEL_DICT_MAX_ENTRIES)
			e->flags |= t->end_array ? DTEL_F_ARRAY_FULL : DTEL_F_DICT_FULL;
	}
	if (depth - 1 > MAX_VALUE_DEPTH)
		return -EPROTO;
	return e->inner(e->ctx, path + 1, depth - 1, t);
}

/* Walk a reply for @cmd; *ret_flags gets the reply's and the containers' flags. */
int
dtel__walk_reply(const struct dtel_reply *reply, const char *cmd, dtel__jvisit_t inner, void *ctx,
	unsigned int *ret_flags)
{
	struct envelope e = {.cmd = cmd, .inner = inner, .ctx = ctx};
	int r;

	if (reply == NULL || reply->json == NULL)
		return -EINVAL;
	r = dtel__json_walk(reply->json, reply->len, envelope_visit, &e);
	if (r < 0)
		return r;
	if (e.is_null)
		return -ENODATA;
	*ret_flags = reply->flags | e.flags;
	return 0;
}

/* The top-level value must be of this type (checked at its begin event). */
static int
expect_top(int depth, const struct dtel__jtok *t, enum dtel__jtype type)
{
	return depth == 0 && t->type != type && t->type != DTEL__J_END ? -EPROTO : 0;
}

static bool
get_string(const struct dtel__jtok *t, char *buf, size_t size)
{
	return t->type == DTEL__J_STRING &&
		dtel__json_str(t->p, t->len, t->escaped, buf, size) >= 0;
}

static bool
key_is(const struct dtel__jframe *path, const char *name)
{
	return dtel__json_key_is(&path[0], name);
}

/* Greeting --------------------------------------------------------------------------- */

struct greeting_ctx {
	struct dtel_greeting g;
	unsigned int seen;
};

static int
greeting_visit(void *ctx, const struct dtel__jframe *path, int depth, const struct dtel__jtok *t)
{
	struct greeting_ctx *c = ctx;
	int64_t v;

	if (depth == 0)
		return t->type == DTEL__J_OBJECT || t->type == DTEL__J_END ? 0 : -EPROTO;
	if (depth > 1)
		return 0;
	if (key_is(path, "version")) {
		if (!get_string(t, c->g.version, sizeof(c->g.version)))
			return -EPROTO;
		c->seen |= 1;
	} else if (key_is(path, "pid")) {
		if (!dtel__json_int(t, 1, INT32_MAX, &v))
			return -EPROTO;
		c->g.pid = (long)v;
		c->seen |= 2;
	} else if (key_is(path, "max_output_len")) {
		if (!dtel__json_int(t, 1, DTEL_MAX_OUTPUT_LEN_LIMIT, &v))
			return -EPROTO;
		c->g.max_output_len = (size_t)v;
		c->seen |= 4;
	}
	return 0;
}

int
dtel_parse_greeting(const char *json, size_t len, struct dtel_greeting *ret)
{
	struct greeting_ctx c = {0};
	int r;

	if (ret == NULL)
		return -EINVAL;
	r = dtel__json_walk(json, len, greeting_visit, &c);
	if (r < 0)
		return -EPROTO;
	if (c.seen != 7)
		return -EPROTO;
	*ret = c.g;
	return 0;
}

/* "DPDK YY.MM[.P][-rcN]": rte_version() in lib/eal/include/rte_version.h builds it so. */
static int
version_part(const char **p, int max)
{
	int v = 0, digits = 0;

	while (**p >= '0' && **p <= '9' && digits < 4) {
		v = v * 10 + (**p - '0');
		(*p)++;
		digits++;
	}
	return digits == 0 || v > max ? -1 : v;
}

int
dtel_dpdk_version(const char *version)
{
	const char *p = version;
	int year, month, patch = 0;

	if (p == NULL || strncmp(p, "DPDK ", 5) != 0)
		return -EINVAL;
	p += 5;
	year = version_part(&p, 99);
	if (year < 0 || *p++ != '.')
		return -EINVAL;
	month = version_part(&p, 12);
	if (month < 0)
		return -EINVAL;
	if (*p == '.') {
		p++;
		patch = version_part(&p, 99);
		if (patch < 0)
			return -EINVAL;
	}
	return year * 10000 + month * 100 + patch;
}

/* /ethdev/list ----------------------------------------------------------------------- */

struct list_ctx {
	uint16_t *ids;
	size_t n, cap;
};

static int
list_visit(void *ctx, const struct dtel__jframe *path, int depth, const struct dtel__jtok *t)
{
	struct list_ctx *c = ctx;
	int64_t id;

	(void)path;
	if (depth == 0)
		return expect_top(depth, t, DTEL__J_ARRAY);
	if (depth > 1 || !dtel__json_int(t, 0, UINT16_MAX, &id))
		return -EPROTO;
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 32;
		uint16_t *ids = realloc(c->ids, cap * sizeof(*ids));

		if (ids == NULL)
			return -ENOMEM;
		c->ids = ids;
		c->cap = cap;
	}
	c->ids[c->n++] = (uint16_t)id;
	return 0;
}

int
dtel_parse_port_list(const struct dtel_reply *reply, uint16_t **ret_ids)
{
	struct list_ctx c = {0};
	unsigned int flags;
	int r;

	if (ret_ids == NULL)
		return -EINVAL;
	r = dtel__walk_reply(reply, "/ethdev/list", list_visit, &c, &flags);
	if (r < 0) {
		free(c.ids);
		return r;
	}
	*ret_ids = c.ids;
	return (int)c.n;
}

/* /ethdev/stats ---------------------------------------------------------------------- */

static const char *const counter_names[] = {
	"ipackets", "opackets", "ibytes", "obytes", "imissed", "ierrors", "oerrors", "rx_nombuf"};
static const char *const queue_names[] = {
	"q_ipackets", "q_opackets", "q_ibytes", "q_obytes", "q_errors"};

struct stats_ctx {
	struct dtel_port_stats st;
	unsigned int seen;
	int queue; /* the q_* array being read (index in queue_names), or -1 */
};

static uint64_t *
counter_of(struct dtel_port_stats *st, size_t i)
{
	uint64_t *const c[] = {&st->ipackets, &st->opackets, &st->ibytes, &st->obytes, &st->imissed,
		&st->ierrors, &st->oerrors, &st->rx_nombuf};

	return c[i];
}

static uint64_t *
queue_array_of(struct dtel_port_stats *st, size_t i)
{
	uint64_t *const q[] = {
		st->q_ipackets, st->q_opackets, st->q_ibytes, st->q_obytes, st->q_errors};

	return q[i];
}

static int
find_name(const struct dtel__jframe *f, const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (dtel__json_key_is(f, names[i]))
			return (int)i;
	return -1;
}

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static int
stats_visit(void *ctx, const struct dtel__jframe *path, int depth, const struct dtel__jtok *t)
{
	struct stats_ctx *c = ctx;
	uint64_t v;
	int k;

	if (depth == 0)
		return expect_top(depth, t, DTEL__J_OBJECT);
	if (depth == 1) {
		if (t->type == DTEL__J_END) {
			c->queue = -1;
			return 0;
		}
		k = find_name(&path[0], counter_names, NELEM(counter_names));
		if (k >= 0) {
			if (!dtel__json_u64(t, counter_of(&c->st, (size_t)k)))
				return -EPROTO;
			c->seen |= 1u << k;
			return 0;
		}
		/* Look the array's name up once, at its start, not for each entry. */
		c->queue = find_name(&path[0], queue_names, NELEM(queue_names));
		if (c->queue >= 0 && t->type != DTEL__J_ARRAY)
			return -EPROTO;
		return 0;
	}
	k = c->queue;
	if (k < 0)
		return 0; /* something newer inside a key we do not know */
	if (depth > 2 || !dtel__json_u64(t, &v))
		return -EPROTO;
	if (path[1].index < DTEL_QUEUE_STATS_MAX) {
		queue_array_of(&c->st, (size_t)k)[path[1].index] = v;
		if (path[1].index + 1 > c->st.nb_queues)
			c->st.nb_queues = (unsigned int)path[1].index + 1;
	} else {
		c->st.flags |= DTEL_F_INVALID; /* more queues than DTEL_QUEUE_STATS_MAX */
	}
	return 0;
}

int
dtel_parse_port_stats(const struct dtel_reply *reply, struct dtel_port_stats *ret)
{
	struct stats_ctx *c;
	unsigned int flags;
	int r;

	if (ret == NULL)
		return -EINVAL;
	/* The struct is large; fill a heap copy so that *ret stays untouched on failure. */
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return -ENOMEM;
	c->queue = -1;
	r = dtel__walk_reply(reply, "/ethdev/stats", stats_visit, c, &flags);
	if (r == 0 && c->seen != (1u << NELEM(counter_names)) - 1)
		r = -EPROTO;
	if (r == 0) {
		c->st.flags |= flags;
		*ret = c->st;
	}
	free(c);
	return r;
}

/* /ethdev/xstats --------------------------------------------------------------------- */

struct xstats_ctx {
	struct dtel_xstats x;
	size_t cap;
};

static int
xstats_add(struct xstats_ctx *c, const struct dtel__jframe *f, uint64_t v)
{
	struct dtel_xstat *e;

	if (c->x.n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 32;
		struct dtel_xstat *nv = realloc(c->x.v, cap * sizeof(*nv));

		if (nv == NULL)
			return -ENOMEM;
		c->x.v = nv;
		c->cap = cap;
	}
	e = &c->x.v[c->x.n];
	if (dtel__json_str(f->key, f->key_len, f->key_escaped, e->name, sizeof(e->name)) < 0) {
		c->x.nb_invalid++;
		return 0;
	}
	e->value = v;
	c->x.n++;
	return 0;
}

static int
xstats_visit(void *ctx, const struct dtel__jframe *path, int depth, const struct dtel__jtok *t)
{
	struct xstats_ctx *c = ctx;
	uint64_t v;

	if (depth == 0)
		return expect_top(depth, t, DTEL__J_OBJECT);
	if (depth > 1 || t->type == DTEL__J_END)
		return 0; /* inside a nested value, already counted as invalid */
	if (!dtel__json_u64(t, &v)) {
		c->x.nb_invalid++;
		return 0;
	}
	return xstats_add(c, &path[0], v);
}

int
dtel_parse_xstats(const struct dtel_reply *reply, struct dtel_xstats *ret)
{
	struct xstats_ctx c = {0};
	unsigned int flags;
	int r;

	if (ret == NULL)
		return -EINVAL;
	r = dtel__walk_reply(reply, "/ethdev/xstats", xstats_visit, &c, &flags);
	if (r < 0) {
		free(c.x.v);
		return r;
	}
	c.x.flags = flags | (c.x.nb_invalid ? DTEL_F_INVALID : 0);
	*ret = c.x;
	return 0;
}

void
dtel_xstats_clear(struct dtel_xstats *x)
{
	if (x == NULL)
		return;
	free(x->v);
	memset(x, 0, sizeof(*x));
}

/* Per-queue counters among the xstats (rte_ethdev.c: eth_basic_stats_strings,
 * eth_dev_rxq_stats_strings "packets", "bytes", "errors", eth_dev_txq_stats_strings "packets",
 * "bytes", named "rx_q%u_%s" / "tx_q%u_%s" by eth_basic_stats_get_names). */
static bool
queue_xstat(const char *name, bool *rx, unsigned long *q, const char **what)
{
	char *end;

	if (strncmp(name, "rx_q", 4) != 0 && strncmp(name, "tx_q", 4) != 0)
		return false;
	if (name[4] < '0' || name[4] > '9')
		return false;
	*rx = name[0] == 'r';
	errno = 0;
	*q = strtoul(name + 4, &end, 10);
	if (errno != 0 || *end != '_')
		return false;
	*what = end + 1;
	return true;
}

int
dtel_xstats_queue_stats(const struct dtel_xstats *x, struct dtel_port_stats *st)
{
	unsigned int n = 0;
	unsigned long q;
	const char *what;
	bool rx;

	if (x == NULL || st == NULL)
		return -EINVAL;
	memset(st->q_ipackets, 0, sizeof(st->q_ipackets));
	memset(st->q_opackets, 0, sizeof(st->q_opackets));
	memset(st->q_ibytes, 0, sizeof(st->q_ibytes));
	memset(st->q_obytes, 0, sizeof(st->q_obytes));
	memset(st->q_errors, 0, sizeof(st->q_errors));
	for (size_t i = 0; i < x->n; i++) {
		uint64_t *slot = NULL;

		if (!queue_xstat(x->v[i].name, &rx, &q, &what) || q >= DTEL_QUEUE_STATS_MAX)
			continue;
		if (strcmp(what, "packets") == 0)
			slot = rx ? st->q_ipackets : st->q_opackets;
		else if (strcmp(what, "bytes") == 0)
			slot = rx ? st->q_ibytes : st->q_obytes;
		else if (strcmp(what, "errors") == 0 && rx)
			slot = st->q_errors;
		if (slot == NULL)
			continue;
		slot[q] = x->v[i].value;
		if (q + 1 > n)
			n = (unsigned int)q + 1;
	}
	st->nb_queues = n;
	return (int)n;
}

int
dtel_xstats_port_stats(const struct dtel_xstats *x, struct dtel_port_stats *st)
{
	/* In the order of ethdev's eth_dev_stats_strings. */
	static const char *const names[] = {"rx_good_packets", "tx_good_packets", "rx_good_bytes",
		"tx_good_bytes", "rx_missed_errors", "rx_errors", "tx_errors",
		"rx_mbuf_allocation_errors"};
	struct dtel_port_stats out = {0};
	uint64_t *const slots[] = {&out.ipackets, &out.opackets, &out.ibytes, &out.obytes,
		&out.imissed, &out.ierrors, &out.oerrors, &out.rx_nombuf};
	unsigned int found = 0;

	if (x == NULL || st == NULL)
		return -EINVAL;
	for (size_t i = 0; i < x->n && found != (1u << 8) - 1; i++)
		for (unsigned int k = 0; k < 8; k++)
			if (!(found & (1u << k)) && strcmp(x->v[i].name, names[k]) == 0) {
				*slots[k] = x->v[i].value;
				found |= 1u << k;
				break;
			}
	if (found != (1u << 8) - 1)
		return -ENOENT;
	dtel_xstats_queue_stats(x, &out);
	out.flags = x->flags;
	*st = out;
	return (int)out.nb_queues;
}

/* Where in known->v[from..] (then known->v[..from]) @name is; -1: nowhere. */
static long
known_index(const struct dtel_xstats *known, size_t from, const char *name)
{
	for (size_t k = from; k < known->n; k++)
		if (strcmp(known->v[k].name, name) == 0)
			return (long)k;
	for (size_t k = 0; k < from && k < known->n; k++)
		if (strcmp(known->v[k].name, name) == 0)
			return (long)k;
	return -1;
}

int
dtel_xstats_fill_hidden(struct dtel_xstats *x, const struct dtel_xstats *known)
{
	struct dtel_xstat *out;
	/* known->v[k] for k < next is in out, at pos[k]; those from next on are not yet. */
	size_t *pos, n = 0, next = 0;

	if (x == NULL || known == NULL || x->n > SIZE_MAX / 2 - known->n)
		return -EINVAL;
	out = malloc((x->n + known->n + 1) * sizeof(*out));
	pos = malloc((known->n + 1) * sizeof(*pos));
	if (out == NULL || pos == NULL) {
		free(out);
		free(pos);
		return -ENOMEM;
	}
	/* DPDK keeps the order: a walk along both lists, the hidden ones put back as 0 on the
	 * way. A name out of that order (a different application behind the socket) is searched
	 * for, so that no name ends up twice. */
	for (size_t i = 0; i < x->n; i++) {
		long k = known_index(known, next, x->v[i].name);

		if (k >= 0 && (size_t)k < next) {
			out[pos[k]].value = x->v[i].value;
			continue;
		}
		for (; k >= 0 && next <= (size_t)k; next++) {
			out[n] = known->v[next];
			out[n].value = 0;
			pos[next] = n++;
		}
		if (k >= 0)
			out[pos[k]].value = x->v[i].value;
		else
			out[n++] = x->v[i];
	}
	for (; next < known->n; next++) {
		out[n] = known->v[next];
		out[n].value = 0;
		n++;
	}
	free(pos);
	free(x->v);
	x->v = out;
	x->n = n;
	return (int)n;
}

/* /ethdev/link_status ---------------------------------------------------------------- */

const char *
dtel_duplex_name(enum dtel_duplex duplex)
{
	switch (duplex) {
	case DTEL_DUPLEX_FULL:
		return "full-duplex";
	case DTEL_DUPLEX_HALF:
		return "half-duplex";
	default:
		return "unknown";
	}
}

struct link_ctx {
	struct dtel_link l;
	bool have_status, have_speed;
};

static int
link_visit(void *ctx, const struct dtel__jframe *path, int depth, const struct dtel__jtok *t)
{
	struct link_ctx *c = ctx;
	char buf[DTEL_STRING_MAX];

	if (depth != 1)
		return depth == 0 ? expect_top(depth, t, DTEL__J_OBJECT) : 0;
	if (key_is(path, "status")) {
		if (!get_string(t, buf, sizeof(buf)))
			return -EPROTO;
		if (strcmp(buf, "UP") == 0)
			c->l.up = true;
		else if (strcmp(buf, "DOWN") != 0)
			return -EPROTO;
		c->have_status = true;
	} else if (key_is(path, "speed")) {
		if (!dtel__json_u64(t, &c->l.speed_mbps))
			return -EPROTO;
		c->have_speed = true;
	} else if (key_is(path, "duplex")) {
		if (!get_string(t, buf, sizeof(buf)))
			return -EPROTO;
		if (strcmp(buf, "full-duplex") == 0)
			c->l.duplex = DTEL_DUPLEX_FULL;
		else if (strcmp(buf, "half-duplex") == 0)
			c->l.duplex = DTEL_DUPLEX_HALF;
	}
	return 0;
}

int
dtel_parse_link(const struct dtel_reply *reply, struct dtel_link *ret)
{
	struct link_ctx c = {0};
	int r;

	if (ret == NULL)
		return -EINVAL;
	r = dtel__walk_reply(reply, "/ethdev/link_status", link_visit, &c, &c.l.flags);
	if (r < 0)
		return r;
	if (!c.have_status)
		return -EPROTO;
	if (c.l.up && !c.have_speed)
		c.l.speed_mbps = DTEL_SPEED_UNKNOWN;
	*ret = c.l;
	return 0;
}

/* /ethdev/info ----------------------------------------------------------------------- */

struct info_ctx {
	struct dtel_port_info pi;
	unsigned int seen;
};

/* dev_flags: an integer up to DPDK 22.11, a "0x..." string from 23.03. */
static bool
get_flags(const struct dtel__jtok *t, uint64_t *ret)
{
	char buf[32], *end;

	if (dtel__json_u64(t, ret))
		return true;
	if (!get_string(t, buf, sizeof(buf)) || strncmp(buf, "0x", 2) != 0 || buf[2] == '\0')
		return false;
	errno = 0;
	*ret = strtoull(buf + 2, &end, 16);
	return errno == 0 && *end == '\0';
}

static void
info_int(const struct dtel__jtok *t, int64_t min, int64_t max, void *dst, size_t size)
{
	int64_t v;

	if (!dtel__json_int(t, min, max, &v))
		return;
	if (size == sizeof(int))
		*(int *)dst = (int)v;
	else if (size == sizeof(uint16_t))
		*(uint16_t *)dst = (uint16_t)v;
}

static int
info_visit(void *ctx, const struct dtel__jframe *path, int depth, const struct dtel__jtok *t)
{
	struct info_ctx *c = ctx;
	struct dtel_port_info *pi = &c->pi;
	int64_t v;

	if (depth != 1)
		return depth == 0 ? expect_top(depth, t, DTEL__J_OBJECT) : 0;
	/* Only name and port_id are required: the rest varies across versions and drivers. */
	if (key_is(path, "name")) {
		if (!get_string(t, pi->name, sizeof(pi->name)))
			return -EPROTO;
		c->seen |= 1;
	} else if (key_is(path, "port_id")) {
		if (!dtel__json_int(t, 0, UINT16_MAX, &v))
			return -EPROTO;
		pi->port_id = (uint16_t)v;
		c->seen |= 2;
	} else if (key_is(path, "state")) {
		info_int(t, INT32_MIN, INT32_MAX, &pi->state, sizeof(int));
	} else if (key_is(path, "nb_rx_queues") && dtel__json_int(t, 0, UINT16_MAX, &v)) {
		pi->nb_rx_queues = (unsigned int)v;
	} else if (key_is(path, "nb_tx_queues") && dtel__json_int(t, 0, UINT16_MAX, &v)) {
		pi->nb_tx_queues = (unsigned int)v;
	} else if (key_is(path, "mtu") && dtel__json_int(t, 0, UINT32_MAX, &v)) {
		pi->mtu = (unsigned int)v;
	} else if (key_is(path, "numa_node")) {
		info_int(t, INT32_MIN, INT32_MAX, &pi->numa_node, sizeof(int));
	} else if (key_is(path, "promiscuous") && dtel__json_int(t, 0, 1, &v)) {
		pi->promiscuous = v != 0;
	} else if (key_is(path, "dev_started") && dtel__json_int(t, 0, 1, &v)) {
		pi->dev_started = v != 0;
	} else if (key_is(path, "mac_addr")) {
		if (!get_string(t, pi->mac_addr, sizeof(pi->mac_addr)))
			pi->mac_addr[0] = '\0';
	} else if (key_is(path, "dev_flags")) {
		if (!get_flags(t, &pi->dev_flags))
			pi->flags |= DTEL_F_INVALID;
	}
	return 0;
}

int
dtel_parse_port_info(const struct dtel_reply *reply, struct dtel_port_info *ret)
{
	struct info_ctx c = {.pi.numa_node = -1};
	unsigned int flags;
	int r;

	if (ret == NULL)
		return -EINVAL;
	r = dtel__walk_reply(reply, "/ethdev/info", info_visit, &c, &flags);
	if (r < 0)
		return r;
	if (c.seen != 3)
		return -EPROTO;
	c.pi.flags |= flags;
	*ret = c.pi;
	return 0;
}

/* /eal/params ------------------------------------------------------------------------ */

struct params_ctx {
	char (*argv)[DTEL_STRING_MAX]; /* DPDK cuts its strings to 127 bytes: each fits */
	size_t n, cap;
	unsigned int flags;
};

static int
params_visit(void *ctx, const struct dtel__jframe *path, int depth, const struct dtel__jtok *t)
{
	struct params_ctx *c = ctx;

	(void)path;
	if (depth == 0)
		return expect_top(depth, t, DTEL__J_ARRAY);
	if (depth > 1 || t->type != DTEL__J_STRING)
		return -EPROTO;
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 16;
		char(*nv)[DTEL_STRING_MAX] = realloc(c->argv, cap * sizeof(*nv));

		if (nv == NULL)
			return -ENOMEM;
		c->argv = nv;
		c->cap = cap;
	}
	if (dtel__json_str(t->p, t->len, t->escaped, c->argv[c->n], DTEL_STRING_MAX) < 0) {
		c->flags |= DTEL_F_INVALID;
		c->argv[c->n][0] = '\0';
	}
	c->n++;
	return 0;
}

static void
copy_str(char *dst, size_t size, const char *src, unsigned int *flags)
{
	size_t n = strlen(src);

	if (n >= size) {
		*flags |= DTEL_F_INVALID;
		n = size - 1;
	}
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/*
 * The value of option @opt at argv[*i]: "--opt=X", "--opt X", "-oX" or "-o X". Advances *i
 * over a separate value. NULL when argv[*i] is not that option.
 */
static const char *
opt_value(char (*argv)[DTEL_STRING_MAX], size_t n, size_t *i, const char *opt)
{
	const char *a = argv[*i];
	size_t len = strlen(opt);

	if (strncmp(a, opt, len) != 0)
		return NULL;
	if (a[len] == '=' && opt[1] == '-')
		return a + len + 1;
	if (a[len] != '\0')
		return opt[1] != '-' ? a + len : NULL;
	if (*i + 1 >= n)
		return NULL;
	(*i)++;
	return argv[*i];
}

static void
eal_options(struct params_ctx *c, struct dtel_eal_params *p)
{
	const char *val, *slash;

	snprintf(p->file_prefix, sizeof(p->file_prefix), "%s", DTEL_DEFAULT_PREFIX);
	if (c->n > 0) {
		slash = strrchr(c->argv[0], '/');
		copy_str(p->app, sizeof(p->app), slash ? slash + 1 : c->argv[0], &p->flags);
	}
	for (size_t i = 1; i < c->n; i++) {
		const char *a = c->argv[i];

		if (strcmp(a, "--in-memory") == 0 || strcmp(a, "--no-shconf") == 0)
			p->in_memory = true;
		else if (strcmp(a, "--no-huge") == 0)
			p->no_huge = true;
		else if ((val = opt_value(c->argv, c->n, &i, "--file-prefix")) != NULL)
			copy_str(p->file_prefix, sizeof(p->file_prefix), val, &p->flags);
		else if ((val = opt_value(c->argv, c->n, &i, "--lcores")) != NULL ||
			(val = opt_value(c->argv, c->n, &i, "-l")) != NULL ||
			(val = opt_value(c->argv, c->n, &i, "-c")) != NULL)
			copy_str(p->lcores, sizeof(p->lcores), val, &p->flags);
	}
}

int
dtel_parse_eal_params(const struct dtel_reply *reply, struct dtel_eal_params *ret)
{
	struct params_ctx c = {0};
	struct dtel_eal_params p = {0};
	int r;

	if (ret == NULL)
		return -EINVAL;
	r = dtel__walk_reply(reply, "/eal/params", params_visit, &c, &p.flags);
	if (r == 0) {
		p.flags |= c.flags;
		eal_options(&c, &p);
		*ret = p;
	}
	free(c.argv);
	return r;
}

int
dtel_parse_eal_argv(const struct dtel_reply *reply, char (**ret_argv)[DTEL_STRING_MAX])
{
	struct params_ctx c = {0};
	unsigned int flags = 0;
	int r;

	if (ret_argv == NULL)
		return -EINVAL;
	r = dtel__walk_reply(reply, "/eal/params", params_visit, &c, &flags);
	if (r < 0 || c.n > INT_MAX) {
		free(c.argv);
		return r < 0 ? r : -EPROTO;
	}
	*ret_argv = c.argv;
	return (int)c.n;
}

/* /eal/lcore/info (DPDK >= 23.03) ---------------------------------------------------- */

struct lcore_ctx {
	struct dtel_eal_lcore_info li;
	bool have_id, have_total, have_busy;
};

static int
lcore_visit(void *ctx, const struct dtel__jframe *path, int depth, const struct dtel__jtok *t)
{
	struct lcore_ctx *c = ctx;
	int64_t v;

	if (depth == 2 && key_is(path, "cpuset") && t->type != DTEL__J_END) {
		if (!dtel__json_int(t, 0, INT32_MAX, &v))
			return -EPROTO;
		if (v < (int64_t)DTEL_CPUSET_WORDS * 64)
			c->li.cpuset[v / 64] |= 1ull << (v % 64);
		return 0;
	}
	if (depth != 1)
		return depth == 0 ? expect_top(depth, t, DTEL__J_OBJECT) : 0;
	if (key_is(path, "lcore_id")) {
		if (!dtel__json_int(t, 0, INT32_MAX, &v))
			return -EPROTO;
		c->li.lcore_id = (unsigned int)v;
		c->have_id = true;
	} else if (key_is(path, "socket") && dtel__json_int(t, INT32_MIN, INT32_MAX, &v)) {
		c->li.socket = (int)v;
	} else if (key_is(path, "role")) {
		if (!get_string(t, c->li.role, sizeof(c->li.role)))
			c->li.role[0] = '\0';
	} else if (key_is(path, "total_cycles")) {
		c->have_total = dtel__json_u64(t, &c->li.total_cycles);
	} else if (key_is(path, "busy_cycles")) {
		c->have_busy = dtel__json_u64(t, &c->li.busy_cycles);
	}
	return 0;
}

int
dtel_parse_eal_lcore_info(const struct dtel_reply *reply, struct dtel_eal_lcore_info *ret)
{
	struct lcore_ctx c = {.li.socket = -1};
	int r;

	if (ret == NULL)
		return -EINVAL;
	r = dtel__walk_reply(reply, "/eal/lcore/info", lcore_visit, &c, &c.li.flags);
	if (r < 0)
		return r;
	if (!c.have_id)
		return -EPROTO;
	c.li.has_cycles = c.have_total && c.have_busy;
	if (!c.li.has_cycles)
		c.li.total_cycles = c.li.busy_cycles = 0;
	*ret = c.li;
	return 0;
}

/* Generic dicts ---------------------------------------------------------------------- */

struct dict_ctx {
	struct dtel_dict d;
	size_t cap;
};

/* The flattened key of the value at path: keys and indexes joined with '.'. */
static int
flat_key(const struct dtel__jframe *path, int depth, char *buf, size_t size)
{
	size_t n = 0;

	for (int i = 0; i < depth; i++) {
		char part[DTEL_KEY_MAX];
		int k;

		if (path[i].is_array)
			k = snprintf(part, sizeof(part), "%zu", path[i].index);
		else
			k = dtel__json_str(path[i].key, path[i].key_len, path[i].key_escaped, part,
				sizeof(part));
		if (k < 0 || n + (size_t)k + (n ? 1 : 0) >= size)
			return -1;
		if (n)
			buf[n++] = '.';
		memcpy(buf + n, part, (size_t)k + 1);
		n += (size_t)k;
	}
	return (int)n;
}

static struct dtel_entry *
dict_add(struct dict_ctx *c)
{
	if (c->d.n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 32;
		struct dtel_entry *v = realloc(c->d.v, cap * sizeof(*v));

		if (v == NULL)
			return NULL;
		c->d.v = v;
		c->cap = cap;
	}
	memset(&c->d.v[c->d.n], 0, sizeof(c->d.v[0]));
	return &c->d.v[c->d.n];
}

static void
dict_scalar(struct dtel_entry *e, const struct dtel__jtok *t, bool *ok)
{
	*ok = true;
	switch (t->type) {
	case DTEL__J_NULL:
		e->type = DTEL_VALUE_NULL;
		break;
	case DTEL__J_TRUE:
	case DTEL__J_FALSE:
		e->type = DTEL_VALUE_BOOL;
		e->v.b = t->type == DTEL__J_TRUE;
		break;
	case DTEL__J_STRING:
		e->type = DTEL_VALUE_STRING;
		*ok = get_string(t, e->str, sizeof(e->str));
		break;
	default:
		if (dtel__json_u64(t, &e->v.u64))
			e->type = DTEL_VALUE_U64;
		else if (dtel__json_int(t, INT64_MIN, -1, &e->v.i64))
			e->type = DTEL_VALUE_I64;
		else if (dtel__json_double(t, &e->v.d))
			e->type = DTEL_VALUE_DOUBLE;
		else
			*ok = false; /* an integer beyond 64 bits, or beyond a double's range */
		break;
	}
}

static int
dict_visit(void *ctx, const struct dtel__jframe *path, int depth, const struct dtel__jtok *t)
{
	struct dict_ctx *c = ctx;
	struct dtel_entry *e;
	bool ok;

	if (depth == 0)
		return t->type == DTEL__J_OBJECT || t->type == DTEL__J_ARRAY ||
				t->type == DTEL__J_END
			? 0
			: -EPROTO;
	if (t->type == DTEL__J_OBJECT || t->type == DTEL__J_ARRAY || t->type == DTEL__J_END)
		return 0;
	e = dict_add(c);
	if (e == NULL)
		return -ENOMEM;
	if (flat_key(path, depth, e->key, sizeof(e->key)) < 0) {
		c->d.nb_invalid++;
		return 0;
	}
	dict_scalar(e, t, &ok);
	if (!ok) {
		c->d.nb_invalid++;
		return 0;
	}
	c->d.n++;
	return 0;
}

int
dtel_parse_dict(const struct dtel_reply *reply, const char *cmd, struct dtel_dict *ret)
{
	struct dict_ctx c = {0};
	unsigned int flags;
	int r;

	if (ret == NULL)
		return -EINVAL;
	r = dtel__walk_reply(reply, cmd, dict_visit, &c, &flags);
	if (r < 0) {
		free(c.d.v);
		return r;
	}
	c.d.flags = flags | (c.d.nb_invalid ? DTEL_F_INVALID : 0);
	*ret = c.d;
	return 0;
}

void
dtel_dict_clear(struct dtel_dict *d)
{
	if (d == NULL)
		return;
	free(d->v);
	memset(d, 0, sizeof(*d));
}

const struct dtel_entry *
dtel_dict_find(const struct dtel_dict *d, const char *key)
{
	for (size_t i = 0; i < d->n; i++)
		if (strcmp(d->v[i].key, key) == 0)
			return &d->v[i];
	return NULL;
}
