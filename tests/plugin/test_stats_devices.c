/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdktel_stats' device classes (plugins/stats/devices.c) against the fake collectd daemon
 * and a fake application that answers with replies recorded from DPDK 22.11 processes
 * (tests/data/dpdk-22.11: testpmd with --vdev crypto_null0, dma_skeleton0, event_sw0,
 * rawdev_skeleton0; dpdk-test-crypto-perf on crypto_null; dpdk-test-eventdev perf_queue on
 * event_sw): exact identifiers and values, requests per read, patterns, cut and null replies.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/dtp.h"
#include "fake_app.h"
#include "test_util.h"

void module_register(void);

/* A simulated application: which replies the fake gives. */
struct app {
	bool no_classes; /* its command list has no device class (DPDK built without them) */
	bool no_cryptodev; /* /cryptodev/list null: the library is there, no device */
	bool no_eventdev; /* /eventdev/dev_list null, likewise (recorded from crypto-perf) */
	int dma_vchans; /* nb_vchans of dmadev 0 (0: not configured, as in testpmd) */
	bool cut_crypto; /* /cryptodev/stats cut in the middle of its JSON */
	bool huge_crypto; /* enqueued_count above INT64_MAX */
	bool full_raw; /* /rawdev/xstats with 256 entries, the most a DPDK dict holds */
};

/* Requests per command name (without parameters); one thread per connection: atomics. */
#define NCMDS 16
static const char *const cmds[NCMDS] = {"/", "/cryptodev/list", "/cryptodev/stats", "/dmadev/list",
	"/dmadev/info", "/dmadev/stats", "/eventdev/dev_list", "/eventdev/port_list",
	"/eventdev/queue_list", "/eventdev/dev_xstats", "/eventdev/port_xstats",
	"/eventdev/queue_xstats", "/rawdev/list", "/rawdev/xstats"};
static unsigned int asked[NCMDS];

static unsigned int
nasked(const char *cmd)
{
	for (int i = 0; i < NCMDS && cmds[i] != NULL; i++)
		if (strcmp(cmds[i], cmd) == 0)
			return __atomic_load_n(&asked[i], __ATOMIC_RELAXED);
	fail_msg("no counter for %s", cmd);
	return 0;
}

/* A dict of 256 entries: DPDK stops adding entries there (lib/telemetry/telemetry_data.c
 * rte_tel_data_add_dict_uint: RTE_TEL_MAX_DICT_ENTRIES), so more may have been cut. */
static char *
raw_full(void)
{
	char *buf = malloc(16384), *p = buf;

	p += sprintf(p, "{\"/rawdev/xstats\":{");
	for (int i = 0; i < 256; i++)
		p += sprintf(p, "%s\"x%d\":%d", i ? "," : "", i, i);
	sprintf(p, "}}");
	return buf;
}

/*
 * The replies of DPDK 22.11 (recorded; shapes from lib/cryptodev/rte_cryptodev.c
 * cryptodev_handle_dev_list, cryptodev_handle_dev_stats; lib/dmadev/rte_dmadev.c
 * dmadev_handle_dev_list, dmadev_handle_dev_info, dmadev_handle_dev_stats;
 * lib/eventdev/rte_eventdev.c handle_dev_list, handle_port_list, handle_queue_list,
 * handle_dev_xstats, handle_port_xstats, handle_queue_xstats; lib/rawdev/rte_rawdev.c
 * handle_dev_list, handle_dev_xstats). A command that fails answers null
 * (lib/telemetry/telemetry.c perform_command): /cryptodev/list without a cryptodev,
 * /dmadev/stats of a vchan the device does not have, /rawdev/xstats of a driver without
 * xstats (rawdev_skeleton).
 */
static void
app_handler(
	struct fake_server *fs, unsigned int conn, const char *req, struct fake_reply *o, void *arg)
{
	const struct app *a = arg;
	const char *comma = strchr(req, ',');
	unsigned int id = comma ? (unsigned int)strtoul(comma + 1, NULL, 10) : 0;
	const char *comma2 = comma ? strchr(comma + 1, ',') : NULL;
	unsigned int sub = comma2 ? (unsigned int)strtoul(comma2 + 1, NULL, 10) : 0;
	size_t n = comma ? (size_t)(comma - req) : strlen(req);

