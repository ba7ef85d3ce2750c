/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The specification parser of the slow-telemetry shim (slow_spec.c): rules, units, modes,
 * the errors a mistyped DTEL_SLOW_TELEMETRY gets (one sentence naming the wrong part, and no
 * rule left), and which reply bytes match a rule.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "slow_spec.h"

static void
two_rules(void **state)
{
	struct slow_spec s;
	char err[512];

	(void)state;
	assert_int_equal(slow_spec_parse("/ethdev/xstats=15ms,/ethdev/link_status=2ms", NULL, &s,
				 err, sizeof(err)),
		0);
	assert_string_equal(err, "");
	assert_int_equal(s.n, 2);
	assert_false(s.sleep);
	assert_string_equal(s.rules[0].cmd, "/ethdev/xstats");
	assert_int_equal(s.rules[0].len, strlen("/ethdev/xstats"));
	assert_int_equal(s.rules[0].delay_ns, 15000000u);
	assert_string_equal(s.rules[1].cmd, "/ethdev/link_status");
	assert_int_equal(s.rules[1].delay_ns, 2000000u);
}

static void
units_and_decimals(void **state)
{
	static const struct {
		const char *spec;
		uint64_t ns;
	} cases[] = {
		{"/x=1us", 1000u},
		{"/x=200us", 200000u},
		{"/x=2.5ms", 2500000u},
		{"/x=0.5ms", 500000u},
		{"/x=1s", 1000000000u},
		{"/x=1.25s", 1250000000u},
		{"/x=10s", 10000000000u},
		{"/x=0.001ms", 1000u},
	};
	struct slow_spec s;
	char err[512];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (slow_spec_parse(cases[i].spec, NULL, &s, err, sizeof(err)) != 0)
			fail_msg("'%s': %s", cases[i].spec, err);
		assert_int_equal(s.n, 1);
		assert_int_equal(s.rules[0].delay_ns, cases[i].ns);
	}
}

static void
modes(void **state)
{
	struct slow_spec s;
	char err[512];

	(void)state;
	assert_int_equal(slow_spec_parse("/x=1ms", "sleep", &s, err, sizeof(err)), 0);
	assert_true(s.sleep);
	assert_int_equal(slow_spec_parse("/x=1ms", "busy", &s, err, sizeof(err)), 0);
	assert_false(s.sleep);
	assert_int_equal(slow_spec_parse("/x=1ms", "", &s, err, sizeof(err)), 0);
	assert_false(s.sleep);
	assert_int_equal(slow_spec_parse("/x=1ms", "nap", &s, err, sizeof(err)), -EINVAL);
	assert_int_equal(s.n, 0);
	assert_non_null(strstr(err, "DTEL_SLOW_TELEMETRY_MODE='nap'"));
	assert_non_null(strstr(err, "'busy'"));
}

/* Each bad specification: -EINVAL, no rule left (so nothing is delayed), and a sentence that
 * quotes the wrong part. */
