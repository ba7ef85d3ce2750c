/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Strings from the application (device names, its name and version, socket paths) made safe
 * for a terminal and for a JSON string: nothing they hold can move the cursor, clear the
 * screen or end a line.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* The second byte of a UTF-8 sequence starting with lead: no overlong form, no surrogate. */
static bool
second_ok(unsigned char lead, unsigned char b)
{
	switch (lead) {
	case 0xe0:
		return b >= 0xa0;
	case 0xed:
		return b < 0xa0;
	case 0xf0:
		return b >= 0x90;
	case 0xf4:
		return b < 0x90;
	default:
		return true;
	}
}

/* Bytes of the printable character at s, 0 for a control or for bytes that are not UTF-8. */
static size_t
printable_len(const unsigned char *s)
{
	size_t n;

	if (s[0] >= 0x20 && s[0] < 0x7f)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	for (size_t i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80 || (i == 1 && !second_ok(s[0], s[1])))
			return 0;
	if (s[0] == 0xc2 && s[1] < 0xa0)
		return 0; /* U+0080-U+009F, the C1 controls: U+009B is CSI, as ESC [ is */
	return n;
}

/*
 * The text that stands for the character at s, into out[8]; returns the bytes of s used.
 * In JSON text (json), quotes, backslashes and whitespace are the text's own and stay.
 */
static size_t
escape_one(const unsigned char *s, char *out, bool json)
{
	size_t n = printable_len(s);

	if (json && (s[0] == '\n' || s[0] == '\t' || s[0] == '\r'))
		n = 1;
	if (!json && (s[0] == '"' || s[0] == '\\')) {
		snprintf(out, 8, "\\%c", s[0]);
		return 1;
	}
	if (n > 0) {
		memcpy(out, s, n);
		out[n] = '\0';
		return n;
	}
	if (s[0] == 0xc2) {
		snprintf(out, 8, "\\u%04x", s[1]); /* a C1 control */
		return 2;
	}
	/* A C0 control, DEL, or a byte that is not UTF-8 (taken as Latin-1). */
	snprintf(out, 8, "\\u%04x", s[0]);
	return 1;
}

const char *
cli_escape(const char *s, char *buf, size_t size)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = 0;
	char one[8];

	while (*p != '\0') {
		size_t used = escape_one(p, one, false), len = strlen(one);

		if (n + len >= size)
			break;
		memcpy(buf + n, one, len);
		n += len;
		p += used;
	}
	buf[n] = '\0';
	return buf;
}

void
cli_put_json_string(const char *s)
{
	char buf[CLI_ESCAPED_SIZE(DTEL_STRING_MAX)];

	printf("\"%s\"", cli_escape(s, buf, sizeof(buf)));
}

int
cli_put_json_text(const char *json)
{
	const unsigned char *p = (const unsigned char *)json;
	char one[8];

	while (*p != '\0') {
		p += escape_one(p, one, true);
		if (fputs(one, stdout) < 0)
			return -1;
	}
	return putchar('\n') < 0 ? -1 : 0;
}