	(void)fs, (void)conn;
	for (int i = 0; i < NCMDS && cmds[i] != NULL; i++)
		if (strlen(cmds[i]) == n && strncmp(req, cmds[i], n) == 0)
			__atomic_add_fetch(&asked[i], 1, __ATOMIC_RELAXED);
#define IS(c) (n == strlen(c) && strncmp(req, c, n) == 0)
	if (IS("/") && a->no_classes)
		o->data =
			fs_printf("{\"/\":[\"/\",\"/ethdev/list\",\"/ethdev/stats\","
				  "\"/ethdev/xstats\",\"/ethdev/info\",\"/ethdev/link_status\"]}");
	else if (IS("/"))
		o->data = fs_golden("dpdk-22.11/root.json", &o->len);
	else if (IS("/ethdev/list"))
		o->data = fs_printf("{\"/ethdev/list\":[]}");
	else if (IS("/cryptodev/list") && !a->no_cryptodev)
		o->data = fs_printf("{\"/cryptodev/list\":[0]}");
	else if (IS("/cryptodev/stats") && id == 0 && a->cut_crypto)
		o->data = fs_printf("{\"/cryptodev/stats\":{\"enqueued_count\":3205");
	else if (IS("/cryptodev/stats") && id == 0 && a->huge_crypto)
		o->data =
			fs_printf("{\"/cryptodev/stats\":{\"enqueued_count\":18446744073709551615,"
				  "\"dequeued_count\":1,\"enqueue_err_count\":0,"
				  "\"dequeue_err_count\":0}}");
	else if (IS("/cryptodev/stats") && id == 0)
		o->data = fs_golden("dpdk-22.11/cryptodev_stats-0.json", &o->len);
	else if (IS("/dmadev/list"))
		o->data = fs_golden("dpdk-22.11/dmadev_list.json", &o->len);
	else if (IS("/dmadev/info") && id == 0 && a->dma_vchans == 0)
		o->data = fs_golden("dpdk-22.11/dmadev_info-0.json", &o->len);
	else if (IS("/dmadev/info") && id == 0)
		o->data =
			fs_printf("{\"/dmadev/info\":{\"name\":\"dma_skeleton0\",\"nb_vchans\":%d,"
				  "\"numa_node\":-1,\"max_vchans\":%d}}",
				a->dma_vchans, a->dma_vchans);
	else if (IS("/dmadev/stats") && id == 0 && comma2 != NULL && (int)sub < a->dma_vchans)
		o->data = fs_printf("{\"/dmadev/stats\":{\"submitted\":%u,\"completed\":%u,"
				    "\"errors\":%u}}",
			100 + sub, 90 + sub, sub);
	else if (IS("/eventdev/dev_list") && a->no_eventdev)
		o->data = fs_golden("dpdk-22.11/eventdev_dev_list-none.json", &o->len);
	else if (IS("/eventdev/dev_list"))
		o->data = fs_golden("dpdk-22.11/sw_eventdev_dev_list.json", &o->len);
	else if (IS("/eventdev/port_list") && id == 0)
		o->data = fs_golden("dpdk-22.11/sw_eventdev_port_list-0.json", &o->len);
	else if (IS("/eventdev/queue_list") && id == 0)
		o->data = fs_golden("dpdk-22.11/sw_eventdev_queue_list-0.json", &o->len);
	else if (IS("/eventdev/dev_xstats") && id == 0)
		o->data = fs_golden("dpdk-22.11/sw_eventdev_dev_xstats-0.json", &o->len);
	else if (IS("/eventdev/port_xstats") && id == 0 && sub == 1)
		o->data = fs_golden("dpdk-22.11/sw_eventdev_port_xstats-0-1.json", &o->len);
	else if (IS("/eventdev/port_xstats") && id == 0 && sub == 0)
		o->data = fs_printf("{\"/eventdev/port_xstats\":{\"port_0_rx\":0,"
				    "\"port_0_tx\":3696,\"port_0_drop\":0}}");
	else if (IS("/eventdev/queue_xstats") && id == 0 && sub == 0)
		o->data = fs_golden("dpdk-22.11/sw_eventdev_queue_xstats-0-0.json", &o->len);
	else if (IS("/rawdev/list"))
		o->data = fs_printf("{\"/rawdev/list\":[0]}");
	else if (IS("/rawdev/xstats") && id == 0 && a->full_raw)
		o->data = raw_full();
	else if (IS("/rawdev/xstats") && id == 0)
		o->data = fs_golden("dpdk-22.11/rawdev_xstats-0.json", &o->len);
	else
		o->data = fs_printf("{\"%.*s\":null}", (int)n, req);
	if (o->data != NULL && o->len == 0)
		o->len = strlen(o->data);
#undef IS
}

