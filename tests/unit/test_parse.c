/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Parsers against golden replies recorded from DPDK 22.11.11 (tests/data/dpdk-22.11), shapes
 * of newer DPDK releases written from their sources (tests/data/dpdk-newer), and malformed
 * input. One behaviour per test.
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

/* Run a parser over a golden file. */
#define GOLDEN(name, r)                                \
	size_t golden_len_;                            \
	char *golden_ = fs_golden(name, &golden_len_); \
	struct dtel_reply r = {.json = golden_, .len = golden_len_}

static void
greeting_golden(void **state)
{
	struct dtel_greeting g;
	size_t len;
	char *s = fs_golden("dpdk-22.11/greeting.json", &len);

	(void)state;
	assert_int_equal(dtel_parse_greeting(s, len, &g), 0);
	assert_string_equal(g.version, "DPDK 22.11.11");
	assert_int_equal(g.pid, 5723);
	assert_int_equal(g.max_output_len, 16384);
	free(s);
}

static void
greeting_bad(void **state)
{
	static const char *const bad[] = {
		"not json",
		"{\"version\":\"DPDK 22.11.11\",\"pid\":1}",
		"{\"version\":\"DPDK 22.11.11\",\"pid\":1,\"max_output_len\":0}",
		"{\"version\":\"DPDK 22.11.11\",\"pid\":1,\"max_output_len\":1048577}",
		"{\"version\":\"DPDK 22.11.11\",\"pid\":1,\"max_output_len\":-5}",
		"{\"version\":\"DPDK 22.11.11\",\"pid\":1,\"max_output_len\":\"16384\"}",
		"{\"version\":7,\"pid\":1,\"max_output_len\":16384}",
		"{\"version\":\"DPDK\",\"pid\":0,\"max_output_len\":16384}",
		"[1,2,3]",
		"{\"version\":\"DPDK 22.11.11\",\"pid\":1,\"max_output_len\":16384} trailing",
	};
	struct dtel_greeting g = {.pid = 42};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(dtel_parse_greeting(bad[i], strlen(bad[i]), &g), -EPROTO);
		assert_int_equal(g.pid, 42); /* untouched on failure */
	}
}

/* The versions the matrix runs, and strings that are not a DPDK release. */
static void
dpdk_version_numbers(void **state)
{
	static const char *const bad[] = {
		NULL,
		"",
		"DPDK",
		"DPDK ",
		"DPDK 22",
		"DPDK 22.",
		"DPDK x.11",
		"DPDK 22.13",
		"dpdk 22.11.1",
		"VPP 24.10",
		"DPDK 22.11.",
	};

	(void)state;
	assert_int_equal(dtel_dpdk_version("DPDK 22.11.11"), 221111);
	assert_int_equal(dtel_dpdk_version("DPDK 23.11.7"), 231107);
	assert_int_equal(dtel_dpdk_version("DPDK 25.11.2"), 251102);
	assert_int_equal(dtel_dpdk_version("DPDK 26.07.0"), 260700);
	assert_int_equal(dtel_dpdk_version("DPDK 26.07"), 260700);
	assert_int_equal(dtel_dpdk_version("DPDK 26.11.0-rc1"), 261100);
	assert_true(dtel_dpdk_version("DPDK 23.03.0") >= 230300);
	assert_true(dtel_dpdk_version("DPDK 22.11.11") < 230300);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(dtel_dpdk_version(bad[i]), -EINVAL);
}

static void
port_list_golden(void **state)
{
	GOLDEN("dpdk-22.11/ethdev_list.json", r);
	uint16_t *ids = NULL;

	(void)state;
	assert_int_equal(dtel_parse_port_list(&r, &ids), 4);
	for (int i = 0; i < 4; i++)
		assert_int_equal(ids[i], i);
	free(ids);
	free(golden_);
}

static void
port_list_empty_and_bad(void **state)
{
	struct dtel_reply empty = reply_of("{\"/ethdev/list\":[]}");
	struct dtel_reply neg = reply_of("{\"/ethdev/list\":[0,-1]}");
	struct dtel_reply big = reply_of("{\"/ethdev/list\":[70000]}");
	struct dtel_reply str = reply_of("{\"/ethdev/list\":[\"0\"]}");
	uint16_t *ids = (uint16_t *)&ids;

	(void)state;
	assert_int_equal(dtel_parse_port_list(&empty, &ids), 0);
	assert_null(ids);
	assert_int_equal(dtel_parse_port_list(&neg, &ids), -EPROTO);
	assert_int_equal(dtel_parse_port_list(&big, &ids), -EPROTO);
	assert_int_equal(dtel_parse_port_list(&str, &ids), -EPROTO);
}

static void
stats_golden(void **state)
{
	GOLDEN("dpdk-22.11/ethdev_stats-0.json", r);
	struct dtel_port_stats st;

	(void)state;
	assert_int_equal(dtel_parse_port_stats(&r, &st), 0);
	assert_int_equal(st.ipackets, 95060992);
	assert_int_equal(st.opackets, 94708736);
	assert_int_equal(st.ibytes, 0);
	assert_int_equal(st.rx_nombuf, 0);
	assert_int_equal(st.nb_queues, 16);
	assert_int_equal(st.q_ipackets[0], 95060992);
	assert_int_equal(st.q_opackets[0], 94708736);
	assert_int_equal(st.q_ipackets[1], 0);
	assert_int_equal(st.flags, 0);
	free(golden_);
}

