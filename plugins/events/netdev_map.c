/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Which kernel netdev backs a DPDK port (netdev.h): the kind of port its device name gives,
 * the devargs and option values that name a netdev, and the choice among a namespace's links.
 * Pure but for the listing of one sysfs directory under a root the caller gives (a temp dir
 * in the tests); no socket, no collectd.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netdev.h"

/* Devargs and option values --------------------------------------------------------------- */

static int
copy_out(const char *s, size_t n, char *ret, size_t size)
{
	if (n >= size)
		return -ENAMETOOLONG;
	memcpy(ret, s, n);
	ret[n] = '\0';
	return 0;
}

int
ev_netdev_vdev_args(const char (*argv)[DTEL_STRING_MAX], size_t argc, const char *dev_name,
	char *ret, size_t size)
{
	size_t len = strlen(dev_name);

	for (size_t i = 1; i < argc; i++) {
		const char *v = NULL;

		if (strncmp(argv[i], "--vdev=", 7) == 0)
			v = argv[i] + 7;
		else if (strcmp(argv[i], "--vdev") == 0 && i + 1 < argc)
			v = argv[++i];
		if (v == NULL || strncmp(v, dev_name, len) != 0 ||
			(v[len] != ',' && v[len] != '\0'))
			continue;
		v += len + (v[len] == ',');
		return copy_out(v, strlen(v), ret, size);
	}
	return -ENOENT;
}

int
ev_netdev_devarg(const char *devargs, const char *key, char *ret, size_t size)
{
	size_t klen = strlen(key);

	for (const char *p = devargs; p != NULL && *p != '\0';) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);

		if (n > klen && strncmp(p, key, klen) == 0 && p[klen] == '=')
			return copy_out(p + klen + 1, n - klen - 1, ret, size);
		p = end ? end + 1 : NULL;
	}
	return -ENOENT;
}

