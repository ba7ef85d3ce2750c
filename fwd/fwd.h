/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdktel-fwd: the state shared by its parts, and who writes what.
 *
 *  - struct fwd_worker: one per forwarding lcore, cache-aligned, written only by that lcore
 *    with relaxed stores (heartbeat, last loop TSC, cycles, per-port counters).
 *  - struct fwd_health and the link fields of struct fwd_port: written only by the main
 *    lcore (health and link checks).
 *  - everything else: set during start-up, read-only once the telemetry callbacks are
 *    given the context (fwd_telemetry_publish(), a release store) and the lcores launched.
 *
 * Every field that one thread writes while another reads is written with __atomic stores
 * (relaxed) and read with __atomic loads, including its first value when readers may
 * already run; one thread writes it at a time. Readers (the main lcore, telemetry callbacks
 * on one thread per client, the stats table) use relaxed atomic loads; nothing on the data
 * path takes a lock. The forwarder runs clean under ThreadSanitizer (tests/fwd/tsan_run). The whole
 * context is plain static memory, not rte_malloc'd: DPDK 22.11 has no way to stop its telemetry
 * threads, which can run callbacks until the process exits, after rte_eal_cleanup().
 */
#ifndef FWD_H
#define FWD_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include <rte_common.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_mempool.h>

#include "options.h"
#include "reply.h"
#include "state.h"

extern int fwd_logtype;
#define FWD_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, fwd_logtype, "FWD: " fmt "\n", ##__VA_ARGS__)

#define FWD_APP_NAME "dpdktel-fwd"
/** Packets per rx burst and per tx flush (as l2fwd and testpmd). */
#define FWD_BURST 32
/** Buffered tx is flushed at least this often. */
#define FWD_DRAIN_US 100
/** Empty polls in a row before --idle-sleep-us sleeps start. */
#define FWD_IDLE_POLLS 64
#define FWD_NB_RXD 1024
#define FWD_NB_TXD 1024
#define FWD_MEMPOOL_CACHE 256
#define FWD_MIN_MBUFS 8192

/** One rx port of a worker and the tx port its packets leave by. */
struct fwd_flow {
	/* Written by the worker only. */
	uint64_t rx_packets; /* received on rx_port */
	uint64_t tx_packets; /* sent out of tx_port */
	uint64_t tx_dropped; /* could not be sent out of tx_port */
	/* Start-up, then read-only. */
	uint16_t rx_port;
	uint16_t tx_port;
	struct rte_ether_addr rewrite_src; /* MAC of tx_port */
	struct rte_ether_addr rewrite_dst; /* 02:00:00:00:00:<tx_port> */
	struct rte_eth_dev_tx_buffer *txb;
};

struct fwd_ctx;

struct fwd_worker {
	/* Written by the worker only (relaxed stores). */
	uint64_t heartbeat; /* loops so far */
	uint64_t last_tsc; /* TSC at the start of its last loop */
	uint64_t busy_cycles; /* cycles of loops that moved packets */
	uint64_t total_cycles; /* cycles of all loops */
	uint32_t exited; /* its loop function returned */
	/* Start-up, then read-only. */
	unsigned int lcore_id;
	const struct fwd_ctx *ctx;
	unsigned int nb_flows;
	unsigned int nb_faults;
	struct fwd_fault faults[FWD_MAX_FAULTS]; /* this lcore's, by after_ms */
	struct fwd_flow flows[FWD_MAX_PORTS];
} __rte_cache_aligned;

/** Health of one worker: written by the main lcore only. */
struct fwd_health {
	uint32_t state; /* enum fwd_lcore_state */
	uint64_t stalls;
	uint64_t last_change_tsc;
	/* Private to the main lcore. */
	uint64_t prev_heartbeat;
	uint64_t prev_rx;
} __rte_cache_aligned;

struct fwd_port {
	/* Start-up, then read-only. */
	uint16_t port_id;
	uint16_t peer; /* port its packets leave by */
	unsigned int rx_worker; /* index of the worker that receives on it */
	unsigned int rx_flow; /* its flow in that worker */
	unsigned int tx_worker; /* the worker that sends out of it (serves the peer) */
	unsigned int tx_flow;
	char name[FWD_PORT_NAME_MAX];
	struct rte_ether_addr mac;
	/* Written by the main lcore only. */
	uint64_t link; /* fwd_link_word() */
	uint64_t link_changes;
	uint64_t last_change_tsc;
	bool link_error_logged;
} __rte_cache_aligned;

