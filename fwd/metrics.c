/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rte_metrics: the forwarder registers one set of names and refreshes its values every
 * heartbeat period, per port and globally (RTE_METRICS_GLOBAL). Calling librte_metrics
 * also makes it a DT_NEEDED library of the binary (pkg-config links --as-needed), and its
 * constructor is what brings up DPDK's legacy v1 "telemetry" socket, which collectd's
 * stock dpdk_telemetry plugin reads. /fwd/metrics reads the values back (telemetry.c).
 *
 * Every name exists for every port and for global; the ones that do not apply read 0.
 */
#include <rte_metrics.h>

#include "fwd.h"

enum {
	/* per port; global = sum over the ports */
	M_RX_PACKETS,
	M_TX_PACKETS,
	M_TX_DROPPED,
	M_LINK_CHANGES,
	/* per port only */
	M_LINK_STATUS,
	M_LINK_SPEED,
	/* global only */
	M_PORTS_UP,
	M_LCORES_RUNNING,
	M_LCORES_IDLE,
	M_LCORES_STALLED,
	M_LCORES_EXITED,
	M_LCORE_STALLS,
	M_NB
};

static const char *const metric_names[M_NB] = {
	[M_RX_PACKETS] = "rx_packets",
	[M_TX_PACKETS] = "tx_packets",
	[M_TX_DROPPED] = "tx_dropped",
	[M_LINK_CHANGES] = "link_changes",
	[M_LINK_STATUS] = "link_status",
	[M_LINK_SPEED] = "link_speed",
	[M_PORTS_UP] = "ports_up",
	[M_LCORES_RUNNING] = "lcores_running",
	[M_LCORES_IDLE] = "lcores_idle",
	[M_LCORES_STALLED] = "lcores_stalled",
	[M_LCORES_EXITED] = "lcores_exited",
	[M_LCORE_STALLS] = "lcore_stalls",
};

void
fwd_metrics_init(struct fwd_ctx *ctx)
{
	int ret;

	ctx->metrics_key = -1;
	ret = rte_metrics_init((int)rte_socket_id());
	if (ret != 0)
		rte_exit(EXIT_FAILURE, "%s: rte_metrics_init failed: %s\n", FWD_APP_NAME,
			rte_strerror(-ret));
	ret = rte_metrics_reg_names(metric_names, M_NB);
	if (ret < 0)
		rte_exit(EXIT_FAILURE, "%s: cannot register %d rte_metrics names: %s\n",
			FWD_APP_NAME, M_NB, rte_strerror(-ret));
	ctx->metrics_key = ret;
	fwd_metrics_update(ctx);
}

void
fwd_metrics_update(const struct fwd_ctx *ctx)
{
	uint64_t now = rte_rdtsc();
	uint64_t global[M_NB] = {0};
	int ret;

	if (ctx->metrics_key < 0)
		return;
	for (unsigned int i = 0; i < ctx->nb_ports; i++) {
		struct fwd_port_snap p;
		uint64_t v[M_NB] = {0};

		fwd_snap_port(ctx, i, now, &p);
		v[M_RX_PACKETS] = p.rx_packets;
		v[M_TX_PACKETS] = p.tx_packets;
		v[M_TX_DROPPED] = p.tx_dropped;
		v[M_LINK_CHANGES] = p.link_changes;
		v[M_LINK_STATUS] = fwd_link_up(p.link);
		v[M_LINK_SPEED] = fwd_link_speed(p.link);
		for (unsigned int m = M_RX_PACKETS; m <= M_LINK_CHANGES; m++)
			global[m] += v[m];
		global[M_PORTS_UP] += v[M_LINK_STATUS];
		ret = rte_metrics_update_values(p.port_id, (uint16_t)ctx->metrics_key, v, M_NB);
		if (ret < 0)
			FWD_LOG(DEBUG, "port %u: rte_metrics update failed: %s", p.port_id,
				rte_strerror(-ret));
	}
	for (unsigned int i = 0; i < ctx->nb_workers; i++) {
		uint32_t state = __atomic_load_n(&ctx->health[i].state, __ATOMIC_RELAXED);

		global[M_LCORE_STALLS] += __atomic_load_n(&ctx->health[i].stalls, __ATOMIC_RELAXED);
		if (state == FWD_LCORE_RUNNING)
			global[M_LCORES_RUNNING]++;
		else if (state == FWD_LCORE_IDLE)
			global[M_LCORES_IDLE]++;
		else if (state == FWD_LCORE_STALLED)
			global[M_LCORES_STALLED]++;
		else if (state == FWD_LCORE_EXITED)
			global[M_LCORES_EXITED]++;
	}
	ret = rte_metrics_update_values(
		RTE_METRICS_GLOBAL, (uint16_t)ctx->metrics_key, global, M_NB);
	if (ret < 0)
		FWD_LOG(DEBUG, "global rte_metrics update failed: %s", rte_strerror(-ret));
}

void
fwd_metrics_deinit(struct fwd_ctx *ctx)
{
	int ret;

	if (ctx->metrics_key < 0)
		return;
	ctx->metrics_key = -1;
	ret = rte_metrics_deinit();
	if (ret != 0)
		FWD_LOG(DEBUG, "rte_metrics_deinit: %s", rte_strerror(-ret));
}
