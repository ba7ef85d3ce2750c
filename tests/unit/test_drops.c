/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Drop attribution (plugins/stats/drops.h) with plain structs: each kind of row of
 * plugins/stats/drops.tsv (part, extra, none, loss, includes, id), the driver a port is taken for,
 * and that the values never go back nor count a packet twice. The built-in table (compiled from
 * drops.tsv) with xstats replies shaped as the drivers send them: rx_missed cannot be produced by a
 * virtual device here, so its rows (ixgbe's per-priority split, mlx5's extra port discards)
 * are proven this way and by the rule tests (grafana/prometheus/tests/drops.test.yml).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "stats/drops.h"

static const struct drops_row rows[] = {
	{"net_a", "a_buffer_full", DROPS_RX_MISSED, DROPS_PART, false},
	{"net_a", "a_prio<N>_missed", DROPS_RX_MISSED, DROPS_PART, false},
	{"net_a", "a_phy_discards", DROPS_RX_MISSED, DROPS_EXTRA, false},
	{"net_a", "rx_q<N>_dropped", DROPS_RX_ERRORS, DROPS_EXTRA, true},
	{"net_a", "rx_mbuf_allocation_errors", DROPS_RX_NOMBUF, DROPS_NONE, false},
	{"net_b", "b_only", DROPS_NO_REASON, DROPS_ID, false},
	{"net_b", "tx_errors", DROPS_TX_FULL, DROPS_INCLUDES, false},
};
static const struct drops_table table = {rows, sizeof(rows) / sizeof(rows[0])};

/* What drops_result() gave, by type instance. */
struct seen {
	size_t n;
	char ti[32][64];
	uint64_t v[32];
};

static void
record(void *ctx, const char *ti, uint64_t v)
{
	struct seen *s = ctx;

	assert_true(s->n < 32);
	snprintf(s->ti[s->n], sizeof(s->ti[0]), "%s", ti);
	s->v[s->n++] = v;
}

static bool
has(const struct seen *s, const char *ti, uint64_t *v)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->ti[i], ti) == 0) {
			if (v != NULL)
				*v = s->v[i];
			return true;
		}
	return false;
}

static uint64_t
value(const struct seen *s, const char *ti)
{
	uint64_t v = 0;

	if (!has(s, ti, &v))
		fail_msg("no %s among the %zu values", ti, s->n);
	return v;
}

static uint64_t
total(const struct seen *s)
{
	uint64_t t = 0;

	for (size_t i = 0; i < s->n; i++)
		t += s->v[i];
	return t;
}

/* An xstats reply: ethdev's eight basic counters first, then the driver's (name, value). */
static struct dtel_xstats
reply(uint64_t missed, uint64_t nombuf, uint64_t ierrors, uint64_t oerrors, size_t n,
	const char *const *names, const uint64_t *values)
{
	static const char *const basic[] = {"rx_good_packets", "tx_good_packets", "rx_good_bytes",
		"tx_good_bytes", "rx_missed_errors", "rx_errors", "tx_errors",
		"rx_mbuf_allocation_errors"};
	struct dtel_xstats x = {.n = 8 + n};
	uint64_t bv[] = {1000, 1000, 64000, 64000, missed, ierrors, oerrors, nombuf};

	x.v = calloc(x.n, sizeof(*x.v));
	assert_non_null(x.v);
	for (size_t i = 0; i < 8; i++) {
		snprintf(x.v[i].name, sizeof(x.v[i].name), "%s", basic[i]);
		x.v[i].value = bv[i];
	}
	for (size_t i = 0; i < n; i++) {
		snprintf(x.v[8 + i].name, sizeof(x.v[8 + i].name), "%s", names[i]);
		x.v[8 + i].value = values[i];
	}
	return x;
}

static struct seen
read_once(
	struct drops_port *p, const struct drops_table *t, const char *driver, struct dtel_xstats x)
{
	struct seen s = {0};

	assert_int_equal(drops_take_xstats(p, t, driver, &x, drops_names_hash(&x)), 0);
	dtel_xstats_clear(&x);
	drops_result(p, record, &s);
	return s;
}

static const char *const a_names[] = {"a_buffer_full", "a_prio0_missed", "a_prio7_missed",
	"a_phy_discards", "rx_q0_dropped", "rx_q3_dropped", "a_unrelated"};

