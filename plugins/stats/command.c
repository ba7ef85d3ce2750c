/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdktel_stats: <Command "/path"> blocks and XStatsGauge (docs/dpdktel_stats.md, "Any
 * command"; docs/metrics.md). A command's reply goes through dtel_parse_numbers(), which
 * names every number by where it sits; each number becomes one value of the instance,
 * type instance "<name>.<key>", GAUGE unless a rule of the block says otherwise.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "command.h"

#define PLUGIN "dpdktel_stats"
#define LOG(level, ...) DTP_LOG(level, PLUGIN, __VA_ARGS__)

/* Commands this long or longer are never looked up by DPDK (MAX_CMD_LEN, 56, in
 * lib/telemetry/telemetry.c); requests are read into a 1024-byte buffer there. */
#define CMD_MAX 56

/* Configuration -------------------------------------------------------------------------- */

static bool
one_string(const oconfig_item_t *ci)
{
	return ci->values_num == 1 && ci->values[0].type == OCONFIG_TYPE_STRING;
}

static bool
valid_path(const char *s)
{
	if (s[0] != '/' || strlen(s) >= CMD_MAX)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
			    (*s >= '0' && *s <= '9') || *s == '_' || *s == '/'))
			return false;
	return true;
}

static bool
valid_name(const char *s)
{
	if (s[0] == '\0')
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
			    (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

/* "/eal/heap_info" with params "0" gives "eal_heap_info_0": every character other than a
 * letter or a digit becomes '_'. */
static void
default_name(const struct stats_cmd *cmd, char *buf, size_t size)
{
	size_t n = 0;

	for (const char *p = cmd->request + 1; *p && n + 1 < size; p++) {
		buf[n] = '_';
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			(*p >= '0' && *p <= '9'))
			buf[n] = *p;
		n++;
	}
	buf[n] = '\0';
}

static int
add_rule(struct stats_cmd *cmd, const char *pattern, bool derive, const char *type, bool typed)
{
	struct stats_cmd_rule *v = realloc(cmd->rules, (cmd->nrules + 1) * sizeof(*v));

	if (v == NULL)
		return -ENOMEM;
	cmd->rules = v;
	v = &cmd->rules[cmd->nrules];
	memset(v, 0, sizeof(*v));
	v->pattern = strdup(pattern);
	if (v->pattern == NULL)
		return -ENOMEM;
	v->derive = derive;
	v->typed = typed;
	snprintf(v->type, sizeof(v->type), "%s", type);
	cmd->nrules++;
	return 0;
}

static bool
all_strings(const oconfig_item_t *ci, int min, int max)
{
	if (ci->values_num < min || (max > 0 && ci->values_num > max))
		return false;
	for (int i = 0; i < ci->values_num; i++)
		if (ci->values[i].type != OCONFIG_TYPE_STRING ||
			ci->values[i].value.string[0] == '\0')
			return false;
	return true;
}

static bool
valid_type_name(const char *s)
{
	return s[0] != '\0' && strlen(s) < DATA_MAX_NAME_LEN && valid_name(s);
}

static int
add_globs(struct dtp_globs *g, const oconfig_item_t *ci)
{
	if (g->n + (unsigned int)ci->values_num > DTP_GLOBS_MAX)
		return -ERANGE;
	for (int i = 0; i < ci->values_num && g->n < DTP_GLOBS_MAX; i++) {
		g->v[g->n] = strdup(ci->values[i].value.string);
		if (g->v[g->n] == NULL)
			return -ENOMEM;
		g->n++;
	}
	return 0;
}

/* Params "0" (or Params 0): what follows the ',' of the request. */
static void
cmd_params(struct dtp_conf *c, const char *where, struct stats_cmd *cmd, const oconfig_item_t *o)
{
	char vals[256], p[1024] = "";
	size_t n;

	if (o->values_num == 1 && o->values[0].type == OCONFIG_TYPE_NUMBER &&
		o->values[0].value.number >= 0 &&
		o->values[0].value.number == (double)(long long)o->values[0].value.number)
		snprintf(p, sizeof(p), "%lld", (long long)o->values[0].value.number);
	else if (one_string(o) && o->values[0].value.string[0] != '\0')
		snprintf(p, sizeof(p), "%s", o->values[0].value.string);
	else
		p[0] = '\0';
	n = strlen(p);
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)p[i] < 0x20 || p[i] == 0x7f)
			p[0] = '\0';
	if (p[0] == '\0' || cmd->cmd_len + 1 + n >= sizeof(cmd->request)) {
		dtp_conf_error(c, where,
			"option 'Params' has the invalid value %s: expected one string (or a "
			"whole number) of printable characters, what follows the ',' of the "
			"request, such as \"0\"; the whole request under 1024 bytes",
			dtp_conf_describe(o, vals, sizeof(vals)));
		return;
	}
	snprintf(cmd->request + cmd->cmd_len, sizeof(cmd->request) - cmd->cmd_len, ",%s", p);
}

