/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Test-only stand-in for DPDK 22.11's rte_tel_data_* and its JSON rendering (see
 * tel_stub.h). Written from the documented 22.11 behaviour, not from DPDK's code. Built
 * against a newer DPDK's headers, it defines that release's names and types (tel_compat.h).
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tel_stub.h"

enum kind {
	K_NULL = 0,
	K_STRING,
	K_DICT,
	K_ARRAY_STRING,
	K_ARRAY_INT,
	K_ARRAY_U64,
	K_ARRAY_CONTAINER,
};

struct value {
	enum rte_tel_value_type type;
	char sval[RTE_TEL_MAX_STRING_LEN];
	int64_t ival;
	uint64_t u64;
	struct rte_tel_data *c;
	int keep;
};

struct entry {
	char name[RTE_TEL_MAX_STRING_LEN];
	struct value v;
};

struct rte_tel_data {
	enum kind kind;
	unsigned int len;
	char str[RTE_TEL_MAX_SINGLE_STRING_LEN];
	struct entry dict[RTE_TEL_MAX_DICT_ENTRIES];
	struct value array[RTE_TEL_MAX_ARRAY_ENTRIES];
};

struct stub_stats stub_stats;
static int fail_alloc_at = -1;
static int fail_add_at = -1;

void
stub_reset(void)
{
	memset(&stub_stats, 0, sizeof(stub_stats));
	fail_alloc_at = -1;
	fail_add_at = -1;
}

void
stub_fail_alloc_at(int n)
{
	fail_alloc_at = n;
}

void
stub_fail_add_at(int n)
{
	fail_add_at = n;
}

/* Count a call's result; apply an injected failure. */
static int
result(int ret)
{
	if (fail_add_at == 0)
		ret = -ENOSPC;
	if (fail_add_at >= 0)
		fail_add_at--;
	if (ret != 0)
		stub_stats.failed_calls++;
	return ret;
}

static void
note_sizes(const struct rte_tel_data *d)
{
	if (d->kind == K_DICT && (int)d->len > stub_stats.max_dict)
		stub_stats.max_dict = (int)d->len;
	if (d->kind >= K_ARRAY_STRING && (int)d->len > stub_stats.max_array)
		stub_stats.max_array = (int)d->len;
}

static int
valid_name(const char *name)
{
	for (; *name != '\0'; name++)
		if (!isalnum((unsigned char)*name) && *name != '_' && *name != '/')
			return 0;
	return 1;
}

/* strlcpy: copies what fits, returns the length of src. */
static size_t
copy(char *dst, const char *src, size_t size)
{
	size_t len = strlen(src);

	if (size > 0) {
		size_t n = len < size - 1 ? len : size - 1;

		memcpy(dst, src, n);
		dst[n] = '\0';
	}
	return len;
}

struct rte_tel_data *
rte_tel_data_alloc(void)
{
	struct rte_tel_data *d;

	if (fail_alloc_at == 0) {
		fail_alloc_at = -1;
		return NULL;
	}
	if (fail_alloc_at > 0)
		fail_alloc_at--;
	d = calloc(1, sizeof(*d));
	if (d != NULL)
		stub_stats.live++;
	return d;
}

void
rte_tel_data_free(struct rte_tel_data *d)
{
	if (d == NULL)
		return;
	stub_stats.live--;
	free(d);
}

struct rte_tel_data *
stub_new_top(void)
{
	return calloc(1, sizeof(struct rte_tel_data));
}

static void
free_children(struct rte_tel_data *d)
{
	if (d->kind == K_DICT)
		for (unsigned int i = 0; i < d->len; i++)
			if (d->dict[i].v.type == RTE_TEL_CONTAINER && !d->dict[i].v.keep) {
				free_children(d->dict[i].v.c);
				rte_tel_data_free(d->dict[i].v.c);
			}
	if (d->kind == K_ARRAY_CONTAINER)
		for (unsigned int i = 0; i < d->len; i++)
			if (!d->array[i].keep) {
				free_children(d->array[i].c);
				rte_tel_data_free(d->array[i].c);
			}
}

void
stub_free_top(struct rte_tel_data *d)
{
	if (d == NULL)
		return;
	free_children(d);
	free(d);
}

int
rte_tel_data_start_array(struct rte_tel_data *d, enum rte_tel_value_type type)
{
	static const enum kind kinds[] = {
		[RTE_TEL_STRING_VAL] = K_ARRAY_STRING,
		[RTE_TEL_INT_VAL] = K_ARRAY_INT,
		[RTE_TEL_U64_VAL] = K_ARRAY_U64,
		[RTE_TEL_CONTAINER] = K_ARRAY_CONTAINER,
	};

	if ((unsigned int)type >= sizeof(kinds) / sizeof(kinds[0]))
		return result(-EINVAL); /* 22.11 does not check: it would read past a table */
	d->kind = kinds[type];
	d->len = 0;
	return result(0);
}