static void
stats_four_queues(void **state)
{
	GOLDEN("dpdk-22.11/null_stats-4q.json", r);
	struct dtel_port_stats st;
	uint64_t sum = 0;

	(void)state;
	assert_int_equal(dtel_parse_port_stats(&r, &st), 0);
	for (unsigned int q = 0; q < st.nb_queues; q++)
		sum += st.q_ipackets[q];
	assert_int_equal(sum, st.ipackets);
	assert_int_equal(st.q_ipackets[3], 4745856);
	free(golden_);
}

static void
stats_u64_above_int64_max(void **state)
{
	struct dtel_reply r = reply_of(
		"{\"/ethdev/"
		"stats\":{\"ipackets\":18446744073709551615,\"opackets\":9223372036854775808,"
		"\"ibytes\":9223372036854775807,\"obytes\":0,\"imissed\":1,\"ierrors\":2,"
		"\"oerrors\":3,\"rx_nombuf\":18446744073709551614}}");
	struct dtel_port_stats st;

	(void)state;
	assert_int_equal(dtel_parse_port_stats(&r, &st), 0);
	assert_true(st.ipackets == UINT64_MAX);
	assert_true(st.opackets == (uint64_t)INT64_MAX + 1);
	assert_true(st.ibytes == (uint64_t)INT64_MAX);
	assert_true(st.rx_nombuf == UINT64_MAX - 1);
	assert_int_equal(st.nb_queues, 0); /* DPDK >= 25.11 has no q_* arrays */
}

static void
stats_newer_dpdk_without_queues(void **state)
{
	GOLDEN("dpdk-newer/ethdev_stats-25.11.json", r);
	struct dtel_port_stats st;

	(void)state;
	assert_int_equal(dtel_parse_port_stats(&r, &st), 0);
	assert_int_equal(st.ibytes, 7680);
	assert_int_equal(st.imissed, 2);
	assert_int_equal(st.nb_queues, 0);
	free(golden_);
}

static void
stats_overflowing_counter_is_refused(void **state)
{
	/* json-c alone would read 2^64 as UINT64_MAX. */
	struct dtel_reply r = reply_of(
		"{\"/ethdev/stats\":{\"ipackets\":18446744073709551616,\"opackets\":0,\"ibytes\":0,"
		"\"obytes\":0,\"imissed\":0,\"ierrors\":0,\"oerrors\":0,\"rx_nombuf\":0}}");
	struct dtel_port_stats st = {.ipackets = 7};

	(void)state;
	assert_int_equal(dtel_parse_port_stats(&r, &st), -EPROTO);
	assert_int_equal(st.ipackets, 7);
}

static void
stats_negative_or_text_counter_is_refused(void **state)
{
	static const char *const bad[] = {
		"{\"/ethdev/stats\":{\"ipackets\":-1,\"opackets\":0,\"ibytes\":0,\"obytes\":0,"
		"\"imissed\":0,\"ierrors\":0,\"oerrors\":0,\"rx_nombuf\":0}}",
		"{\"/ethdev/stats\":{\"ipackets\":\"12\",\"opackets\":0,\"ibytes\":0,\"obytes\":0,"
		"\"imissed\":0,\"ierrors\":0,\"oerrors\":0,\"rx_nombuf\":0}}",
		"{\"/ethdev/stats\":{\"ipackets\":1.5,\"opackets\":0,\"ibytes\":0,\"obytes\":0,"
		"\"imissed\":0,\"ierrors\":0,\"oerrors\":0,\"rx_nombuf\":0}}",
		"{\"/ethdev/stats\":{\"opackets\":0,\"ibytes\":0,\"obytes\":0,"
		"\"imissed\":0,\"ierrors\":0,\"oerrors\":0,\"rx_nombuf\":0}}",
		"{\"/ethdev/stats\":{\"ipackets\":0,\"opackets\":0,\"ibytes\":0,\"obytes\":0,"
		"\"imissed\":0,\"ierrors\":0,\"oerrors\":0,\"rx_nombuf\":0,\"q_ipackets\":[1,-2]}}",
	};
	struct dtel_port_stats st;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct dtel_reply r = reply_of(bad[i]);

		assert_int_equal(dtel_parse_port_stats(&r, &st), -EPROTO);
	}
}

static void
null_and_wrong_command(void **state)
{
	GOLDEN("dpdk-22.11/ethdev_stats-99.json", r);
	struct dtel_reply other = reply_of("{\"/ethdev/xstats\":{\"rx_good_packets\":1}}");
	struct dtel_reply two = reply_of("{\"/ethdev/stats\":{},\"/x\":1}");
	struct dtel_port_stats st;

	(void)state;
	assert_int_equal(dtel_parse_port_stats(&r, &st), -ENODATA);
	assert_int_equal(dtel_parse_port_stats(&other, &st), -EPROTO);
	assert_int_equal(dtel_parse_port_stats(&two, &st), -EPROTO);
	free(golden_);
}

static void
truncated_reply_is_refused(void **state)
{
	GOLDEN("dpdk-22.11/ethdev_stats-0.json", r);
	struct dtel_port_stats st;

	(void)state;
	for (size_t cut = 1; cut < r.len; cut += 7) {
		struct dtel_reply c = {.json = r.json, .len = cut};

		assert_int_equal(dtel_parse_port_stats(&c, &st), -EPROTO);
	}
	free(golden_);
}

