/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The /fwd/... telemetry commands (shapes: docs/fwd-telemetry.md, builders: reply.c).
 *
 * DPDK 22.11 runs callbacks on one thread per client, several at once, and its strtok
 * parsing can hand a callback another client's parameters: so every reply carries the id
 * it answers for, parameters are parsed strictly (bad -> null), and callbacks only read,
 * with relaxed loads. Parameters are checked before anything is allocated: on a negative
 * return DPDK replies null and frees nothing.
 *
 * The callbacks have no user argument in 22.11, hence the one static context pointer. The
 * commands are registered before rte_eal_init() starts the telemetry threads (so those
 * threads see the command list through pthread_create), and the context is published once
 * start-up has filled it, with a release store that every callback pairs with an acquire
 * load: the start-up fields need no atomics, and a query before then replies null.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_metrics.h>
#include <rte_telemetry.h>

#include "fwd.h"

static struct fwd_ctx *tel_ctx;

/* The context, or NULL while start-up is still filling it. */
static inline struct fwd_ctx *
tel_get(void)
{
	return __atomic_load_n(&tel_ctx, __ATOMIC_ACQUIRE);
}

static int
lcores_cb(const char *cmd, const char *params, struct rte_tel_data *d)
{
	const struct fwd_ctx *ctx = tel_get();
	struct fwd_lcore_snap *snaps;
	uint64_t now;
	int ret;

	RTE_SET_USED(cmd);
	if (ctx == NULL || params != NULL)
		return -EINVAL;
	snaps = malloc(sizeof(*snaps) * ctx->nb_workers);
	if (snaps == NULL)
		return -ENOMEM;
	now = rte_rdtsc();
	for (unsigned int i = 0; i < ctx->nb_workers; i++)
		fwd_snap_lcore(ctx, i, now, &snaps[i]);
	ret = fwd_reply_lcores(d, snaps, ctx->nb_workers);
	free(snaps);
	return ret;
}

static int
lcore_cb(const char *cmd, const char *params, struct rte_tel_data *d)
{
	const struct fwd_ctx *ctx = tel_get();
	struct fwd_lcore_snap snap;
	unsigned long id;

	RTE_SET_USED(cmd);
	if (ctx == NULL || fwd_parse_id(params, RTE_MAX_LCORE - 1, &id) < 0 ||
		ctx->worker_index[id] < 0)
		return -EINVAL;
	fwd_snap_lcore(ctx, (unsigned int)ctx->worker_index[id], rte_rdtsc(), &snap);
	return fwd_reply_lcore(d, &snap);
}

static int
ports_cb(const char *cmd, const char *params, struct rte_tel_data *d)
{
	const struct fwd_ctx *ctx = tel_get();
	struct fwd_port_snap *snaps;
	uint64_t now;
	int ret;

	RTE_SET_USED(cmd);
	if (ctx == NULL || params != NULL)
		return -EINVAL;
	snaps = malloc(sizeof(*snaps) * ctx->nb_ports);
	if (snaps == NULL)
		return -ENOMEM;
	now = rte_rdtsc();
	for (unsigned int i = 0; i < ctx->nb_ports; i++)
		fwd_snap_port(ctx, i, now, &snaps[i]);
	ret = fwd_reply_ports(d, snaps, ctx->nb_ports);
	free(snaps);
	return ret;
}

static int
port_cb(const char *cmd, const char *params, struct rte_tel_data *d)
{
	const struct fwd_ctx *ctx = tel_get();
	struct fwd_port_snap snap;
	unsigned long id;

	RTE_SET_USED(cmd);
	if (ctx == NULL || fwd_parse_id(params, FWD_MAX_PORTS - 1, &id) < 0 ||
		ctx->port_index[id] < 0)
		return -EINVAL;
	fwd_snap_port(ctx, (unsigned int)ctx->port_index[id], rte_rdtsc(), &snap);
	return fwd_reply_port(d, &snap);
}

static int
info_cb(const char *cmd, const char *params, struct rte_tel_data *d)
{
	const struct fwd_ctx *ctx = tel_get();
	struct fwd_info_snap snap;

	RTE_SET_USED(cmd);
	if (ctx == NULL || params != NULL)
		return -EINVAL;
	fwd_snap_info(ctx, &snap);
	return fwd_reply_info(d, &snap);
}

/* Enter a callback that touches DPDK objects freed at shutdown; false once closing. */
static bool
tel_enter(struct fwd_ctx *ctx)
{
	__atomic_add_fetch(&ctx->tel_inflight, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&ctx->closing, __ATOMIC_SEQ_CST)) {
		__atomic_sub_fetch(&ctx->tel_inflight, 1, __ATOMIC_SEQ_CST);
		return false;
	}
	return true;
}

