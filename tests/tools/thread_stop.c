/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * thread_stop: stop ONE thread of a running process, leaving its other threads running, for
 * tests that need a hung DPDK lcore (or main lcore) without the forwarder's cooperation.
 *
 *   thread_stop --tid TID --for-ms MS
 *   thread_stop --tid TID --until-stdin-closes
 *
 * PTRACE_SEIZE attaches to that thread only (ptrace works per thread), PTRACE_INTERRUPT
 * stops it; once waitpid() reports the stop, "stopped TID" goes to stdout (flushed), then
 * the thread stays stopped for MS milliseconds or until stdin reaches EOF, and
 * PTRACE_DETACH lets it run on (a signal that arrived for it meanwhile is handed back).
 * If thread_stop dies, the kernel detaches and the thread runs on.
 *
 * Exit codes: 0 done, 1 error (no such thread, no permission, ...), 2 bad usage. Each
 * error is one line on stderr naming the thread and the cause.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PROG "thread_stop"

static void
usage(FILE *f)
{
	fprintf(f, "usage: " PROG " --tid TID (--for-ms MS | --until-stdin-closes)\n");
}

/* A decimal number, digits only, 1..max. */
static int
parse_num(const char *s, long max, long *ret)
{
	char *end;
	long v;

	if (s == NULL || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtol(s, &end, 10);
	if (*end != '\0' || errno != 0 || v < 1 || v > max)
		return -EINVAL;
	*ret = v;
	return 0;
}

static void
sleep_ms(long ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static void
wait_stdin_eof(void)
{
	char buf[256];

	for (;;) {
		ssize_t n = read(STDIN_FILENO, buf, sizeof(buf));

		if (n == 0 || (n < 0 && errno != EINTR))
			return;
	}
}

int
main(int argc, char **argv)
{
	long tid = 0, for_ms = 0;
	bool until_eof = false;
	int status, pass_sig = 0;
	char path[64];
	struct stat st;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--tid") == 0 && i + 1 < argc) {
			if (parse_num(argv[++i], 0x3fffffff, &tid) < 0) {
				fprintf(stderr,
					PROG ": --tid '%s': expected a thread id (a positive "
					     "number)\n",
					argv[i]);
				return 2;
			}
		} else if (strcmp(argv[i], "--for-ms") == 0 && i + 1 < argc) {
			if (parse_num(argv[++i], 86400000, &for_ms) < 0) {
				fprintf(stderr,
					PROG ": --for-ms '%s': expected milliseconds from 1 "
					     "to 86400000\n",
					argv[i]);
				return 2;
			}
		} else if (strcmp(argv[i], "--until-stdin-closes") == 0) {
			until_eof = true;
		} else if (strcmp(argv[i], "--help") == 0) {
			usage(stdout);
			return 0;
		} else {
			fprintf(stderr, PROG ": unexpected argument '%s'\n", argv[i]);
			usage(stderr);
			return 2;
		}
	}
	if (tid == 0 || (for_ms == 0) == !until_eof) {
		fprintf(stderr,
			PROG ": expected --tid and exactly one of --for-ms, "
			     "--until-stdin-closes\n");
		usage(stderr);
		return 2;
	}

	/* /proc/TID exists for any thread id (not only process ids). */
	snprintf(path, sizeof(path), "/proc/%ld", tid);
	if (stat(path, &st) != 0) {
		fprintf(stderr, PROG ": thread %ld: no such thread\n", tid);
		return 1;
	}
	if (ptrace(PTRACE_SEIZE, (pid_t)tid, NULL, NULL) != 0) {
		int e = errno;

		if (e == ESRCH)
			fprintf(stderr, PROG ": thread %ld: no such thread\n", tid);
		else if (e == EPERM)
			fprintf(stderr,
				PROG ": thread %ld: not allowed to trace it (EPERM: another "
				     "tracer, a setuid process, or no CAP_SYS_PTRACE)\n",
				tid);
		else
			fprintf(stderr, PROG ": thread %ld: PTRACE_SEIZE: %s\n", tid, strerror(e));
		return 1;
	}
	if (ptrace(PTRACE_INTERRUPT, (pid_t)tid, NULL, NULL) != 0) {
		fprintf(stderr, PROG ": thread %ld: PTRACE_INTERRUPT: %s\n", tid, strerror(errno));
		return 1;
	}
	/* The interrupt stop, or a signal-delivery stop that came first (handed back later). */
	for (;;) {
		pid_t r = waitpid((pid_t)tid, &status, __WALL);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			fprintf(stderr, PROG ": thread %ld: waitpid: %s\n", tid, strerror(errno));
			return 1;
		}
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			fprintf(stderr, PROG ": thread %ld: exited before it stopped\n", tid);
			return 1;
		}
		if (WIFSTOPPED(status)) {
			if ((status >> 16) != PTRACE_EVENT_STOP)
				pass_sig = WSTOPSIG(status);
			break;
		}
	}
	printf("stopped %ld\n", tid);
	fflush(stdout);

	if (until_eof)
		wait_stdin_eof();
	else
		sleep_ms(for_ms);

	if (ptrace(PTRACE_DETACH, (pid_t)tid, NULL, (void *)(long)pass_sig) != 0) {
		if (errno == ESRCH) {
			fprintf(stderr, PROG ": thread %ld: gone before it was released\n", tid);
			return 1;
		}
		fprintf(stderr, PROG ": thread %ld: PTRACE_DETACH: %s\n", tid, strerror(errno));
		return 1;
	}
	return 0;
}