static void
xstats_golden(void **state)
{
	GOLDEN("dpdk-22.11/tap_xstats-4q.json", r);
	struct dtel_xstats x;

	(void)state;
	assert_int_equal(dtel_parse_xstats(&r, &x), 0);
	assert_int_equal(x.n, 28);
	assert_string_equal(x.v[0].name, "rx_good_packets");
	assert_int_equal(x.v[0].value, 6);
	assert_string_equal(x.v[6].name, "tx_errors");
	assert_int_equal(x.v[6].value, 15543250);
	assert_string_equal(x.v[27].name, "tx_q3_bytes");
	assert_int_equal(x.flags, 0);
	dtel_xstats_clear(&x);
	assert_null(x.v);
	free(golden_);
}

/* From 25.11 the per-queue counters are xstats only: they must give what the q_* arrays of
 * /ethdev/stats gave (24.11 has both, recorded from the same stopped port). */
static void
xstats_queue_stats_equal_q_arrays(void **state)
{
	struct dtel_port_stats want, got = {.ipackets = 7};
	struct dtel_xstats x;
	size_t len;
	char *s;

	(void)state;
	s = fs_golden("dpdk-newer/ethdev_stats-4q-24.11.json", &len);
	assert_int_equal(
		dtel_parse_port_stats(&(struct dtel_reply){.json = s, .len = len}, &want), 0);
	free(s);
	assert_int_equal(want.nb_queues, 16);
	s = fs_golden("dpdk-newer/ethdev_xstats-4q-24.11.json", &len);
	assert_int_equal(dtel_parse_xstats(&(struct dtel_reply){.json = s, .len = len}, &x), 0);
	free(s);
	assert_int_equal(dtel_xstats_queue_stats(&x, &got), 4);
	assert_int_equal(got.nb_queues, 4);
	assert_int_equal(got.ipackets, 7); /* the other fields are left alone */
	assert_memory_equal(got.q_ipackets, want.q_ipackets, sizeof(got.q_ipackets));
	assert_memory_equal(got.q_opackets, want.q_opackets, sizeof(got.q_opackets));
	assert_memory_equal(got.q_ibytes, want.q_ibytes, sizeof(got.q_ibytes));
	assert_memory_equal(got.q_obytes, want.q_obytes, sizeof(got.q_obytes));
	assert_memory_equal(got.q_errors, want.q_errors, sizeof(got.q_errors));
	assert_true(want.q_ipackets[0] > 0);
	dtel_xstats_clear(&x);
}

/* 25.11 and 26.07: no q_* in /ethdev/stats; the queues from xstats add up to its totals. */
static void
xstats_queue_stats_newer_add_up(void **state)
{
	static const char *const rel[] = {"25.11", "26.07"};
	char name[96];

	(void)state;
	for (size_t i = 0; i < 2; i++) {
		struct dtel_port_stats st, q;
		struct dtel_xstats x;
		uint64_t ip = 0, op = 0, ib = 0, ob = 0;
		size_t len;
		char *s;

		snprintf(name, sizeof(name), "dpdk-newer/ethdev_stats-4q-%s.json", rel[i]);
		s = fs_golden(name, &len);
		assert_int_equal(
			dtel_parse_port_stats(&(struct dtel_reply){.json = s, .len = len}, &st), 0);
		free(s);
		assert_int_equal(st.nb_queues, 0);
		snprintf(name, sizeof(name), "dpdk-newer/ethdev_xstats-4q-%s.json", rel[i]);
		s = fs_golden(name, &len);
		assert_int_equal(
			dtel_parse_xstats(&(struct dtel_reply){.json = s, .len = len}, &x), 0);
		free(s);
		assert_int_equal(dtel_xstats_queue_stats(&x, &q), 4);
		for (unsigned int k = 0; k < q.nb_queues; k++) {
			ip += q.q_ipackets[k], op += q.q_opackets[k];
			ib += q.q_ibytes[k], ob += q.q_obytes[k];
		}
		assert_true(ip == st.ipackets && op == st.opackets);
		assert_true(ib == st.ibytes && ob == st.obytes);
		assert_true(ip > 0 && ib > 0);
		dtel_xstats_clear(&x);
	}
}

/* The xstats reply carries what /ethdev/stats does: equal on a stopped 24.11 port (basic and
 * per-queue), and on 22.11 (net_null autofills rx_q<N>_*) the same names. */
static void
xstats_port_stats_equal_stats(void **state)
{
	struct dtel_port_stats want, got;
	struct dtel_xstats x;
	size_t len;
	char *s;

	(void)state;
	s = fs_golden("dpdk-newer/ethdev_stats-4q-24.11.json", &len);
	assert_int_equal(
		dtel_parse_port_stats(&(struct dtel_reply){.json = s, .len = len}, &want), 0);
	free(s);
	s = fs_golden("dpdk-newer/ethdev_xstats-4q-24.11.json", &len);
	assert_int_equal(dtel_parse_xstats(&(struct dtel_reply){.json = s, .len = len}, &x), 0);
	free(s);
	assert_int_equal(dtel_xstats_port_stats(&x, &got), 4);
	assert_true(got.ipackets == want.ipackets && got.opackets == want.opackets);
	assert_true(got.ibytes == want.ibytes && got.obytes == want.obytes);
	assert_true(got.imissed == want.imissed && got.rx_nombuf == want.rx_nombuf);
	assert_true(got.ierrors == want.ierrors && got.oerrors == want.oerrors);
	assert_true(got.ipackets > 0);
	assert_memory_equal(got.q_ipackets, want.q_ipackets, sizeof(got.q_ipackets));
	assert_memory_equal(got.q_opackets, want.q_opackets, sizeof(got.q_opackets));
	dtel_xstats_clear(&x);

	s = fs_golden("dpdk-22.11/ethdev_xstats-0.json", &len);
	assert_int_equal(dtel_parse_xstats(&(struct dtel_reply){.json = s, .len = len}, &x), 0);
	free(s);
	assert_int_equal(dtel_xstats_port_stats(&x, &got), 1);
	assert_true(got.ipackets == 95189088 && got.opackets == 94836832);
	assert_true(got.q_ipackets[0] == got.ipackets && got.q_opackets[0] == got.opackets);
	dtel_xstats_clear(&x);
}