static void
name_patterns(void **state)
{
	(void)state;
	assert_true(drops_name_matches("rx_q<N>_errors", "rx_q0_errors"));
	assert_true(drops_name_matches("rx_q<N>_errors", "rx_q127_errors"));
	assert_false(drops_name_matches("rx_q<N>_errors", "rx_q_errors"));
	assert_false(drops_name_matches("rx_q<N>_errors", "rx_qx_errors"));
	assert_false(drops_name_matches("rx_q<N>_errors", "rx_q0_errors_total"));
	assert_true(drops_name_matches("tx_errors", "tx_errors"));
	assert_false(drops_name_matches("tx_errors", "tx_errors2"));
}

/* Parts split the generic counter (never added), extras add, a none reason is left out;
 * the sum of the values is every lost packet once. */
static void
parts_split_extras_add(void **state)
{
	struct drops_port p = {0};
	/* imissed 100 of which 30 buffer full and 10 + 5 by priority; 7 more dropped at the
	 * phy; ierrors 2; per-queue drops 4 + 1 in no generic counter; 50 failed allocations
	 * that lost nothing. */
	const uint64_t v[] = {30, 10, 5, 7, 4, 1, 999};
	struct seen s;

	(void)state;
	s = read_once(&p, &table, "vfio-pci", reply(100, 50, 2, 0, 7, a_names, v));
	assert_int_equal(p.driver, 0); /* by its names: net_a */
	assert_int_equal(value(&s, "rx_missed"), 55);
	assert_int_equal(value(&s, "rx_missed.a_buffer_full"), 30);
	assert_int_equal(value(&s, "rx_missed.a_prio0_missed"), 10);
	assert_int_equal(value(&s, "rx_missed.a_prio7_missed"), 5);
	assert_int_equal(value(&s, "rx_missed.a_phy_discards"), 7);
	assert_int_equal(value(&s, "rx_errors"), 2);
	assert_int_equal(value(&s, "rx_errors.rx_q0_dropped"), 4);
	assert_int_equal(value(&s, "rx_errors.rx_q3_dropped"), 1);
	assert_int_equal(value(&s, "tx_errors"), 0);
	assert_false(has(&s, "rx_nombuf", NULL)); /* none: allocation attempts, not losses */
	assert_false(has(&s, "tx_full", NULL)); /* the application counts none */
	assert_false(has(&s, "rx_missed.a_unrelated", NULL));
	assert_int_equal(total(&s), 100 + 7 + 2 + 4 + 1);
	drops_free(&p);
}

/* The port_info driver decides before the names; an id row tells a driver by its names. */
static void
driver_by_name_then_by_xstats(void **state)
{
	static const char *const b_names[] = {"b_only"};
	static const char *const none[] = {"something_else"};
	const uint64_t v[] = {0};
	struct dtel_xstats x = reply(0, 0, 0, 0, 1, b_names, v);
	struct dtel_xstats y = reply(0, 0, 0, 0, 1, none, v);

	(void)state;
	assert_int_equal(drops_driver(&table, "net_a", &x), 0);
	assert_int_equal(drops_driver(&table, "", &x), 5);
	assert_int_equal(drops_driver(&table, NULL, &x), 5);
	assert_int_equal(drops_driver(&table, "mlx5_core", &y), -1);
	dtel_xstats_clear(&x);
	dtel_xstats_clear(&y);
}

/* A driver whose tx_errors also counts the packets its burst refused: the application's
 * count of those (tx_full) is taken out, so each is counted once; without the application's
 * count tx_errors stays whole. */
static void
includes_takes_tx_full_out(void **state)
{
	struct drops_port p = {0};
	struct seen s = {0};
	struct dtel_xstats x = reply(0, 3, 0, 40, 0, NULL, NULL);

	(void)state;
	assert_int_equal(drops_take_xstats(&p, &table, "net_b", &x, drops_names_hash(&x)), 0);
	drops_take_tx_full(&p, 25);
	drops_result(&p, record, &s);
	assert_int_equal(value(&s, "tx_full"), 25);
	assert_int_equal(value(&s, "tx_errors"), 15);
	assert_int_equal(value(&s, "rx_nombuf"), 3); /* net_b: no none row, a loss */
	assert_int_equal(total(&s), 40 + 3);
	/* A read without the application's count (its /fwd/port failed): tx_errors would jump
	 * by all of tx_full once and hold there; it is left out of that read instead. */
	s = (struct seen){0};
	x.v[6].value = 41;
	assert_int_equal(drops_take_xstats(&p, &table, "net_b", &x, drops_names_hash(&x)), 0);
	drops_result(&p, record, &s);
	assert_false(has(&s, "tx_errors", NULL));
	assert_false(has(&s, "tx_full", NULL));
	assert_int_equal(value(&s, "rx_nombuf"), 3);
	s = (struct seen){0};
	assert_int_equal(drops_take_xstats(&p, &table, "net_b", &x, drops_names_hash(&x)), 0);
	drops_take_tx_full(&p, 26);
	drops_result(&p, record, &s);
	assert_int_equal(value(&s, "tx_errors"), 15);
	assert_int_equal(value(&s, "tx_full"), 26);
	/* An application that never counts tx_full: tx_errors is all of oerrors. */
	drops_reset(&p);
	s = (struct seen){0};
	assert_int_equal(drops_take_xstats(&p, &table, "net_b", &x, drops_names_hash(&x)), 0);
	drops_result(&p, record, &s);
	assert_int_equal(value(&s, "tx_errors"), 41);
	dtel_xstats_clear(&x);
	drops_free(&p);
}

