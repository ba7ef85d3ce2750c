/* SPDX-License-Identifier: BSD-3-Clause */
/* Parsers for dpdktel-fwd's columnar /fwd/lcores and /fwd/ports replies. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "dtel.h"
#include "fake_server.h"
#include "test_util.h"

static void
lcores_golden(void **state)
{
	size_t len;
	char *s = fs_golden("fwd/lcores.json", &len);
	struct dtel_reply r = {.json = s, .len = len};
	struct dtel_fwd_lcores l;

	(void)state;
	assert_int_equal(dtel_parse_fwd_lcores(&r, &l), 0);
	assert_int_equal(l.n, 2);
	assert_int_equal(l.v[0].lcore_id, 1);
	assert_int_equal(l.v[0].state, DTEL_LCORE_RUNNING);
	assert_true(l.v[0].heartbeat == UINT64_MAX);
	assert_string_equal(l.v[0].ports, "0-1");
	assert_int_equal(l.v[1].state, DTEL_LCORE_STALLED);
	assert_int_equal(l.v[1].heartbeat_age_us, 250000);
	assert_int_equal(l.v[1].stalls, 2);
	assert_int_equal(l.v[1].total_cycles, 50);
	assert_string_equal(dtel_lcore_state_name(l.v[1].state), "STALLED");
	dtel_fwd_lcores_clear(&l);
	assert_null(l.v);
	free(s);
}

static void
lcores_bad(void **state)
{
	static const char *const bad[] = {
		/* a required column missing */
		"{\"/fwd/lcores\":{\"lcore_id\":[1],\"state_code\":[1],\"heartbeat\":[1],"
		"\"heartbeat_age_us\":[1]}}",
		/* columns of different lengths */
		"{\"/fwd/lcores\":{\"lcore_id\":[1,2],\"state_code\":[1],\"heartbeat\":[1,2],"
		"\"heartbeat_age_us\":[1,2],\"stalls\":[0,0]}}",
		/* a state code we do not know */
		"{\"/fwd/lcores\":{\"lcore_id\":[1],\"state_code\":[9],\"heartbeat\":[1],"
		"\"heartbeat_age_us\":[1],\"stalls\":[0]}}",
		/* a negative counter */
		"{\"/fwd/lcores\":{\"lcore_id\":[1],\"state_code\":[1],\"heartbeat\":[-1],"
		"\"heartbeat_age_us\":[1],\"stalls\":[0]}}",
		/* a column that is not an array */
		"{\"/fwd/lcores\":{\"lcore_id\":1,\"state_code\":[1],\"heartbeat\":[1],"
		"\"heartbeat_age_us\":[1],\"stalls\":[0]}}",
		/* the dict-of-dicts shape */
		"{\"/fwd/lcores\":{\"lcore1\":{\"lcore_id\":1}}}",
	};
	struct dtel_fwd_lcores l;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct dtel_reply r = reply_of(bad[i]);

		if (dtel_parse_fwd_lcores(&r, &l) != -EPROTO)
			fail_msg("accepted: %s", bad[i]);
	}
}

static void
lcores_extra_columns_and_empty(void **state)
{
	struct dtel_reply r = reply_of(
		"{\"/fwd/lcores\":{\"lcore_id\":[4],\"state_code\":[2],\"heartbeat\":[7],"
		"\"heartbeat_age_us\":[8],\"stalls\":[0],\"future\":[[1,2]],\"x\":\"y\"}}");
	struct dtel_reply e =
		reply_of("{\"/fwd/lcores\":{\"lcore_id\":[],\"state_code\":[],\"heartbeat\":[],"
			 "\"heartbeat_age_us\":[],\"stalls\":[]}}");
	struct dtel_fwd_lcores l;

	(void)state;
	assert_int_equal(dtel_parse_fwd_lcores(&r, &l), 0);
	assert_int_equal(l.n, 1);
	assert_int_equal(l.v[0].lcore_id, 4);
	assert_int_equal(l.v[0].rx_packets, 0);
	assert_string_equal(l.v[0].ports, "");
	dtel_fwd_lcores_clear(&l);
	assert_int_equal(dtel_parse_fwd_lcores(&e, &l), 0);
	assert_int_equal(l.n, 0);
	dtel_fwd_lcores_clear(&l);
}

static void
lcores_sixty_four(void **state)
{
	char *s = malloc(65536);
	size_t n = 0;
	const char *cols[] = {"lcore_id", "state_code", "heartbeat", "heartbeat_age_us", "stalls"};
	struct dtel_fwd_lcores l;

	(void)state;
	n += (size_t)snprintf(s + n, 65536 - n, "{\"/fwd/lcores\":{");
	for (int c = 0; c < 5; c++) {
		n += (size_t)snprintf(s + n, 65536 - n, "%s\"%s\":[", c ? "," : "", cols[c]);
		for (int i = 0; i < 64; i++)
			n += (size_t)snprintf(
				s + n, 65536 - n, "%s%d", i ? "," : "", c == 1 ? 1 : i);
		n += (size_t)snprintf(s + n, 65536 - n, "]");
	}
	snprintf(s + n, 65536 - n, "}}");
	struct dtel_reply r = reply_of(s);

	assert_int_equal(dtel_parse_fwd_lcores(&r, &l), 0);
	assert_int_equal(l.n, 64);
	assert_int_equal(l.v[63].lcore_id, 63);
	assert_int_equal(l.v[63].stalls, 63);
	dtel_fwd_lcores_clear(&l);
	free(s);
}

static void
ports_golden(void **state)
{
	size_t len;
	char *s = fs_golden("fwd/ports.json", &len);
	struct dtel_reply r = {.json = s, .len = len};
	struct dtel_fwd_ports p;

	(void)state;
	assert_int_equal(dtel_parse_fwd_ports(&r, &p), 0);
	assert_int_equal(p.n, 3);
	assert_true(p.v[0].up);
	assert_int_equal(p.v[0].speed_mbps, 10000);
	assert_int_equal(p.v[0].duplex, DTEL_DUPLEX_FULL);
	assert_false(p.v[1].up);
	assert_int_equal(p.v[1].link_changes, 3);
	assert_int_equal(p.v[2].duplex, DTEL_DUPLEX_HALF);
	assert_int_equal(p.v[2].port_id, 2);
	dtel_fwd_ports_clear(&p);
	free(s);
}

static void
ports_bad(void **state)
{
	struct dtel_reply r =
		reply_of("{\"/fwd/ports\":{\"port_id\":[0],\"link_status\":[\"SIDEWAYS\"],"
			 "\"link_changes\":[0]}}");
	struct dtel_reply w = reply_of("{\"/fwd/lcores\":{}}");
	struct dtel_reply n = reply_of("{\"/fwd/ports\":null}");
	struct dtel_fwd_ports p;

	(void)state;
	assert_int_equal(dtel_parse_fwd_ports(&r, &p), -EPROTO);
	assert_int_equal(dtel_parse_fwd_ports(&w, &p), -EPROTO);
	assert_int_equal(dtel_parse_fwd_ports(&n, &p), -ENODATA);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(lcores_golden),
		cmocka_unit_test(lcores_bad),
		cmocka_unit_test(lcores_extra_columns_and_empty),
		cmocka_unit_test(lcores_sixty_four),
		cmocka_unit_test(ports_golden),
		cmocka_unit_test(ports_bad),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
