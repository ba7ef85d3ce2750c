/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Telemetry replies of dpdktel-fwd (/fwd/...), built from plain snapshot structs.
 *
 * The builders know nothing of the running forwarder: telemetry.c takes a snapshot with
 * relaxed loads and hands it here. That keeps the reply shapes testable without EAL: the
 * unit test renders them for 64 lcores and 64 ports with a stand-in of the rte_tel_data_*
 * functions and checks the 16 KiB / 256 / 512 limits (tests/fwd/test_reply.c).
 *
 * Every builder returns 0 with *d filled, or a negative errno with everything it allocated
 * freed and *d to be discarded (the callback then returns < 0 and DPDK replies null; DPDK
 * would not free containers on that path). Shapes: docs/fwd-telemetry.md.
 */
#ifndef FWD_REPLY_H
#define FWD_REPLY_H

#include <stddef.h>
#include <stdint.h>

#include <rte_telemetry.h>

#include "tel_compat.h"

/** Port ids the forwarder handles: 0-63 (the -p mask has 64 bits). */
#define FWD_MAX_PORTS 64
/** Most forwarding lcores: what /fwd/lcores is sized (and tested) for. */
#define FWD_MAX_LCORES 64
/** Longest port name kept (RTE_ETH_NAME_MAX_LEN). */
#define FWD_PORT_NAME_MAX 64
/** Largest reply DPDK 22.11 sends, in bytes. */
#define FWD_TEL_MAX_REPLY 16384

struct fwd_lcore_snap {
	unsigned int lcore_id;
	unsigned int state; /* enum fwd_lcore_state */
	uint64_t heartbeat;
	uint64_t heartbeat_age_us;
	uint64_t stalls;
	uint64_t last_change_age_ms;
	uint64_t rx_packets;
	uint64_t tx_packets;
	uint64_t tx_dropped;
	uint64_t busy_cycles;
	uint64_t total_cycles;
	unsigned int nb_ports;
	uint16_t ports[FWD_MAX_PORTS]; /* ports it receives on, ascending */
};

struct fwd_port_snap {
	uint16_t port_id;
	char name[FWD_PORT_NAME_MAX];
	uint64_t link; /* fwd_link_word() */
	uint64_t link_changes;
	uint64_t last_change_age_ms;
	uint64_t rx_packets;
	uint64_t tx_packets;
	uint64_t tx_dropped;
	unsigned int lcore_id; /* the lcore that receives on it */
	uint16_t peer_port; /* where its packets leave */
};

struct fwd_info_snap {
	const char *app;
	const char *version;
	int pid;
	uint64_t uptime_ms;
	const char *mac_mode;
	unsigned int burst;
	unsigned int heartbeat_ms;
	unsigned int stall_ms;
	unsigned int link_poll_ms;
	uint64_t link_check_age_ms; /* since the main lcore last finished a link check */
	unsigned int idle_sleep_us;
	unsigned int stats_period_s;
	unsigned int main_lcore;
	unsigned int nb_ports;
	uint16_t ports[FWD_MAX_PORTS];
	unsigned int nb_lcores;
	unsigned int lcores[FWD_MAX_LCORES];
};

struct fwd_metric_snap {
	const char *name;
	uint64_t value;
};

/** /fwd/lcores: a dict of index-aligned arrays, one entry per forwarding lcore. */
int fwd_reply_lcores(struct rte_tel_data *d, const struct fwd_lcore_snap *s, unsigned int n);
/** /fwd/lcore,<id>: one lcore, flat. */
int fwd_reply_lcore(struct rte_tel_data *d, const struct fwd_lcore_snap *s);
/** /fwd/ports: a dict of index-aligned arrays, one entry per forwarded port. */
int fwd_reply_ports(struct rte_tel_data *d, const struct fwd_port_snap *s, unsigned int n);
/** /fwd/port,<id>: one port, flat. */
int fwd_reply_port(struct rte_tel_data *d, const struct fwd_port_snap *s);
/** /fwd/info. */
int fwd_reply_info(struct rte_tel_data *d, const struct fwd_info_snap *s);
/**
 * /fwd/metrics[,<port>]: {"port_id":N,"<name>":value,...}. Names that are not valid
 * telemetry keys, and the reserved keys port_id and truncated, are skipped. If the rest
 * would not fit in one reply (16 KiB, fewer than 256 entries), the first ones that fit are
 * sent, followed by "truncated":1.
 */
int fwd_reply_metrics(
	struct rte_tel_data *d, int port_id, const struct fwd_metric_snap *m, unsigned int n);

/**
 * Parse a telemetry parameter that must be a decimal id in [0, max]: digits only, nothing
 * before or after. Returns 0 and the id in *ret, or -EINVAL (missing, empty, garbage) or
 * -ERANGE (above max).
 */
int fwd_parse_id(const char *params, unsigned long max, unsigned long *ret);

/**
 * Write ids (ascending) in id-list form, "0-3,8", into buf. Returns the length, or -E2BIG
 * when it does not fit in len bytes (with the NUL).
 */
int fwd_format_idlist(const uint16_t *ids, unsigned int n, char *buf, size_t len);

/** Whether name is a valid telemetry dict key: 1-127 characters of [A-Za-z0-9_/]. */
int fwd_tel_key_valid(const char *name);

#endif
