/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdktel_events' poll, first step: read every source that is due (links from /fwd/ports or
 * /ethdev/link_status, lcores from /fwd/lcores or /eal/lcore/usage, the command list and
 * /fwd/info), each request charged to its kind of poll; the first error ends the poll.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "instance.h"

static bool
connection_error(int err)
{
	return err < 0 && err != -ENODATA && err != -EMSGSIZE && err != -EPROTO && err != -EINVAL &&
		err != -ENOMEM;
}

/*
 * Every request of a poll goes through here. The first connection-level error ends the poll:
 * later requests of the same poll are not sent and return that error, so that a hung
 * application delays a poll by one Timeout at most, and the error stays the one of the
 * command that caused it.
 */
int
ev_query(struct ev_instance *ei, const char *cmd, struct dtel_reply *r)
{
	int ret;

	if (ei->poll_err != 0)
		return ei->poll_err;
	ret = dtp_query(&ei->t, cmd, r);
	if (connection_error(ret))
		ei->poll_err = ret;
	return ret;
}

int
ev_query_id(struct ev_instance *ei, const char *name, unsigned int id, struct dtel_reply *r)
{
	return dtp_query_id(ev_query_fn, ei, name, id, r);
}

/* ev_query() as the readers of plugins/common call it. */
int
ev_query_fn(void *ctx, const char *cmd, struct dtel_reply *r)
{
	return ev_query(ctx, cmd, r);
}

/* ev_query() of @n requests in one batch: the first connection-level error ends the poll. */
static void
query_many(struct ev_instance *ei, const char *const *cmds, size_t n, struct dtel_reply *r,
	int *res, uint64_t *sample)
{
	if (ei->poll_err != 0) {
		for (size_t i = 0; i < n; i++) {
			memset(&r[i], 0, sizeof(r[i]));
			res[i] = ei->poll_err;
		}
		return;
	}
	dtp_query_many_timed(&ei->t, cmds, n, r, res, sample);
	for (size_t i = 0; i < n && ei->poll_err == 0; i++)
		if (res[i] != -ECANCELED && connection_error(res[i]))
			ei->poll_err = res[i];
}

/* A reply that arrived but did not parse: counted and logged once (see dtp_bad_reply). */
static int
parsed(struct ev_instance *ei, const char *what, int ret)
{
	if (ret < 0 && ret != -ENODATA && ret != -ENOMEM)
		dtp_bad_reply(&ei->t, what, ret, 1);
	return ret;
}

/* The reply to @cmd as a dict (a reply that does not parse is counted and logged once). */
static int
query_dict(struct ev_instance *ei, const char *cmd, struct dtel_dict *d)
{
	struct dtel_reply r;
	int ret = ev_query(ei, cmd, &r);

	if (ret < 0)
		return ret;
	ret = parsed(ei, cmd, dtel_parse_dict(&r, cmd, d));
	dtel_reply_release(&r);
	return ret;
}

/* How often the command list of a starting application is read again: after 100 ms, then
 * twice as long each time, up to a second. Its reply is the largest a poll asks for (0.34 ms
 * of the application's CPU on a VM): every 100 ms through its first 30 s, it took a third
 * of PollLoad from the link polls (lsc, 32 ports, docs/performance.md). */
#define CAPS_AGAIN_MS 100
#define CAPS_AGAIN_MAX_MS 1000

/* The wait before the next read of the command list, after one of @last ms (0: none yet). */
static uint64_t
caps_step(uint64_t last)
{
	if (last == 0)
		return CAPS_AGAIN_MS;
	return 2 * last > CAPS_AGAIN_MAX_MS ? CAPS_AGAIN_MAX_MS : 2 * last;
}

static uint64_t
dict_u64(const struct dtel_dict *d, const char *key, bool *ret_found)
{
	const struct dtel_entry *e = dtel_dict_find(d, key);
	bool found = e != NULL && e->type == DTEL_VALUE_U64;

	if (ret_found != NULL)
		*ret_found = found;
	return found ? e->v.u64 : 0;
}