/* Each name is taken from its first entry (ethdev's, which come first); one missing name
 * (a hide_zero reply not completed) is -ENOENT with *st untouched; a cut reply still has
 * them and says so in flags. */
static void
xstats_port_stats_names(void **state)
{
	static const char basic[] =
		"\"rx_good_packets\":1,\"tx_good_packets\":2,\"rx_good_bytes\":3,"
		"\"tx_good_bytes\":4,\"rx_missed_errors\":5,\"rx_errors\":6,\"tx_errors\":7,"
		"\"rx_mbuf_allocation_errors\":8";
	char json[16384];
	size_t len;
	struct dtel_port_stats st = {.ipackets = 99};
	struct dtel_xstats x;
	struct dtel_reply r;
	char *s;

	(void)state;
	/* a driver's own counter of the same name after ethdev's */
	snprintf(json, sizeof(json), "{\"/ethdev/xstats\":{%s,\"rx_errors\":60}}", basic);
	r = reply_of(json);
	assert_int_equal(dtel_parse_xstats(&r, &x), 0);
	assert_int_equal(dtel_xstats_port_stats(&x, &st), 0);
	assert_true(st.ipackets == 1 && st.opackets == 2 && st.ibytes == 3 && st.obytes == 4);
	assert_true(st.imissed == 5 && st.ierrors == 6 && st.oerrors == 7 && st.rx_nombuf == 8);
	assert_int_equal(st.nb_queues, 0);
	dtel_xstats_clear(&x);

	/* hide_zero=true leaves out the zero ones: not usable until completed */
	st.ipackets = 99;
	s = fs_golden("dpdk-newer/ethdev_xstats_hide_zero-4q-24.11.json", &len);
	assert_int_equal(dtel_parse_xstats(&(struct dtel_reply){.json = s, .len = len}, &x), 0);
	free(s);
	assert_int_equal(dtel_xstats_port_stats(&x, &st), -ENOENT);
	assert_int_equal(st.ipackets, 99);
	{
		struct dtel_xstats known;

		s = fs_golden("dpdk-newer/ethdev_xstats-4q-24.11.json", &len);
		assert_int_equal(
			dtel_parse_xstats(&(struct dtel_reply){.json = s, .len = len}, &known), 0);
		free(s);
		assert_true(dtel_xstats_fill_hidden(&x, &known) > 0);
		assert_int_equal(dtel_xstats_port_stats(&x, &st), 4);
		assert_true(st.ipackets == 1443200 && st.ibytes == 0 && st.rx_nombuf == 0);
		dtel_xstats_clear(&known);
	}
	dtel_xstats_clear(&x);

	/* a reply of 256 entries (DPDK keeps the first 256): flagged, still complete */
	len = (size_t)snprintf(json, sizeof(json), "{\"/ethdev/xstats\":{%s", basic);
	for (int i = 8; i < 256; i++)
		len += (size_t)snprintf(json + len, sizeof(json) - len, ",\"x%d\":%d", i, i);
	snprintf(json + len, sizeof(json) - len, "}}");
	r = reply_of(json);
	assert_int_equal(dtel_parse_xstats(&r, &x), 0);
	assert_int_equal(dtel_xstats_port_stats(&x, &st), 0);
	assert_true(st.flags & DTEL_F_POSSIBLY_CUT);
	assert_true(st.rx_nombuf == 8);
	dtel_xstats_clear(&x);

	/* one name missing */
	r = reply_of("{\"/ethdev/xstats\":{\"rx_good_packets\":1,\"tx_good_packets\":2,"
		     "\"rx_good_bytes\":3,\"tx_good_bytes\":4,\"rx_missed_errors\":5,"
		     "\"rx_errors\":6,\"tx_errors\":7,\"rx_q0_packets\":1}}");
	assert_int_equal(dtel_parse_xstats(&r, &x), 0);
	st.ipackets = 99;
	assert_int_equal(dtel_xstats_port_stats(&x, &st), -ENOENT);
	assert_int_equal(st.ipackets, 99);
	assert_int_equal(dtel_xstats_port_stats(NULL, &st), -EINVAL);
	assert_int_equal(dtel_xstats_port_stats(&x, NULL), -EINVAL);
	dtel_xstats_clear(&x);
}

