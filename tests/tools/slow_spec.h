/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The specification of tests/tools/slow_telemetry.c (the LD_PRELOAD shim that makes a real
 * DPDK application's telemetry slow): which telemetry commands' replies to delay, by how
 * much, and how the delay is spent. A pure parser, unit-tested on its own
 * (tests/tools/test_slow_spec.c).
 *
 *   DTEL_SLOW_TELEMETRY="/ethdev/xstats=15ms,/ethdev/link_status=2ms"
 *   DTEL_SLOW_TELEMETRY_MODE=busy | sleep        (default busy)
 *
 * A rule is COMMAND=DURATION: COMMAND as DPDK registers it (a '/' then letters, digits, '_'
 * and '/', shorter than DPDK's MAX_CMD_LEN of 56), DURATION a number (decimals allowed) and
 * a unit, "us", "ms" or "s", from 1 us to 10 s. Rules are separated by commas; a command
 * appears once. "busy" spins on the clock (a driver that polls its firmware with
 * rte_delay_us_block(): i40e/ice admin queue), so the delay is CPU time of the telemetry
 * thread; "sleep" blocks (mlx5 waits for the kernel's ethtool ioctl).
 */
#ifndef SLOW_SPEC_H
#define SLOW_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SLOW_MAX_RULES 16
#define SLOW_MAX_CMD 56 /* DPDK lib/telemetry/telemetry.c MAX_CMD_LEN, with its NUL */
#define SLOW_MAX_NS 10000000000ull

struct slow_rule {
	char cmd[SLOW_MAX_CMD];
	size_t len;
	uint64_t delay_ns;
};

struct slow_spec {
	struct slow_rule rules[SLOW_MAX_RULES];
	size_t n;
	bool sleep; /* false: busy-wait */
};

/**
 * Parse @rules (DTEL_SLOW_TELEMETRY) and @mode (DTEL_SLOW_TELEMETRY_MODE, NULL or "" for the
 * default) into *@out. Returns 0, or -EINVAL with one sentence in @err naming the part that
 * is wrong and what is expected; *@out is then empty (no rule), so a bad specification
 * delays nothing.
 */
int slow_spec_parse(
	const char *rules, const char *mode, struct slow_spec *out, char *err, size_t err_size);

/**
 * The rule whose command this reply answers, or NULL. A reply of DPDK's telemetry begins
 * with its command: {"/ethdev/xstats":... (output_json() and perform_command() of
 * lib/telemetry/telemetry.c build it as "{\"%.*s\":" with the command alone, without its
 * parameters).
 */
const struct slow_rule *slow_spec_match(const struct slow_spec *spec, const void *buf, size_t n);

/** One line describing @spec ("/ethdev/xstats 15 ms, /ethdev/link_status 2 ms (busy-wait)"). */
void slow_spec_describe(const struct slow_spec *spec, char *buf, size_t size);

#endif
