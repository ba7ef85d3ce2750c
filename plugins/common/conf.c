/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Configuration shared by the dpdktel plugins: a table of options per plugin, parsed into
 * the plugin's options struct, then validated. Errors name the key, the value and what is
 * expected, say so when an option is in the wrong block, and are all reported, not only the
 * first: the plugin then refuses to start in init (collectd keeps running without it).
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "dtp.h"

/* RetireAfter, in the <Plugin> block of both plugins (struct dtp_conf.retire_after). */
static const struct dtp_option retire_option = {
	.key = "RetireAfter",
	.type = DTP_OPT_SECONDS,
	.min = 1,
	.max = 86400,
	.expect = "seconds from 1 to 86400 that a discovered application may be gone before "
		  "its instance is freed",
};

/* Options every plugin has, handled here rather than in the table. */
static const char *const instance_keys[] = {"FilePrefix", "SocketPath"};

void
dtp_conf_error(struct dtp_conf *c, const char *where, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	DTP_LOG(LOG_ERR, c->plugin, "%s%s", where, msg);
	c->errors++;
}

/* The values of an option as the user wrote them, for messages. */
const char *
dtp_conf_describe(const oconfig_item_t *ci, char *buf, size_t size)
{
	size_t n = 0;

	buf[0] = '\0';
	if (ci->values_num == 0)
		return "no value";
	for (int i = 0; i < ci->values_num && n < size; i++) {
		const oconfig_value_t *v = &ci->values[i];
		const char *sep = i ? " " : "";

		if (v->type == OCONFIG_TYPE_STRING)
			n += (size_t)snprintf(buf + n, size - n, "%s\"%s\"", sep, v->value.string);
		else if (v->type == OCONFIG_TYPE_NUMBER)
			n += (size_t)snprintf(buf + n, size - n, "%s%g", sep, v->value.number);
		else
			n += (size_t)snprintf(buf + n, size - n, "%s%s", sep,
				v->value.boolean ? "true" : "false");
	}
	return buf;
}

static bool
one_of_type(const oconfig_item_t *ci, int type)
{
	return ci->values_num == 1 && ci->values[0].type == type;
}

static int
parse_number(const oconfig_item_t *ci, const struct dtp_option *o, void *field)
{
	double v;

	if (!one_of_type(ci, OCONFIG_TYPE_NUMBER))
		return -EINVAL;
	v = ci->values[0].value.number;
	if (!(v >= o->min && v <= o->max))
		return -ERANGE;
	*(double *)field = v;
	return 0;
}

static int
parse_uint(const oconfig_item_t *ci, const struct dtp_option *o, void *field)
{
	double v;

	if (!one_of_type(ci, OCONFIG_TYPE_NUMBER))
		return -EINVAL;
	v = ci->values[0].value.number;
	if (!(v >= o->min && v <= o->max) || v != (double)(unsigned int)v)
		return -ERANGE;
	*(unsigned int *)field = (unsigned int)v;
	return 0;
}

static int
parse_ports(const oconfig_item_t *ci, void *field)
{
	struct dtp_ports p = {0};
	int n;

	if (!one_of_type(ci, OCONFIG_TYPE_STRING))
		return -EINVAL;
	n = dtel_parse_id_list(ci->values[0].value.string, p.bm, DTP_PORTS_MAX, NULL);
	if (n < 0)
		return n;
	/* "all" means every port the application lists, whatever its id. */
	p.all = n == DTP_PORTS_MAX && strstr(ci->values[0].value.string, "all") != NULL;
	*(struct dtp_ports *)field = p;
	return 0;
}

static int
parse_globs(const oconfig_item_t *ci, void *field)
{
	struct dtp_globs *g = field;

	if (ci->values_num < 1)
		return -EINVAL;
	for (int i = 0; i < ci->values_num; i++)
		if (ci->values[i].type != OCONFIG_TYPE_STRING ||
			ci->values[i].value.string[0] == '\0')
			return -EINVAL;
	if (g->n + (unsigned int)ci->values_num > DTP_GLOBS_MAX)
		return -ERANGE;
	for (int i = 0; i < ci->values_num; i++) {
		g->v[g->n] = strdup(ci->values[i].value.string);
		if (g->v[g->n] == NULL)
			return -ENOMEM;
		g->n++;
	}
	return 0;
}