static void
xstats_queue_stats_strict_names(void **state)
{
	struct dtel_reply r = reply_of(
		"{\"/ethdev/xstats\":{\"rx_q2_packets\":5,\"rx_qx_packets\":1,\"rx_q_packets\":1,"
		"\"rx_q-1_packets\":1,\"tx_q1_errors\":9,\"rx_q1_packetsx\":1,\"rx_q64_packets\":1,"
		"\"rx_q1packets\":1,\"xrx_q1_packets\":1,\"tx_q0_bytes\":8,\"rx_q1_errors\":3}}");
	struct dtel_port_stats st;
	struct dtel_xstats x;

	(void)state;
	assert_int_equal(dtel_parse_xstats(&r, &x), 0);
	assert_int_equal(dtel_xstats_queue_stats(&x, &st), 3);
	assert_int_equal(st.q_ipackets[2], 5);
	assert_int_equal(st.q_ipackets[1], 0);
	assert_int_equal(st.q_obytes[0], 8);
	assert_int_equal(st.q_errors[1], 3);
	assert_int_equal(st.q_opackets[1], 0); /* there is no tx_q<N>_errors in ethdev */
	assert_int_equal(dtel_xstats_queue_stats(NULL, &st), -EINVAL);
	dtel_xstats_clear(&x);
}

/* A hide_zero=true reply completed with the names of the full one equals the full one
 * (recorded from the same stopped port). */
static void
xstats_fill_hidden_golden(void **state)
{
	static const char *const rel[] = {"24.11", "25.11", "26.07"};
	char name[96];

	(void)state;
	for (size_t i = 0; i < 3; i++) {
		struct dtel_xstats full, hz;
		size_t len;
		char *s;

		snprintf(name, sizeof(name), "dpdk-newer/ethdev_xstats-4q-%s.json", rel[i]);
		s = fs_golden(name, &len);
		assert_int_equal(
			dtel_parse_xstats(&(struct dtel_reply){.json = s, .len = len}, &full), 0);
		free(s);
		snprintf(name, sizeof(name), "dpdk-newer/ethdev_xstats_hide_zero-4q-%s.json",
			rel[i]);
		s = fs_golden(name, &len);
		assert_int_equal(
			dtel_parse_xstats(&(struct dtel_reply){.json = s, .len = len}, &hz), 0);
		free(s);
		assert_true(hz.n < full.n);
		assert_int_equal(dtel_xstats_fill_hidden(&hz, &full), (int)full.n);
		assert_int_equal(hz.n, full.n);
		for (size_t k = 0; k < full.n; k++) {
			assert_string_equal(hz.v[k].name, full.v[k].name);
			assert_true(hz.v[k].value == full.v[k].value);
		}
		dtel_xstats_clear(&full);
		dtel_xstats_clear(&hz);
	}
}

/* Names the earlier reply did not have keep their place; one out of order is not doubled. */
static void
xstats_fill_hidden_new_and_reordered(void **state)
{
	struct dtel_reply rk = reply_of("{\"/ethdev/xstats\":{\"a\":0,\"b\":1,\"c\":0,\"d\":2}}");
	struct dtel_reply rx = reply_of("{\"/ethdev/xstats\":{\"new\":4,\"d\":5,\"b\":6}}");
	static const char *const want_names[] = {"new", "a", "b", "c", "d"};
	static const uint64_t want_values[] = {4, 0, 6, 0, 5};
	struct dtel_xstats known, x;

	(void)state;
	assert_int_equal(dtel_parse_xstats(&rk, &known), 0);
	assert_int_equal(dtel_parse_xstats(&rx, &x), 0);
	assert_int_equal(dtel_xstats_fill_hidden(&x, &known), 5);
	for (size_t k = 0; k < 5; k++) {
		assert_string_equal(x.v[k].name, want_names[k]);
		assert_int_equal(x.v[k].value, want_values[k]);
	}
	assert_int_equal(dtel_xstats_fill_hidden(NULL, &known), -EINVAL);
	dtel_xstats_clear(&known);
	dtel_xstats_clear(&x);
}

static void
xstats_skips_invalid_entries(void **state)
{
	struct dtel_reply r = reply_of("{\"/ethdev/xstats\":{\"a\":1,\"b\":-3,\"c\":\"x\","
				       "\"d\":18446744073709551615}}");
	struct dtel_xstats x;

	(void)state;
	assert_int_equal(dtel_parse_xstats(&r, &x), 0);
	assert_int_equal(x.n, 2);
	assert_int_equal(x.nb_invalid, 2);
	assert_true(x.flags & DTEL_F_INVALID);
	assert_string_equal(x.v[1].name, "d");
	assert_true(x.v[1].value == UINT64_MAX);
	dtel_xstats_clear(&x);
}

/* Build {"/ethdev/xstats":{"x0":0,...}} with n entries. */
static char *
xstats_of(int n)
{
	size_t cap = 64 + (size_t)n * 32, len;
	char *s = malloc(cap);

	len = (size_t)snprintf(s, cap, "{\"/ethdev/xstats\":{");
	for (int i = 0; i < n; i++)
		len += (size_t)snprintf(s + len, cap - len, "%s\"x%d\":%d", i ? "," : "", i, i);
	snprintf(s + len, cap - len, "}}");
	return s;
}

static void
xstats_256_entries_flagged(void **state)
{
	char *full = xstats_of(256), *less = xstats_of(255);
	struct dtel_reply rf = reply_of(full), rl = reply_of(less);
	struct dtel_xstats x;

	(void)state;
	assert_int_equal(dtel_parse_xstats(&rf, &x), 0);
	assert_int_equal(x.n, 256);
	assert_true(x.flags & DTEL_F_DICT_FULL);
	assert_true(x.flags & DTEL_F_POSSIBLY_CUT);
	dtel_xstats_clear(&x);
	assert_int_equal(dtel_parse_xstats(&rl, &x), 0);
	assert_false(x.flags & DTEL_F_POSSIBLY_CUT);
	dtel_xstats_clear(&x);
	free(full);
	free(less);
}

