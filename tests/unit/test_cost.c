/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a request costs the application (telemetry/cost.c, appcpu.c): service times learnt per
 * command, the CPU time of the application's thread that serves our connection, and a turn's
 * cost, the larger of the two.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <cmocka.h>

#include "dtel_private.h"
#include "fake_server.h"
#include "shared.h"
#include "shared_util.h"
#include "test_util.h"

/* What the application spent on each request (its thread's CPU time, a spinning driver's
 * delay here): at least its delay, single or pipelined. */
static void
request_cost_is_measured(void **state)
{
	struct fake_config cfg = {.handler = h_tagged};
	struct fake_server *fs = fs_start_path(&cfg);
	struct dtel_request rq = {.prio = DTEL_PRIO_READ, .timeout_ms = 2000, .window = 3};
	const char *p[3] = {"/t,20,a", "/t,20,b", "/t,20,c"};
	struct dtel_reply r[3] = {0};
	struct dtel_shared_load load;
	struct dtel_shared *sh;
	int res[3];
	uint64_t second;

	(void)state;
	tagged_reset();
	tagged_spin = true;
	assert_int_equal(dtel_shared_get(fs_path(fs), &sh), 0);
	assert_int_equal(dtel_shared_request(sh, &rq, "/t,30,x", &r[0]), 0);
	dtel_reply_release(&r[0]);
	assert_true(rq.service_ns >= 30 * 1000000ull && rq.service_ns < 1000 * 1000000ull);
	rq.service_ns = 0;
	assert_int_equal(dtel_shared_request_many(sh, &rq, p, 3, r, res), 0);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(res[i], 0);
		dtel_reply_release(&r[i]);
	}
	/* Three 20 ms answers one after the other: 60 ms, not the 20 ms of overlapping waits. */
	assert_true(rq.service_ns >= 60 * 1000000ull && rq.service_ns < 1000 * 1000000ull);
	/* The load counts whole seconds: once this one is over, it has our 90 ms in it. */
	second = test_now_ms() / 1000;
	while (test_now_ms() / 1000 == second)
		usleep(5000);
	dtel_shared_load(sh, &load);
	assert_true(load.measured >= 0.09 / 10 && load.measured < 1.0 / 10);
	assert_true(load.budget == 0); /* no class */
	tagged_spin = false;
	dtel_shared_put(sh);
	fs_stop(fs);
}

/* Half of each 10 ms reply on the CPU, half asleep (a driver that spins, then waits). */
static void
h_half_cpu(struct fake_server *fs, unsigned int c, const char *req, struct fake_reply *o, void *a)
{
	struct timespec t0, t;

	(void)fs, (void)c, (void)a, (void)req;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	do
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 5000000L);
	o->delay_ms = 5;
	o->data = fs_printf("{\"/x\":1}");
}

#define TURNS 10

/* What a turn of "/x" on @fs costs, the mean of TURNS after the first (which may take the
 * greeting's CPU too). The mean: the CPU time /proc shows of a thread that runs is updated at
 * the scheduler's ticks, so a turn's share may show in the next turn's. */
static uint64_t
turn_cost(struct fake_server *fs, struct dtel_shared **ret_sh)
{
	uint64_t sum = 0;

	assert_int_equal(dtel_shared_get(fs_path(fs), ret_sh), 0);
	for (int n = 0; n <= TURNS; n++) {
		struct dtel_request rq = {.prio = DTEL_PRIO_READ, .timeout_ms = 1000};
		struct dtel_reply r;

		assert_int_equal(dtel_shared_request(*ret_sh, &rq, "/x", &r), 0);
		dtel_reply_release(&r);
		if (n > 0)
			sum += rq.service_ns;
	}
	return sum / TURNS;
}

/*
 * A turn costs the application the larger of its service time and the CPU time of its
 * thread that serves us: 10 ms replies of which 5 ms on the CPU (a driver that spins, then
 * sleeps in the kernel holding its lock) cost 10 ms, not 5 (they cost 5 before: a sleeping
 * driver looked free, and its links were polled at every PollInterval).
 */
static void
service_time_counts_where_cpu_is_less(void **state)
{
	struct fake_config cfg = {.handler = h_half_cpu};
	struct fake_server *fs = fs_start_path(&cfg);
	uint64_t before = dtel__boottime_ns(), cpu, last;
	struct dtel_shared *sh;
	int fd;

	(void)state;
	assert_non_null(fs);
	last = turn_cost(fs, &sh);
	/* At least its 10 ms of service (more on a busy host), not the 5 ms of its CPU. */
	if (last < 9000000 || last > 100000000)
		fail_msg("a 10 ms reply of 5 ms CPU counted %" PRIu64 " ns", last);
	/* The thread it found is the fake's: one of this process, started after the connect. */
	assert_int_equal(dtel__server_thread(getpid(), before, &fd, NULL), 0);
	assert_int_equal(dtel__thread_cpu_ns(fd, &cpu), 0);
	assert_true(cpu >= 5000000); /* its 5 ms spins */
	close(fd);
	dtel_shared_put(sh);
	fs_stop(fs);
}