int
ev_read_fwd_info(struct ev_instance *ei, struct fwd_info *out)
{
	struct dtel_dict d;
	int ret = query_dict(ei, "/fwd/info", &d);

	if (ret < 0)
		return ret;
	out->stall_ms = dict_u64(&d, "stall_ms", NULL);
	out->link_poll_ms = dict_u64(&d, "link_poll_ms", NULL);
	out->link_check_age_ms = dict_u64(&d, "link_check_age_ms", &out->has_age);
	out->main_lcore = (unsigned int)dict_u64(&d, "main_lcore", NULL);
	dtel_dict_clear(&d);
	return 0;
}

/* Once per instance (again only when that changes, e.g. a restart with other options). */
static void
say_lcore_source(struct ev_instance *ei)
{
	bool have = ei->caps.fwd_lcores || ei->usage_lcores;

	if (!ei->o->lcores || have != ei->said_links_only)
		return;
	ei->said_links_only = !have;
	if (!have)
		LOG(LOG_INFO,
			"DPDK application '%s' reports no lcore data (no /fwd/lcores, no lcore in "
			"/eal/lcore/usage): only its links are watched",
			ei->t.name);
	else
		LOG(LOG_INFO,
			"DPDK application '%s' now reports lcore data: its lcores are watched",
			ei->t.name);
}

/*
 * What the application offers, from its command list, once per process; again (every
 * CAPS_AGAIN_MS, backing off to CAPS_AGAIN_MAX_MS) while it is starting and has none of its
 * own commands yet (it registers them after the EAL opened the socket).
 */
static int
probe_caps(struct ev_instance *ei, uint64_t t)
{
	int ret = dtp_caps_read(ev_query_fn, ei, &ei->t, &ei->caps);

	if (ret < 0)
		return ret;
	ei->stall_us = (uint64_t)(ei->o->stall_threshold * 1e6);
	ei->has_link_check_age = false;
	if (ei->caps.fwd_lcores || ei->caps.fwd_ports) {
		struct fwd_info fi;

		if (ev_read_fwd_info(ei, &fi) == 0) {
			/* The application's own threshold, so that both say STALLED together. */
			if (ei->stall_us == 0)
				ei->stall_us = fi.stall_ms * 1000;
			ei->has_link_check_age = fi.has_age;
			ei->main_lcore = fi.main_lcore;
			ei->fwd_link_poll_ms = fi.link_poll_ms;
		}
	}
	/* Which lcores report cycles is known only from the usage reply itself: an application
	 * without a usage callback (testpmd without --record-core-cycles) lists none, and is
	 * then watched for its links alone, without an lcore request per poll. */
	ei->usage_lcores = false;
	if (ei->o->lcores && !ei->caps.fwd_lcores && ei->caps.eal_usage) {
		struct dtel_eal_lcore_usage u;

		if (dtp_eal_usage(ev_query_fn, ei, &ei->t, &u) == 0) {
			ei->usage_lcores = u.n > 0;
			dtel_eal_lcore_usage_clear(&u);
		}
	}
	if (ei->poll_err != 0)
		return ei->poll_err;
	if (ei->stall_us == 0)
		ei->stall_us = 100000;
	ei->have_caps = true;
	ei->caps_again = !ei->caps.fwd_ports && !ei->caps.fwd_lcores && !ei->usage_lcores &&
		dtp_target_young(&ei->t);
	ei->caps_again_step_ms = caps_step(ei->caps_again_step_ms);
	ei->caps_again_ms = t + ei->caps_again_step_ms;
	say_lcore_source(ei);
	return 0;
}

void
ev_reading_free(struct reading *rd)
{
	free(rd->links);
	free(rd->link_passed);
	free(rd->lcores);
	free(rd->total);
	free(rd->busy);
	free(rd->lcore_passed);
}

static struct events_link_reading *
link_add(struct reading *rd, unsigned int port)
{
	if (rd->nlinks == rd->caplinks) {
		size_t cap = rd->caplinks ? rd->caplinks * 2 : 16;
		struct events_link_reading *v = realloc(rd->links, cap * sizeof(*v));

		if (v == NULL)
			return NULL;
		rd->links = v;
		rd->caplinks = cap;
	}
	rd->links[rd->nlinks] = (struct events_link_reading){.port = port};
	return &rd->links[rd->nlinks++];
}