static void say(char *why, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void
say(char *why, size_t size, const char *fmt, ...)
{
	va_list ap;

	if (why == NULL || size == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(why, size, fmt, ap);
	va_end(ap);
}

/* What the kernel's dev_valid_name() (net/core/dev.c) accepts. */
static bool
valid_ifname(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n >= IFNAMSIZ || strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
		return false;
	for (; *s; s++)
		if (*s == '/' || *s == ':' || isspace((unsigned char)*s))
			return false;
	return true;
}

int
ev_netdev_parse_spec(
	const char *spec, unsigned int *ret_port, char ret_ifname[IFNAMSIZ], char *why, size_t size)
{
	const char *eq = strchr(spec, '=');
	unsigned long port = 0;
	size_t ndigits = eq ? (size_t)(eq - spec) : 0;

	if (eq == NULL || ndigits == 0 || strspn(spec, "0123456789") != ndigits) {
		say(why, size, "expected \"<port id>=<netdev>\" such as \"0=eth3\"");
		return -EINVAL;
	}
	for (size_t i = 0; i < ndigits && port <= 65535; i++)
		port = port * 10 + (unsigned long)(spec[i] - '0');
	if (port > 65535) {
		say(why, size, "the port id is above 65535");
		return -EINVAL;
	}
	if (!valid_ifname(eq + 1)) {
		say(why, size,
			"'%s' is not a netdev name: expected 1 to %d characters, no '/', ':' or "
			"white space",
			eq + 1, IFNAMSIZ - 1);
		return -EINVAL;
	}
	*ret_port = (unsigned int)port;
	memcpy(ret_ifname, eq + 1, strlen(eq + 1) + 1);
	return 0;
}

const char *
ev_port_netdev_of(const struct ev_port_netdevs *pn, unsigned int port)
{
	for (size_t i = 0; i < pn->n; i++)
		if (pn->v[i].port == port)
			return pn->v[i].ifname;
	return NULL;
}

/* Kinds of port ------------------------------------------------------------------------- */

static bool
starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* "DDDD:BB:DD.F": the length of a PCI address at the start of @s, else 0. */
static size_t
pci_prefix(const char *s)
{
	static const char form[] = "hhhh:hh:hh.h";

	for (size_t i = 0; i < sizeof(form) - 1; i++)
		if (form[i] == 'h' ? !isxdigit((unsigned char)s[i]) : s[i] != form[i])
			return 0;
	return sizeof(form) - 1;
}

/* DPDK's ethdev name of an mlx5 sub-function: its auxiliary device, "mlx5_core.sf.N". */
static size_t
aux_prefix(const char *s)
{
	static const char sf[] = "mlx5_core.sf.";
	size_t n = sizeof(sf) - 1;

	if (!starts(s, sf) || !isdigit((unsigned char)s[n]))
		return 0;
	while (isdigit((unsigned char)s[n]))
		n++;
	return n;
}

/* The virtual devices of DPDK with no kernel netdev of their own. */
static const char *const no_netdev[] = {"net_null", "eth_null", "net_ring", "eth_ring", "net_vhost",
	"eth_vhost", "net_memif", "net_bonding", "net_failsafe", "net_virtio_user", "virtio_user",
	"net_ixgbe_bypass", "net_vdev_netvsc", "net_zxdh"};

enum ev_netdev_kind
ev_netdev_kind_of(const char *name)
{
	size_t n = pci_prefix(name);

	if (n == 0)
		n = aux_prefix(name);
	if (n > 0 && (name[n] == '\0' || name[n] == '_'))
		return EV_NETDEV_KIND_PCI;
	if (starts(name, "net_tap") || starts(name, "eth_tap") || starts(name, "net_tun"))
		return EV_NETDEV_KIND_TAP;
	if (starts(name, "net_af_packet") || starts(name, "eth_af_packet"))
		return EV_NETDEV_KIND_AF_PACKET;
	if (starts(name, "net_af_xdp"))
		return EV_NETDEV_KIND_AF_XDP;
	if (starts(name, "net_pcap") || starts(name, "eth_pcap"))
		return EV_NETDEV_KIND_PCAP;
	for (size_t i = 0; i < sizeof(no_netdev) / sizeof(no_netdev[0]); i++)
		if (starts(name, no_netdev[i]))
			return EV_NETDEV_KIND_NONE;
	return EV_NETDEV_KIND_UNKNOWN;
}

bool
ev_netdev_only_signal(enum ev_netdev_kind kind, int dpdk_version)
{
	switch (kind) {
	case EV_NETDEV_KIND_AF_XDP:
	case EV_NETDEV_KIND_PCAP:
		return true;
	case EV_NETDEV_KIND_AF_PACKET:
		/* eth_link_update() reads IFF_RUNNING in 24.11.6 (checked there and later); it
		 * does nothing in 22.11 and 23.11.7. An unknown release is taken as old. */
		return dpdk_version < 241100;
	default:
		return false;
	}
}

/* Which link backs a port ------------------------------------------------------------- */

/* Links that may back one device, before the MAC address tells them apart. */
#define CANDIDATES_MAX 16

struct candidates {
	const struct ev_nl_link *v[CANDIDATES_MAX];
	size_t n;
};

static void
add_candidate(struct candidates *c, const struct ev_nl_link *l)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i] == l)
			return;
	if (l != NULL && c->n < CANDIDATES_MAX)
		c->v[c->n++] = l;
}

