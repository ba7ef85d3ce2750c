/* SPDX-License-Identifier: BSD-3-Clause */
/* Id lists ("0-3,8", "all") as used by Ports options and /fwd replies. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "dtel.h"

static void
parse_ranges(void **state)
{
	uint64_t bm[2];

	(void)state;
	assert_int_equal(dtel_parse_id_list("0-3,8", bm, 128, NULL), 5);
	assert_int_equal(bm[0], 0x10f);
	assert_int_equal(bm[1], 0);
	assert_int_equal(dtel_parse_id_list(" 70 , 1-2,2 ", bm, 128, NULL), 3);
	assert_int_equal(bm[0], 0x6);
	assert_int_equal(bm[1], 1ull << 6);
	assert_int_equal(dtel_parse_id_list("all", bm, 70, NULL), 70);
	assert_int_equal(bm[0], UINT64_MAX);
	assert_int_equal(bm[1], 0x3f);
}

static void
parse_errors(void **state)
{
	static const char *const bad[] = {"", "x", "1,", "3-1", "1-", "-1", "1;2", "all,1", "1 2"};
	uint64_t bm[1];
	size_t pos;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(dtel_parse_id_list(bad[i], bm, 64, NULL), -EINVAL);
	assert_int_equal(dtel_parse_id_list("1,64", bm, 64, &pos), -ERANGE);
	assert_int_equal(pos, 2);
	assert_int_equal(dtel_parse_id_list("0-2,x", bm, 64, &pos), -EINVAL);
	assert_int_equal(pos, 4);
	assert_int_equal(dtel_parse_id_list("99999999999999999999", bm, 64, NULL), -ERANGE);
}

static void
format_round_trip(void **state)
{
	uint64_t bm[2];
	char buf[64];

	(void)state;
	assert_int_equal(dtel_parse_id_list("0-3,8,10-11,127", bm, 128, NULL), 8);
	assert_int_equal(dtel_format_id_list(bm, 128, buf, sizeof(buf)), 15);
	assert_string_equal(buf, "0-3,8,10-11,127");
	bm[0] = bm[1] = 0;
	assert_int_equal(dtel_format_id_list(bm, 128, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");
	assert_int_equal(dtel_parse_id_list("0-3,8", bm, 128, NULL), 5);
	assert_int_equal(dtel_format_id_list(bm, 128, buf, 4), 5); /* cut, as snprintf */
	assert_string_equal(buf, "0-3");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parse_ranges),
		cmocka_unit_test(parse_errors),
		cmocka_unit_test(format_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
