/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dtel_floor: a collectd plugin for benchmarks only (tests/bench/stats_cost). Each read
 * dispatches `Values` GAUGE value lists (dtel_floor/gauge-v0, -v1, ...) and does nothing
 * else: no I/O, no parsing. Its CPU per value is what collectd itself costs for one value
 * list, the floor under every collector's CPU per value.
 *
 *   LoadPlugin dtel_floor
 *   <Plugin dtel_floor>
 *     Values 53
 *   </Plugin>
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectd.h"
#include "plugin.h"
#include "utils/common/common.h"

#define PLUGIN "dtel_floor"

static int nvalues = 1;

static int
floor_config(const char *key, const char *value)
{
	char *end;
	double n;

	if (strcasecmp(key, "Values") != 0) {
		plugin_log(LOG_ERR, PLUGIN " plugin: unknown option '%s'", key);
		return -1;
	}
	/* collectd hands numbers over as "%lf" text: "53.000000" */
	n = strtod(value, &end);
	if (*value == '\0' || *end != '\0' || n < 1 || n > 100000 || n != (double)(int)n) {
		plugin_log(LOG_ERR, PLUGIN " plugin: Values '%s': expected 1 to 100000", value);
		return -1;
	}
	nvalues = (int)n;
	return 0;
}

static int
floor_read(void)
{
	value_list_t vl = VALUE_LIST_INIT;
	value_t v;
	cdtime_t now = cdtime();

	vl.values = &v;
	vl.values_len = 1;
	vl.time = now;
	sstrncpy(vl.plugin, PLUGIN, sizeof(vl.plugin));
	sstrncpy(vl.type, "gauge", sizeof(vl.type));
	for (int i = 0; i < nvalues; i++) {
		v.gauge = i;
		snprintf(vl.type_instance, sizeof(vl.type_instance), "v%d", i);
		plugin_dispatch_values(&vl);
	}
	return 0;
}

static const char *keys[] = {"Values"};

__attribute__((visibility("default"))) void
module_register(void)
{
	plugin_register_config(PLUGIN, floor_config, keys, 1);
	plugin_register_read(PLUGIN, floor_read);
}