/* Parts read a moment after their generic counter can run ahead of it: the remainder holds
 * its last value instead of going back; a generic counter that goes back (stats reset) starts
 * the remainder again. */
static void
remainder_never_goes_back_until_a_reset(void **state)
{
	static const char *const names[] = {"a_buffer_full"};
	struct drops_port p = {0};
	uint64_t v[] = {60};
	struct seen s;

	(void)state;
	s = read_once(&p, &table, "net_a", reply(100, 0, 0, 0, 1, names, v));
	assert_int_equal(value(&s, "rx_missed"), 40);
	v[0] = 75; /* 15 more buffer drops, the generic counter read before them */
	s = read_once(&p, &table, "net_a", reply(110, 0, 0, 0, 1, names, v));
	assert_int_equal(value(&s, "rx_missed"), 40); /* not 35 */
	v[0] = 80;
	s = read_once(&p, &table, "net_a", reply(130, 0, 0, 0, 1, names, v));
	assert_int_equal(value(&s, "rx_missed"), 50);
	v[0] = 1;
	s = read_once(&p, &table, "net_a", reply(3, 0, 0, 0, 1, names, v)); /* reset */
	assert_int_equal(value(&s, "rx_missed"), 2);
	/* An application restart forgets everything. */
	drops_reset(&p);
	v[0] = 0;
	s = read_once(&p, &table, "net_a", reply(9, 0, 0, 0, 1, names, v));
	assert_int_equal(value(&s, "rx_missed"), 9);
	drops_free(&p);
}

/* The mapping is made once per set of names; new names (another queue) make a new one. */
static void
mapping_follows_the_names(void **state)
{
	static const char *const one[] = {"rx_q0_dropped"};
	static const char *const two[] = {"rx_q0_dropped", "rx_q1_dropped"};
	struct drops_port p = {0};
	const uint64_t v[] = {1, 2};
	struct seen s;

	(void)state;
	s = read_once(&p, &table, "net_a", reply(0, 0, 0, 0, 1, one, v));
	assert_int_equal(p.ndetails, 1);
	s = read_once(&p, &table, "net_a", reply(0, 0, 0, 0, 2, two, v));
	assert_int_equal(p.ndetails, 2);
	assert_int_equal(value(&s, "rx_errors.rx_q1_dropped"), 2);
	drops_free(&p);
}

/* XStats false: the generic counters of /ethdev/stats, and what the driver's rows say about
 * them (the driver from its port_info name alone). */
static void
from_stats_without_xstats(void **state)
{
	struct drops_port p = {0};
	struct dtel_port_stats st = {.imissed = 4, .rx_nombuf = 9, .ierrors = 1, .oerrors = 6};
	struct seen s = {0};

	(void)state;
	drops_take_stats(&p, &table, "net_a", &st);
	drops_result(&p, record, &s);
	assert_int_equal(value(&s, "rx_missed"), 4);
	assert_false(has(&s, "rx_nombuf", NULL));
	assert_int_equal(total(&s), 4 + 1 + 6);
	drops_free(&p);
}

/* Nothing from a read that brought no counters, nor from a reply whose values were not
 * counters (dtel_parse_xstats leaves those out: the misbehaving-server fault test); a reason
 * whose generic counter is missing is left out, the others go. */
