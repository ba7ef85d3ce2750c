/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Forwarding lcores: ports are given to the worker lcores round-robin (the main lcore
 * forwards nothing), and each worker runs fwd_lcore_main(): rx a burst on each of its
 * ports, fix the MACs, buffer for tx on the peer port, flush at least every 100 us.
 *
 * Every loop bumps the heartbeat and records its TSC, all in the worker's own cache-aligned
 * slot, with relaxed stores: the main lcore and the telemetry threads only read it.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_cycles.h>
#include <rte_launch.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>

#include "fwd.h"

static int
cmp_fault(const void *a, const void *b)
{
	const struct fwd_fault *x = a, *y = b;

	return x->after_ms < y->after_ms ? -1 : x->after_ms > y->after_ms;
}

static void
worker_list(const struct fwd_ctx *ctx, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (unsigned int w = 0; w < ctx->nb_workers && used < len; w++)
		used += (size_t)snprintf(
			buf + used, len - used, "%s%u", w ? "," : "", ctx->workers[w].lcore_id);
}
/* Every EAL worker lcore forwards; the main lcore checks health and links. */
static void
assign_workers(struct fwd_ctx *ctx)
{
	unsigned int lcore;

	ctx->main_lcore = rte_get_main_lcore();
	for (unsigned int i = 0; i < RTE_MAX_LCORE; i++)
		ctx->worker_index[i] = -1;
	RTE_LCORE_FOREACH_WORKER(lcore) {
		struct fwd_worker *w;

		if (ctx->nb_workers == FWD_MAX_LCORES)
			rte_exit(EXIT_FAILURE, "%s: too many forwarding lcores (at most %d)\n",
				FWD_APP_NAME, FWD_MAX_LCORES);
		w = &ctx->workers[ctx->nb_workers];
		w->lcore_id = lcore;
		w->ctx = ctx;
		ctx->worker_index[lcore] = (int16_t)ctx->nb_workers;
		ctx->nb_workers++;
	}
	if (ctx->nb_workers == 0)
		rte_exit(EXIT_FAILURE,
			"%s: no forwarding lcore: the main lcore %u does not "
			"forward; give EAL at least two lcores (e.g. -l 0,1)\n",
			FWD_APP_NAME, ctx->main_lcore);
	if (ctx->nb_ports < ctx->nb_workers)
		rte_exit(EXIT_FAILURE,
			"%s: lcore %u has no port to serve (%u forwarding lcores, %u port%s): "
			"use fewer lcores (-l) or more ports\n",
			FWD_APP_NAME, ctx->workers[ctx->nb_ports].lcore_id, ctx->nb_workers,
			ctx->nb_ports, ctx->nb_ports == 1 ? "" : "s");
}

/* Round-robin: port i (in port order) goes to worker i mod n; it sends out of its peer. */
static void
assign_flows(struct fwd_ctx *ctx)
{
	for (unsigned int i = 0; i < ctx->nb_ports; i++) {
		struct fwd_port *p = &ctx->ports[i];
		struct fwd_worker *w = &ctx->workers[i % ctx->nb_workers];
		struct fwd_flow *f = &w->flows[w->nb_flows];
		const struct fwd_port *peer = &ctx->ports[ctx->port_index[p->peer]];

		f->rx_port = p->port_id;
		f->tx_port = p->peer;
		rte_ether_addr_copy(&peer->mac, &f->rewrite_src);
		memset(&f->rewrite_dst, 0, sizeof(f->rewrite_dst));
		f->rewrite_dst.addr_bytes[0] = 0x02;
		f->rewrite_dst.addr_bytes[5] = (uint8_t)p->peer;
		p->rx_worker = i % ctx->nb_workers;
		p->rx_flow = w->nb_flows;
		w->nb_flows++;
	}
	/* Who sends out of a port: whoever receives on its peer. */
	for (unsigned int i = 0; i < ctx->nb_ports; i++) {
		struct fwd_port *p = &ctx->ports[i];
		const struct fwd_port *peer = &ctx->ports[ctx->port_index[p->peer]];

		p->tx_worker = peer->rx_worker;
		p->tx_flow = peer->rx_flow;
	}
}

