/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdktel_stats' requests and values: a request of a read (prefetched replies first,
 * then libdpdktel's shared session at the plugin's priority), DERIVE and GAUGE value lists,
 * and a reply that was cut, logged once per port and cause.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "instance.h"

/* Whether the shared connection is the one the last port list came over (@any_conn: or
 * another one, to the same process). */
bool
st_same_connection(struct stats_instance *si, bool any_conn)
{
	struct dtel_shared_status st;

	dtel_shared_status(si->t.sh, &st);
	return (any_conn || st.connects == si->t.connects) && st.generation == si->t.generation;
}

/* The reply st_prefetch() got for @cmd, as dtp_query() would give it (it has been counted);
 * -ECANCELED when there is none. */
static int
take_prefetched(struct stats_instance *si, const char *cmd, struct dtel_reply *r)
{
	for (size_t i = 0; i < si->npre; i++) {
		struct prefetched *p = &si->pre[i];

		/* Never sent, or sent and left unread on a connection closed for it: asked
		 * again (a null or cut reply before it ends nothing). */
		if (p->taken || p->result == -ECANCELED || p->result == -ECONNABORTED ||
			strcmp(p->cmd, cmd) != 0)
			continue;
		p->taken = true;
		*r = p->reply;
		memset(&p->reply, 0, sizeof(p->reply));
		return p->result;
	}
	return -ECANCELED;
}

/* Release what st_prefetch() got and no reader took. */
void
st_prefetch_release(struct stats_instance *si)
{
	for (size_t i = 0; i < si->npre; i++)
		dtel_reply_release(&si->pre[i].reply);
	si->npre = 0;
}

/*
 * One request of the current read. After a failure of the connection (a timeout, -EBUSY, a
 * closed or refused connection, garbage) the rest of the read sends nothing: a hung
 * application delays one read by at most one Timeout, and the next read asks it again. A
 * null reply or one cut by the application concerns that command only.
 */
int
st_query(struct stats_instance *si, const char *cmd, struct dtel_reply *r)
{
	int ret;

	/* Replies prefetched before a failure are handed out, as if asked before it. */
	ret = take_prefetched(si, cmd, r);
	if (ret == -ECANCELED && si->halted)
		return -ECANCELED;
	if (ret == -ECANCELED)
		ret = dtp_query(&si->t, cmd, r);
	if (ret < 0 && ret != -ENODATA && ret != -EMSGSIZE)
		si->halted = true;
	if (ret == -ENODATA && strncmp(cmd, "/ethdev/", 8) == 0 && strchr(cmd, ',') != NULL)
		si->relist_ports = true; /* a port that has gone answers null */
	if ((ret == 0 || ret == -ENODATA) && si->on_listed && !st_same_connection(si, true)) {
		/* Maybe another process, with other ports: the next read lists them. */
		if (ret == 0)
			dtel_reply_release(r);
		si->stale = si->halted = true;
		si->relist_ports = true;
		return -ESTALE;
	}
	return ret;
}

/* st_query() as the readers of plugins/common call it. */
int
st_query_fn(void *ctx, const char *cmd, struct dtel_reply *r)
{
	return st_query(ctx, cmd, r);
}

/* For those readers: did this read meet a connection-level failure? */
int
st_read_halted(void *ctx)
{
	return ((const struct stats_instance *)ctx)->halted ? -ECANCELED : 0;
}

/* st_query() with "<name>,<id>". */
int
st_query_id(struct stats_instance *si, const char *name, unsigned int id, struct dtel_reply *r)
{
	return dtp_query_id(st_query_fn, si, name, id, r);
}

void
st_derive(struct stats_instance *si, const struct dtp_id *id, const char *type, const char *ti,
	const uint64_t *v, size_t n)
{
	char what[DATA_MAX_NAME_LEN * 2 + 16];

	if (dtp_derive(id, type, ti, v, n) == -ERANGE) {
		snprintf(what, sizeof(what), "%s/%s%s%s", id->plugin_instance, type, ti ? "-" : "",
			ti ? ti : "");
		dtp_bad_reply(&si->t, what, -ERANGE, 1);
	}
}

/* A reply to "<cmd>,<port>" that cannot be used, n values of it (see dtp_bad_reply). */
void
st_bad_port_reply(struct stats_instance *si, const struct port_state *ps, const char *cmd, int err,
	uint64_t n)
{
	char what[64];

	snprintf(what, sizeof(what), "%s,%u", cmd, ps->id);
	dtp_bad_reply(&si->t, what, err, n);
}

void
st_gauge(const struct dtp_id *id, const char *type, const char *ti, double v)
{
	dtp_gauge(id, type, ti, &v, 1);
}

/* Log once per port and cause that a reply may have been cut. */
void
st_note_cut(struct stats_instance *si, struct port_state *ps, const char *cmd, unsigned int flags)
{
	static const char *const what[CUT_CAUSES] = {
		[CUT_NEAR_LIMIT] = "is within 512 bytes of the application's size limit",
		[CUT_DICT_FULL] = "has a dict of 256 entries, the most DPDK sends",
		[CUT_ARRAY_FULL] = "has an array of 512 entries, the most DPDK sends",
	};
	unsigned int causes = (flags & DTEL_F_NEAR_LIMIT ? 1u << CUT_NEAR_LIMIT : 0) |
		(flags & DTEL_F_DICT_FULL ? 1u << CUT_DICT_FULL : 0) |
		(flags & DTEL_F_ARRAY_FULL ? 1u << CUT_ARRAY_FULL : 0);

	/* dtp_query counted near-limit replies already (and logged oversized ones): count the
	 * rest here. */
	if ((flags & (DTEL_F_DICT_FULL | DTEL_F_ARRAY_FULL)) && !(flags & DTEL_F_NEAR_LIMIT))
		si->t.truncated++;
	for (unsigned int c = 0; c < CUT_CAUSES; c++) {
		if (!(causes & (1u << c)) || (ps->cut_logged & (1u << c)))
			continue;
		ps->cut_logged |= 1u << c;
		LOG(LOG_WARNING,
			"instance '%s' port %u: the %s reply %s: counters past the cut are "
			"missing",
			si->t.name, ps->id, cmd, what[c]);
	}
}
