/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The /fwd/... replies, rendered without EAL through the 22.11 stand-in (tel_stub.c):
 * shapes as documented in docs/fwd-telemetry.md, and, for 64 lcores and 64 ports with
 * UINT64_MAX everywhere, under 16384 bytes, under 256 dict and 512 array entries, nothing
 * dropped, nothing leaked (also on every failure path). Plus the pure helpers: strict id
 * parameters, id lists, key names, lcore state classification.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "reply.h"
#include "state.h"
#include "tel_stub.h"

#define N 64

static char out[STUB_MAX_OUTPUT * 2];

/* Render a reply that must be complete; returns its parsed value (caller puts root). */
static json_object *
render_complete(const char *cmd, int ret, struct rte_tel_data *d, json_object **root)
{
	struct json_tokener *tok = json_tokener_new();
	json_object *value = NULL;
	int len;

	assert_int_equal(ret, 0);
	len = stub_render(cmd, ret, d, out, sizeof(out));
	print_message("%s: %d bytes, largest dict %d, largest array %d\n", cmd, len,
		stub_stats.max_dict, stub_stats.max_array);
	assert_true(len > 0);
	assert_true(len < STUB_MAX_OUTPUT);
	assert_int_equal(stub_stats.skipped, 0);
	assert_int_equal(stub_stats.failed_calls, 0);
	assert_int_equal(stub_stats.live, 0);
	assert_true(stub_stats.max_dict < 256);
	assert_true(stub_stats.max_array < 512);
	*root = json_tokener_parse_ex(tok, out, len);
	json_tokener_free(tok);
	assert_non_null(*root);
	assert_true(json_object_object_get_ex(*root, cmd, &value));
	return value;
}

static json_object *
key(json_object *o, const char *k)
{
	json_object *v = NULL;

	if (!json_object_object_get_ex(o, k, &v))
		fail_msg("key '%s' missing in %s", k, json_object_to_json_string(o));
	return v;
}

static void
assert_column_u64(json_object *dict, const char *k, size_t n, uint64_t v)
{
	json_object *a = key(dict, k);

	assert_true(json_object_is_type(a, json_type_array));
	assert_int_equal(json_object_array_length(a), n);
	for (size_t i = 0; i < n; i++)
		assert_true(json_object_get_uint64(json_object_array_get_idx(a, i)) == v);
}

static void
fill_lcores(struct fwd_lcore_snap *s, unsigned int n, unsigned int ports_each)
{
	memset(s, 0, sizeof(*s) * n);
	for (unsigned int i = 0; i < n; i++) {
		s[i].lcore_id = 64 + i; /* three-digit ids: the longest text */
		s[i].state = FWD_LCORE_STARTING;
		s[i].heartbeat = UINT64_MAX;
		s[i].heartbeat_age_us = UINT64_MAX;
		s[i].stalls = UINT64_MAX;
		s[i].last_change_age_ms = UINT64_MAX;
		s[i].rx_packets = UINT64_MAX;
		s[i].tx_packets = UINT64_MAX;
		s[i].tx_dropped = UINT64_MAX;
		s[i].busy_cycles = UINT64_MAX;
		s[i].total_cycles = UINT64_MAX;
		s[i].nb_ports = ports_each;
		/* round-robin over n lcores: lcore i gets i, i+n, ... (no ranges to merge) */
		for (unsigned int p = 0; p < ports_each; p++)
			s[i].ports[p] = (uint16_t)(i + p * n);
	}
}

static void
fill_ports(struct fwd_port_snap *s, unsigned int n)
{
	memset(s, 0, sizeof(*s) * n);
	for (unsigned int i = 0; i < n; i++) {
		s[i].port_id = (uint16_t)i;
		memset(s[i].name, 'x', FWD_PORT_NAME_MAX - 1);
		s[i].link = fwd_link_word(true, UINT32_MAX, true);
		s[i].link_changes = UINT64_MAX;
		s[i].last_change_age_ms = UINT64_MAX;
		s[i].rx_packets = UINT64_MAX;
		s[i].tx_packets = UINT64_MAX;
		s[i].tx_dropped = UINT64_MAX;
		s[i].lcore_id = 127;
		s[i].peer_port = (uint16_t)(i ^ 1);
	}
}

