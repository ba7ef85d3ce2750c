/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Benchmark client of tests/bench/request_cost: sequential requests on one telemetry v2
 * connection (SOCK_SEQPACKET), driven over stdin/stdout so that the driver can read the
 * application's thread times around each batch while this client alone talks to it.
 *
 * Usage: request_cost_client SOCKET
 * Connects, reads the greeting and prints "ready". Then, for each line "REPS CMD [CMD...]"
 * on stdin: sends REPS requests one after another (the next after the reply of the last),
 * cycling through the CMDs, and prints "ok CPU_NS BYTES" (this process's CPU time for the
 * batch from CLOCK_PROCESS_CPUTIME_ID, and the reply bytes received). Ends at end of file;
 * on an error prints "error ..." and exits 1.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define MAX_CMDS 256
#define LINE_LEN 65536
/* A reply is at most max_output_len (16 KiB in every release) plus a few bytes: room to spare. */
#define REPLY_LEN (1 << 20)

static char reply[REPLY_LEN];
static char line[LINE_LEN];

static uint64_t
cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int
fail(const char *what)
{
	printf("error %s: %s\n", what, strerror(errno));
	fflush(stdout);
	return 1;
}

int
main(int argc, char **argv)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	char *cmds[MAX_CMDS];
	size_t lens[MAX_CMDS];
	int s;

	if (argc != 2 || strlen(argv[1]) >= sizeof(addr.sun_path)) {
		fprintf(stderr, "usage: %s SOCKET (shorter than %zu bytes)\n", argv[0],
			sizeof(addr.sun_path));
		return 2;
	}
	strcpy(addr.sun_path, argv[1]);
	s = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	if (s < 0)
		return fail("socket");
	if (connect(s, (struct sockaddr *)&addr, sizeof(addr)) != 0)
		return fail("connect");
	if (recv(s, reply, sizeof(reply), 0) <= 0)
		return fail("greeting");
	printf("ready\n");
	fflush(stdout);

	while (fgets(line, sizeof(line), stdin) != NULL) {
		char *save = NULL, *tok;
		uint64_t bytes = 0, t0;
		long reps;
		int n = 0;

		tok = strtok_r(line, " \n", &save);
		reps = tok != NULL ? strtol(tok, NULL, 10) : 0;
		while (n < MAX_CMDS && (tok = strtok_r(NULL, " \n", &save)) != NULL) {
			cmds[n] = tok;
			lens[n] = strlen(tok);
			n++;
		}
		if (reps <= 0 || n == 0) {
			errno = EINVAL;
			return fail("expected \"REPS CMD [CMD...]\"");
		}
		t0 = cpu_ns();
		for (long i = 0; i < reps; i++) {
			ssize_t got;

			if (send(s, cmds[i % n], lens[i % n], 0) < 0)
				return fail("send");
			got = recv(s, reply, sizeof(reply), 0);
			if (got <= 0) {
				if (got == 0)
					errno = ECONNRESET;
				return fail("recv");
			}
			bytes += (uint64_t)got;
		}
		printf("ok %" PRIu64 " %" PRIu64 "\n", cpu_ns() - t0, bytes);
		fflush(stdout);
	}
	return 0;
}
