/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Both plugins in one collectd process, on one application whose telemetry answers
 * /ethdev/xstats in 15 ms (a real driver's cost: i40e/ice poll their firmware, mlx5 asks the
 * kernel): issue 24's reproduction as a regression test. Every request is answered within
 * milliseconds, so the events plugin must never announce "not responding" and no request may
 * count as failed, however long the stats plugin's read of 32 ports takes.
 *
 * The plugins are the built shared objects (paths as arguments), loaded into this process as
 * collectd loads them (fake_collectd.c fc_load_file(): dlopen, module_register), so that
 * they share libdpdktel's registry, and with it one connection to the application, as in a
 * real collectd. The application is the fake server (tests/common/fake_server.c) answering as
 * dpdk-testpmd of DPDK 22.11 on 32 net_null ports does: the replies of tests/data/dpdk-22.11,
 * each connection on its own thread and its requests one at a time in order
 * (lib/telemetry/telemetry.c client_handler()). collectd's read threads are driven once a
 * second (Interval 1), each callback on its own thread (fc_read_all_threads()); the events
 * plugin polls from its own thread at its default PollInterval.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "fake_collectd.h"
#include "fake_server.h"
#include "test_util.h"

#define NPORTS 32
#define XSTATS_MS 15
#define RUN_S 5

static const char *stats_so, *events_so;

/* The simulated application; the fake server's threads read it, the test changes it. */
static struct {
	pthread_mutex_t m;
	bool hung; /* answers nothing at all (SIGSTOP) */
	unsigned int xstats; /* /ethdev/xstats answered */
	unsigned int links; /* /ethdev/link_status answered */
	char unknown[256]; /* the first commands answered null, for a failure's message */
} app = {.m = PTHREAD_MUTEX_INITIALIZER};

static struct fake_server *fs;

/* The port of "<prefix><port>" (a request with its parameter), or -1. */
static int
port_of(const char *req, const char *prefix)
{
	size_t n = strlen(prefix);
	char *end;
	unsigned long p;

	if (strncmp(req, prefix, n) != 0 || req[n] < '0' || req[n] > '9')
		return -1;
	p = strtoul(req + n, &end, 10);
	return *end == '\0' && p < NPORTS ? (int)p : -1;
}

static char *
port_list(void)
{
	char ids[4 * NPORTS] = "";

	for (int i = 0; i < NPORTS; i++)
		snprintf(ids + strlen(ids), sizeof(ids) - strlen(ids), "%s%d", i ? "," : "", i);
	return fs_printf("{\"/ethdev/list\":[%s]}", ids);
}

/* tests/data/dpdk-22.11/ethdev_info-0.json, for port @p. */
static char *
port_info(int p)
{
	return fs_printf(
		"{\"/ethdev/info\":{\"name\":\"net_null%d\",\"state\":1,\"nb_rx_queues\":1,"
		"\"nb_tx_queues\":1,\"port_id\":%d,\"mtu\":1500,\"rx_mbuf_size_min\":2176,"
		"\"mac_addr\":\"B2:5B:35:7B:05:%02X\",\"promiscuous\":1,\"scattered_rx\":0,"
		"\"all_multicast\":1,\"dev_started\":1,\"lro\":0,\"dev_configured\":1,"
		"\"rxq_state\":[1],\"txq_state\":[1],\"numa_node\":0,\"dev_flags\":64,"
		"\"rx_offloads\":0,\"tx_offloads\":0,\"ethdev_rss_hf\":0}}",
		p, p, p);
}

/* /eal/memzone_info,<id>: lib/eal/common/eal_common_memory.c
 * handle_eal_memzone_info_request, in the shape tests/plugin/test_stats.c records. */
static char *
memzone_info(int id)
{
	return fs_printf("{\"/eal/memzone_info\":{\"Zone\":%d,\"Name\":\"mz%d\",\"Length\":%d,"
			 "\"Address\":\"0x119d43a40\",\"Socket\":0,\"Flags\":0,"
			 "\"Hugepage_size\":4096,\"Hugepage_base\":\"0x119d43000\","
			 "\"Hugepage_used\":1}}",
		id, id, 1000 + id);
}