static void
lcores_64_at_max(void **state)
{
	static struct fwd_lcore_snap s[N];
	struct rte_tel_data *d = stub_new_top();
	json_object *root, *v;
	static const char *const u64_cols[] = {"heartbeat", "heartbeat_age_us", "stalls",
		"last_change_age_ms", "rx_packets", "tx_packets", "busy_cycles", "total_cycles"};

	(void)state;
	stub_reset();
	fill_lcores(s, N, 1);
	v = render_complete("/fwd/lcores", fwd_reply_lcores(d, s, N), d, &root);
	assert_int_equal(json_object_object_length(v), 12);
	for (size_t i = 0; i < sizeof(u64_cols) / sizeof(u64_cols[0]); i++)
		assert_column_u64(v, u64_cols[i], N, UINT64_MAX);
	assert_int_equal(json_object_array_length(key(v, "lcore_id")), N);
	assert_int_equal(json_object_get_int(json_object_array_get_idx(key(v, "lcore_id"), 5)), 69);
	assert_string_equal(
		json_object_get_string(json_object_array_get_idx(key(v, "state"), 0)), "STARTING");
	assert_int_equal(
		json_object_get_int(json_object_array_get_idx(key(v, "state_code"), 0)), 0);
	assert_string_equal(
		json_object_get_string(json_object_array_get_idx(key(v, "ports"), 63)), "63");
	json_object_put(root);
}

static void
lcores_few_with_many_ports(void **state)
{
	/* 2 lcores sharing 64 ports round-robin: the longest "ports" strings there can be. */
	static struct fwd_lcore_snap s[2];
	struct rte_tel_data *d = stub_new_top();
	json_object *root, *v;
	const char *ports;

	(void)state;
	stub_reset();
	fill_lcores(s, 2, 32);
	v = render_complete("/fwd/lcores", fwd_reply_lcores(d, s, 2), d, &root);
	ports = json_object_get_string(json_object_array_get_idx(key(v, "ports"), 1));
	assert_int_equal(strncmp(ports, "1,3,5,", 6), 0);
	assert_string_equal(ports + strlen(ports) - 3, ",63");
	json_object_put(root);
}

static void
lcores_empty(void **state)
{
	struct rte_tel_data *d = stub_new_top();
	json_object *root, *v;

	(void)state;
	stub_reset();
	v = render_complete("/fwd/lcores", fwd_reply_lcores(d, NULL, 0), d, &root);
	assert_int_equal(json_object_array_length(key(v, "lcore_id")), 0);
	json_object_put(root);
}

static void
lcores_too_many(void **state)
{
	static struct fwd_lcore_snap s[N + 1];
	struct rte_tel_data *d = stub_new_top();

	(void)state;
	stub_reset();
	fill_lcores(s, N + 1, 1);
	assert_int_equal(fwd_reply_lcores(d, s, N + 1), -E2BIG);
	assert_int_equal(stub_stats.live, 0);
	stub_free_top(d);
}

static void
lcore_one(void **state)
{
	static struct fwd_lcore_snap s[1];
	struct rte_tel_data *d = stub_new_top();
	json_object *root, *v, *ports;
	static const char *const keys[] = {"lcore_id", "state", "state_code", "heartbeat",
		"heartbeat_age_us", "stalls", "last_change_age_ms", "rx_packets", "tx_packets",
		"tx_dropped", "busy_cycles", "total_cycles", "ports", "rx_queues"};

	(void)state;
	stub_reset();
	fill_lcores(s, 1, N); /* one lcore with all 64 ports */
	s[0].state = FWD_LCORE_STALLED;
	v = render_complete("/fwd/lcore", fwd_reply_lcore(d, &s[0]), d, &root);
	assert_int_equal(json_object_object_length(v), 14);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		(void)key(v, keys[i]);
	assert_int_equal(json_object_get_int(key(v, "lcore_id")), 64);
	assert_string_equal(json_object_get_string(key(v, "state")), "STALLED");
	assert_int_equal(json_object_get_int(key(v, "state_code")), 3);
	assert_true(json_object_get_uint64(key(v, "tx_dropped")) == UINT64_MAX);
	ports = key(v, "ports");
	assert_int_equal(json_object_array_length(ports), N);
	assert_int_equal(json_object_get_int(json_object_array_get_idx(ports, 63)), 63);
	/* Index-aligned with ports: the rx queue polled on each, the forwarder's one. */
	assert_int_equal(json_object_array_length(key(v, "rx_queues")), N);
	assert_int_equal(
		json_object_get_int(json_object_array_get_idx(key(v, "rx_queues"), 63)), 0);
	json_object_put(root);
}

