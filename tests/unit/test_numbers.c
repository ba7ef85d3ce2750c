/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dtel_parse_numbers(): every number of any reply, named by where it sits, with columnar
 * replies named by their id column. One behaviour per test.
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "dtel.h"
#include "fake_server.h"
#include "test_util.h"

static const struct dtel_number *
find(const struct dtel_numbers *n, const char *key)
{
	for (size_t i = 0; i < n->n; i++)
		if (strcmp(n->v[i].key, key) == 0)
			return &n->v[i];
	for (size_t i = 0; i < n->n; i++)
		print_message("have \"%s\"\n", n->v[i].key);
	fail_msg("no number \"%s\"", key);
	return NULL;
}

static uint64_t
u64_of(const struct dtel_numbers *n, const char *key)
{
	const struct dtel_number *e = find(n, key);

	assert_int_equal(e->type, DTEL_VALUE_U64);
	return e->v.u64;
}

static void
nested_dicts_and_arrays(void **state)
{
	struct dtel_reply r = reply_of("{\"/x\":{\"a\":{\"b\":1,\"c\":[5,6]},\"s\":\"str\","
				       "\"t\":true,\"z\":null,\"d\":{\"e\":{\"f\":[[7]]}}}}");
	struct dtel_numbers n;

	(void)state;
	assert_int_equal(dtel_parse_numbers(&r, "/x", &n), 0);
	assert_int_equal(n.n, 4);
	assert_int_equal(u64_of(&n, "a.b"), 1);
	assert_int_equal(u64_of(&n, "a.c.0"), 5);
	assert_int_equal(u64_of(&n, "a.c.1"), 6);
	assert_int_equal(u64_of(&n, "d.e.f.0.0"), 7);
	assert_int_equal(n.nb_other, 3); /* "str", true, null */
	assert_int_equal(n.nb_invalid, 0);
	assert_int_equal(n.flags, 0);
	dtel_numbers_clear(&n);
	assert_int_equal(n.n, 0);
	assert_null(n.v);
}

static void
top_level_array_and_number(void **state)
{
	struct dtel_reply a = reply_of("{\"/eal/heap_list\":[0,1]}");
	struct dtel_reply one = reply_of("{\"/x\":42}");
	struct dtel_numbers n;

	(void)state;
	assert_int_equal(dtel_parse_numbers(&a, NULL, &n), 0);
	assert_int_equal(n.n, 2);
	assert_int_equal(u64_of(&n, "1"), 1);
	dtel_numbers_clear(&n);
	assert_int_equal(dtel_parse_numbers(&one, "/x", &n), 0);
	assert_int_equal(n.n, 1);
	assert_int_equal(u64_of(&n, ""), 42);
	dtel_numbers_clear(&n);
}

static void
u64_exact_above_2_pow_53(void **state)
{
	struct dtel_reply r =
		reply_of("{\"/x\":{\"a\":9007199254740993,"
			 "\"max\":18446744073709551615,\"big\":9223372036854775808}}");
	struct dtel_numbers n;

	(void)state;
	assert_int_equal(dtel_parse_numbers(&r, "/x", &n), 0);
	assert_true(u64_of(&n, "a") == 9007199254740993ull);
	assert_true(u64_of(&n, "max") == UINT64_MAX);
	assert_true(u64_of(&n, "big") == 9223372036854775808ull);
	dtel_numbers_clear(&n);
}

static void
negative_and_fractions(void **state)
{
	struct dtel_reply r =
		reply_of("{\"/fwd/metrics\":{\"port_id\":-1,\"min\":"
			 "-9223372036854775808,\"ratio\":0.25,\"e\":1e3,\"neg\":-2.5,"
			 "\"huge\":18446744073709551616,\"tiny\":-9223372036854775809}}");
	struct dtel_numbers n;
	const struct dtel_number *e;

	(void)state;
	assert_int_equal(dtel_parse_numbers(&r, "/fwd/metrics", &n), 0);
	e = find(&n, "port_id");
	assert_int_equal(e->type, DTEL_VALUE_I64);
	assert_int_equal(e->v.i64, -1);
	e = find(&n, "min");
	assert_int_equal(e->type, DTEL_VALUE_I64);
	assert_true(e->v.i64 == INT64_MIN);
	e = find(&n, "ratio");
	assert_int_equal(e->type, DTEL_VALUE_DOUBLE);
	assert_true(e->v.d == 0.25);
	e = find(&n, "e");
	assert_int_equal(e->type, DTEL_VALUE_DOUBLE);
	assert_true(e->v.d == 1000);
	assert_true(find(&n, "neg")->v.d == -2.5);
	/* Integers beyond 64 bits have no exact value: left out, counted. */
	assert_int_equal(n.n, 5);
	assert_int_equal(n.nb_invalid, 2);
	assert_true(n.flags & DTEL_F_INVALID);
	dtel_numbers_clear(&n);
}

