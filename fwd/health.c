/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The main lcore's work: every heartbeat period it classifies each forwarding lcore and
 * updates rte_metrics; every link-poll period it reads each port's link; every stats
 * period it prints the table. In between it sleeps: it never busy-polls.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>

#include "fwd.h"

static inline uint64_t
load_u64(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static uint64_t
link_read(struct fwd_port *p)
{
	struct rte_eth_link link;
	int ret;

	memset(&link, 0, sizeof(link));
	ret = rte_eth_link_get_nowait(p->port_id, &link);
	if (ret != 0) {
		/* Keep the last known state; say so once, not every 10 ms. */
		if (!p->link_error_logged)
			FWD_LOG(WARNING, "port %u: cannot read link status: %s", p->port_id,
				rte_strerror(-ret));
		p->link_error_logged = true;
		return p->link;
	}
	p->link_error_logged = false;
	return fwd_link_word(link.link_status == RTE_ETH_LINK_UP,
		link.link_speed == RTE_ETH_SPEED_NUM_UNKNOWN ? 0 : link.link_speed,
		link.link_duplex == RTE_ETH_LINK_FULL_DUPLEX);
}

void
fwd_health_init(struct fwd_ctx *ctx)
{
	uint64_t now = rte_rdtsc();

	for (unsigned int i = 0; i < ctx->nb_ports; i++) {
		struct fwd_port *p = &ctx->ports[i];

		__atomic_store_n(&p->link, link_read(p), __ATOMIC_RELAXED);
		__atomic_store_n(&p->last_change_tsc, now, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&ctx->link_check_tsc, rte_rdtsc(), __ATOMIC_RELAXED);
	for (unsigned int i = 0; i < ctx->nb_workers; i++) {
		__atomic_store_n(&ctx->health[i].state, FWD_LCORE_STARTING, __ATOMIC_RELAXED);
		__atomic_store_n(&ctx->health[i].last_change_tsc, now, __ATOMIC_RELAXED);
	}
}

void
fwd_link_poll(struct fwd_ctx *ctx, uint64_t now)
{
	for (unsigned int i = 0; i < ctx->nb_ports; i++) {
		struct fwd_port *p = &ctx->ports[i];
		uint64_t old = p->link;
		uint64_t cur = link_read(p);

		if (cur == old)
			continue;
		if (fwd_link_up(cur) != fwd_link_up(old)) {
			__atomic_store_n(&p->last_change_tsc, now, __ATOMIC_RELAXED);
			__atomic_store_n(&p->link_changes, p->link_changes + 1, __ATOMIC_RELAXED);
			FWD_LOG(NOTICE, "port %u (%s): link %s", p->port_id, p->name,
				fwd_link_status_name(cur));
		}
		__atomic_store_n(&p->link, cur, __ATOMIC_RELAXED);
	}
	/* Finished, not started: a port whose link read hangs makes the age grow. */
	__atomic_store_n(&ctx->link_check_tsc, rte_rdtsc(), __ATOMIC_RELAXED);
}

void
fwd_health_check(struct fwd_ctx *ctx, uint64_t now)
{
	const uint64_t stall_tsc = fwd_ms_to_tsc(ctx->cfg.stall_ms, ctx->tsc_hz);

	for (unsigned int i = 0; i < ctx->nb_workers; i++) {
		const struct fwd_worker *w = &ctx->workers[i];
		struct fwd_health *h = &ctx->health[i];
		bool exited = __atomic_load_n(&w->exited, __ATOMIC_ACQUIRE) != 0;
		uint64_t hb = load_u64(&w->heartbeat);
		uint64_t last = load_u64(&w->last_tsc);
		uint64_t rx = 0;
		enum fwd_lcore_state old = (enum fwd_lcore_state)h->state, cur;

		for (unsigned int f = 0; f < w->nb_flows; f++)
			rx += load_u64(&w->flows[f].rx_packets);
		cur = fwd_lcore_classify(old, exited, hb != h->prev_heartbeat, rx != h->prev_rx,
			fwd_age(now, last) >= stall_tsc);
		h->prev_heartbeat = hb;
		h->prev_rx = rx;
		if (cur == old)
			continue;
		if (cur == FWD_LCORE_STALLED)
			__atomic_store_n(&h->stalls, h->stalls + 1, __ATOMIC_RELAXED);
		__atomic_store_n(&h->last_change_tsc, now, __ATOMIC_RELAXED);
		__atomic_store_n(&h->state, (uint32_t)cur, __ATOMIC_RELAXED);
		if (cur == FWD_LCORE_STALLED)
			FWD_LOG(WARNING, "lcore %u STALLED: no heartbeat for %" PRIu64 " ms",
				w->lcore_id, fwd_tsc_to_ms(fwd_age(now, last), ctx->tsc_hz));
		else if (cur == FWD_LCORE_EXITED)
			FWD_LOG(WARNING, "lcore %u EXITED: its loop function returned",
				w->lcore_id);
		else if (old == FWD_LCORE_STALLED)
			FWD_LOG(NOTICE, "lcore %u %s again after a stall", w->lcore_id,
				fwd_lcore_state_name(cur));
		else
			FWD_LOG(DEBUG, "lcore %u %s", w->lcore_id, fwd_lcore_state_name(cur));
	}
}

/* Sleep until the TSC reaches deadline, or a signal arrives (then quit is checked). */
static void
sleep_until(const struct fwd_ctx *ctx, uint64_t deadline)
{
	uint64_t now = rte_rdtsc();
	uint64_t us;
	struct timespec ts;

	if (deadline <= now)
		return;
	us = fwd_tsc_to_us(deadline - now, ctx->tsc_hz);
	ts.tv_sec = (time_t)(us / 1000000);
	ts.tv_nsec = (long)(us % 1000000) * 1000;
	nanosleep(&ts, NULL);
}

/*
 * --fault main-stall: the main lcore stops checking for for_ms, as a main lcore stuck in a
 * slow call would; it sleeps (never spins) and still notices quit.
 */
static void
main_stall(const struct fwd_ctx *ctx, const struct fwd_fault *fault)
{
	uint64_t end = rte_rdtsc() + fwd_ms_to_tsc(fault->for_ms, ctx->tsc_hz);

	FWD_LOG(WARNING, "main lcore: fault injection: no health or link checks for %" PRIu32 " ms",
		fault->for_ms);
	while (!fwd_quitting(ctx) && rte_rdtsc() < end)
		sleep_until(ctx, end);
	FWD_LOG(NOTICE, "main lcore: fault injection over: checks resume");
}

/* The next time a period comes due, never in the past (no catch-up bursts). */
static uint64_t
next_due(uint64_t due, uint64_t period, uint64_t now)
{
	due += period;
	return due > now ? due : now + period;
}

void
fwd_main_loop(struct fwd_ctx *ctx)
{
	const uint64_t hz = ctx->tsc_hz;
	const uint64_t hb_period = fwd_ms_to_tsc(ctx->cfg.heartbeat_ms, hz);
	const uint64_t link_period = fwd_ms_to_tsc(ctx->cfg.link_poll_ms, hz);
	const uint64_t stats_period = fwd_ms_to_tsc((uint64_t)ctx->cfg.stats_period_s * 1000, hz);
	uint64_t now = rte_rdtsc();
	uint64_t next_hb = now + hb_period;
	uint64_t next_link = now + link_period;
	uint64_t next_stats = stats_period ? now + stats_period : UINT64_MAX;
	unsigned int next_fault = 0;

	while (!fwd_quitting(ctx)) {
		uint64_t next, fault_tsc = UINT64_MAX;

		if (next_fault < ctx->nb_main_faults)
			fault_tsc = ctx->start_tsc +
				fwd_ms_to_tsc(ctx->main_faults[next_fault].after_ms, hz);
		now = rte_rdtsc();
		if (now >= fault_tsc) {
			main_stall(ctx, &ctx->main_faults[next_fault++]);
			continue;
		}
		if (now >= next_link) {
			fwd_link_poll(ctx, now);
			next_link = next_due(next_link, link_period, now);
		}
		if (now >= next_hb) {
			fwd_health_check(ctx, now);
			fwd_metrics_update(ctx);
			next_hb = next_due(next_hb, hb_period, now);
		}
		if (now >= next_stats) {
			fwd_stats_print(ctx, stdout, "counters");
			next_stats = next_due(next_stats, stats_period, now);
		}
		next = next_hb < next_link ? next_hb : next_link;
		if (next_stats < next)
			next = next_stats;
		if (fault_tsc < next)
			next = fault_tsc;
		sleep_until(ctx, next);
	}
}
