/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The kernel netdev beside a DPDK port, as a link source for dpdktel_events
 * (docs/dpdktel_events.md, "Links from the kernel netdev").
 *
 * Where a port is backed by a kernel network device (net_tap, net_af_packet, net_af_xdp, the
 * bifurcated mlx5 and mlx4), the netdev's carrier is the port's link, and rtnetlink tells
 * every change of it (RTNLGRP_LINK) to our own process, in milliseconds, with no request to
 * the application. One struct ev_netdev is one application's network namespace: a
 * NETLINK_ROUTE socket opened inside /proc/<pid>/ns/net, the table of that namespace's links
 * (one RTM_GETLINK dump, then the events), and the ports mapped to them.
 *
 * Carrier here is (ifi_flags & IFF_UP) && (ifi_flags & IFF_RUNNING), what every one of these
 * drivers reads as its link (the kernel sets IFF_RUNNING only on an interface that is up and
 * RFC 2863 operationally up, net/core/dev.c dev_get_flags()):
 *   - mlx5: mlx5_link_update_unlocked_gs() / _gset() (drivers/net/mlx5/linux/
 *     mlx5_ethdev_os.c), SIOCGIFFLAGS IFF_UP && IFF_RUNNING, 22.11 to 26.07;
 *   - mlx4: mlx4_link_update() (drivers/net/mlx4/mlx4_ethdev.c), the same;
 *   - tap: tap_link_update() (drivers/net/tap/rte_eth_tap.c), IFF_UP && IFF_RUNNING of the
 *     remote= netdev if any, then of the tap itself (SIOCGIFFLAGS in 22.11 and 23.11,
 *     netlink tap_nl_get_flags() from 24.11 on);
 *   - af_packet: eth_link_update() (drivers/net/af_packet/rte_eth_af_packet.c) reads
 *     IFF_RUNNING from 24.11 on; in 22.11 and 23.11 it does nothing: the link is set up by
 *     eth_dev_start() and never follows the interface;
 *   - af_xdp: eth_link_update() (drivers/net/af_xdp/rte_eth_af_xdp.c) does nothing in every
 *     release: up from eth_dev_start() on.
 *   - pcap with iface=: eth_link_update() (drivers/net/pcap/pcap_ethdev.c) does nothing: up
 *     from eth_dev_start() on.
 * Where DPDK never follows the netdev (af_xdp, pcap; af_packet before 24.11), the netdev is
 * the port's only true link signal (struct ev_netdev_port.only_signal).
 *
 * Pure parts (no I/O, unit-tested with crafted messages and a sysfs tree in a temp dir):
 * ev_nl_parse(), the link table, ev_netdev_resolve() and the helpers below it. I/O: the
 * ev_netdev object (socket, namespace switch, dump, drain). Nothing here logs or includes a
 * collectd header: errors are returned, with a reason where an operator needs one.
 *
 * Threads: a struct ev_netdev is used by one thread at a time (the instance's poll thread).
 */
#ifndef DTEL_EVENTS_NETDEV_H
#define DTEL_EVENTS_NETDEV_H

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dtel.h"

/** Room for a reason given to an operator ("why not used"). */
#define EV_NETDEV_WHY_MAX 200

/** What kind of port a netdev backs, from the port's device name. */
enum ev_netdev_kind {
	EV_NETDEV_KIND_NONE, /* no kernel netdev (net_null, net_ring, vhost, a vfio PCI NIC) */
	EV_NETDEV_KIND_TAP, /* net_tap, net_tun */
	EV_NETDEV_KIND_AF_PACKET,
	EV_NETDEV_KIND_AF_XDP,
	EV_NETDEV_KIND_PCAP, /* net_pcap with iface= (its link never follows either) */
	EV_NETDEV_KIND_PCI, /* a PCI or auxiliary device: bifurcated (mlx5, mlx4) if it has one */
	EV_NETDEV_KIND_UNKNOWN, /* a driver this file does not know */
};

/** How a port's netdev was found. */
enum ev_netdev_how {
	EV_NETDEV_BY_OPERATOR, /* PortNetdev */
	EV_NETDEV_BY_IFACE, /* iface= of the port's --vdev (/eal/params) */
	EV_NETDEV_BY_PARENT, /* IFLA_PARENT_DEV_NAME is the port's device (kernel >= 5.17) */
	EV_NETDEV_BY_SYSFS, /* /sys/bus/<bus>/devices/<device>/net/ (collectd's netns only) */
	EV_NETDEV_BY_MAC, /* the one netdev of the namespace with the port's MAC address */
};

/** What the caller knows of a port, to find its netdev. The pointers are borrowed. */
struct ev_netdev_want {
	const struct dtel_port_info *info; /* /ethdev/info of the port: name, mac_addr */
	const char *ifname; /* the operator's (PortNetdev), or NULL */
	const char *devargs; /* the arguments of its --vdev ("iface=veth0,qpairs=1"), or NULL */
	int dpdk_version; /* dtel_dpdk_version() of the greeting; < 0: unknown */
};

/** A port's netdev. */
struct ev_netdev_port {
	char ifname[IFNAMSIZ]; /* its name when mapped (it may be renamed later) */
	int ifindex;
	enum ev_netdev_kind kind;
	enum ev_netdev_how how;
	/* DPDK's link of the port never follows this netdev (af_xdp, pcap; af_packet < 24.11):
	 * the netdev is the only true signal, the telemetry cannot confirm a change of it. */
	bool only_signal;
};

/* The object: one application's network namespace ----------------------------------- */

struct ev_netdev;

/**
 * Open rtnetlink (NETLINK_ROUTE, RTNLGRP_LINK; SOCK_CLOEXEC | SOCK_NONBLOCK) in the network
 * namespace of process @app_pid (the SO_PEERCRED pid of its telemetry socket, valid in our
 * pid namespace) and read its links (one RTM_GETLINK dump, waited for up to @timeout_ms).
 * In collectd's own namespace the socket is opened directly; in another one by a short-lived
 * thread of ours that enters /proc/<pid>/ns/net (setns), so the caller's thread never changes
 * namespace. On success *ret (the caller's; ev_netdev_close()) and 0; on failure *ret is
 * untouched and @why (the caller's, may be NULL) says why for an operator:
 *   -ESRCH   @app_pid <= 0: the application's pid is not visible from collectd;
 *   -ENOENT  no /proc/<pid>: the process is gone;
 *   -EACCES  its /proc/<pid>/ns/net may not be read (another user's process);
 *   -EPERM   entering its namespace needs CAP_SYS_ADMIN;
 *   -ETIMEDOUT the dump did not end within @timeout_ms; -ENOMEM; other -errno of socket().
 */
int ev_netdev_open(long app_pid, int timeout_ms, struct ev_netdev **ret, char *why, size_t size);

/** The socket, for poll(): readable when link events (or the rest of a dump) wait. */
int ev_netdev_fd(const struct ev_netdev *nd);

/** Whether the application is in another network namespace than collectd. */
bool ev_netdev_other_netns(const struct ev_netdev *nd);

/**
 * Find which netdev backs @port (ev_netdev_resolve() over this namespace's links, with
 * /sys only in collectd's own namespace), and follow it: later changes of its carrier go to
 * ev_netdev_drain()'s callback. A port mapped before is mapped anew. 0 and *ret (may be
 * NULL); -ENOENT (the port has no netdev, or it cannot be told) or -ENODEV (the operator's
 * netdev does not exist) with @why; -ENOMEM.
 */
int ev_netdev_map(struct ev_netdev *nd, unsigned int port, const struct ev_netdev_want *w,
	struct ev_netdev_port *ret, char *why, size_t size);

/** Stop following @port (a port no longer listed). */
void ev_netdev_unmap(struct ev_netdev *nd, unsigned int port);

/** Called by ev_netdev_drain() for each mapped port whose carrier changed: 1 up, 0 down,
 * -ENODEV its netdev was deleted (followed again if one of its name appears). */
typedef void ev_netdev_changed_fn(void *ctx, unsigned int port, int carrier);

/**
 * Read every pending message (never blocks) and call @changed for each mapped port whose
 * carrier is not what it last said (or what ev_netdev_map() found). After an overrun
 * (ENOBUFS: the kernel dropped events) the links are read again with a dump, and the ports
 * whose carrier differs from the last said are called back then. Returns the number of
 * callbacks, or -errno of recv() other than EAGAIN/ENOBUFS (-EPROTO: a malformed message).
 */
int ev_netdev_drain(struct ev_netdev *nd, ev_netdev_changed_fn *changed, void *ctx);

/** @port's carrier as last known: 1 up, 0 down, -ENOENT not mapped, -ENODEV deleted. */
int ev_netdev_carrier(const struct ev_netdev *nd, unsigned int port);

/** Overruns met so far (each answered by a new dump). */
unsigned int ev_netdev_overruns(const struct ev_netdev *nd);

/** Close the socket and free everything. Accepts NULL. */
void ev_netdev_close(struct ev_netdev *nd);

/* Pure parts ------------------------------------------------------------------------- */

/** One link, from an RTM_NEWLINK or RTM_DELLINK message. */
struct ev_nl_link {
	int ifindex;
	unsigned int flags; /* ifi_flags */
	char ifname[IFNAMSIZ];
	bool has_mac; /* IFLA_ADDRESS of 6 bytes */
	uint8_t mac[6];
	char parent_bus[32]; /* IFLA_PARENT_DEV_BUS_NAME ("pci"), "" */
	char parent_dev[64]; /* IFLA_PARENT_DEV_NAME ("0000:03:00.0"), "" */
	bool deleted; /* RTM_DELLINK */
	bool from_dump; /* the answer to our RTM_GETLINK (NLM_F_MULTI), not an event */
};

/** The carrier of a link by its flags (see the top of this file). */
static inline bool
ev_nl_carrier(unsigned int flags)
{
	return (flags & IFF_UP) && (flags & IFF_RUNNING);
}

/** What ev_nl_parse() met besides links. */
#define EV_NL_DONE 1u /* NLMSG_DONE: a dump ended */
#define EV_NL_ACK 2u /* NLMSG_ERROR with error 0 */
#define EV_NL_INTR 4u /* NLM_F_DUMP_INTR: links changed during the dump, which may be stale */

/**
 * Parse one datagram of rtnetlink messages: @fn(@ctx, link) for each RTM_NEWLINK and
 * RTM_DELLINK (others are skipped). Returns the EV_NL_* flags met (>= 0); the -errno of an
 * NLMSG_ERROR; -EPROTO for a malformed message (a length that does not fit, an ifinfomsg or
 * an attribute cut short, a name without its NUL); or what @fn returned when negative
 * (parsing stops there).
 */
int ev_nl_parse(
	const void *buf, size_t len, int (*fn)(void *ctx, const struct ev_nl_link *l), void *ctx);

/** The links of one namespace, by ifindex. */
struct ev_nl_table {
	struct ev_nl_link *v;
	size_t n, cap;
};

/** Insert, update (by ifindex) or, for a deleted link, remove. 0 or -ENOMEM. */
int ev_nl_table_apply(struct ev_nl_table *t, const struct ev_nl_link *l);
const struct ev_nl_link *ev_nl_table_find(const struct ev_nl_table *t, int ifindex);
const struct ev_nl_link *ev_nl_table_find_name(const struct ev_nl_table *t, const char *ifname);
void ev_nl_table_clear(struct ev_nl_table *t);

/**
 * Which link of @links backs the port @w describes. In order: the operator's name; for a
 * vdev, the iface= of its devargs, else the one link with its MAC address; for a PCI (or
 * auxiliary) device, the links whose IFLA_PARENT_DEV_NAME is it, else those listed in
 * @sysfs_root/bus/<bus>/devices/<device>/net/ (@sysfs_root NULL: not collectd's namespace,
 * /sys does not show the application's netdevs), one of several told apart by the MAC
 * address. 0 and *ret; -ENOENT (no netdev, or several that cannot be told apart) or -ENODEV
 * (the operator's netdev is not there) with the reason in @why (may be NULL).
 */
int ev_netdev_resolve(const struct ev_nl_table *links, const struct ev_netdev_want *w,
	const char *sysfs_root, struct ev_netdev_port *ret, char *why, size_t size);

/** The kind of port a DPDK device name gives ("net_tap0", "0000:03:00.0_representor_vf1"). */
enum ev_netdev_kind ev_netdev_kind_of(const char *dev_name);

/** Whether DPDK's link of such a port never follows its netdev (see the top of the file). */
bool ev_netdev_only_signal(enum ev_netdev_kind kind, int dpdk_version);

/**
 * The arguments of device @dev_name in the EAL arguments @argv (dtel_parse_eal_argv()):
 * "iface=veth0" of "--vdev=net_af_packet0,iface=veth0" or "--vdev net_af_packet0,iface=...".
 * Copied into @ret; "" for a --vdev without arguments. -ENOENT when @dev_name is not a --vdev
 * there, -ENAMETOOLONG when they do not fit.
 */
int ev_netdev_vdev_args(const char (*argv)[DTEL_STRING_MAX], size_t argc, const char *dev_name,
	char *ret, size_t size);

/**
 * The value of @key in devargs "k1=v1,k2=v2" (no bus prefix), into @ret. -ENOENT when it is
 * not there, -ENAMETOOLONG when it does not fit.
 */
int ev_netdev_devarg(const char *devargs, const char *key, char *ret, size_t size);

/** PortNetdev of an <Instance> block: the netdev of each port named there. */
struct ev_port_netdev {
	unsigned int port;
	char ifname[IFNAMSIZ];
};
struct ev_port_netdevs {
	size_t n;
	struct ev_port_netdev *v; /* malloc'ed, owned by the block that set them */
};

/** The netdev the operator named for @port, or NULL. */
const char *ev_port_netdev_of(const struct ev_port_netdevs *pn, unsigned int port);

/**
 * A PortNetdev value, "<port>=<netdev>" ("0=eth3"): the port (0 to 65535) and a netdev name
 * the kernel accepts (1 to IFNAMSIZ - 1 bytes; no '/', ':' or white space; not "." or
 * ".."). 0, or -EINVAL with what is wrong in @why.
 */
int ev_netdev_parse_spec(const char *spec, unsigned int *ret_port, char ret_ifname[IFNAMSIZ],
	char *why, size_t size);

#endif
