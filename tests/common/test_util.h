/* SPDX-License-Identifier: BSD-3-Clause */
/* Small helpers shared by the cmocka suites. */
#ifndef TEST_UTIL_H
#define TEST_UTIL_H

#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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

/**
 * A process that has just started (it waits until test_end_process()), for the greeting of
 * an application that is still starting: the plugins tell its age from /proc/<pid>.
 */
static inline pid_t
test_young_process(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		pause();
		_exit(0);
	}
	return pid;
}

static inline void
test_end_process(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

#endif
