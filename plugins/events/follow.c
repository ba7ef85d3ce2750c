/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdktel_events' links from the kernel netdev (netdev.h; docs/dpdktel_events.md, "Links from
 * the kernel netdev"), wired into the poll: the netdev of each listed port is found once per
 * application process (/eal/params once, /ethdev/info per port), and a port that has one is
 * "followed": its telemetry link poll goes to the slow cadence (link_sched.quiet), and a
 * carrier event makes its link due at once and wakes the poll thread (poll.c), which then asks
 * the telemetry: the telemetry stays the truth. Except for the ports whose DPDK link never
 * follows their netdev (only_signal: af_packet before 24.11, af_xdp, pcap): there the state is
 * the netdev's carrier, with the speed and duplex the telemetry last gave.
 *
 * A netdev and a telemetry that disagree for longer than a poll are said once per port and
 * episode (WARNING); why a port's netdev is not used is said once per port and process (INFO).
 * Everything here runs on the poll thread.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "instance.h"

/* Waiting for the dump of a namespace's links, when its handle is opened. */
#define OPEN_TIMEOUT_MS 1000

struct ev_follow {
	unsigned int id; /* port id; first: dtp_slot() */
	bool tried; /* mapped, or said why not, for this process */
	bool mapped;
	bool only_signal;
	int carrier; /* as last known: 1, 0, -ENODEV (deleted) */
	uint64_t disagree_ms; /* since when the telemetry's state differs, 0: it agrees */
	bool warned; /* the disagreement was said */
	char ifname[IFNAMSIZ];
	char dev[DTEL_STRING_MAX]; /* the device at the port id when it was mapped */
};

static struct ev_follow *
find(const struct ev_instance *ei, unsigned int port)
{
	for (size_t i = 0; i < ei->nfollow; i++)
		if (ei->follow[i].id == port)
			return &ei->follow[i];
	return NULL;
}

static const struct ev_follow *
followed(const struct ev_instance *ei, unsigned int port)
{
	const struct ev_follow *f = find(ei, port);

	return f != NULL && f->mapped ? f : NULL;
}

bool
ev_follow_only_signal(const struct ev_instance *ei, unsigned int port)
{
	const struct ev_follow *f = followed(ei, port);

	return f != NULL && f->only_signal;
}

/* Forget the netdevs: they were the process's that is gone (or LinkNetdev is off). */
void
ev_follow_forget(struct ev_instance *ei)
{
	ev_netdev_close(ei->nd);
	ei->nd = NULL;
	ei->nd_tried = false;
	free(ei->follow);
	ei->follow = NULL;
	ei->nfollow = 0;
	free(ei->eal_argv);
	ei->eal_argv = NULL;
	ei->eal_argc = 0;
}

/* A carrier changed (ev_netdev_drain()): the port's link is due at once. */
static void
changed(void *ctx, unsigned int port, int carrier)
{
	struct ev_instance *ei = ctx;
	struct ev_follow *f = find(ei, port);
	struct link_sched *s = ev_sched_slot(ei, port);

	if (f == NULL)
		return;
	f->carrier = carrier;
	if (s != NULL)
		s->next_ms = 0;
	ei->next_ms[POLL_LINKS] = 0;
	ei->check_poll = true;
}

int
ev_follow_fd(const struct ev_instance *ei)
{
	return ei->nd != NULL ? ev_netdev_fd(ei->nd) : -1;
}

int
ev_follow_drain(struct ev_instance *ei)
{
	int ret;

	if (ei->nd == NULL)
		return 0;
	ret = ev_netdev_drain(ei->nd, changed, ei);
	if (ret < 0) {
		LOG(LOG_WARNING,
			"DPDK application '%s': reading its netdevs' link events failed (%s): its "
			"links come from the telemetry alone until it restarts",
			ei->t.name, strerror(-ret));
		/* Said once: the handle goes, and with it the quiet cadence. */
		ev_netdev_close(ei->nd);
		ei->nd = NULL;
		for (size_t i = 0; i < ei->nfollow; i++)
			ei->follow[i].mapped = false;
	}
	return ret;
}