/* Parse one option into field; 0, or -EINVAL (wrong type) / -ERANGE (out of range). */
static int
parse_option_value(const oconfig_item_t *ci, const struct dtp_option *o, void *field)
{
	switch (o->type) {
	case DTP_OPT_BOOL:
		if (!one_of_type(ci, OCONFIG_TYPE_BOOLEAN))
			return -EINVAL;
		*(bool *)field = ci->values[0].value.boolean != 0;
		return 0;
	case DTP_OPT_SECONDS:
	case DTP_OPT_NUMBER:
		return parse_number(ci, o, field);
	case DTP_OPT_UINT:
		return parse_uint(ci, o, field);
	case DTP_OPT_STRING:
		if (!one_of_type(ci, OCONFIG_TYPE_STRING))
			return -EINVAL;
		if (strlen(ci->values[0].value.string) >= o->size)
			return -ERANGE;
		memcpy(field, ci->values[0].value.string, strlen(ci->values[0].value.string) + 1);
		return 0;
	case DTP_OPT_PORTS:
		return parse_ports(ci, field);
	case DTP_OPT_GLOBS:
		return parse_globs(ci, field);
	case DTP_OPT_CUSTOM:
		break;
	}
	return -EINVAL;
}

static const struct dtp_option *
find_option(const struct dtp_conf *c, const char *key, size_t *ret_index)
{
	for (size_t i = 0; i < c->ntable; i++) {
		if (strcasecmp(c->table[i].key, key) == 0) {
			*ret_index = i;
			return &c->table[i];
		}
	}
	return NULL;
}

static bool
is_instance_key(const char *key)
{
	for (size_t i = 0; i < sizeof(instance_keys) / sizeof(instance_keys[0]); i++)
		if (strcasecmp(key, instance_keys[i]) == 0)
			return true;
	return false;
}

/* One option of the table, in the <Plugin> block (inst NULL) or an <Instance> block. */
static void
table_option(struct dtp_conf *c, const oconfig_item_t *ci, const char *where,
	struct dtp_instance_conf *inst)
{
	const struct dtp_option *o;
	char vals[256];
	void *field;
	size_t i;
	int r;

	o = find_option(c, ci->key, &i);
	if (o == NULL) {
		dtp_conf_error(c, where, "unknown option '%s'", ci->key);
		return;
	}
	if (inst != NULL && !(o->where & DTP_OPT_INSTANCE)) {
		dtp_conf_error(c, where,
			"option '%s' belongs in the <Plugin %s> block, not in an <Instance> block",
			ci->key, c->plugin);
		return;
	}
	field = (char *)(inst ? inst->opts : c->global) + o->offset;
	/* The first occurrence of a list in a block replaces the default or global list (not
	 * owned by this block: nothing to free). */
	if ((o->type == DTP_OPT_GLOBS || o->type == DTP_OPT_CUSTOM) &&
		!((inst ? inst->set : c->global_set) & (1ull << i)))
		memset(field, 0, o->size);
	if (inst)
		inst->set |= 1ull << i;
	else
		c->global_set |= 1ull << i;
	if (o->type == DTP_OPT_CUSTOM) {
		o->parse(c, ci, where, field);
		return;
	}
	r = parse_option_value(ci, o, field);
	if (r == -ENOMEM) {
		dtp_conf_error(c, where, "out of memory");
		return;
	}
	if (r < 0) {
		dtp_conf_error(c, where, "option '%s' has %s %s: expected %s", ci->key,
			r == -ERANGE ? "the out-of-range value" : "the invalid value",
			dtp_conf_describe(ci, vals, sizeof(vals)), o->expect);
		return;
	}
}

static void
instance_string(struct dtp_conf *c, const oconfig_item_t *ci, const char *where, char *dst,
	size_t size, const char *expect)
{
	char vals[256];

	if (!one_of_type(ci, OCONFIG_TYPE_STRING) || ci->values[0].value.string[0] == '\0' ||
		strlen(ci->values[0].value.string) >= size) {
		dtp_conf_error(c, where, "option '%s' has the invalid value %s: expected %s",
			ci->key, dtp_conf_describe(ci, vals, sizeof(vals)), expect);
		return;
	}
	memcpy(dst, ci->values[0].value.string, strlen(ci->values[0].value.string) + 1);
}

bool
dtp_name_ambiguous(const char *s)
{
	static const char *const suffixes[] = {".port", ".lcore"};
	const char *dot = strrchr(s, '.');

	for (size_t i = 0; dot != NULL && i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		size_t n = strlen(suffixes[i]);

		if (strncmp(dot, suffixes[i], n) == 0 && dot[n] != '\0' &&
			strspn(dot + n, "0123456789") == strlen(dot + n))
			return true;
	}
	return false;
}

