/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Snapshots of the live counters and states (relaxed loads, no locks: each value is
 * exact, the set is as consistent as a reader on another core can get without stopping
 * the lcores), and the counters table printed by --stats-period and at exit.
 */
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>

#include "fwd.h"

static inline uint64_t
load_u64(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

uint64_t
fwd_uptime_ms(const struct fwd_ctx *ctx)
{
	struct timespec now;
	int64_t ms;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (int64_t)(now.tv_sec - ctx->start_time.tv_sec) * 1000 +
		(now.tv_nsec - ctx->start_time.tv_nsec) / 1000000;
	return ms > 0 ? (uint64_t)ms : 0;
}

void
fwd_snap_lcore(const struct fwd_ctx *ctx, unsigned int wi, uint64_t now, struct fwd_lcore_snap *s)
{
	const struct fwd_worker *w = &ctx->workers[wi];
	const struct fwd_health *h = &ctx->health[wi];
	uint64_t last;

	memset(s, 0, sizeof(*s));
	s->lcore_id = w->lcore_id;
	s->state = __atomic_load_n(&h->state, __ATOMIC_RELAXED);
	s->heartbeat = load_u64(&w->heartbeat);
	last = load_u64(&w->last_tsc);
	/* 0 until fwd_lcores_launch(): telemetry may answer before it (the lcore is STARTING). */
	s->heartbeat_age_us = last == 0 ? 0 : fwd_tsc_to_us(fwd_age(now, last), ctx->tsc_hz);
	s->stalls = load_u64(&h->stalls);
	s->last_change_age_ms =
		fwd_tsc_to_ms(fwd_age(now, load_u64(&h->last_change_tsc)), ctx->tsc_hz);
	s->busy_cycles = load_u64(&w->busy_cycles);
	s->total_cycles = load_u64(&w->total_cycles);
	s->nb_ports = w->nb_flows;
	for (unsigned int i = 0; i < w->nb_flows; i++) {
		const struct fwd_flow *f = &w->flows[i];

		s->rx_packets += load_u64(&f->rx_packets);
		s->tx_packets += load_u64(&f->tx_packets);
		s->tx_dropped += load_u64(&f->tx_dropped);
		s->ports[i] = f->rx_port;
	}
}

void
fwd_snap_port(const struct fwd_ctx *ctx, unsigned int pi, uint64_t now, struct fwd_port_snap *s)
{
	const struct fwd_port *p = &ctx->ports[pi];
	const struct fwd_flow *rx = &ctx->workers[p->rx_worker].flows[p->rx_flow];
	const struct fwd_flow *tx = &ctx->workers[p->tx_worker].flows[p->tx_flow];

	memset(s, 0, sizeof(*s));
	s->port_id = p->port_id;
	memcpy(s->name, p->name, sizeof(s->name));
	s->link = load_u64(&p->link);
	s->link_changes = load_u64(&p->link_changes);
	s->last_change_age_ms =
		fwd_tsc_to_ms(fwd_age(now, load_u64(&p->last_change_tsc)), ctx->tsc_hz);
	s->rx_packets = load_u64(&rx->rx_packets);
	s->tx_packets = load_u64(&tx->tx_packets);
	s->tx_dropped = load_u64(&tx->tx_dropped);
	s->lcore_id = ctx->workers[p->rx_worker].lcore_id;
	s->peer_port = p->peer;
}

void
fwd_snap_info(const struct fwd_ctx *ctx, struct fwd_info_snap *s)
{
	memset(s, 0, sizeof(*s));
	s->app = FWD_APP_NAME;
	s->version = DPDKTEL_VERSION;
	s->pid = (int)getpid();
	s->uptime_ms = fwd_uptime_ms(ctx);
	s->mac_mode = fwd_mac_mode_name(ctx->cfg.mac_mode);
	s->burst = FWD_BURST;
	s->heartbeat_ms = ctx->cfg.heartbeat_ms;
	s->stall_ms = ctx->cfg.stall_ms;
	s->link_poll_ms = ctx->cfg.link_poll_ms;
	s->link_check_age_ms =
		fwd_tsc_to_ms(fwd_age(rte_rdtsc(), load_u64(&ctx->link_check_tsc)), ctx->tsc_hz);
	s->idle_sleep_us = ctx->cfg.idle_sleep_us;
	s->stats_period_s = ctx->cfg.stats_period_s;
	s->main_lcore = ctx->main_lcore;
	s->nb_ports = ctx->nb_ports;
	for (unsigned int i = 0; i < ctx->nb_ports; i++)
		s->ports[i] = ctx->ports[i].port_id;
	s->nb_lcores = ctx->nb_workers;
	for (unsigned int i = 0; i < ctx->nb_workers; i++)
		s->lcores[i] = ctx->workers[i].lcore_id;
}

void
fwd_stats_print(const struct fwd_ctx *ctx, FILE *f, const char *title)
{
	uint64_t now = rte_rdtsc();
	uint64_t up = fwd_uptime_ms(ctx);

	fprintf(f, "\n%s: %s after %" PRIu64 ".%03" PRIu64 " s\n", FWD_APP_NAME, title, up / 1000,
		up % 1000);
	fprintf(f, "%5s %-16s %-5s %6s %7s %20s %20s %20s\n", "port", "name", "link", "speed",
		"changes", "rx_packets", "tx_packets", "tx_dropped");
	for (unsigned int i = 0; i < ctx->nb_ports; i++) {
		struct fwd_port_snap p;

		fwd_snap_port(ctx, i, now, &p);
		fprintf(f,
			"%5u %-16.16s %-5s %6" PRIu32 " %7" PRIu64 " %20" PRIu64 " %20" PRIu64
			" %20" PRIu64 "\n",
			p.port_id, p.name, fwd_link_status_name(p.link), fwd_link_speed(p.link),
			p.link_changes, p.rx_packets, p.tx_packets, p.tx_dropped);
	}
	fprintf(f, "%5s %-8s %20s %6s %20s %20s %5s %s\n", "lcore", "state", "heartbeat", "stalls",
		"rx_packets", "tx_packets", "busy%", "ports");
	for (unsigned int i = 0; i < ctx->nb_workers; i++) {
		struct fwd_lcore_snap l;
		char ports[RTE_TEL_MAX_STRING_LEN];
		double busy;

		fwd_snap_lcore(ctx, i, now, &l);
		if (fwd_format_idlist(l.ports, l.nb_ports, ports, sizeof(ports)) < 0)
			snprintf(ports, sizeof(ports), "(%u ports)", l.nb_ports);
		busy = l.total_cycles ? 100.0 * (double)l.busy_cycles / (double)l.total_cycles : 0;
		fprintf(f,
			"%5u %-8s %20" PRIu64 " %6" PRIu64 " %20" PRIu64 " %20" PRIu64
			" %5.1f %s\n",
			l.lcore_id, fwd_lcore_state_name(l.state), l.heartbeat, l.stalls,
			l.rx_packets, l.tx_packets, busy, ports);
	}
	fflush(f);
}
