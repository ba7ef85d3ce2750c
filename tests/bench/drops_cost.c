/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * drops_cost: what drop attribution (plugins/stats/drops.c) adds to dpdktel_stats' read of a port,
 * against what the read costs anyway: parsing the port's /ethdev/xstats reply.
 *
 * Replies: a net_tap port with 4 queues (28 counters, tests/data/dpdk-22.11), and an
 * ixgbe-like port of 256 counters (the most a reply has: DPDK's dict limit) whose driver
 * counters refine its reasons. For each: dtel_parse_xstats() of the reply; drops_take_xstats()
 * + drops_result() when the names are those of the last read (the mapping is cached: every
 * read but the first), with the names' hash given (dpdktel_stats hashes them once for the
 * XStats kinds and Drops) and with it computed; the same with a new mapping each time (the
 * first read of a port, and after its names change). Nanoseconds per port and read, the
 * median of 9 rounds of 20000 calls; prints a table, asserts nothing.
 *
 *   meson test -C build --benchmark --verbose drops_cost
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stats/drops.h"

#define ROUNDS 9
#define CALLS 20000

static double
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int
cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void
sink(void *ctx, const char *ti, uint64_t v)
{
	(void)ti;
	*(uint64_t *)ctx += v;
}

static char *
slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (f == NULL)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0) {
		buf = malloc((size_t)n + 1);
		if (buf != NULL && fread(buf, 1, (size_t)n, f) == (size_t)n) {
			buf[n] = '\0';
			*len = (size_t)n;
		} else {
			free(buf);
			buf = NULL;
		}
	}
	fclose(f);
	return buf;
}

/* 256 counters: ethdev's 8, 4 queues' 20, then ixgbe's own names (drops.tsv), then filler. */
static char *
ixgbe_reply(size_t *len)
{
	static const char *const own[] = {"rx_crc_errors", "rx_mac_short_packet_dropped",
		"rx_length_errors", "rx_undersize_errors", "rx_oversize_errors",
		"rx_illegal_byte_errors", "rx_error_bytes", "rx_fragment_errors",
		"rx_fcoe_crc_errors", "rx_fcoe_mbuf_allocation_errors"};
	size_t cap = 16384, n = 0;
	char *s = malloc(cap);
	int entries = 0;

	if (s == NULL)
		return NULL;
	n += (size_t)snprintf(s + n, cap - n,
		"{\"/ethdev/xstats\":{\"rx_good_packets\":1,\"tx_good_packets\":2,"
		"\"rx_good_bytes\":3,\"tx_good_bytes\":4,\"rx_missed_errors\":1000,"
		"\"rx_errors\":20,\"tx_errors\":0,\"rx_mbuf_allocation_errors\":64");
	entries = 8;
	for (int q = 0; q < 4; q++, entries += 3)
		n += (size_t)snprintf(s + n, cap - n,
			",\"rx_q%d_packets\":1,\"rx_q%d_bytes\":2,\"rx_q%d_errors\":3", q, q, q);
	for (int q = 0; q < 4; q++, entries += 2)
		n += (size_t)snprintf(
			s + n, cap - n, ",\"tx_q%d_packets\":1,\"tx_q%d_bytes\":2", q, q);
	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++, entries++)
		n += (size_t)snprintf(s + n, cap - n, ",\"%s\":2", own[i]);
	for (int p = 0; p < 8; p++, entries += 2)
		n += (size_t)snprintf(s + n, cap - n,
			",\"rx_priority%d_dropped\":125,\"rx_priority%d_mbuf_allocation_errors\":0",
			p, p);
	for (int i = 0; entries < 256; i++, entries++)
		n += (size_t)snprintf(s + n, cap - n, ",\"x_counter_%d\":%d", i, i);
	snprintf(s + n, cap - n, "}}");
	*len = strlen(s);
	return s;
}

/* Median ns per call of one kind for @json. */
static double
measure(const char *json, size_t len, int kind)
{
	double t[ROUNDS];
	struct dtel_xstats x;
	struct drops_port p = {0};
	uint64_t total = 0, h;

	if (dtel_parse_xstats(&(struct dtel_reply){.json = (char *)json, .len = len}, &x) < 0)
		return -1;
	h = drops_names_hash(&x);
	for (int r = 0; r < ROUNDS; r++) {
		double t0 = now_ns();

		for (int i = 0; i < CALLS; i++) {
			if (kind == 0) {
				struct dtel_xstats y;

				if (dtel_parse_xstats(
					    &(struct dtel_reply){.json = (char *)json, .len = len},
					    &y) == 0)
					total += y.n;
				dtel_xstats_clear(&y);
				continue;
			}
			if (kind == 3)
				p.mapped = false;
			if (kind >= 2)
				h = drops_names_hash(&x);
			if (drops_take_xstats(&p, &drops_builtin, "vfio-pci", &x, h) == 0)
				drops_result(&p, sink, &total);
		}
		t[r] = (now_ns() - t0) / CALLS;
	}
	dtel_xstats_clear(&x);
	drops_free(&p);
	qsort(t, ROUNDS, sizeof(t[0]), cmp);
	if (total == 42)
		printf("(keep)\n");
	return t[ROUNDS / 2];
}

int
main(void)
{
	const char *data = getenv("DTEL_TEST_DATA");
	char path[4096];
	struct {
		const char *name;
		char *json;
		size_t len;
	} replies[2];

	snprintf(
		path, sizeof(path), "%s/dpdk-22.11/tap_xstats-4q.json", data ? data : "tests/data");
	replies[0].name = "net_tap, 4 queues (28 counters)";
	replies[0].json = slurp(path, &replies[0].len);
	replies[1].name = "ixgbe-like (256 counters)";
	replies[1].json = ixgbe_reply(&replies[1].len);
	if (replies[0].json == NULL || replies[1].json == NULL) {
		fprintf(stderr, "drops_cost: cannot read %s\n", path);
		return 1;
	}
	printf("| reply | parse the xstats reply | drops, names as last read, hash given | "
	       "... hash computed | drops, new mapping |\n");
	printf("| --- | ---: | ---: | ---: | ---: |\n");
	for (int i = 0; i < 2; i++)
		printf("| %s | %.0f ns | %.0f ns | %.0f ns | %.0f ns |\n", replies[i].name,
			measure(replies[i].json, replies[i].len, 0),
			measure(replies[i].json, replies[i].len, 1),
			measure(replies[i].json, replies[i].len, 2),
			measure(replies[i].json, replies[i].len, 3));
	free(replies[0].json);
	free(replies[1].json);
	return 0;
}
