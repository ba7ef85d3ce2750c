/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Drop attribution: plugins/stats/drops.tsv applied to a port's counters (drops.h). Pure.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drops.h"

/* lib/ethdev/rte_ethdev.c, eth_dev_stats_strings: the basic counters in every xstats reply. */
const char *const drops_generic_names[DROPS_REASONS] = {
	[DROPS_RX_MISSED] = "rx_missed_errors",
	[DROPS_RX_NOMBUF] = "rx_mbuf_allocation_errors",
	[DROPS_RX_ERRORS] = "rx_errors",
	[DROPS_TX_ERRORS] = "tx_errors",
	[DROPS_TX_FULL] = NULL,
};

const char *const drops_reason_names[DROPS_REASONS] = {
	[DROPS_RX_MISSED] = "rx_missed",
	[DROPS_RX_NOMBUF] = "rx_nombuf",
	[DROPS_RX_ERRORS] = "rx_errors",
	[DROPS_TX_ERRORS] = "tx_errors",
	[DROPS_TX_FULL] = "tx_full",
};

bool
drops_name_matches(const char *pattern, const char *name)
{
	while (*pattern != '\0') {
		if (strncmp(pattern, "<N>", 3) == 0) {
			if (*name < '0' || *name > '9')
				return false;
			while (*name >= '0' && *name <= '9')
				name++;
			pattern += 3;
			continue;
		}
		if (*pattern++ != *name++)
			return false;
	}
	return *name == '\0';
}

/* lib/ethdev/rte_ethdev.c, eth_dev_rxq_stats_strings and eth_dev_txq_stats_strings: the
 * per-queue counters ethdev adds to the xstats of every driver whose queues it counts
 * (RTE_ETH_DEV_AUTOFILL_QUEUE_XSTATS: net_null, net_ring, vhost, af_packet, pcap, ...). */
static const char *const ethdev_queue_names[] = {
	"rx_q<N>_packets", "rx_q<N>_bytes", "rx_q<N>_errors", "tx_q<N>_packets", "tx_q<N>_bytes"};

/* A row's name that is ethdev's, not a driver's: the port-wide generic counters and the
 * per-queue ones (@name is a row's pattern). */
static bool
generic_name(const char *name)
{
	for (int r = 0; r < DROPS_REASONS; r++)
		if (drops_generic_names[r] != NULL && strcmp(name, drops_generic_names[r]) == 0)
			return true;
	for (size_t i = 0; i < sizeof(ethdev_queue_names) / sizeof(ethdev_queue_names[0]); i++)
		if (strcmp(name, ethdev_queue_names[i]) == 0)
			return true;
	return false;
}

/* Rows that say which driver a port is of: its own names, not ethdev's generic ones (ixgbe's
 * rx_q<N>_errors is ethdev's q_errors, which every driver with per-queue xstats has). */
static bool
names_driver(const struct drops_row *r)
{
	return (r->counts == DROPS_PART || r->counts == DROPS_EXTRA || r->counts == DROPS_ID) &&
		!generic_name(r->xstat);
}

static bool
any_matches(const char *pattern, const struct dtel_xstats *x)
{
	for (size_t i = 0; i < x->n; i++)
		if (drops_name_matches(pattern, x->v[i].name))
			return true;
	return false;
}

int
drops_driver(const struct drops_table *t, const char *driver, const struct dtel_xstats *x)
{
	int best = -1;
	size_t best_score = 0;

	if (driver != NULL && driver[0] != '\0') {
		for (size_t i = 0; i < t->n; i++)
			if (strcmp(t->rows[i].driver, driver) == 0)
				return (int)i;
		/* A DPDK driver by its name (a virtual device's) that the table does not have: the
		 * generic counters as they are, never another driver's rows by a name they share.
		 * Only a kernel driver (vfio-pci, mlx5_core: a PCI port) is told by its names. */
		if (strncmp(driver, "net_", 4) == 0)
			return -1;
	}
	for (size_t i = 0; i < t->n; i++) {
		size_t score = 0;
		bool first = true;

		/* Score each driver once, at its first row. */
		for (size_t j = 0; j < i && first; j++)
			first = strcmp(t->rows[j].driver, t->rows[i].driver) != 0;
		if (!first)
			continue;
		for (size_t j = i; j < t->n; j++)
			if (strcmp(t->rows[j].driver, t->rows[i].driver) == 0 &&
				names_driver(&t->rows[j]) && any_matches(t->rows[j].xstat, x))
				score++;
		if (score > best_score) {
			best = (int)i;
			best_score = score;
		}
	}
	return best;
}

