/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The numbers of any reply, named by where they sit (dtel_parse_numbers() in dtel.h): for
 * commands the library has no parser for, such as the ones a user names in the plugins'
 * configuration. Two walks over the reply: the first tells whether it is columnar and reads
 * its id column, the second names and converts every leaf.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtel_private.h"
#include "json.h"

/* What the first walk finds out about the reply's value. */
struct columns {
	bool columnar; /* so far: a dict of arrays of scalars, all of one length */
	size_t rows; /* the length of the first array */
	bool have_len;
	long id_member; /* index of the id array among the dict's members; -1: none */
	char what[DTEL_KEY_MAX]; /* the id array's name without "_id" / "_ids" */
	uint64_t *ids;
	size_t nids, cap;
	bool ids_ok; /* every entry of the id array an integer >= 0 */
};

/* "<what>_id" or "<what>_ids" (what not empty): what into buf. */
static bool
id_name(const struct dtel__jframe *f, char *buf, size_t size)
{
	char key[DTEL_KEY_MAX];
	int n = dtel__json_str(f->key, f->key_len, f->key_escaped, key, sizeof(key));
	size_t cut = 0;

	if (n > 4 && strcmp(key + n - 4, "_ids") == 0)
		cut = 4;
	else if (n > 3 && strcmp(key + n - 3, "_id") == 0)
		cut = 3;
	if (cut == 0 || (size_t)n - cut >= size)
		return false;
	memcpy(buf, key, (size_t)n - cut);
	buf[(size_t)n - cut] = '\0';
	return true;
}

/* The first walk ends as soon as the reply cannot be columnar (the second one checks the
 * rest of it): most replies are told apart at their first member. */
#define NOT_COLUMNAR (-ECANCELED)

static int
scan_visit(void *ctx, const struct dtel__jframe *path, int depth, const struct dtel__jtok *t)
{
	struct columns *c = ctx;
	uint64_t id;

	if (!c->columnar)
		return NOT_COLUMNAR;
	if (depth == 0) {
		c->columnar =
			t->type == DTEL__J_OBJECT || (t->type == DTEL__J_END && !t->end_array);
		return 0;
	}
	if (depth == 1) {
		if (t->type == DTEL__J_END) {
			if (!c->have_len)
				c->rows = t->count;
			c->columnar = t->count == c->rows;
			c->have_len = true;
		} else if (t->type != DTEL__J_ARRAY) {
			c->columnar = false;
		} else if (c->id_member < 0 && id_name(&path[0], c->what, sizeof(c->what))) {
			c->id_member = (long)path[0].index;
		}
		return 0;
	}
	if (depth > 2 || t->type == DTEL__J_OBJECT || t->type == DTEL__J_ARRAY) {
		c->columnar = false;
		return 0;
	}
	if ((long)path[0].index != c->id_member)
		return 0;
	if (!dtel__json_u64(t, &id)) {
		c->ids_ok = false;
		return 0;
	}
	if (c->nids == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		uint64_t *v = realloc(c->ids, cap * sizeof(*v));

		if (v == NULL)
			return -ENOMEM;
		c->ids = v;
		c->cap = cap;
	}
	c->ids[c->nids++] = id;
	return 0;
}

/* Rows are named by id only when every id is there, an integer, and unique. */
static bool
ids_usable(const struct columns *c)
{
	if (!c->columnar || c->id_member < 0 || !c->ids_ok || c->nids != c->rows)
		return false;
	for (size_t i = 0; i < c->nids; i++)
		for (size_t j = i + 1; j < c->nids; j++)
			if (c->ids[i] == c->ids[j])
				return false;
	return true;
}

struct numbers_ctx {
	struct dtel_numbers r;
	size_t cap;
	const struct columns *cols; /* NULL: name array entries by index */
};

/* Append one part of a key (a member name or a row) to buf[*n]; -1 when it does not fit. */
static int
key_part(char *buf, size_t size, size_t *n, const char *part, size_t len)
{
	size_t sep = *n ? 1 : 0;

	if (*n + sep + len >= size)
		return -1;
	if (sep)
		buf[(*n)++] = '.';
	memcpy(buf + *n, part, len);
	*n += len;
	buf[*n] = '\0';
	return 0;
}