static void
null_reply_and_bad_json(void **state)
{
	static const char *const bad[] = {
		"{\"/x\":{\"a\":1,\"b\":", /* cut by a short read */
		"{\"/x\":{\"a\":1}} trailing",
		"{\"/y\":{\"a\":1}}", /* another command */
		"{\"/x\":[[[[[[[[[[1]]]]]]]]]]}", /* deeper than 8 levels */
		"[1]",
	};
	struct dtel_reply nul = reply_of("{\"/x\":null}");
	struct dtel_numbers n = {.n = 77};

	(void)state;
	assert_int_equal(dtel_parse_numbers(&nul, "/x", &n), -ENODATA);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct dtel_reply r = reply_of(bad[i]);

		assert_int_equal(dtel_parse_numbers(&r, "/x", &n), -EPROTO);
	}
	assert_int_equal(n.n, 77); /* untouched on failure */
	assert_int_equal(dtel_parse_numbers(&nul, "/x", NULL), -EINVAL);
}

/* A reply cut by the application keeps the flags that say so: the reply's, and a dict of
 * 256 entries (lib/telemetry/telemetry_data.c refuses the 257th). */
static void
cut_reply_flags(void **state)
{
	char *s = malloc(8192);
	size_t len = (size_t)sprintf(s, "{\"/x\":{");
	struct dtel_reply r;
	struct dtel_numbers n;

	(void)state;
	for (int i = 0; i < 256; i++)
		len += (size_t)sprintf(s + len, "%s\"k%d\":%d", i ? "," : "", i, i);
	sprintf(s + len, "}}");
	r = reply_of(s);
	r.flags = DTEL_F_NEAR_LIMIT;
	assert_int_equal(dtel_parse_numbers(&r, "/x", &n), 0);
	assert_int_equal(n.n, 256);
	assert_true(n.flags & DTEL_F_DICT_FULL);
	assert_true(n.flags & DTEL_F_NEAR_LIMIT);
	assert_int_equal(u64_of(&n, "k255"), 255);
	dtel_numbers_clear(&n);
	free(s);
}

/* dpdktel-fwd's /fwd/lcores (docs/fwd-telemetry.md): rows named by lcore_id. */
static void
columnar_by_id(void **state)
{
	size_t len;
	char *g = fs_golden("fwd/lcores.json", &len);
	struct dtel_reply r = {.json = g, .len = len};
	struct dtel_numbers n;

	(void)state;
	assert_int_equal(dtel_parse_numbers(&r, "/fwd/lcores", &n), 0);
	assert_true(u64_of(&n, "heartbeat.lcore1") == UINT64_MAX);
	assert_int_equal(u64_of(&n, "heartbeat.lcore2"), 1200);
	assert_int_equal(u64_of(&n, "stalls.lcore2"), 2);
	assert_int_equal(u64_of(&n, "state_code.lcore2"), 3);
	assert_int_equal(u64_of(&n, "total_cycles.lcore1"), 100);
	/* 9 number columns of 2 lcores; lcore_id names the rows; state and ports are strings */
	assert_int_equal(n.n, 18);
	assert_int_equal(n.nb_other, 4);
	for (size_t i = 0; i < n.n; i++)
		assert_null(strstr(n.v[i].key, "lcore_id"));
	dtel_numbers_clear(&n);
	free(g);
}

/* DPDK 23.03's /eal/lcore/usage names its id column lcore_ids. */
static void
columnar_by_ids(void **state)
{
	struct dtel_reply r = reply_of("{\"/eal/lcore/usage\":{\"lcore_ids\":[4,9],"
				       "\"total_cycles\":[10,20],\"busy_cycles\":[1,2]}}");
	struct dtel_numbers n;

	(void)state;
	assert_int_equal(dtel_parse_numbers(&r, NULL, &n), 0);
	assert_int_equal(n.n, 4);
	assert_int_equal(u64_of(&n, "total_cycles.lcore9"), 20);
	assert_int_equal(u64_of(&n, "busy_cycles.lcore4"), 1);
	dtel_numbers_clear(&n);
}

/* Not columnar, or no usable id column: entries by index. */
static void
columnar_fallbacks(void **state)
{
	static const struct {
		const char *json, *key;
	} cases[] = {
		{"{\"/x\":{\"lcore_id\":[1,1],\"v\":[5,6]}}", "v.1"}, /* ids repeat */
		{"{\"/x\":{\"lcore_id\":[1,\"a\"],\"v\":[5,6]}}", "v.1"}, /* not integers */
		{"{\"/x\":{\"lcore_id\":[1,-2],\"v\":[5,6]}}", "v.1"}, /* negative */
		{"{\"/x\":{\"lcore_id\":[1,2],\"v\":[5,6,7]}}", "v.1"}, /* lengths differ */
		{"{\"/x\":{\"lcore_id\":[1,2],\"v\":[5,6],\"n\":3}}", "v.1"}, /* a scalar member */
		{"{\"/x\":{\"lcore_id\":[1,2],\"v\":[5,[6]]}}", "lcore_id.1"}, /* nested */
		{"{\"/x\":{\"a\":[1,2],\"v\":[5,6]}}", "v.1"}, /* no id column */
		{"{\"/x\":{\"_id\":[1,2],\"v\":[5,6]}}", "v.1"}, /* "_id" names nothing */
	};
	struct dtel_numbers n;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct dtel_reply r = reply_of(cases[i].json);

		assert_int_equal(dtel_parse_numbers(&r, "/x", &n), 0);
		find(&n, cases[i].key);
		dtel_numbers_clear(&n);
	}
}