int
ev_read_fwd_ports(struct ev_instance *ei, struct reading *rd)
{
	struct dtel_fwd_ports p;
	struct dtel_reply r;
	int ret = ev_query(ei, "/fwd/ports", &r);

	if (ret < 0)
		return ret;
	ret = parsed(ei, "/fwd/ports", dtel_parse_fwd_ports(&r, &p));
	dtel_reply_release(&r);
	if (ret < 0)
		return ret;
	for (size_t i = 0; i < p.n; i++) {
		struct events_link_reading *lr;

		if (!dtp_ports_has(&ei->o->ports, p.v[i].port_id))
			continue;
		lr = link_add(rd, p.v[i].port_id);
		if (lr == NULL)
			break;
		lr->state = p.v[i].up ? EVENTS_LINK_UP : EVENTS_LINK_DOWN;
		lr->speed = p.v[i].speed_mbps;
		lr->duplex = p.v[i].duplex;
		lr->have_changes = true;
		lr->changes = p.v[i].link_changes;
		lr->valid = true;
	}
	dtel_fwd_ports_clear(&p);
	return 0;
}

/* The reply @r (result @ret) to /ethdev/link_status,@port into @out; @r is released. */
static int
link_reply(struct ev_instance *ei, unsigned int port, struct dtel_reply *r, int ret,
	struct events_link_reading *out)
{
	struct dtel_link l;

	if (ret < 0)
		return ret;
	ret = dtel_parse_link(r, &l);
	dtel_reply_release(r);
	if (ret < 0) {
		char what[48];

		snprintf(what, sizeof(what), "/ethdev/link_status,%u", port);
		return parsed(ei, what, ret);
	}
	out->port = port;
	out->state = l.up ? EVENTS_LINK_UP : EVENTS_LINK_DOWN;
	out->speed = l.speed_mbps;
	out->duplex = l.duplex;
	out->valid = true;
	return 0;
}

int
ev_read_one_link(struct ev_instance *ei, unsigned int port, struct events_link_reading *out)
{
	struct dtel_reply r;
	int ret = ev_query_id(ei, "/ethdev/link_status", port, &r);

	return link_reply(ei, port, &r, ret, out);
}

/* The index of @port among the ports listed last time, or -1. */
static int
listed_before(const struct ev_instance *ei, uint16_t port)
{
	for (size_t i = 0; i < ei->nlink_ids; i++)
		if (ei->link_ids[i] == port)
			return (int)i;
	return -1;
}

/* A link poll's batch: /ethdev/list, then the due ports' links. */
struct batch {
	size_t n;
	char (*cmd)[32];
	const char **p;
	struct dtel_reply *r;
	int *res;
	uint64_t *sample;
	int *at; /* per ei->link_ids[i]: its index in the batch, -1: not due */
};

/* The link of listed port @port: from the batch where it was asked there (@at: its index in
 * the batch, -1: not due, not asked), asked alone when it was listed for the first time or its
 * request was not sent; what its request cost is learnt. */
static int
read_listed_link(struct ev_instance *ei, uint16_t port, int at, const struct batch *b, uint64_t t,
	struct events_link_reading *out)
{
	uint64_t before = ei->t.service_ns;
	int ret;

	if (listed_before(ei, port) >= 0 && at < 0)
		return 0; /* not due: listed, nothing to apply */
	if (at < 0 || b->res[at] == -ECANCELED) {
		ret = ev_read_one_link(ei, port, out);
		if (ret == 0 || ret == -ENODATA)
			ev_sched_polled(ei, port, t, ei->t.service_ns - before);
		return ret;
	}
	ret = link_reply(ei, port, &b->r[at], b->res[at], out);
	if (b->res[at] == 0 || b->res[at] == -ENODATA)
		ev_sched_polled(ei, port, t, b->sample[at]);
	return ret;
}

