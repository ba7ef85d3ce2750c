/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Readers both plugins use, through each plugin's own request function (its accounting and
 * its rule for ending a poll or a read stay its own): the command list, the /eal/lcore
 * commands (DPDK >= 23.03: /eal/lcore/usage for all lcores in one request, /eal/lcore/info
 * one lcore at a time), and the plugin's health values.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dtp.h"

int
dtp_query_id(dtp_query_fn q, void *ctx, const char *name, unsigned int id, struct dtel_reply *ret)
{
	char cmd[96];

	snprintf(cmd, sizeof(cmd), "%s,%u", name, id);
	return q(ctx, cmd, ret);
}

int
dtp_query_dict(dtp_query_fn q, void *ctx, struct dtp_target *t, const char *cmd, const char *key,
	bool null_ok, struct dtel_dict *ret_d)
{
	struct dtel_reply r;
	int ret = q(ctx, cmd, &r);

	if (ret < 0)
		return ret;
	ret = dtel_parse_dict(&r, key != NULL ? key : cmd, ret_d);
	dtel_reply_release(&r);
	if (ret < 0 && ret != -ENOMEM && !(null_ok && ret == -ENODATA))
		dtp_bad_reply(t, cmd, ret, 1);
	return ret;
}

int
dtp_caps_read(dtp_query_fn q, void *ctx, struct dtp_target *t, struct dtp_caps *ret_caps)
{
	struct dtel_dict d;
	int ret = dtp_query_dict(q, ctx, t, "/", NULL, false, &d);

	if (ret < 0)
		return ret;
	memset(ret_caps, 0, sizeof(*ret_caps));
	for (size_t i = 0; i < d.n; i++) {
		const char *c = d.v[i].str;

		ret_caps->fwd_info |= strcmp(c, "/fwd/info") == 0;
		ret_caps->fwd_ports |= strcmp(c, "/fwd/ports") == 0;
		ret_caps->fwd_port |= strcmp(c, "/fwd/port") == 0;
		ret_caps->fwd_lcores |= strcmp(c, "/fwd/lcores") == 0;
		ret_caps->eal_lcore |= strcmp(c, "/eal/lcore/info") == 0;
		ret_caps->eal_usage |= strcmp(c, "/eal/lcore/usage") == 0;
		ret_caps->cryptodev |= strcmp(c, "/cryptodev/list") == 0;
		ret_caps->dmadev |= strcmp(c, "/dmadev/list") == 0;
		ret_caps->eventdev |= strcmp(c, "/eventdev/dev_list") == 0;
		ret_caps->rawdev |= strcmp(c, "/rawdev/list") == 0;
	}
	dtel_dict_clear(&d);
	return 0;
}

int
dtp_eal_lcore(dtp_query_fn q, void *ctx, struct dtp_target *t, unsigned int id,
	struct dtel_eal_lcore_info *ret_info)
{
	struct dtel_eal_lcore_info li;
	struct dtel_reply r;
	char cmd[48];
	int ret;

	snprintf(cmd, sizeof(cmd), "/eal/lcore/info,%u", id);
	ret = q(ctx, cmd, &r);
	if (ret < 0)
		return ret;
	ret = dtel_parse_eal_lcore_info(&r, &li);
	dtel_reply_release(&r);
	if (ret < 0) {
		if (ret != -ENOMEM)
			dtp_bad_reply(t, "/eal/lcore/info", ret, 1);
		return ret;
	}
	/* Another lcore's answer (DPDK before 26.07 can swap two clients' parameters). */
	if (li.lcore_id != id) {
		t->discarded++;
		return -EPROTO;
	}
	*ret_info = li;
	return 0;
}

int
dtp_eal_lcores(dtp_query_fn q, void *ctx, struct dtp_target *t, int (*stop)(void *ctx),
	void (*each)(void *arg, const struct dtel_eal_lcore_info *li), void *arg)
{
	struct dtel_eal_lcore_info li;
	struct dtel_dict ids;
	int ret = dtp_query_dict(q, ctx, t, "/eal/lcore/list", NULL, false, &ids);

	if (ret < 0)
		return ret;
	for (size_t i = 0; i < ids.n; i++) {
		if (stop != NULL && (ret = stop(ctx)) != 0)
			break;
		if (ids.v[i].type != DTEL_VALUE_U64 || ids.v[i].v.u64 > UINT32_MAX)
			continue;
		if (dtp_eal_lcore(q, ctx, t, (unsigned int)ids.v[i].v.u64, &li) == 0)
			each(arg, &li);
	}
	dtel_dict_clear(&ids);
	return ret;
}

int
dtp_eal_usage(
	dtp_query_fn q, void *ctx, struct dtp_target *t, struct dtel_eal_lcore_usage *ret_usage)
{
	struct dtel_reply r;
	int ret = q(ctx, "/eal/lcore/usage", &r);

	if (ret < 0)
		return ret;
	ret = dtel_parse_eal_lcore_usage(&r, ret_usage);
	dtel_reply_release(&r);
	if (ret < 0 && ret != -ENOMEM && ret != -ENODATA)
		dtp_bad_reply(t, "/eal/lcore/usage", ret, 1);
	return ret;
}

/* app_load: what both plugins cost the application, in all and by kind (percent of one core),
 * and the budgets in force (none is dispatched where there is none). */
static void
dispatch_load(const struct dtp_id *id, const struct dtp_target *t)
{
	static const char *const measured[] = {"reads", "polls"},
				 *const budget[] = {"reads_budget", "polls_budget"};
	struct dtel_shared_load load;
	double v;

	dtel_shared_load(t->sh, &load);
	v = load.measured * 100;
	dtp_gauge(id, "app_load", NULL, &v, 1);
	if (load.budget > 0) {
		v = load.budget * 100;
		dtp_gauge(id, "app_load", "budget", &v, 1);
	}
	for (int p = DTEL_PRIO_READ; p <= DTEL_PRIO_POLL; p++) {
		v = load.measured_prio[p] * 100;
		dtp_gauge(id, "app_load", measured[p], &v, 1);
		if (load.budget_prio[p] > 0) {
			v = load.budget_prio[p] * 100;
			dtp_gauge(id, "app_load", budget[p], &v, 1);
		}
	}
}

int
dtp_dispatch_health(const struct dtp_id *id, const struct dtp_target *t)
{
	static const char *const kinds[] = {
		"sent", "failed", "discarded", "invalid", "truncated", "queued", "deferred"};
	const uint64_t counts[] = {
		t->sent, t->failed, t->discarded, t->invalid, t->truncated, t->queued, t->deferred};
	double up = t->up ? 1 : 0;
	int refused = 0;

	dtp_gauge(id, "up", NULL, &up, 1);
	dispatch_load(id, t);
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		refused += dtp_derive(id, "telemetry_requests", kinds[i], &counts[i], 1) == -ERANGE;
	refused += dtp_derive(id, "reconnects", NULL, &t->reconnects, 1) == -ERANGE;
	refused += dtp_derive(id, "restarts", NULL, &t->restarts, 1) == -ERANGE;
	return refused;
}