static void
ports_64_at_max(void **state)
{
	static struct fwd_port_snap s[N];
	struct rte_tel_data *d = stub_new_top();
	json_object *root, *v;

	(void)state;
	stub_reset();
	fill_ports(s, N);
	v = render_complete("/fwd/ports", fwd_reply_ports(d, s, N), d, &root);
	assert_int_equal(json_object_object_length(v), 6);
	assert_column_u64(v, "link_changes", N, UINT64_MAX);
	assert_column_u64(v, "last_change_age_ms", N, UINT64_MAX);
	assert_column_u64(v, "link_speed", N, UINT32_MAX);
	assert_int_equal(json_object_array_length(key(v, "port_id")), N);
	assert_string_equal(
		json_object_get_string(json_object_array_get_idx(key(v, "link_status"), 0)), "UP");
	assert_string_equal(
		json_object_get_string(json_object_array_get_idx(key(v, "link_duplex"), 0)),
		"full-duplex");
	json_object_put(root);
}

static void
ports_down_reads_zero_speed(void **state)
{
	static struct fwd_port_snap s[2];
	struct rte_tel_data *d = stub_new_top();
	json_object *root, *v;

	(void)state;
	stub_reset();
	fill_ports(s, 2);
	s[1].link = fwd_link_word(false, 10000, true);
	v = render_complete("/fwd/ports", fwd_reply_ports(d, s, 2), d, &root);
	assert_string_equal(
		json_object_get_string(json_object_array_get_idx(key(v, "link_status"), 1)),
		"DOWN");
	assert_int_equal(
		json_object_get_int(json_object_array_get_idx(key(v, "link_speed"), 1)), 0);
	assert_string_equal(
		json_object_get_string(json_object_array_get_idx(key(v, "link_duplex"), 1)),
		"unknown");
	json_object_put(root);
}

static void
port_one(void **state)
{
	static struct fwd_port_snap s[1];
	struct rte_tel_data *d = stub_new_top();
	json_object *root, *v;
	static const char *const keys[] = {"port_id", "name", "link_status", "link_speed",
		"link_duplex", "link_changes", "last_change_age_ms", "rx_packets", "tx_packets",
		"tx_dropped", "lcore_id", "peer_port", "rx_queue_lcores"};

	(void)state;
	stub_reset();
	fill_ports(s, 1);
	v = render_complete("/fwd/port", fwd_reply_port(d, &s[0]), d, &root);
	assert_int_equal(json_object_object_length(v), 13);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		(void)key(v, keys[i]);
	assert_int_equal(strlen(json_object_get_string(key(v, "name"))), FWD_PORT_NAME_MAX - 1);
	assert_true(json_object_get_uint64(key(v, "rx_packets")) == UINT64_MAX);
	assert_int_equal(json_object_get_int(key(v, "peer_port")), 1);
	/* Entry q: the lcore polling rx queue q; the forwarder's one queue, by lcore_id. */
	assert_int_equal(json_object_array_length(key(v, "rx_queue_lcores")), 1);
	assert_int_equal(
		json_object_get_int(json_object_array_get_idx(key(v, "rx_queue_lcores"), 0)),
		json_object_get_int(key(v, "lcore_id")));
	json_object_put(root);
}

static void
info_64(void **state)
{
	static struct fwd_info_snap s;
	struct rte_tel_data *d = stub_new_top();
	json_object *root, *v;
	static const char *const keys[] = {"app", "version", "pid", "uptime_ms", "mac_mode",
		"burst", "heartbeat_ms", "stall_ms", "link_poll_ms", "link_check_age_ms",
		"idle_sleep_us", "stats_period_s", "ports", "lcores"};

	(void)state;
	stub_reset();
	memset(&s, 0, sizeof(s));
	s.app = "dpdktel-fwd";
	s.version = "0.1.0";
	s.pid = 2147483647;
	s.uptime_ms = UINT64_MAX;
	s.mac_mode = "rewrite";
	s.burst = 32;
	s.heartbeat_ms = 10000;
	s.stall_ms = 600000;
	s.link_poll_ms = 10000;
	s.link_check_age_ms = UINT64_MAX;
	s.idle_sleep_us = 1000000;
	s.stats_period_s = 86400;
	s.nb_ports = N;
	s.nb_lcores = N;
	for (unsigned int i = 0; i < N; i++) {
		s.ports[i] = (uint16_t)i;
		s.lcores[i] = 64 + i;
	}
	v = render_complete("/fwd/info", fwd_reply_info(d, &s), d, &root);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		(void)key(v, keys[i]);
	assert_string_equal(json_object_get_string(key(v, "app")), "dpdktel-fwd");
	assert_true(json_object_get_uint64(key(v, "uptime_ms")) == UINT64_MAX);
	assert_true(json_object_get_uint64(key(v, "link_check_age_ms")) == UINT64_MAX);
	assert_int_equal(json_object_array_length(key(v, "ports")), N);
	assert_int_equal(json_object_array_length(key(v, "lcores")), N);
	json_object_put(root);
}

