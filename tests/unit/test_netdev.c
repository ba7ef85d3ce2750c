/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The kernel netdev as a link source (plugins/events/netdev.h). The pure parts with crafted
 * rtnetlink messages (the layout of include/uapi/linux/rtnetlink.h and the attributes the
 * kernel's rtnl_fill_ifinfo() in net/core/rtnetlink.c writes: IFLA_IFNAME, IFLA_ADDRESS,
 * IFLA_PARENT_DEV_NAME, IFLA_PARENT_DEV_BUS_NAME) and a sysfs tree in a temp dir. The I/O
 * parts for real, as root, in network namespaces of the test's own (unshare(CLONE_NEWNET)):
 * veth pairs made with ip(8), their carrier taken away from the peer, a namespace switch into
 * a child's namespace, an overrun, and the refusals (no CAP_SYS_ADMIN, a process gone).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <poll.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "events/netdev.h"

/* Crafted messages ---------------------------------------------------------------------- */

struct msgs {
	_Alignas(4) char b[16384];
	size_t n;
};

static void
put_attr(struct msgs *m, unsigned short type, const void *data, size_t len)
{
	struct rtattr a = {.rta_len = (unsigned short)RTA_LENGTH(len), .rta_type = type};

	memcpy(m->b + m->n, &a, sizeof(a));
	memcpy(m->b + m->n + RTA_LENGTH(0), data, len);
	m->n += RTA_SPACE(len);
}

static void
put_str(struct msgs *m, unsigned short type, const char *s)
{
	if (s != NULL)
		put_attr(m, type, s, strlen(s) + 1);
}

/* One link message as the kernel writes it (rtnl_fill_ifinfo). */
struct lk {
	unsigned short type, nlflags;
	int ifindex;
	unsigned int flags;
	const char *name, *mac, *bus, *dev; /* mac: 6 bytes */
};

static void
put_link(struct msgs *m, const struct lk *k)
{
	size_t start = m->n;
	struct nlmsghdr h = {.nlmsg_type = k->type, .nlmsg_flags = k->nlflags};
	struct ifinfomsg ifi = {.ifi_index = k->ifindex, .ifi_flags = k->flags};

	m->n += NLMSG_HDRLEN;
	memcpy(m->b + m->n, &ifi, sizeof(ifi));
	m->n += NLMSG_ALIGN(sizeof(ifi));
	put_attr(m, IFLA_MTU, &(uint32_t){1500}, 4);
	put_str(m, IFLA_IFNAME, k->name);
	if (k->mac != NULL)
		put_attr(m, IFLA_ADDRESS, k->mac, 6);
	put_str(m, IFLA_PARENT_DEV_BUS_NAME, k->bus);
	put_str(m, IFLA_PARENT_DEV_NAME, k->dev);
	h.nlmsg_len = (uint32_t)(m->n - start);
	memcpy(m->b + start, &h, sizeof(h));
}

static void
put_ctl(struct msgs *m, unsigned short type, unsigned short nlflags, int err)
{
	struct nlmsghdr h = {.nlmsg_len = NLMSG_LENGTH(sizeof(struct nlmsgerr)),
		.nlmsg_type = type,
		.nlmsg_flags = nlflags};

	memset(m->b + m->n, 0, h.nlmsg_len);
	memcpy(m->b + m->n, &h, sizeof(h));
	memcpy(m->b + m->n + NLMSG_HDRLEN, &err, sizeof(err));
	m->n += NLMSG_ALIGN(h.nlmsg_len);
}

#define UPRUN (IFF_UP | IFF_RUNNING)
static const char mac_a[6] = {0x32, 0xe4, 0xee, 0xe5, 0xee, 0xef};
static const char mac_b[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x0b};

static int
into_table(void *ctx, const struct ev_nl_link *l)
{
	return ev_nl_table_apply(ctx, l);
}

static void
parse_dump_and_events(void **state)
{
	struct msgs m = {.n = 0};
	struct ev_nl_table t = {0};
	const struct ev_nl_link *l;

	(void)state;
	put_link(&m, &(struct lk){RTM_NEWLINK, NLM_F_MULTI, 7, UPRUN, "veth0", mac_a, NULL, NULL});
	put_link(&m,
		&(struct lk){RTM_NEWLINK, NLM_F_MULTI, 9, IFF_UP, "enp3s0f0", mac_b, "pci",
			"0000:03:00.0"});
	put_ctl(&m, NLMSG_DONE, NLM_F_MULTI, 0);
	assert_int_equal(ev_nl_parse(m.b, m.n, into_table, &t), EV_NL_DONE);
	assert_int_equal(t.n, 2);
	l = ev_nl_table_find(&t, 7);
	assert_non_null(l);
	assert_string_equal(l->ifname, "veth0");
	assert_true(l->from_dump && l->has_mac && memcmp(l->mac, mac_a, 6) == 0);
	assert_true(ev_nl_carrier(l->flags));
	l = ev_nl_table_find_name(&t, "enp3s0f0");
	assert_string_equal(l->parent_bus, "pci");
	assert_string_equal(l->parent_dev, "0000:03:00.0");
	/* Up but not running (no carrier) is down, as for every driver that reads the flags. */
	assert_false(ev_nl_carrier(l->flags));
	assert_false(ev_nl_carrier(IFF_RUNNING));

	/* Events: one changes a link, one deletes the other. */
	m.n = 0;
	put_link(&m,
		&(struct lk){RTM_NEWLINK, 0, 9, UPRUN, "enp3s0f0", mac_b, "pci", "0000:03:00.0"});
	put_link(&m, &(struct lk){RTM_DELLINK, 0, 7, 0, "veth0", NULL, NULL, NULL});
	assert_int_equal(ev_nl_parse(m.b, m.n, into_table, &t), 0);
	assert_int_equal(t.n, 1);
	assert_null(ev_nl_table_find(&t, 7));
	assert_true(ev_nl_carrier(ev_nl_table_find(&t, 9)->flags));
	assert_false(ev_nl_table_find(&t, 9)->from_dump);
	ev_nl_table_clear(&t);
}

