/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reply parsers: pure functions from a datagram to plain structs. json-c is used here and
 * nowhere else in the library, and its objects never leave this file: every function
 * releases the parsed tree on every path.
 */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtel_private.h"

/* Nesting below the reply's value that any known DPDK reply needs, with room to spare. */
#define MAX_DEPTH 8

/*
 * json-c saturates integers that do not fit in 64 bits to UINT64_MAX / INT64_MIN without
 * saying so. Find such literals in the text first, so that an overflowing counter is refused
 * instead of read as UINT64_MAX.
 */
static bool
has_oversized_integer(const char *s, size_t len)
{
	static const char u64_max[] = "18446744073709551615";
	bool in_string = false;

	for (size_t i = 0; i < len; i++) {
		size_t start, digits;

		if (in_string) {
			if (s[i] == '\\')
				i++;
			else if (s[i] == '"')
				in_string = false;
			continue;
		}
		if (s[i] == '"') {
			in_string = true;
			continue;
		}
		if (s[i] < '0' || s[i] > '9')
			continue;
		start = i;
		while (i < len && s[i] >= '0' && s[i] <= '9')
			i++;
		digits = i - start;
		if (digits > 20 || (digits == 20 && memcmp(s + start, u64_max, 20) > 0))
			return true;
		i--;
	}
	return false;
}

/* Set DTEL_F_DICT_FULL / DTEL_F_ARRAY_FULL for any container at DPDK's entry caps. */
static unsigned int
container_flags(struct json_object *o, int depth)
{
	unsigned int flags = 0;

	if (depth > MAX_DEPTH + 1)
		return 0;
	if (json_object_is_type(o, json_type_object)) {
		if (json_object_object_length(o) >= DTEL_DICT_MAX_ENTRIES)
			flags |= DTEL_F_DICT_FULL;
		json_object_object_foreach(o, k, v) {
			(void)k;
			flags |= container_flags(v, depth + 1);
		}
	} else if (json_object_is_type(o, json_type_array)) {
		size_t n = json_object_array_length(o);

		if (n >= DTEL_ARRAY_MAX_ENTRIES)
			flags |= DTEL_F_ARRAY_FULL;
		for (size_t i = 0; i < n; i++)
			flags |= container_flags(json_object_array_get_idx(o, i), depth + 1);
	}
	return flags;
}

/* Parse a whole JSON text of exactly len bytes; -EPROTO unless it is one valid value. */
static int
parse_text(const char *json, size_t len, struct json_object **ret)
{
	struct json_tokener *tok;
	struct json_object *o;
	int ret_code = -EPROTO;

	if (json == NULL || len == 0 || len > INT32_MAX || has_oversized_integer(json, len))
		return -EPROTO;
	/* The reply's value sits one level below the root; json-c counts the root too. */
	tok = json_tokener_new_ex(MAX_DEPTH + 2);
	if (tok == NULL)
		return -ENOMEM;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	o = json_tokener_parse_ex(tok, json, (int)len);
	if (o != NULL && json_tokener_get_error(tok) == json_tokener_success &&
		json_tokener_get_parse_end(tok) == len) {
		*ret = o;
		ret_code = 0;
	} else {
		json_object_put(o);
	}
	json_tokener_free(tok);
	return ret_code;
}

/*
 * Parse a reply {"<cmd>": value}. On success *ret_root owns the tree and *ret_value points
 * into it. @cmd may be NULL to accept any key. A null value is -ENODATA.
 */
static int
parse_reply(const struct dtel_reply *reply, const char *cmd, struct json_object **ret_root,
	struct json_object **ret_value, unsigned int *ret_flags)
{
	struct json_object *root = NULL, *value = NULL;
	int ret;