/* Instance names go into plugin_instance: keep them to what every writer accepts. */
static bool
valid_name(const char *s)
{
	if (s[0] == '\0' || strlen(s) >= DTP_NAME_MAX || dtp_name_ambiguous(s))
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
			    (*s >= '0' && *s <= '9') || *s == '_' || *s == '-' || *s == '.'))
			return false;
	return true;
}

static struct dtp_instance_conf *
new_instance(struct dtp_conf *c)
{
	struct dtp_instance_conf *v = realloc(c->inst, (c->ninst + 1) * sizeof(*v));
	struct dtp_instance_conf *inst;

	if (v == NULL)
		return NULL;
	c->inst = v;
	inst = &v[c->ninst];
	memset(inst, 0, sizeof(*inst));
	inst->opts = calloc(1, c->opts_size);
	if (inst->opts == NULL)
		return NULL;
	c->ninst++;
	return inst;
}

static void
instance_block(struct dtp_conf *c, const oconfig_item_t *ci)
{
	struct dtp_instance_conf *inst;
	char where[DTP_NAME_MAX + 64], vals[256];

	if (!one_of_type(ci, OCONFIG_TYPE_STRING) || !valid_name(ci->values[0].value.string)) {
		dtp_conf_error(c, "",
			"<Instance> has the invalid name %s: expected one string of letters, "
			"digits, '_', '-' or '.', at most %d characters",
			dtp_conf_describe(ci, vals, sizeof(vals)), DTP_NAME_MAX - 1);
		return;
	}
	inst = new_instance(c);
	if (inst == NULL) {
		dtp_conf_error(c, "", "out of memory");
		return;
	}
	snprintf(inst->name, sizeof(inst->name), "%s", ci->values[0].value.string);
	snprintf(where, sizeof(where), "<Instance \"%s\">: ", inst->name);
	for (int i = 0; i < ci->children_num; i++) {
		const oconfig_item_t *o = &ci->children[i];

		if (strcasecmp(o->key, "FilePrefix") == 0)
			instance_string(c, o, where, inst->file_prefix, sizeof(inst->file_prefix),
				"the application's --file-prefix, one string");
		else if (strcasecmp(o->key, "SocketPath") == 0)
			instance_string(c, o, where, inst->socket_path, sizeof(inst->socket_path),
				"the path of a dpdk_telemetry.v2 socket, one string under 108 "
				"bytes");
		else if (strcasecmp(o->key, "RuntimeDir") == 0)
			instance_string(c, o, where, inst->runtime_dir, sizeof(inst->runtime_dir),
				"a directory, one string");
		else if (strcasecmp(o->key, "Discover") == 0 ||
			strcasecmp(o->key, "Instance") == 0 ||
			strcasecmp(o->key, "RetireAfter") == 0 ||
			strcasecmp(o->key, "DiscoverContainers") == 0 ||
			strcasecmp(o->key, "ContainerLinkDir") == 0)
			dtp_conf_error(c, where, "option '%s' belongs in the <Plugin %s> block",
				o->key, c->plugin);
		else
			table_option(c, o, where, inst);
	}
}

/* The link dir's longest path: a link's path (<dir>/<instance name>) must fit a socket path. */
#define LINK_DIR_MAX (DTEL_PATH_MAX - DTP_NAME_MAX - 1)

/* DiscoverContainers and ContainerLinkDir; false when @ci is neither. */
static bool
container_option(struct dtp_conf *c, const oconfig_item_t *ci)
{
	char vals[256];
	const char *v;

	if (strcasecmp(ci->key, "DiscoverContainers") == 0) {
		if (!one_of_type(ci, OCONFIG_TYPE_BOOLEAN))
			dtp_conf_error(c, "",
				"option 'DiscoverContainers' has the invalid value %s: expected "
				"true "
				"or false",
				dtp_conf_describe(ci, vals, sizeof(vals)));
		else
			c->discover_containers = ci->values[0].value.boolean;
		return true;
	}
	if (strcasecmp(ci->key, "ContainerLinkDir") != 0)
		return false;
	v = one_of_type(ci, OCONFIG_TYPE_STRING) ? ci->values[0].value.string : NULL;
	if (v == NULL || v[0] != '/' || strlen(v) >= LINK_DIR_MAX)
		dtp_conf_error(c, "",
			"option 'ContainerLinkDir' has the invalid value %s: expected an absolute "
			"directory path of at most %d characters (a link's path in it must fit "
			"the 107 bytes of a socket path)",
			dtp_conf_describe(ci, vals, sizeof(vals)), LINK_DIR_MAX - 1);
	else
		snprintf(c->container_link_dir, sizeof(c->container_link_dir), "%s", v);
	return true;
}