static void
parse_control_messages(void **state)
{
	struct msgs m = {.n = 0};
	struct ev_nl_table t = {0};

	(void)state;
	put_ctl(&m, NLMSG_ERROR, 0, -EBUSY);
	assert_int_equal(ev_nl_parse(m.b, m.n, into_table, &t), -EBUSY);
	m.n = 0;
	put_ctl(&m, NLMSG_ERROR, 0, 0);
	assert_int_equal(ev_nl_parse(m.b, m.n, into_table, &t), EV_NL_ACK);
	m.n = 0;
	/* A dump the kernel could not keep consistent (links changed under it). */
	put_ctl(&m, NLMSG_DONE, NLM_F_MULTI | NLM_F_DUMP_INTR, 0);
	assert_int_equal(ev_nl_parse(m.b, m.n, into_table, &t), EV_NL_DONE | EV_NL_INTR);
	m.n = 0;
	put_ctl(&m, NLMSG_DONE, NLM_F_MULTI, -EINTR);
	assert_int_equal(ev_nl_parse(m.b, m.n, into_table, &t), -EINTR);
	m.n = 0;
	put_ctl(&m, NLMSG_NOOP, 0, 0);
	assert_int_equal(ev_nl_parse(m.b, m.n, into_table, &t), 0);
	assert_int_equal(t.n, 0);
}

/* Every length the kernel would never send is refused, never read past. */
static void
parse_malformed(void **state)
{
	struct msgs m = {.n = 0};
	struct ev_nl_table t = {0};
	struct nlmsghdr h;
	size_t whole;

	(void)state;
	put_link(&m, &(struct lk){RTM_NEWLINK, 0, 3, UPRUN, "eth0", mac_a, NULL, NULL});
	whole = m.n;
	for (size_t cut = 1; cut < whole; cut++) {
		/* The message says it is longer than what arrived. */
		assert_int_equal(ev_nl_parse(m.b, cut, into_table, &t), -EPROTO);
	}
	memcpy(&h, m.b, sizeof(h));
	/* An attribute longer than its message. */
	h.nlmsg_len = NLMSG_LENGTH(sizeof(struct ifinfomsg)) + 6;
	memcpy(m.b, &h, sizeof(h));
	assert_int_equal(ev_nl_parse(m.b, h.nlmsg_len, into_table, &t), -EPROTO);
	/* A name without its NUL. */
	m.n = 0;
	put_link(&m, &(struct lk){RTM_NEWLINK, 0, 3, UPRUN, NULL, NULL, NULL, NULL});
	put_attr(&m, IFLA_IFNAME, "eth0", 4);
	memcpy(&h, m.b, sizeof(h));
	h.nlmsg_len = (uint32_t)m.n;
	memcpy(m.b, &h, sizeof(h));
	assert_int_equal(ev_nl_parse(m.b, m.n, into_table, &t), -EPROTO);
	/* A header that says it is shorter than a header. */
	h.nlmsg_len = 4;
	memcpy(m.b, &h, sizeof(h));
	assert_int_equal(ev_nl_parse(m.b, m.n, into_table, &t), -EPROTO);
	assert_int_equal(t.n, 0);
	ev_nl_table_clear(&t);
}

/* What the device name of /ethdev/info says ---------------------------------------------- */

