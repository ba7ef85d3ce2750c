/* SPDX-License-Identifier: BSD-3-Clause */
/* The strict, allocation-free JSON walker (see json.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

struct walker {
	const char *s;
	size_t len, i;
	int depth;
	struct dtel__jframe f[DTEL__JSON_MAX_DEPTH];
	dtel__jvisit_t visit;
	void *ctx;
};

static void
skip_ws(struct walker *w)
{
	while (w->i < w->len &&
		(w->s[w->i] == ' ' || w->s[w->i] == '\t' || w->s[w->i] == '\n' ||
			w->s[w->i] == '\r'))
		w->i++;
}

static bool
is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* A string starting at the quote at w->i; leaves w->i after the closing quote. */
static int
scan_string(struct walker *w, struct dtel__jtok *t)
{
	size_t i = w->i + 1;

	t->type = DTEL__J_STRING;
	t->escaped = false;
	t->p = w->s + i;
	for (; i < w->len; i++) {
		unsigned char c = (unsigned char)w->s[i];

		if (c == '"') {
			t->len = (size_t)(w->s + i - t->p);
			w->i = i + 1;
			return 0;
		}
		if (c < 0x20)
			return -EPROTO;
		if (c != '\\')
			continue;
		t->escaped = true;
		if (++i >= w->len)
			return -EPROTO;
		c = (unsigned char)w->s[i];
		if (c == 'u') {
			if (i + 4 >= w->len || !is_hex(w->s[i + 1]) || !is_hex(w->s[i + 2]) ||
				!is_hex(w->s[i + 3]) || !is_hex(w->s[i + 4]))
				return -EPROTO;
			i += 4;
		} else if (!strchr("\"\\/bfnrt", c) || c == '\0') {
			return -EPROTO;
		}
	}
	return -EPROTO;
}

static size_t
digits(const struct walker *w, size_t i)
{
	while (i < w->len && w->s[i] >= '0' && w->s[i] <= '9')
		i++;
	return i;
}

/* -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)? */
static int
scan_number(struct walker *w, struct dtel__jtok *t)
{
	size_t i = w->i, j;

	t->type = DTEL__J_NUMBER;
	t->p = w->s + i;
	if (i < w->len && w->s[i] == '-')
		i++;
	if (i >= w->len || w->s[i] < '0' || w->s[i] > '9')
		return -EPROTO;
	if (w->s[i] == '0')
		i++;
	else
		i = digits(w, i);
	if (i < w->len && w->s[i] == '.') {
		j = digits(w, i + 1);
		if (j == i + 1)
			return -EPROTO;
		i = j;
	}
	if (i < w->len && (w->s[i] == 'e' || w->s[i] == 'E')) {
		i++;
		if (i < w->len && (w->s[i] == '+' || w->s[i] == '-'))
			i++;
		j = digits(w, i);
		if (j == i)
			return -EPROTO;
		i = j;
	}
	t->len = i - w->i;
	w->i = i;
	return 0;
}

static int
scan_literal(struct walker *w, struct dtel__jtok *t, const char *word, enum dtel__jtype type)
{
	size_t n = strlen(word);

	if (w->len - w->i < n || memcmp(w->s + w->i, word, n) != 0)
		return -EPROTO;
	t->type = type;
	t->p = w->s + w->i;
	t->len = n;
	w->i += n;
	return 0;
}

/* The member name and colon of an object entry, at w->i. */
static int
scan_key(struct walker *w)
{
	struct dtel__jframe *f = &w->f[w->depth - 1];
	struct dtel__jtok k;
	int r;

	skip_ws(w);
	if (w->i >= w->len || w->s[w->i] != '"')
		return -EPROTO;
	r = scan_string(w, &k);
	if (r < 0)
		return r;
	f->key = k.p;
	f->key_len = k.len;
	f->key_escaped = k.escaped;
	skip_ws(w);
	if (w->i >= w->len || w->s[w->i] != ':')
		return -EPROTO;
	w->i++;
	return 0;
}

static int
emit(struct walker *w, const struct dtel__jtok *t)
{
	return w->visit ? w->visit(w->ctx, w->f, w->depth, t) : 0;
}

