/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The kernel netdev as a link source (netdev.h): the I/O half. One rtnetlink socket per
 * application's network namespace, subscribed to RTNLGRP_LINK, with the namespace's links
 * read by an RTM_GETLINK dump and kept current by the events that follow; the ports mapped
 * to those links (netdev_map.c) and a callback for each change of their carrier.
 *
 * The dump and the events share the socket, in the order the kernel made them: a dump part
 * is made when we read the one before it, so an event queued before a part is older than
 * that part, and one queued after it newer. Each message is applied as it comes. An overrun
 * (ENOBUFS: the kernel dropped events) is answered with a new dump into a fresh table, which
 * replaces the old one when it ends: links that went meanwhile are then found gone.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "netdev.h"

/* A dump part is at most 32 KiB (the kernel's netlink_dump() caps its buffer there). */
#define RECV_BUF ((size_t)65536)

struct port_map {
	unsigned int port;
	int ifindex; /* 0: its netdev was deleted; followed again when one of its name appears */
	char ifname[IFNAMSIZ];
	int said; /* the carrier last said: 1, 0 or -ENODEV */
};

struct ev_netdev {
	int fd;
	bool other_netns;
	uint32_t seq;
	bool dumping; /* a dump was asked and has not ended */
	bool dump_again; /* an overrun or an inconsistent dump: dump again once this one ends */
	unsigned int overruns;
	struct ev_nl_table links; /* the namespace's links now */
	struct ev_nl_table fresh; /* those of the dump under way */
	struct port_map *ports;
	size_t nports, cap;
	char *buf;
	ev_netdev_changed_fn *changed; /* of the drain under way */
	void *ctx;
	int ncalls;
};

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

/* Opening ------------------------------------------------------------------------------ */

static int
netlink_socket(void)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE);

	return fd < 0 ? -errno : fd;
}

struct in_netns {
	int nsfd;
	int ret; /* the socket, or -errno */
};

/* A thread of its own enters the namespace: the caller's thread never changes namespace, and
 * a socket keeps the namespace it was made in for its whole life. */
static void *
socket_in_netns(void *arg)
{
	struct in_netns *a = arg;

	a->ret = setns(a->nsfd, CLONE_NEWNET) < 0 ? -errno : netlink_socket();
	return NULL;
}

static int
open_in(const char *ns_path, char *why, size_t size)
{
	struct in_netns a = {.ret = -EINVAL};
	pthread_t th;
	int r;

	a.nsfd = open(ns_path, O_RDONLY | O_CLOEXEC);
	if (a.nsfd < 0) {
		r = -errno;
		say(why, size, "cannot open %s: %s", ns_path, strerror(-r));
		return r == -EPERM ? -EACCES : r;
	}
	r = -pthread_create(&th, NULL, socket_in_netns, &a);
	if (r == 0) {
		pthread_join(th, NULL);
		r = a.ret;
	}
	close(a.nsfd);
	if (r == -EPERM)
		say(why, size,
			"entering the application's network namespace (%s) needs CAP_SYS_ADMIN, "
			"which collectd does not have",
			ns_path);
	else if (r < 0)
		say(why, size, "no netlink socket in %s: %s", ns_path, strerror(-r));
	return r;
}

/* The socket, in collectd's namespace or in the application's; sets other_netns. */
static int
open_socket(long pid, bool *other, char *why, size_t size)
{
	struct stat app, self;
	char path[64];

	if (pid <= 0) {
		say(why, size,
			"the application's pid is not visible from collectd's pid namespace");
		return -ESRCH;
	}
	snprintf(path, sizeof(path), "/proc/%ld/ns/net", pid);
	if (stat(path, &app) < 0) {
		int r = errno == ENOENT ? -ENOENT : -EACCES;

		say(why, size, "%s: %s", path,
			r == -ENOENT ? "no such process (it has exited)"
				     : "not readable (another user's process)");
		return r;
	}
	if (stat("/proc/thread-self/ns/net", &self) < 0) {
		int r = -errno;

		say(why, size, "/proc/thread-self/ns/net: %s", strerror(-r));
		return r;
	}
	*other = app.st_ino != self.st_ino || app.st_dev != self.st_dev;
	if (*other)
		return open_in(path, why, size);
	return netlink_socket();
}