static void
kinds(void **state)
{
	static const struct {
		const char *name;
		enum ev_netdev_kind kind;
	} cases[] = {
		{"net_tap0", EV_NETDEV_KIND_TAP},
		{"net_tun3", EV_NETDEV_KIND_TAP},
		{"net_af_packet0", EV_NETDEV_KIND_AF_PACKET},
		{"eth_af_packet1", EV_NETDEV_KIND_AF_PACKET},
		{"net_af_xdp0", EV_NETDEV_KIND_AF_XDP},
		{"net_pcap0", EV_NETDEV_KIND_PCAP},
		{"0000:03:00.0", EV_NETDEV_KIND_PCI},
		{"0000:af:00.1_representor_c0pf0vf3", EV_NETDEV_KIND_PCI},
		{"0000:03:00.0_p1", EV_NETDEV_KIND_PCI},
		{"mlx5_core.sf.2", EV_NETDEV_KIND_PCI},
		{"0000:03:00", EV_NETDEV_KIND_UNKNOWN},
		{"0000:03:00.0x", EV_NETDEV_KIND_UNKNOWN},
		{"net_null0", EV_NETDEV_KIND_NONE},
		{"net_ring1", EV_NETDEV_KIND_NONE},
		{"net_vhost0", EV_NETDEV_KIND_NONE},
		{"net_bonding0", EV_NETDEV_KIND_NONE},
		{"virtio_user0", EV_NETDEV_KIND_NONE},
		{"dpdkr0", EV_NETDEV_KIND_UNKNOWN},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (ev_netdev_kind_of(cases[i].name) != cases[i].kind)
			fail_msg("%s: kind %d, expected %d", cases[i].name,
				ev_netdev_kind_of(cases[i].name), cases[i].kind);
}

/* Where DPDK's own link never follows the netdev (the drivers' link_update, netdev.h). */
static void
only_signal(void **state)
{
	(void)state;
	assert_true(ev_netdev_only_signal(EV_NETDEV_KIND_AF_XDP, 251100));
	assert_true(ev_netdev_only_signal(EV_NETDEV_KIND_PCAP, 251100));
	assert_true(ev_netdev_only_signal(EV_NETDEV_KIND_AF_PACKET, 221111));
	assert_true(ev_netdev_only_signal(EV_NETDEV_KIND_AF_PACKET, 231107));
	assert_true(ev_netdev_only_signal(EV_NETDEV_KIND_AF_PACKET, -EINVAL));
	assert_false(ev_netdev_only_signal(EV_NETDEV_KIND_AF_PACKET, 241106));
	assert_false(ev_netdev_only_signal(EV_NETDEV_KIND_TAP, 221111));
	assert_false(ev_netdev_only_signal(EV_NETDEV_KIND_PCI, 221111));
}

static void
devargs(void **state)
{
	char argv[][DTEL_STRING_MAX] = {"dpdk-testpmd", "-l", "0,1", "--vdev=net_tap0",
		"--vdev=net_af_packet1,iface=veth3,qpairs=2", "--vdev", "net_af_packet10,iface=v10",
		"--vdev=net_af_packet1x,iface=nope", "--file-prefix=p"};
	size_t argc = sizeof(argv) / sizeof(argv[0]);
	char args[64], v[IFNAMSIZ];

	(void)state;
	assert_int_equal(ev_netdev_vdev_args(argv, argc, "net_af_packet1", args, sizeof(args)), 0);
	assert_string_equal(args, "iface=veth3,qpairs=2");
	assert_int_equal(ev_netdev_vdev_args(argv, argc, "net_af_packet10", args, sizeof(args)), 0);
	assert_string_equal(args, "iface=v10");
	assert_int_equal(ev_netdev_vdev_args(argv, argc, "net_tap0", args, sizeof(args)), 0);
	assert_string_equal(args, "");
	assert_int_equal(ev_netdev_vdev_args(argv, argc, "net_tap1", args, sizeof(args)), -ENOENT);
	assert_int_equal(ev_netdev_vdev_args(argv, argc, "net_af_packet1", args, 8), -ENAMETOOLONG);
	assert_int_equal(ev_netdev_devarg("iface=veth3,qpairs=2", "iface", v, sizeof(v)), 0);
	assert_string_equal(v, "veth3");
	assert_int_equal(ev_netdev_devarg("qpairs=2,iface=x", "iface", v, sizeof(v)), 0);
	assert_string_equal(v, "x");
	assert_int_equal(ev_netdev_devarg("rx_iface=a", "iface", v, sizeof(v)), -ENOENT);
	assert_int_equal(ev_netdev_devarg("ifacex=a", "iface", v, sizeof(v)), -ENOENT);
	assert_int_equal(ev_netdev_devarg("", "iface", v, sizeof(v)), -ENOENT);
	assert_int_equal(
		ev_netdev_devarg("iface=abcdefghijklmnop", "iface", v, sizeof(v)), -ENAMETOOLONG);
}

static void
port_netdev_values(void **state)
{
	static const char *const bad[][2] = {
		{"eth3", "expected \"<port id>=<netdev>\""},
		{"=eth3", "expected \"<port id>=<netdev>\""},
		{"x=eth3", "expected \"<port id>=<netdev>\""},
		{"-1=eth3", "expected \"<port id>=<netdev>\""},
		{"65536=eth3", "the port id is above 65535"},
		{"99999999999999999999=eth3", "the port id is above 65535"},
		{"0=", "'' is not a netdev name"},
		{"0=a/b", "'a/b' is not a netdev name"},
		{"0=a:1", "'a:1' is not a netdev name"},
		{"0=a b", "'a b' is not a netdev name"},
		{"0=..", "'..' is not a netdev name"},
		{"0=abcdefghijklmnop", "'abcdefghijklmnop' is not a netdev name"},
	};
	char ifname[IFNAMSIZ], why[EV_NETDEV_WHY_MAX];
	unsigned int port = 7;

	(void)state;
	assert_int_equal(ev_netdev_parse_spec("0=eth3", &port, ifname, why, sizeof(why)), 0);
	assert_int_equal(port, 0);
	assert_string_equal(ifname, "eth3");
	assert_int_equal(
		ev_netdev_parse_spec("65535=abcdefghijklmno", &port, ifname, why, sizeof(why)), 0);
	assert_int_equal(port, 65535);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = '\0';
		if (ev_netdev_parse_spec(bad[i][0], &port, ifname, why, sizeof(why)) != -EINVAL ||
			strstr(why, bad[i][1]) == NULL)
			fail_msg("\"%s\": '%s', expected -EINVAL with '%s'", bad[i][0], why,
				bad[i][1]);
	}
}

