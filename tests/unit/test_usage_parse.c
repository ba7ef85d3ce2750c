/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The /eal/lcore/usage parser, against replies shaped as DPDK 23.11 to 26.07
 * lib/eal/common/eal_common_lcore.c handle_lcore_usage() builds them (one dict of
 * index-aligned arrays; arrays empty when no lcore has a usage callback).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "dtel.h"

static int
parse(const char *json, struct dtel_eal_lcore_usage *u)
{
	struct dtel_reply r = {.json = (char *)json, .len = strlen(json)};

	return dtel_parse_eal_lcore_usage(&r, u);
}

/* As seen on testpmd 24.11 with --record-core-cycles and two forwarding lcores. */
static void
two_lcores(void **state)
{
	struct dtel_eal_lcore_usage u;

	(void)state;
	assert_int_equal(parse("{\"/eal/lcore/usage\":{\"lcore_ids\":[1,2],"
			       "\"total_cycles\":[7746749157,18446744073709551615],"
			       "\"busy_cycles\":[7583562883,0],"
			       "\"usage_ratio\":[\"97.89%\",\"0.00%\"]}}",
				 &u),
		0);
	assert_int_equal(u.n, 2);
	assert_int_equal(u.v[0].lcore_id, 1);
	assert_true(u.v[0].total_cycles == 7746749157u);
	assert_true(u.v[0].busy_cycles == 7583562883u);
	assert_int_equal(u.v[1].lcore_id, 2);
	assert_true(u.v[1].total_cycles == UINT64_MAX);
	assert_true(u.v[1].busy_cycles == 0);
	dtel_eal_lcore_usage_clear(&u);
	assert_null(u.v);
	assert_int_equal(u.n, 0);
	dtel_eal_lcore_usage_clear(NULL);
}

/* 23.03 has no usage_ratio: not needed. */
static void
without_ratio(void **state)
{
	struct dtel_eal_lcore_usage u;

	(void)state;
	assert_int_equal(parse("{\"/eal/lcore/usage\":{\"lcore_ids\":[3],\"total_cycles\":[10],"
			       "\"busy_cycles\":[4]}}",
				 &u),
		0);
	assert_int_equal(u.n, 1);
	assert_int_equal(u.v[0].lcore_id, 3);
	dtel_eal_lcore_usage_clear(&u);
}

/* An application without a usage callback (testpmd without --record-core-cycles). */
static void
empty(void **state)
{
	struct dtel_eal_lcore_usage u;

	(void)state;
	assert_int_equal(parse("{\"/eal/lcore/usage\":{\"lcore_ids\":[],\"total_cycles\":[],"
			       "\"busy_cycles\":[],\"usage_ratio\":[]}}",
				 &u),
		0);
	assert_int_equal(u.n, 0);
	dtel_eal_lcore_usage_clear(&u);
}

/* DPDK 22.11 does not know the command. */
static void
null_reply(void **state)
{
	struct dtel_eal_lcore_usage u = {.n = 77};

	(void)state;
	assert_int_equal(parse("{\"/eal/lcore/usage\":null}", &u), -ENODATA);
	assert_int_equal(u.n, 77); /* untouched */
	assert_int_equal(parse("{\"/eal/lcore/usage\":{}}", NULL), -EINVAL);
}

static void
bad(void **state)
{
	static const char *const v[] = {
		/* a column missing */
		"{\"/eal/lcore/usage\":{\"lcore_ids\":[1],\"total_cycles\":[1]}}",
		/* lengths differ */
		"{\"/eal/lcore/usage\":{\"lcore_ids\":[1,2],\"total_cycles\":[1],"
		"\"busy_cycles\":[1,2]}}",
		/* a negative counter */
		"{\"/eal/lcore/usage\":{\"lcore_ids\":[1],\"total_cycles\":[-1],"
		"\"busy_cycles\":[1]}}",
		/* a counter as a string */
		"{\"/eal/lcore/usage\":{\"lcore_ids\":[1],\"total_cycles\":[\"1\"],"
		"\"busy_cycles\":[1]}}",
		/* a column that is not an array */
		"{\"/eal/lcore/usage\":{\"lcore_ids\":1,\"total_cycles\":[1],\"busy_cycles\":[1]}}",
		/* an id that is not an lcore id */
		"{\"/eal/lcore/usage\":{\"lcore_ids\":[1.5],\"total_cycles\":[1],"
		"\"busy_cycles\":[1]}}",
		/* nested deeper */
		"{\"/eal/lcore/usage\":{\"lcore_ids\":[[1]],\"total_cycles\":[1],"
		"\"busy_cycles\":[1]}}",
		/* not a dict */
		"{\"/eal/lcore/usage\":[1]}",
		/* cut */
		"{\"/eal/lcore/usage\":{\"lcore_ids\":[1],\"total_cycles\":[1",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		struct dtel_eal_lcore_usage u = {.n = 77};
		int ret = parse(v[i], &u);

		if (ret != -EPROTO)
			fail_msg("reply %zu (%s): expected -EPROTO, got %d", i, v[i], ret);
		assert_int_equal(u.n, 77);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(two_lcores),
		cmocka_unit_test(without_ratio),
		cmocka_unit_test(empty),
		cmocka_unit_test(null_reply),
		cmocka_unit_test(bad),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
