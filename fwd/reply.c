/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Telemetry replies of dpdktel-fwd, from snapshots (see reply.h). Every rte_tel_data_*
 * return is checked: a value that DPDK would cut (E2BIG) or drop (-EINVAL, -ENOSPC) fails
 * the whole reply rather than send a wrong one.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reply.h"
#include "state.h"

/* Run a rte_tel_data_* call; any non-zero return (E2BIG is positive) is a failure. */
#define TRY(expr)                  \
	do {                       \
		ret = (expr);      \
		if (ret != 0)      \
			goto fail; \
	} while (0)

struct column {
	const char *key;
	enum rte_tel_value_type type;
	struct rte_tel_data *c;
};

static void
columns_free(struct column *cols, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		rte_tel_data_free(cols[i].c);
		cols[i].c = NULL;
	}
}

static int
columns_alloc(struct column *cols, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		cols[i].c = rte_tel_data_alloc();
		if (cols[i].c == NULL || rte_tel_data_start_array(cols[i].c, cols[i].type) != 0) {
			columns_free(cols, n);
			return -ENOMEM;
		}
	}
	return 0;
}

/*
 * Attach the columns to dict d (keep = 0: DPDK frees them after rendering). On failure the
 * caller frees every column, attached or not: DPDK does not render, so does not free, the
 * containers of a callback that fails.
 */
static int
columns_attach(struct rte_tel_data *d, struct column *cols, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		int ret = rte_tel_data_add_dict_container(d, cols[i].key, cols[i].c, 0);

		if (ret != 0)
			return ret > 0 ? -ret : ret;
	}
	return 0;
}

int
fwd_tel_key_valid(const char *name)
{
	size_t len = 0;

	if (name == NULL)
		return 0;
	for (; name[len] != '\0'; len++)
		if (!isalnum((unsigned char)name[len]) && name[len] != '_' && name[len] != '/')
			return 0;
	return len > 0 && len < RTE_TEL_MAX_STRING_LEN;
}

int
fwd_parse_id(const char *params, unsigned long max, unsigned long *ret)
{
	unsigned long v;
	char *end;

	if (params == NULL || !isdigit((unsigned char)params[0]))
		return -EINVAL;
	errno = 0;
	v = strtoul(params, &end, 10);
	if (*end != '\0')
		return -EINVAL;
	if (errno == ERANGE || v > max)
		return -ERANGE;
	*ret = v;
	return 0;
}

static int
cmp_u16(const void *a, const void *b)
{
	return (int)*(const uint16_t *)a - (int)*(const uint16_t *)b;
}

int
fwd_format_idlist(const uint16_t *ids, unsigned int n, char *buf, size_t len)
{
	uint16_t sorted[FWD_MAX_PORTS];
	size_t used = 0;
	unsigned int i = 0;

	if (len == 0 || n > FWD_MAX_PORTS)
		return -E2BIG;
	buf[0] = '\0';
	if (n == 0)
		return 0; /* an lcore without ports: ids may be NULL */
	memcpy(sorted, ids, n * sizeof(ids[0]));
	qsort(sorted, n, sizeof(sorted[0]), cmp_u16);
	while (i < n) {
		unsigned int j = i;
		int w;

		while (j + 1 < n && sorted[j + 1] == sorted[j] + 1)
			j++;
		if (j == i)
			w = snprintf(buf + used, len - used, "%s%u", used ? "," : "", sorted[i]);
		else
			w = snprintf(buf + used, len - used, "%s%u-%u", used ? "," : "", sorted[i],
				sorted[j]);
		if (w < 0 || (size_t)w >= len - used) {
			buf[0] = '\0';
			return -E2BIG;
		}
		used += (size_t)w;
		i = j + 1;
	}
	return (int)used;
}

enum lcore_col {
	L_ID,
	L_STATE,
	L_CODE,
	L_HB,
	L_HB_AGE,
	L_STALLS,
	L_CHANGE,
	L_RX,
	L_TX,
	L_BUSY,
	L_TOTAL,
	L_PORTS,
	L_N
};