/* Which link backs a port ---------------------------------------------------------------- */

static struct ev_nl_table
table_of(const struct lk *links, size_t n)
{
	struct ev_nl_table t = {0};
	struct msgs m = {.n = 0};

	for (size_t i = 0; i < n; i++)
		put_link(&m, &links[i]);
	assert_true(ev_nl_parse(m.b, m.n, into_table, &t) >= 0);
	return t;
}

static struct dtel_port_info
info_of(const char *name, const char *mac)
{
	struct dtel_port_info i = {0};

	snprintf(i.name, sizeof(i.name), "%s", name);
	snprintf(i.mac_addr, sizeof(i.mac_addr), "%s", mac);
	return i;
}

/* A host's links: veth ends (one with a VLAN on top that shares its MAC), a tap, an mlx5 PF
 * with two representors under one PCI device, another PF, and a vfio NIC that has none. */
static const struct lk host[] = {
	{RTM_NEWLINK, NLM_F_MULTI, 1, UPRUN, "lo", NULL, NULL, NULL},
	{RTM_NEWLINK, NLM_F_MULTI, 10, UPRUN, "vA", "\x32\xe4\xee\xe5\xee\xef", NULL, NULL},
	{RTM_NEWLINK, NLM_F_MULTI, 11, UPRUN, "vB", "\x02\x00\x00\x00\x00\x0b", NULL, NULL},
	{RTM_NEWLINK, NLM_F_MULTI, 12, UPRUN, "vA.100", "\x32\xe4\xee\xe5\xee\xef", NULL, NULL},
	{RTM_NEWLINK, NLM_F_MULTI, 20, IFF_UP, "dtap0", "\x1a\x95\xa7\x6c\x10\x2f", NULL, NULL},
	{RTM_NEWLINK, NLM_F_MULTI, 30, UPRUN, "enp3s0f0", "\x0c\x42\xa1\x00\x00\x01", "pci",
		"0000:03:00.0"},
	{RTM_NEWLINK, NLM_F_MULTI, 31, UPRUN, "pf0vf0", "\x0c\x42\xa1\x00\x00\x10", "pci",
		"0000:03:00.0"},
	{RTM_NEWLINK, NLM_F_MULTI, 32, UPRUN, "pf0vf1", "\x0c\x42\xa1\x00\x00\x11", "pci",
		"0000:03:00.0"},
	{RTM_NEWLINK, NLM_F_MULTI, 33, UPRUN, "enp3s0f1", "\x0c\x42\xa1\x00\x00\x02", "pci",
		"0000:03:00.1"},
};

struct resolve_case {
	const char *name, *mac, *ifname, *devargs;
	int ret; /* 0, -ENOENT, -ENODEV */
	const char *expect; /* the netdev, or a part of the reason */
	enum ev_netdev_how how;
};

/* A port mapped to @netdev found @how; one refused with @ret and @why. */
#define FOUND(name, mac, ifname, devargs, netdev, how)     \
	{                                                  \
		name, mac, ifname, devargs, 0, netdev, how \
	}
#define REFUSED(name, mac, ifname, devargs, ret, why)                       \
	{                                                                   \
		name, mac, ifname, devargs, ret, why, EV_NETDEV_BY_OPERATOR \
	}

static void
check_resolve(const struct ev_nl_table *t, const char *sysfs, const struct resolve_case *c)
{
	struct dtel_port_info info = info_of(c->name, c->mac);
	struct ev_netdev_want w = {
		.info = &info, .ifname = c->ifname, .devargs = c->devargs, .dpdk_version = 221111};
	struct ev_netdev_port p = {.ifindex = -1};
	char why[EV_NETDEV_WHY_MAX] = "";
	int r = ev_netdev_resolve(t, &w, sysfs, &p, why, sizeof(why));

	if (r != c->ret)
		fail_msg("%s: %d (%s), expected %d", c->name, r, why, c->ret);
	if (r == 0 &&
		(strcmp(p.ifname, c->expect) != 0 || p.how != c->how ||
			ev_nl_table_find(t, p.ifindex) == NULL))
		fail_msg("%s: %s by %d, expected %s by %d", c->name, p.ifname, p.how, c->expect,
			c->how);
	if (r < 0 && (strstr(why, c->expect) == NULL || p.ifindex != -1))
		fail_msg("%s: '%s', expected '%s' and nothing returned", c->name, why, c->expect);
}