/* The ports /ethdev/list gives that the Ports option selects, into ei->link_ids. */
static void
keep_listed(struct ev_instance *ei, const uint16_t *ids, int n)
{
	uint16_t *keep = malloc(((size_t)n + 1) * sizeof(*keep));
	size_t k = 0;

	if (keep == NULL)
		return; /* the next poll asks the list alone */
	for (int i = 0; i < n; i++)
		if (dtp_ports_has(&ei->o->ports, ids[i]))
			keep[k++] = ids[i];
	free(ei->link_ids);
	ei->link_ids = keep;
	ei->nlink_ids = k;
}

static void
batch_free(struct batch *b)
{
	for (size_t i = 0; b->r != NULL && i < b->n; i++)
		dtel_reply_release(&b->r[i]);
	free(b->cmd);
	free(b->p);
	free(b->r);
	free(b->res);
	free(b->sample);
	free(b->at);
}

static void
batch_add(struct batch *b, size_t i, unsigned int port)
{
	snprintf(b->cmd[b->n], sizeof(b->cmd[0]), "/ethdev/link_status,%u", port);
	b->p[b->n] = b->cmd[b->n];
	b->at[i] = (int)b->n++;
}

/* Add the candidate (b->at[] @mark) due longest; false when none is left. */
static bool
batch_take(const struct ev_instance *ei, struct batch *b, int mark)
{
	uint64_t least = UINT64_MAX, next;
	size_t pick = SIZE_MAX;

	for (size_t i = 0; i < ei->nlink_ids; i++) {
		if (b->at[i] != mark)
			continue;
		ev_sched_stretched(ei, ei->link_ids[i], &next);
		if (next < least || pick == SIZE_MAX) {
			least = next;
			pick = i;
		}
	}
	if (pick == SIZE_MAX)
		return false;
	batch_add(b, pick, ei->link_ids[pick]);
	return true;
}

/* The list, and the link of every port listed last time that is due at @t. */
static int
batch_make(struct ev_instance *ei, uint64_t t, struct batch *b)
{
	size_t cap = 1 + ei->nlink_ids, group = ei->link_group > 1 ? ei->link_group : 1;

	*b = (struct batch){.cmd = malloc(cap * sizeof(*b->cmd)),
		.p = malloc(cap * sizeof(*b->p)),
		.r = calloc(cap, sizeof(*b->r)),
		.res = malloc(cap * sizeof(*b->res)),
		.sample = calloc(cap, sizeof(*b->sample)),
		.at = calloc(cap, sizeof(*b->at))};
	if (!b->cmd || !b->p || !b->r || !b->res || !b->sample || !b->at)
		return -ENOMEM;
	b->p[b->n++] = "/ethdev/list";
	for (size_t i = 0; i < ei->nlink_ids; i++) {
		uint64_t next;

		b->at[i] = -1;
		if (!ev_sched_due(ei, ei->link_ids[i], t))
			continue;
		if (ev_sched_stretched(ei, ei->link_ids[i], &next))
			b->at[i] = -2; /* a candidate, below */
		else
			batch_add(b, i, ei->link_ids[i]);
	}
	/* Stretched ports, a group at most: those due longest first; the rest at the next poll.
	 * Then, up to a group, those due soon go along (ev_sched_along()). */
	for (size_t taken = 0; taken < group && batch_take(ei, b, -2); taken++)
		;
	for (size_t i = 0; i < ei->nlink_ids; i++)
		b->at[i] = b->at[i] == -2 ? -1 : b->at[i];
	for (size_t i = 0; b->n > 1 && b->n <= group && i < ei->nlink_ids; i++)
		if (b->at[i] < 0 && ev_sched_along(ei, ei->link_ids[i], t))
			batch_add(b, i, ei->link_ids[i]);
	return 0;
}

/* Send the batch; what its turn cost beyond its ports' requests (each port's least service
 * time; a request's own time while it has none) is learnt: the poll's fixed cost. */