static void
metrics_ours_at_max(void **state)
{
	static const char *const names[] = {"rx_packets", "tx_packets", "tx_dropped",
		"link_changes", "link_status", "link_speed", "ports_up", "lcores_running",
		"lcores_idle", "lcores_stalled", "lcores_exited", "lcore_stalls"};
	struct fwd_metric_snap m[12];
	struct rte_tel_data *d = stub_new_top();
	json_object *root, *v;

	(void)state;
	stub_reset();
	for (int i = 0; i < 12; i++) {
		m[i].name = names[i];
		m[i].value = UINT64_MAX;
	}
	v = render_complete("/fwd/metrics", fwd_reply_metrics(d, 63, m, 12), d, &root);
	assert_int_equal(json_object_object_length(v), 13);
	assert_int_equal(json_object_get_int(key(v, "port_id")), 63);
	assert_true(json_object_get_uint64(key(v, "lcore_stalls")) == UINT64_MAX);
	assert_false(json_object_object_get_ex(v, "truncated", NULL));
	json_object_put(root);
}

static void
metrics_skips_bad_names(void **state)
{
	struct fwd_metric_snap m[] = {{"good", 1}, {"bad-dash", 2}, {"bad.dot", 3}, {"port_id", 4},
		{"", 5}, {"ok/slash_9", 6}, {"truncated", 7}};
	struct rte_tel_data *d = stub_new_top();
	json_object *root, *v;

	(void)state;
	stub_reset();
	v = render_complete("/fwd/metrics", fwd_reply_metrics(d, -1, m, 7), d, &root);
	assert_int_equal(json_object_object_length(v), 3);
	assert_int_equal(json_object_get_int(key(v, "port_id")), -1);
	assert_int_equal(json_object_get_int(key(v, "good")), 1);
	assert_int_equal(json_object_get_int(key(v, "ok/slash_9")), 6);
	json_object_put(root);
}

static void
metrics_overflow_is_flagged(void **state)
{
	/* 255 names of 63 characters (the rte_metrics maxima) at UINT64_MAX: ~22 KB. */
	static char names[255][64];
	static struct fwd_metric_snap m[255];
	struct rte_tel_data *d = stub_new_top();
	json_object *root, *v;
	int n;

	(void)state;
	stub_reset();
	for (int i = 0; i < 255; i++) {
		memset(names[i], 'm', 63);
		snprintf(names[i], sizeof(names[i]), "%03d", i);
		names[i][3] = 'm'; /* keep 63 characters */
		m[i].name = names[i];
		m[i].value = UINT64_MAX;
	}
	v = render_complete("/fwd/metrics", fwd_reply_metrics(d, 0, m, 255), d, &root);
	n = json_object_object_length(v);
	print_message("metrics overflow: %d keys kept of 255\n", n - 2);
	assert_int_equal(json_object_get_int(key(v, "truncated")), 1);
	assert_true(n > 100 && n < 256);
	json_object_put(root);
}

static void
metrics_count_overflow_is_flagged(void **state)
{
	/* 300 short names: the 256-entry dict limit, not the byte limit, cuts. */
	static char names[300][8];
	static struct fwd_metric_snap m[300];
	struct rte_tel_data *d = stub_new_top();
	json_object *root, *v;

	(void)state;
	stub_reset();
	for (int i = 0; i < 300; i++) {
		snprintf(names[i], sizeof(names[i]), "m%d", i);
		m[i].name = names[i];
		m[i].value = 1;
	}
	v = render_complete("/fwd/metrics", fwd_reply_metrics(d, 0, m, 300), d, &root);
	assert_int_equal(json_object_get_int(key(v, "truncated")), 1);
	assert_int_equal(json_object_object_length(v), 255);
	json_object_put(root);
}