/* One lcore's row, a value in each column. */
static int
add_lcore_row(struct column *cols, const struct fwd_lcore_snap *l)
{
	char ports[RTE_TEL_MAX_STRING_LEN];
	int ret = fwd_format_idlist(l->ports, l->nb_ports, ports, sizeof(ports));

	if (ret < 0)
		return ret;
	TRY(rte_tel_data_add_array_int(cols[L_ID].c, (int)l->lcore_id));
	TRY(rte_tel_data_add_array_string(cols[L_STATE].c, fwd_lcore_state_name(l->state)));
	TRY(rte_tel_data_add_array_int(cols[L_CODE].c, (int)l->state));
	TRY(rte_tel_data_add_array_u64(cols[L_HB].c, l->heartbeat));
	TRY(rte_tel_data_add_array_u64(cols[L_HB_AGE].c, l->heartbeat_age_us));
	TRY(rte_tel_data_add_array_u64(cols[L_STALLS].c, l->stalls));
	TRY(rte_tel_data_add_array_u64(cols[L_CHANGE].c, l->last_change_age_ms));
	TRY(rte_tel_data_add_array_u64(cols[L_RX].c, l->rx_packets));
	TRY(rte_tel_data_add_array_u64(cols[L_TX].c, l->tx_packets));
	TRY(rte_tel_data_add_array_u64(cols[L_BUSY].c, l->busy_cycles));
	TRY(rte_tel_data_add_array_u64(cols[L_TOTAL].c, l->total_cycles));
	TRY(rte_tel_data_add_array_string(cols[L_PORTS].c, ports));
	return 0;
fail:
	return ret;
}

int
fwd_reply_lcores(struct rte_tel_data *d, const struct fwd_lcore_snap *s, unsigned int n)
{
	struct column cols[L_N] = {
		[L_ID] = {"lcore_id", RTE_TEL_INT_VAL, NULL},
		[L_STATE] = {"state", RTE_TEL_STRING_VAL, NULL},
		[L_CODE] = {"state_code", RTE_TEL_INT_VAL, NULL},
		[L_HB] = {"heartbeat", RTE_TEL_U64_VAL, NULL},
		[L_HB_AGE] = {"heartbeat_age_us", RTE_TEL_U64_VAL, NULL},
		[L_STALLS] = {"stalls", RTE_TEL_U64_VAL, NULL},
		[L_CHANGE] = {"last_change_age_ms", RTE_TEL_U64_VAL, NULL},
		[L_RX] = {"rx_packets", RTE_TEL_U64_VAL, NULL},
		[L_TX] = {"tx_packets", RTE_TEL_U64_VAL, NULL},
		[L_BUSY] = {"busy_cycles", RTE_TEL_U64_VAL, NULL},
		[L_TOTAL] = {"total_cycles", RTE_TEL_U64_VAL, NULL},
		[L_PORTS] = {"ports", RTE_TEL_STRING_VAL, NULL},
	};
	int ret;

	if (n > FWD_MAX_LCORES)
		return -E2BIG;
	ret = columns_alloc(cols, L_N);
	if (ret < 0)
		return ret;
	for (unsigned int i = 0; i < n; i++)
		TRY(add_lcore_row(cols, &s[i]));
	TRY(rte_tel_data_start_dict(d));
	TRY(columns_attach(d, cols, L_N));
	return 0;
fail:
	columns_free(cols, L_N);
	return ret > 0 ? -ret : ret;
}

int
fwd_reply_lcore(struct rte_tel_data *d, const struct fwd_lcore_snap *l)
{
	struct rte_tel_data *ports = NULL, *queues = NULL;
	int ret;

	ports = rte_tel_data_alloc();
	queues = rte_tel_data_alloc();
	if (ports == NULL || queues == NULL) {
		ret = -ENOMEM;
		goto fail;
	}
	TRY(rte_tel_data_start_array(ports, RTE_TEL_INT_VAL));
	TRY(rte_tel_data_start_array(queues, RTE_TEL_INT_VAL));
	/* The rx queue it polls on each of those ports: the forwarder's one, 0. */
	for (unsigned int i = 0; i < l->nb_ports && i < FWD_MAX_PORTS; i++) {
		TRY(rte_tel_data_add_array_int(ports, l->ports[i]));
		TRY(rte_tel_data_add_array_int(queues, 0));
	}
	TRY(rte_tel_data_start_dict(d));
	TRY(rte_tel_data_add_dict_int(d, "lcore_id", (int)l->lcore_id));
	TRY(rte_tel_data_add_dict_string(d, "state", fwd_lcore_state_name(l->state)));
	TRY(rte_tel_data_add_dict_int(d, "state_code", (int)l->state));
	TRY(rte_tel_data_add_dict_u64(d, "heartbeat", l->heartbeat));
	TRY(rte_tel_data_add_dict_u64(d, "heartbeat_age_us", l->heartbeat_age_us));
	TRY(rte_tel_data_add_dict_u64(d, "stalls", l->stalls));
	TRY(rte_tel_data_add_dict_u64(d, "last_change_age_ms", l->last_change_age_ms));
	TRY(rte_tel_data_add_dict_u64(d, "rx_packets", l->rx_packets));
	TRY(rte_tel_data_add_dict_u64(d, "tx_packets", l->tx_packets));
	TRY(rte_tel_data_add_dict_u64(d, "tx_dropped", l->tx_dropped));
	TRY(rte_tel_data_add_dict_u64(d, "busy_cycles", l->busy_cycles));
	TRY(rte_tel_data_add_dict_u64(d, "total_cycles", l->total_cycles));
	/* If rx_queues fails, ports is attached but will not be rendered: fail frees both. */
	TRY(rte_tel_data_add_dict_container(d, "ports", ports, 0));
	TRY(rte_tel_data_add_dict_container(d, "rx_queues", queues, 0));
	return 0;
fail:
	rte_tel_data_free(ports);
	rte_tel_data_free(queues);
	return ret > 0 ? -ret : ret;
}