static void
resolve_vdevs(void **state)
{
	static const struct resolve_case cases[] = {
		FOUND("net_af_packet0", "32:E4:EE:E5:EE:EF", NULL, "iface=vA", "vA",
			EV_NETDEV_BY_IFACE),
		/* The MAC alone is on vA and on its VLAN: only iface= tells them apart. */
		REFUSED("net_af_packet0", "32:E4:EE:E5:EE:EF", NULL, NULL, -ENOENT,
			"its MAC address is on several (vA, vA.100)"),
		FOUND("net_af_packet1", "02:00:00:00:00:0B", NULL, NULL, "vB", EV_NETDEV_BY_MAC),
		REFUSED("net_af_packet1", "02:00:00:00:00:0B", NULL, "iface=gone", -ENOENT,
			"iface=gone of net_af_packet1 is not a netdev of the application's"),
		FOUND("net_af_xdp0", "02:00:00:00:00:0B", NULL, "iface=vB,start_queue=0", "vB",
			EV_NETDEV_BY_IFACE),
		/* net_tap's own name template says nothing; its MAC is the tap's. */
		FOUND("net_tap0", "1A:95:A7:6C:10:2F", NULL, "iface=dtap%d", "dtap0",
			EV_NETDEV_BY_MAC),
		REFUSED("net_tap1", "02:00:00:00:00:99", NULL, NULL, -ENOENT,
			"no netdev has its MAC address"),
		REFUSED("net_tun0", "00:00:00:00:00:00", NULL, NULL, -ENOENT,
			"no netdev has its MAC address"),
		REFUSED("net_pcap0", "02:00:00:00:00:0B", NULL, "rx_pcap=/tmp/x.pcap", -ENOENT,
			"reads no network interface"),
		FOUND("net_pcap0", "02:00:00:00:00:0B", NULL, "iface=vB", "vB", EV_NETDEV_BY_IFACE),
		REFUSED("net_null0", "02:00:00:00:00:0B", NULL, NULL, -ENOENT,
			"net_null0 has no kernel netdev"),
		REFUSED("dpdkr0", "02:00:00:00:00:0B", NULL, NULL, -ENOENT,
			"the driver of dpdkr0 is not known to take its link from a kernel netdev"),
		/* The operator's word goes first, whatever the driver. */
		FOUND("net_null0", "02:00:00:00:00:0B", "vB", NULL, "vB", EV_NETDEV_BY_OPERATOR),
		REFUSED("net_af_packet0", "32:E4:EE:E5:EE:EF", "eth9", "iface=vA", -ENODEV,
			"PortNetdev 'eth9': no such netdev"),
	};
	struct ev_nl_table t = table_of(host, sizeof(host) / sizeof(host[0]));

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_resolve(&t, NULL, &cases[i]);
	ev_nl_table_clear(&t);
}

/* mlx5 and mlx4: the netdev of the port's PCI device, by IFLA_PARENT_DEV_NAME. */
static void
resolve_pci_by_parent(void **state)
{
	static const struct resolve_case cases[] = {
		FOUND("0000:03:00.1", "0C:42:A1:00:00:02", NULL, NULL, "enp3s0f1",
			EV_NETDEV_BY_PARENT),
		/* A PF and its representors share the device: the MAC address tells which. */
		FOUND("0000:03:00.0", "0C:42:A1:00:00:01", NULL, NULL, "enp3s0f0",
			EV_NETDEV_BY_PARENT),
		FOUND("0000:03:00.0_representor_vf1", "0C:42:A1:00:00:11", NULL, NULL, "pf0vf1",
			EV_NETDEV_BY_PARENT),
		REFUSED("0000:03:00.0_representor_vf7", "0C:42:A1:00:00:77", NULL, NULL, -ENOENT,
			"pci device 0000:03:00.0 has several netdevs (enp3s0f0, pf0vf0, pf0vf1)"),
		REFUSED("0000:81:00.0", "3C:FD:FE:00:00:01", NULL, NULL, -ENOENT,
			"no kernel netdev beside pci device 0000:81:00.0"),
	};
	struct ev_nl_table t = table_of(host, sizeof(host) / sizeof(host[0]));

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_resolve(&t, NULL, &cases[i]);
	ev_nl_table_clear(&t);
}

static void
mkdirs(const char *root, const char *rel)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (char *p = path + strlen(root) + 1; (p = strchr(p, '/')) != NULL; p++) {
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	assert_int_equal(mkdir(path, 0755) == 0 || errno == EEXIST, 1);
}

/* A kernel before 5.17 names no parent: /sys/bus/pci/devices/<bdf>/net/ does, in collectd's
 * own namespace (the tree is a temp dir here). */