/* --fault: to the lcore it names (main-stall: the main lcore), in time order. */
static void
assign_faults(struct fwd_ctx *ctx)
{
	char list[256];

	for (unsigned int i = 0; i < ctx->cfg.nb_faults; i++) {
		const struct fwd_fault *fault = &ctx->cfg.faults[i];
		struct fwd_worker *w;

		if (fault->kind == FWD_FAULT_MAIN_STALL) {
			ctx->main_faults[ctx->nb_main_faults++] = *fault;
			continue;
		}
		if (fault->lcore >= RTE_MAX_LCORE || ctx->worker_index[fault->lcore] < 0) {
			worker_list(ctx, list, sizeof(list));
			rte_exit(EXIT_FAILURE,
				"%s: --fault %s:%u:...: lcore %u is not a forwarding "
				"lcore (forwarding lcores: %s)\n",
				FWD_APP_NAME, fault->kind == FWD_FAULT_STALL ? "stall" : "exit",
				fault->lcore, fault->lcore, list);
		}
		w = &ctx->workers[ctx->worker_index[fault->lcore]];
		w->faults[w->nb_faults++] = *fault;
	}
	qsort(ctx->main_faults, ctx->nb_main_faults, sizeof(struct fwd_fault), cmp_fault);
	for (unsigned int i = 0; i < ctx->nb_workers; i++)
		qsort(ctx->workers[i].faults, ctx->workers[i].nb_faults, sizeof(struct fwd_fault),
			cmp_fault);
}

void
fwd_lcores_assign(struct fwd_ctx *ctx)
{
	assign_workers(ctx);
	assign_flows(ctx);
	assign_faults(ctx);
}

static inline void
store_u64(uint64_t *p, uint64_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELAXED);
}

static inline void
fix_macs(const struct fwd_flow *f, struct rte_mbuf **pkts, uint16_t n, enum fwd_mac_mode mode)
{
	for (uint16_t i = 0; i < n; i++) {
		struct rte_ether_hdr *eth;
		struct rte_ether_addr tmp;

		if (i + 1 < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 1], void *));
		eth = rte_pktmbuf_mtod(pkts[i], struct rte_ether_hdr *);
		if (mode == FWD_MAC_REWRITE) {
			rte_ether_addr_copy(&f->rewrite_dst, &eth->dst_addr);
			rte_ether_addr_copy(&f->rewrite_src, &eth->src_addr);
		} else {
			rte_ether_addr_copy(&eth->dst_addr, &tmp);
			rte_ether_addr_copy(&eth->src_addr, &eth->dst_addr);
			rte_ether_addr_copy(&tmp, &eth->src_addr);
		}
	}
}

static void
flush_all(struct fwd_worker *w)
{
	for (unsigned int i = 0; i < w->nb_flows; i++) {
		struct fwd_flow *f = &w->flows[i];
		uint16_t sent = rte_eth_tx_buffer_flush(f->tx_port, 0, f->txb);

		if (sent)
			store_u64(&f->tx_packets, f->tx_packets + sent);
	}
}

/*
 * Run the fault that is due. Returns 1 if the loop must end (exit fault or quit during a
 * stall), else 0. A stall spins without touching the heartbeat, as a hung lcore would,
 * but still notices quit so that a stopped forwarder does not wait for it.
 */
static int
run_fault(struct fwd_worker *w, const struct fwd_fault *fault)
{
	const struct fwd_ctx *ctx = w->ctx;
	uint64_t end;

	if (fault->kind == FWD_FAULT_EXIT) {
		FWD_LOG(WARNING, "lcore %u: fault injection: loop function returns now",
			w->lcore_id);
		return 1;
	}
	FWD_LOG(WARNING, "lcore %u: fault injection: stalling for %" PRIu32 " ms", w->lcore_id,
		fault->for_ms);
	end = rte_rdtsc() + fwd_ms_to_tsc(fault->for_ms, ctx->tsc_hz);
	while (rte_rdtsc() < end) {
		if (fwd_quitting(ctx))
			return 1;
		rte_pause();
	}
	return 0;
}

/* One burst from each of the lcore's rx ports to its peer; the packets it moved. */
static inline uint16_t
forward_flows(struct fwd_worker *w, enum fwd_mac_mode mode)
{
	struct rte_mbuf *pkts[FWD_BURST];
	uint16_t moved = 0;

	for (unsigned int i = 0; i < w->nb_flows; i++) {
		struct fwd_flow *f = &w->flows[i];
		uint16_t nb = rte_eth_rx_burst(f->rx_port, 0, pkts, FWD_BURST);
		uint16_t sent = 0;

		if (nb == 0)
			continue;
		moved += nb;
		store_u64(&f->rx_packets, f->rx_packets + nb);
		if (mode != FWD_MAC_NONE)
			fix_macs(f, pkts, nb, mode);
		for (uint16_t j = 0; j < nb; j++)
			sent += rte_eth_tx_buffer(f->tx_port, 0, f->txb, pkts[j]);
		if (sent)
			store_u64(&f->tx_packets, f->tx_packets + sent);
	}
	return moved;
}