	if (reply == NULL)
		return -EINVAL;
	ret = parse_text(reply->json, reply->len, &root);
	if (ret < 0)
		return ret;
	if (!json_object_is_type(root, json_type_object) || json_object_object_length(root) != 1)
		goto bad;
	json_object_object_foreach(root, key, v) {
		if (cmd != NULL && strcmp(key, cmd) != 0)
			goto bad;
		value = v;
	}
	if (value == NULL) {
		json_object_put(root);
		return -ENODATA;
	}
	*ret_root = root;
	*ret_value = value;
	*ret_flags = reply->flags | container_flags(value, 0);
	return 0;
bad:
	json_object_put(root);
	return -EPROTO;
}

/* An integer >= 0 (exact to UINT64_MAX) into *ret; false for anything else. */
static bool
get_u64(struct json_object *o, uint64_t *ret)
{
	if (o == NULL || !json_object_is_type(o, json_type_int) || json_object_get_int64(o) < 0)
		return false;
	*ret = json_object_get_uint64(o);
	return true;
}

static bool
get_int(struct json_object *o, int64_t min, int64_t max, int64_t *ret)
{
	int64_t v;

	if (o == NULL || !json_object_is_type(o, json_type_int))
		return false;
	v = json_object_get_int64(o);
	if (v < min || v > max)
		return false;
	*ret = v;
	return true;
}

static bool
get_string(struct json_object *o, char *buf, size_t size)
{
	const char *s;
	size_t n;

	if (o == NULL || !json_object_is_type(o, json_type_string))
		return false;
	s = json_object_get_string(o);
	n = (size_t)json_object_get_string_len(o);
	if (n >= size || memchr(s, '\0', n) != NULL)
		return false;
	memcpy(buf, s, n + 1);
	return true;
}

static struct json_object *
member(struct json_object *obj, const char *key)
{
	struct json_object *v = NULL;

	if (!json_object_object_get_ex(obj, key, &v))
		return NULL;
	return v;
}

int
dtel_parse_greeting(const char *json, size_t len, struct dtel_greeting *ret)
{
	struct dtel_greeting g = {0};
	struct json_object *root = NULL;
	int64_t pid, mol;
	int r;

	if (ret == NULL)
		return -EINVAL;
	r = parse_text(json, len, &root);
	if (r < 0)
		return r;
	r = -EPROTO;
	if (!json_object_is_type(root, json_type_object))
		goto out;
	if (!get_string(member(root, "version"), g.version, sizeof(g.version)) ||
		!get_int(member(root, "pid"), 1, INT32_MAX, &pid) ||
		!get_int(member(root, "max_output_len"), 1, DTEL_MAX_OUTPUT_LEN_LIMIT, &mol))
		goto out;
	g.pid = (long)pid;
	g.max_output_len = (size_t)mol;
	*ret = g;
	r = 0;
out:
	json_object_put(root);
	return r;
}

int
dtel_parse_port_list(const struct dtel_reply *reply, uint16_t **ret_ids)
{
	struct json_object *root, *v;
	uint16_t *ids = NULL;
	unsigned int flags;
	size_t n;
	int r;

	if (ret_ids == NULL)
		return -EINVAL;
	r = parse_reply(reply, "/ethdev/list", &root, &v, &flags);
	if (r < 0)
		return r;
	r = -EPROTO;
	if (!json_object_is_type(v, json_type_array))
		goto out;
	n = json_object_array_length(v);
	if (n > 0) {
		ids = calloc(n, sizeof(*ids));
		if (ids == NULL) {
			r = -ENOMEM;
			goto out;
		}
	}
	for (size_t i = 0; i < n; i++) {
		int64_t id;

		if (!get_int(json_object_array_get_idx(v, i), 0, UINT16_MAX, &id)) {
			free(ids);
			goto out;
		}
		ids[i] = (uint16_t)id;
	}
	*ret_ids = ids;
	r = (int)n;
out:
	json_object_put(root);
	return r;
}