/* Gauge, Derive, Include and Exclude take one or more patterns: true, or say so. */
static bool
patterns_ok(struct dtp_conf *c, const char *where, const oconfig_item_t *o)
{
	char vals[256];

	if (all_strings(o, 1, 0))
		return true;
	dtp_conf_error(c, where,
		"option '%s' has the invalid value %s: expected one or more shell patterns such "
		"as \"rx_*\", matched against each value's key",
		o->key, dtp_conf_describe(o, vals, sizeof(vals)));
	return false;
}

/* One line of a <Command> block. */
static void
cmd_option(struct dtp_conf *c, const char *where, struct stats_cmd *cmd, const oconfig_item_t *o)
{
	char vals[256];
	int r = 0;

	if (strcasecmp(o->key, "Params") == 0) {
		cmd_params(c, where, cmd, o);
		return;
	}
	if (strcasecmp(o->key, "Name") == 0) {
		if (!one_string(o) || !valid_name(o->values[0].value.string) ||
			strlen(o->values[0].value.string) >= sizeof(cmd->name))
			dtp_conf_error(c, where,
				"option 'Name' has the invalid value %s: expected one string of "
				"letters, digits and '_', at most %zu characters",
				dtp_conf_describe(o, vals, sizeof(vals)), sizeof(cmd->name) - 1);
		else
			snprintf(cmd->name, sizeof(cmd->name), "%s", o->values[0].value.string);
		return;
	}
	if (strcasecmp(o->key, "Gauge") == 0 || strcasecmp(o->key, "Derive") == 0) {
		bool derive = strcasecmp(o->key, "Derive") == 0;

		if (!patterns_ok(c, where, o))
			return;
		for (int i = 0; i < o->values_num && r == 0; i++)
			r = add_rule(cmd, o->values[i].value.string, derive,
				derive ? "derive" : "gauge", false);
	} else if (strcasecmp(o->key, "Type") == 0) {
		if (!all_strings(o, 2, 2) || !valid_type_name(o->values[1].value.string)) {
			dtp_conf_error(c, where,
				"option 'Type' has the invalid value %s: expected a shell pattern "
				"and a collectd type with one GAUGE or DERIVE data source, such as "
				"Type \"*_bytes\" \"bytes\"",
				dtp_conf_describe(o, vals, sizeof(vals)));
			return;
		}
		r = add_rule(
			cmd, o->values[0].value.string, false, o->values[1].value.string, true);
	} else if (strcasecmp(o->key, "Include") == 0 || strcasecmp(o->key, "Exclude") == 0) {
		if (!patterns_ok(c, where, o))
			return;
		r = add_globs(
			strcasecmp(o->key, "Include") == 0 ? &cmd->include : &cmd->exclude, o);
		if (r == -ERANGE) {
			dtp_conf_error(c, where, "option '%s': more than %d patterns", o->key,
				DTP_GLOBS_MAX);
			return;
		}
	} else {
		dtp_conf_error(c, where,
			"unknown option '%s' in a <Command> block: expected Params, Name, Gauge, "
			"Derive, Type, Include or Exclude",
			o->key);
		return;
	}
	if (r == -ENOMEM)
		dtp_conf_error(c, where, "out of memory");
}

