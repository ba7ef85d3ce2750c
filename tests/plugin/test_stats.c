/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdktel_stats against the fake collectd daemon and the fake telemetry server: the
 * configuration matrix, exact identifiers and values for recorded DPDK 22.11 replies,
 * truncation, null replies, timeouts, restarts, a socket that vanishes and returns.
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
#include "fake_proc.h"
#include "test_util.h"

void module_register(void);

/* A simulated DPDK application: which replies the fake server gives. */
struct app {
	int nports;
	bool fwd; /* has dpdktel-fwd's /fwd commands */
	bool null_xstats; /* /ethdev/xstats answers null */
	int silent_stats_port; /* /ethdev/stats,<this> and /ethdev/xstats,<this> never answer */
	bool huge_counter; /* ipackets above INT64_MAX */
	bool full_xstats; /* /ethdev/xstats with 256 entries */
	bool swapped_fwd_port; /* /fwd/port answers for another port */
	bool negative; /* counters of /ethdev/stats, /eal/heap_info, /mempool/info below 0 */
	bool oversized_list; /* /ethdev/list larger than max_output_len */
	bool hang_at_stats; /* from the first /ethdev/stats or /ethdev/xstats on, nothing answers */
	bool oversized_xstats; /* /ethdev/xstats larger than max_output_len */
	/* The release in the greeting (NULL: 22.11). From "DPDK 23" on, hide_zero=true is
	 * understood; from "DPDK 25.11" /ethdev/stats has no q_* arrays. */
	const char *version;
	bool stats_4q; /* the recorded 4-queue port of the release: 24.11's or 25.11's */
	bool long_xstats; /* /ethdev/xstats of fewer than 256 entries, within 512 B of 16 KiB */
	const char *dev_name; /* /ethdev/info "name" of port 0 (NULL: net_null<port>) */
	bool eal_lcores; /* has /eal/lcore/list, /eal/lcore/info and /eal/lcore/usage (>= 23.03) */
	bool no_usage_cb; /* ... but registered no usage callback: no lcore has cycles */
	/* Memory: memzones first_zone .. first_zone + nzones - 1 (nzones 0: the recorded 22.11
	 * list, 0 to 5); npools mempools p0, p1, ... (0: the recorded mb_pool_0); /mempool/info
	 * and /ring/info of a pool or ring that has gone ({}), or about another one. */
	unsigned int first_zone, nzones, npools;
	bool pool_gone, pool_swapped;
	bool zones_bad; /* /eal/memzone_list with an entry that is not an id */
	bool zone_swapped; /* /eal/memzone_info,<id> answers about memzone id + 1 */
	int xstats_delay_ms; /* each /ethdev/xstats takes this long (a slow driver) */
	int stats_delay_ms; /* each /ethdev/stats takes this long */
	bool ixgbe_xstats; /* /ethdev/xstats of an ixgbe port that drops (ixgbe_dev_xstats_get) */
	bool no_ethdev; /* /ethdev/list answers null; one crypto device */
	bool no_heap_list; /* /eal/heap_list answers null */
	/* Port 0 reconfigured or replaced while the application runs: nq rx queues (0: the
	 * recorded 1, and 4 in its xstats), its MAC (NULL: recorded), counters from 0. */
	unsigned int nq;
	const char *mac;
	bool zero_counters;
};

/* Memory requests the fake received (atomic: one thread per connection). */
static unsigned int memzone_info_requests, mempool_list_requests, ring_list_requests,
	memzone_list_requests, memory_requests;

/* /eal/lcore/info and /eal/lcore/usage requests the fake received. */
static unsigned int lcore_info_requests, lcore_usage_requests;

/* /ethdev/info requests the fake received (atomic: one thread per connection). */
static unsigned int info_requests;

/* Requests per port the fake received since the last reset_port_requests() (atomic). */
static unsigned int stats_requests, xstats_requests, link_requests;

/* /ethdev/list and /mempool/info requests the fake received (atomic). */
static unsigned int list_requests, mempool_info_requests;

static void
reset_port_requests(void)
{
	__atomic_store_n(&stats_requests, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&xstats_requests, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&link_requests, 0, __ATOMIC_RELAXED);
}

/*
 * /ethdev/xstats of a port whose /ethdev/stats is @stats_golden, with @nq queues, as DPDK
 * builds it (lib/ethdev/rte_ethdev.c eth_basic_stats_get: the eight basic counters from
 * rte_eth_stats_get, then, for drivers with RTE_ETH_DEV_AUTOFILL_QUEUE_XSTATS such as
 * net_null, rx_q<N>_packets/bytes/errors and tx_q<N>_packets/bytes of each queue; net_null
 * has no counters of its own; lib/ethdev/rte_ethdev_telemetry.c eth_dev_handle_port_xstats
 * sends them in that order).
 */
static char *
xstats_of_stats(const char *stats_golden, unsigned int nq, bool zero)
{
	struct dtel_port_stats st;
	size_t len, n, cap = 8192;
	char *g = fs_golden(stats_golden, &len), *s = malloc(cap);

	assert_int_equal(
		dtel_parse_port_stats(&(struct dtel_reply){.json = g, .len = len}, &st), 0);
	free(g);
	if (zero)
		memset(&st, 0, sizeof(st));
	/* ethdev names the first RTE_ETHDEV_QUEUE_STAT_CNTRS (16) queues only
	 * (lib/ethdev/rte_ethdev.c eth_dev_get_xstats_basic_count). */
	nq = nq < 16 ? nq : 16;
	n = (size_t)snprintf(s, cap,
		"{\"/ethdev/xstats\":{\"rx_good_packets\":%" PRIu64 ",\"tx_good_packets\":%" PRIu64
		",\"rx_good_bytes\":%" PRIu64 ",\"tx_good_bytes\":%" PRIu64
		",\"rx_missed_errors\":%" PRIu64 ",\"rx_errors\":%" PRIu64 ",\"tx_errors\":%" PRIu64
		",\"rx_mbuf_allocation_errors\":%" PRIu64,
		st.ipackets, st.opackets, st.ibytes, st.obytes, st.imissed, st.ierrors, st.oerrors,
		st.rx_nombuf);
	for (unsigned int q = 0; q < nq; q++)
		n += (size_t)snprintf(s + n, cap - n,
			",\"rx_q%u_packets\":%" PRIu64 ",\"rx_q%u_bytes\":%" PRIu64
			",\"rx_q%u_errors\":%" PRIu64,
			q, st.q_ipackets[q], q, st.q_ibytes[q], q, st.q_errors[q]);
	for (unsigned int q = 0; q < nq; q++)
		n += (size_t)snprintf(s + n, cap - n,
			",\"tx_q%u_packets\":%" PRIu64 ",\"tx_q%u_bytes\":%" PRIu64, q,
			st.q_opackets[q], q, st.q_obytes[q]);
	snprintf(s + n, cap - n, "}}");
	return s;
}

/*
 * Fewer than 256 counters with long names whose reply ends within DTEL_CUT_MARGIN of the
 * 16384 bytes of max_output_len: DPDK appends an entry only while it fits
 * (lib/telemetry/telemetry.c container_to_json / output_json), so more may have been cut.
 * Every other counter is 0 and left out with hide_zero.
 */
static char *
xstats_long(bool hide_zero)
{
	size_t cap = 16384, n;
	char *s = malloc(cap);
	int added = 0;

	n = (size_t)snprintf(s, cap, "{\"/ethdev/xstats\":{");
	for (int i = 0; n < 16384 - 300; i++) {
		int v = i % 2 ? i : 0;

		if (hide_zero && v == 0)
			continue;
		n += (size_t)snprintf(s + n, cap - n, "%s\"%0100d\":%d", added ? "," : "", i, v);
		added++;
	}
	snprintf(s + n, cap - n, "}}");
	return s;
}

/* Requests with ",hide_zero=true" the fake received (atomic: one thread per connection). */
static unsigned int hide_zero_requests;

static bool
app_newer(const struct app *a, const char *than)
{
	return a->version != NULL && strcmp(a->version, than) >= 0;
}

/* A stopped application: set by the first /ethdev/stats of an app with hang_at_stats. */
static int app_hung;

/* The recorded net_null0 of 22.11 as port @port named net_null<port>, or @name for port 0
 * (a JSON string: DPDK escapes '"' and '\\' only, lib/telemetry/telemetry_json.h), with @nq
 * rx queues and MAC @mac where given. */
static char *
info_reply(unsigned int port, const char *name, unsigned int nq, const char *mac)
{
	size_t len;
	char *g = fs_golden("dpdk-22.11/ethdev_info-0.json", &len), *p, *rest, *out, *next;
	char dflt[32];

	if (nq > 0 || mac != NULL) {
		char *q = strstr(g, "\"nb_rx_queues\":1"), *m = strstr(g, "B2:5B:35:7B:05:53");

		assert_non_null(q);
		assert_non_null(m);
		q[strlen("\"nb_rx_queues\":")] = '\0';
		m[0] = '\0';
		next = fs_printf("%s%u%.*s%s%s", g, nq ? nq : 1,
			(int)(m - (q + strlen("\"nb_rx_queues\":1"))),
			q + strlen("\"nb_rx_queues\":1"), mac ? mac : "B2:5B:35:7B:05:53",
			m + strlen("B2:5B:35:7B:05:53"));
		free(g);
		g = next;
	}

	snprintf(dflt, sizeof(dflt), "net_null%u", port);
	p = strstr(g, "\"port_id\":0");
	rest = strstr(g, "\"state\"");
	assert_non_null(p);
	assert_non_null(rest);
	*p = '\0';
	rest[-1] = '\0'; /* the ',' after the name */
	out = fs_printf("{\"/ethdev/info\":{\"name\":\"%s\",%s\"port_id\":%u%s",
		name != NULL ? name : dflt, rest, port, p + strlen("\"port_id\":0"));
	free(g);
	return out;
}

/*
 * 300 counters x<i> = i, every third one 0 (x0, x3, ...), as DPDK sends them: cut at 256
 * (lib/telemetry/telemetry_data.c rte_tel_data_add_dict_uint refuses the 257th), and with
 * hide_zero (DPDK >= 23.03: lib/ethdev/rte_ethdev_telemetry.c eth_dev_handle_port_xstats
 * skips each counter whose value is 0 and keeps the order of the others).
 */
static char *
xstats_full(bool hide_zero)
{
	size_t cap = 16384, n;
	char *s = malloc(cap);
	int added = 0;

	n = (size_t)snprintf(s, cap, "{\"/ethdev/xstats\":{");
	for (int i = 0; i < 300 && added < 256; i++) {
		int v = i % 3 ? i : 0;

		if (hide_zero && v == 0)
			continue;
		n += (size_t)snprintf(s + n, cap - n, "%s\"x%d\":%d", added ? "," : "", i, v);
		added++;
	}
	snprintf(s + n, cap - n, "}}");
	return s;
}

