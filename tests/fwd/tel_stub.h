/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A test-only stand-in for DPDK 22.11's rte_tel_data_* functions (lib/telemetry), so that
 * the /fwd/... reply builders can be rendered and measured without EAL.
 *
 * It keeps the limits and return values of 22.11: 256 dict entries and 512 array entries
 * (-ENOSPC), keys of [A-Za-z0-9_/] only (-EINVAL), names and string values cut at 127
 * characters (E2BIG, positive), type checks (-EINVAL). stub_render() writes the reply the
 * way the 22.11 server does: {"<cmd>":<value>} into a 16 KiB buffer, where an element that
 * does not fit is skipped silently (counted here in stub_stats.skipped), strings escaped,
 * and containers attached with keep = 0 freed after rendering.
 */
#ifndef FWD_TEL_STUB_H
#define FWD_TEL_STUB_H

#include <stddef.h>

#include <rte_telemetry.h>

#include "tel_compat.h"

struct stub_stats {
	int live; /* rte_tel_data_alloc() not yet freed */
	int failed_calls; /* rte_tel_data_* calls that returned non-zero */
	int skipped; /* elements dropped by rendering (did not fit) */
	int max_dict; /* most entries seen in one dict */
	int max_array; /* most entries seen in one array */
};

extern struct stub_stats stub_stats;

/** Reset the counters and the fault injection. */
void stub_reset(void);
/** Make the n-th rte_tel_data_alloc() from now (0 = the next) return NULL; -1 = never. */
void stub_fail_alloc_at(int n);
/** Make the n-th rte_tel_data_add_* / start_* call from now fail with -ENOSPC; -1 = never. */
void stub_fail_add_at(int n);

/** A zeroed top-level rte_tel_data, as the server hands to a callback. */
struct rte_tel_data *stub_new_top(void);
/** Free a top-level object that was never rendered (and its kept/attached containers). */
void stub_free_top(struct rte_tel_data *d);

/**
 * Render the reply of a callback that returned ret into out (at least 16384 + 1 bytes),
 * as the 22.11 server would send it, and free what the server frees. Returns its length.
 */
int stub_render(const char *cmd, int ret, struct rte_tel_data *d, char *out, size_t outlen);

#define STUB_MAX_OUTPUT 16384

#endif
