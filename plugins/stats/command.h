/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdktel_stats: the values of any command a user names (<Command "/path"> blocks) and the
 * extended counters that are levels, not counters (XStatsGauge). docs/dpdktel_stats.md.
 */
#ifndef STATS_COMMAND_H
#define STATS_COMMAND_H

#include "common/dtp.h"

/** How a value whose key matches a rule is dispatched. */
struct stats_cmd_rule {
	char *pattern; /* shell pattern on the value's key */
	bool derive; /* DERIVE, else GAUGE (for Type: the type's data source, found in init) */
	char type[DATA_MAX_NAME_LEN];
	bool typed; /* from a Type line: derive is set by stats_commands_check_types() */
};

/** One <Command> block. */
struct stats_cmd {
	char request[1024]; /* "/path" or "/path,params", as sent */
	size_t cmd_len; /* of "/path" in request */
	char name[64]; /* the first part of each value's type instance */
	struct stats_cmd_rule *rules; /* in the order written: the first that matches wins */
	size_t nrules;
	struct dtp_globs include, exclude;
};

/** The <Command> blocks of the <Plugin> block or of one <Instance> block. */
struct stats_cmds {
	size_t n;
	struct stats_cmd *v;
};

/** The parse() and free() of the "Command" row of the option table (DTP_OPT_CUSTOM). */
int stats_commands_parse(
	struct dtp_conf *c, const oconfig_item_t *ci, const char *where, void *field);
void stats_commands_free(void *field);

/**
 * In init, once the types are loaded: every Type of every <Command> block names a type
 * with one GAUGE or DERIVE data source (which then decides how its values go out). Errors
 * are logged and counted in c->errors; returns 0 or -1. @offset: of the struct stats_cmds in
 * the options struct.
 */
int stats_commands_check_types(struct dtp_conf *c, size_t offset);

/** What a <Command> remembers of its replies to one application process. */
struct stats_cmd_state {
	uint64_t generation; /* of the process the fields below are about */
	bool have_shape;
	uint64_t shape; /* dtel_numbers.shape of the last complete reply */
	unsigned int logged; /* problems logged for this process, a bit each */
};

/**
 * Ask each command through @q (the plugin's query function, @ctx its argument) and
 * dispatch the numbers of its reply with the identifiers of @id. *state is the instance's,
 * made on the first call (a zeroed pointer to start; free it with free()). Problems are
 * counted in @t's health counters and logged once per command and application process.
 */
void stats_commands_read(const struct stats_cmds *cmds, struct stats_cmd_state **state,
	struct dtp_target *t, dtp_query_fn q, void *ctx, const struct dtp_id *id);

/**
 * The default of XStatsGauge: the extended counters of DPDK's drivers that are levels (a
 * value that goes down as well as up), not counters. docs/dpdktel_stats.md names the driver
 * source of each.
 */
#define STATS_XSTATS_GAUGE_DEFAULT                              \
	{                                                       \
		.n = 7,                                         \
		.v = {(char *)"conntrack_allowance_available",  \
			(char *)"ena_srd_mode",                 \
			(char *)"ena_srd_resource_utilization", \
			(char *)"tx_pp_jitter",                 \
			(char *)"tx_pp_wander",                 \
			(char *)"tx_pp_sync_lost",              \
			(char *)"flm_count_current",            \
		}                                               \
	}

/** Whether the extended counter @name is dispatched as a GAUGE (type xstat_gauge). */
bool xstat_is_gauge(const struct dtp_globs *gauges, const char *name);

#endif