static void
free_cmd(struct stats_cmd *cmd)
{
	for (size_t i = 0; i < cmd->nrules; i++)
		free(cmd->rules[i].pattern);
	free(cmd->rules);
	for (unsigned int i = 0; i < cmd->include.n; i++)
		free(cmd->include.v[i]);
	for (unsigned int i = 0; i < cmd->exclude.n; i++)
		free(cmd->exclude.v[i]);
	memset(cmd, 0, sizeof(*cmd));
}

int
stats_commands_parse(struct dtp_conf *c, const oconfig_item_t *ci, const char *where, void *field)
{
	struct stats_cmds *cmds = field;
	struct stats_cmd *cmd, *v;
	char vals[256], w[DTP_NAME_MAX + 128];
	int errors = c->errors;

	if (!one_string(ci) || !valid_path(ci->values[0].value.string)) {
		dtp_conf_error(c, where,
			"<Command> has the invalid command %s: expected one string such as "
			"\"/fwd/lcores\": '/' then letters, digits, '_' and '/', under %d "
			"characters (parameters go into a Params line)",
			dtp_conf_describe(ci, vals, sizeof(vals)), CMD_MAX);
		return -1;
	}
	v = realloc(cmds->v, (cmds->n + 1) * sizeof(*v));
	if (v == NULL) {
		dtp_conf_error(c, where, "out of memory");
		return -1;
	}
	cmds->v = v;
	/* Parsed in place, and listed (n) only when it is valid. */
	cmd = &v[cmds->n];
	memset(cmd, 0, sizeof(*cmd));
	snprintf(cmd->request, sizeof(cmd->request), "%s", ci->values[0].value.string);
	cmd->cmd_len = strlen(cmd->request);
	/* the path only, so far: under CMD_MAX (valid_path) */
	snprintf(w, sizeof(w), "%s<Command \"%.*s\">: ", where, CMD_MAX, cmd->request);
	for (int i = 0; i < ci->children_num; i++)
		cmd_option(c, w, cmd, &ci->children[i]);
	if (cmd->name[0] == '\0')
		default_name(cmd, cmd->name, sizeof(cmd->name));
	for (size_t i = 0; i < cmds->n; i++)
		if (strcmp(cmds->v[i].name, cmd->name) == 0)
			dtp_conf_error(c, w,
				"its values would be named \"%s\" as those of <Command \"%s\"> "
				"before it: expected a Name of its own",
				cmd->name, cmds->v[i].request);
	if (c->errors != errors) {
		free_cmd(cmd);
		return -1;
	}
	cmds->n++;
	return 0;
}

void
stats_commands_free(void *field)
{
	struct stats_cmds *cmds = field;

	for (size_t i = 0; i < cmds->n; i++)
		free_cmd(&cmds->v[i]);
	free(cmds->v);
	memset(cmds, 0, sizeof(*cmds));
}

static void
check_types(struct dtp_conf *c, const char *where, struct stats_cmds *cmds)
{
	for (size_t i = 0; i < cmds->n; i++) {
		struct stats_cmd *cmd = &cmds->v[i];

		for (size_t k = 0; k < cmd->nrules; k++) {
			struct stats_cmd_rule *rule = &cmd->rules[k];
			const data_set_t *ds = plugin_get_ds(rule->type);

			if (ds != NULL && ds->ds_num == 1 &&
				(ds->ds[0].type == DS_TYPE_GAUGE ||
					ds->ds[0].type == DS_TYPE_DERIVE)) {
				if (rule->typed)
					rule->derive = ds->ds[0].type == DS_TYPE_DERIVE;
				continue;
			}
			dtp_conf_error(c, where,
				"<Command \"%s\">: type \"%s\" of pattern \"%s\" %s: expected a "
				"type of collectd's TypesDB files with one GAUGE or DERIVE data "
				"source (such as gauge, derive, bytes, packets)",
				cmd->request, rule->type, rule->pattern,
				ds == NULL
					? "is not in collectd's types (TypesDB)"
					: "does not have exactly one GAUGE or DERIVE data source");
		}
	}
}