/* The application the fake serves in this test (fake_app.h): the handler reads it. */
static struct app the_app;

static void
start_app(const struct app *a, long pid)
{
	the_app = *a;
	fa_start(app_handler, &the_app, pid, NULL);
}

static int
setup(void **state)
{
	(void)state;
	memset(&the_app, 0, sizeof(the_app));
	memset(asked, 0, sizeof(asked));
	return fa_setup("plugdev", module_register);
}

static int
teardown(void **state)
{
	(void)state;
	return fa_teardown();
}

static int
configure(const char *opts)
{
	return fa_configure("dpdktel_stats", NULL, opts, "MemoryStats false\n");
}

/* The DERIVE @type-@ti of the application, one value. */
static const struct fc_value *
must_find(const char *type, const char *ti)
{
	const struct fc_value *v = fa_must_find(PI, type, ti);

	assert_int_equal(v->n, 1);
	assert_int_equal(v->ds_type[0], DS_TYPE_DERIVE);
	return v;
}

static double
must_gauge(const char *ti)
{
	const struct fc_value *v = fc_find(PI, "eventdev_gauge", ti);

	if (v == NULL)
		fail_msg("no value %s/eventdev_gauge-%s", PI, ti);
	assert_int_equal(v->n, 1);
	assert_int_equal(v->ds_type[0], DS_TYPE_GAUGE);
	return v->v[0].gauge;
}

static derive_t
health(const char *kind)
{
	return must_find("telemetry_requests", kind)->v[0].derive;
}

/* How many values of @type the last reads dispatched. */
static size_t
count_type(const char *type)
{
	size_t n = 0;

	for (size_t i = 0; i < fc_nvalues(); i++)
		n += strcmp(fc_value_at(i)->type, type) == 0;
	return n;
}

static void
values_for_recorded_replies(void **state)
{
	(void)state;
	start_app(&(struct app){0}, 4242);
	assert_int_equal(configure(NULL), 0);
	assert_int_equal(fc_read_all(), 0);

	/* dpdk-test-crypto-perf on crypto_null. */
	assert_int_equal(
		must_find("cryptodev_ops", "cryptodev0.enqueued_count")->v[0].derive, 320500096);
	assert_int_equal(
		must_find("cryptodev_ops", "cryptodev0.dequeued_count")->v[0].derive, 320500096);
	assert_int_equal(
		must_find("cryptodev_ops", "cryptodev0.enqueue_err_count")->v[0].derive, 0);
	assert_int_equal(
		must_find("cryptodev_ops", "cryptodev0.dequeue_err_count")->v[0].derive, 0);
	assert_int_equal(count_type("cryptodev_ops"), 4);
	/* event_sw under dpdk-test-eventdev: device, both ports, the queue. */
	assert_int_equal(must_find("eventdev_xstat", "eventdev0.dev_rx")->v[0].derive, 11520);
	assert_int_equal(
		must_find("eventdev_xstat", "eventdev0.dev_sched_calls")->v[0].derive, 7971058);
	assert_int_equal(
		must_find("eventdev_xstat", "eventdev0.port0.port_0_tx")->v[0].derive, 3696);
	assert_int_equal(
		must_find("eventdev_xstat", "eventdev0.queue0.qid_0_tx")->v[0].derive, 8112);
	assert_int_equal(count_type("eventdev_xstat"), 6 + 3 + 5 + 5);
	/* Its levels (EventdevGauge's default list) are GAUGE. */
	assert_true(must_gauge("eventdev0.port1.port_1_rx_ring_free") == 4064);
	assert_true(must_gauge("eventdev0.queue0.qid_0_iq_2_used") == 4048);
	assert_true(must_gauge("eventdev0.queue0.qid_0_port_0_pinned_flows") == 64);
	assert_true(must_gauge("eventdev0.dev_sched_last_iter_bitmask") == 0);
	assert_null(fc_find(PI, "eventdev_xstat", "eventdev0.port1.port_1_inflight"));
	assert_int_equal(count_type("eventdev_gauge"), 2 + 7 + 7);
	/* dma_skeleton0 not configured by the application (nb_vchans 0): nothing to count, and
	 * no request for its counters; rawdev_skeleton has no xstats (null). */
	assert_int_equal(count_type("dmadev_ops"), 0);
	assert_int_equal(nasked("/dmadev/stats"), 0);
	assert_int_equal(count_type("rawdev_xstat"), 0);
	assert_int_equal(health("failed"), 1); /* /rawdev/xstats,0 */
	assert_int_equal(health("invalid"), 0);
	assert_int_equal(fc_logs_matching("/rawdev/xstats,0 answers null"), 1);
}