/* A u64 array into dst (at most DTEL_QUEUE_STATS_MAX); returns its length or -1. */
static int
get_u64_array(struct json_object *a, uint64_t *dst)
{
	size_t n;

	if (!json_object_is_type(a, json_type_array))
		return -1;
	n = json_object_array_length(a);
	for (size_t i = 0; i < n; i++) {
		uint64_t x;

		if (!get_u64(json_object_array_get_idx(a, i), &x))
			return -1;
		if (i < DTEL_QUEUE_STATS_MAX)
			dst[i] = x;
	}
	return n > DTEL_QUEUE_STATS_MAX ? DTEL_QUEUE_STATS_MAX : (int)n;
}

int
dtel_parse_port_stats(const struct dtel_reply *reply, struct dtel_port_stats *ret)
{
	static const char *const qnames[] = {
		"q_ipackets", "q_opackets", "q_ibytes", "q_obytes", "q_errors"};
	struct dtel_port_stats *st;
	struct json_object *root, *v, *a;
	unsigned int flags;
	int r, nq;

	if (ret == NULL)
		return -EINVAL;
	r = parse_reply(reply, "/ethdev/stats", &root, &v, &flags);
	if (r < 0)
		return r;
	/* The struct is large; fill a heap copy so that *ret stays untouched on failure. */
	st = calloc(1, sizeof(*st));
	r = st == NULL ? -ENOMEM : -EPROTO;
	if (st == NULL || !json_object_is_type(v, json_type_object))
		goto out;
	st->flags = flags;
	if (!get_u64(member(v, "ipackets"), &st->ipackets) ||
		!get_u64(member(v, "opackets"), &st->opackets) ||
		!get_u64(member(v, "ibytes"), &st->ibytes) ||
		!get_u64(member(v, "obytes"), &st->obytes) ||
		!get_u64(member(v, "imissed"), &st->imissed) ||
		!get_u64(member(v, "ierrors"), &st->ierrors) ||
		!get_u64(member(v, "oerrors"), &st->oerrors) ||
		!get_u64(member(v, "rx_nombuf"), &st->rx_nombuf))
		goto out;
	uint64_t *qdst[] = {
		st->q_ipackets, st->q_opackets, st->q_ibytes, st->q_obytes, st->q_errors};
	for (size_t i = 0; i < sizeof(qnames) / sizeof(qnames[0]); i++) {
		a = member(v, qnames[i]);
		if (a == NULL)
			continue;
		nq = get_u64_array(a, qdst[i]);
		if (nq < 0)
			goto out;
		if ((unsigned int)nq > st->nb_queues)
			st->nb_queues = (unsigned int)nq;
		if (json_object_array_length(a) > DTEL_QUEUE_STATS_MAX)
			st->flags |= DTEL_F_INVALID;
	}
	*ret = *st;
	r = 0;
out:
	free(st);
	json_object_put(root);
	return r;
}

int
dtel_parse_xstats(const struct dtel_reply *reply, struct dtel_xstats *ret)
{
	struct dtel_xstats x = {0};
	struct json_object *root, *v;
	int r;

	if (ret == NULL)
		return -EINVAL;
	r = parse_reply(reply, "/ethdev/xstats", &root, &v, &x.flags);
	if (r < 0)
		return r;
	r = -EPROTO;
	if (!json_object_is_type(v, json_type_object))
		goto out;
	x.v = calloc((size_t)json_object_object_length(v) + 1, sizeof(*x.v));
	if (x.v == NULL) {
		r = -ENOMEM;
		goto out;
	}
	json_object_object_foreach(v, key, val) {
		struct dtel_xstat *e = &x.v[x.n];

		if (strlen(key) >= sizeof(e->name) || !get_u64(val, &e->value)) {
			x.nb_invalid++;
			continue;
		}
		strcpy(e->name, key);
		x.n++;
	}
	if (x.nb_invalid > 0)
		x.flags |= DTEL_F_INVALID;
	*ret = x;
	x.v = NULL;
	r = 0;
out:
	free(x.v);
	json_object_put(root);
	return r;
}

void
dtel_xstats_clear(struct dtel_xstats *x)
{
	if (x == NULL)
		return;
	free(x->v);
	memset(x, 0, sizeof(*x));
}

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