int
stats_commands_check_types(struct dtp_conf *c, size_t offset)
{
	char where[DTP_NAME_MAX + 32];
	int errors = c->errors;

	const struct stats_cmds *global = (const struct stats_cmds *)((char *)c->global + offset);

	check_types(c, "", (struct stats_cmds *)((char *)c->global + offset));
	for (size_t i = 0; i < c->ninst; i++) {
		struct stats_cmds *own = (struct stats_cmds *)((char *)c->inst[i].opts + offset);

		if (own->v == global->v)
			continue; /* the <Plugin> block's, checked above */
		snprintf(where, sizeof(where), "<Instance \"%s\">: ", c->inst[i].name);
		check_types(c, where, own);
	}
	return c->errors == errors ? 0 : -1;
}

/* Reading ------------------------------------------------------------------------------- */

/* Problems logged once per command and application process. */
enum {
	LOGGED_NULL = 1u << 0,
	LOGGED_BAD = 1u << 1,
	LOGGED_CUT = 1u << 2,
	LOGGED_SHAPE = 1u << 3,
	LOGGED_SKIPPED = 1u << 4,
	LOGGED_NOT_COUNTER = 1u << 5,
	LOGGED_CLASH = 1u << 6,
};

/* A complaint about a command's reply, logged the first time for this process only. */
__attribute__((format(printf, 5, 6))) static void
note(const struct dtp_target *t, struct stats_cmd_state *st, unsigned int what,
	const struct stats_cmd *cmd, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (st->logged & what)
		return;
	st->logged |= what;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	LOG(LOG_WARNING, "instance '%s': %s %s (logged once per application process)", t->name,
		cmd->request, msg);
}

static uint32_t
fnv1a32(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 16777619u;
	}
	return h;
}

/*
 * The type instance "<name>.<key>" ("<name>" for a key ""): characters other than letters,
 * digits, '_', '.', ':' and '-' become '_' (a '/' would split the identifier). One that
 * does not fit DATA_MAX_NAME_LEN keeps its first DATA_MAX_NAME_LEN - 10 characters, then
 * '_' and 8 hex digits of a hash of the whole name, so it stays distinct and stable.
 */
static void
type_instance(const char *name, const char *key, char *buf, size_t size)
{
	char full[DATA_MAX_NAME_LEN + DTEL_KEY_MAX + 2];
	size_t n;

	snprintf(full, sizeof(full), "%s%s%s", name, key[0] ? "." : "", key);
	for (char *p = full; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			    (*p >= '0' && *p <= '9') || *p == '_' || *p == '.' || *p == ':' ||
			    *p == '-'))
			*p = '_';
	n = strlen(full);
	if (n < size) {
		memcpy(buf, full, n + 1);
		return;
	}
	snprintf(buf, size, "%.*s_%08x", (int)(size - 10), full, fnv1a32(full));
}

static const struct stats_cmd_rule *
rule_of(const struct stats_cmd *cmd, const char *key)
{
	for (size_t i = 0; i < cmd->nrules; i++)
		if (fnmatch(cmd->rules[i].pattern, key, 0) == 0)
			return &cmd->rules[i];
	return NULL;
}

/* One number as it goes out: its type and type instance (its identifier within the read). */
struct named {
	const struct dtel_number *e;
	const struct stats_cmd_rule *rule;
	char ti[DATA_MAX_NAME_LEN];
	size_t order; /* its place in the reply */
	bool dropped; /* another number of the reply has the same identifier */
};

static const char *
type_of(const struct named *v)
{
	return v->rule != NULL ? v->rule->type : "gauge";
}

static int
by_identifier(const void *a, const void *b)
{
	const struct named *x = a, *y = b;
	int c = strcmp(type_of(x), type_of(y));

	if (c == 0)
		c = strcmp(x->ti, y->ti);
	return c != 0 ? c : x->order < y->order ? -1 : x->order > y->order;
}

static int
by_order(const void *a, const void *b)
{
	const struct named *x = a, *y = b;

	return x->order < y->order ? -1 : x->order > y->order;
}

