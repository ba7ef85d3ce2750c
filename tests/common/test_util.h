/* SPDX-License-Identifier: BSD-3-Clause */
/* Small helpers shared by the cmocka suites. */
#ifndef TEST_UTIL_H
#define TEST_UTIL_H

#include <stdint.h>
#include <string.h>
#include <time.h>

#include "dtel.h"

/** A reply struct over a string literal or golden text (not owned). */
static inline struct dtel_reply
reply_of(const char *json)
{
	struct dtel_reply r = {.json = (char *)json, .len = strlen(json), .flags = 0};

	return r;
}

static inline uint64_t
test_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

#endif
