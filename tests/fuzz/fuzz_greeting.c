/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer target: the greeting parser and the id-list parser (both take untrusted text). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dtel.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dtel_greeting g;
	uint64_t bm[16];
	char buf[64], *s;

	if (size == 0)
		return 0;
	s = malloc(size);
	if (s == NULL)
		return 0;
	memcpy(s, data + 1, size - 1);
	if (data[0] & 1) {
		dtel_parse_greeting(s, size - 1, &g);
	} else {
		s[size - 1] = '\0'; /* id lists come from config strings */
		if (dtel_parse_id_list(s, bm, 1024, NULL) >= 0)
			dtel_format_id_list(bm, 1024, buf, sizeof(buf));
	}
	free(s);
	return 0;
}
