/* SPDX-License-Identifier: BSD-3-Clause */
/* Lists of port or lcore ids: "0-3,8", "all". */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "dtel.h"

static void
skip_space(const char **p)
{
	while (**p == ' ' || **p == '\t')
		(*p)++;
}

/* A decimal id at *p; advances *p. -EINVAL when there is none, -ERANGE when >= nbits. */
static int
read_id(const char **p, unsigned int nbits, unsigned long *ret)
{
	const char *start = *p;
	unsigned long v = 0;

	if (!isdigit((unsigned char)**p))
		return -EINVAL;
	while (isdigit((unsigned char)**p)) {
		v = v * 10 + (unsigned long)(**p - '0');
		if (v >= nbits) {
			*p = start; /* report the id, not the digit where it overflowed */
			return -ERANGE;
		}
		(*p)++;
	}
	*ret = v;
	return 0;
}

static int
fail(const char *s, const char *p, int err, size_t *errpos)
{
	if (errpos != NULL)
		*errpos = (size_t)(p - s);
	return err;
}

int
dtel_parse_id_list(const char *s, uint64_t *bitmap, unsigned int nbits, size_t *errpos)
{
	const char *p = s;
	unsigned long lo, hi;
	int count = 0, ret;

	if (s == NULL || bitmap == NULL || nbits == 0)
		return -EINVAL;
	memset(bitmap, 0, ((nbits + 63) / 64) * sizeof(uint64_t));
	skip_space(&p);
	if (strncmp(p, "all", 3) == 0) {
		const char *q = p + 3;

		skip_space(&q);
		if (*q != '\0')
			return fail(s, q, -EINVAL, errpos);
		for (unsigned int i = 0; i < nbits; i++)
			bitmap[i / 64] |= 1ull << (i % 64);
		return (int)nbits;
	}
	for (;;) {
		skip_space(&p);
		ret = read_id(&p, nbits, &lo);
		if (ret < 0)
			return fail(s, p, ret, errpos);
		hi = lo;
		skip_space(&p);
		if (*p == '-') {
			p++;
			skip_space(&p);
			ret = read_id(&p, nbits, &hi);
			if (ret < 0)
				return fail(s, p, ret, errpos);
			if (hi < lo)
				return fail(s, p, -EINVAL, errpos);
			skip_space(&p);
		}
		for (unsigned long i = lo; i <= hi; i++) {
			if (!(bitmap[i / 64] & (1ull << (i % 64))))
				count++;
			bitmap[i / 64] |= 1ull << (i % 64);
		}
		if (*p == '\0')
			return count;
		if (*p != ',')
			return fail(s, p, -EINVAL, errpos);
		p++;
	}
}

static bool
bit(const uint64_t *bitmap, unsigned int i)
{
	return (bitmap[i / 64] >> (i % 64)) & 1;
}

int
dtel_format_id_list(const uint64_t *bitmap, unsigned int nbits, char *buf, size_t size)
{
	size_t len = 0;
	int n;

	if (size > 0)
		buf[0] = '\0';
	for (unsigned int i = 0; i < nbits; i++) {
		unsigned int j = i;

		if (!bit(bitmap, i))
			continue;
		while (j + 1 < nbits && bit(bitmap, j + 1))
			j++;
		if (j == i)
			n = snprintf(len < size ? buf + len : NULL, len < size ? size - len : 0,
				"%s%u", len ? "," : "", i);
		else
			n = snprintf(len < size ? buf + len : NULL, len < size ? size - len : 0,
				"%s%u-%u", len ? "," : "", i, j);
		if (n < 0)
			return -EINVAL;
		len += (size_t)n;
		i = j;
	}
	return (int)len;
}