static char *
port_list(int n)
{
	char buf[256];
	size_t len = 0;

	for (int i = 0; i < n; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%d", i ? "," : "", i);
	return fs_printf("{\"/ethdev/list\":[%s]}", buf);
}

static char *
root_list(const struct app *a)
{
	size_t len;
	char *g = fs_golden("dpdk-22.11/root.json", &len), *out;

	if (!a->fwd && !a->eal_lcores)
		return g;
	g[len - 2] = '\0'; /* drop "]}" */
	out = fs_printf("%s%s%s]}", g,
		a->fwd ? ",\"/fwd/info\",\"/fwd/lcores\",\"/fwd/port\",\"/fwd/ports\"" : "",
		a->eal_lcores ? ",\"/eal/lcore/info\",\"/eal/lcore/list\",\"/eal/lcore/usage\""
			      : "");
	free(g);
	return out;
}

/* @g with every "mb_pool_0" replaced by @name (the recorded reply of another pool). */
static char *
renamed(char *g, const char *name)
{
	char *out = fs_printf("%s", ""), *p, *rest = g, *next;

	while ((p = strstr(rest, "mb_pool_0")) != NULL) {
		next = fs_printf("%s%.*s%s", out, (int)(p - rest), rest, name);
		free(out);
		out = next;
		rest = p + strlen("mb_pool_0");
	}
	next = fs_printf("%s%s", out, rest);
	free(out);
	free(g);
	return next;
}

/*
 * /mempool/info,<name> as DPDK's mempool_handle_info and mempool_info_cb
 * (lib/mempool/rte_mempool.c) answer it: the recorded pool renamed; with total_cache_count
 * and common_pool_count from 23.03 (recorded from testpmd 25.11); {} for a name no pool has.
 */
static char *
mempool_info(const struct app *a, const char *name)
{
	size_t len;

	if (a->pool_gone)
		return fs_printf("{\"/mempool/info\":{}}");
	if (a->pool_swapped)
		name = "another_pool";
	return renamed(fs_golden(app_newer(a, "DPDK 23.03")
				       ? "dpdk-newer/mempool_info-mb_pool_0-25.11.json"
				       : "dpdk-22.11/mempool_info-mb_pool_0.json",
			       &len),
		name);
}

/* /mempool/list: mempool_handle_list (lib/mempool/rte_mempool.c), an array of names. */
static char *
mempool_list(const struct app *a)
{
	char *out, *next;
	size_t len;

	if (a->npools == 0)
		return fs_golden("dpdk-22.11/mempool_list.json", &len);
	out = fs_printf("{\"/mempool/list\":[");
	for (unsigned int i = 0; i < a->npools; i++) {
		next = fs_printf("%s%s\"p%u\"", out, i ? "," : "", i);
		free(out);
		out = next;
	}
	next = fs_printf("%s]}", out);
	free(out);
	return next;
}

/* /eal/memzone_list: handle_eal_memzone_list_request (lib/eal/common/eal_common_memory.c),
 * an array of the indexes of the reserved memzones, in index order. */
static char *
memzone_list(const struct app *a)
{
	char *out, *next;
	size_t len;

	if (a->nzones == 0)
		return fs_golden("dpdk-22.11/eal_memzone_list.json", &len);
	out = fs_printf("{\"/eal/memzone_list\":[");
	for (unsigned int i = 0; i < a->nzones; i++) {
		next = fs_printf("%s%s%u", out, i ? "," : "", a->first_zone + i);
		free(out);
		out = next;
	}
	next = fs_printf("%s]}", out);
	free(out);
	return next;
}

/* /eal/memzone_info,<id>: handle_eal_memzone_info_request (same file), in the shape
 * recorded from testpmd (22.11 and 25.11 agree), with Length 1000 + id. */
static char *
memzone_info(unsigned int id)
{
	return fs_printf("{\"/eal/memzone_info\":{\"Zone\":%u,\"Name\":\"mz%u\",\"Length\":%u,"
			 "\"Address\":\"0x119d43a40\",\"Socket\":0,\"Flags\":0,"
			 "\"Hugepage_size\":4096,\"Hugepage_base\":\"0x119d43000\","
			 "\"Hugepage_used\":1}}",
		id, id, 1000 + id);
}

/* The most value lists the fake daemon had received when a request came in (atomic: the
 * fake server answers each connection on its own thread). */
static size_t values_at_requests;

static void
app_handler(
	struct fake_server *fs, unsigned int conn, const char *req, struct fake_reply *o, void *arg)
{
	const struct app *a = arg;
	const char *comma = strchr(req, ',');
	unsigned int id = comma ? (unsigned int)strtoul(comma + 1, NULL, 10) : 0;
	size_t n = comma ? (size_t)(comma - req) : strlen(req);
	size_t seen = fc_nvalues(), most = __atomic_load_n(&values_at_requests, __ATOMIC_RELAXED);

	/* 22.11 ignores parameters after the port (with a NOTICE); 23.03 and later parse
	 * hide_zero (lib/ethdev/rte_ethdev_telemetry.c, eth_dev_handle_port_xstats). */
	bool hide_zero = comma != NULL && strstr(comma, ",hide_zero=true") != NULL;

	(void)fs, (void)conn;
	if (hide_zero)
		__atomic_add_fetch(&hide_zero_requests, 1, __ATOMIC_RELAXED);
	hide_zero = hide_zero && app_newer(a, "DPDK 23.03");

	while (seen > most &&
		!__atomic_compare_exchange_n(&values_at_requests, &most, seen, false,
			__ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
#define IS(c) (n == strlen(c) && strncmp(req, c, n) == 0)
	if (strncmp(req, "/eal/heap", 9) == 0 || strncmp(req, "/eal/memzone", 12) == 0 ||
		strncmp(req, "/mempool/", 9) == 0 || strncmp(req, "/ring/", 6) == 0)
		__atomic_add_fetch(&memory_requests, 1, __ATOMIC_RELAXED);
	if (a->hang_at_stats && (IS("/ethdev/stats") || IS("/ethdev/xstats")))
		__atomic_store_n(&app_hung, 1, __ATOMIC_SEQ_CST);
	if (IS("/ethdev/stats")) {
		__atomic_add_fetch(&stats_requests, 1, __ATOMIC_RELAXED);
		o->delay_ms = a->stats_delay_ms;
		o->spin = true;
	}
	if (IS("/ethdev/xstats")) {
		__atomic_add_fetch(&xstats_requests, 1, __ATOMIC_RELAXED);
		o->delay_ms = a->xstats_delay_ms;
		o->spin = true; /* a driver that polls its firmware: on the CPU */
	}
	if (IS("/ethdev/link_status"))
		__atomic_add_fetch(&link_requests, 1, __ATOMIC_RELAXED);
	if (IS("/ethdev/list"))
		__atomic_add_fetch(&list_requests, 1, __ATOMIC_RELAXED);
	if (IS("/mempool/info"))
		__atomic_add_fetch(&mempool_info_requests, 1, __ATOMIC_RELAXED);
	if (__atomic_load_n(&app_hung, __ATOMIC_SEQ_CST))
		o->action = FAKE_SILENT;
	else if (IS("/"))
		o->data = root_list(a);
	/* A DPDK program without librte_ethdev: nobody registered /ethdev/list, and
	 * lib/telemetry/telemetry.c answers null (unknown_command); its crypto device answers
	 * as crypto_null does (lib/cryptodev/rte_cryptodev.c cryptodev_handle_dev_list and
	 * cryptodev_handle_dev_stats, recorded). */
	else if (IS("/ethdev/list") && a->no_ethdev)
		o->data = fs_printf("{\"/ethdev/list\":null}");
	else if (IS("/cryptodev/list") && a->no_ethdev)
		o->data = fs_printf("{\"/cryptodev/list\":[0]}");
	else if (IS("/cryptodev/stats") && a->no_ethdev && id == 0)
		o->data = fs_golden("dpdk-22.11/cryptodev_stats-0.json", &o->len);
	else if (IS("/ethdev/list") && a->oversized_list)
		o->data = fs_printf("{\"/ethdev/list\":[0%*s]}", 17000, "");
	else if (IS("/ethdev/list"))
		o->data = port_list(a->nports);
	else if (IS("/ethdev/stats") && a->negative)
		o->data = fs_printf("{\"/ethdev/stats\":{\"ipackets\":-1,\"opackets\":1,"
				    "\"ibytes\":2,\"obytes\":3,\"imissed\":4,\"ierrors\":5,"
				    "\"oerrors\":6,\"rx_nombuf\":7}}");
	else if (IS("/eal/heap_info") && a->negative)
		o->data = fs_printf("{\"/eal/heap_info\":{\"Heap_size\":-5,\"Free_size\":1,"
				    "\"Alloc_size\":1,\"Greatest_free_size\":1}}");
	else if (IS("/mempool/info") && a->negative)
		o->data = fs_printf("{\"/mempool/info\":{\"name\":\"mb_pool_0\",\"size\":\"many\","
				    "\"populated_size\":-2}}");
	else if (IS("/ethdev/stats") && a->huge_counter)
		o->data = fs_printf("{\"/ethdev/stats\":{\"ipackets\":18446744073709551615,"
				    "\"opackets\":1,\"ibytes\":2,\"obytes\":3,\"imissed\":4,"
				    "\"ierrors\":5,\"oerrors\":6,\"rx_nombuf\":7}}");
	else if ((IS("/ethdev/stats") || IS("/ethdev/xstats")) && (int)id == a->silent_stats_port)
		o->action = FAKE_SILENT;
	/* A port that is not (or no longer) there: eth_dev_handle_port_xstats returns -EINVAL
	 * (lib/ethdev/rte_ethdev_telemetry.c; rte_ethdev.c in 22.11), so perform_command
	 * (lib/telemetry/telemetry.c) answers null. */
	else if (IS("/ethdev/xstats") && (int)id >= a->nports)
		o->data = fs_printf("{\"/ethdev/xstats\":null}");
	else if (IS("/ethdev/stats") && a->stats_4q)
		o->data = fs_golden(app_newer(a, "DPDK 25.11")
				? "dpdk-newer/ethdev_stats-4q-25.11.json"
				: "dpdk-newer/ethdev_stats-4q-24.11.json",
			&o->len);
	else if (IS("/ethdev/stats"))
		o->data = fs_golden("dpdk-22.11/null_stats-4q.json", &o->len);
	/* ixgbe (drivers/net/ixgbe/ixgbe_ethdev.c, ixgbe_dev_xstats_get after ethdev's basic
	 * counters): imissed is the sum of the rx_priority<N>_dropped, ierrors of rx_crc_errors
	 * and the others; rx_q<N>_errors (QPRDC) in neither; rx_nombuf counts failed rearms. */
	else if (IS("/ethdev/xstats") && a->ixgbe_xstats)
		o->data = fs_printf("{\"/ethdev/xstats\":{\"rx_good_packets\":5000,"
				    "\"tx_good_packets\":4000,\"rx_good_bytes\":320000,"
				    "\"tx_good_bytes\":256000,\"rx_missed_errors\":%u,"
				    "\"rx_errors\":2,\"tx_errors\":0,"
				    "\"rx_mbuf_allocation_errors\":64,\"rx_q0_packets\":5000,"
				    "\"rx_q0_bytes\":320000,\"rx_q0_errors\":9,"
				    "\"tx_q0_packets\":4000,\"tx_q0_bytes\":256000,"
				    "\"rx_crc_errors\":2,\"rx_priority0_dropped\":%u,"
				    "\"rx_priority1_dropped\":300,"
				    "\"rx_priority0_mbuf_allocation_errors\":0}}",
			1000 + 5 * id, 700 + id);
	else if (IS("/ethdev/xstats") && a->null_xstats)
		o->data = fs_printf("{\"/ethdev/xstats\":null}");
	else if (IS("/ethdev/xstats") && a->oversized_xstats)
		o->data = fs_printf("{\"/ethdev/xstats\":{\"x\":0%*s}}", 17000, "");
	else if (IS("/ethdev/xstats") && a->full_xstats)
		o->data = xstats_full(hide_zero);
	else if (IS("/ethdev/xstats") && a->long_xstats)
		o->data = xstats_long(hide_zero);
	else if (IS("/ethdev/xstats") && a->stats_4q)
		o->data = fs_golden(app_newer(a, "DPDK 25.11")
				? (hide_zero ? "dpdk-newer/ethdev_xstats_hide_zero-4q-25.11.json"
					     : "dpdk-newer/ethdev_xstats-4q-25.11.json")
				: (hide_zero ? "dpdk-newer/ethdev_xstats_hide_zero-4q-24.11.json"
					     : "dpdk-newer/ethdev_xstats-4q-24.11.json"),
			&o->len);
	else if (IS("/ethdev/xstats"))
		o->data = xstats_of_stats("dpdk-22.11/null_stats-4q.json",
			id == 0 && a->nq ? a->nq : 4, id == 0 && a->zero_counters);
	else if (IS("/ethdev/link_status"))
		o->data = fs_golden("dpdk-22.11/ethdev_link_status-0.json", &o->len);
	/* An ixgbe port is a PCI device: its name is its address (its driver then the kernel's,
	 * unknown here, and the table's driver told by the xstats names). */
	else if (IS("/ethdev/info") && a->ixgbe_xstats &&
		__atomic_add_fetch(&info_requests, 1, __ATOMIC_RELAXED) > 0) {
		char pci[16];

		snprintf(pci, sizeof(pci), "0000:3b:00.%u", id % 8);
		o->data = info_reply(id, pci, 0, NULL);
	} else if (IS("/ethdev/info") &&
		__atomic_add_fetch(&info_requests, 1, __ATOMIC_RELAXED) > 0)
		o->data = id == 0 ? info_reply(id, a->dev_name, a->nq, a->mac)
				  : info_reply(id, NULL, 0, NULL);
	else if (IS("/eal/lcore/list") && a->eal_lcores)
		o->data = fs_printf("{\"/eal/lcore/list\":[0,1,2]}");
	/* Recorded from testpmd 23.11 (lcore 1, cycles); lcore 0 as it answers without a usage
	 * callback; lcore 2 a service lcore on three CPUs of socket 1. */
	else if (IS("/eal/lcore/info") && a->eal_lcores &&
		__atomic_add_fetch(&lcore_info_requests, 1, __ATOMIC_RELAXED) > 0 && id == 1)
		o->data = fs_golden("dpdk-newer/eal_lcore_info-23.11.json", &o->len);
	/* Each lcore whose usage callback answers, as lib/eal/common/eal_common_lcore.c
	 * lcore_telemetry_usage_cb adds it: lcore 1 of the recording above, the only one of
	 * this fake whose /eal/lcore/info has cycles; none without a callback. */
	else if (IS("/eal/lcore/usage") && a->eal_lcores &&
		__atomic_add_fetch(&lcore_usage_requests, 1, __ATOMIC_RELAXED) > 0 &&
		a->no_usage_cb)
		o->data = fs_printf("{\"/eal/lcore/usage\":{\"lcore_ids\":[],\"total_cycles\":[],"
				    "\"busy_cycles\":[],\"usage_ratio\":[]}}");
	else if (IS("/eal/lcore/usage") && a->eal_lcores)
		o->data = fs_printf(
			"{\"/eal/lcore/usage\":{\"lcore_ids\":[1],"
			"\"total_cycles\":[2893104918726],"
			"\"busy_cycles\":[1203383718121],\"usage_ratio\":[\"41.59%%\"]}}");
	else if (IS("/eal/lcore/info") && a->eal_lcores && id == 0)
		o->data = fs_printf("{\"/eal/lcore/info\":{\"lcore_id\":0,\"socket\":0,"
				    "\"role\":\"RTE\",\"cpuset\":[0]}}");
	else if (IS("/eal/lcore/info") && a->eal_lcores && id == 2)
		o->data = fs_printf("{\"/eal/lcore/info\":{\"lcore_id\":2,\"socket\":1,"
				    "\"role\":\"SERVICE\",\"cpuset\":[4,5,6,9]}}");
	else if (IS("/eal/heap_list") && a->no_heap_list)
		o->data = fs_printf("{\"/eal/heap_list\":null}");
	else if (IS("/eal/heap_list"))
		o->data = fs_golden("dpdk-22.11/eal_heap_list.json", &o->len);
	else if (IS("/eal/heap_info"))
		o->data = fs_golden("dpdk-22.11/eal_heap_info-0.json", &o->len);
	else if (IS("/mempool/list") &&
		__atomic_add_fetch(&mempool_list_requests, 1, __ATOMIC_RELAXED) > 0)
		o->data = mempool_list(a);
	else if (IS("/mempool/info"))
		o->data = mempool_info(a, comma ? comma + 1 : "");
	else if (IS("/eal/memzone_list") &&
		__atomic_add_fetch(&memzone_list_requests, 1, __ATOMIC_RELAXED) > 0 && a->zones_bad)
		o->data = fs_printf("{\"/eal/memzone_list\":[0,-1,2]}");
	else if (IS("/eal/memzone_list"))
		o->data = memzone_list(a);
	else if (IS("/eal/memzone_info") &&
		__atomic_add_fetch(&memzone_info_requests, 1, __ATOMIC_RELAXED) > 0)
		o->data = memzone_info(a->zone_swapped ? id + 1 : id);
	/* lib/ring/rte_ring.c from 24.03: ring_handle_list, ring_handle_info (recorded from
	 * testpmd 25.11: the ring of its mempool); earlier releases have no such command. */
	else if (IS("/ring/list") && app_newer(a, "DPDK 24.03") &&
		__atomic_add_fetch(&ring_list_requests, 1, __ATOMIC_RELAXED) > 0)
		o->data = fs_golden("dpdk-newer/ring_list-25.11.json", &o->len);
	else if (IS("/ring/info") && app_newer(a, "DPDK 24.03") && a->pool_gone)
		o->data = fs_printf("{\"/ring/info\":{}}");
	else if (IS("/ring/info") && app_newer(a, "DPDK 24.03"))
		o->data = fs_golden("dpdk-newer/ring_info-MP_mb_pool_0-25.11.json", &o->len);
	else if (IS("/fwd/lcores") && a->fwd)
		o->data = fs_golden("fwd/lcores.json", &o->len);
	/* dpdktel-fwd's /fwd/port (fwd/reply.c): lcore 1 polls the one rx queue of every
	 * port (docs/fwd-telemetry.md). */
	else if (IS("/fwd/port") && a->fwd)
		o->data = fs_printf("{\"/fwd/port\":{\"port_id\":%u,\"tx_dropped\":%u,"
				    "\"lcore_id\":1,\"rx_queue_lcores\":[1]}}",
			a->swapped_fwd_port ? id + 1 : id, 40 + id);
	else if (IS("/fwd/info") && a->fwd)
		o->data =
			fs_printf("{\"/fwd/info\":{\"app\":\"dpdktel-fwd\",\"uptime_ms\":12345}}");
	else
		o->data = fs_printf("{\"%.*s\":null}", (int)n, req);
#undef IS
}

/* The application the fake serves in this test (fake_app.h): the handler reads it. */
static struct app the_app;

static void
start_app(const struct app *a, long pid)
{
	the_app = *a;
	fa_start(app_handler, &the_app, pid, a->version);
}

static int
setup(void **state)
{
	(void)state;
	memset(&the_app, 0, sizeof(the_app));
	if (fa_setup("plug", module_register) < 0)
		return -1;
	__atomic_store_n(&values_at_requests, 0, __ATOMIC_RELAXED);
	app_hung = 0;
	__atomic_store_n(&hide_zero_requests, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&info_requests, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&lcore_info_requests, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&memzone_info_requests, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&mempool_list_requests, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&ring_list_requests, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&memzone_list_requests, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&memory_requests, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&lcore_usage_requests, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&list_requests, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&mempool_info_requests, 0, __ATOMIC_RELAXED);
	reset_port_requests();
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	fp_hide_pid(false);
	return fa_teardown();
}

/* Configure with an <Instance "edge1"> on the fake socket plus extra options. */
static int
configure(const char *global, const char *instance_opts)
{
	return fa_configure("dpdktel_stats", global, instance_opts, NULL);
}

static void
values_for_recorded_replies(void **state)
{
	const struct fc_value *v;

	(void)state;
	start_app(&(struct app){.nports = 2, .silent_stats_port = -1}, 4242);
	assert_int_equal(configure(NULL, NULL), 0);
	assert_int_equal(fc_reads(), 1);
	assert_int_equal(fc_read_all(), 0);

	v = fa_must_find(PI ".port0", "if_packets", NULL);
	assert_string_equal(v->plugin, "dpdktel_stats");
	assert_int_equal(v->n, 2);
	assert_int_equal(v->ds_type[0], DS_TYPE_DERIVE);
	assert_int_equal(v->v[0].derive, 18980928);
	assert_int_equal(v->v[1].derive, 5);
	assert_int_equal(fa_must_find(PI ".port1", "if_octets", NULL)->v[0].derive, 0);
	assert_int_equal(fa_must_find(PI ".port0", "if_errors", NULL)->v[1].derive, 0);
	assert_int_equal(fa_must_find(PI ".port0", "if_rx_dropped", "missed")->v[0].derive, 0);
	assert_int_equal(fa_must_find(PI ".port0", "if_rx_dropped", "nombuf")->v[0].derive, 0);
	assert_int_equal(
		fa_must_find(PI ".port1", "xstat", "rx_good_packets")->v[0].derive, 18980928);
	assert_int_equal(fa_must_find(PI ".port0", "xstat", "rx_q3_packets")->v[0].derive, 4745856);
	assert_true(fa_must_find(PI ".port0", "link_speed", NULL)->v[0].gauge == 10000);
	v = fa_must_find(PI ".port1", "port_queues", NULL);
	assert_true(v->v[0].gauge == 1 && v->v[1].gauge == 1);
	assert_true(fa_must_find(PI ".port1", "port_mtu", NULL)->v[0].gauge == 1500);
	assert_true(fa_must_find(PI, "up", NULL)->v[0].gauge == 1);
	v = fa_must_find(PI, "heap_bytes", "heap0");
	assert_true(v->v[0].gauge == 1073741824.0 && v->v[1].gauge == 422268608.0);
	v = fa_must_find(PI, "mempool_objects", "mb_pool_0");
	assert_true(v->v[0].gauge == 155456 && v->v[1].gauge == 155456);
	/* 22.11: no counts of available objects, no ring commands. */
	assert_null(fc_find(PI, "mempool_use", NULL));
	assert_null(fc_find(PI, "ring_entries", NULL));
	assert_int_equal(__atomic_load_n(&ring_list_requests, __ATOMIC_RELAXED), 0);
	/* Memzones 0 to 5 of 1000 + id bytes each. */
	assert_true(fa_must_find(PI, "count", "memzones")->v[0].gauge == 6);
	assert_true(fa_must_find(PI, "bytes", "memzones")->v[0].gauge == 6 * 1000 + 15);
	assert_int_equal(fa_must_find(PI, "telemetry_requests", "sent")->v[0].derive,
		(derive_t)fs_requests(fa.fs));
	assert_int_equal(fa_must_find(PI, "telemetry_requests", "failed")->v[0].derive, 0);
	assert_int_equal(fa_must_find(PI, "restarts", NULL)->v[0].derive, 0);
	/* No per-queue values unless asked for, nothing from /fwd on an application without it. */
	assert_null(fc_find(PI ".port0", "queue_packets", NULL));
	assert_null(fc_find(PI ".port0", "if_tx_dropped", NULL));
	assert_null(fc_find(PI ".lcore1", "lcore_packets", NULL));
}

static void
one_read_time_and_no_duplicates(void **state)
{
	cdtime_t t;

	(void)state;
	start_app(&(struct app){.nports = 2, .silent_stats_port = -1}, 4242);
	assert_int_equal(configure(NULL, NULL), 0);
	assert_int_equal(fc_read_all(), 0);
	t = fc_value_at(0)->time;
	assert_true(t > 0);
	for (size_t i = 0; i < fc_nvalues(); i++) {
		const struct fc_value *v = fc_value_at(i);

		assert_true(v->time == t);
		assert_int_equal(fc_count(v->plugin_instance, v->type, v->type_instance), 1);
	}
	fc_clear_records();
	assert_int_equal(fc_read_all(), 0);
	assert_int_equal(fc_count(PI ".port0", "if_packets", NULL), 1);
}

/*
 * The value lists of a read reach collectd after its last request, in one burst and in
 * order: collectd 5.12 wakes a write thread for every value that finds them asleep, and
 * values sent between requests find them asleep every time (plugins/common/dtp.h).
 */
static void
read_dispatches_after_its_last_request(void **state)
{
	size_t first = 0, last = 0;

	(void)state;
	start_app(&(struct app){.nports = 4, .silent_stats_port = -1}, 1);
	assert_int_equal(configure(NULL, NULL), 0);
	assert_int_equal(fc_read_all(), 0);
	assert_int_equal(__atomic_load_n(&values_at_requests, __ATOMIC_RELAXED), 0);
	assert_true(fc_nvalues() > 4 * 10);
	for (size_t i = 0; i < fc_nvalues(); i++) {
		const struct fc_value *v = fc_value_at(i);

		if (strcmp(v->type, "if_packets") == 0 &&
			strcmp(v->plugin_instance, PI ".port0") == 0)
			first = i + 1;
		if (strcmp(v->type, "if_packets") == 0 &&
			strcmp(v->plugin_instance, PI ".port3") == 0)
			last = i + 1;
	}
	assert_true(first > 0 && last > first);
	/* The next read again: nothing held back from the first one. */
	fc_clear_records();
	__atomic_store_n(&values_at_requests, 0, __ATOMIC_RELAXED);
	assert_int_equal(fc_read_all(), 0);
	assert_int_equal(__atomic_load_n(&values_at_requests, __ATOMIC_RELAXED), 0);
	assert_int_equal(fc_count(PI ".port3", "if_packets", NULL), 1);
}

static void
ports_option_filters(void **state)
{
	(void)state;
	start_app(&(struct app){.nports = 4, .silent_stats_port = -1}, 1);
	assert_int_equal(configure("Ports \"0,2-3\"", NULL), 0);
	assert_int_equal(fc_read_all(), 0);
	fa_must_find(PI ".port0", "if_packets", NULL);
	assert_null(fc_find(PI ".port1", "if_packets", NULL));
	fa_must_find(PI ".port2", "if_packets", NULL);
	fa_must_find(PI ".port3", "if_packets", NULL);
}

static void
instance_overrides_global(void **state)
{
	(void)state;
	start_app(&(struct app){.nports = 2, .silent_stats_port = -1}, 1);
	assert_int_equal(configure("XStats false\nPorts \"0\"", "XStats true"), 0);
	assert_int_equal(fc_read_all(), 0);
	fa_must_find(PI ".port0", "xstat", "rx_good_packets"); /* the instance said true */
	assert_null(fc_find(PI ".port1", "if_packets", NULL)); /* the global Ports applies */
}

static void
per_queue_only_queues_that_moved(void **state)
{
	const struct fc_value *v;

	(void)state;
	start_app(&(struct app){.nports = 1, .silent_stats_port = -1}, 1);
	assert_int_equal(configure("PerQueue true", NULL), 0);
	assert_int_equal(fc_read_all(), 0);
	v = fa_must_find(PI ".port0", "queue_packets", "q3");
	assert_int_equal(v->v[0].derive, 4745856);
	assert_int_equal(v->v[1].derive, 1);
	fa_must_find(PI ".port0", "queue_octets", "q0");
	fa_must_find(PI ".port0", "queue_errors", "q2");
	assert_null(fc_find(PI ".port0", "queue_packets", "q4"));
}

/* The queue values of a port, in dispatch order, as "type-ti=v0,v1;" */
static void
queue_values(const char *pi, char *out, size_t cap)
{
	size_t len = 0;

	out[0] = '\0';
	for (size_t i = 0; i < fc_nvalues(); i++) {
		const struct fc_value *v = fc_value_at(i);

		if (strcmp(v->plugin_instance, pi) != 0 || strncmp(v->type, "queue_", 6) != 0)
			continue;
		len += (size_t)snprintf(out + len, cap - len, "%s-%s=%" PRId64, v->type,
			v->type_instance, (int64_t)v->v[0].derive);
		if (v->n > 1)
			len += (size_t)snprintf(
				out + len, cap - len, ",%" PRId64, (int64_t)v->v[1].derive);
		len += (size_t)snprintf(out + len, cap - len, ";");
	}
}

/* From 25.11 the q_* arrays are gone: the same identifiers and values come from the xstats.
 * 24.11 sends both (recorded from the same stopped port): each source gives the same. */
static void
per_queue_same_identifiers_from_xstats(void **state)
{
	char from_stats[4096], from_xstats[4096];

	(void)state;
	start_app(&(struct app){.nports = 1,
			  .silent_stats_port = -1,
			  .version = "DPDK 24.11.6",
			  .stats_4q = true},
		1);
	assert_int_equal(configure("PerQueue true", NULL), 0);
	assert_int_equal(fc_read_all(), 0);
	queue_values(PI ".port0", from_stats, sizeof(from_stats));
	fc_shutdown();
	fs_stop(fa.fs);
	fc_reset();
	fc_load(module_register);
	/* The same counters without the q_* arrays, as 25.11 sends them. */
	start_app(&(struct app){.nports = 1,
			  .silent_stats_port = -1,
			  .version = "DPDK 25.11.2",
			  .stats_4q = true},
		1);
	assert_int_equal(configure("PerQueue true", NULL), 0);
	assert_int_equal(fc_read_all(), 0);
	queue_values(PI ".port0", from_xstats, sizeof(from_xstats));
	assert_non_null(strstr(from_xstats, "queue_packets-q3=622880,367904;"));
	assert_non_null(strstr(from_xstats, "queue_octets-q0=40650752,23545856;"));
	assert_non_null(strstr(from_xstats, "queue_errors-q3=0;"));
	assert_null(strstr(from_xstats, "-q4="));
	/* 24.11's recording: the same queues, names and order (its net_null counts no bytes). */
	assert_non_null(strstr(from_stats, "queue_packets-q3=364256,158432;"));
	for (const char *p = from_stats, *q = from_xstats; *p;
		p = strchr(p, ';') + 1, q = strchr(q, ';') + 1)
		assert_int_equal(strcspn(p, "="), strcspn(q, "="));
	assert_int_equal(fc_count(PI ".port0", "queue_packets", NULL), 4);
	/* one request for all of them: the 25.11 port was asked no /ethdev/stats */
	assert_int_equal(__atomic_load_n(&stats_requests, __ATOMIC_RELAXED), 0);
}

/* XStats false does not turn per-queue values off on 25.11: the xstats are read for them. */
static void
per_queue_without_xstats_option(void **state)
{
	(void)state;
	start_app(&(struct app){.nports = 1,
			  .silent_stats_port = -1,
			  .version = "DPDK 25.11.2",
			  .stats_4q = true},
		1);
	assert_int_equal(configure("PerQueue true\nXStats false", NULL), 0);
	assert_int_equal(fc_read_all(), 0);
	assert_int_equal(fc_read_all(), 0);
	assert_int_equal(fa_must_find(PI ".port0", "queue_packets", "q1")->v[0].derive, 669984);
	assert_null(fc_find(PI ".port0", "xstat", NULL));
	/* The generic counters from the same reply: one request per port and read. */
	fa_must_find(PI ".port0", "if_packets", NULL);
	assert_int_equal(__atomic_load_n(&xstats_requests, __ATOMIC_RELAXED), 2);
	assert_int_equal(__atomic_load_n(&stats_requests, __ATOMIC_RELAXED), 0);
}

/*
 * One request per port and read: the generic counters (and per-queue ones, net_null's
 * dev_flags say ethdev fills them) come from /ethdev/xstats, whose first entries they are;
 * the values are those /ethdev/stats gives. Before, /ethdev/stats was asked as well.
 */
static void
one_counter_request_per_port(void **state)
{
	const struct fc_value *v;

	(void)state;
	start_app(&(struct app){.nports = 4, .silent_stats_port = -1}, 1);
	assert_int_equal(configure("PerQueue true\nLinkInterval 3600", NULL), 0);
	assert_int_equal(fc_read_all(), 0);
	assert_int_equal(__atomic_load_n(&xstats_requests, __ATOMIC_RELAXED), 4);
	assert_int_equal(__atomic_load_n(&stats_requests, __ATOMIC_RELAXED), 0);
	assert_int_equal(__atomic_load_n(&link_requests, __ATOMIC_RELAXED), 4);
	v = fa_must_find(PI ".port3", "if_packets", NULL);
	assert_true(v->v[0].derive == 18980928 && v->v[1].derive == 5); /* null_stats-4q.json */
	v = fa_must_find(PI ".port3", "queue_packets", "q3");
	assert_true(v->v[0].derive == 4745856 && v->v[1].derive == 1);
	fa_must_find(PI ".port3", "if_rx_dropped", "nombuf");
	/* LinkInterval: the next reads send only the xstats, and the speed goes on. */
	reset_port_requests();
	fc_clear_records();
	assert_int_equal(fc_read_all(), 0);
	assert_int_equal(fc_read_all(), 0);
	assert_int_equal(__atomic_load_n(&xstats_requests, __ATOMIC_RELAXED), 8);
	assert_int_equal(__atomic_load_n(&stats_requests, __ATOMIC_RELAXED), 0);
	assert_int_equal(__atomic_load_n(&link_requests, __ATOMIC_RELAXED), 0);
	assert_true(fa_must_find(PI ".port2", "link_speed", NULL)->v[0].gauge == 10000);
	assert_int_equal(fa_must_find(PI ".port0", "if_octets", NULL)->v[0].derive, 0);
}

/* Where the xstats do not carry ethdev's counters (null here), or XStats is false without
 * PerQueue, /ethdev/stats gives them; LinkInterval 0 (the default) asks the link each read. */
static void
stats_where_xstats_do_not_serve(void **state)
{
	(void)state;
	start_app(&(struct app){.nports = 2, .null_xstats = true, .silent_stats_port = -1}, 1);
	assert_int_equal(configure(NULL, NULL), 0);
	assert_int_equal(fc_read_all(), 0);
	assert_int_equal(fc_read_all(), 0);
	assert_int_equal(__atomic_load_n(&xstats_requests, __ATOMIC_RELAXED), 4);
	assert_int_equal(__atomic_load_n(&stats_requests, __ATOMIC_RELAXED), 4);
	assert_int_equal(__atomic_load_n(&link_requests, __ATOMIC_RELAXED), 4);
	assert_int_equal(fa_must_find(PI ".port1", "if_packets", NULL)->v[0].derive, 18980928);
	fc_shutdown();
	fs_stop(fa.fs);
	fc_reset();
	fc_load(module_register);
	reset_port_requests();
	start_app(&(struct app){.nports = 2, .silent_stats_port = -1}, 1);
	assert_int_equal(configure("XStats false", NULL), 0);
	assert_int_equal(fc_read_all(), 0);
	assert_int_equal(__atomic_load_n(&xstats_requests, __ATOMIC_RELAXED), 0);
	assert_int_equal(__atomic_load_n(&stats_requests, __ATOMIC_RELAXED), 2);
	assert_int_equal(fa_must_find(PI ".port1", "if_packets", NULL)->v[0].derive, 18980928);
}

/* A 256-entry xstats reply on DPDK >= 23.03: from the next read on, hide_zero=true, and the
 * counters it leaves out are dispatched as 0, so the same 256 series go on. */
static void
cut_xstats_switch_to_hide_zero(void **state)
{
	(void)state;
	start_app(&(struct app){.nports = 1,
			  .full_xstats = true,
			  .silent_stats_port = -1,
			  .version = "DPDK 23.11.7"},
		1);
	assert_int_equal(configure(NULL, NULL), 0);
	assert_int_equal(fc_read_all(), 0);
	assert_int_equal(fc_count(PI ".port0", "xstat", NULL), 256);
	assert_int_equal(__atomic_load_n(&hide_zero_requests, __ATOMIC_RELAXED), 0);
	assert_int_equal(fc_logs_matching("asking /ethdev/xstats,0,hide_zero=true from now on"), 1);
	fc_clear_records();
	assert_int_equal(fc_read_all(), 0);
	assert_int_equal(__atomic_load_n(&hide_zero_requests, __ATOMIC_RELAXED), 1);
	/* x0..x255 as before, the zeros among them included; then the counters past the old
	 * cut that hide_zero made room for (x256.., non-zero ones only: a zero one never seen
	 * is not known). */
	for (int i = 0; i < 300; i++) {
		char ti[16];
		const struct fc_value *v;

		snprintf(ti, sizeof(ti), "x%d", i);
		v = fc_find(PI ".port0", "xstat", ti);
		if (i < 256 || i % 3) {
			if (v == NULL)
				fail_msg("no xstat-%s after the switch", ti);
			assert_int_equal(v->v[0].derive, i % 3 ? i : 0);
		} else {
			assert_null(v);
		}
	}
	assert_int_equal(fc_count(PI ".port0", "xstat", NULL), 256 + 30);
	fc_clear_records();
	assert_int_equal(fc_read_all(), 0);
	assert_int_equal(fc_count(PI ".port0", "xstat", NULL), 256 + 30);
	assert_int_equal(fa_must_find(PI ".port0", "xstat", "x255")->v[0].derive, 0);
	assert_int_equal(__atomic_load_n(&hide_zero_requests, __ATOMIC_RELAXED), 2);
}

/* A reply near the size limit may have been cut too (fewer than 256 entries): same switch. */
static void
near_limit_xstats_switch_to_hide_zero(void **state)
{
	size_t full;

	(void)state;
	start_app(&(struct app){.nports = 1,
			  .long_xstats = true,
			  .silent_stats_port = -1,
			  .version = "DPDK 24.11.6"},
		1);
	assert_int_equal(configure(NULL, NULL), 0);
	assert_int_equal(fc_read_all(), 0);
	full = fc_count(PI ".port0", "xstat", NULL);
	assert_true(full > 100 && full < 256);
	assert_int_equal(fa_must_find(PI, "telemetry_requests", "truncated")->v[0].derive, 1);
	assert_int_equal(fc_logs_matching("and the reply may have been cut: asking"), 1);
	fc_clear_records();
	assert_int_equal(fc_read_all(), 0);
	assert_int_equal(__atomic_load_n(&hide_zero_requests, __ATOMIC_RELAXED), 1);
	/* the same names (the zeros as 0), and now room for those past the old cut */
	assert_true(fc_count(PI ".port0", "xstat", NULL) > full);
	assert_int_equal(
		fa_must_find(PI ".port0", "xstat",
			"0000000000000000000000000000000000000000000000000000000000000000000000000"
			"000000000000000000000000002")
			->v[0]
			.derive,
		0);
}

/* XStatsHideZeroFrom: a smaller port switches too; the per-queue values from hidden
 * counters stay (25.11: rx_q<N>_errors are all hidden there). */
static void
hide_zero_from_option_keeps_queue_series(void **state)
{
	(void)state;
	start_app(&(struct app){.nports = 1,
			  .silent_stats_port = -1,
			  .version = "DPDK 25.11.2",
			  .stats_4q = true},
		1);
	assert_int_equal(configure("PerQueue true\nXStatsHideZeroFrom 20", NULL), 0);
	assert_int_equal(fc_read_all(), 0);
	assert_int_equal(fc_count(PI ".port0", "xstat", NULL), 28);
	fc_clear_records();
	assert_int_equal(fc_read_all(), 0);
	assert_int_equal(__atomic_load_n(&hide_zero_requests, __ATOMIC_RELAXED), 1);
	assert_int_equal(fc_count(PI ".port0", "xstat", NULL), 28);
	assert_int_equal(fa_must_find(PI ".port0", "xstat", "rx_missed_errors")->v[0].derive, 0);
	assert_int_equal(fa_must_find(PI ".port0", "queue_errors", "q2")->v[0].derive, 0);
	assert_int_equal(fa_must_find(PI ".port0", "queue_packets", "q2")->v[1].derive, 367904);
	assert_int_equal(fc_count(PI ".port0", "queue_packets", NULL), 4);
	assert_int_equal(fa_must_find(PI, "telemetry_requests", "failed")->v[0].derive, 0);
}

/*
 * DPDK 25.11 (replies recorded from its testpmd): objects in use and available from
 * total_cache_count and common_pool_count, and the fill of the ring that holds the pool's
 * free objects.
 */
static void
mempool_use_and_rings_25_11(void **state)
{
	const struct fc_value *v;

	(void)state;
	start_app(
		&(struct app){.nports = 1, .silent_stats_port = -1, .version = "DPDK 25.11.2"}, 1);
	assert_int_equal(configure(NULL, NULL), 0);
	assert_int_equal(fc_read_all(), 0);
	v = fa_must_find(PI, "mempool_objects", "mb_pool_0");
	assert_true(v->v[0].gauge == 155456 && v->v[1].gauge == 155456);
	v = fa_must_find(PI, "mempool_use", "mb_pool_0");
	assert_int_equal(v->n, 3);
	/* size 155456, common_pool_count 155046, total_cache_count 378 */
	assert_true(v->v[0].gauge == 32);
	assert_true(v->v[1].gauge == 155046 + 378);
	assert_true(v->v[2].gauge == 378);
	v = fa_must_find(PI, "ring_entries", "MP_mb_pool_0");
	assert_true(v->v[0].gauge == 155046 && v->v[1].gauge == 262143);
	assert_int_equal(fa_must_find(PI, "telemetry_requests", "failed")->v[0].derive, 0);
	assert_int_equal(fa_must_find(PI, "telemetry_requests", "discarded")->v[0].derive, 0);
	/* 23.11 has the counts but no ring commands: none is sent. */
	fc_shutdown();
	fs_stop(fa.fs);
	fc_reset();
	fc_load(module_register);
	__atomic_store_n(&ring_list_requests, 0, __ATOMIC_RELAXED);
	start_app(
		&(struct app){.nports = 1, .silent_stats_port = -1, .version = "DPDK 23.11.7"}, 1);
	assert_int_equal(configure(NULL, NULL), 0);
	assert_int_equal(fc_read_all(), 0);
	assert_true(fa_must_find(PI, "mempool_use", "mb_pool_0")->v[0].gauge == 32);
	assert_null(fc_find(PI, "ring_entries", NULL));
	assert_int_equal(__atomic_load_n(&ring_list_requests, __ATOMIC_RELAXED), 0);
}

/*
 * The length of a memzone is read once, at most 32 a read: 100 memzones cost 32, 32, 32, 4
 * requests over four reads, then none; the total goes out once every length is known, the
 * count at every read. The memzone list is read every 6 reads, and the mempool and ring
 * lists again only when it changed (each mempool and ring has a memzone of its own).
 */
static void
memzones_read_once_and_lists_follow_them(void **state)
{
	(void)state;
	start_app(&(struct app){.nports = 1,
			  .silent_stats_port = -1,
			  .version = "DPDK 25.11.2",
			  .nzones = 100},
		1);
	assert_int_equal(configure(NULL, NULL), 0);
	for (unsigned int i = 0; i < 3; i++) {
		fc_clear_records();
		assert_int_equal(fc_read_all(), 0);
		assert_int_equal(
			__atomic_load_n(&memzone_info_requests, __ATOMIC_RELAXED), 32 * (i + 1));
		assert_true(fa_must_find(PI, "count", "memzones")->v[0].gauge == 100);
		assert_null(fc_find(PI, "bytes", "memzones"));
	}
	fc_clear_records();
	assert_int_equal(fc_read_all(), 0);
	assert_int_equal(__atomic_load_n(&memzone_info_requests, __ATOMIC_RELAXED), 100);
	assert_true(fa_must_find(PI, "bytes", "memzones")->v[0].gauge == 100 * 1000 + 99 * 100 / 2);
	/* Memzone 0 freed, 100 reserved: unseen until the list of read 7. */
	the_app.first_zone = 1;
	for (int i = 5; i <= 7; i++) {
		fc_clear_records();
		assert_int_equal(fc_read_all(), 0);
		assert_int_equal(
			__atomic_load_n(&memzone_list_requests, __ATOMIC_RELAXED), i < 7 ? 1 : 2);
		assert_int_equal(
			__atomic_load_n(&mempool_list_requests, __ATOMIC_RELAXED), i < 7 ? 1 : 2);
		assert_int_equal(
			__atomic_load_n(&ring_list_requests, __ATOMIC_RELAXED), i < 7 ? 1 : 2);
		assert_int_equal(__atomic_load_n(&memzone_info_requests, __ATOMIC_RELAXED),
			i < 7 ? 100 : 101);
		fa_must_find(PI, "mempool_objects", "mb_pool_0");
	}
	assert_true(
		fa_must_find(PI, "bytes", "memzones")->v[0].gauge == 100 * 1000 + 100 * 101 / 2);
	assert_int_equal(fa_must_find(PI, "telemetry_requests", "failed")->v[0].derive, 0);
}

/*
 * What memory costs (testpmd 25.11: one heap, 6 memzones, one mempool and its ring): the
 * first read lists everything and reads each memzone's length (13 requests); then 3 a read
 * (heap, mempool, ring), and 5 every 6th read, which lists the heaps and memzones again.
 */
static unsigned int
lists(void)
{
	return __atomic_load_n(&list_requests, __ATOMIC_RELAXED);
}

/*
 * /ethdev/list at most once a second: the reads between use the last list. A port that
 * answers null (gone) has the next read list the ports again; a port added shows within a
 * second.
 */
static void
port_list_once_a_second(void **state)
{
	struct timespec t0, t;

	(void)state;
	start_app(&(struct app){.nports = 2, .silent_stats_port = -1}, 1);
	assert_int_equal(configure(NULL, NULL), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(fc_read_all(), 0);
	assert_int_equal(lists(), 1);
	the_app.nports = 3; /* a port added */
	fc_clear_records();
	assert_int_equal(fc_read_all(), 0);
	clock_gettime(CLOCK_MONOTONIC, &t);
	if (t.tv_sec - t0.tv_sec < 1) { /* else the machine was too slow to tell */
		assert_int_equal(lists(), 1);
		fa_must_find(PI ".port1", "if_packets", NULL);
		assert_null(fc_find(PI ".port2", "if_packets", NULL));
	}
	/* Port 1 has gone: it answers null at this read, the next one lists the ports. */
	the_app.nports = 1;
	assert_int_equal(fc_read_all(), 0);
	fc_clear_records();
	assert_int_equal(fc_read_all(), 0);
	assert_true(lists() >= 2);
	fa_must_find(PI ".port0", "if_packets", NULL);
	assert_null(fc_find(PI ".port1", "if_packets", NULL));
	/* A second later, a port added shows without any failure. */
	the_app.nports = 2;
	for (int i = 0; i < 40 && fc_find(PI ".port1", "if_packets", NULL) == NULL; i++) {
		usleep(100 * 1000);
		fc_clear_records();
		assert_int_equal(fc_read_all(), 0);
	}
	fa_must_find(PI ".port1", "if_packets", NULL);
	/* the one null of the gone port */
	assert_true(fa_must_find(PI, "telemetry_requests", "failed")->v[0].derive == 1);
}

/* A restart between two lists: the read that meets the new process starts over with its
 * port list, so the new process's ports are read at once. */
static void
restart_between_port_lists(void **state)
{
	(void)state;
	start_app(&(struct app){.nports = 1, .silent_stats_port = -1}, 100);
	assert_int_equal(configure(NULL, NULL), 0);
	assert_int_equal(fc_read_all(), 0);
	fs_stop(fa.fs);
	start_app(&(struct app){.nports = 3, .silent_stats_port = -1}, 200);
	fc_clear_records();
	assert_int_equal(fc_read_all(), 0);
	assert_int_equal(lists(), 2);
	assert_int_equal(fa_must_find(PI, "restarts", NULL)->v[0].derive, 1);
	fa_must_find(PI ".port2", "if_packets", NULL);
	assert_int_equal(fc_count(PI ".port0", "if_packets", NULL), 1); /* not twice */
}

/* Before DPDK 23.03 /mempool/info has no count that moves: asked once per mempool list, its
 * values sent at every read. */
static void
mempool_info_once_per_list_before_23_03(void **state)
{
	const struct fc_value *v;
	double size, populated;

	(void)state;
	start_app(&(struct app){.nports = 1, .silent_stats_port = -1}, 1);
	assert_int_equal(configure(NULL, NULL), 0);
	assert_int_equal(fc_read_all(), 0);
	v = fa_must_find(PI, "mempool_objects", "mb_pool_0");
	size = v->v[0].gauge;
	populated = v->v[1].gauge;
	assert_true(size > 0 && populated > 0);
	for (int i = 0; i < 4; i++) {
		fc_clear_records();
		assert_int_equal(fc_read_all(), 0);
		v = fa_must_find(PI, "mempool_objects", "mb_pool_0");
		assert_true(v->v[0].gauge == size && v->v[1].gauge == populated);
	}
	assert_int_equal(__atomic_load_n(&mempool_info_requests, __ATOMIC_RELAXED), 1);
}

static void
memory_requests_per_read(void **state)
{
	static const unsigned int want[] = {13, 3, 3, 3, 3, 3, 5, 3};
	unsigned int before = 0, now;

	(void)state;
	start_app(
		&(struct app){.nports = 1, .silent_stats_port = -1, .version = "DPDK 25.11.2"}, 1);
	assert_int_equal(configure(NULL, NULL), 0);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		assert_int_equal(fc_read_all(), 0);
		now = __atomic_load_n(&memory_requests, __ATOMIC_RELAXED);
		assert_int_equal(now - before, want[i]);
		before = now;
	}
	/* MemoryStats false: none. */
	fc_shutdown();
	fs_stop(fa.fs);
	fc_reset();
	fc_load(module_register);
	__atomic_store_n(&memory_requests, 0, __ATOMIC_RELAXED);
	start_app(
		&(struct app){.nports = 1, .silent_stats_port = -1, .version = "DPDK 25.11.2"}, 1);
	assert_int_equal(configure("MemoryStats false", NULL), 0);
	assert_int_equal(fc_read_all(), 0);
	assert_int_equal(__atomic_load_n(&memory_requests, __ATOMIC_RELAXED), 0);
	assert_null(fc_find(PI, "count", "memzones"));
}

/* A memzone list of 512 entries may have been cut (DPDK's arrays hold 512): no count or
 * total that would be wrong, logged once, and no memzone_info request at all. */
static void
cut_memzone_list_gives_no_memzone_values(void **state)
{
	(void)state;
	start_app(&(struct app){.nports = 1, .silent_stats_port = -1, .nzones = 512}, 1);
	assert_int_equal(configure(NULL, NULL), 0);
	for (int i = 0; i < 2; i++)
		assert_int_equal(fc_read_all(), 0);
	assert_null(fc_find(PI, "count", "memzones"));
	assert_null(fc_find(PI, "bytes", "memzones"));
	assert_int_equal(__atomic_load_n(&memzone_info_requests, __ATOMIC_RELAXED), 0);
	assert_int_equal(fc_logs_matching("/eal/memzone_list may have been cut"), 1);
	fa_must_find(PI, "mempool_objects", "mb_pool_0");
}

/* A memzone list with an entry that is not an id: nothing of it (no count from the rest), one
 * invalid reply; answers about another memzone are discarded, and no total goes out without
 * the lengths. */
static void
bad_memzone_replies_give_no_memzone_values(void **state)
{
	(void)state;
	start_app(&(struct app){.nports = 1, .silent_stats_port = -1, .zones_bad = true}, 1);
	assert_int_equal(configure(NULL, NULL), 0);
	assert_int_equal(fc_read_all(), 0);
	assert_null(fc_find(PI, "count", "memzones"));
	assert_int_equal(fa_must_find(PI, "telemetry_requests", "invalid")->v[0].derive, 1);
	assert_int_equal(__atomic_load_n(&memzone_info_requests, __ATOMIC_RELAXED), 0);
	fa_must_find(PI, "mempool_objects", "mb_pool_0");

	the_app.zones_bad = false;
	the_app.zone_swapped = true;
	fc_clear_records();
	/* The next list is 6 reads on. */
	for (int i = 0; i < 6; i++)
		assert_int_equal(fc_read_all(), 0);
	assert_true(fa_must_find(PI, "count", "memzones")->v[0].gauge == 6);
	assert_null(fc_find(PI, "bytes", "memzones"));
	assert_int_equal(fa_must_find(PI, "telemetry_requests", "discarded")->v[0].derive, 6);
}

/* More mempools than are read at each read: the first 64, and a line that says so, once. */
static void
mempools_over_the_cap_logged_once(void **state)
{
	(void)state;
	start_app(&(struct app){.nports = 1, .silent_stats_port = -1, .npools = 70}, 1);
	assert_int_equal(configure(NULL, NULL), 0);
	for (int i = 0; i < 2; i++)
		assert_int_equal(fc_read_all(), 0);
	fa_must_find(PI, "mempool_objects", "p63");
	assert_null(fc_find(PI, "mempool_objects", "p64"));
	assert_int_equal(fc_logs_matching("70 mempools, more than the 64 read at each read: the "
					  "6 after 'p63' are left out"),
		1);
}

/* A mempool or ring that has gone answers {}: nothing dispatched, nothing counted as bad,
 * and the lists are read again at the next read. */
static void
gone_pool_relists(void **state)
{
	(void)state;
	start_app(
		&(struct app){.nports = 1, .silent_stats_port = -1, .version = "DPDK 25.11.2"}, 1);
	assert_int_equal(configure(NULL, NULL), 0);
	assert_int_equal(fc_read_all(), 0);
	assert_int_equal(__atomic_load_n(&mempool_list_requests, __ATOMIC_RELAXED), 1);
	the_app.pool_gone = true;
	fc_clear_records();
	assert_int_equal(fc_read_all(), 0);
	assert_null(fc_find(PI, "mempool_objects", NULL));
	assert_null(fc_find(PI, "ring_entries", NULL));
	assert_int_equal(__atomic_load_n(&mempool_list_requests, __ATOMIC_RELAXED), 1);
	fc_clear_records();
	assert_int_equal(fc_read_all(), 0);
	assert_int_equal(__atomic_load_n(&mempool_list_requests, __ATOMIC_RELAXED), 2);
	assert_int_equal(__atomic_load_n(&ring_list_requests, __ATOMIC_RELAXED), 2);
	assert_int_equal(fa_must_find(PI, "telemetry_requests", "invalid")->v[0].derive, 0);
	assert_int_equal(fa_must_find(PI, "telemetry_requests", "failed")->v[0].derive, 0);
}

/* An answer about another mempool (DPDK before 26.07 can swap two clients' parameters) is
 * dropped and counted as discarded, not filed under the pool that was asked for. */
static void
answer_for_another_pool_discarded(void **state)
{
	(void)state;
	start_app(&(struct app){.nports = 1, .silent_stats_port = -1, .pool_swapped = true}, 1);
	assert_int_equal(configure(NULL, NULL), 0);
	assert_int_equal(fc_read_all(), 0);
	assert_null(fc_find(PI, "mempool_objects", NULL));
	assert_int_equal(fa_must_find(PI, "telemetry_requests", "discarded")->v[0].derive, 1);
}

/* 22.11 ignores hide_zero and logs a NOTICE per request: never sent there. */
static void
no_hide_zero_on_22_11(void **state)
{
	(void)state;
	start_app(&(struct app){.nports = 1, .full_xstats = true, .silent_stats_port = -1}, 1);
	assert_int_equal(configure("XStatsHideZeroFrom 1", NULL), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(fc_read_all(), 0);
	assert_int_equal(__atomic_load_n(&hide_zero_requests, __ATOMIC_RELAXED), 0);
	assert_int_equal(fc_count(PI ".port0", "xstat", NULL), 3 * 256);
	assert_int_equal(fc_logs_matching("hide_zero"), 0);
}

static void
xstats_include_exclude(void **state)
{
	(void)state;
	start_app(&(struct app){.nports = 1, .silent_stats_port = -1}, 1);
	assert_int_equal(
		configure("XStatsInclude \"rx_*\" \"nothing_*\"\nXStatsExclude \"*_errors\"", NULL),
		0);
	assert_int_equal(fc_read_all(), 0);
	fa_must_find(PI ".port0", "xstat", "rx_good_packets");
	fa_must_find(PI ".port0", "xstat", "rx_q0_bytes");
	assert_null(fc_find(PI ".port0", "xstat", "rx_errors"));
	assert_null(fc_find(PI ".port0", "xstat", "tx_good_packets"));
	assert_int_equal(fc_logs_matching("XStatsInclude \"nothing_*\" matches none"), 1);
	assert_int_equal(fc_read_all(), 0);
	assert_int_equal(fc_logs_matching("XStatsInclude \"nothing_*\" matches none"), 1);
}

static void
cut_reply_dispatched_and_counted(void **state)
{
	(void)state;
	start_app(&(struct app){.nports = 2, .full_xstats = true, .silent_stats_port = -1}, 1);
	assert_int_equal(configure(NULL, NULL), 0);
	assert_int_equal(fc_read_all(), 0);
	assert_int_equal(fc_count(PI ".port0", "xstat", NULL), 256);
	assert_int_equal(fa_must_find(PI ".port0", "xstat", "x254")->v[0].derive, 254);
	assert_int_equal(fa_must_find(PI, "telemetry_requests", "truncated")->v[0].derive, 2);
	assert_int_equal(fc_read_all(), 0);
	assert_int_equal(fa_must_find(PI, "telemetry_requests", "truncated")->v[0].derive, 4);
	/* One line per port and cause, not one per read. */
	assert_int_equal(fc_logs_matching("has a dict of 256 entries"), 2);
	assert_int_equal(fc_logs_matching("port 0: the /ethdev/xstats reply"), 1);
}

static void
null_reply_skips_only_that_command(void **state)
{
	(void)state;
	start_app(&(struct app){.nports = 1, .null_xstats = true, .silent_stats_port = -1}, 1);
	assert_int_equal(configure(NULL, NULL), 0);
	assert_int_equal(fc_read_all(), 0);
	assert_null(fc_find(PI ".port0", "xstat", NULL));
	fa_must_find(PI ".port0", "if_packets", NULL);
	assert_true(fa_must_find(PI, "up", NULL)->v[0].gauge == 1);
	assert_int_equal(fa_must_find(PI, "telemetry_requests", "failed")->v[0].derive, 1);
}

static void
counter_above_int64_is_not_dispatched(void **state)
{
	(void)state;
	start_app(&(struct app){.nports = 1, .huge_counter = true, .silent_stats_port = -1}, 1);
	assert_int_equal(configure("XStats false", NULL), 0);
	assert_int_equal(fc_read_all(), 0);
	assert_null(fc_find(PI ".port0", "if_packets", NULL));
	assert_int_equal(fa_must_find(PI ".port0", "if_octets", NULL)->v[0].derive, 2);
	assert_int_equal(fa_must_find(PI, "telemetry_requests", "invalid")->v[0].derive, 1);
}

/*
 * Counters that are negative or not integers: nothing of those replies is dispatched (heap
 * and mempool sizes used to go out as 0), each is counted, and the first is logged once.
 * Found by the misbehaving-server fault test (tests/integration/test_faults.py).
 */
static void
bad_counters_not_dispatched_logged_once(void **state)
{
	(void)state;
	start_app(&(struct app){.nports = 1, .negative = true, .silent_stats_port = -1}, 1);
	assert_int_equal(configure("XStats false", NULL), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(fc_read_all(), 0);
	assert_null(fc_find(PI ".port0", "if_packets", NULL));
	assert_null(fc_find(PI, "heap_bytes", NULL));
	assert_null(fc_find(PI, "mempool_objects", NULL));
	assert_int_equal(fa_must_find(PI, "telemetry_requests", "invalid")->v[0].derive, 9);
	assert_true(fa_must_find(PI, "up", NULL)->v[0].gauge == 1);
	assert_int_equal(fc_logs_matching("sent an unusable reply to "), 1);
	assert_int_equal(fc_logs_matching("sent an unusable reply to /ethdev/stats,0: "), 1);
}

/* A reply larger than the greeting announced, to a command that is not a port's: logged
 * once (it was not logged at all), counted as failed and truncated. */
static void
oversized_reply_logged_once(void **state)
{
	(void)state;
	start_app(&(struct app){.nports = 1, .oversized_list = true, .silent_stats_port = -1}, 1);
	assert_int_equal(configure(NULL, NULL), 0);
	/* No backoff after a bad reply: each read asks again at once. */
	for (int i = 0; i < 3; i++)
		assert_int_equal(fc_read_all(), 0);
	assert_null(fc_find(PI ".port0", "if_packets", NULL));
	assert_int_equal(fa_must_find(PI, "telemetry_requests", "truncated")->v[0].derive, 3);
	assert_int_equal(fa_must_find(PI, "telemetry_requests", "failed")->v[0].derive, 3);
	assert_int_equal(fc_logs_matching("sent a reply to /ethdev/list larger than the 16384 "
					  "bytes of max_output_len"),
		1);
	assert_int_equal(
		fc_logs_matching("dpdktel_stats plugin: "), 3); /* + version, "collecting" */
}

static void
hung_request_bounded_by_timeout(void **state)
{
	const struct fc_value *d;

	(void)state;
	start_app(&(struct app){.nports = 2, .silent_stats_port = 1}, 1);
	assert_int_equal(configure("Timeout 0.2", NULL), 0);
	assert_int_equal(fc_read_all(), 0);
	d = fa_must_find(PI, "duration", "read");
	/* One request waited 0.2 s; the rest of the read asked nothing more. */
	assert_true(d->v[0].gauge >= 0.19);
	assert_true(d->v[0].gauge < 0.2 + 1.0);
	assert_true(fa_must_find(PI, "up", NULL)->v[0].gauge == 0);
	assert_int_equal(fc_logs_matching("does not answer within the timeout"), 1);
	fa_must_find(PI ".port0", "if_packets", NULL);
	/* Port 1's /ethdev/link_status, when it went out with its xstats (the batch's window
	 * is sized by the learnt costs: on a busy host a cheap reply can look dear, and the link
	 * request then waits for the xstats' reply), was never answered: the connection was
	 * closed with it, and it is counted (before: not at all). */
	assert_true(fa_must_find(PI, "telemetry_requests", "discarded")->v[0].derive <= 1);
	assert_int_equal(fa_must_find(PI, "telemetry_requests", "failed")->v[0].derive, 1);
}

/*
 * An application that stops answering in the middle of a read (kill -STOP) delays that read
 * by one Timeout, not one per request left; the next read asks it again at once (nothing
 * carried over from the failure). Before, every request left in the read waited its own
 * Timeout once the library stopped refusing requests after a timeout.
 */
static void
stopped_application_costs_one_timeout(void **state)
{
	const struct fc_value *d;
	uint64_t sent;
	unsigned int asked;

	(void)state;
	start_app(&(struct app){.nports = 4, .hang_at_stats = true, .silent_stats_port = -1}, 1);
	assert_int_equal(configure("Timeout 0.2", NULL), 0);
	assert_int_equal(fc_read_all(), 0);
	d = fa_must_find(PI, "duration", "read");
	assert_true(d->v[0].gauge >= 0.19);
	assert_true(d->v[0].gauge < 0.2 + 0.15);
	assert_true(fa_must_find(PI, "up", NULL)->v[0].gauge == 0);
	/* "/", "/ethdev/list" ("/mempool/list"...) then the /ethdev/stats,0 that hung: none
	 * after it. */
	asked = fs_requests(fa.fs);
	sent = fa_must_find(PI, "telemetry_requests", "sent")->v[0].derive;
	assert_int_equal(fa_must_find(PI, "telemetry_requests", "failed")->v[0].derive, 1);
	/* It answers again (kill -CONT): the very next read is sent and gets everything. */
	__atomic_store_n(&app_hung, 0, __ATOMIC_SEQ_CST);
	the_app.hang_at_stats = false;
	fc_clear_records();
	assert_int_equal(fc_read_all(), 0);
	assert_true(fs_requests(fa.fs) > asked);
	assert_true(fa_must_find(PI, "telemetry_requests", "sent")->v[0].derive > (derive_t)sent);
	assert_int_equal(fa_must_find(PI, "telemetry_requests", "failed")->v[0].derive, 1);
	assert_true(fa_must_find(PI, "up", NULL)->v[0].gauge == 1);
	fa_must_find(PI ".port3", "if_packets", NULL);
}

/* Requests the library refuses unsent (reconnecting backs off after a refused connect) are
 * not sent: only the refused connect went out. They failed all the same (no answer), and
 * the application is down, logged once. */
static void
refused_unsent_counted_failed_not_sent(void **state)
{
	int64_t sent;

	(void)state;
	start_app(&(struct app){.nports = 1, .silent_stats_port = -1}, 7);
	assert_int_equal(configure(NULL, NULL), 0);
	assert_int_equal(fc_read_all(), 0);
	assert_int_equal(fa_must_find(PI, "telemetry_requests", "failed")->v[0].derive, 0);
	sent = fa_must_find(PI, "telemetry_requests", "sent")->v[0].derive;
	fs_stop(fa.fs);
	fa.fs = NULL;
	/* The first backoff is 25 ms: these reads follow each other well within it. */
	for (int i = 0; i < 3; i++)
		assert_int_equal(fc_read_all(), 0);
	/* One refused connect (its read ends there), then one unsent request per read. */
	assert_int_equal(fa_must_find(PI, "telemetry_requests", "sent")->v[0].derive, sent + 1);
	assert_int_equal(fa_must_find(PI, "telemetry_requests", "failed")->v[0].derive, 3);
	assert_true(fa_must_find(PI, "up", NULL)->v[0].gauge == 0);
	assert_int_equal(fc_logs_matching("is not running (no socket)"), 1);
}

/* An oversized reply is blamed on its own command; the requests after it in the same read
 * are answered and counted as such (the backoff used to refuse them with its error). */
static void
oversized_reply_blames_its_command(void **state)
{
	(void)state;
	start_app(&(struct app){.nports = 1, .oversized_xstats = true, .silent_stats_port = -1}, 1);
	assert_int_equal(configure(NULL, NULL), 0);
	assert_int_equal(fc_read_all(), 0);
	assert_int_equal(fa_must_find(PI, "telemetry_requests", "failed")->v[0].derive, 1);
	assert_int_equal(fa_must_find(PI, "telemetry_requests", "truncated")->v[0].derive, 1);
	assert_int_equal(fc_logs_matching("sent a reply to /ethdev/xstats,0 larger than"), 1);
	assert_int_equal(fc_logs_matching("larger than"), 1);
	fa_must_find(PI ".port0", "link_speed", NULL);
	fa_must_find(PI ".port0", "port_mtu", NULL);
	assert_true(fa_must_find(PI, "up", NULL)->v[0].gauge == 1);
}

static void
restart_gives_one_warning(void **state)
{
	const struct fc_notification *n;

	(void)state;
	start_app(&(struct app){.nports = 1, .silent_stats_port = -1}, 100);
	assert_int_equal(configure(NULL, NULL), 0);
	assert_int_equal(fc_read_all(), 0);
	fs_stop(fa.fs);
	start_app(&(struct app){.nports = 1, .silent_stats_port = -1}, 200);
	assert_int_equal(fc_read_all(), 0);
	assert_int_equal(fc_read_all(), 0);
	assert_int_equal(fc_nnotifications(), 1);
	n = fc_notification_at(0);
	assert_int_equal(n->severity, NOTIF_WARNING);
	assert_string_equal(n->message, "DPDK application edge1 restarted (pid 100 → 200)");
	assert_string_equal(n->plugin, "dpdktel_stats");
	assert_string_equal(n->plugin_instance, PI);
	assert_string_equal(n->type, "restarts");
	assert_string_equal(n->host, "fakehost");
	assert_string_equal(n->meta, "name=edge1;old_state=100;new_state=200;");
	assert_int_equal(fa_must_find(PI, "restarts", NULL)->v[0].derive, 1);
	/* The new process has its own instance_info (the old one goes stale). */
	assert_non_null(strstr(fa_must_find(PI, "instance_info", NULL)->type_instance, ",200,"));
}

/*
 * An application in a pid namespace collectd cannot see into (a sibling container: SO_PEERCRED
 * names no process), pid 1 of its own at every start. instance_info has no program and no
 * host pid, only what it calls itself; no uptime (never the host's pid 1's); said once, at
 * INFO. Restarted as pid 1 again, with a new socket file: one restart, the caches reset.
 * Failed before: instance_info named this machine's pid 1 and uptime was its age, and the
 * restart was never seen (the greeting's pid did not change).
 */
static void
hidden_pid_restart_seen_by_socket_file(void **state)
{
	const struct fc_notification *n;
	char want[160], keep[160];

	(void)state;
	fp_hide_pid(true);
	start_app(
		&(struct app){.nports = 1, .silent_stats_port = -1, .version = "DPDK 24.11.6"}, 1);
	assert_int_equal(configure(NULL, NULL), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(fc_read_all(), 0);
	snprintf(want, sizeof(want), "24.11.6,,,%s,1", DPDKTEL_VERSION);
	fa_must_find(PI, "instance_info", want);
	assert_null(fc_find(PI, "uptime", NULL));
	assert_int_equal(fc_logs_matching("runs in a pid namespace collectd cannot see into"), 1);
	/* Started again: the old socket file kept linked, so that the new one is a new inode. */
	snprintf(keep, sizeof(keep), "%s.old", fa.path);
	assert_int_equal(link(fa.path, keep), 0);
	fs_stop(fa.fs);
	start_app(
		&(struct app){.nports = 1, .silent_stats_port = -1, .version = "DPDK 24.11.6"}, 1);
	assert_int_equal(fc_read_all(), 0);
	assert_int_equal(fc_read_all(), 0);
	unlink(keep);
	assert_int_equal(fc_notifications_matching("restarted", NULL), 1);
	n = fc_notification_at(0);
	assert_string_equal(n->message,
		"DPDK application edge1 restarted (pid 1 in its pid "
		"namespace → 1 in its pid namespace)");
	assert_int_equal(fa_must_find(PI, "restarts", NULL)->v[0].derive, 1);
	assert_int_equal(fc_logs_matching("runs in a pid namespace collectd cannot see into"), 1);
	fp_hide_pid(false);
}

/* The names operators know a port and an application by, as info values of 1. */
static void
info_values_name_ports_and_instance(void **state)
{
	char want[256], comm[32] = "";
	const struct fc_value *v;

	(void)state;
	start_app(
		&(struct app){.nports = 2, .silent_stats_port = -1, .version = "DPDK 24.11.6"}, 1);
	assert_int_equal(configure(NULL, NULL), 0);
	assert_int_equal(fc_read_all(), 0);
	v = fa_must_find(PI ".port0", "port_info", "net_null0,net_null,B2:5B:35:7B:05:53,0");
	assert_int_equal(v->ds_type[0], DS_TYPE_GAUGE);
	assert_true(v->v[0].gauge == 1);
	fa_must_find(PI ".port1", "port_info", "net_null1,net_null,B2:5B:35:7B:05:53,0");
	/* The greeting says pid 1: the program name is that of this machine's pid 1. */
	assert_int_equal(dtp_proc_comm(1, comm, sizeof(comm)), 0);
	assert_true(strlen(comm) > 0);
	snprintf(want, sizeof(want), "24.11.6,%s,1,%s,1", comm, DPDKTEL_VERSION);
	v = fa_must_find(PI, "instance_info", want);
	assert_true(v->v[0].gauge == 1);
	assert_int_equal(fc_count(PI, "instance_info", NULL), 1);
}

/* /ethdev/info is read once per application process, its info value sent at every read:
 * a series written only at the first read would go stale in Prometheus. */
static void
port_info_every_read_info_read_once(void **state)
{
	(void)state;
	start_app(&(struct app){.nports = 2, .silent_stats_port = -1}, 0);
	assert_int_equal(configure(NULL, NULL), 0);
	for (int i = 0; i < 3; i++) {
		fc_clear_records();
		assert_int_equal(fc_read_all(), 0);
		assert_int_equal(fc_count(PI ".port0", "port_info",
					 "net_null0,net_null,B2:5B:35:7B:05:53,0"),
			1);
		assert_int_equal(fc_count(PI ".port1", "port_info",
					 "net_null1,net_null,B2:5B:35:7B:05:53,0"),
			1);
		assert_int_equal(fc_count(PI, "instance_info", NULL), 1);
	}
	assert_int_equal(__atomic_load_n(&info_requests, __ATOMIC_RELAXED), 2);
}

/* A name with ',' or '/' would split into wrong labels or break collectd's identifier (and a
 * csv file name): those characters become '_'. */
static void
port_info_name_sanitized(void **state)
{
	(void)state;
	start_app(&(struct app){.nports = 1,
			  .silent_stats_port = -1,
			  .dev_name = "net_ring0/in,out \\\"x\\\""},
		0);
	assert_int_equal(configure(NULL, NULL), 0);
	assert_int_equal(fc_read_all(), 0);
	fa_must_find(PI ".port0", "port_info", "net_ring0_in_out__x_,net_ring,B2:5B:35:7B:05:53,0");
}

static void
assert_lcore_info(void)
{
	assert_int_equal(fc_count(PI ".lcore0", "lcore_info", "RTE,0,0"), 1);
	assert_int_equal(fc_count(PI ".lcore1", "lcore_info", "RTE,1,0"), 1);
	assert_int_equal(fc_count(PI ".lcore2", "lcore_info", "SERVICE,4-6_9,1"), 1);
	assert_int_equal(fc_count(PI ".lcore2", "lcore_info", NULL), 1);
}

/* Role, CPUs and socket of each lcore from /eal/lcore/info (DPDK >= 23.03), sent at every
 * read, read once per process; the cycles, where the forwarder's /fwd/lcores does not give
 * them, from one /eal/lcore/usage per read (they were one /eal/lcore/info per lcore and
 * read), with the same identifiers and values; an application without a usage callback is
 * asked once. */
static void
lcore_info_read_once_sent_every_read(void **state)
{
	(void)state;
	start_app(&(struct app){.nports = 1,
			  .silent_stats_port = -1,
			  .version = "DPDK 23.11.7",
			  .fwd = true,
			  .eal_lcores = true},
		1);
	assert_int_equal(configure(NULL, NULL), 0);
	for (int i = 0; i < 3; i++) {
		fc_clear_records();
		assert_int_equal(fc_read_all(), 0);
		assert_lcore_info();
	}
	assert_int_equal(__atomic_load_n(&lcore_info_requests, __ATOMIC_RELAXED), 3);
	fc_shutdown();
	fs_stop(fa.fs);
	fc_reset();
	fc_load(module_register);
	__atomic_store_n(&lcore_info_requests, 0, __ATOMIC_RELAXED);
	start_app(&(struct app){.nports = 1,
			  .silent_stats_port = -1,
			  .version = "DPDK 23.11.7",
			  .eal_lcores = true},
		1);
	assert_int_equal(configure(NULL, NULL), 0);
	for (int i = 0; i < 3; i++) {
		const struct fc_value *v;

		fc_clear_records();
		assert_int_equal(fc_read_all(), 0);
		assert_lcore_info();
		v = fa_must_find(
			PI ".lcore1", "lcore_cycles", NULL); /* eal_lcore_info-23.11.json */
		assert_true(v->v[0].derive == 1203383718121 && v->v[1].derive == 2893104918726);
		assert_null(fc_find(PI ".lcore2", "lcore_cycles", NULL));
	}
	assert_int_equal(__atomic_load_n(&lcore_info_requests, __ATOMIC_RELAXED), 3);
	assert_int_equal(__atomic_load_n(&lcore_usage_requests, __ATOMIC_RELAXED), 3);
	fc_shutdown();
	fs_stop(fa.fs);
	fc_reset();
	fc_load(module_register);
	__atomic_store_n(&lcore_usage_requests, 0, __ATOMIC_RELAXED);
	start_app(&(struct app){.nports = 1,
			  .silent_stats_port = -1,
			  .version = "DPDK 23.11.7",
			  .eal_lcores = true,
			  .no_usage_cb = true},
		1);
	assert_int_equal(configure(NULL, NULL), 0);
	for (int i = 0; i < 3; i++) {
		fc_clear_records();
		assert_int_equal(fc_read_all(), 0);
		assert_lcore_info();
	}
	assert_null(fc_find(PI ".lcore1", "lcore_cycles", NULL));
	assert_int_equal(__atomic_load_n(&lcore_usage_requests, __ATOMIC_RELAXED), 1);
}

/* The driver of a PCI device is the kernel driver it is bound to, from sysfs. */
static void
port_driver_from_name_or_sysfs(void **state)
{
	char dir[64], path[256], buf[64];

	(void)state;
	assert_int_equal(test_tmpdir("sysfs", dir, sizeof(dir)), 0);
	snprintf(path, sizeof(path), "%s/bus", dir);
	mkdir(path, 0700);
	strcat(path, "/pci");
	mkdir(path, 0700);
	strcat(path, "/devices");
	mkdir(path, 0700);
	strcat(path, "/0000:3b:00.0");
	mkdir(path, 0700);
	strcat(path, "/driver");
	assert_int_equal(symlink("../../../../bus/pci/drivers/vfio-pci", path), 0);
	dtp_port_driver("0000:3b:00.0", dir, buf, sizeof(buf));
	assert_string_equal(buf, "vfio-pci");
	dtp_port_driver("0000:3b:00.0_representor_vf0", dir, buf, sizeof(buf));
	assert_string_equal(buf, "vfio-pci");
	dtp_port_driver("0000:3b:00.1", dir, buf, sizeof(buf)); /* not bound */
	assert_string_equal(buf, "");
	dtp_port_driver("net_tap0", dir, buf, sizeof(buf));
	assert_string_equal(buf, "net_tap");
	dtp_port_driver("net_virtio_user12", dir, buf, sizeof(buf));
	assert_string_equal(buf, "net_virtio_user");
	dtp_port_driver("dpdk-p0", dir, buf, sizeof(buf));
	assert_string_equal(buf, "");
	assert_int_equal(test_rmdir(dir), 0);
}

static void
vanished_socket_logged_once_and_back(void **state)
{
	char keep[160];

	(void)state;
	start_app(&(struct app){.nports = 1, .silent_stats_port = -1}, 7);
	assert_int_equal(configure(NULL, NULL), 0);
	assert_int_equal(fc_read_all(), 0);
	/* The old socket file kept linked, so that the file system cannot hand its inode to the
	 * next one: a new socket file, the same pid (pid 1 of a container started again). */
	snprintf(keep, sizeof(keep), "%s.old", fa.path);
	assert_int_equal(link(fa.path, keep), 0);
	fs_stop(fa.fs);
	fa.fs = NULL;
	for (int i = 0; i < 3; i++) {
		fc_clear_records();
		assert_int_equal(fc_read_all(), 0);
		assert_true(fa_must_find(PI, "up", NULL)->v[0].gauge == 0);
		assert_null(fc_find(PI ".port0", "if_packets", NULL));
	}
	start_app(&(struct app){.nports = 1, .silent_stats_port = -1}, 7);
	fc_clear_records();
	/* The backoff after three failures is at most a few hundred ms. */
	for (int i = 0; i < 100 && fc_find(PI ".port0", "if_packets", NULL) == NULL; i++) {
		usleep(20000);
		assert_int_equal(fc_read_all(), 0);
	}
	assert_true(fa_must_find(PI, "up", NULL)->v[0].gauge == 1);
	unlink(keep);
	/* Same pid, but a new socket file: another process. */
	assert_int_equal(fc_notifications_matching("restarted", NULL), 1);
}

static void
vanished_socket_log_lines(void **state)
{
	(void)state;
	start_app(&(struct app){.nports = 1, .silent_stats_port = -1}, 7);
	assert_int_equal(configure(NULL, NULL), 0);
	assert_int_equal(fc_read_all(), 0);
	fs_stop(fa.fs);
	fa.fs = NULL;
	for (int i = 0; i < 3; i++)
		assert_int_equal(fc_read_all(), 0);
	assert_int_equal(
		fc_logs_matching("warning dpdktel_stats plugin: DPDK application 'edge1'"), 1);
	assert_int_equal(fc_logs_matching("is not running (no socket)"), 1);
	start_app(&(struct app){.nports = 1, .silent_stats_port = -1}, 7);
	for (int i = 0; i < 100 && fc_logs_matching("answers again") == 0; i++) {
		usleep(20000);
		assert_int_equal(fc_read_all(), 0);
	}
	assert_int_equal(fc_logs_matching("answers again, pid 7"), 1);
}

/*
 * An outage that begins as an exit and turns into something the operator must fix (here
 * a file that is not a socket; as non-root, permission denied) is logged again with the new
 * reason, once; an application that restarted and now refuses collectd showed only as
 * "not running" before. Found by the non-root fault test (tests/integration).
 */
static void
outage_reason_that_needs_fixing_logged(void **state)
{
	FILE *f;

	(void)state;
	start_app(&(struct app){.nports = 1, .silent_stats_port = -1}, 7);
	assert_int_equal(configure(NULL, NULL), 0);
	assert_int_equal(fc_read_all(), 0);
	fs_stop(fa.fs);
	fa.fs = NULL;
	assert_int_equal(fc_read_all(), 0);
	assert_int_equal(fc_logs_matching("is not running (no socket)"), 1);
	f = fopen(fa.path, "w");
	assert_non_null(f);
	fclose(f);
	for (int i = 0; i < 20; i++) {
		usleep(20000); /* past the reconnect backoff */
		assert_int_equal(fc_read_all(), 0);
	}
	assert_int_equal(fc_logs_matching("not a socket"), 1);
	assert_int_equal(
		fc_logs_matching("warning dpdktel_stats plugin: DPDK application 'edge1'"), 2);
	unlink(fa.path);
	start_app(&(struct app){.nports = 1, .silent_stats_port = -1}, 7);
	for (int i = 0; i < 100 && fc_logs_matching("answers again") == 0; i++) {
		usleep(20000);
		assert_int_equal(fc_read_all(), 0);
	}
	assert_int_equal(fc_logs_matching("answers again, pid 7"), 1);
}

static void
app_stats_from_the_forwarder(void **state)
{
	const struct fc_value *v;

	(void)state;
	start_app(&(struct app){.nports = 2, .fwd = true, .silent_stats_port = -1}, 1);
	assert_int_equal(configure(NULL, NULL), 0);
	assert_int_equal(fc_read_all(), 0);
	v = fa_must_find(PI ".lcore1", "lcore_packets", NULL);
	assert_int_equal(v->v[0].derive, 1000);
	assert_int_equal(v->v[1].derive, 990);
	assert_int_equal(fa_must_find(PI ".lcore2", "stalls", NULL)->v[0].derive, 2);
	v = fa_must_find(PI ".lcore1", "lcore_cycles", NULL);
	assert_int_equal(v->v[0].derive, 77);
	assert_int_equal(v->v[1].derive, 100);
	assert_int_equal(fa_must_find(PI ".port1", "if_tx_dropped", NULL)->v[0].derive, 41);
	assert_true(fa_must_find(PI, "uptime", NULL)->v[0].gauge == 12.345);
	/* Busy percent needs two reads; the fake's cycles do not move, so none follows. */
	assert_null(fc_find(PI ".lcore1", "percent", "busy"));
}

/*
 * Drops (docs/metrics.md): every lost packet of a port under one reason, the driver's counters
 * splitting the generic ones (ixgbe here, told by its xstats names), tx_full from the
 * forwarder; and which lcore polls each rx queue.
 */
static void
drops_by_reason(void **state)
{
	(void)state;
	start_app(
		&(struct app){
			.nports = 2, .fwd = true, .ixgbe_xstats = true, .silent_stats_port = -1},
		1);
	assert_int_equal(configure(NULL, NULL), 0);
	assert_int_equal(fc_read_all(), 0);
	assert_int_equal(fa_must_find(PI ".port1", "drops", "rx_missed")->v[0].derive, 4);
	assert_int_equal(
		fa_must_find(PI ".port1", "drops", "rx_missed.rx_priority0_dropped")->v[0].derive,
		701);
	assert_int_equal(
		fa_must_find(PI ".port1", "drops", "rx_missed.rx_priority1_dropped")->v[0].derive,
		300);
	assert_int_equal(fa_must_find(PI ".port0", "drops", "rx_missed")->v[0].derive, 0);
	assert_int_equal(
		fa_must_find(PI ".port0", "drops", "rx_missed.rx_q0_errors")->v[0].derive, 9);
	assert_int_equal(fa_must_find(PI ".port0", "drops", "rx_errors")->v[0].derive, 0);
	assert_int_equal(
		fa_must_find(PI ".port0", "drops", "rx_errors.rx_crc_errors")->v[0].derive, 2);
	assert_int_equal(fa_must_find(PI ".port0", "drops", "tx_errors")->v[0].derive, 0);
	assert_int_equal(fa_must_find(PI ".port1", "drops", "tx_full")->v[0].derive, 41);
	/* ixgbe's rx_nombuf counts failed rearms, no lost packets: not a reason there. */
	assert_null(fc_find(PI ".port0", "drops", "rx_nombuf"));
	assert_true(fa_must_find(PI ".lcore1", "lcore_rx_queue", "0,0")->v[0].gauge == 1);
	assert_true(fa_must_find(PI ".lcore1", "lcore_rx_queue", "1,0")->v[0].gauge == 1);
	/* Drops false: no drops; which lcore polls which queue is the forwarder's (AppStats). */
	fc_shutdown();
	fs_stop(fa.fs);
	fc_reset();
	fc_load(module_register);
	start_app(
		&(struct app){
			.nports = 1, .fwd = true, .ixgbe_xstats = true, .silent_stats_port = -1},
		1);
	assert_int_equal(configure("Drops false", NULL), 0);
	assert_int_equal(fc_read_all(), 0);
	assert_null(fc_find(PI ".port0", "drops", NULL));
	fa_must_find(PI ".lcore1", "lcore_rx_queue", "0,0");
	fa_must_find(PI ".port0", "if_tx_dropped", NULL);
}

/*
 * A port of 32 rx queues: ethdev counts the first 16, and port_queues_counted says so, for
 * the imbalance ratio to divide by (grafana/prometheus/dpdktel.rules.yml). Failed before: no
 * such value, and the ratio divided by all 32 configured queues.
 */
static void
queues_counted_stop_at_16(void **state)
{
	const struct fc_value *v;

	(void)state;
	start_app(&(struct app){.nports = 1, .silent_stats_port = -1, .nq = 32}, 1);
	assert_int_equal(configure("PerQueue true", NULL), 0);
	assert_int_equal(fc_read_all(), 0);
	assert_int_equal(fc_read_all(), 0);
	v = fa_must_find(PI ".port0", "port_queues", NULL);
	assert_true(v->v[0].gauge == 32);
	v = fa_must_find(PI ".port0", "port_queues_counted", NULL);
	assert_true(v->v[0].gauge == 16);
	assert_true(v->v[1].gauge == 1); /* the recorded port's one tx queue */
}

/*
 * Another device takes port 0's id (detached and another attached between two reads: same
 * xstats names, counters from 0): its driver is learnt again. net_af_xdp's rx_nombuf counts
 * no lost packets (left out); net_null's counts each. Failed before: the driver of the first
 * device was kept, and net_null's rx_nombuf was never dispatched.
 */
static void
drops_driver_learnt_again_for_another_device(void **state)
{
	(void)state;
	start_app(
		&(struct app){.nports = 1, .silent_stats_port = -1, .dev_name = "net_af_xdp0"}, 1);
	assert_int_equal(configure(NULL, NULL), 0);
	assert_int_equal(fc_read_all(), 0);
	fa_must_find(PI ".port0", "drops", "rx_missed");
	assert_null(fc_find(PI ".port0", "drops", "rx_nombuf"));
	the_app.dev_name = "net_null0";
	the_app.zero_counters = true;
	fc_clear_records();
	assert_int_equal(fc_read_all(), 0);
	fa_must_find(PI ".port0", "port_info", "net_null0,net_null,B2:5B:35:7B:05:53,0");
	fa_must_find(PI ".port0", "drops", "rx_nombuf");
	assert_null(fc_find(PI ".port0", "drops", "rx_missed.rx_q0_errors"));
}

/*
 * A starting application registers its own commands (and creates its mempools) after the
 * EAL opened the socket: what a read found missing then is looked for again at the next
 * read. Found by the restart fault test: after some forwarder restarts, lcore values never
 * came back.
 */
static void
late_commands_of_a_starting_application(void **state)
{
	pid_t young = test_young_process();

	(void)state;
	assert_true(young > 0);
	start_app(&(struct app){.nports = 1, .silent_stats_port = -1}, young);
	assert_int_equal(configure(NULL, NULL), 0);
	assert_int_equal(fc_read_all(), 0);
	assert_null(fc_find(PI ".lcore1", "lcore_packets", NULL));
	the_app.fwd = true;
	fc_clear_records();
	assert_int_equal(fc_read_all(), 0);
	test_end_process(young);
	assert_int_equal(fa_must_find(PI ".lcore1", "lcore_packets", NULL)->v[0].derive, 1000);
	assert_int_equal(fa_must_find(PI ".port0", "if_tx_dropped", NULL)->v[0].derive, 40);
}

/* An application that is not starting is asked for its commands once per process. */
static void
command_list_read_once_when_not_starting(void **state)
{
	(void)state;
	start_app(&(struct app){.nports = 1, .silent_stats_port = -1}, 1);
	assert_int_equal(configure(NULL, NULL), 0);
	assert_int_equal(fc_read_all(), 0);
	the_app.fwd = true;
	assert_int_equal(fc_read_all(), 0);
	assert_null(fc_find(PI ".lcore1", "lcore_packets", NULL));
}

static void
swapped_answer_refused(void **state)
{
	(void)state;
	start_app(&(struct app){.nports = 2,
			  .fwd = true,
			  .swapped_fwd_port = true,
			  .silent_stats_port = -1},
		1);
	assert_int_equal(configure(NULL, NULL), 0);
	assert_int_equal(fc_read_all(), 0);
	assert_null(fc_find(PI ".port0", "if_tx_dropped", NULL));
	assert_null(fc_find(PI ".port1", "if_tx_dropped", NULL));
	assert_int_equal(fa_must_find(PI, "telemetry_requests", "invalid")->v[0].derive, 2);
}

static void
discovery_finds_sockets(void **state)
{
	char text[256];

	(void)state;
	start_app(&(struct app){.nports = 1, .silent_stats_port = -1}, 1);
	snprintf(text, sizeof(text), "RuntimeDir \"%s\"", fa.dir);
	assert_int_equal(fc_configure("dpdktel_stats", text), 0);
	assert_int_equal(fc_init(), 0);
	assert_int_equal(fc_reads(), 1); /* the discovery callback */
	assert_int_equal(fc_read_all(), 0);
	assert_int_equal(fc_reads(), 2);
	fa_must_find("edge1.port0", "if_packets", NULL);
	assert_int_equal(fc_logs_matching("collecting DPDK application 'edge1'"), 1);
	/* The next scan does not add it twice. */
	assert_int_equal(fc_read_all(), 0);
	assert_int_equal(fc_reads(), 2);
}

/* The instance names the "collecting" log lines give, each into names[] (at most max). */
static size_t
logged_names(const char *needle, char names[][DTP_NAME_MAX], size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < fc_nlogs() && n < max; i++) {
		const char *l = strstr(fc_log_at(i), needle), *end;

		if (l == NULL)
			continue;
		l += strlen(needle);
		end = strchr(l, '\'');
		assert_non_null(end);
		snprintf(names[n++], DTP_NAME_MAX, "%.*s", (int)(end - l), l);
	}
	return n;
}

static void
assert_distinct(char names[][DTP_NAME_MAX], size_t n)
{
	for (size_t i = 0; i < n; i++)
		for (size_t k = i + 1; k < n; k++)
			if (strcmp(names[i], names[k]) == 0) {
				fc_dump_logs();
				fail_msg("two instances named '%s'", names[i]);
			}
}

/*
 * RuntimeDir given twice: the sockets of both dirs are collected, the same prefix in each
 * under a name of its own, and a named dir that does not exist is said once (not at every
 * scan). The second dir reaches the same socket through a symlinked prefix dir.
 */
static void
discovery_reads_every_runtime_dir(void **state)
{
	char text[512], dir2[64], link[128], names[4][DTP_NAME_MAX];

	(void)state;
	start_app(&(struct app){.nports = 1, .silent_stats_port = -1}, 1);
	assert_int_equal(test_tmpdir("dirs", dir2, sizeof(dir2)), 0);
	snprintf(link, sizeof(link), "%s/edge1", dir2);
	snprintf(text, sizeof(text), "%s/edge1", fa.dir);
	assert_int_equal(symlink(text, link), 0);
	snprintf(text, sizeof(text),
		"RuntimeDir \"%s\"\nRuntimeDir \"%s\"\nRuntimeDir \"%s/missing\"", fa.dir, dir2,
		dir2);
	assert_int_equal(fc_configure("dpdktel_stats", text), 0);
	assert_int_equal(fc_init(), 0);
	assert_int_equal(fc_read_all(), 0);
	assert_int_equal(fc_read_all(), 0);
	assert_int_equal(logged_names("collecting DPDK application '", names, 4), 2);
	assert_string_equal(names[0], "edge1");
	assert_string_not_equal(names[1], "edge1");
	fa_must_find("edge1.port0", "if_packets", NULL);
	assert_int_equal(fc_logs_matching("cannot read the DPDK runtime dir"), 1);
	assert_int_equal(fc_logs_matching("/missing"), 1);
	test_rmdir(dir2);
}

/*
 * Discovered names that clash, planted by anyone who may write the runtime dir: each
 * instance still gets a name of its own (renamed by a hash of its socket path, logged once),
 * collectd refuses no callback, and nothing is freed twice. On today's main the prefix
 * "discover" took the name of the discovery callback: collectd refused it and freed the
 * instance, which the plugin then freed again (a double free ASan reports); the others
 * were collected under one name.
 */
static void
clashing_names_made_unique(void **state)
{
	char text[512], names[16][DTP_NAME_MAX];
	size_t n;

	(void)state;
	start_app(&(struct app){.nports = 1, .silent_stats_port = -1}, 1);
	assert_int_equal(test_plant_clashes(fa.dir), 7);
	/* <Instance "discover"> beside Discover true; its socket is under RuntimeDir too. */
	snprintf(text, sizeof(text),
		"Discover true\nRuntimeDir \"%s\"\n<Instance \"discover\">\n SocketPath "
		"\"%s\"\n</Instance>\n",
		fa.dir, fa.path);
	assert_int_equal(fc_configure("dpdktel_stats", text), 0);
	assert_int_equal(fc_init(), 0);
	for (int i = 0; i < 2; i++)
		assert_int_equal(fc_read_all(), 0);
	assert_int_equal(fc_reads(), 1 + 1 + 7); /* discovery, "discover", the planted ones */
	assert_int_equal(fc_logs_matching("cannot register"), 0);
	assert_int_equal(fc_logs_matching("already registered"), 0);
	n = logged_names("collecting DPDK application '", names, 16);
	assert_int_equal(n, 8);
	assert_distinct(names, n);
	/* The configured instance keeps its name; each rename is logged once. */
	fa_must_find("discover.port0", "if_packets", NULL);
	assert_int_equal(fc_logs_matching("is named '"), 5);
	assert_int_equal(fc_logs_matching("is already the name of the <Instance> block for"), 1);
	assert_int_equal(fc_logs_matching("is longer than 63 characters"), 2);
	/* A prefix keeps its own name against a name made from another socket's. */
	assert_int_equal(fc_logs_matching("collecting DPDK application 'a_1' at /tmp/"), 1);
	assert_int_equal(fc_logs_matching("'a_1' at /tmp/dtel-plug-"), 1);
	assert_int_equal(fc_logs_matching("/a_1/dpdk_telemetry.v2 (discovered)"), 1);
	assert_int_equal(fc_logs_matching("'x_port1' at "), 1);
	assert_int_equal(fc_logs_matching("/x_port1/dpdk_telemetry.v2 (discovered)"), 1);
	assert_int_equal(fc_logs_matching("x.port1/dpdk_telemetry.v2 is named 'x_port1_"), 1);
	assert_int_equal(fc_logs_matching("a/dpdk_telemetry.v2:1 is named 'a_1_"), 1);
	for (size_t i = 0; i < n; i++)
		assert_true(strlen(names[i]) < DTP_NAME_MAX);
}

/*
 * File prefixes with a space, a quote or a newline: discovered instances are named as a
 * configured <Instance> must be ([A-Za-z0-9_.-]), each distinct ("a b" and "a_b" both
 * become "a_b": one keeps it, the other is renamed by a hash of its path). Failed before:
 * the names kept the space, the quote and the newline (plugin_instance, csv file names and
 * Prometheus labels with them).
 */
static void
discovered_names_sanitized(void **state)
{
	static const char *const prefixes[] = {"a b", "q'x", "n\nl", "a_b", "ok-1.2"};
	char text[512], names[16][DTP_NAME_MAX], name[DTP_NAME_MAX];
	struct dtel_socket_info si = {.prefix = "we\"ird\tone"};
	size_t n;

	(void)state;
	dtp_discovered_name(&si, NULL, name, sizeof(name));
	assert_string_equal(name, "we_ird_one");
	start_app(&(struct app){.nports = 1, .silent_stats_port = -1}, 1);
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		assert_int_equal(test_plant_stale(fa.dir, prefixes[i], "dpdk_telemetry.v2"), 0);
	snprintf(text, sizeof(text), "Discover true\nRuntimeDir \"%s\"\n", fa.dir);
	assert_int_equal(fc_configure("dpdktel_stats", text), 0);
	assert_int_equal(fc_init(), 0);
	assert_int_equal(fc_read_all(), 0);
	n = logged_names("collecting DPDK application '", names, 16);
	assert_int_equal(n, 6); /* the five, and the fake application's "edge1" */
	assert_distinct(names, n);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(strspn(names[i],
					 "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
					 "0123456789_-."),
			strlen(names[i]));
		assert_true(strlen(names[i]) < DTP_NAME_MAX);
	}
	assert_int_equal(fc_logs_matching("collecting DPDK application 'ok-1.2'"), 1);
	assert_int_equal(fc_logs_matching("collecting DPDK application 'q_x'"), 1);
	assert_int_equal(fc_logs_matching("collecting DPDK application 'n_l'"), 1);
	assert_int_equal(fc_logs_matching("collecting DPDK application 'a_b'"), 1);
	assert_int_equal(fc_logs_matching("collecting DPDK application 'a_b_"), 1);
}

/*
 * An application without ethdev (/ethdev/list null) still gets its device classes, memory,
 * <Command> blocks and uptime, and says so once at INFO. Failed before: the read ended at
 * the null list, with nothing but up (1) and nothing logged.
 */
static void
no_ethdev_reads_the_rest(void **state)
{
	(void)state;
	start_app(&(struct app){.no_ethdev = true, .silent_stats_port = -1}, 1);
	assert_int_equal(configure(NULL,
				 "<Command \"/eal/heap_info\">\n Params \"0\"\n"
				 " Name \"heap\"\n"
				 "</Command>\n"),
		0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(fc_read_all(), 0);
	assert_int_equal(
		fa_must_find(PI, "cryptodev_ops", "cryptodev0.enqueued_count")->v[0].derive,
		320500096);
	fa_must_find(PI, "heap_bytes", "heap0");
	fa_must_find(PI, "gauge", "heap.Heap_size");
	fa_must_find(PI, "uptime", NULL);
	assert_true(fa_must_find(PI, "up", NULL)->v[0].gauge == 1);
	assert_int_equal(fa_must_find(PI, "telemetry_requests", "invalid")->v[0].derive, 0);
	for (size_t i = 0; i < fc_nvalues(); i++)
		assert_null(strstr(fc_value_at(i)->plugin_instance, ".port"));
	assert_int_equal(fc_logs_matching("has no ethdev (/ethdev/list answers null)"), 1);
}

/* Value lists of this identifier dispatched so far. */
static size_t
count_of(const char *pi, const char *type, const char *ti)
{
	return fc_count(pi, type, ti);
}

/*
 * Port facts follow the application. The queues of port 0 change (testpmd "port config all
 * rxq 4", Open vSwitch's n_rxq): its xstats names change, and port_queues says so in the
 * same read, once. Then the device at port 0 is replaced (another MAC, counters from 0):
 * port_info names the new one in the read that sees it, and the old series is dispatched no
 * more. Failed before: /ethdev/info once per process, port_queues and port_info of the first
 * device for ever.
 */
static void
port_facts_follow_the_port(void **state)
{
	char ti[DATA_MAX_NAME_LEN];

	(void)state;
	start_app(&(struct app){.nports = 1, .silent_stats_port = -1}, 1);
	assert_int_equal(configure(NULL, NULL), 0);
	assert_int_equal(fc_read_all(), 0);
	assert_int_equal(fc_read_all(), 0);
	assert_true(fa_must_find(PI ".port0", "port_queues", NULL)->v[0].gauge == 1);
	assert_int_equal(__atomic_load_n(&info_requests, __ATOMIC_RELAXED), 1);
	/* 2 rx queues: names of xstats change. */
	the_app.nq = 2;
	fc_clear_records();
	assert_int_equal(fc_read_all(), 0);
	assert_int_equal(__atomic_load_n(&info_requests, __ATOMIC_RELAXED), 2);
	assert_int_equal(count_of(PI ".port0", "port_queues", NULL), 1);
	assert_true(fa_must_find(PI ".port0", "port_queues", NULL)->v[0].gauge == 2);
	/* Nothing changes: no more /ethdev/info (PortInfoInterval 60). */
	assert_int_equal(fc_read_all(), 0);
	assert_int_equal(__atomic_load_n(&info_requests, __ATOMIC_RELAXED), 2);
	/* Another device at port 0: same names, counters from 0, another name and MAC. */
	the_app.dev_name = "net_null7";
	the_app.mac = "02:00:00:00:00:07";
	the_app.zero_counters = true;
	fc_clear_records();
	assert_int_equal(fc_read_all(), 0);
	assert_int_equal(count_of(PI ".port0", "port_info", NULL), 1);
	snprintf(ti, sizeof(ti), "%s", fa_must_find(PI ".port0", "port_info", NULL)->type_instance);
	assert_string_equal(ti, "net_null7,net_null,02:00:00:00:00:07,0");
	assert_int_equal(
		count_of(PI ".port0", "port_info", "net_null0,net_null,B2:5B:35:7B:05:53,0"), 0);
	assert_int_equal(fc_logs_matching("port 0 is now net_null7,net_null,02:00:00:00:00:07,0 "
					  "(was net_null0,net_null,B2:5B:35:7B:05:53,0)"),
		1);
	fc_clear_records();
	assert_int_equal(fc_read_all(), 0);
	assert_int_equal(count_of(PI ".port0", "port_info", NULL), 1);
	assert_non_null(
		fc_find(PI ".port0", "port_info", "net_null7,net_null,02:00:00:00:00:07,0"));
}

/* A port that left the list and came back is another port: its facts are learnt anew (and
 * no /ethdev/info while it is away). */
static void
port_that_came_back_learnt_anew(void **state)
{
	unsigned int before;

	(void)state;
	start_app(&(struct app){.nports = 2, .silent_stats_port = -1}, 1);
	assert_int_equal(configure(NULL, "PortInfoInterval 86400\n"), 0);
	assert_int_equal(fc_read_all(), 0);
	before = __atomic_load_n(&info_requests, __ATOMIC_RELAXED);
	the_app.nports = 1; /* port 1 detached: null answers, then not listed */
	for (int i = 0; i < 3; i++)
		assert_int_equal(fc_read_all(), 0);
	the_app.nports = 2;
	fc_clear_records();
	/* Until the port list is asked again (once a second). */
	for (uint64_t deadline = test_now_ms() + 5000;
		fc_find(PI ".port1", "port_info", NULL) == NULL && test_now_ms() < deadline;
		usleep(10000))
		assert_int_equal(fc_read_all(), 0);
	fa_must_find(PI ".port1", "port_info", NULL);
	assert_int_equal(__atomic_load_n(&info_requests, __ATOMIC_RELAXED), before + 1);
}

/* PortInfoInterval 0: /ethdev/info at every read. */
static void
port_info_interval_zero_every_read(void **state)
{
	(void)state;
	start_app(&(struct app){.nports = 1, .silent_stats_port = -1}, 1);
	assert_int_equal(configure(NULL, "PortInfoInterval 0\n"), 0);
	for (int i = 0; i < 4; i++)
		assert_int_equal(fc_read_all(), 0);
	assert_int_equal(__atomic_load_n(&info_requests, __ATOMIC_RELAXED), 4);
}

/* A null heap list ends only the heaps: the memzones are listed all the same. Failed
 * before: the memzone list was asked only after a heap list that answered. */
static void
null_heap_list_ends_only_the_heaps(void **state)
{
	(void)state;
	start_app(&(struct app){.nports = 1, .silent_stats_port = -1, .no_heap_list = true}, 1);
	assert_int_equal(configure(NULL, NULL), 0);
	assert_int_equal(fc_read_all(), 0);
	assert_int_equal(fc_read_all(), 0);
	assert_null(fc_find(PI, "heap_bytes", NULL));
	assert_true(fa_must_find(PI, "count", "memzones")->v[0].gauge == 6);
	fa_must_find(PI, "mempool_objects", "mb_pool_0");
}

/* A discovered prefix "discover": on today's main its callback had the name of the
 * discovery callback; collectd refused it and freed the instance, and the plugin freed it
 * again (ASan: double free). */
static void
prefix_discover_collected(void **state)
{
	char text[256];

	(void)state;
	assert_int_equal(test_plant_stale(fa.dir, "discover", "dpdk_telemetry.v2"), 0);
	snprintf(text, sizeof(text), "RuntimeDir \"%s\"", fa.dir);
	assert_int_equal(fc_configure("dpdktel_stats", text), 0);
	assert_int_equal(fc_init(), 0);
	assert_int_equal(fc_read_all(), 0);
	assert_int_equal(fc_read_all(), 0);
	assert_int_equal(fc_reads(), 2);
	assert_int_equal(fc_logs_matching("collecting DPDK application 'discover'"), 1);
	assert_int_equal(fc_logs_matching("cannot register"), 0);
	fa_must_find("discover", "up", NULL);
}

/* collectd frees the user data of a callback it refuses: the plugin must not free it again
 * (ASan reports a double free on today's main). */
static void
refused_registration_freed_once(void **state)
{
	(void)state;
	start_app(&(struct app){.nports = 1, .silent_stats_port = -1}, 1);
	fc_refuse_reads(1);
	assert_int_equal(configure(NULL, NULL), -1);
	assert_int_equal(
		fc_logs_matching("instance 'edge1': cannot register its read callback"), 1);
	assert_int_equal(fc_reads(), 0);
}

/* A live fake application at <fa.dir>/<prefix>/dpdk_telemetry.v2. */
static struct fake_server *
start_at(const char *prefix, long pid)
{
	char p[128];
	struct fake_config cfg = {.handler = app_handler, .arg = &the_app, .pid = pid, .path = p};
	struct fake_server *fs;

	snprintf(p, sizeof(p), "%s/%s", fa.dir, prefix);
	mkdir(p, 0700);
	strcat(p, "/dpdk_telemetry.v2");
	fs = fs_start_path(&cfg);
	assert_non_null(fs);
	return fs;
}

/* Read until @n lines with @needle are logged; 5 s at most. */
static void
read_until_logged(const char *needle, size_t n)
{
	uint64_t deadline = test_now_ms() + 5000;

	while (fc_logs_matching(needle) < n && test_now_ms() < deadline) {
		usleep(20000);
		assert_int_equal(fc_read_all(), 0);
	}
	if (fc_logs_matching(needle) < n) {
		fc_dump_logs();
		fail_msg("wanted %zu log lines with \"%s\"", n, needle);
	}
}

/*
 * Many short-lived discovered applications (per-run file prefixes): each instance is freed
 * RetireAfter after its socket went away, its callback unregistered and its user data freed
 * by collectd; none is left. On today's main they were marked retired and kept forever.
 */
static void
short_lived_applications_retired(void **state)
{
	enum { N = 40 };
	char text[256], prefix[32];

	(void)state;
	the_app = (struct app){.nports = 1, .silent_stats_port = -1};
	snprintf(text, sizeof(text), "RuntimeDir \"%s\"\nRetireAfter 1", fa.dir);
	assert_int_equal(fc_configure("dpdktel_stats", text), 0);
	assert_int_equal(fc_init(), 0);
	for (int i = 0; i < N; i++) {
		struct fake_server *fs;

		snprintf(prefix, sizeof(prefix), "run%d", i);
		fs = start_at(prefix, 1000 + i);
		assert_int_equal(fc_read_all(), 0);
		fs_stop(fs); /* removes its socket, as DPDK does at exit */
	}
	assert_int_equal(fc_logs_matching("collecting DPDK application 'run"), N);
	read_until_logged("RetireAfter: retired", N);
	assert_int_equal(fc_read_all(), 0); /* the read thread frees what was unregistered */
	assert_int_equal(fc_reads(), 1); /* discovery alone */
	assert_int_equal(fc_reads_pending_free(), 0);
	assert_int_equal(fc_logs_matching("has been gone for"), N);
	/* One comes back: discovered anew, under the same name. */
	fa.fs = start_at("run7", 2000);
	assert_int_equal(fc_read_all(), 0);
	assert_int_equal(fc_logs_matching("collecting DPDK application 'run7'"), 2);
	fa_must_find("run7.port0", "if_packets", NULL);
}

/*
 * collectd runs the instances' read callbacks and discovery on several threads at once
 * (fc_read_all_threads): discovery retires instances while their own reads run elsewhere,
 * and collectd frees each only after its read returned. ASan and TSan watch this one.
 */
static void
reads_on_several_threads_while_retiring(void **state)
{
	enum { N = 6 };
	struct fake_server *fs[N];
	char text[256], prefix[16];
	uint64_t deadline;

	(void)state;
	the_app = (struct app){.nports = 2, .silent_stats_port = -1};
	snprintf(text, sizeof(text), "RuntimeDir \"%s\"\nRetireAfter 1", fa.dir);
	assert_int_equal(fc_configure("dpdktel_stats", text), 0);
	assert_int_equal(fc_init(), 0);
	for (int i = 0; i < N; i++) {
		snprintf(prefix, sizeof(prefix), "par%d", i);
		fs[i] = start_at(prefix, 500 + i);
	}
	assert_int_equal(fc_read_all_threads(), 0); /* discovery registers them */
	for (int r = 0; r < 3; r++)
		assert_int_equal(fc_read_all_threads(), 0);
	assert_int_equal(fc_reads(), 1 + N);
	for (int i = 0; i < N; i++) {
		snprintf(prefix, sizeof(prefix), "par%d.port1", i);
		assert_true(fc_find_copy(prefix, "if_packets", NULL, NULL));
	}
	for (int i = 0; i < N; i++)
		fs_stop(fs[i]);
	deadline = test_now_ms() + 5000;
	while ((fc_reads() > 1 || fc_reads_pending_free() > 0) && test_now_ms() < deadline) {
		usleep(20000);
		assert_int_equal(fc_read_all_threads(), 0);
	}
	assert_int_equal(fc_reads(), 1);
	assert_int_equal(fc_reads_pending_free(), 0);
	assert_int_equal(fc_logs_matching("RetireAfter: retired"), N);
}

/* An application that restarts within RetireAfter keeps its instance, counters and restart
 * detection; a stale socket (killed, file left) is retired; configured instances never. */
static void
restart_kept_stale_retired_configured_kept(void **state)
{
	char text[512];

	(void)state;
	start_app(&(struct app){.nports = 1, .silent_stats_port = -1}, 100);
	snprintf(text, sizeof(text),
		"Discover true\nRuntimeDir \"%s\"\nRetireAfter 1\n<Instance \"conf\">\n"
		" SocketPath \"%s/gone/dpdk_telemetry.v2\"\n</Instance>\n",
		fa.dir, fa.dir);
	assert_int_equal(fc_configure("dpdktel_stats", text), 0);
	assert_int_equal(fc_init(), 0);
	/* Killed: its socket file stays, nothing accepts on it. */
	assert_int_equal(test_plant_stale(fa.dir, "stale", "dpdk_telemetry.v2"), 0);
	assert_int_equal(fc_read_all(), 0);
	assert_int_equal(fc_reads(), 4); /* discovery, conf, edge1, stale */
	fs_stop(fa.fs);
	assert_int_equal(fc_read_all(), 0);
	usleep(300000);
	assert_int_equal(fc_read_all(), 0);
	start_app(&(struct app){.nports = 1, .silent_stats_port = -1}, 200);
	read_until_logged("RetireAfter: retired", 1);
	assert_int_equal(fc_read_all(), 0);
	/* Gone, retired; and not found again while it is the same stale file. */
	assert_int_equal(fc_logs_matching("DPDK application 'stale' ("), 2);
	assert_int_equal(fc_logs_matching("collecting DPDK application 'stale'"), 1);
	assert_int_equal(fc_logs_matching("RetireAfter: retired"), 1);
	assert_int_equal(fc_reads(), 3);
	assert_int_equal(fa_must_find(PI, "restarts", NULL)->v[0].derive, 1);
	assert_int_equal(fc_notifications_matching("restarted (pid 100 → 200)", NULL), 1);
	fa_must_find("conf", "up", NULL);
}

/* A rename depends on the socket path alone: the same path gives the same name. */
static void
hashed_names(void **state)
{
	char a[DTP_NAME_MAX], b[DTP_NAME_MAX], c[DTP_NAME_MAX];

	(void)state;
	dtp_hashed_name("a_1", "/run/dpdk/a_1/dpdk_telemetry.v2", 0, a, sizeof(a));
	dtp_hashed_name("a_1", "/run/dpdk/a_1/dpdk_telemetry.v2", 0, b, sizeof(b));
	dtp_hashed_name("a_1", "/run/dpdk/a_1/dpdk_telemetry.v2", 1, c, sizeof(c));
	assert_string_equal(a, b);
	assert_int_equal(strlen(a), 3 + 1 + 8);
	assert_memory_equal(a, "a_1_", 4);
	assert_string_not_equal(a, c);
	dtp_hashed_name(TEST_LONG_A, "/p/" TEST_LONG_A, 0, a, sizeof(a));
	assert_int_equal(strlen(a), DTP_NAME_MAX - 1);
}

/* Configuration matrix ----------------------------------------------------------------- */

struct bad_conf {
	const char *global; /* in the <Plugin> block */
	const char *instance; /* in the <Instance> block */
	const char *message; /* expected in the log */
};

/* Names that would read as another instance's port or lcore: refused in the configuration
 * (bad_configurations_refused), renamed with an underscore when discovered. */
static void
ambiguous_names(void **state)
{
	struct dtel_socket_info si = {.prefix = "lab.port3"};
	char name[DTP_NAME_MAX];

	(void)state;
	assert_true(dtp_name_ambiguous("a.port3"));
	assert_true(dtp_name_ambiguous("x.y.lcore12"));
	assert_false(dtp_name_ambiguous("a.port"));
	assert_false(dtp_name_ambiguous("a.portx"));
	assert_false(dtp_name_ambiguous("a.port3.x"));
	assert_false(dtp_name_ambiguous("lcore1"));
	dtp_discovered_name(&si, NULL, name, sizeof(name));
	assert_string_equal(name, "lab_port3");
	si.index = 2;
	dtp_discovered_name(&si, NULL, name, sizeof(name));
	assert_string_equal(name, "lab.port3_2");
	snprintf(si.prefix, sizeof(si.prefix), "edge.lcore");
	si.index = 0;
	dtp_discovered_name(&si, NULL, name, sizeof(name));
	assert_string_equal(name, "edge.lcore");
}

static void
bad_configurations_refused(void **state)
{
	static const struct bad_conf cases[] = {
		{"Foo 1", NULL, "unknown option 'Foo'"},
		{NULL, "Bar \"x\"", "<Instance \"edge1\">: unknown option 'Bar'"},
		{"BasicStats \"yes\"", NULL,
			"option 'BasicStats' has the invalid value \"yes\": expected true or "
			"false"},
		{"PerQueue 1", NULL, "option 'PerQueue' has the invalid value 1"},
		{"XStats", NULL, "option 'XStats' has the invalid value no value"},
		{"AppStats true false", NULL, "option 'AppStats' has the invalid value true false"},
		{"MemoryStats \"on\"", NULL, "option 'MemoryStats' has the invalid value \"on\""},
		{"Timeout -1", NULL,
			"option 'Timeout' has the out-of-range value -1: expected seconds for one "
			"request, more than 0 and at most 60"},
		{"Timeout 0", NULL, "option 'Timeout' has the out-of-range value 0"},
		{"Timeout \"fast\"", NULL, "option 'Timeout' has the invalid value \"fast\""},
		{"Timeout 61", NULL, "option 'Timeout' has the out-of-range value 61"},
		{"RetireAfter 0", NULL,
			"option 'RetireAfter' has the out-of-range value 0: expected seconds from "
			"1 "
			"to 86400"},
		{"RetireAfter 86401", NULL,
			"option 'RetireAfter' has the out-of-range value 86401"},
		{"RetireAfter \"1m\"", NULL, "option 'RetireAfter' has the invalid value \"1m\""},
		{NULL, "RetireAfter 5",
			"<Instance \"edge1\">: option 'RetireAfter' belongs in the <Plugin "
			"dpdktel_stats> block"},
		{"Ports \"0-3,x\"", NULL,
			"option 'Ports' has the invalid value \"0-3,x\": expected \"all\" or a "
			"list of "
			"port ids below 1024"},
		{"Ports \"3-1\"", NULL, "option 'Ports' has the invalid value \"3-1\""},
		{"Ports \"2000\"", NULL, "option 'Ports' has the out-of-range value \"2000\""},
		{"Ports 3", NULL, "option 'Ports' has the invalid value 3"},
		{"XStatsInclude 5", NULL, "option 'XStatsInclude' has the invalid value 5"},
		{"XStatsExclude \"\"", NULL, "option 'XStatsExclude' has the invalid value \"\""},
		{"XStatsHideZeroFrom 0", NULL,
			"option 'XStatsHideZeroFrom' has the out-of-range value 0: expected a "
			"number "
			"of extended counters from 1 to 256"},
		{"XStatsHideZeroFrom 257", NULL,
			"option 'XStatsHideZeroFrom' has the out-of-range value 257"},
		{"LinkInterval -1", NULL,
			"option 'LinkInterval' has the out-of-range value -1: expected seconds "
			"from 0 (the link at every read) to 86400"},
		{NULL, "LinkInterval 86401",
			"option 'LinkInterval' has the out-of-range value 86401"},
		{"LinkInterval \"1m\"", NULL, "option 'LinkInterval' has the invalid value \"1m\""},
		{"PortInfoInterval -1", NULL,
			"option 'PortInfoInterval' has the out-of-range value -1: expected seconds "
			"from 0 (/ethdev/info at every read) to 86400"},
		{NULL, "PortInfoInterval \"daily\"",
			"option 'PortInfoInterval' has the invalid value \"daily\""},
		{"FilePrefix \"x\"", NULL,
			"option 'FilePrefix' belongs in an <Instance \"name\"> block; did you "
			"forget "
			"to add one?"},
		{"SocketPath \"/x\"", NULL, "option 'SocketPath' belongs in an <Instance"},
		{NULL, "Discover true",
			"option 'Discover' belongs in the <Plugin dpdktel_stats> block"},
		{NULL, "FilePrefix \"x\"", "FilePrefix \"x\" and SocketPath \"/tmp/dtel-plug-"},
		{"Discover \"yes\"", NULL, "option 'Discover' has the invalid value \"yes\""},
		{"DiscoverContainers 1", NULL,
			"option 'DiscoverContainers' has the invalid value 1: expected true or "
			"false"},
		{"DiscoverContainers true\nDiscover false", NULL,
			"DiscoverContainers is true but Discover is false"},
		{NULL, "DiscoverContainers true",
			"option 'DiscoverContainers' belongs in the <Plugin dpdktel_stats> block"},
		{"ContainerLinkDir \"run/links\"", NULL,
			"option 'ContainerLinkDir' has the invalid value \"run/links\": expected "
			"an absolute directory path of at most 42 characters"},
		{"ContainerLinkDir \"/run/a-directory-whose-name-is-far-too-long-for-it\"", NULL,
			"option 'ContainerLinkDir' has the invalid value"},
		{"<Instance \"edge1\">\n SocketPath \"/tmp/other.sock\"\n</Instance>", NULL,
			"a second <Instance \"edge1\">: instance names must be unique"},
		{"<Instance \"other\">\n SocketPath \"/tmp/dtel-plug-x\"\n</Instance>\n"
		 "<Instance \"third\">\n SocketPath \"/tmp/dtel-plug-x\"\n</Instance>",
			NULL,
			"socket /tmp/dtel-plug-x is already collected by <Instance \"other\">"},
		{"<Instance \"a b\">\n</Instance>", NULL,
			"<Instance> has the invalid name \"a b\""},
		{"<Instance \"lab.port3\">\n FilePrefix \"x\"\n</Instance>", NULL,
			"<Instance> has the invalid name \"lab.port3\""},
		{"<Instance \"empty\">\n</Instance>", NULL,
			"<Instance \"empty\">: neither FilePrefix nor SocketPath is set"},
		{"<Instance \"long\">\n FilePrefix "
		 "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"\n</Instance>",
			NULL, "the socket path would be longer than 107 bytes"},
		{"<Instance \"slash\">\n FilePrefix \"a/b\"\n</Instance>", NULL,
			"expected a directory name without '/'"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fc_reset();
		fc_load(module_register);
		if (configure(cases[i].global, cases[i].instance) != -1 ||
			fc_logs_matching(cases[i].message) == 0) {
			fc_dump_logs();
			fail_msg("case %zu (%s | %s): no refusal with \"%s\"", i,
				cases[i].global ? cases[i].global : "",
				cases[i].instance ? cases[i].instance : "", cases[i].message);
		}
		/* Refused in init: nothing registered, and every line carries our prefix. */
		assert_int_equal(fc_reads(), 0);
		assert_int_equal(fc_logs_matching("dpdktel_stats plugin: "), fc_nlogs());
		fc_shutdown();
	}
}

static void
every_option_accepted(void **state)
{
	static const char *const good[] = {
		"BasicStats false",
		"PerQueue true",
		"XStats false",
		"XStatsInclude \"rx_*\" \"tx_*\"",
		"XStatsExclude \"*_bad_*\"",
		"AppStats false",
		"MemoryStats false",
		"Timeout 0.25",
		"Ports \"all\"",
		"Ports \"0-3,8\"",
		"Discover true",
		"RuntimeDir \"/tmp\"",
		"RetireAfter 1",
		"RetireAfter 86400",
		"DiscoverContainers false",
		"DiscoverContainers true\nContainerLinkDir \"/run/dpdktel/containers\"",
		"PortInfoInterval 0",
		"PortInfoInterval 86400",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		fc_reset();
		fc_load(module_register);
		if (configure(good[i], NULL) != 0) {
			fc_dump_logs();
			fail_msg("refused a valid option: %s", good[i]);
		}
		fc_shutdown();
	}
}

static void
several_errors_all_reported(void **state)
{
	(void)state;
	assert_int_equal(configure("Foo 1\nTimeout -2", "Ports \"x\""), -1);
	assert_int_equal(fc_logs_matching("unknown option 'Foo'"), 1);
	assert_int_equal(fc_logs_matching("option 'Timeout'"), 1);
	assert_int_equal(fc_logs_matching("option 'Ports'"), 1);
	assert_int_equal(fc_logs_matching("3 configuration errors"), 1);
}

/* Read the fake app every 100 ms, 50 times; how many reads asked xstats and stats. */
static void
read_50_times(unsigned int *ret_xstats_reads, unsigned int *ret_both)
{
	cdtime_t saved = interval_g;

	interval_g = MS_TO_CDTIME_T(100);
	reset_port_requests();
	*ret_xstats_reads = *ret_both = 0;
	for (int i = 0; i < 50; i++) {
		unsigned int x = __atomic_load_n(&xstats_requests, __ATOMIC_RELAXED);
		unsigned int s = __atomic_load_n(&stats_requests, __ATOMIC_RELAXED);

		assert_int_equal(fc_read_all(), 0);
		x = __atomic_load_n(&xstats_requests, __ATOMIC_RELAXED) - x;
		s = __atomic_load_n(&stats_requests, __ATOMIC_RELAXED) - s;
		*ret_xstats_reads += x > 0;
		*ret_both += x + s > 2; /* two ports: a port asked both (the one probe aside) */
		usleep(100 * 1000);
	}
	interval_g = saved;
}

/*
 * ReadLoad: a port's xstats 20 ms, its stats nothing (mlx5's ethtool statistics against a
 * software sum), two ports, a 100 ms Interval, ReadLoad 10 %: the xstats of every read would
 * take 40 % of a core. The basic counters go at every read from /ethdev/stats, each port's
 * xstats every few reads (never both for a port in one read), and the xstats' values carry
 * their own interval, so that collectd keeps them in between. Before, every read stretched
 * to 0.4 s, and the 1-minute rates of every counter with it.
 */
static void
reads_in_tiers(void **state)
{
	struct app a = {.nports = 2, .silent_stats_port = -1, .xstats_delay_ms = 20};
	unsigned int xreads, both;
	const struct fc_value *v;
	double iv, xiv;

	(void)state;
	start_app(&a, getpid());
	assert_int_equal(configure("ReadLoad 10", NULL), 0);
	read_50_times(&xreads, &both);
	iv = fa_must_find(PI, "poll_interval", "read")->v[0].gauge;
	xiv = fa_must_find(PI, "poll_interval", "xstats")->v[0].gauge;
	if (iv > 0.15)
		fail_msg("poll_interval-read %g s: expected the Interval, 0.1 s", iv);
	if (xiv < 0.3 || xiv > 1.5)
		fail_msg("poll_interval-xstats %g s: expected about 0.4 s", xiv);
	if (xreads > 35 || xreads < 8)
		fail_msg("%u of 50 reads asked xstats: expected about 15", xreads);
	assert_true(both <= 1);
	/* Every read dispatched the basic counters, at the Interval. */
	assert_true(fc_count(PI ".port0", "if_packets", NULL) >= 45);
	v = fa_must_find(PI ".port0", "if_packets", NULL);
	assert_true(CDTIME_T_TO_DOUBLE(v->interval) < 0.15);
	/* An extended counter carries the xstats' interval. */
	v = fa_must_find(PI ".port0", "xstat", "rx_good_packets");
	assert_true(CDTIME_T_TO_DOUBLE(v->interval) > 0.25);
	assert_int_equal(fc_logs_matching("read every"), 0);
}

/*
 * Where /ethdev/stats costs as much as /ethdev/xstats there is nothing to gain: every read
 * asks the xstats alone, and the reads run less often than the Interval within ReadLoad, say
 * so once, and their values carry the interval in force.
 */
static void
budget_stretches_the_reads(void **state)
{
	struct app a = {
		.nports = 2, .silent_stats_port = -1, .xstats_delay_ms = 20, .stats_delay_ms = 20};
	unsigned int reads, both;
	const struct fc_value *v;
	double iv;

	(void)state;
	start_app(&a, getpid());
	assert_int_equal(configure("ReadLoad 10", NULL), 0);
	read_50_times(&reads, &both);
	v = fa_must_find(PI, "poll_interval", "read");
	iv = v->v[0].gauge;
	/* 40 ms a read (and what the fake spends around it), 10 %: a read every 0.4 s or
	 * more, once the costs are learnt. */
	if (iv < 0.3 || iv > 2)
		fail_msg("poll_interval-read %g s: expected 0.4 s or a little more", iv);
	/* Three reads at the Interval (costs are learnt first), then every 0.4 s or so. */
	if (reads > 25 || reads < 6)
		fail_msg("%u of 50 callbacks read the ports: expected about 15", reads);
	/* A port value carries the interval in force: collectd does not take it for missing. */
	v = fa_must_find(PI ".port0", "if_packets", NULL);
	assert_true(CDTIME_T_TO_DOUBLE(v->interval) > 0.25);
	/* The health values go out at every callback, with the plugin's interval; between two
	 * reads `up` follows a cheap request. */
	assert_true(fc_count(PI, "up", NULL) >= 48);
	assert_int_equal(fc_logs_matching("nearly what"), 1);
	assert_int_equal(fc_logs_matching("read every"), 1);
	assert_int_equal(fc_logs_matching("ReadLoad 10 %"), 1);
}

/* Port requests of one read: xstats and stats. */
static void
one_read(unsigned int *ret_xstats, unsigned int *ret_stats)
{
	unsigned int x = __atomic_load_n(&xstats_requests, __ATOMIC_RELAXED);
	unsigned int s = __atomic_load_n(&stats_requests, __ATOMIC_RELAXED);

	assert_int_equal(fc_read_all(), 0);
	*ret_xstats = __atomic_load_n(&xstats_requests, __ATOMIC_RELAXED) - x;
	*ret_stats = __atomic_load_n(&stats_requests, __ATOMIC_RELAXED) - s;
}

/*
 * At a long Interval the warm-up is the first read alone: it asks every port's xstats and,
 * once, /ethdev/stats, and the second read is already in tiers. Four ports whose xstats cost
 * 20 ms, Interval 10 s, ReadLoad 0.5 % (50 ms a read: the tiers leave room for a loaded
 * machine's slower replies): before, the first three reads each asked every port's xstats
 * (30 s at 1.6 times the budget).
 */
static void
long_interval_warms_up_in_one_read(void **state)
{
	struct app a = {.nports = 4, .silent_stats_port = -1, .xstats_delay_ms = 20};
	cdtime_t saved = interval_g;
	unsigned int x, s;

	(void)state;
	start_app(&a, getpid());
	interval_g = TIME_T_TO_CDTIME_T(10);
	assert_int_equal(configure("ReadLoad 0.5", NULL), 0);
	reset_port_requests();
	one_read(&x, &s);
	assert_int_equal(x, 4);
	assert_int_equal(s, 1);
	for (int i = 0; i < 3; i++) {
		one_read(&x, &s);
		if (x >= 4 || x + s != 4)
			fail_msg(
				"read %d asked %u xstats and %u stats: expected the basic counters "
				"of the 4 ports, not all of them from their xstats",
				i + 2, x, s);
	}
	interval_g = saved;
}

/* MaxAppLoad, set as before the budgets were split, still starts and says what it means. */
static void
max_app_load_still_accepted(void **state)
{
	struct app a = {.nports = 1, .silent_stats_port = -1};

	(void)state;
	start_app(&a, getpid());
	assert_int_equal(configure("MaxAppLoad 1", NULL), 0);
	assert_int_equal(fc_logs_matching("MaxAppLoad 1 caps what both dpdktel plugins"), 1);
	assert_int_equal(fc_read_all(), 0);
	assert_true(fc_count(PI, "up", NULL) >= 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(values_for_recorded_replies, setup, teardown),
		cmocka_unit_test_setup_teardown(reads_in_tiers, setup, teardown),
		cmocka_unit_test_setup_teardown(budget_stretches_the_reads, setup, teardown),
		cmocka_unit_test_setup_teardown(
			long_interval_warms_up_in_one_read, setup, teardown),
		cmocka_unit_test_setup_teardown(max_app_load_still_accepted, setup, teardown),
		cmocka_unit_test_setup_teardown(
			info_values_name_ports_and_instance, setup, teardown),
		cmocka_unit_test_setup_teardown(
			port_info_every_read_info_read_once, setup, teardown),
		cmocka_unit_test_setup_teardown(port_info_name_sanitized, setup, teardown),
		cmocka_unit_test(port_driver_from_name_or_sysfs),
		cmocka_unit_test_setup_teardown(
			lcore_info_read_once_sent_every_read, setup, teardown),
		cmocka_unit_test_setup_teardown(one_read_time_and_no_duplicates, setup, teardown),
		cmocka_unit_test_setup_teardown(
			read_dispatches_after_its_last_request, setup, teardown),
		cmocka_unit_test_setup_teardown(ports_option_filters, setup, teardown),
		cmocka_unit_test_setup_teardown(instance_overrides_global, setup, teardown),
		cmocka_unit_test_setup_teardown(per_queue_only_queues_that_moved, setup, teardown),
		cmocka_unit_test_setup_teardown(one_counter_request_per_port, setup, teardown),
		cmocka_unit_test_setup_teardown(stats_where_xstats_do_not_serve, setup, teardown),
		cmocka_unit_test_setup_teardown(drops_by_reason, setup, teardown),
		cmocka_unit_test_setup_teardown(queues_counted_stop_at_16, setup, teardown),
		cmocka_unit_test_setup_teardown(
			drops_driver_learnt_again_for_another_device, setup, teardown),
		cmocka_unit_test_setup_teardown(
			per_queue_same_identifiers_from_xstats, setup, teardown),
		cmocka_unit_test_setup_teardown(per_queue_without_xstats_option, setup, teardown),
		cmocka_unit_test_setup_teardown(cut_xstats_switch_to_hide_zero, setup, teardown),
		cmocka_unit_test_setup_teardown(
			near_limit_xstats_switch_to_hide_zero, setup, teardown),
		cmocka_unit_test_setup_teardown(
			hide_zero_from_option_keeps_queue_series, setup, teardown),
		cmocka_unit_test_setup_teardown(no_hide_zero_on_22_11, setup, teardown),
		cmocka_unit_test_setup_teardown(xstats_include_exclude, setup, teardown),
		cmocka_unit_test_setup_teardown(cut_reply_dispatched_and_counted, setup, teardown),
		cmocka_unit_test_setup_teardown(
			null_reply_skips_only_that_command, setup, teardown),
		cmocka_unit_test_setup_teardown(
			counter_above_int64_is_not_dispatched, setup, teardown),
		cmocka_unit_test_setup_teardown(
			bad_counters_not_dispatched_logged_once, setup, teardown),
		cmocka_unit_test_setup_teardown(oversized_reply_logged_once, setup, teardown),
		cmocka_unit_test_setup_teardown(hung_request_bounded_by_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(
			stopped_application_costs_one_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(
			refused_unsent_counted_failed_not_sent, setup, teardown),
		cmocka_unit_test_setup_teardown(
			oversized_reply_blames_its_command, setup, teardown),
		cmocka_unit_test_setup_teardown(restart_gives_one_warning, setup, teardown),
		cmocka_unit_test_setup_teardown(
			hidden_pid_restart_seen_by_socket_file, setup, teardown),
		cmocka_unit_test_setup_teardown(port_list_once_a_second, setup, teardown),
		cmocka_unit_test_setup_teardown(restart_between_port_lists, setup, teardown),
		cmocka_unit_test_setup_teardown(
			mempool_info_once_per_list_before_23_03, setup, teardown),
		cmocka_unit_test_setup_teardown(
			vanished_socket_logged_once_and_back, setup, teardown),
		cmocka_unit_test_setup_teardown(vanished_socket_log_lines, setup, teardown),
		cmocka_unit_test_setup_teardown(
			outage_reason_that_needs_fixing_logged, setup, teardown),
		cmocka_unit_test_setup_teardown(app_stats_from_the_forwarder, setup, teardown),
		cmocka_unit_test_setup_teardown(swapped_answer_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(
			late_commands_of_a_starting_application, setup, teardown),
		cmocka_unit_test_setup_teardown(
			command_list_read_once_when_not_starting, setup, teardown),
		cmocka_unit_test_setup_teardown(discovery_reads_every_runtime_dir, setup, teardown),
		cmocka_unit_test_setup_teardown(discovery_finds_sockets, setup, teardown),
		cmocka_unit_test(ambiguous_names),
		cmocka_unit_test_setup_teardown(clashing_names_made_unique, setup, teardown),
		cmocka_unit_test_setup_teardown(discovered_names_sanitized, setup, teardown),
		cmocka_unit_test_setup_teardown(no_ethdev_reads_the_rest, setup, teardown),
		cmocka_unit_test_setup_teardown(
			null_heap_list_ends_only_the_heaps, setup, teardown),
		cmocka_unit_test_setup_teardown(port_facts_follow_the_port, setup, teardown),
		cmocka_unit_test_setup_teardown(port_that_came_back_learnt_anew, setup, teardown),
		cmocka_unit_test_setup_teardown(
			port_info_interval_zero_every_read, setup, teardown),
		cmocka_unit_test(hashed_names),
		cmocka_unit_test_setup_teardown(short_lived_applications_retired, setup, teardown),
		cmocka_unit_test_setup_teardown(
			reads_on_several_threads_while_retiring, setup, teardown),
		cmocka_unit_test_setup_teardown(
			restart_kept_stale_retired_configured_kept, setup, teardown),
		cmocka_unit_test_setup_teardown(prefix_discover_collected, setup, teardown),
		cmocka_unit_test_setup_teardown(refused_registration_freed_once, setup, teardown),
		cmocka_unit_test_setup_teardown(bad_configurations_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(every_option_accepted, setup, teardown),
		cmocka_unit_test_setup_teardown(several_errors_all_reported, setup, teardown),
		cmocka_unit_test_setup_teardown(mempool_use_and_rings_25_11, setup, teardown),
		cmocka_unit_test_setup_teardown(
			memzones_read_once_and_lists_follow_them, setup, teardown),
		cmocka_unit_test_setup_teardown(
			cut_memzone_list_gives_no_memzone_values, setup, teardown),
		cmocka_unit_test_setup_teardown(mempools_over_the_cap_logged_once, setup, teardown),
		cmocka_unit_test_setup_teardown(gone_pool_relists, setup, teardown),
		cmocka_unit_test_setup_teardown(memory_requests_per_read, setup, teardown),
		cmocka_unit_test_setup_teardown(
			bad_memzone_replies_give_no_memzone_values, setup, teardown),
		cmocka_unit_test_setup_teardown(answer_for_another_pool_discarded, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
