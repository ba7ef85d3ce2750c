/* SPDX-License-Identifier: BSD-3-Clause */
/* The JSON walker under the parsers: strict RFC 8259, exact integers, escapes, depth. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "json.h"

static int
walk(const char *s)
{
	return dtel__json_walk(s, strlen(s), NULL, NULL);
}

static void
valid_documents(void **state)
{
	static const char *const ok[] = {
		"0",
		"-0",
		"12",
		"-12.5e+3",
		"1E2",
		"0.25",
		"true",
		"false",
		"null",
		"\"\"",
		" {\"a\" : [1, 2, {\"b\": []}], \"c\": {}}\n",
		"[[],[[]],{}]",
		"\"\\u00e9\\ud83d\\ude00\"",
		"{\"k\":\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"}",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		if (walk(ok[i]) != 0)
			fail_msg("refused valid JSON: %s", ok[i]);
	}
}

static void
invalid_documents(void **state)
{
	static const char *const bad[] = {
		"",
		" ",
		"012",
		"1.",
		".5",
		"-",
		"+1",
		"1e",
		"0x10",
		"NaN",
		"Infinity",
		"tru",
		"nul",
		"[1,]",
		"[,1]",
		"{,}",
		"{\"a\"}",
		"{\"a\":1,}",
		"{\"a\" 1}",
		"{1:2}",
		"[1 2]",
		"[",
		"{\"a\":",
		"\"abc",
		"\"\\x\"",
		"\"\\u12\"",
		"\"\\u12g4\"",
		"\"a\tb\"",
		"[1]]",
		"{}}",
		"1 2",
		"[1] x",
		"'a'",
		"{\"a\":1}{",
		"\"\\",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (walk(bad[i]) != -EPROTO)
			fail_msg("accepted invalid JSON: '%s'", bad[i]);
	}
	/* An embedded NUL ends nothing: the length is explicit. */
	assert_int_equal(dtel__json_walk("[1]\0", 4, NULL, NULL), -EPROTO);
}

static void
depth_limit(void **state)
{
	char buf[256];
	size_t n = 0;

	(void)state;
	for (int i = 0; i < DTEL__JSON_MAX_DEPTH; i++)
		buf[n++] = '[';
	for (int i = 0; i < DTEL__JSON_MAX_DEPTH; i++)
		buf[n++] = ']';
	assert_int_equal(dtel__json_walk(buf, n, NULL, NULL), 0);
	memmove(buf + 1, buf, n);
	buf[0] = '[';
	buf[n + 1] = ']';
	assert_int_equal(dtel__json_walk(buf, n + 2, NULL, NULL), -EPROTO);
}

struct collect {
	char seen[512];
	size_t n;
};

static int
collect_visit(void *ctx, const struct dtel__jframe *path, int depth, const struct dtel__jtok *t)
{
	struct collect *c = ctx;
	char key[64] = "";

	if (depth > 0 && !path[depth - 1].is_array)
		dtel__json_str(
			path[depth - 1].key, path[depth - 1].key_len, false, key, sizeof(key));
	else if (depth > 0)
		snprintf(key, sizeof(key), "#%zu", path[depth - 1].index);
	c->n += (size_t)snprintf(c->seen + c->n, sizeof(c->seen) - c->n, "%d:%s:%d%s ", depth, key,
		t->type, t->type == DTEL__J_END ? (t->end_array ? "a" : "o") : "");
	if (t->type == DTEL__J_END)
		c->n += (size_t)snprintf(
			c->seen + c->n, sizeof(c->seen) - c->n, "(%zu) ", t->count);
	return 0;
}

static void
events_and_paths(void **state)
{
	struct collect c = {0};
	const char *doc = "{\"a\":[7,{\"b\":null}],\"c\":\"x\"}";

	(void)state;
	assert_int_equal(dtel__json_walk(doc, strlen(doc), collect_visit, &c), 0);
	/* type codes: 0 null 3 number 4 string 5 object 6 array 7 end */
	assert_string_equal(c.seen,
		"0::5 1:a:6 2:#0:3 2:#1:5 3:b:0 2:#1:7o (1) 1:a:7a (2) "
		"1:c:4 0::7o (2) ");
}

static int
stop_visit(void *ctx, const struct dtel__jframe *path, int depth, const struct dtel__jtok *t)
{
	(void)ctx, (void)path, (void)depth;
	return t->type == DTEL__J_NUMBER ? -ENOMEM : 0;
}

static void
visitor_can_stop(void **state)
{
	(void)state;
	assert_int_equal(dtel__json_walk("[1]", 3, stop_visit, NULL), -ENOMEM);
}

static struct dtel__jtok
num(const char *s)
{
	struct dtel__jtok t = {.type = DTEL__J_NUMBER, .p = s, .len = strlen(s)};

	return t;
}

static void
integers_exact(void **state)
{
	struct dtel__jtok t;
	uint64_t u;
	int64_t v;

	(void)state;
	t = num("18446744073709551615");
	assert_true(dtel__json_u64(&t, &u) && u == UINT64_MAX);
	t = num("18446744073709551616");
	assert_false(dtel__json_u64(&t, &u));
	t = num("99999999999999999999");
	assert_false(dtel__json_u64(&t, &u));
	t = num("-1");
	assert_false(dtel__json_u64(&t, &u));
	t = num("1.0");
	assert_false(dtel__json_u64(&t, &u));
	t = num("1e3");
	assert_false(dtel__json_u64(&t, &u));
	t = num("-9223372036854775808");
	assert_true(dtel__json_int(&t, INT64_MIN, INT64_MAX, &v) && v == INT64_MIN);
	t = num("-9223372036854775809");
	assert_false(dtel__json_int(&t, INT64_MIN, INT64_MAX, &v));
	t = num("9223372036854775808");
	assert_false(dtel__json_int(&t, INT64_MIN, INT64_MAX, &v));
	t = num("70000");
	assert_false(dtel__json_int(&t, 0, 65535, &v));
}

static void
string_decoding(void **state)
{
	char buf[16];

	(void)state;
	assert_int_equal(dtel__json_str("a\\nb", 4, true, buf, sizeof(buf)), 3);
	assert_string_equal(buf, "a\nb");
	assert_int_equal(dtel__json_str("\\u00e9", 6, true, buf, sizeof(buf)), 2);
	assert_string_equal(buf, "\xc3\xa9");
	assert_int_equal(dtel__json_str("\\ud83d\\ude00", 12, true, buf, sizeof(buf)), 4);
	assert_int_equal(dtel__json_str("\\u0000", 6, true, buf, sizeof(buf)), -1);
	assert_int_equal(dtel__json_str("\\ude00", 6, true, buf, sizeof(buf)), -1);
	assert_int_equal(dtel__json_str("\\ud83dx", 7, true, buf, sizeof(buf)), -1);
	assert_int_equal(dtel__json_str("0123456789abcdef", 16, false, buf, sizeof(buf)), -1);
	assert_int_equal(dtel__json_str("0123456789abcde", 15, false, buf, sizeof(buf)), 15);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(valid_documents),
		cmocka_unit_test(invalid_documents),
		cmocka_unit_test(depth_limit),
		cmocka_unit_test(events_and_paths),
		cmocka_unit_test(visitor_can_stop),
		cmocka_unit_test(integers_exact),
		cmocka_unit_test(string_decoding),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