/* The only_signal ports' links: the netdev's carrier, with the telemetry's speed. */
void
ev_follow_readings(struct ev_instance *ei, struct reading *rd)
{
	for (size_t i = 0; i < rd->nlinks; i++) {
		struct events_link_reading *r = &rd->links[i];
		const struct ev_follow *f = followed(ei, r->port);
		const struct events_port *p;

		if (f == NULL || !f->only_signal)
			continue;
		if (!r->valid) {
			/* Not asked in this poll: the speed the telemetry last gave. */
			p = ev_port_slot(ei, r->port);
			r->speed = p != NULL ? p->speed : 0;
			r->duplex = p != NULL ? p->duplex : DTEL_DUPLEX_UNKNOWN;
		}
		r->state = f->carrier == 1 ? EVENTS_LINK_UP : EVENTS_LINK_DOWN;
		r->valid = true;
	}
}

/* The application's EAL arguments, for the --vdev arguments of its ports: once a process. */
static void
read_eal_argv(struct ev_instance *ei)
{
	struct dtel_reply r;
	int n;

	if (ei->eal_argv != NULL || ei->eal_argc < 0)
		return;
	if (ev_query(ei, "/eal/params", &r) < 0) {
		ei->eal_argc = -1;
		return;
	}
	n = dtel_parse_eal_argv(&r, &ei->eal_argv);
	dtel_reply_release(&r);
	ei->eal_argc = n < 0 ? -1 : n;
}

/* The SO_PEERCRED pid of the process that holds the socket: valid in our pid namespace. */
static long
peer_pid(const struct ev_instance *ei)
{
	struct dtel_shared_status st;

	dtel_shared_status(ei->t.sh, &st);
	return st.peer_pid;
}

static void
open_netns(struct ev_instance *ei)
{
	int ret;

	ei->nd_tried = true;
	ret = ev_netdev_open(
		peer_pid(ei), OPEN_TIMEOUT_MS, &ei->nd, ei->nd_why, sizeof(ei->nd_why));
	if (ret < 0)
		ei->nd = NULL;
}

static void
say_not_used(
	const struct ev_instance *ei, const struct ev_follow *f, const char *name, const char *why)
{
	LOG(LOG_INFO,
		"port %u (%s) of DPDK application '%s': its link comes from the telemetry alone, "
		"not from a kernel netdev: %s",
		f->id, name[0] ? name : "?", ei->t.name, why);
}

/* Find the netdev of port @f (asks /ethdev/info), or say why not. */
static void
map_port(struct ev_instance *ei, struct ev_follow *f)
{
	char why[EV_NETDEV_WHY_MAX], args[DTEL_STRING_MAX];
	struct dtel_port_info info = {0};
	struct ev_netdev_want w = {.info = &info, .dpdk_version = ei->t.dpdk_version};
	struct ev_netdev_port np;
	struct dtel_reply r;
	int ret;

	if (!ei->o->link_netdev) {
		say_not_used(ei, f, "", "LinkNetdev is false");
		f->tried = true;
		return;
	}
	if (ei->nd == NULL) {
		say_not_used(ei, f, "", ei->nd_why);
		f->tried = true;
		return;
	}
	ret = ev_query_id(ei, "/ethdev/info", f->id, &r);
	if (ret < 0)
		return; /* tried again at the next poll */
	ret = dtel_parse_port_info(&r, &info);
	dtel_reply_release(&r);
	if (ret < 0)
		return;
	f->tried = true;
	snprintf(f->dev, sizeof(f->dev), "%s", info.name);
	read_eal_argv(ei);
	w.ifname = ev_port_netdev_of(&ei->o->port_netdev, f->id);
	if (ei->eal_argc > 0 &&
		ev_netdev_vdev_args((const char(*)[DTEL_STRING_MAX])ei->eal_argv,
			(size_t)ei->eal_argc, info.name, args, sizeof(args)) == 0)
		w.devargs = args;
	ret = ev_netdev_map(ei->nd, f->id, &w, &np, why, sizeof(why));
	if (ret < 0) {
		say_not_used(ei, f, info.name, why);
		return;
	}
	f->mapped = true;
	f->only_signal = np.only_signal;
	f->carrier = ev_netdev_carrier(ei->nd, f->id);
	snprintf(f->ifname, sizeof(f->ifname), "%s", np.ifname);
	LOG(LOG_INFO,
		"port %u (%s) of DPDK application '%s': its link follows kernel netdev %s%s%s",
		f->id, info.name, ei->t.name, np.ifname,
		ev_netdev_other_netns(ei->nd) ? " (in the application's network namespace)" : "",
		f->only_signal ? "; DPDK's own link of this port never follows it, so the netdev's "
				 "carrier is its link"
			       : "; each change is checked with the telemetry");
}

