/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Benchmark client of tests/bench/request_cost: requests on one telemetry v2 connection
 * (SOCK_SEQPACKET), driven over stdin/stdout so that the driver can read the application's
 * thread times around each batch while this client alone talks to it.
 *
 * Usage: request_cost_client SOCKET
 * Connects, reads the greeting and prints "ready". Then, for each line
 * "REPS WINDOW WORK_US CMD [CMD...]" on stdin: sends REPS requests cycling through the CMDs,
 * and prints "ok CPU_NS BYTES" (this process's CPU time for the batch from
 * CLOCK_PROCESS_CPUTIME_ID, work included, and the reply bytes received). Ends at end of
 * file; on an error prints "error ..." and exits 1.
 *
 * WINDOW (1 to 64) requests are kept unanswered at a time, the way dtel_shared_query_many()
 * does: the first WINDOW go out in one sendmmsg(), then the replies are read one by one, in
 * order, and after each reply (and its work) one sendmmsg() refills the window. A window
 * never spans the end of a cycle through the CMDs (one cycle is one read of a collector: one
 * call of dtel_shared_query_many()). WINDOW 1 is one request after the reply of the last.
 * After each reply the client works WORK_US microseconds (0: none) the way a collector
 * parses and dispatches it: it walks a 4 MiB buffer in 64-byte strides, writing each line,
 * until WORK_US have passed on CLOCK_MONOTONIC; that evicts the caches, it does not just spin.
 *
 * No deadlock: a request is a few dozen bytes and at most 64 are unanswered, so this
 * client's socket send buffer (replies are charged to the application's) never fills; and
 * the sends are non-blocking anyway (MSG_DONTWAIT): what does not fit waits for the next
 * refill, after the next reply, which is always on its way since a request is unanswered.
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
#define MAX_WINDOW 64
#define LINE_LEN 65536
/* A reply is at most max_output_len (16 KiB in every release) plus a few bytes: room to spare. */
#define REPLY_LEN (1 << 20)
#define WORK_LEN (4u << 20)
#define WORK_STRIDE 64u

static char reply[REPLY_LEN];
static char line[LINE_LEN];
static unsigned char work_buf[WORK_LEN];

static uint64_t
clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* @us microseconds of walking work_buf, where the last walk stopped (a collector's parsing
 * and dispatching touches memory the application's thread then finds out of the caches). */
static void
work(long us)
{
	static size_t pos;
	uint64_t end;

	if (us <= 0)
		return;
	end = clock_ns(CLOCK_MONOTONIC) + (uint64_t)us * 1000u;
	do {
		for (int k = 0; k < 256; k++) {
			work_buf[pos]++;
			pos = (pos + WORK_STRIDE) % WORK_LEN;
		}
	} while (clock_ns(CLOCK_MONOTONIC) < end);
}

static int
fail(const char *what)
{
	printf("error %s: %s\n", what, strerror(errno));
	fflush(stdout);
	return 1;
}

/* Send requests @sent.. of the cycle while fewer than @window are unanswered, in one
 * sendmmsg(). The number sent (0 if the socket buffer is full), or -1 with errno. */
static int
refill(int s, char **cmds, const size_t *lens, long sent, long got, long end, long n, long window)
{
	struct mmsghdr msgs[MAX_WINDOW];
	struct iovec iov[MAX_WINDOW];
	unsigned int k = 0;
	int ret;

	while (sent + k < end && sent + k - got < window) {
		iov[k].iov_base = cmds[(sent + k) % n];
		iov[k].iov_len = lens[(sent + k) % n];
		memset(&msgs[k], 0, sizeof(msgs[k]));
		msgs[k].msg_hdr.msg_iov = &iov[k];
		msgs[k].msg_hdr.msg_iovlen = 1;
		k++;
	}
	if (k == 0)
		return 0;
	do
		/* Blocking only when nothing is unanswered: then this socket's buffer is empty. */
		ret = sendmmsg(s, msgs, k, sent == got ? 0 : MSG_DONTWAIT);
	while (ret < 0 && errno == EINTR);
	if (ret < 0 && errno == EAGAIN)
		return 0;
	return ret;
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
		long reps, window, work_us, sent = 0, got = 0;
		uint64_t bytes = 0, t0;
		int n = 0;

		tok = strtok_r(line, " \n", &save);
		reps = tok != NULL ? strtol(tok, NULL, 10) : 0;
		tok = strtok_r(NULL, " \n", &save);
		window = tok != NULL ? strtol(tok, NULL, 10) : 0;
		tok = strtok_r(NULL, " \n", &save);
		work_us = tok != NULL ? strtol(tok, NULL, 10) : -1;
		while (n < MAX_CMDS && (tok = strtok_r(NULL, " \n", &save)) != NULL) {
			cmds[n] = tok;
			lens[n] = strlen(tok);
			n++;
		}
		if (reps <= 0 || window < 1 || window > MAX_WINDOW || work_us < 0 || n == 0) {
			errno = EINVAL;
			return fail(
				"expected \"REPS WINDOW WORK_US CMD [CMD...]\" (WINDOW 1 to 64)");
		}
		t0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
		while (got < reps) {
			/* The end of this cycle through the CMDs: the window does not go past it.
			 */
			long end = (got / n + 1) * n < reps ? (got / n + 1) * n : reps;
			int ret = refill(s, cmds, lens, sent, got, end, n, window);
			ssize_t len;

			if (ret < 0)
				return fail("sendmmsg");
			sent += ret;
			len = recv(s, reply, sizeof(reply), 0);
			if (len <= 0) {
				if (len == 0)
					errno = ECONNRESET;
				return fail("recv");
			}
			bytes += (uint64_t)len;
			got++;
			work(work_us);
		}
		printf("ok %" PRIu64 " %" PRIu64 "\n", clock_ns(CLOCK_PROCESS_CPUTIME_ID) - t0,
			bytes);
		fflush(stdout);
	}
	return 0;
}