/* Open a container whose first byte is at w->i; *ret_empty when it closes at once. */
static int
open_container(struct walker *w, bool is_array, bool *ret_empty)
{
	struct dtel__jtok t = {.type = is_array ? DTEL__J_ARRAY : DTEL__J_OBJECT, .p = w->s + w->i};
	struct dtel__jframe *f;
	int r;

	if (w->depth >= DTEL__JSON_MAX_DEPTH)
		return -EPROTO;
	r = emit(w, &t);
	if (r < 0)
		return r;
	f = &w->f[w->depth++];
	memset(f, 0, sizeof(*f));
	f->is_array = is_array;
	w->i++;
	skip_ws(w);
	*ret_empty = w->i < w->len && w->s[w->i] == (is_array ? ']' : '}');
	if (*ret_empty) {
		w->i++;
		return 0;
	}
	return is_array ? 0 : scan_key(w);
}

static int
close_container(struct walker *w)
{
	struct dtel__jframe *f = &w->f[--w->depth];
	struct dtel__jtok t = {.type = DTEL__J_END, .end_array = f->is_array, .count = f->index};

	return emit(w, &t);
}

/* One value at w->i: a scalar (emitted) or the start of a container (*ret_opened). */
static int
scan_value(struct walker *w, bool *ret_opened)
{
	struct dtel__jtok t = {0};
	bool empty = false;
	int r;

	*ret_opened = false;
	skip_ws(w);
	if (w->i >= w->len)
		return -EPROTO;
	switch (w->s[w->i]) {
	case '{':
	case '[':
		r = open_container(w, w->s[w->i] == '[', &empty);
		if (r < 0)
			return r;
		if (empty)
			return close_container(w);
		*ret_opened = true;
		return 0;
	case '"':
		r = scan_string(w, &t);
		break;
	case 't':
		r = scan_literal(w, &t, "true", DTEL__J_TRUE);
		break;
	case 'f':
		r = scan_literal(w, &t, "false", DTEL__J_FALSE);
		break;
	case 'n':
		r = scan_literal(w, &t, "null", DTEL__J_NULL);
		break;
	default:
		r = scan_number(w, &t);
		break;
	}
	return r < 0 ? r : emit(w, &t);
}

/* After a value inside a container: ',' and the next key, or the closing bracket. */
static int
after_value(struct walker *w, bool *ret_closed)
{
	struct dtel__jframe *f = &w->f[w->depth - 1];

	*ret_closed = false;
	skip_ws(w);
	if (w->i >= w->len)
		return -EPROTO;
	f->index++;
	if (w->s[w->i] == ',') {
		w->i++;
		return f->is_array ? 0 : scan_key(w);
	}
	if (w->s[w->i] != (f->is_array ? ']' : '}'))
		return -EPROTO;
	w->i++;
	*ret_closed = true;
	return close_container(w);
}

int
dtel__json_walk(const char *buf, size_t len, dtel__jvisit_t visit, void *ctx)
{
	struct walker w = {.s = buf, .len = len, .visit = visit, .ctx = ctx};
	bool opened, closed;
	int r;

	if (buf == NULL)
		return -EPROTO;
	for (;;) {
		r = scan_value(&w, &opened);
		if (r < 0)
			return r;
		if (opened)
			continue; /* the container's first value comes next */
		do {
			if (w.depth == 0) {
				skip_ws(&w);
				return w.i == w.len ? 0 : -EPROTO;
			}
			r = after_value(&w, &closed);
			if (r < 0)
				return r;
		} while (closed);
	}
}

bool
dtel__json_u64(const struct dtel__jtok *t, uint64_t *ret)
{
	uint64_t v = 0;

	if (t->type != DTEL__J_NUMBER || t->len == 0 || t->len > 20)
		return false;
	for (size_t i = 0; i < t->len; i++) {
		unsigned int d = (unsigned int)(t->p[i] - '0');

		if (d > 9 || v > (UINT64_MAX - d) / 10)
			return false; /* a sign, fraction or exponent, or above UINT64_MAX */
		v = v * 10 + d;
	}
	*ret = v;
	return true;
}