uint64_t
drops_names_hash(const struct dtel_xstats *x)
{
	uint64_t h = 14695981039346656037ULL;

	for (size_t i = 0; i < x->n; i++)
		for (const char *c = x->v[i].name;; c++) {
			h = (h ^ (unsigned char)*c) * 1099511628211ULL;
			if (*c == '\0')
				break;
		}
	return h;
}

/* The row of the port's driver that @name is, or NULL. */
static const struct drops_row *
row_of(const struct drops_table *t, int driver, const char *name)
{
	if (driver < 0)
		return NULL;
	for (size_t i = (size_t)driver; i < t->n; i++) {
		const struct drops_row *r = &t->rows[i];

		if (strcmp(r->driver, t->rows[driver].driver) == 0 &&
			drops_name_matches(r->xstat, name))
			return r;
	}
	return NULL;
}

/* Build the mapping of @x's names; -ENOMEM leaves @p unmapped. */
static int
map(struct drops_port *p, const struct drops_table *t, const char *driver,
	const struct dtel_xstats *x, uint64_t hash)
{
	struct drops_detail *d = NULL;
	size_t nd = 0;
	int drv = drops_driver(t, driver, x);

	p->mapped = p->mapped_stats = false;
	p->left_out = p->includes_tx_full = 0;
	for (int r = 0; r < DROPS_REASONS; r++)
		p->generic_index[r] = -1;
	for (size_t i = 0; i < x->n; i++) {
		const char *name = x->v[i].name;
		const struct drops_row *row = row_of(t, drv, name);
		int generic = -1;

		for (int r = 0; r < DROPS_REASONS && generic < 0; r++)
			if (drops_generic_names[r] != NULL &&
				strcmp(name, drops_generic_names[r]) == 0)
				generic = r;
		if (generic >= 0 && p->generic_index[generic] < 0)
			p->generic_index[generic] = (long)i;
		if (row == NULL || row->reason >= DROPS_REASONS)
			continue;
		if (generic >= 0 && row->counts == DROPS_NONE)
			p->left_out |= 1u << generic;
		if (generic >= 0 && row->counts == DROPS_INCLUDES)
			p->includes_tx_full |= 1u << generic;
		if (generic >= 0 || (row->counts != DROPS_PART && row->counts != DROPS_EXTRA))
			continue;
		if (nd % 16 == 0) {
			struct drops_detail *nw = realloc(d, (nd + 16) * sizeof(*d));

			if (nw == NULL) {
				free(d);
				return -ENOMEM;
			}
			d = nw;
		}
		d[nd].index = i;
		d[nd].reason = row->reason;
		d[nd].counts = row->counts;
		d[nd].value = 0;
		snprintf(
			d[nd].ti, sizeof(d[nd].ti), "%s.%s", drops_reason_names[row->reason], name);
		nd++;
	}
	free(p->details);
	p->details = d;
	p->ndetails = nd;
	p->driver = drv;
	p->names_hash = hash;
	p->nnames = x->n;
	p->mapped = true;
	return 0;
}

int
drops_take_xstats(struct drops_port *p, const struct drops_table *t, const char *driver,
	const struct dtel_xstats *x, uint64_t h)
{
	if (!p->mapped || p->nnames != x->n || p->names_hash != h) {
		int ret = map(p, t, driver, x, h);

		if (ret < 0)
			return ret;
	}
	p->present = 0;
	for (int r = 0; r < DROPS_REASONS; r++) {
		p->generic[r] = p->generic_index[r] >= 0 ? x->v[p->generic_index[r]].value : 0;
		if (p->generic_index[r] >= 0)
			p->present |= 1u << r;
	}
	/* A reply without ethdev's counters (each one not a counter, say) gives nothing. */
	p->have_generic = p->present != 0;
	for (size_t i = 0; i < p->ndetails; i++)
		p->details[i].value = x->v[p->details[i].index].value;
	return 0;
}

