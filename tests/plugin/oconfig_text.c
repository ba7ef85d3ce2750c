/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * collectd config text to an oconfig tree, for tests: the subset of the syntax the plugins'
 * blocks use (options with strings, numbers and booleans, nested <Block "arg"> ... </Block>,
 * comments). The result is the body of one <Plugin> block.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fake_collectd.h"

struct lexer {
	const char *p;
	int depth;
};

static oconfig_item_t *
add_child(oconfig_item_t *parent)
{
	oconfig_item_t *v =
		realloc(parent->children, (size_t)(parent->children_num + 1) * sizeof(*v));

	if (v == NULL)
		return NULL;
	parent->children = v;
	/* Children moved: fix their own children's parent pointers. */
	for (int i = 0; i < parent->children_num; i++)
		for (int k = 0; k < v[i].children_num; k++)
			v[i].children[k].parent = &v[i];
	memset(&v[parent->children_num], 0, sizeof(v[0]));
	v[parent->children_num].parent = parent;
	return &v[parent->children_num++];
}

static int
add_value(oconfig_item_t *it, oconfig_value_t val)
{
	oconfig_value_t *v = realloc(it->values, (size_t)(it->values_num + 1) * sizeof(*v));

	if (v == NULL)
		return -1;
	it->values = v;
	v[it->values_num++] = val;
	return 0;
}

static void
skip_blank(struct lexer *lx)
{
	while (*lx->p == ' ' || *lx->p == '\t')
		lx->p++;
	if (*lx->p == '#')
		while (*lx->p && *lx->p != '\n')
			lx->p++;
}

static char *
read_word(struct lexer *lx)
{
	const char *start = lx->p;

	while (*lx->p && !isspace((unsigned char)*lx->p) && *lx->p != '>' && *lx->p != '#')
		lx->p++;
	return strndup(start, (size_t)(lx->p - start));
}

static char *
read_quoted(struct lexer *lx)
{
	size_t n = 0, cap = 32;
	char *s = malloc(cap);

	lx->p++;
	while (s != NULL && *lx->p && *lx->p != '"') {
		char c = *lx->p++;

		if (c == '\\' && *lx->p)
			c = *lx->p++;
		if (n + 2 > cap)
			s = realloc(s, cap *= 2);
		if (s != NULL)
			s[n++] = c;
	}
	if (s == NULL || *lx->p != '"') {
		free(s);
		return NULL;
	}
	lx->p++;
	s[n] = '\0';
	return s;
}

/* One value: "string", a number, or a bare word (true/false/yes/no/on/off are booleans). */
static int
read_value(struct lexer *lx, oconfig_item_t *it)
{
	oconfig_value_t v = {0};
	char *w, *end;

	if (*lx->p == '"') {
		v.type = OCONFIG_TYPE_STRING;
		v.value.string = read_quoted(lx);
		return v.value.string ? add_value(it, v) : -1;
	}
	w = read_word(lx);
	if (w == NULL || *w == '\0') {
		free(w);
		return -1;
	}
	v.value.number = strtod(w, &end);
	if (*end == '\0') {
		v.type = OCONFIG_TYPE_NUMBER;
		free(w);
		return add_value(it, v);
	}
	if (!strcasecmp(w, "true") || !strcasecmp(w, "yes") || !strcasecmp(w, "on") ||
		!strcasecmp(w, "false") || !strcasecmp(w, "no") || !strcasecmp(w, "off")) {
		v.type = OCONFIG_TYPE_BOOLEAN;
		v.value.boolean =
			!strcasecmp(w, "true") || !strcasecmp(w, "yes") || !strcasecmp(w, "on");
		free(w);
		return add_value(it, v);
	}
	v.type = OCONFIG_TYPE_STRING;
	v.value.string = w;
	return add_value(it, v);
}

static int parse_block(struct lexer *lx, oconfig_item_t *parent, const char *closing);

/* One line: an option, a block opening, or a block end (returns 1 at the end of the block). */
static int
parse_line(struct lexer *lx, oconfig_item_t *parent, const char *closing)
{
	oconfig_item_t *it;
	bool block = false;

	skip_blank(lx);
	if (*lx->p == '\n' || *lx->p == '\0')
		return 0;
	if (lx->p[0] == '<' && lx->p[1] == '/') {
		lx->p += 2;
		char *w = read_word(lx);
		int ok = w && closing && strcasecmp(w, closing) == 0 && *lx->p == '>';

		free(w);
		if (!ok)
			return -1;
		lx->p++;
		return 1;
	}
	if (*lx->p == '<') {
		block = true;
		lx->p++;
	}
	it = add_child(parent);
	if (it == NULL)
		return -1;
	it->key = read_word(lx);
	for (;;) {
		skip_blank(lx);
		if (*lx->p == '\n' || *lx->p == '\0' || (block && *lx->p == '>'))
			break;
		if (read_value(lx, it) < 0)
			return -1;
	}
	if (!block)
		return 0;
	if (*lx->p != '>')
		return -1;
	lx->p++;
	return parse_block(lx, it, it->key);
}

static int
parse_block(struct lexer *lx, oconfig_item_t *parent, const char *closing)
{
	for (;;) {
		int r = parse_line(lx, parent, closing);

		if (r < 0)
			return -1;
		if (r == 1)
			return 0;
		if (*lx->p == '\0')
			return closing == NULL ? 0 : -1;
		if (*lx->p == '\n')
			lx->p++;
	}
}

oconfig_item_t *
fc_parse_config(const char *text)
{
	oconfig_item_t *root = calloc(1, sizeof(*root));
	struct lexer lx = {.p = text};

	if (root == NULL)
		return NULL;
	root->key = strdup("Plugin");
	if (parse_block(&lx, root, NULL) < 0) {
		fc_free_config(root);
		return NULL;
	}
	return root;
}

static void
free_item(oconfig_item_t *it)
{
	for (int i = 0; i < it->values_num; i++)
		if (it->values[i].type == OCONFIG_TYPE_STRING)
			free(it->values[i].value.string);
	free(it->values);
	for (int i = 0; i < it->children_num; i++)
		free_item(&it->children[i]);
	free(it->children);
	free(it->key);
}

void
fc_free_config(oconfig_item_t *ci)
{
	if (ci == NULL)
		return;
	free_item(ci);
	free(ci);
}
