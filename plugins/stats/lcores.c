/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdktel_stats' lcores: /fwd/lcores cycles of dpdktel-fwd, and /eal/lcore/info and
 * /eal/lcore/usage of DPDK >= 23.03.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "instance.h"

static struct lcore_state *
lcore_state(struct stats_instance *si, unsigned int id)
{
	return DTP_SLOT(si->lcores, si->nlcores, id, NULL);
}

/* Cycles, and the busy share of the cycles since the previous read. */
static void
dispatch_cycles(struct stats_instance *si, const struct dtp_id *id, unsigned int lcore,
	uint64_t busy, uint64_t total)
{
	struct lcore_state *ls = lcore_state(si, lcore);

	st_derive(si, id, "lcore_cycles", NULL, (uint64_t[]){busy, total}, 2);
	if (ls == NULL)
		return;
	if (ls->have && total > ls->total && busy >= ls->busy)
		st_gauge(id, "percent", "busy",
			100.0 * (double)(busy - ls->busy) / (double)(total - ls->total));
	ls->have = true;
	ls->busy = busy;
	ls->total = total;
}

void
st_read_fwd_lcores(struct stats_instance *si, cdtime_t now)
{
	struct dtel_fwd_lcores l;
	struct dtel_reply r;
	struct dtp_id id;
	int ret;

	if (st_query(si, "/fwd/lcores", &r) < 0)
		return;
	ret = dtel_parse_fwd_lcores(&r, &l);
	dtel_reply_release(&r);
	if (ret < 0) {
		dtp_bad_reply(&si->t, "/fwd/lcores", ret, 1);
		return;
	}
	for (size_t i = 0; i < l.n; i++) {
		const struct dtel_fwd_lcore *c = &l.v[i];

		dtp_id_lcore(&id, PLUGIN, si->t.name, c->lcore_id, now);
		st_derive(si, &id, "lcore_packets", NULL,
			(uint64_t[]){c->rx_packets, c->tx_packets}, 2);
		st_derive(si, &id, "stalls", NULL, &c->stalls, 1);
		dispatch_cycles(si, &id, c->lcore_id, c->busy_cycles, c->total_cycles);
	}
	dtel_fwd_lcores_clear(&l);
}

/* CPUs as ranges joined by '_' ("2-3_70"): a ',' would end the part of lcore_info. */
static void
cpu_ranges(const uint64_t *set, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (int c = 0; c < DTEL_CPUSET_WORDS * 64 && len < size; c++) {
		int last = c;

		if (!(set[c / 64] >> (c % 64) & 1))
			continue;
		while (last + 1 < DTEL_CPUSET_WORDS * 64 &&
			(set[(last + 1) / 64] >> ((last + 1) % 64) & 1))
			last++;
		len += (size_t)snprintf(buf + len, size - len, last > c ? "%s%d-%d" : "%s%d",
			len ? "_" : "", c, last);
		c = last;
	}
}

/* lcore_info "<role>,<cpus>,<numa>" of one lcore, kept for every read of this generation. */
static void
keep_lcore_info(void *arg, const struct dtel_eal_lcore_info *li)
{
	static const size_t max[] = {32, 64, 12};
	struct stats_instance *si = arg;
	struct lcore_state *ls = lcore_state(si, li->lcore_id);
	char cpus[64], numa[16];
	const char *parts[] = {li->role, cpus, numa};

	if (ls == NULL)
		return;
	cpu_ranges(li->cpuset, cpus, sizeof(cpus));
	snprintf(numa, sizeof(numa), "%d", li->socket);
	if (dtp_info_instance(ls->info_ti, sizeof(ls->info_ti), parts, max, 3) < 0)
		ls->info_ti[0] = '\0';
}

/*
 * The role and CPUs of each lcore (DPDK >= 23.03): read once per application generation
 * (again at the next read when a request failed), sent at every read. Where the cycles come
 * from /eal/lcore/info too, st_read_eal_lcores() has kept them from its replies already.
 */
void
st_read_lcore_info(struct stats_instance *si, cdtime_t now)
{
	struct dtp_id id;

	if (si->caps.eal_lcore && si->lcore_info_generation != si->t.generation &&
		dtp_eal_lcores(st_query_fn, si, &si->t, st_read_halted, keep_lcore_info, si) == 0)
		si->lcore_info_generation = si->t.generation;
	for (size_t i = 0; i < si->nlcores; i++) {
		if (si->lcores[i].info_ti[0] == '\0')
			continue;
		dtp_id_lcore(&id, PLUGIN, si->t.name, si->lcores[i].id, now);
		st_gauge(&id, "lcore_info", si->lcores[i].info_ti, 1);
	}
}

struct eal_read {
	struct stats_instance *si;
	cdtime_t now;
};

static void
dispatch_eal_lcore(void *arg, const struct dtel_eal_lcore_info *li)
{
	struct eal_read *er = arg;
	struct dtp_id id;

	if (er->si->lcore_info_generation != er->si->t.generation)
		keep_lcore_info(er->si, li);
	if (!li->has_cycles)
		return;
	dtp_id_lcore(&id, PLUGIN, er->si->t.name, li->lcore_id, er->now);
	dispatch_cycles(er->si, &id, li->lcore_id, li->busy_cycles, li->total_cycles);
}

/* DPDK >= 23.03 without the forwarder's commands: cycles from /eal/lcore/info, and the
 * lcores' role and CPUs from the same replies (read_lcore_info). */
void
st_read_eal_lcores(struct stats_instance *si, cdtime_t now)
{
	struct eal_read er = {.si = si, .now = now};

	if (dtp_eal_lcores(st_query_fn, si, &si->t, st_read_halted, dispatch_eal_lcore, &er) == 0)
		si->lcore_info_generation = si->t.generation;
}

/*
 * DPDK >= 23.03 without the forwarder's commands: the cycles of every lcore in one
 * /eal/lcore/usage, the counters /eal/lcore/info carries one lcore a request (both ask the
 * application's rte_lcore_register_usage_cb callback: lib/eal/common/eal_common_lcore.c,
 * lcore_telemetry_usage_cb and lcore_telemetry_info_cb). An application that registered none
 * lists no lcore: past its start-up it is not asked again until it restarts.
 */
void
st_read_usage_lcores(struct stats_instance *si, cdtime_t now)
{
	struct dtel_eal_lcore_usage u;
	struct dtp_id id;

	if (si->no_usage_generation == si->t.generation)
		return;
	if (dtp_eal_usage(st_query_fn, si, &si->t, &u) < 0)
		return;
	if (u.n == 0 && !dtp_target_young(&si->t))
		si->no_usage_generation = si->t.generation;
	for (size_t i = 0; i < u.n; i++) {
		dtp_id_lcore(&id, PLUGIN, si->t.name, u.v[i].lcore_id, now);
		dispatch_cycles(si, &id, u.v[i].lcore_id, u.v[i].busy_cycles, u.v[i].total_cycles);
	}
	dtel_eal_lcore_usage_clear(&u);
}