static void
nothing_without_counters(void **state)
{
	static const char *const names[] = {"a_buffer_full"};
	const uint64_t v[] = {3};
	struct drops_port p = {0};
	struct seen s = {0};
	struct dtel_xstats x = reply(7, 0, 0, 0, 1, names, v);

	(void)state;
	drops_take_tx_full(&p, 5);
	drops_result(&p, record, &s);
	assert_int_equal(s.n, 0);
	/* Only the driver's counter: ethdev's eight went (they were not numbers). */
	memmove(x.v, x.v + 8, sizeof(*x.v));
	x.n = 1;
	assert_int_equal(drops_take_xstats(&p, &table, "net_a", &x, drops_names_hash(&x)), 0);
	drops_result(&p, record, &s);
	assert_int_equal(s.n, 0);
	/* rx_missed_errors alone is there. */
	dtel_xstats_clear(&x);
	x = reply(7, 0, 0, 0, 1, names, v);
	memmove(x.v + 1, x.v + 4, sizeof(*x.v)); /* rx_missed_errors second */
	memmove(x.v + 2, x.v + 8, sizeof(*x.v)); /* then a_buffer_full */
	x.n = 3;
	assert_int_equal(drops_take_xstats(&p, &table, "net_a", &x, drops_names_hash(&x)), 0);
	drops_result(&p, record, &s);
	assert_int_equal(s.n, 2);
	assert_int_equal(value(&s, "rx_missed"), 4);
	assert_int_equal(value(&s, "rx_missed.a_buffer_full"), 3);
	dtel_xstats_clear(&x);
	drops_free(&p);
}

/* ---- The built-in table (plugins/stats/drops.tsv) ---------------------------------------- */

/* ixgbe: imissed is the sum of the packet buffers' MPC, rx_priority<N>_dropped; per-queue
 * drops (QPRDC, rx_q<N>_errors) are in no generic counter; failed rearms are no losses. */
static void
builtin_ixgbe_rx_missed_by_priority(void **state)
{
	static const char *const names[] = {"rx_crc_errors", "rx_priority0_dropped",
		"rx_priority1_dropped", "rx_priority0_mbuf_allocation_errors", "rx_q0_errors"};
	const uint64_t v[] = {2, 700, 300, 0, 9};
	struct drops_port p = {0};
	struct seen s;

	(void)state;
	s = read_once(&p, &drops_builtin, "vfio-pci", reply(1000, 64, 2, 0, 5, names, v));
	assert_string_equal(drops_builtin.rows[p.driver].driver, "net_ixgbe");
	assert_int_equal(value(&s, "rx_missed.rx_priority0_dropped"), 700);
	assert_int_equal(value(&s, "rx_missed.rx_priority1_dropped"), 300);
	assert_int_equal(value(&s, "rx_missed"), 0);
	assert_int_equal(value(&s, "rx_missed.rx_q0_errors"), 9);
	assert_int_equal(value(&s, "rx_errors.rx_crc_errors"), 2);
	assert_int_equal(value(&s, "rx_errors"), 0);
	assert_false(has(&s, "rx_nombuf", NULL));
	assert_int_equal(total(&s), 1000 + 9 + 2);
	drops_free(&p);
}

/* mlx5: rx_out_of_buffer is imissed itself; the physical port's discards come on top. */
static void
builtin_mlx5_phy_discards_add(void **state)
{
	static const char *const names[] = {"rx_out_of_buffer", "rx_phy_discard_packets",
		"tx_phy_discard_packets", "rx_phy_packets"};
	const uint64_t v[] = {120, 30, 4, 5000};
	struct drops_port p = {0};
	struct seen s;

	(void)state;
	s = read_once(&p, &drops_builtin, "mlx5_core", reply(120, 7, 0, 1, 4, names, v));
	assert_string_equal(drops_builtin.rows[p.driver].driver, "mlx5");
	assert_int_equal(value(&s, "rx_missed.rx_out_of_buffer"), 120);
	assert_int_equal(value(&s, "rx_missed"), 0);
	assert_int_equal(value(&s, "rx_missed.rx_phy_discard_packets"), 30);
	assert_int_equal(value(&s, "tx_errors.tx_phy_discard_packets"), 4);
	assert_int_equal(value(&s, "tx_errors"), 1);
	assert_false(has(&s, "rx_nombuf", NULL));
	assert_int_equal(total(&s), 120 + 30 + 4 + 1);
	drops_free(&p);
}

/* net_tap: each rx_nombuf is a frame lost (what the live test counts against testpmd), and
 * its tx_errors holds what the application counted as tx_full. */
static void
builtin_tap(void **state)
{
	struct drops_port p = {0};
	struct seen s = {0};
	struct dtel_xstats x = reply(0, 17, 0, 12, 0, NULL, NULL);

	(void)state;
	assert_int_equal(
		drops_take_xstats(&p, &drops_builtin, "net_tap", &x, drops_names_hash(&x)), 0);
	drops_take_tx_full(&p, 12);
	drops_result(&p, record, &s);
	assert_int_equal(value(&s, "rx_nombuf"), 17);
	assert_int_equal(value(&s, "tx_full"), 12);
	assert_int_equal(value(&s, "tx_errors"), 0);
	assert_int_equal(value(&s, "rx_missed"), 0);
	assert_int_equal(total(&s), 17 + 12);
	dtel_xstats_clear(&x);
	drops_free(&p);
}