int
rte_tel_data_start_dict(struct rte_tel_data *d)
{
	d->kind = K_DICT;
	d->len = 0;
	return result(0);
}

int
rte_tel_data_string(struct rte_tel_data *d, const char *str)
{
	d->kind = K_STRING;
	d->len = (unsigned int)copy(d->str, str, sizeof(d->str));
	if (d->len >= RTE_TEL_MAX_SINGLE_STRING_LEN) {
		d->len = RTE_TEL_MAX_SINGLE_STRING_LEN - 1;
		return result(E2BIG);
	}
	return result(0);
}

static struct value *
array_slot(struct rte_tel_data *d, enum kind kind, int *ret)
{
	*ret = 0;
	if (d->kind != kind)
		*ret = -EINVAL;
	else if (d->len >= RTE_TEL_MAX_ARRAY_ENTRIES)
		*ret = -ENOSPC;
	if (*ret != 0)
		return NULL;
	return &d->array[d->len++];
}

int
rte_tel_data_add_array_string(struct rte_tel_data *d, const char *str)
{
	int ret;
	struct value *v = array_slot(d, K_ARRAY_STRING, &ret);

	if (v == NULL)
		return result(ret);
	v->type = RTE_TEL_STRING_VAL;
	ret = copy(v->sval, str, RTE_TEL_MAX_STRING_LEN) < RTE_TEL_MAX_STRING_LEN ? 0 : E2BIG;
	note_sizes(d);
	return result(ret);
}

int
rte_tel_data_add_array_int(struct rte_tel_data *d, fwd_tel_int_t x)
{
	int ret;
	struct value *v = array_slot(d, K_ARRAY_INT, &ret);

	if (v == NULL)
		return result(ret);
	v->type = RTE_TEL_INT_VAL;
	v->ival = x;
	note_sizes(d);
	return result(0);
}

int
rte_tel_data_add_array_u64(struct rte_tel_data *d, uint64_t x)
{
	int ret;
	struct value *v = array_slot(d, K_ARRAY_U64, &ret);

	if (v == NULL)
		return result(ret);
	v->type = RTE_TEL_U64_VAL;
	v->u64 = x;
	note_sizes(d);
	return result(0);
}

static int
is_array(const struct rte_tel_data *c)
{
	return c->kind == K_ARRAY_STRING || c->kind == K_ARRAY_INT || c->kind == K_ARRAY_U64;
}

int
rte_tel_data_add_array_container(struct rte_tel_data *d, struct rte_tel_data *val, int keep)
{
	int ret;
	struct value *v;

	if (!is_array(val))
		return result(-EINVAL);
	v = array_slot(d, K_ARRAY_CONTAINER, &ret);
	if (v == NULL)
		return result(ret);
	v->type = RTE_TEL_CONTAINER;
	v->c = val;
	v->keep = !!keep;
	note_sizes(d);
	return result(0);
}

static struct entry *
dict_slot(struct rte_tel_data *d, const char *name, int *ret)
{
	*ret = 0;
	if (d->kind != K_DICT || !valid_name(name))
		*ret = -EINVAL;
	else if (d->len >= RTE_TEL_MAX_DICT_ENTRIES)
		*ret = -ENOSPC;
	if (*ret != 0)
		return NULL;
	if (copy(d->dict[d->len].name, name, RTE_TEL_MAX_STRING_LEN) >= RTE_TEL_MAX_STRING_LEN)
		*ret = E2BIG;
	return &d->dict[d->len++];
}

int
rte_tel_data_add_dict_string(struct rte_tel_data *d, const char *name, const char *val)
{
	int ret;
	struct entry *e = dict_slot(d, name, &ret);

	if (e == NULL)
		return result(ret);
	e->v.type = RTE_TEL_STRING_VAL;
	if (copy(e->v.sval, val, RTE_TEL_MAX_STRING_LEN) >= RTE_TEL_MAX_STRING_LEN)
		ret = E2BIG;
	note_sizes(d);
	return result(ret);
}

int
rte_tel_data_add_dict_int(struct rte_tel_data *d, const char *name, fwd_tel_int_t val)
{
	int ret;
	struct entry *e = dict_slot(d, name, &ret);

	if (e == NULL)
		return result(ret);
	e->v.type = RTE_TEL_INT_VAL;
	e->v.ival = val;
	note_sizes(d);
	return result(ret);
}

int
rte_tel_data_add_dict_u64(struct rte_tel_data *d, const char *name, uint64_t val)
{
	int ret;
	struct entry *e = dict_slot(d, name, &ret);

	if (e == NULL)
		return result(ret);
	e->v.type = RTE_TEL_U64_VAL;
	e->v.u64 = val;
	note_sizes(d);
	return result(ret);
}

int
rte_tel_data_add_dict_container(
	struct rte_tel_data *d, const char *name, struct rte_tel_data *val, int keep)
{
	int ret;
	struct entry *e;