static void
resolve_pci_by_sysfs(void **state)
{
	struct lk old[] = {
		{RTM_NEWLINK, NLM_F_MULTI, 30, UPRUN, "enp3s0f0", "\x0c\x42\xa1\x00\x00\x01", NULL,
			NULL},
		{RTM_NEWLINK, NLM_F_MULTI, 33, UPRUN, "enp3s0f1", "\x0c\x42\xa1\x00\x00\x02", NULL,
			NULL},
		{RTM_NEWLINK, NLM_F_MULTI, 40, UPRUN, "ens5", "\x0c\x42\xa1\x00\x00\x05", NULL,
			NULL},
	};
	const struct resolve_case found = FOUND(
		"0000:03:00.1", "0C:42:A1:00:00:02", NULL, NULL, "enp3s0f1", EV_NETDEV_BY_SYSFS);
	const struct resolve_case sf = FOUND(
		"mlx5_core.sf.4", "0C:42:A1:00:00:05", NULL, NULL, "ens5", EV_NETDEV_BY_SYSFS);
	const struct resolve_case blind =
		REFUSED("0000:03:00.1", "0C:42:A1:00:00:02", NULL, NULL, -ENOENT, "before 5.17");
	struct ev_nl_table t = table_of(old, sizeof(old) / sizeof(old[0]));
	char root[] = "/tmp/dtel-sysfs-XXXXXX", cmd[128];

	(void)state;
	assert_non_null(mkdtemp(root));
	mkdirs(root, "bus/pci/devices/0000:03:00.0/net/enp3s0f0");
	mkdirs(root, "bus/pci/devices/0000:03:00.1/net/enp3s0f1");
	mkdirs(root, "bus/auxiliary/devices/mlx5_core.sf.4/net/ens5");
	check_resolve(&t, root, &found);
	check_resolve(&t, root, &sf);
	/* Another namespace's netdevs are not in collectd's /sys. */
	check_resolve(&t, NULL, &blind);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
	ev_nl_table_clear(&t);
}

/* The real thing, in namespaces of the test's own --------------------------------------------- */

static bool in_own_netns;

/* ip(8) in the current network namespace (the test's own), quietly; its exit status. */
static int ip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int
ip(const char *fmt, ...)
{
	char cmd[256];
	va_list ap;
	int n;

	n = snprintf(cmd, sizeof(cmd), "ip ");
	va_start(ap, fmt);
	vsnprintf(cmd + n, sizeof(cmd) - (size_t)n, fmt, ap);
	va_end(ap);
	strncat(cmd, " >/dev/null 2>&1", sizeof(cmd) - strlen(cmd) - 1);
	return system(cmd);
}

static int
setup_own_netns(void **state)
{
	(void)state;
	/* Root only (as CI runs), with ip(8): the host's own interfaces are never touched. */
	in_own_netns = geteuid() == 0 && unshare(CLONE_NEWNET) == 0 && ip("link set lo up") == 0;
	return 0;
}

struct seen {
	int port[64];
	int carrier[64];
	size_t n;
};

static void
record(void *ctx, unsigned int port, int carrier)
{
	struct seen *s = ctx;

	if (s->n < 64) {
		s->port[s->n] = (int)port;
		s->carrier[s->n] = carrier;
	}
	s->n++;
}

static uint64_t
ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Drain until @want callbacks have come, waiting on the socket up to 5 s. */
static void
wait_calls(struct ev_netdev *nd, struct seen *s, size_t want)
{
	uint64_t deadline = ms_now() + 5000;

	while (s->n < want && ms_now() < deadline) {
		struct pollfd p = {.fd = ev_netdev_fd(nd), .events = POLLIN};

		if (poll(&p, 1, 100) > 0)
			assert_true(ev_netdev_drain(nd, record, s) >= 0);
	}
	if (s->n != want)
		fail_msg("%zu carrier callbacks, expected %zu", s->n, want);
}

/*
 * Wait up to 5 s for @ifname's operational state to be up: the kernel sets IFF_RUNNING (what
 * the carrier is read from) from linkwatch, which may defer a carrier that came on by up to a
 * second after `ip link set ... up` returned (seen under ThreadSanitizer on a loaded host).
 */
static bool
running_within(const char *ifname, unsigned int ms)
{
	uint64_t deadline = ms_now() + ms;

	while (ip("-o link show %s | grep -q 'state UP'", ifname) != 0) {
		if (ms_now() >= deadline)
			return false;
		usleep(10000);
	}
	return true;
}

static void
wait_running(const char *ifname)
{
	if (!running_within(ifname, 5000))
		fail_msg("%s: not operationally up within 5 s", ifname);
}

static struct ev_netdev *
open_mapped(long pid, const char *ifname, unsigned int port)
{
	struct dtel_port_info info = info_of("net_af_packet0", "");
	struct ev_netdev_want w = {.info = &info, .ifname = ifname, .dpdk_version = 221111};
	struct ev_netdev_port p;
	struct ev_netdev *nd = NULL;
	char why[EV_NETDEV_WHY_MAX] = "";

	if (ev_netdev_open(pid, 2000, &nd, why, sizeof(why)) != 0)
		fail_msg("ev_netdev_open(%ld): %s", pid, why);
	if (ev_netdev_map(nd, port, &w, &p, why, sizeof(why)) != 0)
		fail_msg("ev_netdev_map(%s): %s", ifname, why);
	assert_int_equal(p.how, EV_NETDEV_BY_OPERATOR);
	return nd;
}