/* Every allocation or call that can fail, failing in turn: null reply, nothing leaked. */
static void
failures_leak_nothing(void **state)
{
	static struct fwd_lcore_snap l[4];
	static struct fwd_port_snap p[4];
	static struct fwd_info_snap info;
	struct fwd_metric_snap m[] = {{"a", 1}, {"b", 2}};

	(void)state;
	fill_lcores(l, 4, 1);
	fill_ports(p, 4);
	memset(&info, 0, sizeof(info));
	info.app = info.version = info.mac_mode = "x";
	info.nb_ports = 4;
	info.nb_lcores = 4;
	for (int mode = 0; mode < 2; mode++) {
		for (int k = 0; k < 120; k++) {
			for (int builder = 0; builder < 6; builder++) {
				struct rte_tel_data *d = stub_new_top();
				int ret = 0;

				stub_reset();
				if (mode == 0)
					stub_fail_alloc_at(k);
				else
					stub_fail_add_at(k);
				switch (builder) {
				case 0:
					ret = fwd_reply_lcores(d, l, 4);
					break;
				case 1:
					ret = fwd_reply_lcore(d, &l[0]);
					break;
				case 2:
					ret = fwd_reply_ports(d, p, 4);
					break;
				case 3:
					ret = fwd_reply_port(d, &p[0]);
					break;
				case 4:
					ret = fwd_reply_info(d, &info);
					break;
				case 5:
					ret = fwd_reply_metrics(d, 1, m, 2);
					break;
				}
				stub_render("/fwd/x", ret, d, out, sizeof(out));
				if (ret < 0)
					assert_string_equal(out, "{\"/fwd/x\":null}");
				else
					assert_int_equal(stub_stats.failed_calls, 0);
				if (stub_stats.live != 0)
					fail_msg("builder %d leaked %d containers (fail %s at %d)",
						builder, stub_stats.live, mode ? "add" : "alloc",
						k);
			}
		}
	}
}

static void
parse_id_strict(void **state)
{
	unsigned long id = 12345;

	(void)state;
	assert_int_equal(fwd_parse_id("0", 63, &id), 0);
	assert_int_equal(id, 0);
	assert_int_equal(fwd_parse_id("63", 63, &id), 0);
	assert_int_equal(id, 63);
	assert_int_equal(fwd_parse_id("007", 63, &id), 0);
	assert_int_equal(id, 7);
	id = 999;
	assert_int_equal(fwd_parse_id(NULL, 63, &id), -EINVAL);
	assert_int_equal(fwd_parse_id("", 63, &id), -EINVAL);
	assert_int_equal(fwd_parse_id(" 1", 63, &id), -EINVAL);
	assert_int_equal(fwd_parse_id("1 ", 63, &id), -EINVAL);
	assert_int_equal(fwd_parse_id("+1", 63, &id), -EINVAL);
	assert_int_equal(fwd_parse_id("-1", 63, &id), -EINVAL);
	assert_int_equal(fwd_parse_id("1x", 63, &id), -EINVAL);
	assert_int_equal(fwd_parse_id("0x1", 63, &id), -EINVAL);
	assert_int_equal(fwd_parse_id("1,2", 63, &id), -EINVAL);
	assert_int_equal(fwd_parse_id("64", 63, &id), -ERANGE);
	assert_int_equal(fwd_parse_id("99999999999999999999999", 63, &id), -ERANGE);
	assert_int_equal(id, 999); /* untouched on failure */
}

