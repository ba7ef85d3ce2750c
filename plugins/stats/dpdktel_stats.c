/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdktel_stats: port, queue, extended and application counters of every DPDK application
 * on the host, read from its telemetry v2 socket (docs/dpdktel_stats.md, docs/metrics.md).
 *
 * Each instance (an <Instance> block, or a socket found under RuntimeDir) has its own read
 * callback, so a hung application delays only itself, by at most Timeout per request. All
 * requests go through libdpdktel's shared session for the socket: one connection per socket
 * for the whole collectd process, one request at a time (DPDK 22.11's strtok race). A read
 * never fails towards collectd (that would make collectd back off for up to a day): an
 * application that does not answer is reported as up 0.
 *
 * What lives where (plugins/stats/):
 *   dpdktel_stats.c  this file: collectd glue only (options, config, init, the read
 *                    callback, shutdown, registration)
 *   instance.h       struct stats_instance, and what each file below gives the others
 *   instance.c       instances, configured or discovered (RuntimeDir): start, retirement
 *   read.c           the read orchestration: what is due, the port list, the prefetch, the
 *                    ports, the rest, the health values, the next read within the budget
 *   request.c        requests of a read (prefetched replies first) and value lists
 *   port.c           a port's counter sources in order, basic and per-queue counters
 *   port_info.c      /ethdev/info: the port's facts (port_info)
 *   xstats.c         /ethdev/xstats: which counters, DERIVE or GAUGE, hide_zero
 *   port_drops.c     drops by reason for a port; drops.c/.h the attribution itself, pure,
 *                    from drops.tsv (compiled by drops_table.py)
 *   lcores.c         /fwd/lcores, /eal/lcore/info, /eal/lcore/usage
 *   memory.c         MemoryStats: heaps and mempools
 *   devices.c        cryptodevs, dmadevs, eventdevs, rawdevs
 *   command.c        <Command> blocks: any telemetry command's numbers
 * Shared with dpdktel_events: plugins/common/ (dtp.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "instance.h"

static const struct stats_opts defaults = {
	.basic = true,
	.per_queue = false,
	.xstats = true,
	.app = true,
	.memory = true,
	.drops = true,
	.timeout = 0.5,
	.hide_zero_from = DTEL_DICT_MAX_ENTRIES,
	.port_info_interval = 60,
	.ports.all = true,
	.xgauge = STATS_XSTATS_GAUGE_DEFAULT,
	.devices = STATS_DEVICES_DEFAULTS,
	.read_load = DTP_LOAD_DEFAULT,
	.max_app_load = DTP_MAX_APP_LOAD_UNSET,
	.xstats_max_age = 120,
};

#define OPT(...) DTP_OPT(stats_opts, __VA_ARGS__)
#define BOOL_OPT(...) DTP_BOOL_OPT(stats_opts, __VA_ARGS__)

static const struct dtp_option options[] = {
	BOOL_OPT("BasicStats", basic),
	BOOL_OPT("PerQueue", per_queue),
	BOOL_OPT("XStats", xstats),
	OPT("XStatsInclude", DTP_OPT_GLOBS, include, 0, 0,
		"one or more shell patterns such as \"rx_*_packets\""),
	OPT("XStatsExclude", DTP_OPT_GLOBS, exclude, 0, 0,
		"one or more shell patterns such as \"*_bad_*\""),
	OPT("XStatsGauge", DTP_OPT_GLOBS, xgauge, 0, 0,
		"one or more shell patterns such as \"*_available\""),
	{"Command", DTP_OPT_CUSTOM, offsetof(struct stats_opts, commands),
		sizeof(struct stats_cmds), DTP_OPT_GLOBAL | DTP_OPT_INSTANCE, 0, 0,
		"a <Command \"/path\"> block", stats_commands_parse, stats_commands_free},
	OPT("XStatsHideZeroFrom", DTP_OPT_UINT, hide_zero_from, 1, DTEL_DICT_MAX_ENTRIES,
		"a number of extended counters from 1 to 256"),
	OPT("LinkInterval", DTP_OPT_SECONDS, link_interval, 0, 86400,
		"seconds from 0 (the link at every read) to 86400"),
	OPT("PortInfoInterval", DTP_OPT_SECONDS, port_info_interval, 0, 86400,
		"seconds from 0 (/ethdev/info at every read) to 86400"),
	BOOL_OPT("AppStats", app),
	BOOL_OPT("MemoryStats", memory),
	BOOL_OPT("Drops", drops),
	DTP_TIMEOUT_OPT(stats_opts),
	OPT("ReadLoad", DTP_OPT_NUMBER, read_load, 0, 50,
		"a percentage of one core from 0.01 to 50, or 0 for no budget: the most time the "
		"application's telemetry thread may spend answering this plugin's reads"),
	DTP_MAX_APP_LOAD_OPT(stats_opts),
	OPT("XStatsMaxAge", DTP_OPT_SECONDS, xstats_max_age, 1, 86400,
		"seconds from 1 to 86400: how old extended counters may get when the budget reads "
		"them less often than the basic ones"),
	DTP_PORTS_OPT(stats_opts),
	STATS_DEVICES_OPTS(stats_opts, devices),
};

struct dtp_conf st_conf;

int
stats_read(user_data_t *ud)
{
	struct stats_instance *si = ud->data;
	cdtime_t now = cdtime();
	uint64_t s0 = si->t.service_ns;

	if (!st_read_due(si, now)) {
		/* Between two stretched reads, whether the application answers still follows
		 * it: one cheap request (the smallest reply of every release). */
		st_read_alive(si);
		st_dispatch_health(si, now, -1);
		return 0;
	}
	st_read_all(si, now);
	st_plan_next(si, now, si->t.service_ns - s0);
	st_dispatch_health(si, now, CDTIME_T_TO_DOUBLE(cdtime() - now));
	return 0;
}

/* collectd callbacks ----------------------------------------------------------------------- */

/* The conf starts at the first <Plugin> block, or in init for <LoadPlugin> alone. */
#define CONF_ARGS PLUGIN, options, sizeof(options) / sizeof(options[0]), &defaults, sizeof(defaults)

static int
stats_config(oconfig_item_t *ci)
{
	return dtp_conf_config(&st_conf, CONF_ARGS, ci);
}

/* Every type the plugin dispatches: init refuses to start when one is not defined (ours
 * come from dpdktel.types.db; without it every value would be refused, a line at a time). */
static const char *const types[] = {"if_packets", "if_octets", "if_errors", "if_rx_dropped",
	"if_tx_dropped", "xstat", "queue_packets", "queue_octets", "queue_errors", "link_speed",
	"port_queues", "port_mtu", "port_info", "lcore_packets", "lcore_info", "stalls",
	"lcore_cycles", "percent", "heap_bytes", "mempool_objects", "mempool_use", "ring_entries",
	"count", "bytes", "uptime", "instance_info", "up", "telemetry_requests", "reconnects",
	"restarts", "duration", "xstat_gauge", "gauge", "derive", "app_load", "poll_interval",
	"drops", "lcore_rx_queue"};

static int
stats_init(void)
{
	LOG(LOG_INFO, "dpdktel %s (libdpdktel %s)", DPDKTEL_VERSION, dtel_version());
	/* <LoadPlugin> without a <Plugin> block: discover with the defaults. */
	if (dtp_conf_init(&st_conf, CONF_ARGS) < 0)
		return -1;
	if (dtp_conf_validate(&st_conf) < 0 ||
		stats_commands_check_types(&st_conf, offsetof(struct stats_opts, commands)) < 0) {
		LOG(LOG_ERR, "%d configuration error%s (see above): not collecting anything",
			st_conf.errors, st_conf.errors == 1 ? "" : "s");
		return -1;
	}
	if (!dtp_types_defined(
		    PLUGIN, types, sizeof(types) / sizeof(types[0]), "docs/dpdktel_stats.md") ||
		!stats_devices_types_defined(PLUGIN))
		return -1;
	dtp_say_max_app_load(
		PLUGIN, dtp_conf_max_app_load(&st_conf, offsetof(struct stats_opts, max_app_load)));
	for (size_t i = 0; i < st_conf.ninst; i++)
		if (st_instance_start(st_conf.inst[i].name, st_conf.inst[i].socket_path,
			    st_conf.inst[i].opts, false) < 0)
			return -1;
	if (st_conf.discover &&
		plugin_register_complex_read(PLUGIN, PLUGIN, st_discover_read, 0, NULL) != 0)
		return -1;
	return 0;
}

static int
stats_shutdown(void)
{
	/* collectd has stopped the read threads and freed the instances with their read
	 * callbacks by now: nothing points into the conf any more. */
	dtp_instances_forget(&st_instances);
	dtp_conf_free(&st_conf);
	return 0;
}

__attribute__((visibility("default"))) void
module_register(void)
{
	plugin_register_complex_config(PLUGIN, stats_config);
	plugin_register_init(PLUGIN, stats_init);
	plugin_register_shutdown(PLUGIN, stats_shutdown);
}