static int
hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (char)tolower((unsigned char)c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* "32:E4:EE:E5:EE:EF" of /ethdev/info into @mac; false for anything else or all zeros. */
static bool
parse_mac(const char *s, uint8_t mac[6])
{
	unsigned int any = 0;

	if (strlen(s) != 17)
		return false;
	for (size_t i = 0; i < 6; i++) {
		const char *b = s + 3 * i; /* "hh:" */
		int hi = hex_digit(b[0]), lo = hex_digit(b[1]);

		if (hi < 0 || lo < 0 || (i < 5 && b[2] != ':'))
			return false;
		mac[i] = (uint8_t)(hi * 16 + lo);
		any |= mac[i];
	}
	return any != 0;
}

/* Keep only the candidates with MAC address @mac. */
static void
filter_mac(struct candidates *c, const uint8_t mac[6])
{
	size_t k = 0;

	for (size_t i = 0; i < c->n; i++)
		if (c->v[i]->has_mac && memcmp(c->v[i]->mac, mac, 6) == 0)
			c->v[k++] = c->v[i];
	c->n = k;
}

/* Every link of the namespace with MAC address @mac. */
static void
with_mac(struct candidates *c, const struct ev_nl_table *links, const uint8_t mac[6])
{
	c->n = 0;
	for (size_t i = 0; i < links->n; i++)
		if (links->v[i].has_mac && memcmp(links->v[i].mac, mac, 6) == 0)
			add_candidate(c, &links->v[i]);
}

static void
names(const struct candidates *c, char *buf, size_t size)
{
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < c->n && n < size; i++)
		n += (size_t)snprintf(buf + n, size - n, "%s%s", i ? ", " : "", c->v[i]->ifname);
}

static int
take(const struct ev_nl_link *l, enum ev_netdev_how how, struct ev_netdev_port *p)
{
	snprintf(p->ifname, sizeof(p->ifname), "%s", l->ifname);
	p->ifindex = l->ifindex;
	p->how = how;
	return 0;
}

/* The devargs keys that name a vdev's netdev (tap: its own tap, not remote=). */
static const char *const iface_keys[] = {"iface", "rx_iface", "rx_iface_in"};

/* A vdev: the iface= of its devargs, else the one link with its MAC address. */
static int
by_vdev(const struct ev_nl_table *links, const struct ev_netdev_want *w, struct ev_netdev_port *p,
	char *why, size_t size)
{
	const char *name = w->info->name;
	char iface[IFNAMSIZ], list[128];
	struct candidates c;
	uint8_t mac[6];

	for (size_t i = 0; w->devargs != NULL && i < sizeof(iface_keys) / sizeof(iface_keys[0]);
		i++) {
		const struct ev_nl_link *l;

		if (ev_netdev_devarg(w->devargs, iface_keys[i], iface, sizeof(iface)) < 0 ||
			strchr(iface, '%') != NULL) /* net_tap's template, "dtap%d" */
			continue;
		l = ev_nl_table_find_name(links, iface);
		if (l != NULL)
			return take(l, EV_NETDEV_BY_IFACE, p);
		say(why, size, "%s=%s of %s is not a netdev of the application's network namespace",
			iface_keys[i], iface, name);
		return -ENOENT;
	}
	if (p->kind == EV_NETDEV_KIND_PCAP) {
		say(why, size, "%s reads no network interface (no iface= in its --vdev)", name);
		return -ENOENT;
	}
	c.n = 0;
	if (parse_mac(w->info->mac_addr, mac))
		with_mac(&c, links, mac);
	if (c.n == 1)
		return take(c.v[0], EV_NETDEV_BY_MAC, p);
	names(&c, list, sizeof(list));
	say(why, size, "cannot tell the netdev of %s: %s%s%s; PortNetdev names it", name,
		c.n ? "its MAC address is on several (" : "no netdev has its MAC address", list,
		c.n ? ")" : "");
	return -ENOENT;
}

/* The bus and device of a PCI or auxiliary port ("0000:03:00.0_representor_vf1"). */
static void
device_of(const char *name, char *bus, size_t bsize, char *dev, size_t dsize)
{
	size_t n = pci_prefix(name);

	snprintf(bus, bsize, "%s", n ? "pci" : "auxiliary");
	if (n == 0)
		n = aux_prefix(name);
	snprintf(dev, dsize, "%.*s", (int)n, name);
}

/* The links listed in <root>/bus/<bus>/devices/<dev>/net/. */
static void
from_sysfs(struct candidates *c, const struct ev_nl_table *links, const char *root, const char *bus,
	const char *dev)
{
	char path[512];
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "%s/bus/%s/devices/%s/net", root, bus, dev);
	d = opendir(path);
	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			add_candidate(c, ev_nl_table_find_name(links, e->d_name));
	closedir(d);
}