/* Lists once per application process; the counters at every read; a device without
 * counters is not asked again. */
static void
requests_per_read(void **state)
{
	(void)state;
	start_app(&(struct app){0}, 4242);
	assert_int_equal(configure(NULL), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(fc_read_all(), 0);
	assert_int_equal(nasked("/"), 1);
	assert_int_equal(nasked("/cryptodev/list"), 1);
	assert_int_equal(nasked("/dmadev/list"), 1);
	assert_int_equal(nasked("/dmadev/info"), 1);
	assert_int_equal(nasked("/eventdev/dev_list"), 1);
	assert_int_equal(nasked("/eventdev/port_list"), 1);
	assert_int_equal(nasked("/eventdev/queue_list"), 1);
	assert_int_equal(nasked("/rawdev/list"), 1);
	assert_int_equal(nasked("/cryptodev/stats"), 3);
	assert_int_equal(nasked("/eventdev/dev_xstats"), 3);
	assert_int_equal(nasked("/eventdev/port_xstats"), 6);
	assert_int_equal(nasked("/eventdev/queue_xstats"), 3);
	assert_int_equal(nasked("/rawdev/xstats"), 1);
	assert_int_equal(health("failed"), 1);
	assert_int_equal(fc_logs_matching("/rawdev/xstats,0 answers null"), 1);

	/* A restart: another process, its devices listed again. */
	fs_stop(fa.fs);
	start_app(&(struct app){0}, 4343);
	assert_int_equal(fc_read_all(), 0);
	assert_int_equal(nasked("/cryptodev/list"), 2);
	assert_int_equal(nasked("/rawdev/xstats"), 2);
}

/* An application without the classes costs no request; a class switched off neither. */
static void
absent_or_off_costs_nothing(void **state)
{
	static const char *const classes[] = {"/cryptodev/", "/dmadev/", "/eventdev/", "/rawdev/"};

	(void)state;
	start_app(&(struct app){.no_classes = true}, 4242);
	assert_int_equal(configure(NULL), 0);
	assert_int_equal(fc_read_all(), 0);
	assert_int_equal(fc_read_all(), 0);
	for (int i = 0; i < NCMDS && cmds[i] != NULL; i++)
		for (int c = 0; c < 4; c++)
			if (strncmp(cmds[i], classes[c], strlen(classes[c])) == 0)
				assert_int_equal(asked[i], 0);
	assert_int_equal(health("failed"), 0);
	fc_shutdown();
	fs_stop(fa.fs);

	memset(asked, 0, sizeof(asked));
	fc_reset();
	fc_load(module_register);
	start_app(&(struct app){0}, 4242);
	assert_int_equal(configure("CryptodevStats false\nEventdevStats false\n"
				   "DmadevStats false\nRawdevStats false"),
		0);
	assert_int_equal(fc_read_all(), 0);
	for (int i = 0; i < NCMDS && cmds[i] != NULL; i++)
		for (int c = 0; c < 4; c++)
			if (strncmp(cmds[i], classes[c], strlen(classes[c])) == 0)
				assert_int_equal(asked[i], 0);
}

/* /cryptodev/list and /eventdev/dev_list answer null where there is no such device: an empty
 * list, not a failure. */
static void
null_list_is_empty(void **state)
{
	(void)state;
	start_app(&(struct app){.no_cryptodev = true, .no_eventdev = true}, 4242);
	assert_int_equal(configure("RawdevStats false"), 0);
	assert_int_equal(fc_read_all(), 0);
	assert_int_equal(fc_read_all(), 0);
	assert_int_equal(nasked("/cryptodev/list"), 1);
	assert_int_equal(nasked("/cryptodev/stats"), 0);
	assert_int_equal(count_type("cryptodev_ops"), 0);
	assert_int_equal(nasked("/eventdev/dev_list"), 1);
	assert_int_equal(nasked("/eventdev/dev_xstats"), 0);
	assert_int_equal(health("failed"), 0);
	assert_int_equal(health("invalid"), 0);
}

static void
include_exclude_patterns(void **state)
{
	(void)state;
	start_app(&(struct app){0}, 4242);
	assert_int_equal(configure("CryptodevInclude \"*_err_count\"\n"
				   "EventdevInclude \"dev_*\" \"port_*_rx\"\n"
				   "EventdevExclude \"dev_sched_*\""),
		0);
	assert_int_equal(fc_read_all(), 0);
	assert_int_equal(count_type("cryptodev_ops"), 2);
	assert_non_null(fc_find(PI, "cryptodev_ops", "cryptodev0.dequeue_err_count"));
	assert_null(fc_find(PI, "cryptodev_ops", "cryptodev0.enqueued_count"));
	/* dev_rx, dev_tx, dev_drop; port_0_rx, port_1_rx */
	assert_int_equal(count_type("eventdev_xstat"), 5);
	assert_non_null(fc_find(PI, "eventdev_xstat", "eventdev0.port1.port_1_rx"));
	assert_null(fc_find(PI, "eventdev_xstat", "eventdev0.dev_sched_calls"));
}

/* EventdevGauge replaces the default list. */
static void
event_gauge_option(void **state)
{
	(void)state;
	start_app(&(struct app){0}, 4242);
	assert_int_equal(configure("EventdevGauge \"port_*_tx\""), 0);
	assert_int_equal(fc_read_all(), 0);
	assert_true(must_gauge("eventdev0.port0.port_0_tx") == 3696);
	assert_int_equal(count_type("eventdev_gauge"), 2);
	assert_int_equal(
		must_find("eventdev_xstat", "eventdev0.port1.port_1_rx_ring_free")->v[0].derive,
		4064);
}

/* A configured dmadev: each vchan by its id. */
static void
dmadev_vchans(void **state)
{
	(void)state;
	start_app(&(struct app){.dma_vchans = 2}, 4242);
	assert_int_equal(configure(NULL), 0);
	assert_int_equal(fc_read_all(), 0);
	assert_int_equal(must_find("dmadev_ops", "dmadev0.vchan0.submitted")->v[0].derive, 100);
	assert_int_equal(must_find("dmadev_ops", "dmadev0.vchan1.completed")->v[0].derive, 91);
	assert_int_equal(must_find("dmadev_ops", "dmadev0.vchan1.errors")->v[0].derive, 1);
	assert_int_equal(count_type("dmadev_ops"), 6);
	assert_int_equal(nasked("/dmadev/stats"), 2);
}

/* A cut reply and a counter above INT64_MAX: counted invalid, logged once, nothing of them
 * dispatched, the other classes read. */
static void
bad_replies_counted_once(void **state)
{
	(void)state;
	start_app(&(struct app){.cut_crypto = true}, 4242);
	assert_int_equal(configure(NULL), 0);
	assert_int_equal(fc_read_all(), 0);
	assert_int_equal(fc_read_all(), 0);
	assert_int_equal(count_type("cryptodev_ops"), 0);
	assert_int_equal(health("invalid"), 2);
	assert_int_equal(fc_logs_matching("/cryptodev/stats,0"), 1);
	assert_non_null(fc_find(PI, "eventdev_xstat", "eventdev0.dev_rx"));
	fc_shutdown();
	fs_stop(fa.fs);

	fc_reset();
	fc_load(module_register);
	start_app(&(struct app){.huge_crypto = true}, 4242);
	assert_int_equal(configure(NULL), 0);
	assert_int_equal(fc_read_all(), 0);
	assert_null(fc_find(PI, "cryptodev_ops", "cryptodev0.enqueued_count"));
	assert_int_equal(must_find("cryptodev_ops", "cryptodev0.dequeued_count")->v[0].derive, 1);
	assert_int_equal(health("invalid"), 1);
}

/* Every device option in the <Plugin> block and in an <Instance> block, which overrides it. */
static void
options_per_instance(void **state)
{
	char text[1024];

	(void)state;
	start_app(&(struct app){0}, 4242);
	snprintf(text, sizeof(text),
		"CryptodevStats false\nDmadevStats false\nEventdevStats true\n"
		"RawdevStats false\nEventdevExclude \"*\"\nCryptodevExclude \"x\"\n"
		"DmadevInclude \"a\"\nDmadevExclude \"b\"\nRawdevInclude \"c\"\n"
		"RawdevExclude \"d\"\nEventdevGauge \"e\"\nMemoryStats false\n"
		"<Instance \"" PI "\">\n SocketPath \"%s\"\n CryptodevStats true\n"
		" CryptodevInclude \"enqueued_count\"\n</Instance>\n",
		fa.path);
	assert_int_equal(fc_configure("dpdktel_stats", text), 0);
	assert_int_equal(fc_init(), 0);
	assert_int_equal(fc_read_all(), 0);
	assert_int_equal(count_type("cryptodev_ops"), 1);
	assert_non_null(fc_find(PI, "cryptodev_ops", "cryptodev0.enqueued_count"));
	assert_int_equal(count_type("eventdev_xstat") + count_type("eventdev_gauge"), 0);
	assert_int_equal(nasked("/rawdev/list"), 0);
}

/* A reply that may have been cut: dispatched as far as it came, counted truncated at each
 * read, logged once. */
static void
full_reply_counted_truncated(void **state)
{
	(void)state;
	start_app(&(struct app){.full_raw = true}, 4242);
	assert_int_equal(configure(NULL), 0);
	assert_int_equal(fc_read_all(), 0);
	assert_int_equal(fc_read_all(), 0);
	assert_int_equal(count_type("rawdev_xstat"), 2 * 256);
	assert_int_equal(must_find("rawdev_xstat", "rawdev0.x255")->v[0].derive, 255);
	assert_int_equal(health("truncated"), 2);
	assert_int_equal(health("invalid"), 0);
	assert_int_equal(fc_logs_matching("/rawdev/xstats,0 reply may have been cut"), 1);
}

static void
options_refused_with_reason(void **state)
{
	(void)state;
	start_app(&(struct app){0}, 4242);
	assert_int_equal(configure("DmadevStats maybe"), -1);
	assert_int_equal(fc_logs_matching("DmadevStats"), 1);
	assert_int_equal(fc_logs_matching("maybe"), 1);
	assert_int_equal(fc_logs_matching("true or false"), 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(values_for_recorded_replies, setup, teardown),
		cmocka_unit_test_setup_teardown(requests_per_read, setup, teardown),
		cmocka_unit_test_setup_teardown(absent_or_off_costs_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(null_list_is_empty, setup, teardown),
		cmocka_unit_test_setup_teardown(include_exclude_patterns, setup, teardown),
		cmocka_unit_test_setup_teardown(event_gauge_option, setup, teardown),
		cmocka_unit_test_setup_teardown(dmadev_vchans, setup, teardown),
		cmocka_unit_test_setup_teardown(bad_replies_counted_once, setup, teardown),
		cmocka_unit_test_setup_teardown(full_reply_counted_truncated, setup, teardown),
		cmocka_unit_test_setup_teardown(options_per_instance, setup, teardown),
		cmocka_unit_test_setup_teardown(options_refused_with_reason, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