/*
 * Keys that become one identifier once flattened and sanitized ({"a.b":1,"a":{"b":2}} gives
 * "a.b" twice; "a b" and "a_b" both give "a_b"): the first in the reply goes out, the others
 * are dropped (collectd would refuse a second value of an identifier with the same time, and
 * the series would take turns). @v is left in reply order. Returns how many were dropped;
 * the first clash into @clash.
 */
static size_t
drop_clashes(struct named *v, size_t n, char *clash, size_t size)
{
	size_t dropped = 0;

	qsort(v, n, sizeof(*v), by_identifier);
	for (size_t i = 1; i < n; i++) {
		if (strcmp(type_of(&v[i]), type_of(&v[i - 1])) != 0 ||
			strcmp(v[i].ti, v[i - 1].ti) != 0)
			continue;
		v[i].dropped = true;
		if (dropped++ == 0)
			snprintf(clash, size, "'%s' and '%s' are both %s", v[i - 1].e->key,
				v[i].e->key, v[i].ti);
	}
	qsort(v, n, sizeof(*v), by_order);
	return dropped;
}

/* One number: 0, or -ERANGE when a Derive rule meets something that is not a counter. */
static int
dispatch_number(const struct dtp_id *id, const struct named *v)
{
	const struct dtel_number *e = v->e;
	const struct stats_cmd_rule *rule = v->rule;
	const char *ti = v->ti;
	double d;

	if (rule != NULL && rule->derive) {
		if (e->type != DTEL_VALUE_U64)
			return -ERANGE;
		return dtp_derive(id, rule->type, ti, &e->v.u64, 1);
	}
	d = e->type == DTEL_VALUE_U64       ? (double)e->v.u64
		: e->type == DTEL_VALUE_I64 ? (double)e->v.i64
					    : e->v.d;
	dtp_gauge(id, rule != NULL ? rule->type : "gauge", ti, &d, 1);
	return 0;
}

/* Flags that say the application may have cut the reply: counted (near-limit ones are by
 * dtp_query already) and logged once. */
static void
check_cut(struct dtp_target *t, struct stats_cmd_state *st, const struct stats_cmd *cmd,
	unsigned int flags)
{
	if (!(flags & DTEL_F_POSSIBLY_CUT))
		return;
	if (!(flags & DTEL_F_NEAR_LIMIT))
		t->truncated++;
	note(t, st, LOGGED_CUT, cmd,
		"may have been cut by the application (%s): values past the cut are missing "
		"(counted in telemetry_requests/truncated)",
		flags & DTEL_F_NEAR_LIMIT ? "within 512 bytes of its size limit"
			: flags & DTEL_F_DICT_FULL
			? "a dict of 256 entries, the most DPDK sends"
			: "an array of 512 entries, the most DPDK sends");
}

/* A reply whose keys differ from the last complete one's: counted once per change. */
static void
check_shape(struct dtp_target *t, struct stats_cmd_state *st, const struct stats_cmd *cmd,
	const struct dtel_numbers *nums)
{
	if (nums->flags & DTEL_F_POSSIBLY_CUT)
		return; /* a cut reply is not a new shape */
	if (st->have_shape && st->shape != nums->shape) {
		t->invalid++;
		note(t, st, LOGGED_SHAPE, cmd,
			"answers with other keys than before (now %zu numbers): the series of "
			"keys that went away stop (counted in telemetry_requests/invalid)",
			nums->n);
	}
	st->have_shape = true;
	st->shape = nums->shape;
}

/* The numbers of a reply that pass Include and Exclude, each under one identifier (see
 * drop_clashes()). *ret_not_counter: how many a Derive rule refused. */