static uint64_t
shape_of(const char *json)
{
	struct dtel_reply r = reply_of(json);
	struct dtel_numbers n;
	uint64_t h;

	assert_int_equal(dtel_parse_numbers(&r, NULL, &n), 0);
	h = n.shape;
	dtel_numbers_clear(&n);
	return h;
}

static void
shape_follows_keys_not_values(void **state)
{
	uint64_t base = shape_of("{\"/x\":{\"a\":1,\"b\":[1,2],\"s\":\"x\"}}");

	(void)state;
	assert_true(shape_of("{\"/x\":{\"a\":99,\"b\":[0,5],\"s\":\"y\"}}") == base);
	assert_true(shape_of("{\"/x\":{\"a\":1,\"b\":[1,2,3],\"s\":\"x\"}}") != base);
	assert_true(shape_of("{\"/x\":{\"a\":1,\"b\":[1],\"s\":\"x\"}}") != base);
	assert_true(shape_of("{\"/x\":{\"a\":\"1\",\"b\":[1,2],\"s\":\"x\"}}") != base);
	assert_true(shape_of("{\"/x\":{\"b\":[1,2],\"a\":1,\"s\":\"x\"}}") != base);
	assert_true(shape_of("{\"/x\":{\"a\":1,\"b\":[1,2],\"s\":\"x\",\"c\":0}}") != base);
	/* Columnar rows are part of the shape by id. */
	assert_true(shape_of("{\"/x\":{\"port_id\":[0,1],\"v\":[1,2]}}") !=
		shape_of("{\"/x\":{\"port_id\":[0,2],\"v\":[1,2]}}"));
}

static void
key_too_long(void **state)
{
	char s[800];
	struct dtel_reply r;
	struct dtel_numbers n;

	(void)state;
	/* Two levels of 200 characters: 401 with the '.', over DTEL_KEY_MAX - 1. */
	snprintf(s, sizeof(s), "{\"/x\":{\"%0200d\":{\"%0200d\":1},\"ok\":2}}", 0, 1);
	r = reply_of(s);
	assert_int_equal(dtel_parse_numbers(&r, "/x", &n), 0);
	assert_int_equal(n.n, 1);
	assert_int_equal(u64_of(&n, "ok"), 2);
	assert_int_equal(n.nb_invalid, 1);
	dtel_numbers_clear(&n);
}

/* A number beyond a double's range (1e400) has no finite value: left out and counted, in
 * the numbers as in a dict. Failed before: an infinite gauge. */
static void
non_finite_numbers_left_out(void **state)
{
	struct dtel_reply r =
		reply_of("{\"/x\":{\"big\":1e400,\"small\":-1E+400,\"ok\":1.5,\"tiny\":1e-400}}");
	struct dtel_numbers n;
	struct dtel_dict d;

	(void)state;
	assert_int_equal(dtel_parse_numbers(&r, "/x", &n), 0);
	assert_int_equal(n.n, 2); /* ok, and tiny (0: finite) */
	assert_int_equal(n.nb_invalid, 2);
	assert_true(n.flags & DTEL_F_INVALID);
	assert_true(find(&n, "ok")->v.d == 1.5);
	assert_true(find(&n, "tiny")->v.d == 0);
	dtel_numbers_clear(&n);
	assert_int_equal(dtel_parse_dict(&r, "/x", &d), 0);
	assert_int_equal(d.n, 2);
	assert_null(dtel_dict_find(&d, "big"));
	assert_non_null(dtel_dict_find(&d, "ok"));
	dtel_dict_clear(&d);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(nested_dicts_and_arrays),
		cmocka_unit_test(top_level_array_and_number),
		cmocka_unit_test(u64_exact_above_2_pow_53),
		cmocka_unit_test(negative_and_fractions),
		cmocka_unit_test(non_finite_numbers_left_out),
		cmocka_unit_test(null_reply_and_bad_json),
		cmocka_unit_test(cut_reply_flags),
		cmocka_unit_test(columnar_by_id),
		cmocka_unit_test(columnar_by_ids),
		cmocka_unit_test(columnar_fallbacks),
		cmocka_unit_test(shape_follows_keys_not_values),
		cmocka_unit_test(key_too_long),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