int
dtel_parse_link(const struct dtel_reply *reply, struct dtel_link *ret)
{
	struct dtel_link l = {0};
	struct json_object *root, *v, *o;
	char buf[DTEL_STRING_MAX];
	int r;

	if (ret == NULL)
		return -EINVAL;
	r = parse_reply(reply, "/ethdev/link_status", &root, &v, &l.flags);
	if (r < 0)
		return r;
	r = -EPROTO;
	if (!json_object_is_type(v, json_type_object) ||
		!get_string(member(v, "status"), buf, sizeof(buf)))
		goto out;
	if (strcmp(buf, "UP") == 0)
		l.up = true;
	else if (strcmp(buf, "DOWN") != 0)
		goto out;
	o = member(v, "speed");
	if (l.up)
		l.speed_mbps = DTEL_SPEED_UNKNOWN;
	if (o != NULL && !get_u64(o, &l.speed_mbps))
		goto out;
	o = member(v, "duplex");
	if (o != NULL) {
		if (!get_string(o, buf, sizeof(buf)))
			goto out;
		if (strcmp(buf, "full-duplex") == 0)
			l.duplex = DTEL_DUPLEX_FULL;
		else if (strcmp(buf, "half-duplex") == 0)
			l.duplex = DTEL_DUPLEX_HALF;
	}
	*ret = l;
	r = 0;
out:
	json_object_put(root);
	return r;
}

/* dev_flags: an integer up to DPDK 22.11, a "0x..." string from 23.03. */
static bool
get_flags(struct json_object *o, uint64_t *ret)
{
	char buf[32], *end;

	if (get_u64(o, ret))
		return true;
	if (!get_string(o, buf, sizeof(buf)) || strncmp(buf, "0x", 2) != 0 || buf[2] == '\0')
		return false;
	errno = 0;
	*ret = strtoull(buf + 2, &end, 16);
	return errno == 0 && *end == '\0';
}

int
dtel_parse_port_info(const struct dtel_reply *reply, struct dtel_port_info *ret)
{
	struct dtel_port_info pi = {0};
	struct json_object *root, *v, *o;
	int64_t x;
	int r;

	if (ret == NULL)
		return -EINVAL;
	r = parse_reply(reply, "/ethdev/info", &root, &v, &pi.flags);
	if (r < 0)
		return r;
	r = -EPROTO;
	if (!json_object_is_type(v, json_type_object) ||
		!get_string(member(v, "name"), pi.name, sizeof(pi.name)) ||
		!get_int(member(v, "port_id"), 0, UINT16_MAX, &x))
		goto out;
	pi.port_id = (uint16_t)x;
	pi.numa_node = -1;
	/* The rest is optional: it varies across DPDK versions and drivers. */
	if (get_int(member(v, "state"), INT32_MIN, INT32_MAX, &x))
		pi.state = (int)x;
	if (get_int(member(v, "nb_rx_queues"), 0, UINT16_MAX, &x))
		pi.nb_rx_queues = (unsigned int)x;
	if (get_int(member(v, "nb_tx_queues"), 0, UINT16_MAX, &x))
		pi.nb_tx_queues = (unsigned int)x;
	if (get_int(member(v, "mtu"), 0, UINT32_MAX, &x))
		pi.mtu = (unsigned int)x;
	if (get_int(member(v, "numa_node"), INT32_MIN, INT32_MAX, &x))
		pi.numa_node = (int)x;
	if (get_int(member(v, "promiscuous"), 0, 1, &x))
		pi.promiscuous = x != 0;
	if (get_int(member(v, "dev_started"), 0, 1, &x))
		pi.dev_started = x != 0;
	if (!get_string(member(v, "mac_addr"), pi.mac_addr, sizeof(pi.mac_addr)))
		pi.mac_addr[0] = '\0';
	o = member(v, "dev_flags");
	if (o != NULL && !get_flags(o, &pi.dev_flags))
		pi.flags |= DTEL_F_INVALID;
	*ret = pi;
	r = 0;
out:
	json_object_put(root);
	return r;
}