/* Ask for every link of the namespace, without their statistics (smaller parts). */
static int
start_dump(struct ev_netdev *nd)
{
	struct {
		struct nlmsghdr h;
		struct ifinfomsg ifi;
		char attr[RTA_SPACE(sizeof(uint32_t))];
	} rq;
	struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
	struct rtattr *a = (struct rtattr *)rq.attr;
	uint32_t mask = RTEXT_FILTER_SKIP_STATS;

	memset(&rq, 0, sizeof(rq));
	rq.h.nlmsg_len = sizeof(rq);
	rq.h.nlmsg_type = RTM_GETLINK;
	rq.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	rq.h.nlmsg_seq = ++nd->seq;
	rq.ifi.ifi_family = AF_UNSPEC;
	a->rta_type = IFLA_EXT_MASK;
	a->rta_len = RTA_LENGTH(sizeof(mask));
	memcpy(RTA_DATA(a), &mask, sizeof(mask));
	if (sendto(nd->fd, &rq, sizeof(rq), 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
		return -errno;
	ev_nl_table_clear(&nd->fresh);
	nd->dumping = true;
	nd->dump_again = false;
	return 0;
}

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static int drain(struct ev_netdev *nd);

/* The first dump, read to its end. */
static int
first_dump(struct ev_netdev *nd, int timeout_ms, char *why, size_t size)
{
	uint64_t deadline = now_ms() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0);
	int r = start_dump(nd);

	while (r >= 0 && nd->dumping) {
		struct pollfd pfd = {.fd = nd->fd, .events = POLLIN};
		uint64_t t = now_ms();

		if (t >= deadline) {
			r = -ETIMEDOUT;
			break;
		}
		r = poll(&pfd, 1, (int)(deadline - t));
		if (r < 0 && errno == EINTR)
			r = 0;
		else if (r < 0)
			r = -errno;
		else if (r > 0)
			r = drain(nd);
	}
	if (r < 0)
		say(why, size, "reading the network namespace's links: %s", strerror(-r));
	return r < 0 ? r : 0;
}

int
ev_netdev_open(long app_pid, int timeout_ms, struct ev_netdev **ret, char *why, size_t size)
{
	struct sockaddr_nl local = {.nl_family = AF_NETLINK, .nl_groups = RTMGRP_LINK};
	struct ev_netdev *nd = calloc(1, sizeof(*nd));
	int r = -ENOMEM;

	if (nd == NULL)
		goto fail;
	nd->fd = -1;
	nd->buf = malloc(RECV_BUF);
	if (nd->buf == NULL)
		goto fail;
	nd->fd = open_socket(app_pid, &nd->other_netns, why, size);
	if (nd->fd < 0) {
		r = nd->fd;
		goto fail;
	}
	if (bind(nd->fd, (struct sockaddr *)&local, sizeof(local)) < 0) {
		r = -errno;
		say(why, size, "binding a netlink socket to RTNLGRP_LINK: %s", strerror(-r));
		goto fail;
	}
	r = first_dump(nd, timeout_ms, why, size);
	if (r < 0)
		goto fail;
	*ret = nd;
	return 0;
fail:
	if (r == -ENOMEM)
		say(why, size, "out of memory");
	ev_netdev_close(nd);
	return r;
}

/* Ports ------------------------------------------------------------------------------- */

static struct port_map *
find_port(const struct ev_netdev *nd, unsigned int port)
{
	for (size_t i = 0; i < nd->nports; i++)
		if (nd->ports[i].port == port)
			return &nd->ports[i];
	return NULL;
}

static int
carrier_of(const struct ev_netdev *nd, const struct port_map *pm)
{
	const struct ev_nl_link *l = pm->ifindex ? ev_nl_table_find(&nd->links, pm->ifindex) : NULL;

	return l == NULL ? -ENODEV : ev_nl_carrier(l->flags);
}

int
ev_netdev_map(struct ev_netdev *nd, unsigned int port, const struct ev_netdev_want *w,
	struct ev_netdev_port *ret, char *why, size_t size)
{
	struct ev_netdev_port p;
	struct port_map *pm;
	int r;

	/* /sys shows the netdevs of the namespace it was mounted in: collectd's. */
	r = ev_netdev_resolve(&nd->links, w, nd->other_netns ? NULL : "/sys", &p, why, size);
	if (r < 0) {
		ev_netdev_unmap(nd, port);
		return r;
	}
	pm = find_port(nd, port);
	if (pm == NULL) {
		if (nd->nports == nd->cap) {
			size_t cap = nd->cap ? nd->cap * 2 : 8;
			struct port_map *v = realloc(nd->ports, cap * sizeof(*v));

			if (v == NULL) {
				say(why, size, "out of memory");
				return -ENOMEM;
			}
			nd->ports = v;
			nd->cap = cap;
		}
		pm = &nd->ports[nd->nports++];
	}
	pm->port = port;
	pm->ifindex = p.ifindex;
	snprintf(pm->ifname, sizeof(pm->ifname), "%s", p.ifname);
	pm->said = carrier_of(nd, pm);
	if (ret != NULL)
		*ret = p;
	return 0;
}

void
ev_netdev_unmap(struct ev_netdev *nd, unsigned int port)
{
	struct port_map *pm = find_port(nd, port);

	if (pm != NULL)
		*pm = nd->ports[--nd->nports];
}

int
ev_netdev_carrier(const struct ev_netdev *nd, unsigned int port)
{
	const struct port_map *pm = find_port(nd, port);

	return pm == NULL ? -ENOENT : carrier_of(nd, pm);
}

/* Draining ---------------------------------------------------------------------------- */

static void
say_carrier(struct ev_netdev *nd, struct port_map *pm, int carrier)
{
	if (carrier == pm->said)
		return;
	pm->said = carrier;
	nd->ncalls++;
	if (nd->changed != NULL)
		nd->changed(nd->ctx, pm->port, carrier);
}

/* The ports a message about link @l concerns: theirs, renamed, deleted or back by name. */
static void
ports_see(struct ev_netdev *nd, const struct ev_nl_link *l)
{
	for (size_t i = 0; i < nd->nports; i++) {
		struct port_map *pm = &nd->ports[i];

		if (pm->ifindex == l->ifindex && l->deleted) {
			pm->ifindex = 0;
			say_carrier(nd, pm, -ENODEV);
		} else if (pm->ifindex == l->ifindex ||
			(pm->ifindex == 0 && !l->deleted && strcmp(pm->ifname, l->ifname) == 0)) {
			pm->ifindex = l->ifindex;
			if (l->ifname[0] != '\0')
				snprintf(pm->ifname, sizeof(pm->ifname), "%s", l->ifname);
			say_carrier(nd, pm, ev_nl_carrier(l->flags));
		}
	}
}

static int
on_link(void *ctx, const struct ev_nl_link *l)
{
	struct ev_netdev *nd = ctx;
	int r = 0;

	if (!l->from_dump)
		r = ev_nl_table_apply(&nd->links, l);
	if (r == 0 && nd->dumping)
		r = ev_nl_table_apply(&nd->fresh, l);
	if (r == 0 && (!l->from_dump || nd->dumping))
		ports_see(nd, l);
	return r;
}

/* A dump ended: its table is the namespace's now; ports whose netdev it lacks are gone. */
static int
dump_done(struct ev_netdev *nd, bool consistent)
{
	struct ev_nl_table old = nd->links;

	nd->links = nd->fresh;
	memset(&nd->fresh, 0, sizeof(nd->fresh));
	ev_nl_table_clear(&old);
	nd->dumping = false;
	for (size_t i = 0; i < nd->nports; i++) {
		struct port_map *pm = &nd->ports[i];
		const struct ev_nl_link *l = pm->ifindex
			? ev_nl_table_find(&nd->links, pm->ifindex)
			: ev_nl_table_find_name(&nd->links, pm->ifname);

		if (l == NULL) {
			pm->ifindex = 0;
			say_carrier(nd, pm, -ENODEV);
		} else {
			ports_see(nd, l);
		}
	}
	return consistent && !nd->dump_again ? 0 : start_dump(nd);
}

/* Everything the socket holds now. */
static int
drain(struct ev_netdev *nd)
{
	for (;;) {
		ssize_t n = recv(nd->fd, nd->buf, RECV_BUF, MSG_TRUNC);
		int met;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return 0;
		if ((n < 0 && errno == ENOBUFS) || (n > 0 && (size_t)n > RECV_BUF)) {
			/* Events were lost (or one cut short): read every link again. */
			int r = 0;

			nd->overruns++;
			if (nd->dumping)
				nd->dump_again = true;
			else
				r = start_dump(nd);
			if (r < 0)
				return r;
			continue;
		}
		if (n < 0)
			return -errno;
		met = ev_nl_parse(nd->buf, (size_t)n, on_link, nd);
		if (met < 0 && met != -EPROTO && met != -ENOMEM && nd->dumping) {
			nd->dumping = false; /* the kernel refused the dump */
			nd->dump_again = true;
		}
		if (met < 0)
			return met;
		if ((met & EV_NL_DONE) && nd->dumping) {
			int r = dump_done(nd, !(met & EV_NL_INTR));

			if (r < 0)
				return r;
		} else if ((met & EV_NL_INTR) && nd->dumping) {
			nd->dump_again = true;
		}
	}
}

int
ev_netdev_drain(struct ev_netdev *nd, ev_netdev_changed_fn *changed, void *ctx)
{
	int r = 0;

	nd->changed = changed;
	nd->ctx = ctx;
	nd->ncalls = 0;
	if (!nd->dumping && nd->dump_again)
		r = start_dump(nd);
	if (r == 0)
		r = drain(nd);
	nd->changed = NULL;
	nd->ctx = NULL;
	return r < 0 ? r : nd->ncalls;
}

int
ev_netdev_fd(const struct ev_netdev *nd)
{
	return nd->fd;
}

bool
ev_netdev_other_netns(const struct ev_netdev *nd)
{
	return nd->other_netns;
}

unsigned int
ev_netdev_overruns(const struct ev_netdev *nd)
{
	return nd->overruns;
}

void
ev_netdev_close(struct ev_netdev *nd)
{
	if (nd == NULL)
		return;
	if (nd->fd >= 0)
		close(nd->fd);
	ev_nl_table_clear(&nd->links);
	ev_nl_table_clear(&nd->fresh);
	free(nd->ports);
	free(nd->buf);
	free(nd);
}