static int
fwd_lcore_main(void *arg)
{
	struct fwd_worker *w = arg;
	const struct fwd_ctx *ctx = w->ctx;
	const enum fwd_mac_mode mode = ctx->cfg.mac_mode;
	const unsigned int idle_sleep_us = ctx->cfg.idle_sleep_us;
	const uint64_t drain = (ctx->tsc_hz + 1000000 - 1) / 1000000 * FWD_DRAIN_US;
	uint64_t heartbeat = 0, busy = 0, total = 0;
	uint64_t prev = rte_rdtsc(), last_drain = prev;
	uint64_t fault_tsc = UINT64_MAX;
	unsigned int next_fault = 0, empty = 0;
	bool moved_prev = false;

	if (w->nb_faults > 0)
		fault_tsc = ctx->start_tsc + fwd_ms_to_tsc(w->faults[0].after_ms, ctx->tsc_hz);
	FWD_LOG(INFO, "lcore %u forwarding %u port(s)", w->lcore_id, w->nb_flows);

	while (!fwd_quitting(ctx)) {
		uint64_t now = rte_rdtsc();
		uint16_t moved = 0;

		if (unlikely(now >= fault_tsc)) {
			if (run_fault(w, &w->faults[next_fault]))
				break;
			next_fault++;
			fault_tsc = next_fault < w->nb_faults ? ctx->start_tsc +
					fwd_ms_to_tsc(w->faults[next_fault].after_ms, ctx->tsc_hz)
							      : UINT64_MAX;
			now = rte_rdtsc();
		}
		/* The cycles since the previous loop were busy if that loop moved packets. */
		total += now - prev;
		if (moved_prev)
			busy += now - prev;
		prev = now;
		store_u64(&w->total_cycles, total);
		store_u64(&w->busy_cycles, busy);
		store_u64(&w->last_tsc, now);
		store_u64(&w->heartbeat, ++heartbeat);

		if (unlikely(now - last_drain > drain)) {
			flush_all(w);
			last_drain = now;
		}
		moved = forward_flows(w, mode);
		moved_prev = moved != 0;
		if (moved) {
			empty = 0;
		} else if (idle_sleep_us && ++empty >= FWD_IDLE_POLLS) {
			/* Nothing to do for a while: send what is buffered, then doze. */
			flush_all(w);
			last_drain = now;
			rte_delay_us_sleep(idle_sleep_us);
		}
	}
	flush_all(w);
	__atomic_store_n(&w->exited, 1, __ATOMIC_RELEASE);
	FWD_LOG(INFO, "lcore %u stopped", w->lcore_id);
	return 0;
}

void
fwd_lcores_launch(struct fwd_ctx *ctx)
{
	ctx->start_tsc = rte_rdtsc();
	for (unsigned int i = 0; i < ctx->nb_workers; i++) {
		struct fwd_worker *w = &ctx->workers[i];
		int ret;

		/* Telemetry threads may be reading both already. */
		store_u64(&w->last_tsc, ctx->start_tsc);
		store_u64(&ctx->health[i].last_change_tsc, ctx->start_tsc);
		ret = rte_eal_remote_launch(fwd_lcore_main, w, w->lcore_id);
		if (ret != 0)
			rte_exit(EXIT_FAILURE, "%s: cannot launch lcore %u: %s\n", FWD_APP_NAME,
				w->lcore_id, rte_strerror(-ret));
	}
}

void
fwd_lcores_wait(struct fwd_ctx *ctx)
{
	rte_eal_mp_wait_lcore();
	/* Pairs with the release store at the end of fwd_lcore_main(): what a worker wrote
	 * (its tx buffers, the last counters) happens before what the main lcore does next,
	 * without relying on how EAL reports a returned lcore. */
	for (unsigned int i = 0; i < ctx->nb_workers; i++)
		if (__atomic_load_n(&ctx->workers[i].exited, __ATOMIC_ACQUIRE) == 0)
			FWD_LOG(WARNING, "lcore %u: returned without saying so",
				ctx->workers[i].lcore_id);
}