static void
errors(void **state)
{
	static const struct {
		const char *spec, *needle;
	} cases[] = {
		{"", "is empty"},
		{"/ethdev/xstats", "rule '/ethdev/xstats'"},
		{"=15ms", "rule '=15ms'"},
		{"/ethdev/xstats=15ms,", "rule ''"},
		{"/ethdev/xstats=15ms,,/x=1ms", "rule ''"},
		{"ethdev/xstats=15ms", "command 'ethdev/xstats'"},
		{"/ethdev/x-stats=15ms", "character '-'"},
		{"/ethdev/xstats =15ms", "character ' '"},
		{"/ethdev/xstats=15", "duration '15' of '/ethdev/xstats'"},
		{"/ethdev/xstats=ms", "duration 'ms'"},
		{"/ethdev/xstats=15 ms", "duration '15 ms'"},
		{"/ethdev/xstats=15min", "duration '15min'"},
		{"/ethdev/xstats=1.ms", "duration '1.ms'"},
		{"/ethdev/xstats=-1ms", "duration '-1ms'"},
		{"/ethdev/xstats=0ms", "duration '0ms'"},
		{"/ethdev/xstats=0.5us", "duration '0.5us'"},
		{"/ethdev/xstats=11s", "duration '11s'"},
		{"/ethdev/xstats=99999999999s", "duration '99999999999s'"},
		{"/ethdev/xstats=1.0000000001s", "duration '1.0000000001s'"},
		{"/x=1ms,/x=2ms", "command '/x' given twice"},
		{"/ethdev/a_very_long_command_name_that_is_longer_than_dpdk_allows=1ms",
			"at most 55 bytes"},
		{"/a=1ms,/b=1ms,/c=1ms,/d=1ms,/e=1ms,/f=1ms,/g=1ms,/h=1ms,/i=1ms,/j=1ms,/k=1ms,"
		 "/l=1ms,/m=1ms,/n=1ms,/o=1ms,/p=1ms,/q=1ms",
			"more than 16 rules"},
	};
	struct slow_spec s;
	char err[512];

	(void)state;
	assert_int_equal(slow_spec_parse(NULL, NULL, &s, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "is empty"));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int r = slow_spec_parse(cases[i].spec, NULL, &s, err, sizeof(err));

		if (r != -EINVAL || s.n != 0 || strstr(err, cases[i].needle) == NULL)
			fail_msg("'%s': expected -EINVAL, no rule and \"%s\" in the message; got "
				 "%d, %zu rules, \"%s\"",
				cases[i].spec, cases[i].needle, r, s.n, err);
	}
	/* A message cut to the caller's buffer is still a string. */
	assert_int_equal(slow_spec_parse("/x", NULL, &s, err, 8), -EINVAL);
	assert_int_equal(strlen(err), 7);
}

/* DPDK's replies: {"<cmd>":<value>} whatever the request's parameters were. */
static void
match(void **state)
{
	static const char xstats[] = "{\"/ethdev/xstats\":{\"rx_good_packets\":0}}";
	static const char null_reply[] = "{\"/ethdev/link_status\":null}";
	struct slow_spec s;
	char err[512];

	(void)state;
	assert_int_equal(slow_spec_parse("/ethdev/xstats=15ms,/ethdev/link_status=2ms", NULL, &s,
				 err, sizeof(err)),
		0);
	assert_ptr_equal(slow_spec_match(&s, xstats, strlen(xstats)), &s.rules[0]);
	assert_ptr_equal(slow_spec_match(&s, null_reply, strlen(null_reply)), &s.rules[1]);
	/* Other commands, a longer command with the same beginning, the greeting, text. */
	assert_null(slow_spec_match(&s, "{\"/ethdev/stats\":{}}", 19));
	assert_null(slow_spec_match(&s, "{\"/ethdev/xstats_x\":{}}", 22));
	assert_null(slow_spec_match(&s, "{\"/ethdev\":{}}", 13));
	assert_null(slow_spec_match(
		&s, "{\"version\":\"DPDK 22.11.11\",\"pid\":1,\"max_output_len\":16384}", 58));
	assert_null(slow_spec_match(&s, "Port 0: link up\n", 16));
	/* Cut short: the command must be there whole, with its closing quote and colon. */
	assert_null(slow_spec_match(&s, xstats, 17));
	assert_ptr_equal(slow_spec_match(&s, xstats, 18), &s.rules[0]);
	assert_null(slow_spec_match(&s, "", 0));
	assert_null(slow_spec_match(&s, "{", 1));
}

static void
describe(void **state)
{
	struct slow_spec s;
	char err[512], d[256];

	(void)state;
	assert_int_equal(slow_spec_parse("/ethdev/xstats=15ms,/ethdev/link_status=250us", "sleep",
				 &s, err, sizeof(err)),
		0);
	slow_spec_describe(&s, d, sizeof(d));
	assert_string_equal(d, "/ethdev/xstats 15.000 ms, /ethdev/link_status 0.250 ms (sleep)");
	slow_spec_describe(&s, d, 10);
	assert_int_equal(strlen(d), 9);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(two_rules),
		cmocka_unit_test(units_and_decimals),
		cmocka_unit_test(modes),
		cmocka_unit_test(errors),
		cmocka_unit_test(match),
		cmocka_unit_test(describe),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