static void
global_option(struct dtp_conf *c, const oconfig_item_t *ci)
{
	char vals[256];

	if (strcasecmp(ci->key, "Instance") == 0) {
		instance_block(c, ci);
	} else if (container_option(c, ci)) {
		return;
	} else if (strcasecmp(ci->key, "Discover") == 0) {
		if (!one_of_type(ci, OCONFIG_TYPE_BOOLEAN)) {
			dtp_conf_error(c, "",
				"option 'Discover' has the invalid value %s: expected true or "
				"false",
				dtp_conf_describe(ci, vals, sizeof(vals)));
			return;
		}
		c->discover = ci->values[0].value.boolean;
		c->discover_set = true;
	} else if (strcasecmp(ci->key, "RuntimeDir") == 0) {
		if (c->nruntime_dirs == DTEL_RUNTIME_DIRS_MAX) {
			dtp_conf_error(c, "", "option 'RuntimeDir' is given more than %d times",
				DTEL_RUNTIME_DIRS_MAX);
			return;
		}
		instance_string(c, ci, "", c->runtime_dirs[c->nruntime_dirs],
			sizeof(c->runtime_dirs[0]), "a directory, one string");
		if (c->runtime_dirs[c->nruntime_dirs][0] != '\0')
			c->nruntime_dirs++;
	} else if (strcasecmp(ci->key, "RetireAfter") == 0) {
		int r = parse_number(ci, &retire_option, &c->retire_after);

		if (r < 0)
			dtp_conf_error(c, "",
				"option 'RetireAfter' has the %s value %s: expected %s",
				r == -ERANGE ? "out-of-range" : "invalid",
				dtp_conf_describe(ci, vals, sizeof(vals)), retire_option.expect);
	} else if (is_instance_key(ci->key)) {
		dtp_conf_error(c, "",
			"option '%s' belongs in an <Instance \"name\"> block; did you forget to "
			"add "
			"one?",
			ci->key);
	} else {
		table_option(c, ci, "", NULL);
	}
}

int
dtp_conf_init(struct dtp_conf *c, const char *plugin, const struct dtp_option *table, size_t ntable,
	const void *defaults, size_t opts_size)
{
	if (c->global != NULL)
		return 0;
	memset(c, 0, sizeof(*c));
	c->plugin = plugin;
	c->table = table;
	c->ntable = ntable;
	c->opts_size = opts_size;
	c->global = malloc(opts_size);
	if (c->global == NULL)
		return -ENOMEM;
	memcpy(c->global, defaults, opts_size);
	c->retire_after = DTP_RETIRE_AFTER_DEFAULT;
	snprintf(c->container_link_dir, sizeof(c->container_link_dir), "%s",
		DTP_CONTAINER_LINK_DIR_DEFAULT);
	return 0;
}

int
dtp_conf_config(struct dtp_conf *c, const char *plugin, const struct dtp_option *table,
	size_t ntable, const void *defaults, size_t opts_size, const oconfig_item_t *ci)
{
	if (dtp_conf_init(c, plugin, table, ntable, defaults, opts_size) == 0)
		dtp_conf_parse(c, ci);
	/* Errors are reported now and refused in init: a config callback that fails would stop
	 * collectd from starting at all. */
	return 0;
}

void
dtp_conf_parse(struct dtp_conf *c, const oconfig_item_t *ci)
{
	for (int i = 0; i < ci->children_num; i++)
		global_option(c, &ci->children[i]);
}

/* Give inst the global value of every option its block did not set. */
static void
inherit(struct dtp_conf *c, struct dtp_instance_conf *inst)
{
	for (size_t i = 0; i < c->ntable; i++) {
		const struct dtp_option *o = &c->table[i];

		if (inst->set & (1ull << i))
			continue;
		/* Lists are owned once, by the block that set them (the <Plugin> block, or the
		 * defaults: static); instances that did not set them borrow them. */
		memcpy((char *)inst->opts + o->offset, (char *)c->global + o->offset, o->size);
	}
}

/* Where a FilePrefix lives: the block's RuntimeDir, else the first RuntimeDir given, else
 * (NULL) the library's search of the default dirs (dtel_socket_path()). */
static const char *
prefix_dir(const struct dtp_conf *c, const struct dtp_instance_conf *inst)
{
	if (inst->runtime_dir[0])
		return inst->runtime_dir;
	return c->runtime_dirs_default ? NULL : c->runtime_dirs[0];
}

