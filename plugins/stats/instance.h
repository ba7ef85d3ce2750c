/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One application as dpdktel_stats sees it (struct stats_instance), and what each file of
 * plugins/stats/ gives the others. See dpdktel_stats.c for what lives where.
 */
#ifndef DTEL_STATS_INSTANCE_H
#define DTEL_STATS_INSTANCE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/dtp.h"
#include "command.h"
#include "devices.h"
#include "port_drops.h"
#include "memory.h"

#define PLUGIN "dpdktel_stats"
#define LOG(level, ...) DTP_LOG(level, PLUGIN, __VA_ARGS__)

/* Configuration ---------------------------------------------------------------------------- */

struct stats_opts {
	bool basic, per_queue, xstats, app, memory;
	bool drops; /* Drops: port_drops.c */
	unsigned int hide_zero_from; /* xstats of a full reply from which to ask hide_zero=true */
	double timeout;
	double link_interval; /* seconds between two /ethdev/link_status of a port; 0: every read */
	double port_info_interval; /* seconds between two /ethdev/info of a port; 0: every read */
	struct dtp_ports ports;
	struct dtp_globs include, exclude;
	struct dtp_globs xgauge; /* XStatsGauge */
	struct stats_cmds commands; /* <Command> blocks */
	struct stats_devices_opts devices;
	double read_load; /* ReadLoad: percent of one core for the reads, 0: none */
	double max_app_load; /* MaxAppLoad: both plugins together, < 0: not set, 0: none */
	double xstats_max_age; /* XStatsMaxAge: seconds extended counters may get old */
};

/* Runtime state ------------------------------------------------------------------------- */

/* Why a reply may have been cut; each is logged once per port. */
enum cut_cause { CUT_NEAR_LIMIT, CUT_DICT_FULL, CUT_ARRAY_FULL, CUT_CAUSES };

struct port_state {
	unsigned int id; /* first: dtp_slot() */
	bool seen; /* in the application's last /ethdev/list */
	uint64_t queues_moved; /* bit q: queue q moved a packet at some point */
	bool have_info;
	bool have_counts; /* ipackets and opackets below are known */
	struct dtel_port_info info; /* see read_info() for when it is read again */
	char info_ti[DATA_MAX_NAME_LEN]; /* port_info's type instance, made from info */
	unsigned int cut_logged; /* bit per enum cut_cause */
	bool no_queues_logged; /* PerQueue found no per-queue counters for the port: logged */
	bool hide_zero; /* ask /ethdev/xstats with hide_zero=true (DPDK >= 23.03) */
	struct dtel_xstats known; /* with hide_zero: every counter of the port seen so far */
	bool basic_done, queues_done; /* this read: dispatched from the xstats already */
	/* What XStats does with each counter of the last reply (enum xstat_kind), kept while
	 * the reply has the same names (their hash): see xstat_kinds(). */
	uint8_t *xkinds;
	size_t nxkinds;
	uint64_t xnames_hash;
	bool have_link; /* link_speed below is of the last /ethdev/link_status */
	double link_speed; /* -1: the application did not know it */
	cdtime_t link_next; /* LinkInterval: when to ask /ethdev/link_status again */
	cdtime_t info_next; /* PortInfoInterval: when to ask /ethdev/info again */
	cdtime_t info_read; /* the read that asked it last (its time) */
	uint64_t names_hash; /* of the names of its last xstats reply; 0: none yet */
	uint64_t ipackets, opackets; /* at the last read, to see them go back */
	bool xstats_now; /* this read asks its /ethdev/xstats (tiers.c) */
	struct stats_drops drops; /* Drops */
};

struct lcore_state {
	unsigned int id; /* first: dtp_slot() */
	bool have;
	uint64_t busy, total; /* at the previous read, for the busy percentage */
	char info_ti[DATA_MAX_NAME_LEN]; /* lcore_info's type instance; "": none */
};

/* Ports whose /ethdev/xstats (and /ethdev/link_status when due) go out together: the
 * application's telemetry thread then answers them back to back, not woken again for each
 * between collectd's work on the replies, which costs it less CPU (docs/performance.md). */
#define PREFETCH_PORTS 32

struct stats_instance {
	struct dtp_target t;
	const struct stats_opts *o;
	bool discovered;
	bool halted; /* this read met a connection-level failure: it asks nothing more */
	/* MaxAppLoad: the reads run every Interval, or less often when their requests would
	 * cost the application more than the budget leaves them (dtp_budget_plan()). */
	struct dtp_budget budget;
	cdtime_t read_next; /* no read before this */
	/* The read tiers (tiers.c): the plan in force, reads so far (warming up) and their
	 * count (which ports' xstats are due), whether /ethdev/stats is still to be tried
	 * once (probe_first: at a first read that is the whole warm-up, if the xstats are
	 * dear), or is no cheaper than the xstats, what a read costs beyond its port requests, and
	 * this read's xstats and stats requests. */
	struct dtel_read_plan plan;
	uint64_t reads, round;
	bool probe_stats, probe_first, tiers_off;
	double rest_ns;
	unsigned int nx, ns;

	struct port_state *ports;
	size_t nports;
	struct lcore_state *lcores;
	size_t nlcores;