static void
reply_flag_carried_into_result(void **state)
{
	GOLDEN("dpdk-22.11/ethdev_xstats-0.json", r);
	struct dtel_xstats x;

	(void)state;
	r.flags = DTEL_F_NEAR_LIMIT;
	assert_int_equal(dtel_parse_xstats(&r, &x), 0);
	assert_true(x.flags & DTEL_F_NEAR_LIMIT);
	dtel_xstats_clear(&x);
	free(golden_);
}

static void
link_up_and_down(void **state)
{
	GOLDEN("dpdk-22.11/tap_link_status-down.json", down);
	size_t len;
	char *s = fs_golden("dpdk-22.11/tap_link_status-up.json", &len);
	struct dtel_reply up = {.json = s, .len = len};
	struct dtel_link l;

	(void)state;
	assert_int_equal(dtel_parse_link(&down, &l), 0);
	assert_false(l.up);
	assert_int_equal(l.speed_mbps, 0);
	assert_int_equal(l.duplex, DTEL_DUPLEX_UNKNOWN);
	assert_int_equal(dtel_parse_link(&up, &l), 0);
	assert_true(l.up);
	assert_int_equal(l.speed_mbps, 10000);
	assert_int_equal(l.duplex, DTEL_DUPLEX_FULL);
	assert_string_equal(dtel_duplex_name(l.duplex), "full-duplex");
	free(s);
	free(golden_);
}

static void
link_bad_status(void **state)
{
	struct dtel_reply r = reply_of("{\"/ethdev/link_status\":{\"status\":\"MAYBE\"}}");
	struct dtel_reply u = reply_of("{\"/ethdev/link_status\":{\"status\":\"UP\"}}");
	struct dtel_link l;

	(void)state;
	assert_int_equal(dtel_parse_link(&r, &l), -EPROTO);
	assert_int_equal(dtel_parse_link(&u, &l), 0);
	assert_true(l.up);
	assert_true(l.speed_mbps == DTEL_SPEED_UNKNOWN);
}

static void
info_golden(void **state)
{
	GOLDEN("dpdk-22.11/tap_info-4q.json", r);
	struct dtel_port_info pi;

	(void)state;
	assert_int_equal(dtel_parse_port_info(&r, &pi), 0);
	assert_string_equal(pi.name, "net_tap0");
	assert_int_equal(pi.port_id, 0);
	assert_int_equal(pi.nb_rx_queues, 4);
	assert_int_equal(pi.nb_tx_queues, 4);
	assert_int_equal(pi.mtu, 1500);
	assert_string_equal(pi.mac_addr, "12:3C:D7:50:6F:72");
	assert_int_equal(pi.dev_flags, 66);
	assert_true(pi.dev_started);
	assert_true(pi.promiscuous);
	free(golden_);
}

static void
info_newer_dpdk(void **state)
{
	GOLDEN("dpdk-newer/ethdev_info-23.07.json", r);
	struct dtel_port_info pi;

	(void)state;
	assert_int_equal(dtel_parse_port_info(&r, &pi), 0);
	assert_string_equal(pi.name, "0000:3b:00.0");
	assert_int_equal(pi.dev_flags, 0x63);
	assert_int_equal(pi.nb_rx_queues, 8);
	assert_int_equal(pi.flags & DTEL_F_INVALID, 0);
	free(golden_);
}

static void
eal_params_golden(void **state)
{
	GOLDEN("dpdk-22.11/eal_params.json", r);
	struct dtel_eal_params p;

	(void)state;
	assert_int_equal(dtel_parse_eal_params(&r, &p), 0);
	assert_string_equal(p.app, "dpdk-testpmd");
	assert_string_equal(p.file_prefix, "rec1");
	assert_string_equal(p.lcores, "0,1");
	assert_true(p.no_huge);
	assert_false(p.in_memory);
	free(golden_);
}

static void
eal_params_forms(void **state)
{
	struct dtel_reply r =
		reply_of("{\"/eal/params\":[\"/usr/bin/ovs-vswitchd\",\"--in-memory\","
			 "\"--file-prefix\",\"ovs\",\"--lcores=1@2,3\"]}");
	struct dtel_reply d = reply_of("{\"/eal/params\":[\"app\",\"-c0x3\"]}");
	struct dtel_eal_params p;

	(void)state;
	assert_int_equal(dtel_parse_eal_params(&r, &p), 0);
	assert_string_equal(p.app, "ovs-vswitchd");
	assert_string_equal(p.file_prefix, "ovs");
	assert_string_equal(p.lcores, "1@2,3");
	assert_true(p.in_memory);
	assert_int_equal(dtel_parse_eal_params(&d, &p), 0);
	assert_string_equal(p.file_prefix, "rte");
	assert_string_equal(p.lcores, "0x3");
}