static void
batch_send(struct ev_instance *ei, struct batch *b)
{
	uint64_t before = ei->t.service_ns, ports = 0;

	if (ei->poll_err != 0) {
		query_many(ei, b->p, b->n, b->r, b->res, NULL);
		return;
	}
	query_many(ei, b->p, b->n, b->r, b->res, b->sample);
	for (size_t k = 0; k < ei->nlink_ids; k++) {
		uint64_t least;

		if (b->at[k] < 0 || b->sample[b->at[k]] == 0)
			continue;
		least = ev_sched_least(ei, ei->link_ids[k]);
		ports += least != 0 ? least : b->sample[b->at[k]];
	}
	ev_sched_overhead(ei, ei->t.service_ns - before, ports);
}

/*
 * /ethdev/list and the links of the ports it gave last time that are due (schedule.c), in
 * one batch (the application's telemetry thread answers them back to back); a port listed
 * for the first time is asked on its own, and the replies of a port no longer listed are
 * dropped. A listed port that was not due is in the reading without a link: still there.
 */
static int
read_ethdev_links(struct ev_instance *ei, struct reading *rd, uint64_t t)
{
	struct batch b;
	uint16_t *ids = NULL;
	int nids = 0, ret = batch_make(ei, t, &b);

	if (ret < 0)
		goto out;
	batch_send(ei, &b);
	ret = b.res[0];
	if (ret < 0)
		goto out;
	nids = ret = parsed(ei, "/ethdev/list", dtel_parse_port_list(&b.r[0], &ids));
	if (ret < 0)
		goto out;
	for (int i = 0; i < nids; i++) {
		struct events_link_reading *lr;
		int k = listed_before(ei, ids[i]);

		if (!dtp_ports_has(&ei->o->ports, ids[i]))
			continue;
		lr = link_add(rd, ids[i]);
		if (lr == NULL)
			break;
		/* Listed, but without a usable link answer: still there, nothing to apply. */
		ret = read_listed_link(ei, ids[i], k < 0 ? -1 : b.at[k], &b, t, lr);
		if (connection_error(ret))
			break;
	}
	keep_listed(ei, ids, nids);
	ret = connection_error(ret) ? ret : 0;
out:
	batch_free(&b);
	free(ids);
	return ret;
}

/* /fwd/ports is the main lcore's snapshot: while that lcore is stalled, ask the ports. */
static int
read_links(struct ev_instance *ei, struct reading *rd, uint64_t t)
{
	bool stale = rd->have_main &&
		events_main_stale(rd->main.link_check_age_ms, rd->main.link_poll_ms, ei->stall_us);

	rd->links_from_fwd = ei->caps.fwd_ports && !ei->main_stalled && !stale;
	ei->links_from_fwd = rd->links_from_fwd;
	return rd->links_from_fwd ? ev_read_fwd_ports(ei, rd) : read_ethdev_links(ei, rd, t);
}

int
ev_read_fwd_lcores(struct ev_instance *ei, struct dtel_fwd_lcores *out)
{
	struct dtel_reply r;
	int ret = ev_query(ei, "/fwd/lcores", &r);

	if (ret < 0)
		return ret;
	ret = parsed(ei, "/fwd/lcores", dtel_parse_fwd_lcores(&r, out));
	dtel_reply_release(&r);
	return ret;
}

static int
lcores_alloc(struct reading *rd, size_t n)
{
	rd->lcores = calloc(n + 1, sizeof(*rd->lcores));
	rd->total = calloc(n + 1, sizeof(*rd->total));
	rd->busy = calloc(n + 1, sizeof(*rd->busy));
	rd->lcore_passed = calloc(n + 1, sizeof(*rd->lcore_passed));
	return rd->lcores && rd->total && rd->busy && rd->lcore_passed ? 0 : -ENOMEM;
}

static int
read_fwd_lcore_set(struct ev_instance *ei, struct reading *rd)
{
	struct dtel_fwd_lcores l = {0};
	int ret = ev_read_fwd_lcores(ei, &l);

	if (ret == 0)
		ret = lcores_alloc(rd, l.n);
	for (size_t i = 0; ret == 0 && i < l.n; i++)
		rd->lcores[rd->nlcores++] = (struct events_lcore_reading){.id = l.v[i].lcore_id,
			.state = l.v[i].state,
			.age_us = l.v[i].heartbeat_age_us,
			.stalls = l.v[i].stalls};
	dtel_fwd_lcores_clear(&l);
	return ret;
}