static bool
any_parent(const struct ev_nl_table *links)
{
	for (size_t i = 0; i < links->n; i++)
		if (links->v[i].parent_dev[0] != '\0')
			return true;
	return false;
}

/* A PCI or auxiliary device: the links whose parent it is, one of several by MAC address. */
static int
by_device(const struct ev_nl_table *links, const struct ev_netdev_want *w, const char *sysfs_root,
	struct ev_netdev_port *p, char *why, size_t size)
{
	enum ev_netdev_how how = EV_NETDEV_BY_PARENT;
	char bus[16], dev[64], list[128];
	struct candidates c = {.n = 0};
	uint8_t mac[6];

	device_of(w->info->name, bus, sizeof(bus), dev, sizeof(dev));
	for (size_t i = 0; i < links->n; i++)
		if (strcmp(links->v[i].parent_dev, dev) == 0 &&
			(links->v[i].parent_bus[0] == '\0' ||
				strcmp(links->v[i].parent_bus, bus) == 0))
			add_candidate(&c, &links->v[i]);
	if (c.n == 0 && sysfs_root != NULL) {
		from_sysfs(&c, links, sysfs_root, bus, dev);
		how = EV_NETDEV_BY_SYSFS;
	}
	names(&c, list, sizeof(list));
	if (c.n > 1 && parse_mac(w->info->mac_addr, mac))
		filter_mac(&c, mac);
	if (c.n == 1)
		return take(c.v[0], how, p);
	if (list[0] != '\0')
		say(why, size,
			"%s device %s has several netdevs (%s) and its MAC address does not tell "
			"which; PortNetdev names it",
			bus, dev, list);
	else
		say(why, size,
			"no kernel netdev beside %s device %s: its driver keeps none (only the "
			"bifurcated mlx5 and mlx4 do; a NIC bound to vfio-pci has none)%s",
			bus, dev,
			sysfs_root == NULL && !any_parent(links)
				? ", or this kernel (before 5.17) does not name a netdev's device "
				  "and /sys cannot show another network namespace's netdevs"
				: "");
	return -ENOENT;
}

static int
by_operator(const struct ev_nl_table *links, const struct ev_netdev_want *w,
	struct ev_netdev_port *p, char *why, size_t size)
{
	const struct ev_nl_link *l = ev_nl_table_find_name(links, w->ifname);

	if (l != NULL)
		return take(l, EV_NETDEV_BY_OPERATOR, p);
	say(why, size, "PortNetdev '%s': no such netdev in the application's network namespace",
		w->ifname);
	return -ENODEV;
}

/* A port with no netdev, or of a driver not known to have one. */
static int
unsupported(const struct ev_netdev_want *w, enum ev_netdev_kind kind, char *why, size_t size)
{
	if (w->info == NULL)
		say(why, size, "the port's /ethdev/info is not known");
	else if (kind == EV_NETDEV_KIND_NONE)
		say(why, size, "%s has no kernel netdev", w->info->name);
	else
		say(why, size,
			"the driver of %s is not known to take its link from a kernel netdev; "
			"PortNetdev names one if it does",
			w->info->name);
	return -ENOENT;
}

int
ev_netdev_resolve(const struct ev_nl_table *links, const struct ev_netdev_want *w,
	const char *sysfs_root, struct ev_netdev_port *ret, char *why, size_t size)
{
	struct ev_netdev_port p = {.kind = ev_netdev_kind_of(w->info ? w->info->name : "")};
	int r;

	if (w->ifname != NULL)
		r = by_operator(links, w, &p, why, size);
	else if (w->info == NULL || p.kind == EV_NETDEV_KIND_NONE ||
		p.kind == EV_NETDEV_KIND_UNKNOWN)
		r = unsupported(w, p.kind, why, size);
	else if (p.kind == EV_NETDEV_KIND_PCI)
		r = by_device(links, w, sysfs_root, &p, why, size);
	else
		r = by_vdev(links, w, &p, why, size);
	if (r < 0)
		return r;
	p.only_signal = ev_netdev_only_signal(p.kind, w->dpdk_version);
	*ret = p;
	return 0;
}
