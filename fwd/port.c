/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Port setup: which ports (-p), how they pair (0<->1, 2<->3, ...; an odd last one sends
 * back out of itself), one rx and one tx queue each, one mbuf pool, then stop and close.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "fwd.h"

static void
mask_to_list(uint64_t mask, char *buf, size_t len)
{
	uint16_t ids[FWD_MAX_PORTS];
	unsigned int n = 0;

	for (unsigned int i = 0; i < FWD_MAX_PORTS; i++)
		if (mask & (UINT64_C(1) << i))
			ids[n++] = (uint16_t)i;
	if (n == 0 || fwd_format_idlist(ids, n, buf, len) < 0)
		snprintf(buf, len, "none");
}

void
fwd_ports_select(struct fwd_ctx *ctx)
{
	uint64_t mask;
	uint16_t port;
	char list[RTE_TEL_MAX_STRING_LEN];

	for (unsigned int i = 0; i < FWD_MAX_PORTS; i++)
		ctx->port_index[i] = -1;
	RTE_ETH_FOREACH_DEV(port) {
		if (port >= FWD_MAX_PORTS) {
			FWD_LOG(WARNING, "port %u ignored: port ids above %d are not supported",
				port, FWD_MAX_PORTS - 1);
			continue;
		}
		ctx->existing_ports |= UINT64_C(1) << port;
	}
	if (ctx->existing_ports == 0)
		rte_exit(EXIT_FAILURE,
			"%s: no Ethernet port (add some with --vdev, e.g. "
			"--vdev=net_null0 --vdev=net_null1)\n",
			FWD_APP_NAME);
	mask = ctx->cfg.portmask_set ? ctx->cfg.portmask : ctx->existing_ports;
	if (mask & ~ctx->existing_ports) {
		unsigned int missing = (unsigned int)__builtin_ctzll(mask & ~ctx->existing_ports);

		mask_to_list(ctx->existing_ports, list, sizeof(list));
		rte_exit(EXIT_FAILURE, "%s: -p 0x%" PRIx64 ": port %u does not exist (ports: %s)\n",
			FWD_APP_NAME, ctx->cfg.portmask, missing, list);
	}
	for (unsigned int i = 0; i < FWD_MAX_PORTS; i++) {
		struct fwd_port *p;
		int ret;

		if (!(mask & (UINT64_C(1) << i)))
			continue;
		p = &ctx->ports[ctx->nb_ports];
		p->port_id = (uint16_t)i;
		ret = rte_eth_dev_get_name_by_port(p->port_id, p->name);
		if (ret != 0)
			snprintf(p->name, sizeof(p->name), "port%u", i);
		ret = rte_eth_macaddr_get(p->port_id, &p->mac);
		if (ret != 0)
			rte_exit(EXIT_FAILURE, "%s: cannot read the MAC address of port %u: %s\n",
				FWD_APP_NAME, i, rte_strerror(-ret));
		ctx->port_index[i] = (int16_t)ctx->nb_ports;
		ctx->nb_ports++;
	}
	/* Pairs in port order; with an odd count the last port is its own peer. */
	for (unsigned int i = 0; i < ctx->nb_ports; i += 2) {
		if (i + 1 < ctx->nb_ports) {
			ctx->ports[i].peer = ctx->ports[i + 1].port_id;
			ctx->ports[i + 1].peer = ctx->ports[i].port_id;
		} else {
			ctx->ports[i].peer = ctx->ports[i].port_id;
		}
	}
}

static void
port_start(struct fwd_ctx *ctx, struct fwd_port *p)
{
	struct rte_eth_conf conf;
	struct rte_eth_dev_info info;
	struct rte_eth_txconf txconf;
	uint16_t nb_rxd = FWD_NB_RXD, nb_txd = FWD_NB_TXD;
	uint16_t id = p->port_id;
	int socket = rte_eth_dev_socket_id(id);
	int ret;

	if (socket < 0)
		socket = (int)rte_socket_id();
	memset(&conf, 0, sizeof(conf));
	ret = rte_eth_dev_info_get(id, &info);
	if (ret != 0)
		rte_exit(EXIT_FAILURE, "%s: port %u (%s): cannot get device info: %s\n",
			FWD_APP_NAME, id, p->name, rte_strerror(-ret));
	/* One pool, refcount 1: mbufs may go back to it the fast way where supported. */
	if (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE)
		conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE;
	ret = rte_eth_dev_configure(id, 1, 1, &conf);
	if (ret < 0)
		rte_exit(EXIT_FAILURE, "%s: port %u (%s): cannot configure: %s\n", FWD_APP_NAME, id,
			p->name, rte_strerror(-ret));
	ret = rte_eth_dev_adjust_nb_rx_tx_desc(id, &nb_rxd, &nb_txd);
	if (ret < 0)
		rte_exit(EXIT_FAILURE, "%s: port %u (%s): cannot adjust descriptor counts: %s\n",
			FWD_APP_NAME, id, p->name, rte_strerror(-ret));
	ret = rte_eth_rx_queue_setup(id, 0, nb_rxd, (unsigned int)socket, NULL, ctx->pool);
	if (ret < 0)
		rte_exit(EXIT_FAILURE, "%s: port %u (%s): cannot set up its rx queue: %s\n",
			FWD_APP_NAME, id, p->name, rte_strerror(-ret));
	txconf = info.default_txconf;
	txconf.offloads = conf.txmode.offloads;
	ret = rte_eth_tx_queue_setup(id, 0, nb_txd, (unsigned int)socket, &txconf);
	if (ret < 0)
		rte_exit(EXIT_FAILURE, "%s: port %u (%s): cannot set up its tx queue: %s\n",
			FWD_APP_NAME, id, p->name, rte_strerror(-ret));
	/* We look at no packet type: let the driver skip parsing them (as l2fwd). */
	ret = rte_eth_dev_set_ptypes(id, RTE_PTYPE_UNKNOWN, NULL, 0);
	if (ret < 0 && ret != -ENOTSUP)
		FWD_LOG(DEBUG, "port %u: cannot disable packet type parsing: %s", id,
			rte_strerror(-ret));
	ret = rte_eth_dev_start(id);
	if (ret < 0)
		rte_exit(EXIT_FAILURE, "%s: port %u (%s): cannot start: %s\n", FWD_APP_NAME, id,
			p->name, rte_strerror(-ret));
	/* Frames for other MACs must reach us (rewrite mode sends to 02:00:00:00:00:NN). */
	ret = rte_eth_promiscuous_enable(id);
	if (ret == -ENOTSUP)
		FWD_LOG(DEBUG, "port %u (%s) has no promiscuous mode", id, p->name);
	else if (ret != 0)
		rte_exit(EXIT_FAILURE, "%s: port %u (%s): cannot enable promiscuous mode: %s\n",
			FWD_APP_NAME, id, p->name, rte_strerror(-ret));
}