static void
check_instance(struct dtp_conf *c, struct dtp_instance_conf *inst, size_t index)
{
	char where[DTP_NAME_MAX + 64];
	int n;

	snprintf(where, sizeof(where), "<Instance \"%s\">: ", inst->name);
	if (inst->file_prefix[0] && inst->socket_path[0]) {
		dtp_conf_error(c, where,
			"FilePrefix \"%s\" and SocketPath \"%s\" are both set: expected "
			"one of them",
			inst->file_prefix, inst->socket_path);
		return;
	}
	if (!inst->file_prefix[0] && !inst->socket_path[0]) {
		dtp_conf_error(
			c, where, "neither FilePrefix nor SocketPath is set: expected one of them");
		return;
	}
	if (inst->file_prefix[0]) {
		n = dtel_socket_path(prefix_dir(c, inst), inst->file_prefix, 0, inst->socket_path,
			sizeof(inst->socket_path));
		if (n < 0) {
			dtp_conf_error(c, where, "FilePrefix \"%s\" is not valid: %s",
				inst->file_prefix,
				n == -ENAMETOOLONG
					? "the socket path would be longer than 107 bytes"
					: "expected a directory name without '/'");
			return;
		}
	}
	for (size_t j = 0; j < index; j++) {
		if (strcmp(c->inst[j].name, inst->name) == 0)
			dtp_conf_error(c, where,
				"a second <Instance \"%s\">: instance names must be unique",
				inst->name);
		else if (strcmp(c->inst[j].socket_path, inst->socket_path) == 0)
			dtp_conf_error(c, where,
				"socket %s is already collected by <Instance \"%s\">",
				inst->socket_path, c->inst[j].name);
	}
}

int
dtp_conf_validate(struct dtp_conf *c)
{
	if (c->discover_containers && c->discover_set && !c->discover)
		dtp_conf_error(c, "",
			"DiscoverContainers is true but Discover is false: containers are "
			"looked into by discovery; expected Discover true (or no Discover line)");
	if (!c->discover_set)
		c->discover = c->ninst == 0 || c->discover_containers;
	if (c->nruntime_dirs == 0) {
		c->nruntime_dirs = dtel_runtime_dirs(c->runtime_dirs, DTEL_RUNTIME_DIRS_MAX);
		c->runtime_dirs_default = true;
		if (c->nruntime_dirs == 0)
			dtp_conf_error(c, "", "cannot tell the DPDK runtime dir: set RuntimeDir");
	}
	for (size_t i = 0; i < c->ninst; i++) {
		inherit(c, &c->inst[i]);
		check_instance(c, &c->inst[i], i);
	}
	if (c->ninst == 0 && !c->discover)
		dtp_conf_error(c, "",
			"Discover is false and there is no <Instance> block: nothing to "
			"collect");
	return c->errors == 0 ? 0 : -1;
}

/* Free the lists the block with options @opts set itself (@set: its bits); the others are
 * borrowed, from the <Plugin> block or the static defaults. */
static void
free_owned(const struct dtp_conf *c, void *opts, uint64_t set)
{
	for (size_t i = 0; i < c->ntable; i++) {
		const struct dtp_option *o = &c->table[i];
		void *field = (char *)opts + o->offset;
		struct dtp_globs *g = field;

		if (!(set & (1ull << i)))
			continue;
		if (o->type == DTP_OPT_CUSTOM && o->free != NULL)
			o->free(field);
		if (o->type != DTP_OPT_GLOBS)
			continue;
		for (unsigned int k = 0; k < g->n; k++)
			free(g->v[k]);
		g->n = 0;
	}
}

void
dtp_conf_free(struct dtp_conf *c)
{
	for (size_t i = 0; i < c->ninst; i++) {
		if (c->inst[i].opts != NULL)
			free_owned(c, c->inst[i].opts, c->inst[i].set);
		free(c->inst[i].opts);
	}
	free(c->inst);
	if (c->global != NULL)
		free_owned(c, c->global, c->global_set);
	free(c->global);
	memset(c, 0, sizeof(*c));
}

bool
dtp_ports_has(const struct dtp_ports *p, unsigned int id)
{
	if (p->all)
		return true;
	return id < DTP_PORTS_MAX && (p->bm[id / 64] >> (id % 64)) & 1;
}

bool
dtp_globs_pass(const struct dtp_globs *include, const struct dtp_globs *exclude, const char *name)
{
	bool in = include->n == 0;

	for (unsigned int i = 0; !in && i < include->n; i++)
		in = fnmatch(include->v[i], name, 0) == 0;
	for (unsigned int i = 0; in && i < exclude->n; i++)
		if (fnmatch(exclude->v[i], name, 0) == 0)
			return false;
	return in;
}
