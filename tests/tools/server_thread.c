/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * server_thread: which thread of a DPDK application libdpdktel takes for the one that serves
 * its connection (appcpu.c dtel__server_thread()), for tests against real DPDK releases.
 *
 *   server_thread SOCKET_PATH
 *
 * Connects, prints "tid TID" (or "error -ERRNO") and flushes, keeps the connection open
 * until stdin reaches EOF, then closes it. DPDK's thread for a client ends when the client
 * goes (lib/telemetry/telemetry.c client_handler()), so a test can check that the thread
 * named was ours. Exit codes: 0 a thread found, 1 none or an error, 2 bad usage.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "dtel_private.h"

int
main(int argc, char **argv)
{
	struct dtel_session *s;
	uint64_t opened;
	long pid, tid;
	char c;
	int fd, ret;

	if (argc != 2) {
		fprintf(stderr, "usage: server_thread SOCKET_PATH\n");
		return 2;
	}
	ret = dtel_session_open(argv[1], 5000, &s);
	if (ret < 0) {
		fprintf(stderr, "server_thread: %s: %s\n", argv[1], strerror(-ret));
		return 1;
	}
	dtel__session_peer(s, &pid, &opened);
	ret = dtel__server_thread(pid, opened, &fd, &tid);
	if (ret == 0) {
		printf("tid %ld\n", tid);
		close(fd);
	} else {
		printf("error %d\n", ret);
	}
	fflush(stdout);
	while (read(STDIN_FILENO, &c, 1) > 0)
		;
	dtel_session_close(s);
	return ret == 0 ? 0 : 1;
}