/* Carrier taken away from the peer of a veth (as af_packet's tests do), given back; the
 * netdev deleted and made again under its name; renamed. */
static void
real_carrier_events(void **state)
{
	struct seen s = {.n = 0};
	struct ev_netdev *nd;

	(void)state;
	if (!in_own_netns)
		skip();
	assert_int_equal(ip("link add ta type veth peer name tb"), 0);
	assert_int_equal(ip("link set ta up"), 0);
	assert_int_equal(ip("link set tb up"), 0);
	wait_running("ta");
	nd = open_mapped(getpid(), "ta", 3);
	assert_false(ev_netdev_other_netns(nd));
	assert_int_equal(ev_netdev_carrier(nd, 3), 1);
	assert_int_equal(ev_netdev_carrier(nd, 4), -ENOENT);

	assert_int_equal(ip("link set tb down"), 0);
	wait_calls(nd, &s, 1);
	assert_int_equal(s.port[0], 3);
	assert_int_equal(s.carrier[0], 0);
	assert_int_equal(ev_netdev_carrier(nd, 3), 0);
	assert_int_equal(ip("link set tb up"), 0);
	wait_calls(nd, &s, 2);
	assert_int_equal(s.carrier[1], 1);

	/* A rename (of a netdev that is down: the kernel refuses it otherwise) keeps the
	 * port on its netdev, without a call. */
	assert_int_equal(ip("link set ta down"), 0);
	wait_calls(nd, &s, 3);
	assert_int_equal(s.carrier[2], 0);
	assert_int_equal(ip("link set ta name tc"), 0);
	assert_int_equal(ip("link set tc up"), 0);
	wait_calls(nd, &s, 4);
	assert_int_equal(s.carrier[3], 1);

	/* Deleting an interface that is up closes it first (dev_close_many()), then goes. */
	assert_int_equal(ip("link del tc"), 0);
	wait_calls(nd, &s, 6);
	assert_int_equal(s.carrier[4], 0);
	assert_int_equal(s.carrier[5], -ENODEV);
	assert_int_equal(ev_netdev_carrier(nd, 3), -ENODEV);
	/* Back under the name it had when deleted. */
	assert_int_equal(ip("link add tc type veth peer name td"), 0);
	assert_int_equal(ip("link set tc up"), 0);
	assert_int_equal(ip("link set td up"), 0);
	wait_calls(nd, &s, 8); /* down when made, up once both ends are */
	assert_int_equal(s.carrier[6], 0);
	assert_int_equal(s.carrier[7], 1);
	ev_netdev_unmap(nd, 3);
	assert_int_equal(ev_netdev_carrier(nd, 3), -ENOENT);
	ev_netdev_close(nd);
	ip("link del tc");
}

/* Events dropped by the kernel (a receive buffer far too small): a new dump says the truth. */
static void
real_overrun_resyncs(void **state)
{
	struct seen s = {.n = 0};
	struct ev_netdev *nd;
	int small = 1;

	(void)state;
	if (!in_own_netns)
		skip();
	assert_int_equal(ip("link add oa type veth peer name ob"), 0);
	assert_int_equal(ip("link set oa up"), 0);
	assert_int_equal(ip("link set ob up"), 0);
	nd = open_mapped(getpid(), "oa", 0);
	/* The kernel's least buffer: a few messages overflow it. */
	assert_int_equal(
		setsockopt(ev_netdev_fd(nd), SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)), 0);
	for (int i = 0; i < 41; i++)
		assert_int_equal(ip("link set ob %s", i % 2 ? "up" : "down"), 0);
	/* 41 flips end down: whatever was lost, the state that comes out is the last one. */
	{
		uint64_t deadline = ms_now() + 5000;

		while (ev_netdev_carrier(nd, 0) != 0 || ev_netdev_overruns(nd) == 0) {
			struct pollfd p = {.fd = ev_netdev_fd(nd), .events = POLLIN};

			if (ms_now() > deadline)
				fail_msg("carrier %d, %u overruns: expected 0 and at least one",
					ev_netdev_carrier(nd, 0), ev_netdev_overruns(nd));
			if (poll(&p, 1, 100) > 0)
				assert_true(ev_netdev_drain(nd, record, &s) >= 0);
		}
	}
	assert_true(s.n >= 1);
	assert_int_equal(s.carrier[s.n - 1 < 64 ? s.n - 1 : 63], 0);
	ev_netdev_close(nd);
	ip("link del oa");
}

/* A child in a network namespace of its own, flipping its veth's peer on command. */
struct child {
	pid_t pid;
	int cmd; /* write 'd', 'u' or 'q' */
};

static void
child_main(int rfd, int wfd)
{
	char c;

	/* Ready once ca is operationally up (wait_running()). */
	if (unshare(CLONE_NEWNET) != 0 || ip("link add ca type veth peer name cb") != 0 ||
		ip("link set ca up") != 0 || ip("link set cb up") != 0 ||
		!running_within("ca", 5000))
		_exit(1);
	if (write(wfd, "r", 1) != 1)
		_exit(1);
	while (read(rfd, &c, 1) == 1 && c != 'q') {
		if (ip("link set cb %s", c == 'd' ? "down" : "up") != 0)
			_exit(1);
		if (write(wfd, "k", 1) != 1)
			_exit(1);
	}
	_exit(0);
}