static void
idlist_forms(void **state)
{
	char buf[128];
	uint16_t a[] = {8, 0, 1, 2, 3};
	uint16_t b[] = {0, 1};
	uint16_t c[] = {5};
	uint16_t d[] = {0, 2, 3, 4, 9, 10};

	(void)state;
	assert_int_equal(fwd_format_idlist(a, 5, buf, sizeof(buf)), 5);
	assert_string_equal(buf, "0-3,8");
	fwd_format_idlist(b, 2, buf, sizeof(buf));
	assert_string_equal(buf, "0-1");
	fwd_format_idlist(c, 1, buf, sizeof(buf));
	assert_string_equal(buf, "5");
	fwd_format_idlist(d, 6, buf, sizeof(buf));
	assert_string_equal(buf, "0,2-4,9-10");
	assert_int_equal(fwd_format_idlist(NULL, 0, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");
	assert_int_equal(fwd_format_idlist(a, 5, buf, 5), -E2BIG);
	assert_int_equal(fwd_format_idlist(a, 5, buf, 6), 5);
}

static void
key_names(void **state)
{
	char long_name[129];

	(void)state;
	assert_true(fwd_tel_key_valid("rx_packets"));
	assert_true(fwd_tel_key_valid("a/B_9"));
	assert_false(fwd_tel_key_valid(""));
	assert_false(fwd_tel_key_valid(NULL));
	assert_false(fwd_tel_key_valid("rx-packets"));
	assert_false(fwd_tel_key_valid("rx.packets"));
	assert_false(fwd_tel_key_valid("rx packets"));
	memset(long_name, 'a', 128);
	long_name[128] = '\0';
	assert_false(fwd_tel_key_valid(long_name));
	long_name[127] = '\0';
	assert_true(fwd_tel_key_valid(long_name));
}

static void
classify_states(void **state)
{
	(void)state;
	/* exited wins over everything */
	assert_int_equal(
		fwd_lcore_classify(FWD_LCORE_RUNNING, true, true, true, false), FWD_LCORE_EXITED);
	assert_int_equal(
		fwd_lcore_classify(FWD_LCORE_STALLED, true, false, false, true), FWD_LCORE_EXITED);
	/* advanced: running or idle, whatever came before */
	assert_int_equal(fwd_lcore_classify(FWD_LCORE_STARTING, false, true, true, false),
		FWD_LCORE_RUNNING);
	assert_int_equal(
		fwd_lcore_classify(FWD_LCORE_RUNNING, false, true, false, false), FWD_LCORE_IDLE);
	assert_int_equal(
		fwd_lcore_classify(FWD_LCORE_STALLED, false, true, true, false), FWD_LCORE_RUNNING);
	/* not advanced and late: stalled */
	assert_int_equal(fwd_lcore_classify(FWD_LCORE_RUNNING, false, false, false, true),
		FWD_LCORE_STALLED);
	assert_int_equal(fwd_lcore_classify(FWD_LCORE_STARTING, false, false, false, true),
		FWD_LCORE_STALLED);
	/* not advanced, not late (between two loops, asleep): unchanged */
	assert_int_equal(
		fwd_lcore_classify(FWD_LCORE_IDLE, false, false, false, false), FWD_LCORE_IDLE);
	assert_int_equal(fwd_lcore_classify(FWD_LCORE_STARTING, false, false, false, false),
		FWD_LCORE_STARTING);
	assert_string_equal(fwd_lcore_state_name(FWD_LCORE_STARTING), "STARTING");
	assert_string_equal(fwd_lcore_state_name(FWD_LCORE_RUNNING), "RUNNING");
	assert_string_equal(fwd_lcore_state_name(FWD_LCORE_IDLE), "IDLE");
	assert_string_equal(fwd_lcore_state_name(FWD_LCORE_STALLED), "STALLED");
	assert_string_equal(fwd_lcore_state_name(FWD_LCORE_EXITED), "EXITED");
	assert_string_equal(fwd_lcore_state_name(5), "UNKNOWN");
}

static void
link_words(void **state)
{
	uint64_t up = fwd_link_word(true, 25000, false);
	uint64_t down = fwd_link_word(false, 25000, true);

	(void)state;
	assert_true(fwd_link_up(up));
	assert_int_equal(fwd_link_speed(up), 25000);
	assert_string_equal(fwd_link_status_name(up), "UP");
	assert_string_equal(fwd_link_duplex_name(up), "half-duplex");
	assert_false(fwd_link_up(down));
	assert_int_equal(fwd_link_speed(down), 0);
	assert_string_equal(fwd_link_status_name(down), "DOWN");
	assert_string_equal(fwd_link_duplex_name(down), "unknown");
	assert_int_equal(fwd_link_speed(fwd_link_word(true, UINT32_MAX, true)), UINT32_MAX);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(lcores_64_at_max),
		cmocka_unit_test(lcores_few_with_many_ports),
		cmocka_unit_test(lcores_empty),
		cmocka_unit_test(lcores_too_many),
		cmocka_unit_test(lcore_one),
		cmocka_unit_test(ports_64_at_max),
		cmocka_unit_test(ports_down_reads_zero_speed),
		cmocka_unit_test(port_one),
		cmocka_unit_test(info_64),
		cmocka_unit_test(metrics_ours_at_max),
		cmocka_unit_test(metrics_skips_bad_names),
		cmocka_unit_test(metrics_overflow_is_flagged),
		cmocka_unit_test(metrics_count_overflow_is_flagged),
		cmocka_unit_test(failures_leak_nothing),
		cmocka_unit_test(parse_id_strict),
		cmocka_unit_test(idlist_forms),
		cmocka_unit_test(key_names),
		cmocka_unit_test(classify_states),
		cmocka_unit_test(link_words),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