static void
handler(struct fake_server *s, unsigned int conn, const char *req, struct fake_reply *o, void *arg)
{
	static const struct {
		const char *cmd, *golden;
	} fixed[] = {
		{"/", "dpdk-22.11/root.json"},
		{"/eal/heap_list", "dpdk-22.11/eal_heap_list.json"},
		{"/eal/heap_info,0", "dpdk-22.11/eal_heap_info-0.json"},
		{"/eal/memzone_list", "dpdk-22.11/eal_memzone_list.json"},
		{"/mempool/list", "dpdk-22.11/mempool_list.json"},
		{"/mempool/info,mb_pool_0", "dpdk-22.11/mempool_info-mb_pool_0.json"},
		{"/eal/params", "dpdk-22.11/eal_params.json"},
		{"/eal/app_params", "dpdk-22.11/eal_app_params.json"},
		{"/info", "dpdk-22.11/info.json"},
		/* No such device in testpmd on net_null: null (perform_command() of a callback
		 * that fails) or an empty list (plugins/stats/devices.c). */
		{"/cryptodev/list", NULL},
		{"/eventdev/dev_list", "dpdk-22.11/eventdev_dev_list-none.json"},
	};
	int p;

	(void)s, (void)conn, (void)arg;
	pthread_mutex_lock(&app.m);
	if (app.hung) {
		o->action = FAKE_SILENT;
		pthread_mutex_unlock(&app.m);
		return;
	}
	if (strcmp(req, "/ethdev/list") == 0) {
		o->data = port_list();
	} else if ((p = port_of(req, "/ethdev/xstats,")) >= 0) {
		o->data = fs_golden("dpdk-22.11/ethdev_xstats-0.json", &o->len);
		o->delay_ms = XSTATS_MS;
		app.xstats++;
	} else if ((p = port_of(req, "/ethdev/link_status,")) >= 0) {
		o->data = fs_golden("dpdk-22.11/ethdev_link_status-0.json", &o->len);
		app.links++;
	} else if ((p = port_of(req, "/ethdev/info,")) >= 0) {
		o->data = port_info(p);
	} else if ((p = port_of(req, "/ethdev/stats,")) >= 0) {
		o->data = fs_golden("dpdk-22.11/ethdev_stats-0.json", &o->len);
	} else if (strncmp(req, "/eal/memzone_info,", 18) == 0) {
		o->data = memzone_info(atoi(req + 18));
	} else if (strcmp(req, "/dmadev/list") == 0 || strcmp(req, "/rawdev/list") == 0) {
		o->data = fs_printf("{\"%s\":[]}", req);
	} else {
		bool known = false;

		for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]) && !known; i++) {
			if (strcmp(req, fixed[i].cmd) != 0)
				continue;
			known = true;
			o->data = fixed[i].golden ? fs_golden(fixed[i].golden, &o->len)
						  : fs_printf("{\"%s\":null}", req);
		}
		if (!known) {
			size_t n = strcspn(req, ",");

			/* As DPDK answers a command it does not have, or a bad parameter. */
			o->data = fs_printf("{\"%.*s\":null}", (int)n, req);
			if (strstr(app.unknown, req) == NULL &&
				strlen(app.unknown) + strlen(req) + 2 < sizeof(app.unknown))
				snprintf(app.unknown + strlen(app.unknown),
					sizeof(app.unknown) - strlen(app.unknown), "%s ", req);
		}
	}
	pthread_mutex_unlock(&app.m);
}

static unsigned int
app_count(const unsigned int *what)
{
	unsigned int n;

	pthread_mutex_lock(&app.m);
	n = *what;
	pthread_mutex_unlock(&app.m);
	return n;
}

static void
set_hung(bool hung)
{
	pthread_mutex_lock(&app.m);
	app.hung = hung;
	pthread_mutex_unlock(&app.m);
}

static int
setup(void **state)
{
	struct fake_config cfg = {.handler = handler};

	(void)state;
	pthread_mutex_lock(&app.m);
	app.hung = false;
	app.xstats = app.links = 0;
	app.unknown[0] = '\0';
	pthread_mutex_unlock(&app.m);
	fs = fs_start_path(&cfg);
	if (fs == NULL)
		return -1;
	fc_reset();
	/* Both plugins, each with its own module_register(), as collectd loads them. */
	if (fc_load_file(stats_so) < 0 || fc_load_file(events_so) < 0)
		return -1;
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	fc_shutdown(); /* stops the events plugin's poll thread */
	fs_stop(fs);
	fs = NULL;
	return 0;
}

/* Both plugins at their defaults on the application, as instance "app". */
static void
start_plugins(void)
{
	char text[512];

	snprintf(text, sizeof(text), "<Instance \"app\">\n  SocketPath \"%s\"\n</Instance>\n",
		fs_path(fs));
	assert_int_equal(fc_configure("dpdktel_stats", text), 0);
	assert_int_equal(fc_configure("dpdktel_events", text), 0);
	if (fc_init() != 0) {
		fc_dump_logs();
		fail_msg("init failed");
	}
}