/* The key of the value at path (see dtel_parse_numbers()). */
static int
leaf_key(const struct numbers_ctx *c, const struct dtel__jframe *path, int depth, char *buf,
	size_t size)
{
	char part[DTEL_KEY_MAX + 24];
	size_t n = 0;
	int k;

	buf[0] = '\0';
	for (int i = 0; i < depth; i++) {
		if (!path[i].is_array)
			k = dtel__json_str(path[i].key, path[i].key_len, path[i].key_escaped, part,
				sizeof(part));
		else if (c->cols != NULL && i == 1)
			k = snprintf(part, sizeof(part), "%s%llu", c->cols->what,
				(unsigned long long)c->cols->ids[path[i].index]);
		else
			k = snprintf(part, sizeof(part), "%zu", path[i].index);
		if (k < 0 || (size_t)k >= sizeof(part) ||
			key_part(buf, size, &n, part, (size_t)k) < 0)
			return -1;
	}
	return 0;
}

static void
shape_add(uint64_t *h, const void *p, size_t len)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < len; i++) {
		*h ^= b[i];
		*h *= 0x100000001b3ull; /* FNV-1a */
	}
}

static struct dtel_number *
number_add(struct numbers_ctx *c)
{
	if (c->r.n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 32;
		struct dtel_number *v = realloc(c->r.v, cap * sizeof(*v));

		if (v == NULL)
			return NULL;
		c->r.v = v;
		c->cap = cap;
	}
	memset(&c->r.v[c->r.n], 0, sizeof(c->r.v[0]));
	return &c->r.v[c->r.n];
}

/* Whether one of the characters of @set is in p[0..len). */
static bool
strpbrk_n(const char *p, size_t len, const char *set)
{
	for (; *set; set++)
		if (memchr(p, *set, len) != NULL)
			return true;
	return false;
}

static int
numbers_visit(void *ctx, const struct dtel__jframe *path, int depth, const struct dtel__jtok *t)
{
	struct numbers_ctx *c = ctx;
	struct dtel_number *e;
	char kind;

	if (t->type == DTEL__J_OBJECT || t->type == DTEL__J_ARRAY || t->type == DTEL__J_END)
		return 0;
	if (c->cols != NULL && (long)path[0].index == c->cols->id_member)
		return 0; /* the ids name the rows */
	e = number_add(c);
	if (e == NULL)
		return -ENOMEM;
	kind = t->type == DTEL__J_NUMBER ? 'n' : 's';
	if (leaf_key(c, path, depth, e->key, sizeof(e->key)) < 0) {
		/* Too long to name: still part of the shape, by its position. */
		shape_add(&c->r.shape, &c->r.n, sizeof(c->r.n));
		c->r.nb_invalid += kind == 'n';
		c->r.nb_other += kind != 'n';
		return 0;
	}
	shape_add(&c->r.shape, e->key, strlen(e->key) + 1);
	shape_add(&c->r.shape, &kind, 1);
	if (kind != 'n') {
		c->r.nb_other++;
		return 0;
	}
	if (dtel__json_u64(t, &e->v.u64))
		e->type = DTEL_VALUE_U64;
	else if (dtel__json_int(t, INT64_MIN, INT64_MAX, &e->v.i64))
		e->type = DTEL_VALUE_I64; /* negative (or "-0") */
	else if (strpbrk_n(t->p, t->len, ".eE") && dtel__json_double(t, &e->v.d))
		e->type = DTEL_VALUE_DOUBLE;
	else {
		/* an integer beyond 64 bits (no exact value to give), or a number beyond a
		 * double's range (1e400: no finite one) */
		c->r.nb_invalid++;
		return 0;
	}
	c->r.n++;
	return 0;
}

int
dtel_parse_numbers(const struct dtel_reply *reply, const char *cmd, struct dtel_numbers *ret)
{
	struct columns cols = {.columnar = true, .id_member = -1, .ids_ok = true};
	struct numbers_ctx c = {.r.shape = 0xcbf29ce484222325ull};
	unsigned int flags;
	int r;

	if (ret == NULL)
		return -EINVAL;
	r = dtel__walk_reply(reply, cmd, scan_visit, &cols, &flags);
	if (r == NOT_COLUMNAR) {
		cols.columnar = false;
		r = 0;
	}
	if (r == 0) {
		c.cols = ids_usable(&cols) ? &cols : NULL;
		r = dtel__walk_reply(reply, cmd, numbers_visit, &c, &flags);
	}
	free(cols.ids);
	if (r < 0) {
		free(c.r.v);
		return r;
	}
	c.r.flags = flags | (c.r.nb_invalid ? DTEL_F_INVALID : 0);
	*ret = c.r;
	return 0;
}

void
dtel_numbers_clear(struct dtel_numbers *n)
{
	if (n == NULL)
		return;
	free(n->v);
	memset(n, 0, sizeof(*n));
}