static void
tel_leave(struct fwd_ctx *ctx)
{
	__atomic_sub_fetch(&ctx->tel_inflight, 1, __ATOMIC_SEQ_CST);
}

static int
metrics_reply(int port_id, struct rte_tel_data *d)
{
	struct rte_metric_name *names = NULL;
	struct rte_metric_value *values = NULL;
	struct fwd_metric_snap *snap = NULL;
	int nb_names, nb_values, ret = -ENOMEM;
	unsigned int n = 0;

	/* Room for every name rte_metrics can hold: the count cannot outgrow it. */
	names = calloc(RTE_METRICS_MAX_METRICS, sizeof(*names));
	values = calloc(RTE_METRICS_MAX_METRICS, sizeof(*values));
	snap = calloc(RTE_METRICS_MAX_METRICS, sizeof(*snap));
	if (names == NULL || values == NULL || snap == NULL)
		goto out;
	nb_names = rte_metrics_get_names(names, RTE_METRICS_MAX_METRICS);
	if (nb_names < 0 || nb_names > RTE_METRICS_MAX_METRICS) {
		ret = nb_names < 0 ? nb_names : -EIO;
		goto out;
	}
	nb_values = rte_metrics_get_values(port_id, values, RTE_METRICS_MAX_METRICS);
	if (nb_values < 0 || nb_values > RTE_METRICS_MAX_METRICS) {
		ret = nb_values < 0 ? nb_values : -EIO;
		goto out;
	}
	/* A key registered after get_names has no name here: skip it. */
	for (int i = 0; i < nb_values; i++) {
		if (values[i].key >= (uint16_t)nb_names)
			continue;
		names[values[i].key].name[RTE_METRICS_MAX_NAME_LEN - 1] = '\0';
		snap[n].name = names[values[i].key].name;
		snap[n].value = values[i].value;
		n++;
	}
	ret = fwd_reply_metrics(d, port_id, snap, n);
out:
	free(snap);
	free(values);
	free(names);
	return ret;
}

static int
metrics_cb(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct fwd_ctx *ctx = tel_get();
	int port_id = RTE_METRICS_GLOBAL;
	unsigned long id;
	int ret;

	RTE_SET_USED(cmd);
	if (ctx == NULL)
		return -EINVAL;
	if (params != NULL) {
		if (fwd_parse_id(params, FWD_MAX_PORTS - 1, &id) < 0 ||
			!(ctx->existing_ports & (UINT64_C(1) << id)))
			return -EINVAL;
		port_id = (int)id;
	}
	if (!tel_enter(ctx))
		return -ESHUTDOWN;
	ret = metrics_reply(port_id, d);
	tel_leave(ctx);
	return ret;
}

int
fwd_telemetry_register(void)
{
	static const struct {
		const char *cmd;
		telemetry_cb fn;
		const char *help;
	} cmds[] = {
		{"/fwd/info", info_cb, "dpdktel-fwd: version, options, ports, lcores. No params"},
		{"/fwd/lcores", lcores_cb,
			"dpdktel-fwd: health of all forwarding lcores. No params"},
		{"/fwd/lcore", lcore_cb,
			"dpdktel-fwd: health and counters of one lcore. Param: id"},
		{"/fwd/ports", ports_cb, "dpdktel-fwd: link of all forwarded ports. No params"},
		{"/fwd/port", port_cb, "dpdktel-fwd: link and counters of one port. Param: id"},
		{"/fwd/metrics", metrics_cb,
			"dpdktel-fwd: rte_metrics values. Param: port id or none"},
	};

	for (size_t i = 0; i < RTE_DIM(cmds); i++) {
		int ret = rte_telemetry_register_cmd(cmds[i].cmd, cmds[i].fn, cmds[i].help);

		if (ret != 0) {
			fprintf(stderr, "%s: cannot register telemetry command %s: %s\n",
				FWD_APP_NAME, cmds[i].cmd, strerror(-ret));
			return ret;
		}
	}
	return 0;
}

void
fwd_telemetry_publish(struct fwd_ctx *ctx)
{
	__atomic_store_n(&tel_ctx, ctx, __ATOMIC_RELEASE);
}

void
fwd_telemetry_quiesce(struct fwd_ctx *ctx)
{
	if (tel_get() == NULL)
		return;
	__atomic_store_n(&ctx->closing, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&ctx->tel_inflight, __ATOMIC_SEQ_CST) != 0)
		rte_pause();
}