int
fwd_reply_ports(struct rte_tel_data *d, const struct fwd_port_snap *s, unsigned int n)
{
	enum { C_ID, C_STATUS, C_SPEED, C_DUPLEX, C_CHANGES, C_CHANGE_AGE, C_N };
	struct column cols[C_N] = {
		[C_ID] = {"port_id", RTE_TEL_INT_VAL, NULL},
		[C_STATUS] = {"link_status", RTE_TEL_STRING_VAL, NULL},
		[C_SPEED] = {"link_speed", RTE_TEL_U64_VAL, NULL},
		[C_DUPLEX] = {"link_duplex", RTE_TEL_STRING_VAL, NULL},
		[C_CHANGES] = {"link_changes", RTE_TEL_U64_VAL, NULL},
		[C_CHANGE_AGE] = {"last_change_age_ms", RTE_TEL_U64_VAL, NULL},
	};
	int ret;

	if (n > FWD_MAX_PORTS)
		return -E2BIG;
	ret = columns_alloc(cols, C_N);
	if (ret < 0)
		return ret;
	for (unsigned int i = 0; i < n; i++) {
		const struct fwd_port_snap *p = &s[i];

		TRY(rte_tel_data_add_array_int(cols[C_ID].c, p->port_id));
		TRY(rte_tel_data_add_array_string(cols[C_STATUS].c, fwd_link_status_name(p->link)));
		TRY(rte_tel_data_add_array_u64(cols[C_SPEED].c, fwd_link_speed(p->link)));
		TRY(rte_tel_data_add_array_string(cols[C_DUPLEX].c, fwd_link_duplex_name(p->link)));
		TRY(rte_tel_data_add_array_u64(cols[C_CHANGES].c, p->link_changes));
		TRY(rte_tel_data_add_array_u64(cols[C_CHANGE_AGE].c, p->last_change_age_ms));
	}
	TRY(rte_tel_data_start_dict(d));
	TRY(columns_attach(d, cols, C_N));
	return 0;
fail:
	columns_free(cols, C_N);
	return ret > 0 ? -ret : ret;
}

int
fwd_reply_port(struct rte_tel_data *d, const struct fwd_port_snap *p)
{
	struct rte_tel_data *queues = rte_tel_data_alloc();
	int ret;

	if (queues == NULL)
		return -ENOMEM;
	/* Entry q: the lcore that polls rx queue q. The forwarder has one rx queue a port. */
	TRY(rte_tel_data_start_array(queues, RTE_TEL_INT_VAL));
	TRY(rte_tel_data_add_array_int(queues, (int)p->lcore_id));
	TRY(rte_tel_data_start_dict(d));
	TRY(rte_tel_data_add_dict_int(d, "port_id", p->port_id));
	TRY(rte_tel_data_add_dict_string(d, "name", p->name));
	TRY(rte_tel_data_add_dict_string(d, "link_status", fwd_link_status_name(p->link)));
	TRY(rte_tel_data_add_dict_u64(d, "link_speed", fwd_link_speed(p->link)));
	TRY(rte_tel_data_add_dict_string(d, "link_duplex", fwd_link_duplex_name(p->link)));
	TRY(rte_tel_data_add_dict_u64(d, "link_changes", p->link_changes));
	TRY(rte_tel_data_add_dict_u64(d, "last_change_age_ms", p->last_change_age_ms));
	TRY(rte_tel_data_add_dict_u64(d, "rx_packets", p->rx_packets));
	TRY(rte_tel_data_add_dict_u64(d, "tx_packets", p->tx_packets));
	TRY(rte_tel_data_add_dict_u64(d, "tx_dropped", p->tx_dropped));
	TRY(rte_tel_data_add_dict_int(d, "lcore_id", (int)p->lcore_id));
	TRY(rte_tel_data_add_dict_int(d, "peer_port", p->peer_port));
	TRY(rte_tel_data_add_dict_container(d, "rx_queue_lcores", queues, 0));
	return 0;
fail:
	rte_tel_data_free(queues);
	return ret > 0 ? -ret : ret;
}