static bool
changed_device(struct ev_instance *ei, const struct ev_follow *f)
{
	const struct events_port *p = NULL;

	for (size_t i = 0; i < ei->nports && p == NULL; i++)
		if (ei->ports[i].id == f->id)
			p = &ei->ports[i];
	return p != NULL && p->name[0] != '\0' && strcmp(p->name, f->dev) != 0;
}

/*
 * After a poll's reading: the ports listed for the first time in this process are mapped (the
 * handle of the application's namespace is opened at the first), those no longer listed are
 * dropped; the followed ports' schedules go quiet.
 */
void
ev_follow_map(struct ev_instance *ei, const struct reading *rd)
{
	size_t k = 0;

	if (!rd->have_links)
		return;
	for (size_t i = 0; i < rd->nlinks && ei->poll_err == 0; i++) {
		unsigned int id = rd->links[i].port;
		struct ev_follow *f = DTP_SLOT(ei->follow, ei->nfollow, id, NULL);

		if (f == NULL)
			continue;
		/* Another device at this port id (one detached, another attached between two
		 * listings; confirm.c learns the name at each going down): mapped anew. */
		if (f->tried && f->dev[0] != '\0' && changed_device(ei, f)) {
			if (ei->nd != NULL)
				ev_netdev_unmap(ei->nd, f->id);
			*f = (struct ev_follow){.id = f->id};
		}
		if (f->tried)
			continue;
		if (ei->o->link_netdev && !ei->nd_tried)
			open_netns(ei);
		map_port(ei, f);
	}
	for (size_t i = 0; i < ei->nfollow; i++) {
		if (ev_listed(rd, ei->follow[i].id)) {
			ei->follow[k++] = ei->follow[i];
			continue;
		}
		if (ei->nd != NULL)
			ev_netdev_unmap(ei->nd, ei->follow[i].id);
	}
	ei->nfollow = k;
	for (size_t i = 0; i < ei->nsched; i++) {
		const struct ev_follow *f = followed(ei, ei->sched[i].id);

		ei->sched[i].quiet = f != NULL;
		ei->sched[i].only_signal = f != NULL && f->only_signal;
	}
}

/*
 * After the readings were applied: a followed port whose netdev and confirmed telemetry state
 * differ is asked again every PollInterval; when that lasts longer than a poll, one WARNING
 * per episode, and the telemetry is trusted.
 */
void
ev_follow_check(struct ev_instance *ei, uint64_t t)
{
	uint64_t pi_ms = (uint64_t)(ei->o->poll_interval * 1000);

	for (size_t i = 0; i < ei->nfollow; i++) {
		struct ev_follow *f = &ei->follow[i];
		const struct events_port *p;
		struct link_sched *s;
		bool up;

		if (!f->mapped || f->only_signal || f->carrier < 0)
			continue;
		p = NULL;
		for (size_t j = 0; j < ei->nports && p == NULL; j++)
			if (ei->ports[j].id == f->id)
				p = &ei->ports[j];
		if (p == NULL || !p->known || p->state == EVENTS_LINK_UNKNOWN)
			continue;
		up = p->state == EVENTS_LINK_UP;
		if (up == (f->carrier == 1)) {
			f->disagree_ms = 0;
			f->warned = false;
			continue;
		}
		if (f->disagree_ms == 0)
			f->disagree_ms = t;
		if (f->warned)
			continue;
		s = ev_sched_slot(ei, f->id);
		/* Said when the telemetry, asked again a poll later, still disagrees. */
		if (t >= f->disagree_ms + pi_ms && (s == NULL || s->polled_ms > f->disagree_ms)) {
			f->warned = true;
			LOG(LOG_WARNING,
				"port %u of DPDK application '%s': its kernel netdev %s says "
				"carrier "
				"%s but its telemetry says link %s, for %.3g s now: the telemetry "
				"is "
				"trusted",
				f->id, ei->t.name, f->ifname, f->carrier ? "up" : "down",
				up ? "up" : "down", (double)(t - f->disagree_ms) / 1000);
			continue;
		}
		/* Asked again at the next poll, not at the quiet cadence. */
		if (s != NULL && s->next_ms > t + pi_ms)
			s->next_ms = t + pi_ms;
		if (ei->next_ms[POLL_LINKS] > t + pi_ms)
			ei->next_ms[POLL_LINKS] = t + pi_ms;
	}
}