bool
dtel__json_int(const struct dtel__jtok *t, int64_t min, int64_t max, int64_t *ret)
{
	struct dtel__jtok mag = *t;
	bool neg = t->type == DTEL__J_NUMBER && t->len > 1 && t->p[0] == '-';
	uint64_t u;
	int64_t v;

	if (neg) {
		mag.p++;
		mag.len--;
	}
	if (!dtel__json_u64(&mag, &u))
		return false;
	if (neg) {
		if (u > (uint64_t)INT64_MAX + 1)
			return false;
		v = u == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)u;
	} else {
		if (u > INT64_MAX)
			return false;
		v = (int64_t)u;
	}
	if (v < min || v > max)
		return false;
	*ret = v;
	return true;
}

bool
dtel__json_double(const struct dtel__jtok *t, double *ret)
{
	char buf[64], *end;

	if (t->type != DTEL__J_NUMBER || t->len >= sizeof(buf))
		return false;
	memcpy(buf, t->p, t->len);
	buf[t->len] = '\0';
	*ret = strtod(buf, &end);
	/* 1e400 is valid JSON, and strtod() makes it infinite: no value a collector can store
	 * (a gauge of inf), so it is refused as integers beyond 64 bits are. */
	return *end == '\0' && isfinite(*ret);
}

static unsigned int
hex4(const char *p)
{
	unsigned int v = 0;

	for (int i = 0; i < 4; i++) {
		char c = p[i];

		v = v * 16 + (unsigned int)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
	}
	return v;
}

/* Append code point cp as UTF-8; -1 when it does not fit. */
static int
put_utf8(char *buf, size_t size, size_t *n, unsigned int cp)
{
	unsigned char b[4];
	size_t k;

	if (cp < 0x80) {
		b[0] = (unsigned char)cp;
		k = 1;
	} else if (cp < 0x800) {
		b[0] = (unsigned char)(0xc0 | (cp >> 6));
		b[1] = (unsigned char)(0x80 | (cp & 0x3f));
		k = 2;
	} else if (cp < 0x10000) {
		b[0] = (unsigned char)(0xe0 | (cp >> 12));
		b[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		b[2] = (unsigned char)(0x80 | (cp & 0x3f));
		k = 3;
	} else {
		b[0] = (unsigned char)(0xf0 | (cp >> 18));
		b[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
		b[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		b[3] = (unsigned char)(0x80 | (cp & 0x3f));
		k = 4;
	}
	if (*n + k >= size)
		return -1;
	memcpy(buf + *n, b, k);
	*n += k;
	return 0;
}

/* The code point of the \u escape at p[i] (after the 'u'), pairing surrogates. */
static int
read_u_escape(const char *p, size_t len, size_t *i, unsigned int *ret)
{
	unsigned int cp = hex4(p + *i);

	*i += 4;
	if (cp >= 0xdc00 && cp <= 0xdfff)
		return -1; /* a low surrogate alone */
	if (cp >= 0xd800 && cp <= 0xdbff) {
		unsigned int lo;

		if (*i + 6 > len || p[*i] != '\\' || p[*i + 1] != 'u')
			return -1;
		lo = hex4(p + *i + 2);
		if (lo < 0xdc00 || lo > 0xdfff)
			return -1;
		*i += 6;
		cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
	}
	*ret = cp;
	return 0;
}

int
dtel__json_str(const char *p, size_t len, bool escaped, char *buf, size_t size)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	size_t n = 0;

	if (!escaped) {
		if (len >= size || memchr(p, '\0', len) != NULL)
			return -1;
		memcpy(buf, p, len);
		buf[len] = '\0';
		return (int)len;
	}
	for (size_t i = 0; i < len;) {
		unsigned int cp;

		if (p[i] != '\\') {
			if (n + 1 >= size)
				return -1;
			buf[n++] = p[i++];
			continue;
		}
		i++;
		if (p[i] != 'u') {
			if (n + 1 >= size)
				return -1;
			buf[n++] = to[strchr(from, p[i]) - from];
			i++;
			continue;
		}
		i++;
		if (read_u_escape(p, len, &i, &cp) < 0 || cp == 0 ||
			put_utf8(buf, size, &n, cp) < 0)
			return -1;
	}
	buf[n] = '\0';
	return (int)n;
}

bool
dtel__json_key_is(const struct dtel__jframe *f, const char *name)
{
	char buf[256];
	size_t n = strlen(name);

	if (!f->key_escaped)
		return f->key_len == n && memcmp(f->key, name, n) == 0;
	return dtel__json_str(f->key, f->key_len, true, buf, sizeof(buf)) == (int)n &&
		memcmp(buf, name, n) == 0;
}