/* Every argument as given, for the --vdev arguments of a port; one DPDK cut is "". */
static void
eal_argv_golden(void **state)
{
	GOLDEN("dpdk-22.11/eal_params.json", r);
	struct dtel_reply bad = reply_of("{\"/eal/params\":[\"app\",3]}");
	struct dtel_reply empty = reply_of("{\"/eal/params\":[]}");
	char(*argv)[DTEL_STRING_MAX] = NULL;

	(void)state;
	assert_int_equal(dtel_parse_eal_argv(&r, &argv), 12);
	assert_string_equal(argv[0], "dpdk-testpmd");
	assert_string_equal(argv[7], "--vdev=net_null0");
	assert_string_equal(argv[11], "--file-prefix=rec1");
	free(argv);
	assert_int_equal(dtel_parse_eal_argv(&bad, &argv), -EPROTO);
	assert_int_equal(dtel_parse_eal_argv(&empty, &argv), 0);
	assert_null(argv);
	free(golden_);
}

static void
eal_lcore_info_newer_dpdk(void **state)
{
	GOLDEN("dpdk-newer/eal_lcore_info-23.11.json", r);
	struct dtel_eal_lcore_info li;
	struct dtel_reply none =
		reply_of("{\"/eal/lcore/"
			 "info\":{\"lcore_id\":2,\"socket\":0,\"role\":\"RTE\",\"cpuset\":[2]}}");

	(void)state;
	assert_int_equal(dtel_parse_eal_lcore_info(&r, &li), 0);
	assert_int_equal(li.lcore_id, 1);
	assert_string_equal(li.role, "RTE");
	assert_true(li.has_cycles);
	assert_true(li.busy_cycles <= li.total_cycles);
	assert_true(li.cpuset[0] == 1u << 1);
	assert_int_equal(dtel_parse_eal_lcore_info(&none, &li), 0);
	assert_false(li.has_cycles);
	assert_true(li.cpuset[0] == 1u << 2);
	free(golden_);
}

/* An lcore may run on several CPUs (--lcores 1@(2-3,70)); CPUs from 1024 do not fit. */
static void
eal_lcore_info_cpuset(void **state)
{
	struct dtel_reply r = reply_of("{\"/eal/lcore/info\":{\"lcore_id\":1,\"socket\":1,"
				       "\"role\":\"RTE\",\"cpuset\":[2,3,70,5000]}}");
	struct dtel_reply bad =
		reply_of("{\"/eal/lcore/info\":{\"lcore_id\":1,\"cpuset\":[\"x\"]}}");
	struct dtel_eal_lcore_info li;

	(void)state;
	assert_int_equal(dtel_parse_eal_lcore_info(&r, &li), 0);
	assert_int_equal(li.socket, 1);
	assert_true(li.cpuset[0] == ((1ull << 2) | (1ull << 3)));
	assert_true(li.cpuset[1] == 1ull << 6);
	for (int w = 2; w < DTEL_CPUSET_WORDS; w++)
		assert_true(li.cpuset[w] == 0);
	assert_int_equal(dtel_parse_eal_lcore_info(&bad, &li), -EPROTO);
}

static void
eal_lcore_info_absent_on_22_11(void **state)
{
	GOLDEN("dpdk-22.11/eal_lcore_info-1.json", r);
	struct dtel_eal_lcore_info li;

	(void)state;
	assert_int_equal(dtel_parse_eal_lcore_info(&r, &li), -ENODATA);
	free(golden_);
}

static void
dict_golden_heap(void **state)
{
	GOLDEN("dpdk-22.11/eal_heap_info-0.json", r);
	const struct dtel_entry *e;
	struct dtel_dict d;

	(void)state;
	assert_int_equal(dtel_parse_dict(&r, "/eal/heap_info", &d), 0);
	e = dtel_dict_find(&d, "Heap_size");
	assert_non_null(e);
	assert_int_equal(e->type, DTEL_VALUE_U64);
	assert_int_equal(e->v.u64, 1073741824);
	e = dtel_dict_find(&d, "Name");
	assert_non_null(e);
	assert_int_equal(e->type, DTEL_VALUE_STRING);
	assert_string_equal(e->str, "socket_0");
	dtel_dict_clear(&d);
	free(golden_);
}

static void
dict_flattens_nested(void **state)
{
	struct dtel_reply r = reply_of("{\"/fwd/x\":{\"a\":{\"b\":1,\"c\":[5,-6]},\"s\":\"t\","
				       "\"f\":1.5,\"t\":true,\"n\":null,\"e\":{}}}");
	const struct dtel_entry *e;
	struct dtel_dict d;

	(void)state;
	assert_int_equal(dtel_parse_dict(&r, NULL, &d), 0);
	assert_int_equal(d.n, 7);
	e = dtel_dict_find(&d, "a.b");
	assert_non_null(e);
	assert_int_equal(e->v.u64, 1);
	e = dtel_dict_find(&d, "a.c.1");
	assert_non_null(e);
	assert_int_equal(e->type, DTEL_VALUE_I64);
	assert_int_equal(e->v.i64, -6);
	assert_int_equal(dtel_dict_find(&d, "f")->type, DTEL_VALUE_DOUBLE);
	assert_int_equal(dtel_dict_find(&d, "t")->type, DTEL_VALUE_BOOL);
	assert_int_equal(dtel_dict_find(&d, "n")->type, DTEL_VALUE_NULL);
	assert_null(dtel_dict_find(&d, "e"));
	dtel_dict_clear(&d);
}

static void
dict_deep_nesting_refused(void **state)
{
	char buf[1024];
	size_t len = 0;
	struct dtel_dict d;

	(void)state;
	len += (size_t)snprintf(buf + len, sizeof(buf) - len, "{\"/x\":");
	for (int i = 0; i < 40; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "{\"k\":");
	len += (size_t)snprintf(buf + len, sizeof(buf) - len, "1");
	for (int i = 0; i < 41; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "}");
	struct dtel_reply r = reply_of(buf);

	assert_int_equal(dtel_parse_dict(&r, "/x", &d), -EPROTO);
}