void
drops_take_stats(struct drops_port *p, const struct drops_table *t, const char *driver,
	const struct dtel_port_stats *st)
{
	if (!p->mapped_stats) {
		int drv = drops_driver(t, driver, &(struct dtel_xstats){0});

		p->mapped = false;
		p->left_out = p->includes_tx_full = 0;
		for (size_t i = 0; drv >= 0 && i < t->n; i++) {
			const struct drops_row *r = &t->rows[i];

			for (int g = 0; g < DROPS_REASONS; g++) {
				if (strcmp(r->driver, t->rows[drv].driver) != 0 ||
					drops_generic_names[g] == NULL ||
					strcmp(r->xstat, drops_generic_names[g]) != 0)
					continue;
				if (r->counts == DROPS_NONE)
					p->left_out |= 1u << g;
				if (r->counts == DROPS_INCLUDES)
					p->includes_tx_full |= 1u << g;
			}
		}
		free(p->details);
		p->details = NULL;
		p->ndetails = 0;
		p->driver = drv;
		p->mapped_stats = true;
	}
	p->have_generic = true;
	p->present = (1u << DROPS_TX_FULL) - 1;
	p->generic[DROPS_RX_MISSED] = st->imissed;
	p->generic[DROPS_RX_NOMBUF] = st->rx_nombuf;
	p->generic[DROPS_RX_ERRORS] = st->ierrors;
	p->generic[DROPS_TX_ERRORS] = st->oerrors;
	p->generic[DROPS_TX_FULL] = 0;
}

void
drops_take_tx_full(struct drops_port *p, uint64_t v)
{
	p->have_tx_full = true;
	p->tx_full = v;
}

/*
 * What reason @r's generic counter has left once the driver counters that are part of it,
 * and (where the driver counts them in it too) tx_full's packets, are taken out. Held at its
 * last value when the parts run ahead of the generic counter (they are read a moment apart,
 * mlx5 reads its out_of_buffer twice), so that it never goes back; starts again from the
 * generic counter when that goes back (a stats reset).
 */
static uint64_t
reason_left(struct drops_port *p, int r)
{
	uint64_t v = p->generic[r], taken = 0;

	for (size_t i = 0; i < p->ndetails; i++)
		if (p->details[i].reason == (enum drops_reason)r &&
			p->details[i].counts == DROPS_PART)
			taken += p->details[i].value;
	if (((p->includes_tx_full >> r) & 1) && p->have_tx_full)
		taken += p->tx_full;
	v = taken < v ? v - taken : 0;
	if (p->have_last && p->generic[r] >= p->last_generic[r] && v < p->last_remainder[r])
		v = p->last_remainder[r];
	p->last_remainder[r] = v;
	p->last_generic[r] = p->generic[r];
	return v;
}

void
drops_result(struct drops_port *p, drops_emit_fn emit, void *ctx)
{
	if (!p->have_generic) {
		p->have_tx_full = false;
		return;
	}
	for (int r = 0; r < DROPS_TX_FULL; r++) {
		uint64_t v;

		if (!((p->present >> r) & 1))
			continue;
		/* Its generic counter holds tx_full's packets, and the application's count of them
		 * did not come this read (its request failed): without it the remainder would jump
		 * by all of them once, and hold there. Left out this read. */
		if (((p->includes_tx_full >> r) & 1) && p->had_tx_full && !p->have_tx_full)
			continue;
		v = reason_left(p, r);
		if (!((p->left_out >> r) & 1))
			emit(ctx, drops_reason_names[r], v);
	}
	if (p->have_tx_full)
		emit(ctx, drops_reason_names[DROPS_TX_FULL], p->tx_full);
	p->had_tx_full |= p->have_tx_full;
	for (size_t i = 0; i < p->ndetails; i++)
		emit(ctx, p->details[i].ti, p->details[i].value);
	p->have_last = true;
	p->have_generic = p->have_tx_full = false;
}

void
drops_reset(struct drops_port *p)
{
	p->have_generic = p->have_tx_full = p->have_last = p->had_tx_full = false;
	memset(p->last_remainder, 0, sizeof(p->last_remainder));
	memset(p->last_generic, 0, sizeof(p->last_generic));
	p->mapped = p->mapped_stats = false; /* another process: maybe another driver */
}

void
drops_free(struct drops_port *p)
{
	free(p->details);
	memset(p, 0, sizeof(*p));
}