static struct child
child_start(int *ack)
{
	int to[2], from[2];
	struct child ch;
	char c;

	assert_int_equal(pipe2(to, O_CLOEXEC), 0);
	assert_int_equal(pipe2(from, O_CLOEXEC), 0);
	ch.pid = fork();
	assert_true(ch.pid >= 0);
	if (ch.pid == 0) {
		close(to[1]);
		close(from[0]);
		child_main(to[0], from[1]);
	}
	close(to[0]);
	close(from[1]);
	ch.cmd = to[1];
	*ack = from[0];
	assert_int_equal(read(*ack, &c, 1), 1);
	assert_int_equal(c, 'r');
	return ch;
}

static void
child_do(struct child *ch, int ack, char what)
{
	char c;

	assert_int_equal(write(ch->cmd, &what, 1), 1);
	assert_int_equal(read(ack, &c, 1), 1);
}

static void
child_end(struct child *ch, int ack)
{
	int st;

	assert_int_equal(write(ch->cmd, "q", 1), 1);
	assert_int_equal(waitpid(ch->pid, &st, 0), ch->pid);
	close(ch->cmd);
	close(ack);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* The application in a network namespace of its own: the socket is opened there, by a
 * thread of ours, and this thread stays in its namespace. */
static void
real_other_netns(void **state)
{
	struct stat before, after;
	struct seen s = {.n = 0};
	struct ev_netdev *nd;
	struct child ch;
	int ack;

	(void)state;
	if (!in_own_netns)
		skip();
	ch = child_start(&ack);
	assert_int_equal(stat("/proc/thread-self/ns/net", &before), 0);
	nd = open_mapped(ch.pid, "ca", 1);
	assert_int_equal(stat("/proc/thread-self/ns/net", &after), 0);
	assert_true(before.st_ino == after.st_ino);
	assert_true(ev_netdev_other_netns(nd));
	assert_int_equal(ev_netdev_carrier(nd, 1), 1);
	child_do(&ch, ack, 'd');
	wait_calls(nd, &s, 1);
	assert_int_equal(s.carrier[0], 0);
	child_do(&ch, ack, 'u');
	wait_calls(nd, &s, 2);
	assert_int_equal(s.carrier[1], 1);
	ev_netdev_close(nd);
	child_end(&ch, ack);
}

/* capset(2) without libcap: drop @cap from the effective set of this (child) process. */
static int
drop_cap(int cap)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d) != 0)
		return -1;
	d[cap / 32].effective &= ~(1u << (cap % 32));
	return (int)syscall(SYS_capset, &h, d);
}

/* Why it is not used: every refusal says so, and nothing is returned. */
static void
real_refusals(void **state)
{
	struct ev_netdev *nd = (struct ev_netdev *)&nd; /* must stay untouched */
	char why[EV_NETDEV_WHY_MAX] = "";
	struct child ch;
	pid_t gone;
	int ack, st;

	(void)state;
	if (!in_own_netns)
		skip();
	assert_int_equal(ev_netdev_open(0, 1000, &nd, why, sizeof(why)), -ESRCH);
	assert_non_null(strstr(why, "not visible from collectd's pid namespace"));
	gone = fork();
	if (gone == 0)
		_exit(0);
	assert_int_equal(waitpid(gone, &st, 0), gone);
	assert_int_equal(ev_netdev_open(gone, 1000, &nd, why, sizeof(why)), -ENOENT);
	assert_non_null(strstr(why, "no such process"));
	assert_true(nd == (struct ev_netdev *)&nd);

	/* Without CAP_SYS_ADMIN, another namespace cannot be entered (a forked child tries). */
	ch = child_start(&ack);
	gone = fork();
	if (gone == 0) {
		int r = drop_cap(CAP_SYS_ADMIN) == 0
			? ev_netdev_open(ch.pid, 1000, &nd, why, sizeof(why))
			: -100;

		_exit(r == -EPERM && strstr(why, "needs CAP_SYS_ADMIN") != NULL ? 0 : 1);
	}
	assert_int_equal(waitpid(gone, &st, 0), gone);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	child_end(&ch, ack);
	ev_netdev_close(NULL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parse_dump_and_events),
		cmocka_unit_test(parse_control_messages),
		cmocka_unit_test(parse_malformed),
		cmocka_unit_test(kinds),
		cmocka_unit_test(only_signal),
		cmocka_unit_test(devargs),
		cmocka_unit_test(port_netdev_values),
		cmocka_unit_test(resolve_vdevs),
		cmocka_unit_test(resolve_pci_by_parent),
		cmocka_unit_test(resolve_pci_by_sysfs),
		cmocka_unit_test(real_carrier_events),
		cmocka_unit_test(real_overrun_resyncs),
		cmocka_unit_test(real_other_netns),
		cmocka_unit_test(real_refusals),
	};

	return cmocka_run_group_tests(tests, setup_own_netns, NULL);
}