struct fwd_ctx {
	struct fwd_config cfg;
	uint64_t tsc_hz;
	struct timespec start_time; /* CLOCK_MONOTONIC at start, for uptime_ms */
	uint64_t start_tsc; /* forwarding start: the base of --fault times */
	/* Written by the main lcore only: TSC when it last finished reading every port's link
	 * (/fwd/info link_check_age_ms). */
	uint64_t link_check_tsc;
	unsigned int main_lcore;
	/** Ethernet ports that exist (for /fwd/metrics,<port>), bit = port id. */
	uint64_t existing_ports;
	unsigned int nb_ports;
	struct fwd_port ports[FWD_MAX_PORTS]; /* ascending port id */
	int16_t port_index[FWD_MAX_PORTS]; /* port id -> ports[] or -1 */
	unsigned int nb_main_faults;
	struct fwd_fault main_faults[FWD_MAX_FAULTS]; /* --fault main-stall, by after_ms */
	unsigned int nb_workers;
	struct fwd_worker workers[FWD_MAX_LCORES];
	struct fwd_health health[FWD_MAX_LCORES];
	int16_t worker_index[RTE_MAX_LCORE]; /* lcore id -> workers[] or -1 */
	struct rte_mempool *pool;
	/* Shutdown: quit is set by the signal handler; closing and tel_inflight let the
	 * telemetry callbacks that touch DPDK objects stop before those are freed. */
	uint32_t quit;
	uint32_t closing;
	uint32_t tel_inflight;
	int metrics_key; /* first rte_metrics key of our names, or < 0 */
};

/* Time conversions that do not overflow for any TSC delta. */
static inline uint64_t
fwd_tsc_to_us(uint64_t delta, uint64_t hz)
{
	return delta / hz * 1000000 + delta % hz * 1000000 / hz;
}

static inline uint64_t
fwd_tsc_to_ms(uint64_t delta, uint64_t hz)
{
	return delta / hz * 1000 + delta % hz * 1000 / hz;
}

static inline uint64_t
fwd_ms_to_tsc(uint64_t ms, uint64_t hz)
{
	return hz / 1000 * ms + hz % 1000 * ms / 1000;
}

static inline uint64_t
fwd_age(uint64_t now, uint64_t then)
{
	return now > then ? now - then : 0;
}

static inline bool
fwd_quitting(const struct fwd_ctx *ctx)
{
	return __atomic_load_n(&ctx->quit, __ATOMIC_RELAXED) != 0;
}

/*
 * Start-up functions that END THE PROCESS (rte_exit, with a message naming what is wrong)
 * instead of returning an error: fwd_ports_select, fwd_ports_start, fwd_lcores_assign,
 * fwd_lcores_launch, fwd_metrics_init, fwd_access_apply. They run before forwarding starts,
 * where there is nothing to recover; nothing after start-up calls rte_exit.
 */

/* port.c: choose and pair ports (from -p), then configure and start them. Both end the
 * process on a bad -p or a port that cannot be set up. */
void fwd_ports_select(struct fwd_ctx *ctx);
void fwd_ports_start(struct fwd_ctx *ctx);
void fwd_ports_close(struct fwd_ctx *ctx);

/* lcore.c: give ports to the worker lcores (ends the process when there are none, too
 * many, or more lcores than ports, or a --fault names no forwarding lcore), launch them
 * (ends it when one cannot start); the forwarding loop. */
void fwd_lcores_assign(struct fwd_ctx *ctx);
void fwd_lcores_launch(struct fwd_ctx *ctx);
/** Wait until every worker's loop has returned (and see all it wrote). */
void fwd_lcores_wait(struct fwd_ctx *ctx);

/* health.c: heartbeat checks and link polls, run by the main lcore. */
void fwd_health_init(struct fwd_ctx *ctx);
void fwd_health_check(struct fwd_ctx *ctx, uint64_t now);
void fwd_link_poll(struct fwd_ctx *ctx, uint64_t now);
/** The main lcore's loop: checks, polls, metrics and stats until quit. */
void fwd_main_loop(struct fwd_ctx *ctx);

/* counters.c: consistent-enough snapshots with relaxed loads; the stats table. */
void fwd_snap_lcore(
	const struct fwd_ctx *ctx, unsigned int w, uint64_t now, struct fwd_lcore_snap *s);
void fwd_snap_port(
	const struct fwd_ctx *ctx, unsigned int p, uint64_t now, struct fwd_port_snap *s);
void fwd_snap_info(const struct fwd_ctx *ctx, struct fwd_info_snap *s);
uint64_t fwd_uptime_ms(const struct fwd_ctx *ctx);
void fwd_stats_print(const struct fwd_ctx *ctx, FILE *f, const char *title);

/* metrics.c: rte_metrics registration (ends the process when it fails), periodic update,
 * and reading them back. */
void fwd_metrics_init(struct fwd_ctx *ctx);
void fwd_metrics_update(const struct fwd_ctx *ctx);
void fwd_metrics_deinit(struct fwd_ctx *ctx);

/* telemetry.c: the /fwd/... commands. */
/** Register them, before rte_eal_init(); until published they reply null. 0 or -errno. */
int fwd_telemetry_register(void);
/** Let the callbacks read ctx (release: start-up's plain writes are seen by them). */
void fwd_telemetry_publish(struct fwd_ctx *ctx);
/** Make the callbacks that touch DPDK objects reply null, and wait for those running. */
void fwd_telemetry_quiesce(struct fwd_ctx *ctx);

/* access.c: --telemetry-group (ends the process when the group or permissions cannot be
 * set: a socket the operator meant to share that collectd cannot open is worse than none). */
void fwd_access_apply(const struct fwd_ctx *ctx);

#endif