	if (!is_array(val) && val->kind != K_DICT)
		return result(-EINVAL);
	e = dict_slot(d, name, &ret);
	if (e == NULL)
		return result(ret);
	e->v.type = RTE_TEL_CONTAINER;
	e->v.c = val;
	e->v.keep = !!keep;
	note_sizes(d);
	return result(ret);
}

/* ---- rendering ---- */

/* A JSON string: '"' and '\' escaped, \n \r \t as escapes, other control chars dropped. */
static size_t
json_string(char *out, const char *s)
{
	size_t n = 0;

	out[n++] = '"';
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\') {
			out[n++] = '\\';
			out[n++] = (char)c;
		} else if (c == '\n' || c == '\r' || c == '\t') {
			out[n++] = '\\';
			out[n++] = c == '\n' ? 'n' : c == '\r' ? 'r' : 't';
		} else if (c >= 0x20) {
			out[n++] = (char)c;
		}
	}
	out[n++] = '"';
	out[n] = '\0';
	return n;
}

static int render_container(const struct rte_tel_data *d, char *buf, size_t cap);

/* The text of one value; 0 when a container renders to nothing. */
static size_t
value_text(const struct value *v, char *out, size_t cap)
{
	switch (v->type) {
	case RTE_TEL_STRING_VAL:
		return json_string(out, v->sval);
	case RTE_TEL_INT_VAL:
		return (size_t)snprintf(out, cap, "%" PRId64, v->ival);
	case RTE_TEL_U64_VAL:
		return (size_t)snprintf(out, cap, "%" PRIu64, v->u64);
	case RTE_TEL_CONTAINER:
		return (size_t)render_container(v->c, out, cap);
	}
	return 0;
}

/*
 * Append one element (with its separator) to buf, which holds used characters and must
 * keep room for the closing bracket and the NUL within cap; skip it if it does not fit.
 */
static size_t
append(char *buf, size_t used, size_t cap, const char *elem, size_t len, int first)
{
	size_t need = used + (first ? 0 : 1) + len + 1 + 1;

	if (need > cap) {
		stub_stats.skipped++;
		return used;
	}
	if (!first)
		buf[used++] = ',';
	memcpy(buf + used, elem, len);
	return used + len;
}

static int
render_container(const struct rte_tel_data *d, char *buf, size_t cap)
{
	char *elem = malloc(STUB_MAX_OUTPUT * 2);
	char *val = malloc(STUB_MAX_OUTPUT * 2);
	size_t used = 1;
	int n = 0;

	if (elem == NULL || val == NULL || cap < 3) {
		free(elem);
		free(val);
		return 0;
	}
	if (d->kind == K_DICT) {
		buf[0] = '{';
		for (unsigned int i = 0; i < d->len; i++) {
			size_t vl = value_text(&d->dict[i].v, val, STUB_MAX_OUTPUT);
			size_t el;

			if (vl == 0)
				continue;
			el = (size_t)snprintf(
				elem, STUB_MAX_OUTPUT * 2, "\"%s\":%s", d->dict[i].name, val);
			used = append(buf, used, cap, elem, el, n == 0);
			n = used > 1;
		}
		buf[used++] = '}';
	} else if (is_array(d) || d->kind == K_ARRAY_CONTAINER) {
		buf[0] = '[';
		for (unsigned int i = 0; i < d->len; i++) {
			size_t vl = value_text(&d->array[i], val, STUB_MAX_OUTPUT);

			if (vl == 0)
				continue;
			used = append(buf, used, cap, val, vl, n == 0);
			n = used > 1;
		}
		buf[used++] = ']';
	} else {
		used = (size_t)snprintf(buf, cap, "null");
	}
	buf[used] = '\0';
	free(elem);
	free(val);
	return (int)used;
}

int
stub_render(const char *cmd, int ret, struct rte_tel_data *d, char *out, size_t outlen)
{
	char *buf = malloc(STUB_MAX_OUTPUT);
	int prefix, used;

	if (buf == NULL)
		return -1;
	if (ret < 0 || d->kind == K_NULL) {
		/* The server renders nothing and frees nothing: leaks show in stub_stats.live. */
		used = snprintf(buf, STUB_MAX_OUTPUT, "{\"%.*s\":null}", 55, cmd);
		free(d);
	} else if (d->kind == K_STRING) {
		char *s = malloc(RTE_TEL_MAX_SINGLE_STRING_LEN * 2 + 3);

		json_string(s, d->str);
		used = snprintf(buf, STUB_MAX_OUTPUT, "{\"%.*s\":%s}", 55, cmd, s);
		free(s);
		free(d);
	} else {
		prefix = snprintf(buf, STUB_MAX_OUTPUT, "{\"%.*s\":", 55, cmd);
		/* one byte kept for the closing brace of the envelope */
		used = prefix + render_container(d, buf + prefix, STUB_MAX_OUTPUT - prefix - 1);
		buf[used++] = '}';
		buf[used] = '\0';
		/* containers attached with keep = 0 are the server's to free */
		stub_free_top(d);
	}
	snprintf(out, outlen, "%s", buf);
	free(buf);
	return used;
}