/* A reply at once, then 5 ms of the thread's CPU (its own work around the request). */
static void
h_after_cpu(struct fake_server *fs, unsigned int c, const char *req, struct fake_reply *o, void *a)
{
	(void)fs, (void)c, (void)a, (void)req;
	o->after_ms = 5;
	o->data = fs_printf("{\"/x\":1}");
}

/* ... and where the thread's CPU is more than the service time (a lone request wakes it), the
 * CPU time counts: a reply at once that costs the thread 5 ms costs about 5 ms. */
static void
cpu_time_counts_where_service_is_less(void **state)
{
	struct fake_config cfg = {.handler = h_after_cpu};
	struct fake_server *fs = fs_start_path(&cfg);
	struct dtel_shared *sh;
	uint64_t last;

	(void)state;
	assert_non_null(fs);
	last = turn_cost(fs, &sh);
	if (last < 3500000 || last > 20000000)
		fail_msg("a prompt reply of 5 ms CPU counted %" PRIu64 " ns", last);
	dtel_shared_put(sh);
	fs_stop(fs);
}

/* What a command costs is learnt from its replies, whatever its parameters, and told. */
static void
command_cost_is_told(void **state)
{
	struct fake_config cfg = {.handler = h_tagged};
	struct fake_server *fs = fs_start_path(&cfg);
	struct dtel_request rq = {.prio = DTEL_PRIO_READ, .timeout_ms = 2000};
	struct dtel_shared *sh;
	struct dtel_reply r;
	uint64_t ns;

	(void)state;
	tagged_reset();
	assert_int_equal(dtel_shared_get(fs_path(fs), &sh), 0);
	assert_int_equal(dtel_shared_cost(sh, "/t", &ns), -ENOENT);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(dtel_shared_request(sh, &rq, "/t,20,a", &r), 0);
		dtel_reply_release(&r);
	}
	assert_int_equal(dtel_shared_cost(sh, "/t,7,b", &ns), 0);
	assert_true(ns >= 20000000 && ns < 1000000000);
	assert_int_equal(dtel_shared_cost(sh, NULL, &ns), -EINVAL);
	dtel_shared_put(sh);
	fs_stop(fs);
}

/* Until the clock ticks of /proc's start times (CLK_TCK) have moved past @boot_ns's. */
static void
wait_next_tick(uint64_t boot_ns)
{
	uint64_t tick_ns = 1000000000u / (uint64_t)sysconf(_SC_CLK_TCK);
	uint64_t end = test_now_ms() + 1000;

	while (dtel__boottime_ns() / tick_ns <= boot_ns / tick_ns + 1 && test_now_ms() < end)
		usleep(1000);
}

static bool
thread_gone(long tid, int deadline_ms)
{
	char path[64];
	uint64_t end = test_now_ms() + (uint64_t)deadline_ms;

	snprintf(path, sizeof(path), "/proc/self/task/%ld", tid);
	while (access(path, F_OK) == 0)
		if (test_now_ms() >= end)
			return false;
		else
			usleep(1000);
	return true;
}

static void *
idle_thread(void *arg)
{
	pthread_setname_np(pthread_self(), "busy-worker");
	while (!__atomic_load_n((bool *)arg, __ATOMIC_RELAXED))
		usleep(1000);
	return NULL;
}

/*
 * The thread that serves our connection is the telemetry client thread started once we
 * connected, not a thread of another kind started after it (a forwarding core, an OVS pmd
 * thread): it ends when our connection does. Failed before (the newest thread was taken).
 */
static void
server_thread_is_a_telemetry_client(void **state)
{
	struct fake_config cfg = {.handler = h_echo_or_silent};
	struct fake_server *fs = fs_start_path(&cfg);
	uint64_t before = dtel__boottime_ns();
	struct dtel_shared *sh;
	pthread_t worker;
	bool stop = false;
	long tid;
	int fd;

	(void)state;
	assert_int_equal(dtel_shared_get(fs_path(fs), &sh), 0);
	assert_int_equal(query_echo(sh, 1000), 0);
	/* The worker starts clock ticks after the connection: the newest thread by far. */
	wait_next_tick(dtel__boottime_ns());
	assert_int_equal(pthread_create(&worker, NULL, idle_thread, &stop), 0);
	assert_int_equal(dtel__server_thread(getpid(), before, &fd, &tid), 0);
	close(fd);
	assert_true(tid > 0);
	dtel_shared_put(sh); /* the connection closes: its thread ends, the listener stays */
	assert_true(thread_gone(tid, 2000));
	__atomic_store_n(&stop, true, __ATOMIC_RELAXED);
	pthread_join(worker, NULL);
	fs_stop(fs);
}