/* DPDK >= 23.03 without the forwarder: the cycles of every lcore, in one request. */
static int
read_usage_lcore_set(struct ev_instance *ei, struct reading *rd)
{
	struct dtel_eal_lcore_usage u;
	int ret = dtp_eal_usage(ev_query_fn, ei, &ei->t, &u);

	if (ret < 0)
		return ret;
	ret = lcores_alloc(rd, u.n);
	for (size_t i = 0; ret == 0 && i < u.n; i++) {
		rd->lcores[rd->nlcores] = (struct events_lcore_reading){.id = u.v[i].lcore_id};
		rd->total[rd->nlcores] = u.v[i].total_cycles;
		rd->busy[rd->nlcores++] = u.v[i].busy_cycles;
	}
	dtel_eal_lcore_usage_clear(&u);
	return ret;
}

/* What the requests of a poll since @since (a service_ns of the target) cost, for @kind. */
void
ev_charge(struct ev_instance *ei, enum poll_kind kind, uint64_t since)
{
	ei->round_ns[kind] += ei->t.service_ns - since;
}

/*
 * Which kinds of poll are due at @t: links and lcores each at its interval, and when neither
 * is, a request that shows whether the application answers (NotRespondingPolls counts polls
 * whatever they asked). Half a PollInterval early counts as due: polls start a little late or
 * early, and an interval of one PollInterval must not become two.
 */
static void
due_at(struct ev_instance *ei, uint64_t t, struct reading *rd)
{
	uint64_t early = (uint64_t)(ei->o->poll_interval * 500);

	rd->due[POLL_LINKS] = ei->o->link && t + early >= ei->next_ms[POLL_LINKS];
	rd->due[POLL_LCORES] = ei->o->lcores && (ei->caps.fwd_lcores || ei->usage_lcores) &&
		t + early >= ei->next_ms[POLL_LCORES];
	rd->due[POLL_ALIVE] = !rd->due[POLL_LINKS] && !rd->due[POLL_LCORES] &&
		t + early >= ei->next_ms[POLL_ALIVE];
}

static void
read_link_set(struct ev_instance *ei, struct reading *rd, uint64_t t)
{
	if (ei->caps.fwd_ports && ei->has_link_check_age)
		rd->have_main = ev_read_fwd_info(ei, &rd->main) == 0 && rd->main.has_age;
	rd->have_links = read_links(ei, rd, t) == 0;
	rd->link_passed = calloc(rd->nlinks + 1, sizeof(*rd->link_passed));
	rd->have_links &= rd->link_passed != NULL;
}

/* Read every source that is due; the first connection error ends the poll (ei->poll_err). */
void
ev_read_sources(struct ev_instance *ei, uint64_t t, struct reading *rd)
{
	uint64_t s0 = ei->t.service_ns;
	bool probed = !ei->have_caps || (ei->caps_again && t >= ei->caps_again_ms);

	/* The command list (again, while a starting application may register more) shows that
	 * it answers, as the liveness request would: charged to that. */
	if (probed && probe_caps(ei, t) < 0) {
		ev_charge(ei, POLL_ALIVE, s0);
		return;
	}
	ev_charge(ei, POLL_ALIVE, s0);
	due_at(ei, t, rd);
	rd->due[POLL_ALIVE] &= !probed;
	s0 = ei->t.service_ns;
	if (rd->due[POLL_LINKS])
		read_link_set(ei, rd, t);
	ev_charge(ei, POLL_LINKS, s0);
	s0 = ei->t.service_ns;
	if (rd->due[POLL_LCORES]) {
		rd->lcores_from_fwd = ei->caps.fwd_lcores;
		rd->have_lcores = (ei->caps.fwd_lcores ? read_fwd_lcore_set(ei, rd)
						       : read_usage_lcore_set(ei, rd)) == 0;
	}
	ev_charge(ei, POLL_LCORES, s0);
	s0 = ei->t.service_ns;
	if (rd->due[POLL_ALIVE])
		ev_read_alive(ei);
	ev_charge(ei, POLL_ALIVE, s0);
}