static void
sleep_until_ms(uint64_t t_ms)
{
	uint64_t now = test_now_ms();
	struct timespec ts;

	if (now >= t_ms)
		return;
	ts.tv_sec = (time_t)((t_ms - now) / 1000);
	ts.tv_nsec = (long)((t_ms - now) % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* The last telemetry_requests/@what of @plugin for "app"; -1 when none was dispatched. */
static int64_t
requests(const char *plugin, const char *what)
{
	struct fc_value v;

	if (!fc_find_plugin_copy(plugin, "app", "telemetry_requests", what, &v))
		return -1;
	return v.v[0].derive;
}

/*
 * Issue 24: a stats read of 32 ports at 15 ms per /ethdev/xstats takes half a second of the
 * application's one connection; the events plugin's polls, meanwhile, must wait for it (or
 * go first), never count it as an application that does not answer.
 */
static void
slow_xstats_are_not_a_hung_application(void **state)
{
	uint64_t t0;
	char unknown[sizeof(app.unknown)];
	int64_t ev_failed, st_failed, ev_sent, st_sent;
	size_t not_responding, gone, answers_again, no_answer_logs;

	(void)state;
	start_plugins();
	t0 = test_now_ms();
	/* collectd's read threads at Interval 1: each read callback on its own thread. */
	for (int i = 0; i < RUN_S; i++) {
		sleep_until_ms(t0 + 1000u * (uint64_t)i);
		fc_read_all_threads();
	}
	sleep_until_ms(t0 + 1000u * RUN_S);
	not_responding = fc_notifications_matching("is not responding", NULL);
	answers_again = fc_notifications_matching("answers again", NULL);
	gone = fc_notifications_matching("is gone", NULL);
	no_answer_logs = fc_logs_matching("does not answer");
	fc_read_all_threads(); /* the counters as they are now */
	ev_failed = requests("dpdktel_events", "failed");
	st_failed = requests("dpdktel_stats", "failed");
	ev_sent = requests("dpdktel_events", "sent");
	st_sent = requests("dpdktel_stats", "sent");
	pthread_mutex_lock(&app.m);
	memcpy(unknown, app.unknown, sizeof(unknown));
	pthread_mutex_unlock(&app.m);
	print_message("%d s: /ethdev/xstats answered %u (%d ms each), /ethdev/link_status %u; "
		      "events sent %" PRId64 " failed %" PRId64 ", stats sent %" PRId64
		      " failed %" PRId64 "; 'not responding' %zu, 'answers again' %zu, 'gone' "
		      "%zu, 'does not answer' log lines %zu; answered null: %s\n",
		RUN_S, app_count(&app.xstats), XSTATS_MS, app_count(&app.links), ev_sent, ev_failed,
		st_sent, st_failed, not_responding, answers_again, gone, no_answer_logs,
		unknown[0] ? unknown : "none");
	/* The run did what it claims: at least one read of every port's xstats (a read that
	 * would cost more than MaxAppLoad allows runs less often than each second), and the
	 * events plugin polled every port's link meanwhile, more than once (also stretched by
	 * MaxAppLoad: under ASan on a busy host each request looks dearer). */
	assert_true(app_count(&app.xstats) >= NPORTS);
	assert_true(app_count(&app.links) >= 2 * NPORTS);
	assert_true(ev_sent > 0 && st_sent > 0);
	if (not_responding != 0 || gone != 0 || ev_failed != 0 || st_failed != 0 ||
		no_answer_logs != 0) {
		fc_dump_logs();
		fail_msg("an application that answers every request within %d ms was taken for "
			 "one that does not answer: %zu 'not responding', %zu 'gone', failed "
			 "requests events %" PRId64 " / stats %" PRId64 ", %zu 'does not answer' "
			 "log lines (expected 0 of each)",
			XSTATS_MS, not_responding, gone, ev_failed, st_failed, no_answer_logs);
	}
}

/* The same two plugins still see a real hang: the instruments of the test above work. */
static void
hung_application_is_not_responding(void **state)
{
	uint64_t deadline;

	(void)state;
	start_plugins();
	fc_read_all_threads();
	deadline = test_now_ms() + 10000;
	while (app_count(&app.links) < 3 * NPORTS && test_now_ms() < deadline)
		sleep_until_ms(test_now_ms() + 10);
	assert_true(app_count(&app.links) >= 3 * NPORTS);
	set_hung(true);
	deadline = test_now_ms() + 10000;
	while (fc_notifications_matching("is not responding", NULL) == 0 &&
		test_now_ms() < deadline)
		sleep_until_ms(test_now_ms() + 10);
	set_hung(false);
	if (fc_notifications_matching("is not responding", NULL) != 1) {
		fc_dump_logs();
		fail_msg("expected one 'not responding' within 10 s of the application's hang, got "
			 "%zu",
			fc_notifications_matching("is not responding", NULL));
	}
	deadline = test_now_ms() + 10000;
	while (fc_notifications_matching("answers again", NULL) == 0 && test_now_ms() < deadline)
		sleep_until_ms(test_now_ms() + 10);
	assert_int_equal(fc_notifications_matching("answers again", NULL), 1);
	assert_int_equal(fc_notifications_matching("is gone", NULL), 0);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			slow_xstats_are_not_a_hung_application, setup, teardown),
		cmocka_unit_test_setup_teardown(
			hung_application_is_not_responding, setup, teardown),
	};

	if (argc != 3) {
		fprintf(stderr, "usage: %s DPDKTEL_STATS_SO DPDKTEL_EVENTS_SO\n", argv[0]);
		return 2;
	}
	stats_so = argv[1];
	events_so = argv[2];
	return cmocka_run_group_tests(tests, NULL, NULL);
}