/* A driver not in the table: the generic counters as they are, each a reason. */
static void
builtin_unknown_driver(void **state)
{
	struct drops_port p = {0};
	struct seen s;

	(void)state;
	s = read_once(&p, &drops_builtin, "net_null", reply(1, 2, 3, 4, 0, NULL, NULL));
	assert_int_equal(p.driver, -1);
	assert_int_equal(s.n, 4);
	assert_int_equal(total(&s), 10);
	drops_free(&p);
}

/* A recorded reply from a file of tests/data, parsed. */
static struct dtel_xstats
recorded(const char *name)
{
	const char *dir = getenv("DTEL_TEST_DATA");
	struct dtel_reply r = {0};
	struct dtel_xstats x;
	char path[512];
	long n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir != NULL ? dir : "tests/data", name);
	f = fopen(path, "rb");
	if (f == NULL)
		fail_msg("cannot read %s (DTEL_TEST_DATA)", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	r.json = calloc(1, (size_t)n + 1);
	assert_non_null(r.json);
	assert_int_equal(fread(r.json, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	while (n > 0 && (r.json[n - 1] == '\n' || r.json[n - 1] == ' '))
		r.json[--n] = '\0';
	r.len = (size_t)n;
	assert_int_equal(dtel_parse_xstats(&r, &x), 0);
	free(r.json);
	return x;
}

/*
 * net_null as testpmd has it (tests/data/dpdk-22.11/ethdev_xstats-0.json): ethdev's generic and
 * per-queue counters only. It is of no driver of the table, whether its name says net_null or
 * it is a PCI port with these names: no ixgbe rows (ethdev's rx_q<N>_errors is every driver's),
 * so rx_nombuf is there and no rx_missed.rx_q<N>_errors. Failed before: classed net_ixgbe.
 */
static void
builtin_generic_queues_are_no_driver(void **state)
{
	static const char *const drivers[] = {"net_null", "vfio-pci", "", "net_af_packet"};

	(void)state;
	for (size_t i = 0; i < sizeof(drivers) / sizeof(drivers[0]); i++) {
		struct drops_port p = {0};
		struct seen s = read_once(&p, &drops_builtin, drivers[i],
			recorded("dpdk-22.11/ethdev_xstats-0.json"));

		if (p.driver != -1)
			fail_msg("driver '%s': taken for %s", drivers[i],
				drops_builtin.rows[p.driver].driver);
		assert_true(has(&s, "rx_nombuf", NULL));
		assert_true(has(&s, "rx_missed", NULL));
		assert_false(has(&s, "rx_missed.rx_q0_errors", NULL));
		assert_int_equal(s.n, 4);
		drops_free(&p);
	}
}

/* A DPDK driver the table does not have is of none, even with a name a listed driver has
 * (net_igc's rx_crc_errors is i40e's too): its generic counters as they are. */
static void
unlisted_pmd_takes_no_rows_by_name(void **state)
{
	static const char *const names[] = {"rx_crc_errors", "rx_length_errors"};
	const uint64_t v[] = {3, 4};
	struct dtel_xstats x = reply(0, 0, 7, 0, 2, names, v);

	(void)state;
	assert_int_equal(drops_driver(&drops_builtin, "net_igc", &x), -1);
	assert_true(drops_driver(&drops_builtin, "vfio-pci", &x) >= 0); /* a PCI port: by names */
	dtel_xstats_clear(&x);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(name_patterns),
		cmocka_unit_test(parts_split_extras_add),
		cmocka_unit_test(driver_by_name_then_by_xstats),
		cmocka_unit_test(includes_takes_tx_full_out),
		cmocka_unit_test(remainder_never_goes_back_until_a_reset),
		cmocka_unit_test(mapping_follows_the_names),
		cmocka_unit_test(from_stats_without_xstats),
		cmocka_unit_test(nothing_without_counters),
		cmocka_unit_test(builtin_ixgbe_rx_missed_by_priority),
		cmocka_unit_test(builtin_mlx5_phy_discards_add),
		cmocka_unit_test(builtin_tap),
		cmocka_unit_test(builtin_unknown_driver),
		cmocka_unit_test(builtin_generic_queues_are_no_driver),
		cmocka_unit_test(unlisted_pmd_takes_no_rows_by_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