int
fwd_reply_info(struct rte_tel_data *d, const struct fwd_info_snap *s)
{
	struct rte_tel_data *ports = NULL, *lcores = NULL;
	int ret;

	ports = rte_tel_data_alloc();
	lcores = rte_tel_data_alloc();
	if (ports == NULL || lcores == NULL) {
		ret = -ENOMEM;
		goto fail;
	}
	TRY(rte_tel_data_start_array(ports, RTE_TEL_INT_VAL));
	TRY(rte_tel_data_start_array(lcores, RTE_TEL_INT_VAL));
	for (unsigned int i = 0; i < s->nb_ports && i < FWD_MAX_PORTS; i++)
		TRY(rte_tel_data_add_array_int(ports, s->ports[i]));
	for (unsigned int i = 0; i < s->nb_lcores && i < FWD_MAX_LCORES; i++)
		TRY(rte_tel_data_add_array_int(lcores, (int)s->lcores[i]));
	TRY(rte_tel_data_start_dict(d));
	TRY(rte_tel_data_add_dict_string(d, "app", s->app));
	TRY(rte_tel_data_add_dict_string(d, "version", s->version));
	TRY(rte_tel_data_add_dict_int(d, "pid", s->pid));
	TRY(rte_tel_data_add_dict_u64(d, "uptime_ms", s->uptime_ms));
	TRY(rte_tel_data_add_dict_string(d, "mac_mode", s->mac_mode));
	TRY(rte_tel_data_add_dict_int(d, "burst", (int)s->burst));
	TRY(rte_tel_data_add_dict_int(d, "heartbeat_ms", (int)s->heartbeat_ms));
	TRY(rte_tel_data_add_dict_int(d, "stall_ms", (int)s->stall_ms));
	TRY(rte_tel_data_add_dict_int(d, "link_poll_ms", (int)s->link_poll_ms));
	TRY(rte_tel_data_add_dict_u64(d, "link_check_age_ms", s->link_check_age_ms));
	TRY(rte_tel_data_add_dict_int(d, "idle_sleep_us", (int)s->idle_sleep_us));
	TRY(rte_tel_data_add_dict_int(d, "stats_period_s", (int)s->stats_period_s));
	TRY(rte_tel_data_add_dict_int(d, "main_lcore", (int)s->main_lcore));
	/* If lcores fails, ports is attached but will not be rendered: fail frees both. */
	TRY(rte_tel_data_add_dict_container(d, "ports", ports, 0));
	TRY(rte_tel_data_add_dict_container(d, "lcores", lcores, 0));
	return 0;
fail:
	rte_tel_data_free(ports);
	rte_tel_data_free(lcores);
	return ret > 0 ? -ret : ret;
}

/* Characters of v in decimal. */
static size_t
u64_digits(uint64_t v)
{
	size_t n = 1;

	while (v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

/*
 * What a metrics reply may use: the 16 KiB DPDK sends, less the envelope
 * {"<command up to 56 chars>":...} and room for "port_id" and "truncated".
 */
#define METRICS_BUDGET (FWD_TEL_MAX_REPLY - 128)

int
fwd_reply_metrics(
	struct rte_tel_data *d, int port_id, const struct fwd_metric_snap *m, unsigned int n)
{
	/* {"port_id":-1 plus the closing brace */
	size_t used = sizeof("{\"port_id\":-1}") - 1;
	/* Stay under the 256-entry dict limit with port_id and a possible truncated flag. */
	unsigned int room = RTE_TEL_MAX_DICT_ENTRIES - 3;
	int ret;

	TRY(rte_tel_data_start_dict(d));
	TRY(rte_tel_data_add_dict_int(d, "port_id", port_id));
	for (unsigned int i = 0; i < n; i++) {
		size_t entry;

		if (!fwd_tel_key_valid(m[i].name) || strcmp(m[i].name, "port_id") == 0 ||
			strcmp(m[i].name, "truncated") == 0)
			continue;
		/* ,"name":value */
		entry = strlen(m[i].name) + 4 + u64_digits(m[i].value);
		if (room == 0 || used + entry > METRICS_BUDGET) {
			TRY(rte_tel_data_add_dict_int(d, "truncated", 1));
			break;
		}
		TRY(rte_tel_data_add_dict_u64(d, m[i].name, m[i].value));
		used += entry;
		room--;
	}
	return 0;
fail:
	return ret > 0 ? -ret : ret;
}
