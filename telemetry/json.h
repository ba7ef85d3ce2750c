/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A strict, allocation-free JSON walker for telemetry replies (internal to libdpdktel).
 *
 * It checks a whole buffer against RFC 8259 and calls a visitor for each value, in order,
 * with the path of keys and indexes that leads to it. Numbers and strings are handed over as
 * text, so that a u64 counter is read exactly (json-c saturates 2^64 to UINT64_MAX without a
 * word, and allocates an object per value: at 8 µs per /ethdev/stats reply it cost more than
 * the request itself, see docs/performance.md). Nesting deeper than DTEL__JSON_MAX_DEPTH is
 * refused, without recursion.
 */
#ifndef DTEL_JSON_H
#define DTEL_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** Open containers at most: the reply's root object, its value, and 8 levels below. */
#define DTEL__JSON_MAX_DEPTH 10

enum dtel__jtype {
	DTEL__J_NULL,
	DTEL__J_FALSE,
	DTEL__J_TRUE,
	DTEL__J_NUMBER,
	DTEL__J_STRING,
	DTEL__J_OBJECT, /* an object begins */
	DTEL__J_ARRAY, /* an array begins */
	DTEL__J_END, /* the container opened at this depth ends */
};

/** A value as the walker found it. */
struct dtel__jtok {
	enum dtel__jtype type;
	const char *p; /* number: its text; string: the bytes between the quotes, undecoded */
	size_t len;
	bool escaped; /* string: holds backslash escapes (decode with dtel__json_str) */
	bool end_array; /* DTEL__J_END: the container was an array */
	size_t count; /* DTEL__J_END: its number of entries */
};

/** Where a value sits in one open container. */
struct dtel__jframe {
	bool is_array;
	const char *key; /* object: the member name of the current value, undecoded */
	size_t key_len;
	bool key_escaped;
	size_t index; /* array: index of the current value; object: members before it */
};

/**
 * Called for each value. @path has @depth entries: path[i] is the i-th open container and
 * tells where the value sits in it (depth 0: the top-level value). A DTEL__J_END token comes
 * with the path of the container itself. Return 0 to go on, or a negative errno to stop.
 */
typedef int (*dtel__jvisit_t)(
	void *ctx, const struct dtel__jframe *path, int depth, const struct dtel__jtok *tok);

/** Walk the JSON text buf[0..len). Returns 0, -EPROTO for anything but one valid value
 * (trailing white space allowed), or the visitor's negative return. */
int dtel__json_walk(const char *buf, size_t len, dtel__jvisit_t visit, void *ctx);

/** An integer 0..UINT64_MAX written without sign, fraction or exponent. */
bool dtel__json_u64(const struct dtel__jtok *t, uint64_t *ret);
/** An integer in [min, max] written without fraction or exponent. */
bool dtel__json_int(const struct dtel__jtok *t, int64_t min, int64_t max, int64_t *ret);
/** Any number, as a double; false for one beyond a double's range (1e400 is not infinity). */
bool dtel__json_double(const struct dtel__jtok *t, double *ret);
/**
 * Decode string (or key) bytes p[0..len) into buf (NUL-terminated). Returns the length, or -1
 * when it does not fit in @size bytes or holds a NUL character.
 */
int dtel__json_str(const char *p, size_t len, bool escaped, char *buf, size_t size);
/** The member name of path frame @f equals @name. */
bool dtel__json_key_is(const struct dtel__jframe *f, const char *name);

#endif