static void
dict_array_at_cap_flagged(void **state)
{
	size_t cap = 8192, len;
	char *s = malloc(cap);
	struct dtel_dict d;

	(void)state;
	len = (size_t)snprintf(s, cap, "{\"/x\":{\"a\":[");
	for (int i = 0; i < 512; i++)
		len += (size_t)snprintf(s + len, cap - len, "%s0", i ? "," : "");
	snprintf(s + len, cap - len, "]}}");
	struct dtel_reply r = reply_of(s);

	assert_int_equal(dtel_parse_dict(&r, "/x", &d), 0);
	assert_true(d.flags & DTEL_F_ARRAY_FULL);
	dtel_dict_clear(&d);
	free(s);
}

static void
dict_empty_as_array_is_empty(void **state)
{
	/* Before 22.11.5 an empty nested dict was printed []: both read as no entries. */
	struct dtel_reply r = reply_of("{\"/ethdev/module_eeprom\":[]}");
	GOLDEN("dpdk-22.11/ethdev_module_eeprom-0.json", g);
	struct dtel_dict d;

	(void)state;
	assert_int_equal(dtel_parse_dict(&r, "/ethdev/module_eeprom", &d), 0);
	assert_int_equal(d.n, 0);
	dtel_dict_clear(&d);
	assert_int_equal(dtel_parse_dict(&g, "/ethdev/module_eeprom", &d), 0);
	assert_int_equal(d.n, 0);
	dtel_dict_clear(&d);
	free(golden_);
}

static void
dict_of_string_list(void **state)
{
	GOLDEN("dpdk-22.11/mempool_list.json", r);
	struct dtel_reply scalar = reply_of("{\"/x\":5}");
	struct dtel_dict d;

	(void)state;
	assert_int_equal(dtel_parse_dict(&r, "/mempool/list", &d), 0);
	assert_int_equal(d.n, 1);
	assert_string_equal(d.v[0].key, "0");
	assert_string_equal(d.v[0].str, "mb_pool_0");
	dtel_dict_clear(&d);
	assert_int_equal(dtel_parse_dict(&scalar, "/x", &d), -EPROTO);
	free(golden_);
}

static void
strings_in_keys_with_escapes(void **state)
{
	/* Oversized integers inside strings are not numbers. */
	struct dtel_reply r = reply_of(
		"{\"/x\":{\"a\\\"b\":\"99999999999999999999999\",\"c\":\"\\\\\",\"d\":2}}");
	struct dtel_dict d;

	(void)state;
	assert_int_equal(dtel_parse_dict(&r, "/x", &d), 0);
	assert_int_equal(d.n, 3);
	assert_string_equal(dtel_dict_find(&d, "a\"b")->str, "99999999999999999999999");
	dtel_dict_clear(&d);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(greeting_golden),
		cmocka_unit_test(greeting_bad),
		cmocka_unit_test(dpdk_version_numbers),
		cmocka_unit_test(port_list_golden),
		cmocka_unit_test(port_list_empty_and_bad),
		cmocka_unit_test(stats_golden),
		cmocka_unit_test(stats_four_queues),
		cmocka_unit_test(stats_u64_above_int64_max),
		cmocka_unit_test(stats_newer_dpdk_without_queues),
		cmocka_unit_test(stats_overflowing_counter_is_refused),
		cmocka_unit_test(stats_negative_or_text_counter_is_refused),
		cmocka_unit_test(null_and_wrong_command),
		cmocka_unit_test(truncated_reply_is_refused),
		cmocka_unit_test(xstats_golden),
		cmocka_unit_test(xstats_queue_stats_equal_q_arrays),
		cmocka_unit_test(xstats_queue_stats_newer_add_up),
		cmocka_unit_test(xstats_queue_stats_strict_names),
		cmocka_unit_test(xstats_port_stats_equal_stats),
		cmocka_unit_test(xstats_port_stats_names),
		cmocka_unit_test(xstats_fill_hidden_golden),
		cmocka_unit_test(xstats_fill_hidden_new_and_reordered),
		cmocka_unit_test(xstats_skips_invalid_entries),
		cmocka_unit_test(xstats_256_entries_flagged),
		cmocka_unit_test(reply_flag_carried_into_result),
		cmocka_unit_test(link_up_and_down),
		cmocka_unit_test(link_bad_status),
		cmocka_unit_test(info_golden),
		cmocka_unit_test(info_newer_dpdk),
		cmocka_unit_test(eal_params_golden),
		cmocka_unit_test(eal_params_forms),
		cmocka_unit_test(eal_argv_golden),
		cmocka_unit_test(eal_lcore_info_newer_dpdk),
		cmocka_unit_test(eal_lcore_info_cpuset),
		cmocka_unit_test(eal_lcore_info_absent_on_22_11),
		cmocka_unit_test(dict_golden_heap),
		cmocka_unit_test(dict_flattens_nested),
		cmocka_unit_test(dict_deep_nesting_refused),
		cmocka_unit_test(dict_array_at_cap_flagged),
		cmocka_unit_test(dict_empty_as_array_is_empty),
		cmocka_unit_test(dict_of_string_list),
		cmocka_unit_test(strings_in_keys_with_escapes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