	uint64_t caps_generation; /* capabilities below were probed for this generation */
	bool caps_young; /* ... while the application was starting: probe again */
	struct dtp_caps caps;
	bool globs_checked;
	struct stats_memory mem; /* MemoryStats: memory.c */
	uint64_t lcore_info_generation; /* the lcores' info was read for this generation */
	uint64_t no_usage_generation; /* /eal/lcore/usage listed no lcore in this generation */
	uint64_t info_generation; /* instance_info below is of this generation */
	long info_app_pid; /* ... and of this greeting pid (it may come after the generation) */
	uint64_t no_ethdev_generation; /* "no ethdev" was logged for this generation */
	char info_ti[DATA_MAX_NAME_LEN]; /* instance_info's type instance */
	struct stats_cmd_state *cmd_state; /* of each <Command>, made at the first read */
	struct stats_devices devices; /* cryptodev, dmadev, eventdev, rawdev */

	/* The ports of the last /ethdev/list, asked again after PORT_LIST_EVERY (see
	 * ports_due()); between two lists, a reply from another process ends the read. */
	uint16_t *port_ids;
	int nport_ids; /* -1: not listed */
	cdtime_t ports_next;
	bool relist_ports; /* a port answered null: maybe gone */
	bool on_listed; /* this read uses the list of an earlier read */
	bool stale; /* ... and a reply of it came from another process */

	/* The port requests of the next PREFETCH_PORTS ports, sent at once (prefetch());
	 * query() hands their replies out. */
	struct prefetched {
		char cmd[96];
		struct dtel_reply reply;
		int result; /* -ECANCELED, -ECONNABORTED: never answered, asked again by query() */
		bool taken;
	} pre[2 * PREFETCH_PORTS];
	size_t npre;
};

/* At most one /ethdev/list a second, and one at every read of an application still starting
 * or just reconnected: a port an application adds (Open vSwitch does) shows within a second,
 * or at the next read when the Interval is longer. */
#define PORT_LIST_EVERY TIME_T_TO_CDTIME_T(1)

/* dpdktel_stats.c: the configuration; instance.c: every instance. */
extern struct dtp_conf st_conf;
extern struct dtp_instances st_instances;

/* request.c */
bool st_same_connection(struct stats_instance *si, bool any_conn);
void st_prefetch_release(struct stats_instance *si);
int st_query(struct stats_instance *si, const char *cmd, struct dtel_reply *r);
int st_query_fn(void *ctx, const char *cmd, struct dtel_reply *r);
int st_read_halted(void *ctx);
int st_query_id(struct stats_instance *si, const char *name, unsigned int id, struct dtel_reply *r);
void st_derive(struct stats_instance *si, const struct dtp_id *id, const char *type, const char *ti,
	const uint64_t *v, size_t n);
void st_bad_port_reply(struct stats_instance *si, const struct port_state *ps, const char *cmd,
	int err, uint64_t n);
void st_gauge(const struct dtp_id *id, const char *type, const char *ti, double v);
void st_note_cut(
	struct stats_instance *si, struct port_state *ps, const char *cmd, unsigned int flags);

/* port_info.c */
void st_port_changed(struct stats_instance *si, struct port_state *ps, cdtime_t now);
void st_read_info(
	struct stats_instance *si, struct port_state *ps, const struct dtp_id *id, const char *cmd);
void st_dispatch_info(
	struct stats_instance *si, struct port_state *ps, const struct dtp_id *id, const char *cmd);

/* port.c */
void st_check_names(struct stats_instance *si, struct port_state *ps, uint64_t h, cdtime_t now);
void st_check_counts(struct stats_instance *si, struct port_state *ps,
	const struct dtel_port_stats *st, cdtime_t now);
void st_dispatch_queues(struct stats_instance *si, struct port_state *ps, const struct dtp_id *id,
	const struct dtel_port_stats *st);
void st_dispatch_basic(
	struct stats_instance *si, const struct dtp_id *id, const struct dtel_port_stats *st);
void st_no_queues(struct stats_instance *si, struct port_state *ps);
bool st_link_due(const struct stats_instance *si, const struct port_state *ps, cdtime_t now);
struct port_state *st_port_state(struct stats_instance *si, uint16_t id);
void st_read_port(struct stats_instance *si, uint16_t port, cdtime_t now);

/* xstats.c */
bool st_xstats_wanted(struct stats_instance *si, struct port_state *ps);
void st_xstats_request(const struct port_state *ps, char *buf, size_t size);
void st_read_xstats(
	struct stats_instance *si, struct port_state *ps, const struct dtp_id *id, const char *cmd);

/* lcores.c */
void st_read_fwd_lcores(struct stats_instance *si, cdtime_t now);
void st_read_lcore_info(struct stats_instance *si, cdtime_t now);
void st_read_eal_lcores(struct stats_instance *si, cdtime_t now);
void st_read_usage_lcores(struct stats_instance *si, cdtime_t now);

/* tiers.c */
void st_tiers_begin(struct stats_instance *si);
void st_tiers_probe(struct stats_instance *si, const struct port_state *ps);
cdtime_t st_xstats_interval(const struct stats_instance *si);
void st_tiers_dispatch_ext(const struct stats_instance *si, bool ext);
void st_tiers_plan(struct stats_instance *si, cdtime_t now, uint64_t round_ns);
void st_tiers_reset(struct stats_instance *si);

/* read.c */
void st_dispatch_health(struct stats_instance *si, cdtime_t now, double read_seconds);
void st_prefetch(struct stats_instance *si, int from, int to, cdtime_t now);
bool st_read_due(struct stats_instance *si, cdtime_t now);
void st_plan_next(struct stats_instance *si, cdtime_t now, uint64_t round_ns);
void st_read_all(struct stats_instance *si, cdtime_t now);
void st_read_alive(struct stats_instance *si);

/* instance.c */
int st_instance_start(
	const char *name, const char *path, const struct stats_opts *o, bool discovered);
int st_discover_read(user_data_t *ud);

/* dpdktel_stats.c */
int stats_read(user_data_t *ud);

#endif
