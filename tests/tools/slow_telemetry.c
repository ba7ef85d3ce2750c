/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dtel_slow_telemetry.so: make a real DPDK application's telemetry as slow as a real driver's.
 *
 *   DTEL_SLOW_TELEMETRY="/ethdev/xstats=15ms,/ethdev/link_status=2ms" \
 *   LD_PRELOAD=build/tests/tools/dtel_slow_telemetry.so dpdk-testpmd ...
 *
 * On NICs, /ethdev/xstats and /ethdev/link_status call into the driver, which can take
 * milliseconds (mlx5 asks the kernel through ethtool ioctls; i40e/ice send admin-queue
 * commands to the firmware and poll for the answer with rte_delay_us_block()). net_null and
 * net_tap answer in microseconds. This shim delays the application's reply to the chosen
 * commands, on the application's own telemetry thread, before the reply leaves.
 *
 * Where the reply leaves: DPDK's lib/telemetry/telemetry.c serves each v2 client on a thread
 * of its own, client_handler(), which read()s one request datagram, looks the command up and
 * calls perform_command(); that calls the command's callback and writes the reply with
 * write(s, out_buf, used) on the client's socket, in output_json() (a value), or itself (a
 * callback error: {"<cmd>":null}). client_handler() writes the greeting with write() too.
 * So it is in DPDK 22.11 (Debian's librte_telemetry.so.23, whose only socket I/O imports are
 * read and write) and in 25.11 (output_json(), perform_command(), client_handler() of
 * dpdk-25.11.2); the librte_telemetry of 23.11, 24.11 and 26.07 import the same two
 * (objdump -T). None uses send(), sendmsg() or writev(). So the shim interposes write(): a
 * write() to an AF_UNIX SOCK_SEQPACKET socket whose bytes begin {"<command>": of a rule spins
 * (or sleeps) for that rule's delay, then the real write() sends it. The reply begins with
 * the command alone (output_json(): "{\"%.*s\":"), whatever its parameters were. Nothing
 * else is touched: the greeting ({"version":...), the legacy v1 socket's replies, the
 * application's own output.
 *
 * DTEL_SLOW_TELEMETRY_MODE=busy (default) spins on CLOCK_MONOTONIC with a pause instruction,
 * as rte_delay_us_block() does: the delay is on-CPU time of the telemetry thread, what a slow
 * driver costs the application. =sleep blocks in clock_nanosleep() (mlx5's ioctl).
 *
 * Threads: DPDK answers each client on its own thread, so write() runs on several at once.
 * The specification is parsed once, in the constructor, before EAL starts any thread, and is
 * only read afterwards. A bad specification prints one line on stderr and delays nothing;
 * the application runs as without the shim. Grammar: slow_spec.h.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "slow_spec.h"

#define PROG "dtel_slow_telemetry"

typedef ssize_t (*write_fn)(int, const void *, size_t);

static struct slow_spec spec; /* written by the constructor only */
static write_fn real_write;

static void slow_init(void) __attribute__((constructor));

static void
slow_init(void)
{
	const char *rules = getenv("DTEL_SLOW_TELEMETRY");
	const char *mode = getenv("DTEL_SLOW_TELEMETRY_MODE");
	char err[512], desc[512];

	real_write = (write_fn)dlsym(RTLD_NEXT, "write");
	if (rules == NULL)
		return; /* inherited LD_PRELOAD in a child that has no rules: nothing to do */
	if (slow_spec_parse(rules, mode, &spec, err, sizeof(err)) < 0) {
		fprintf(stderr, PROG ": %s; no reply is delayed\n", err);
		return;
	}
	slow_spec_describe(&spec, desc, sizeof(desc));
	fprintf(stderr, PROG ": pid %ld delays its telemetry replies: %s\n", (long)getpid(), desc);
}

static bool
is_seqpacket_unix(int fd)
{
	int type = 0, domain = 0;
	socklen_t len = sizeof(type);

	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0 || type != SOCK_SEQPACKET)
		return false;
	len = sizeof(domain);
	return getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) == 0 && domain == AF_UNIX;
}

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void
cpu_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield");
#endif
}

static void
delay(uint64_t ns)
{
	uint64_t deadline = now_ns() + ns;
	struct timespec ts = {.tv_sec = (time_t)(deadline / 1000000000u),
		.tv_nsec = (long)(deadline % 1000000000u)};

	if (!spec.sleep) {
		while (now_ns() < deadline)
			cpu_pause();
		return;
	}
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* The one symbol this object exports (built with hidden visibility). */
__attribute__((visibility("default"))) ssize_t
write(int fd, const void *buf, size_t n)
{
	const struct slow_rule *r;

	/* Matched on the bytes first: two getsockopt() calls only for a telemetry reply. */
	if (spec.n > 0 && (r = slow_spec_match(&spec, buf, n)) != NULL && is_seqpacket_unix(fd))
		delay(r->delay_ns);
	if (real_write == NULL) /* a write() from another library's constructor, before ours */
		return syscall(SYS_write, fd, buf, n);
	return real_write(fd, buf, n);
}