static int
raw_connect(const char *path)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	char greeting[256];
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	assert_true(recv(fd, greeting, sizeof(greeting), 0) > 0); /* its thread runs */
	return fd;
}

/* Two clients' threads started since we connected: which is ours is not known, and none is
 * taken; once one of them ends, the other is. */
static void
server_thread_not_guessed(void **state)
{
	struct fake_config cfg = {.handler = h_echo_or_silent};
	struct fake_server *fs = fs_start_path(&cfg);
	uint64_t before = dtel__boottime_ns(), end;
	int a, b, fd, ret;

	(void)state;
	a = raw_connect(fs_path(fs));
	b = raw_connect(fs_path(fs));
	assert_int_equal(dtel__server_thread(getpid(), before, &fd, NULL), -EEXIST);
	close(b);
	end = test_now_ms() + 2000; /* until b's thread has ended */
	while ((ret = dtel__server_thread(getpid(), before, &fd, NULL)) == -EEXIST &&
		test_now_ms() < end)
		usleep(1000);
	assert_int_equal(ret, 0);
	close(fd);
	close(a);
	fs_stop(fs);
}

/* The thread's schedstat as /proc shows it: its run time (ns) first. */
static void
show_cpu(int fd, uint64_t ns)
{
	char line[64];
	int n = snprintf(line, sizeof(line), "%" PRIu64 " 0 0\n", ns);

	assert_int_equal(ftruncate(fd, 0), 0);
	assert_int_equal(pwrite(fd, line, (size_t)n, 0), n);
}

#define MS 1000000ull

/*
 * CPU time that /proc shows only at the next turn (the kernel brings a running thread's run
 * time up to date at its next tick or context switch) is charged once, to the turn that
 * spent it: a 15 ms xstats read of which 12 ms show by its reply is charged 15 ms, and the
 * link poll after it its own 0.4 ms, not 3.4 (it was: that poll's link, taken for 8 times
 * dearer, was polled 8 times less often). What is carried is at most a tick's worth, so a
 * sleeping driver's service time never hides more than that of a later turn's CPU, and the
 * charges stay at least the CPU time shown over any run of turns.
 */
static void
late_cpu_charged_once(void **state)
{
	char path[] = "/tmp/dtel-schedstat-XXXXXX";
	struct dtel_shared *sh;
	uint64_t cpu = 1000 * MS;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(dtel_shared_get("/tmp/dtel-cost-lag/dpdk_telemetry.v2", &sh), 0);
	show_cpu(fd, cpu);
	sh->cpu_fd = fd;
	sh->cpu_ns = cpu;
	show_cpu(fd, cpu += 12 * MS);
	assert_int_equal(dtel__turn_cost(sh, 15 * MS), 15 * MS);
	show_cpu(fd, cpu += 3 * MS + 400000);
	assert_int_equal(dtel__turn_cost(sh, 400000), 400000);
	/* Nothing owed now: a turn of more CPU than service (wake-ups) is charged its CPU. */
	show_cpu(fd, cpu += 2 * MS);
	assert_int_equal(dtel__turn_cost(sh, 100000), 2 * MS);
	/* A sleeping driver: 10 ms of service, 1 ms of CPU; of the next turn's 6 ms of CPU,
	 * at most a tick's 4 ms are taken for the sleeper's. */
	show_cpu(fd, cpu += 1 * MS);
	assert_int_equal(dtel__turn_cost(sh, 10 * MS), 10 * MS);
	show_cpu(fd, cpu += 6 * MS);
	assert_int_equal(dtel__turn_cost(sh, 100000), 2 * MS);
	dtel_shared_put(sh); /* closes fd */
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(request_cost_is_measured),
		cmocka_unit_test(service_time_counts_where_cpu_is_less),
		cmocka_unit_test(cpu_time_counts_where_service_is_less),
		cmocka_unit_test(command_cost_is_told),
		cmocka_unit_test(server_thread_is_a_telemetry_client),
		cmocka_unit_test(server_thread_not_guessed),
		cmocka_unit_test(late_cpu_charged_once),
	};

	if (getenv("DTEL_TEST_FILTER"))
		cmocka_set_test_filter(getenv("DTEL_TEST_FILTER"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