static const char *
basename_of(const char *s)
{
	const char *slash = strrchr(s, '/');

	return slash != NULL ? slash + 1 : s;
}

/*
 * The value of option @opt at argv[*i]: "--opt=X", "--opt X", "-oX" or "-o X". Advances *i
 * over a separate value. NULL when argv[*i] is not that option.
 */
static const char *
opt_value(struct json_object *argv, size_t n, size_t *i, const char *opt)
{
	const char *a = json_object_get_string(json_object_array_get_idx(argv, *i));
	size_t len = strlen(opt);

	if (a == NULL || strncmp(a, opt, len) != 0)
		return NULL;
	if (a[len] == '=' && opt[1] == '-')
		return a + len + 1;
	if (a[len] != '\0')
		return opt[1] != '-' ? a + len : NULL;
	if (*i + 1 >= n)
		return NULL;
	(*i)++;
	return json_object_get_string(json_object_array_get_idx(argv, *i));
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

int
dtel_parse_eal_params(const struct dtel_reply *reply, struct dtel_eal_params *ret)
{
	struct dtel_eal_params p = {0};
	struct json_object *root, *v;
	const char *val;
	size_t n;
	int r;

	if (ret == NULL)
		return -EINVAL;
	r = parse_reply(reply, "/eal/params", &root, &v, &p.flags);
	if (r < 0)
		return r;
	r = -EPROTO;
	if (!json_object_is_type(v, json_type_array))
		goto out;
	n = json_object_array_length(v);
	for (size_t i = 0; i < n; i++)
		if (!json_object_is_type(json_object_array_get_idx(v, i), json_type_string))
			goto out;
	strcpy(p.file_prefix, DTEL_DEFAULT_PREFIX);
	if (n > 0)
		copy_str(p.app, sizeof(p.app),
			basename_of(json_object_get_string(json_object_array_get_idx(v, 0))),
			&p.flags);
	for (size_t i = 1; i < n; i++) {
		const char *a = json_object_get_string(json_object_array_get_idx(v, i));

		if (strcmp(a, "--in-memory") == 0 || strcmp(a, "--no-shconf") == 0)
			p.in_memory = true;
		else if (strcmp(a, "--no-huge") == 0)
			p.no_huge = true;
		else if ((val = opt_value(v, n, &i, "--file-prefix")) != NULL)
			copy_str(p.file_prefix, sizeof(p.file_prefix), val, &p.flags);
		else if ((val = opt_value(v, n, &i, "--lcores")) != NULL ||
			(val = opt_value(v, n, &i, "-l")) != NULL ||
			(val = opt_value(v, n, &i, "-c")) != NULL)
			copy_str(p.lcores, sizeof(p.lcores), val, &p.flags);
	}
	*ret = p;
	r = 0;
out:
	json_object_put(root);
	return r;
}

int
dtel_parse_eal_lcore_info(const struct dtel_reply *reply, struct dtel_eal_lcore_info *ret)
{
	struct dtel_eal_lcore_info li = {0};
	struct json_object *root, *v;
	int64_t x;
	int r;

	if (ret == NULL)
		return -EINVAL;
	r = parse_reply(reply, "/eal/lcore/info", &root, &v, &li.flags);
	if (r < 0)
		return r;
	r = -EPROTO;
	if (!json_object_is_type(v, json_type_object) ||
		!get_int(member(v, "lcore_id"), 0, INT32_MAX, &x))
		goto out;
	li.lcore_id = (unsigned int)x;
	li.socket = -1;
	if (get_int(member(v, "socket"), INT32_MIN, INT32_MAX, &x))
		li.socket = (int)x;
	if (!get_string(member(v, "role"), li.role, sizeof(li.role)))
		li.role[0] = '\0';
	li.has_cycles = get_u64(member(v, "total_cycles"), &li.total_cycles) &&
		get_u64(member(v, "busy_cycles"), &li.busy_cycles);
	if (!li.has_cycles)
		li.total_cycles = li.busy_cycles = 0;
	*ret = li;
	r = 0;
out:
	json_object_put(root);
	return r;
}

/* Generic dicts ------------------------------------------------------------------------- */

struct flat {
	struct dtel_dict *d;
	size_t cap;
};

static struct dtel_entry *
flat_add(struct flat *f)
{
	struct dtel_dict *d = f->d;

	if (d->n == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 32;
		struct dtel_entry *v = realloc(d->v, cap * sizeof(*v));

		if (v == NULL)
			return NULL;
		d->v = v;
		f->cap = cap;
	}
	memset(&d->v[d->n], 0, sizeof(d->v[0]));
	return &d->v[d->n++];
}

static int flatten(struct flat *f, const char *key, struct json_object *o);

static int
flatten_child(struct flat *f, const char *key, const char *sub, struct json_object *o)
{
	char k[DTEL_KEY_MAX];
	int n = key[0] ? snprintf(k, sizeof(k), "%s.%s", key, sub)
		       : snprintf(k, sizeof(k), "%s", sub);

	if (n < 0 || (size_t)n >= sizeof(k)) {
		f->d->nb_invalid++;
		return 0;
	}
	return flatten(f, k, o);
}

static int
flatten_scalar(struct flat *f, const char *key, struct json_object *o)
{
	struct dtel_entry *e = flat_add(f);

	if (e == NULL)
		return -ENOMEM;
	strcpy(e->key, key);
	switch (json_object_get_type(o)) {
	case json_type_null:
		e->type = DTEL_VALUE_NULL;
		break;
	case json_type_boolean:
		e->type = DTEL_VALUE_BOOL;
		e->v.b = json_object_get_boolean(o);
		break;
	case json_type_double:
		e->type = DTEL_VALUE_DOUBLE;
		e->v.d = json_object_get_double(o);
		break;
	case json_type_int:
		if (get_u64(o, &e->v.u64)) {
			e->type = DTEL_VALUE_U64;
		} else {
			e->type = DTEL_VALUE_I64;
			e->v.i64 = json_object_get_int64(o);
		}
		break;
	default:
		e->type = DTEL_VALUE_STRING;
		if (!get_string(o, e->str, sizeof(e->str))) {
			f->d->n--;
			f->d->nb_invalid++;
		}
		break;
	}
	return 0;
}

static int
flatten(struct flat *f, const char *key, struct json_object *o)
{
	char idx[24];
	int r = 0;

	if (json_object_is_type(o, json_type_object)) {
		json_object_object_foreach(o, k, v) {
			r = flatten_child(f, key, k, v);
			if (r < 0)
				return r;
		}
		return 0;
	}
	if (json_object_is_type(o, json_type_array)) {
		for (size_t i = 0; r == 0 && i < json_object_array_length(o); i++) {
			snprintf(idx, sizeof(idx), "%zu", i);
			r = flatten_child(f, key, idx, json_object_array_get_idx(o, i));
		}
		return r;
	}
	return flatten_scalar(f, key, o);
}

int
dtel_parse_dict(const struct dtel_reply *reply, const char *cmd, struct dtel_dict *ret)
{
	struct dtel_dict d = {0};
	struct flat f = {.d = &d};
	struct json_object *root, *v;
	int r;

	if (ret == NULL)
		return -EINVAL;
	r = parse_reply(reply, cmd, &root, &v, &d.flags);
	if (r < 0)
		return r;
	r = -EPROTO;
	if (json_object_is_type(v, json_type_object))
		r = flatten(&f, "", v);
	if (r == 0) {
		if (d.nb_invalid > 0)
			d.flags |= DTEL_F_INVALID;
		*ret = d;
		d.v = NULL;
	}
	free(d.v);
	json_object_put(root);
	return r;
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
