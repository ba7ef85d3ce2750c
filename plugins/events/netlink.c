/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rtnetlink link messages parsed from a buffer, and the table of a namespace's links: the
 * pure half of the kernel-netdev link source (netdev.h) that reads the kernel. No socket
 * here (netdev.c has it): every function works on memory, so crafted messages test it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "netdev.h"

/* Messages ------------------------------------------------------------------------------ */

/* A string attribute into @dst: -EPROTO without its NUL; "" when longer than @size - 1. */
static int
attr_string(const char *data, size_t len, char *dst, size_t size)
{
	const char *nul = memchr(data, '\0', len);

	if (nul == NULL)
		return -EPROTO;
	dst[0] = '\0';
	if ((size_t)(nul - data) < size)
		memcpy(dst, data, (size_t)(nul - data) + 1);
	return 0;
}

static int
link_attr(struct ev_nl_link *l, unsigned short type, const char *data, size_t len)
{
	switch (type) {
	case IFLA_IFNAME:
		return attr_string(data, len, l->ifname, sizeof(l->ifname));
	case IFLA_ADDRESS:
		l->has_mac = len == sizeof(l->mac);
		if (l->has_mac)
			memcpy(l->mac, data, sizeof(l->mac));
		return 0;
	case IFLA_PARENT_DEV_NAME:
		return attr_string(data, len, l->parent_dev, sizeof(l->parent_dev));
	case IFLA_PARENT_DEV_BUS_NAME:
		return attr_string(data, len, l->parent_bus, sizeof(l->parent_bus));
	default:
		return 0;
	}
}

/* An RTM_NEWLINK or RTM_DELLINK message (@len bytes from its header). */
static int
parse_link(const struct nlmsghdr *h, const char *msg, size_t len, struct ev_nl_link *l)
{
	struct ifinfomsg ifi;
	size_t off = NLMSG_LENGTH(sizeof(ifi));

	if (len < off)
		return -EPROTO;
	memcpy(&ifi, msg + NLMSG_HDRLEN, sizeof(ifi));
	memset(l, 0, sizeof(*l));
	l->ifindex = ifi.ifi_index;
	l->flags = ifi.ifi_flags;
	l->deleted = h->nlmsg_type == RTM_DELLINK;
	l->from_dump = (h->nlmsg_flags & NLM_F_MULTI) != 0;
	off = NLMSG_ALIGN(off);
	while (off + sizeof(struct rtattr) <= len) {
		struct rtattr a;
		int r;

		memcpy(&a, msg + off, sizeof(a));
		if (a.rta_len < sizeof(a) || a.rta_len > len - off)
			return -EPROTO;
		r = link_attr(l, a.rta_type & NLA_TYPE_MASK, msg + off + RTA_LENGTH(0),
			a.rta_len - RTA_LENGTH(0));
		if (r < 0)
			return r;
		off += RTA_ALIGN(a.rta_len);
	}
	return 0;
}

/* One message: the EV_NL_* flags it is, 0 for one skipped, or -errno. */
static int
parse_one(const char *msg, size_t len, int (*fn)(void *ctx, const struct ev_nl_link *l), void *ctx)
{
	struct nlmsghdr h;
	struct ev_nl_link l;
	int err, r;

	memcpy(&h, msg, sizeof(h));
	switch (h.nlmsg_type) {
	case NLMSG_DONE:
		/* A dump that failed on the way ends with its error in the payload. */
		if (len >= NLMSG_LENGTH(sizeof(err))) {
			memcpy(&err, msg + NLMSG_HDRLEN, sizeof(err));
			if (err < 0)
				return err;
		}
		return EV_NL_DONE | ((h.nlmsg_flags & NLM_F_DUMP_INTR) ? EV_NL_INTR : 0);
	case NLMSG_ERROR:
		if (len < NLMSG_LENGTH(sizeof(err)))
			return -EPROTO;
		memcpy(&err, msg + NLMSG_HDRLEN, sizeof(err));
		return err == 0 ? (int)EV_NL_ACK : (err < 0 ? err : -EPROTO);
	case RTM_NEWLINK:
	case RTM_DELLINK:
		r = parse_link(&h, msg, len, &l);
		if (r < 0)
			return r;
		r = fn(ctx, &l);
		if (r < 0)
			return r;
		return (h.nlmsg_flags & NLM_F_DUMP_INTR) ? EV_NL_INTR : 0;
	default:
		return 0;
	}
}

int
ev_nl_parse(
	const void *buf, size_t len, int (*fn)(void *ctx, const struct ev_nl_link *l), void *ctx)
{
	const char *p = buf;
	int met = 0;

	while (len > 0) {
		struct nlmsghdr h;
		size_t step;
		int r;

		if (len < sizeof(h))
			return -EPROTO;
		memcpy(&h, p, sizeof(h));
		if (h.nlmsg_len < sizeof(h) || h.nlmsg_len > len)
			return -EPROTO;
		r = parse_one(p, h.nlmsg_len, fn, ctx);
		if (r < 0)
			return r;
		met |= r;
		step = NLMSG_ALIGN(h.nlmsg_len);
		if (step >= len)
			break;
		p += step;
		len -= step;
	}
	return met;
}

/* The table --------------------------------------------------------------------------- */

const struct ev_nl_link *
ev_nl_table_find(const struct ev_nl_table *t, int ifindex)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].ifindex == ifindex)
			return &t->v[i];
	return NULL;
}

const struct ev_nl_link *
ev_nl_table_find_name(const struct ev_nl_table *t, const char *ifname)
{
	for (size_t i = 0; i < t->n; i++)
		if (strcmp(t->v[i].ifname, ifname) == 0)
			return &t->v[i];
	return NULL;
}

int
ev_nl_table_apply(struct ev_nl_table *t, const struct ev_nl_link *l)
{
	struct ev_nl_link *old = (struct ev_nl_link *)ev_nl_table_find(t, l->ifindex);

	if (l->deleted) {
		if (old != NULL)
			*old = t->v[--t->n];
		return 0;
	}
	if (old == NULL) {
		if (t->n == t->cap) {
			size_t cap = t->cap ? t->cap * 2 : 16;
			struct ev_nl_link *v = realloc(t->v, cap * sizeof(*v));

			if (v == NULL)
				return -ENOMEM;
			t->v = v;
			t->cap = cap;
		}
		old = &t->v[t->n++];
	}
	*old = *l;
	return 0;
}

void
ev_nl_table_clear(struct ev_nl_table *t)
{
	free(t->v);
	memset(t, 0, sizeof(*t));
}