static void
tx_dropped(struct rte_mbuf **unsent, uint16_t count, void *userdata)
{
	struct fwd_flow *f = userdata;

	rte_pktmbuf_free_bulk(unsent, count);
	__atomic_store_n(&f->tx_dropped, f->tx_dropped + count, __ATOMIC_RELAXED);
}

static void
flow_tx_buffer(struct fwd_flow *f)
{
	int socket = rte_eth_dev_socket_id(f->tx_port);
	int ret;

	f->txb = rte_zmalloc_socket("fwd_tx_buffer", RTE_ETH_TX_BUFFER_SIZE(FWD_BURST), 0,
		socket < 0 ? SOCKET_ID_ANY : socket);
	if (f->txb == NULL)
		rte_exit(EXIT_FAILURE, "%s: cannot allocate a tx buffer for port %u\n",
			FWD_APP_NAME, f->tx_port);
	ret = rte_eth_tx_buffer_init(f->txb, FWD_BURST);
	if (ret == 0)
		ret = rte_eth_tx_buffer_set_err_callback(f->txb, tx_dropped, f);
	if (ret != 0)
		rte_exit(EXIT_FAILURE, "%s: cannot set up the tx buffer for port %u: %s\n",
			FWD_APP_NAME, f->tx_port, rte_strerror(-ret));
}

void
fwd_ports_start(struct fwd_ctx *ctx)
{
	unsigned int nb_mbufs = ctx->nb_ports *
		(FWD_NB_RXD + FWD_NB_TXD + FWD_BURST + ctx->nb_workers * FWD_MEMPOOL_CACHE);

	nb_mbufs = RTE_MAX(nb_mbufs, (unsigned int)FWD_MIN_MBUFS);
	ctx->pool = rte_pktmbuf_pool_create("fwd_mbuf_pool", nb_mbufs, FWD_MEMPOOL_CACHE, 0,
		RTE_MBUF_DEFAULT_BUF_SIZE, (int)rte_socket_id());
	if (ctx->pool == NULL)
		rte_exit(EXIT_FAILURE,
			"%s: cannot create a pool of %u mbufs: %s (give EAL more "
			"memory, e.g. -m 512)\n",
			FWD_APP_NAME, nb_mbufs, rte_strerror(rte_errno));
	for (unsigned int i = 0; i < ctx->nb_ports; i++)
		port_start(ctx, &ctx->ports[i]);
	for (unsigned int w = 0; w < ctx->nb_workers; w++)
		for (unsigned int f = 0; f < ctx->workers[w].nb_flows; f++)
			flow_tx_buffer(&ctx->workers[w].flows[f]);
}

void
fwd_ports_close(struct fwd_ctx *ctx)
{
	/* The workers have returned: nothing uses the tx buffers any more. */
	for (unsigned int w = 0; w < ctx->nb_workers; w++)
		for (unsigned int f = 0; f < ctx->workers[w].nb_flows; f++) {
			rte_free(ctx->workers[w].flows[f].txb);
			ctx->workers[w].flows[f].txb = NULL;
		}
	for (unsigned int i = 0; i < ctx->nb_ports; i++) {
		uint16_t id = ctx->ports[i].port_id;
		int ret;

		ret = rte_eth_dev_stop(id);
		if (ret != 0)
			FWD_LOG(WARNING, "port %u: stop failed: %s", id, rte_strerror(-ret));
		ret = rte_eth_dev_close(id);
		if (ret != 0)
			FWD_LOG(WARNING, "port %u: close failed: %s", id, rte_strerror(-ret));
	}
}
