/* SPDX-License-Identifier: BSD-3-Clause */
/* The specification of the slow-telemetry shim (see slow_spec.h): a pure parser. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "slow_spec.h"

#define EXPECTED                                                                              \
	"expected COMMAND=DURATION[,COMMAND=DURATION...] such as "                            \
	"'/ethdev/xstats=15ms,/ethdev/link_status=2ms' (DURATION: a number and us, ms or s, " \
	"from 1us to 10s)"

static int fail(struct slow_spec *out, char *err, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int
fail(struct slow_spec *out, char *err, size_t size, const char *fmt, ...)
{
	va_list ap;

	memset(out, 0, sizeof(*out));
	if (size > 0) {
		va_start(ap, fmt);
		vsnprintf(err, size, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static bool
cmd_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		c == '_' || c == '/';
}

/*
 * A duration "<digits>[.<digits>]<unit>" of exactly @len bytes into nanoseconds; false when
 * it is not one or falls outside 1 us .. 10 s.
 */
static bool
parse_duration(const char *s, size_t len, uint64_t *ret_ns)
{
	static const struct {
		const char *name;
		uint64_t ns;
	} units[] = {{"us", 1000u}, {"ms", 1000000u}, {"s", 1000000000u}};
	uint64_t whole = 0, frac = 0, frac_div = 1, unit = 0, ns;
	size_t i = 0, digits = 0;

	for (; i < len && s[i] >= '0' && s[i] <= '9'; i++, digits++) {
		if (digits == 10)
			return false; /* above 10 s in any unit, and whole * unit stays in 64 bits
				       */
		whole = whole * 10 + (uint64_t)(s[i] - '0');
	}
	if (i < len && s[i] == '.') {
		size_t fdigits = 0;

		for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++, fdigits++) {
			if (fdigits == 9)
				return false; /* below a nanosecond in any unit */
			frac = frac * 10 + (uint64_t)(s[i] - '0');
			frac_div *= 10;
		}
		if (fdigits == 0)
			return false;
	}
	if (digits == 0)
		return false;
	for (size_t u = 0; u < sizeof(units) / sizeof(units[0]); u++)
		if (len - i == strlen(units[u].name) && memcmp(s + i, units[u].name, len - i) == 0)
			unit = units[u].ns;
	if (unit == 0)
		return false;
	ns = whole * unit + frac * unit / frac_div;
	if (ns < 1000u || ns > SLOW_MAX_NS)
		return false;
	*ret_ns = ns;
	return true;
}

int
slow_spec_parse(
	const char *rules, const char *mode, struct slow_spec *out, char *err, size_t err_size)
{
	const char *p = rules;

	memset(out, 0, sizeof(*out));
	if (err_size > 0)
		err[0] = '\0';
	if (mode != NULL && mode[0] != '\0') {
		if (strcmp(mode, "sleep") == 0)
			out->sleep = true;
		else if (strcmp(mode, "busy") != 0)
			return fail(out, err, err_size,
				"DTEL_SLOW_TELEMETRY_MODE='%s': expected 'busy' (spin, the "
				"default) or 'sleep'",
				mode);
	}
	if (rules == NULL || rules[0] == '\0')
		return fail(out, err, err_size, "DTEL_SLOW_TELEMETRY is empty: " EXPECTED);
	for (;;) {
		const char *end = p + strcspn(p, ",");
		const char *eq = memchr(p, '=', (size_t)(end - p));
		struct slow_rule *r = &out->rules[out->n];
		size_t clen;
		uint64_t ns;

		if (eq == NULL || eq == p)
			return fail(out, err, err_size, "DTEL_SLOW_TELEMETRY='%s': rule '%.*s': %s",
				rules, (int)(end - p), p, EXPECTED);
		clen = (size_t)(eq - p);
		if (p[0] != '/' || clen >= SLOW_MAX_CMD)
			return fail(out, err, err_size,
				"DTEL_SLOW_TELEMETRY='%s': command '%.*s': expected a telemetry "
				"command, '/' then letters, digits, '_' or '/', at most %d bytes",
				rules, (int)clen, p, SLOW_MAX_CMD - 1);
		for (size_t i = 0; i < clen; i++)
			if (!cmd_char(p[i]))
				return fail(out, err, err_size,
					"DTEL_SLOW_TELEMETRY='%s': command '%.*s': character "
					"'%c' not allowed (DPDK commands have only letters, "
					"digits, '_' and '/')",
					rules, (int)clen, p, p[i]);
		for (size_t k = 0; k < out->n; k++)
			if (out->rules[k].len == clen && memcmp(out->rules[k].cmd, p, clen) == 0)
				return fail(out, err, err_size,
					"DTEL_SLOW_TELEMETRY='%s': command '%.*s' given twice",
					rules, (int)clen, p);
		if (!parse_duration(eq + 1, (size_t)(end - eq - 1), &ns))
			return fail(out, err, err_size,
				"DTEL_SLOW_TELEMETRY='%s': duration '%.*s' of '%.*s': expected a "
				"number and a unit, us, ms or s (15ms, 2.5ms, 200us), from 1us "
				"to 10s",
				rules, (int)(end - eq - 1), eq + 1, (int)clen, p);
		if (out->n == SLOW_MAX_RULES)
			return fail(out, err, err_size,
				"DTEL_SLOW_TELEMETRY='%s': more than %d rules", rules,
				SLOW_MAX_RULES);
		memcpy(r->cmd, p, clen);
		r->cmd[clen] = '\0';
		r->len = clen;
		r->delay_ns = ns;
		out->n++;
		if (*end == '\0')
			break;
		p = end + 1;
	}
	return 0;
}

const struct slow_rule *
slow_spec_match(const struct slow_spec *spec, const void *buf, size_t n)
{
	const char *b = buf;

	if (n < 4 || b[0] != '{' || b[1] != '"')
		return NULL;
	for (size_t i = 0; i < spec->n; i++) {
		const struct slow_rule *r = &spec->rules[i];

		if (n >= r->len + 4 && memcmp(b + 2, r->cmd, r->len) == 0 && b[2 + r->len] == '"' &&
			b[3 + r->len] == ':')
			return r;
	}
	return NULL;
}

void
slow_spec_describe(const struct slow_spec *spec, char *buf, size_t size)
{
	size_t used = 0;

	if (size == 0)
		return;
	buf[0] = '\0';
	for (size_t i = 0; i < spec->n && used < size; i++) {
		const struct slow_rule *r = &spec->rules[i];
		int k = snprintf(buf + used, size - used, "%s%s %.3f ms", i ? ", " : "", r->cmd,
			(double)r->delay_ns / 1e6);

		if (k < 0)
			return;
		used += (size_t)k;
	}
	if (used < size)
		snprintf(buf + used, size - used, " (%s)", spec->sleep ? "sleep" : "busy-wait");
}
