/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdktel-fwd application options: a pure function from argv (after "--") to struct
 * fwd_config. No EAL, no getopt (its state is global and it prints its own messages).
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

#define FAULT_FORMS "stall:LCORE:AFTER_MS:FOR_MS, exit:LCORE:AFTER_MS or main-stall:AFTER_MS:FOR_MS"

struct parser {
	char *err;
	size_t errlen;
};

__attribute__((format(printf, 2, 3))) static int
fail(struct parser *p, const char *fmt, ...)
{
	va_list ap;

	if (p->err != NULL && p->errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(p->err, p->errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* A decimal number made of digits only (no sign, no spaces), at most max. */
static int
read_uint(const char *s, uint64_t max, uint64_t *ret)
{
	uint64_t v = 0;

	if (*s == '\0')
		return -EINVAL;
	for (; *s != '\0'; s++) {
		if (!isdigit((unsigned char)*s))
			return -EINVAL;
		v = v * 10 + (uint64_t)(*s - '0');
		if (v > max)
			return -ERANGE;
	}
	*ret = v;
	return 0;
}

struct uint_opt {
	const char *name;
	unsigned int min;
	unsigned int max;
	const char *what; /* "milliseconds", ... */
	const char *note; /* extra text after the range, or "" */
	size_t offset; /* of the unsigned int in struct fwd_config */
};

static const struct uint_opt uint_opts[] = {
	{"--heartbeat-ms", 1, FWD_MAX_HEARTBEAT_MS, "milliseconds", "",
		offsetof(struct fwd_config, heartbeat_ms)},
	{"--stall-ms", 1, FWD_MAX_STALL_MS, "milliseconds", "",
		offsetof(struct fwd_config, stall_ms)},
	{"--link-poll-ms", 1, FWD_MAX_LINK_POLL_MS, "milliseconds", "",
		offsetof(struct fwd_config, link_poll_ms)},
	{"--stats-period", 0, FWD_MAX_STATS_PERIOD_S, "seconds", " (0 = off)",
		offsetof(struct fwd_config, stats_period_s)},
	{"--idle-sleep-us", 0, FWD_MAX_IDLE_SLEEP_US, "microseconds", " (0 = never sleep)",
		offsetof(struct fwd_config, idle_sleep_us)},
};

static int
parse_uint_opt(struct parser *p, const struct uint_opt *o, const char *val, struct fwd_config *cfg)
{
	uint64_t v;

	if (read_uint(val, UINT32_MAX, &v) < 0 || v < o->min || v > o->max)
		return fail(p, "%s '%s': expected a whole number of %s from %u to %u%s", o->name,
			val, o->what, o->min, o->max, o->note);
	*(unsigned int *)(void *)((char *)cfg + o->offset) = (unsigned int)v;
	return 0;
}

static int
parse_portmask(struct parser *p, const char *val, struct fwd_config *cfg)
{
	const char *s = val;
	uint64_t mask = 0;
	int digits = 0;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	for (; *s != '\0'; s++, digits++) {
		int c = (unsigned char)*s;

		if (!isxdigit(c) || digits == 16)
			break;
		mask = (mask << 4) | (uint64_t)(isdigit(c) ? c - '0' : tolower(c) - 'a' + 10);
	}
	if (digits == 0 || *s != '\0')
		return fail(p,
			"-p '%s': expected a hexadecimal port mask such as 0x3 (bit N enables port "
			"N, at most 16 hex digits)",
			val);
	if (mask == 0)
		return fail(p,
			"-p '%s': the port mask enables no port (expected at least one bit "
			"set, such as 0x3)",
			val);
	cfg->portmask = mask;
	cfg->portmask_set = true;
	return 0;
}

static int
parse_mac_mode(struct parser *p, const char *val, struct fwd_config *cfg)
{
	if (strcmp(val, "rewrite") == 0)
		cfg->mac_mode = FWD_MAC_REWRITE;
	else if (strcmp(val, "swap") == 0)
		cfg->mac_mode = FWD_MAC_SWAP;
	else if (strcmp(val, "none") == 0)
		cfg->mac_mode = FWD_MAC_NONE;
	else
		return fail(p, "--mac-mode '%s': expected rewrite, swap or none", val);
	return 0;
}

static int
parse_group(struct parser *p, const char *val, struct fwd_config *cfg)
{
	size_t len = strlen(val);

	if (len == 0)
		return fail(p, "--telemetry-group '': expected a group name or numeric group id");
	if (len > FWD_GROUP_NAME_MAX)
		return fail(p,
			"--telemetry-group '%s': expected a group name of at most %d "
			"characters",
			val, FWD_GROUP_NAME_MAX);
	for (const char *s = val; *s != '\0'; s++)
		if (*s == ':' || *s == '/' || isspace((unsigned char)*s) ||
			iscntrl((unsigned char)*s))
			return fail(p,
				"--telemetry-group '%s': expected a group name or numeric group "
				"id (no ':', '/' or spaces)",
				val);
	memcpy(cfg->telemetry_group, val, len + 1);
	return 0;
}

/* Split s at ':' into at most max fields (in buf); returns the number of fields. */
static int
split_fields(const char *s, char *buf, size_t buflen, char **fields, int max)
{
	int n = 0;
	char *f;

	if (strlen(s) >= buflen)
		return -1;
	memcpy(buf, s, strlen(s) + 1);
	f = buf;
	for (;;) {
		char *colon = strchr(f, ':');

		if (n == max)
			return max + 1;
		fields[n++] = f;
		if (colon == NULL)
			return n;
		*colon = '\0';
		f = colon + 1;
	}
}

static int
parse_fault(struct parser *p, const char *val, struct fwd_config *cfg)
{
	char buf[128];
	char *f[5];
	struct fwd_fault fault = {0};
	int after = 2, dur = 3; /* fields of AFTER_MS and FOR_MS */
	uint64_t v;
	int n;

	n = split_fields(val, buf, sizeof(buf), f, 4);
	if (n < 0)
		return fail(p, "--fault '%.40s...': too long (expected %s)", val, FAULT_FORMS);
	if (strcmp(f[0], "stall") == 0) {
		fault.kind = FWD_FAULT_STALL;
		if (n != 4)
			return fail(p, "--fault '%s': expected stall:LCORE:AFTER_MS:FOR_MS", val);
	} else if (strcmp(f[0], "exit") == 0) {
		fault.kind = FWD_FAULT_EXIT;
		if (n != 3)
			return fail(p, "--fault '%s': expected exit:LCORE:AFTER_MS", val);
	} else if (strcmp(f[0], "main-stall") == 0) {
		fault.kind = FWD_FAULT_MAIN_STALL;
		if (n != 3)
			return fail(p, "--fault '%s': expected main-stall:AFTER_MS:FOR_MS", val);
		after = 1;
		dur = 2;
	} else {
		return fail(p, "--fault '%s': unknown fault '%s' (expected %s)", val, f[0],
			FAULT_FORMS);
	}
	if (fault.kind != FWD_FAULT_MAIN_STALL) {
		if (read_uint(f[1], FWD_OPT_MAX_LCORE, &v) < 0)
			return fail(p, "--fault '%s': LCORE '%s' is not an lcore id from 0 to %d",
				val, f[1], FWD_OPT_MAX_LCORE);
		fault.lcore = (unsigned int)v;
	}
	if (read_uint(f[after], FWD_MAX_FAULT_AFTER_MS, &v) < 0)
		return fail(p,
			"--fault '%s': AFTER_MS '%s' is not a number of milliseconds from 0 to %d",
			val, f[after], FWD_MAX_FAULT_AFTER_MS);
	fault.after_ms = (uint32_t)v;
	if (fault.kind != FWD_FAULT_EXIT) {
		if (read_uint(f[dur], FWD_MAX_FAULT_FOR_MS, &v) < 0 || v == 0)
			return fail(p,
				"--fault '%s': FOR_MS '%s' is not a number of milliseconds from 1 "
				"to %d",
				val, f[dur], FWD_MAX_FAULT_FOR_MS);
		fault.for_ms = (uint32_t)v;
	}
	if (cfg->nb_faults == FWD_MAX_FAULTS)
		return fail(p, "--fault '%s': too many faults (at most %d)", val, FWD_MAX_FAULTS);
	cfg->faults[cfg->nb_faults++] = fault;
	return 0;
}

/* Checks between options, once all are known. */
static int
validate(struct parser *p, const struct fwd_config *cfg)
{
	if (cfg->stall_ms <= cfg->heartbeat_ms)
		return fail(p,
			"--stall-ms %u: must be greater than --heartbeat-ms %u (stalls are found "
			"by "
			"the heartbeat check)",
			cfg->stall_ms, cfg->heartbeat_ms);
	/* A sleeping lcore must never look stalled: keep its sleep a tenth of a stall. */
	if ((uint64_t)cfg->idle_sleep_us * 10 > (uint64_t)cfg->stall_ms * 1000)
		return fail(p,
			"--idle-sleep-us %u: must be at most %u (a tenth of --stall-ms %u), so "
			"that a sleeping lcore is never taken for a stalled one",
			cfg->idle_sleep_us, cfg->stall_ms * 100, cfg->stall_ms);
	return 0;
}

void
fwd_options_defaults(struct fwd_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->mac_mode = FWD_MAC_REWRITE;
	cfg->heartbeat_ms = FWD_DEFAULT_HEARTBEAT_MS;
	cfg->stall_ms = FWD_DEFAULT_STALL_MS;
	cfg->link_poll_ms = FWD_DEFAULT_LINK_POLL_MS;
}

enum opt_id {
	OPT_PORTMASK,
	OPT_MAC_MODE,
	OPT_UINT,
	OPT_GROUP,
	OPT_FAULT,
	OPT_HELP,
};

/* Which option arg names, its value if given with '=' or glued to -p, and its uint_opt. */
static int
lookup(const char *arg, enum opt_id *id, const char **inline_val, const struct uint_opt **uo)
{
	static const struct {
		const char *name;
		enum opt_id id;
	} named[] = {
		{"--mac-mode", OPT_MAC_MODE},
		{"--telemetry-group", OPT_GROUP},
		{"--fault", OPT_FAULT},
		{"--help", OPT_HELP},
	};
	const char *eq = strchr(arg, '=');
	size_t len = eq != NULL ? (size_t)(eq - arg) : strlen(arg);

	*inline_val = NULL;
	if (strncmp(arg, "-p", 2) == 0) {
		*id = OPT_PORTMASK;
		if (arg[2] != '\0')
			*inline_val = arg + 2;
		return 0;
	}
	if (strcmp(arg, "-h") == 0) {
		*id = OPT_HELP;
		return 0;
	}
	if (strncmp(arg, "--", 2) != 0)
		return -ENOENT;
	if (eq != NULL)
		*inline_val = eq + 1;
	for (size_t i = 0; i < sizeof(uint_opts) / sizeof(uint_opts[0]); i++)
		if (strlen(uint_opts[i].name) == len && strncmp(arg, uint_opts[i].name, len) == 0) {
			*id = OPT_UINT;
			*uo = &uint_opts[i];
			return 0;
		}
	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++)
		if (strlen(named[i].name) == len && strncmp(arg, named[i].name, len) == 0) {
			*id = named[i].id;
			return 0;
		}
	return -ENOENT;
}

static const char *
expected_of(enum opt_id id, const struct uint_opt *uo, char *buf, size_t len)
{
	switch (id) {
	case OPT_PORTMASK:
		return "a hexadecimal port mask such as 0x3";
	case OPT_MAC_MODE:
		return "rewrite, swap or none";
	case OPT_GROUP:
		return "a group name or numeric group id";
	case OPT_FAULT:
		return FAULT_FORMS;
	case OPT_UINT:
		snprintf(buf, len, "a whole number of %s from %u to %u%s", uo->what, uo->min,
			uo->max, uo->note);
		return buf;
	case OPT_HELP:
		break;
	}
	return "";
}

/* The value of one option, into cfg. */
static int
parse_value(struct parser *p, enum opt_id id, const struct uint_opt *uo, const char *val,
	struct fwd_config *cfg)
{
	switch (id) {
	case OPT_PORTMASK:
		return parse_portmask(p, val, cfg);
	case OPT_MAC_MODE:
		return parse_mac_mode(p, val, cfg);
	case OPT_UINT:
		return parse_uint_opt(p, uo, val, cfg);
	case OPT_GROUP:
		return parse_group(p, val, cfg);
	case OPT_FAULT:
		return parse_fault(p, val, cfg);
	default:
		return -EINVAL;
	}
}

int
fwd_options_parse(int argc, char *const argv[], struct fwd_config *cfg, char *err, size_t errlen)
{
	struct parser p = {.err = err, .errlen = errlen};
	char expected[128];

	if (err != NULL && errlen > 0)
		err[0] = '\0';
	fwd_options_defaults(cfg);
	for (int i = 0; i < argc; i++) {
		const char *arg = argv[i];
		const struct uint_opt *uo = NULL;
		const char *val;
		enum opt_id id;
		int ret;

		if (lookup(arg, &id, &val, &uo) < 0) {
			if (arg[0] == '-')
				return fail(&p, "unknown option '%.*s' (see --help)",
					(int)strcspn(arg, "="), arg);
			return fail(&p,
				"unexpected argument '%s' (every argument after -- is an "
				"option; see --help)",
				arg);
		}
		if (id == OPT_HELP) {
			if (val != NULL)
				return fail(&p, "--help takes no value (got '%s')", val);
			cfg->help = true;
			continue;
		}
		if (val == NULL) {
			if (i + 1 >= argc)
				return fail(&p, "%.*s: missing value (expected %s)",
					(int)strcspn(arg, "="), arg,
					expected_of(id, uo, expected, sizeof(expected)));
			val = argv[++i];
		}
		ret = parse_value(&p, id, uo, val, cfg);
		if (ret < 0)
			return ret;
	}
	if (cfg->help)
		return 0;
	return validate(&p, cfg);
}

const char *
fwd_mac_mode_name(enum fwd_mac_mode mode)
{
	switch (mode) {
	case FWD_MAC_REWRITE:
		return "rewrite";
	case FWD_MAC_SWAP:
		return "swap";
	case FWD_MAC_NONE:
		return "none";
	}
	return "unknown";
}

static void
usage_intro(FILE *f, const char *prog)
{
	fprintf(f,
		"Usage: %s [EAL options] -- [options]\n"
		"\n"
		"dpdktel-fwd forwards between paired ports (0<->1, 2<->3, ...; with an odd count "
		"the\n"
		"last port sends back out of itself) and publishes link status, lcore health and\n"
		"port counters over DPDK telemetry (/fwd/... commands, docs/fwd-telemetry.md),\n"
		"rte_metrics and the legacy telemetry socket.\n"
		"\n"
		"Lcores come from EAL (-l/--lcores). The main lcore runs the health and link "
		"checks\n"
		"and never busy-polls; every worker lcore forwards. Ports are given to the worker\n"
		"lcores round-robin; a worker lcore left without a port is a start-up error, as "
		"is\n"
		"having no worker lcore (use at least two lcores, e.g. -l 0,1).\n"
		"\n",
		prog);
}

static void
usage_options(FILE *f)
{
	fprintf(f,
		"Options:\n"
		"  -p PORTMASK              hexadecimal mask of the ports to forward (default: "
		"all)\n"
		"  --mac-mode MODE          rewrite: source = MAC of the port the frame leaves "
		"by,\n"
		"                           destination 02:00:00:00:00:<that port> (as l2fwd);\n"
		"                           swap: source and destination swapped; none: untouched\n"
		"                           (default rewrite)\n"
		"  --heartbeat-ms N         lcore health check period, 1-%d (default %d)\n"
		"  --stall-ms N             an lcore without a heartbeat for N ms is STALLED,\n"
		"                           greater than --heartbeat-ms, up to %d (default %d)\n"
		"  --link-poll-ms N         link status poll period, 1-%d (default %d)\n"
		"  --stats-period S         print a counters table every S seconds, 0-%d (default "
		"0,\n"
		"                           off)\n"
		"  --idle-sleep-us N        after a run of empty polls, sleep N us between polls\n"
		"                           (heartbeats go on); at most a tenth of --stall-ms\n"
		"                           (default 0, never sleep)\n"
		"  --telemetry-group GROUP  give GROUP read/write access to the telemetry sockets\n"
		"                           and read access to the runtime dir, so that a "
		"non-root\n"
		"                           collectd in GROUP can query (adds search permission "
		"for\n"
		"                           others to the parent dir, e.g. /var/run/dpdk, if "
		"missing)\n"
		"  --fault stall:LCORE:AFTER_MS:FOR_MS\n"
		"                           fault injection: AFTER_MS after forwarding starts, "
		"lcore\n"
		"                           LCORE stops its loop and heartbeat for FOR_MS\n"
		"  --fault exit:LCORE:AFTER_MS\n"
		"                           fault injection: AFTER_MS after forwarding starts, "
		"the\n"
		"                           loop function of lcore LCORE returns (EXITED)\n"
		"  --fault main-stall:AFTER_MS:FOR_MS\n"
		"                           fault injection: AFTER_MS after forwarding starts, "
		"the\n"
		"                           main lcore stops its health and link checks for "
		"FOR_MS\n"
		"                           (forwarding and telemetry replies go on)\n"
		"                           (--fault is repeatable, up to %d times; for tests and\n"
		"                           demos only)\n"
		"  -h, --help               print this help and exit\n"
		"\n"
		"SIGINT or SIGTERM stops forwarding, prints the final counters and exits 0.\n",
		FWD_MAX_HEARTBEAT_MS, FWD_DEFAULT_HEARTBEAT_MS, FWD_MAX_STALL_MS,
		FWD_DEFAULT_STALL_MS, FWD_MAX_LINK_POLL_MS, FWD_DEFAULT_LINK_POLL_MS,
		FWD_MAX_STATS_PERIOD_S, FWD_MAX_FAULTS);
}

void
fwd_options_usage(FILE *f, const char *prog)
{
	usage_intro(f, prog);
	usage_options(f);
}