static void
dispatch_numbers(const struct stats_cmd *cmd, struct stats_cmd_state *st, struct dtp_target *t,
	const struct dtp_id *id, const struct dtel_numbers *nums, size_t *ret_not_counter)
{
	struct named *v = calloc(nums->n + 1, sizeof(*v));
	char clash[2 * DTEL_KEY_MAX + DATA_MAX_NAME_LEN + 32];
	size_t n = 0, dropped;

	*ret_not_counter = 0;
	if (v == NULL)
		return;
	for (size_t i = 0; i < nums->n; i++) {
		if (!dtp_globs_pass(&cmd->include, &cmd->exclude, nums->v[i].key))
			continue;
		v[n].e = &nums->v[i];
		v[n].rule = rule_of(cmd, nums->v[i].key);
		v[n].order = n;
		type_instance(cmd->name, nums->v[i].key, v[n].ti, sizeof(v[n].ti));
		n++;
	}
	dropped = drop_clashes(v, n, clash, sizeof(clash));
	if (dropped > 0) {
		t->invalid += dropped;
		note(t, st, LOGGED_CLASH, cmd,
			"has %zu values whose names clash once flattened (%s): only the first of "
			"each name in the reply is dispatched (counted in "
			"telemetry_requests/invalid)",
			dropped, clash);
	}
	for (size_t i = 0; i < n; i++)
		if (!v[i].dropped && dispatch_number(id, &v[i]) == -ERANGE)
			(*ret_not_counter)++;
	free(v);
}

static void
read_one(const struct stats_cmd *cmd, struct stats_cmd_state *st, struct dtp_target *t,
	dtp_query_fn q, void *ctx, const struct dtp_id *id)
{
	struct dtel_numbers nums;
	struct dtel_reply r;
	char cmdname[CMD_MAX];
	size_t not_counter = 0;
	int ret;

	ret = q(ctx, cmd->request, &r);
	if (st->generation != t->generation) {
		memset(st, 0, sizeof(*st));
		st->generation = t->generation;
	}
	if (ret == -ENODATA)
		note(t, st, LOGGED_NULL, cmd,
			"answers null: the application does not know the command or its "
			"parameters (counted in telemetry_requests/failed)");
	if (ret < 0)
		return; /* counted by the query; a cut datagram logged there */
	snprintf(cmdname, sizeof(cmdname), "%.*s", (int)cmd->cmd_len, cmd->request);
	ret = dtel_parse_numbers(&r, cmdname, &nums);
	dtel_reply_release(&r);
	if (ret < 0) {
		t->invalid++;
		note(t, st, LOGGED_BAD, cmd,
			"sent an unusable reply (%s): no value of it is dispatched (counted in "
			"telemetry_requests/invalid)",
			ret == -ENOMEM ? "out of memory" : "malformed JSON or nesting too deep");
		return;
	}
	check_cut(t, st, cmd, nums.flags);
	check_shape(t, st, cmd, &nums);
	if (nums.nb_invalid > 0) {
		t->invalid += nums.nb_invalid;
		note(t, st, LOGGED_SKIPPED, cmd,
			"has %zu numbers that cannot be named (key over %d characters), are "
			"integers beyond 64 bits or are beyond a double's range (1e400): left out "
			"(counted in telemetry_requests/invalid)",
			nums.nb_invalid, DTEL_KEY_MAX - 1);
	}
	dispatch_numbers(cmd, st, t, id, &nums, &not_counter);
	if (not_counter > 0) {
		t->invalid += not_counter;
		note(t, st, LOGGED_NOT_COUNTER, cmd,
			"has %zu values that a Derive or DERIVE Type rule matches but that are "
			"negative, fractional or above 2^63-1: not dispatched (counted in "
			"telemetry_requests/invalid)",
			not_counter);
	}
	dtel_numbers_clear(&nums);
}

void
stats_commands_read(const struct stats_cmds *cmds, struct stats_cmd_state **state,
	struct dtp_target *t, dtp_query_fn q, void *ctx, const struct dtp_id *id)
{
	if (cmds->n == 0)
		return;
	if (*state == NULL) {
		*state = calloc(cmds->n, sizeof(**state));
		if (*state == NULL)
			return;
	}
	for (size_t i = 0; i < cmds->n; i++)
		read_one(&cmds->v[i], &(*state)[i], t, q, ctx, id);
}

/* XStatsGauge ------------------------------------------------------------------------------ */

bool
xstat_is_gauge(const struct dtp_globs *gauges, const char *name)
{
	for (unsigned int i = 0; i < gauges->n; i++)
		if (fnmatch(gauges->v[i], name, 0) == 0)
			return true;
	return false;
}
