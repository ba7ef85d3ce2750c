/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared sessions (telemetry/registry.c, request.c): one connection per socket for the whole
 * process, one request at a time, reconnection with backoff, restart detection (by pid, start
 * time and socket file). The queue's rules: test_queue.c; costs: test_cost.c; budgets:
 * test_budget.c, test_plan.c.
 */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "dtel_private.h"
#include "fake_server.h"
#include "shared_util.h"
#include "test_util.h"

#define THREADS 8
#define PER_THREAD 50

/*
 * Faults of the kernel that no fake server can make: this program's sendmmsg() and recvmsg()
 * stand in for libc's (the library is linked in statically, so its calls land here) and,
 * when armed by a test, fail once on the thread that armed them, as the kernel can: ENOBUFS
 * (no memory for the socket buffer) and ENOMEM end neither the connection nor anything else.
 */
static struct {
	pthread_t thread;
	bool armed;
	int mmsg_calls; /* sendmmsg(): the first sends one message only, the next fails */
	bool recv_fail; /* recvmsg(): the next call fails */
	int err;
} fault;

static bool
fault_here(void)
{
	return fault.armed && pthread_equal(pthread_self(), fault.thread);
}

int
sendmmsg(int fd, struct mmsghdr *msgs, unsigned int n, int flags)
{
	int (*real)(int, struct mmsghdr *, unsigned int, int) =
		(int (*)(int, struct mmsghdr *, unsigned int, int))dlsym(RTLD_NEXT, "sendmmsg");

	if (fault_here() && fault.mmsg_calls++ == 1) {
		fault.armed = false;
		errno = fault.err;
		return -1;
	}
	return real(fd, msgs, fault_here() && n > 1 ? 1 : n, flags);
}

ssize_t
recvmsg(int fd, struct msghdr *msg, int flags)
{
	ssize_t (*real)(int, struct msghdr *, int) =
		(ssize_t(*)(int, struct msghdr *, int))dlsym(RTLD_NEXT, "recvmsg");

	if (fault_here() && fault.recv_fail) {
		fault.armed = false;
		errno = fault.err;
		return -1;
	}
	return real(fd, msg, flags);
}

static void
arm_fault(bool recv_fail, int err)
{
	fault.thread = pthread_self();
	fault.mmsg_calls = 0;
	fault.recv_fail = recv_fail;
	fault.err = err;
	fault.armed = true;
}

struct worker {
	struct dtel_shared *sh;
	int id;
	int wrong;
	int failed;
};

static void *
worker_main(void *arg)
{
	struct worker *w = arg;

	for (int i = 0; i < PER_THREAD; i++) {
		char cmd[64], want[96];
		struct dtel_reply r;

		snprintf(cmd, sizeof(cmd), "/echo,%d-%d", w->id, i);
		snprintf(want, sizeof(want), "{\"/echo\":\"%d-%d\"}", w->id, i);
		if (dtel_shared_query(w->sh, cmd, 5000, &r) < 0) {
			w->failed++;
			continue;
		}
		if (strcmp(r.json, want) != 0)
			w->wrong++;
		dtel_reply_release(&r);
	}
	return NULL;
}

static void
eight_threads_get_their_own_answers(void **state)
{
	struct fake_config cfg = {.handler = h_echo_slow};
	struct fake_server *fs = fs_start_path(&cfg);
	struct worker w[THREADS];
	pthread_t t[THREADS];

	(void)state;
	assert_non_null(fs);
	for (int i = 0; i < THREADS; i++) {
		w[i] = (struct worker){.id = i};
		assert_int_equal(dtel_shared_get(fs_path(fs), &w[i].sh), 0);
		assert_int_equal(pthread_create(&t[i], NULL, worker_main, &w[i]), 0);
	}
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(w[i].failed, 0);
		assert_int_equal(w[i].wrong, 0);
	}
	assert_int_equal(fs_requests(fs), THREADS * PER_THREAD);
	assert_false(fs_saw_overlap(fs));
	assert_int_equal(fs_connections(fs), 1);
	for (int i = 0; i < THREADS; i++)
		dtel_shared_put(w[i].sh);
	fs_stop(fs);
}

static void
same_path_same_session(void **state)
{
	struct dtel_shared *a, *b, *c;

	(void)state;
	assert_int_equal(dtel_shared_get("/tmp/x/dpdk_telemetry.v2", &a), 0);
	assert_int_equal(dtel_shared_get("/tmp/x/dpdk_telemetry.v2", &b), 0);
	assert_int_equal(dtel_shared_get("/tmp/y/dpdk_telemetry.v2", &c), 0);
	assert_ptr_equal(a, b);
	assert_ptr_not_equal(a, c);
	assert_string_equal(dtel_shared_path(a), "/tmp/x/dpdk_telemetry.v2");
	dtel_shared_put(a);
	dtel_shared_put(b);
	dtel_shared_put(c);
	assert_int_equal(dtel_shared_get("", &a), -EINVAL);
}

#define MANY 40

/* More requests than the window: each reply in its place, sent ahead of the replies (the
 * server takes 1 ms a reply, longer than our sends, even under a sanitizer, and the command's
 * cost is known to be cheap: the batch keeps its whole window in flight). */
static void
many_replies_in_order(void **state)
{
	struct fake_config cfg = {.handler = h_echo_slow};
	struct fake_server *fs = fs_start_path(&cfg);
	char cmds[MANY][32];
	const char *p[MANY];
	struct dtel_reply r[MANY];
	int res[MANY];
	struct dtel_shared *sh;

	(void)state;
	for (int i = 0; i < MANY; i++) {
		snprintf(cmds[i], sizeof(cmds[i]), i == 7 ? "/nothing" : "/echo,%d", i);
		p[i] = cmds[i];
	}
	assert_int_equal(dtel_shared_get(fs_path(fs), &sh), 0);
	seed_cost(sh, "/echo", 10 * 1000);
	assert_int_equal(dtel_shared_query_many(sh, p, MANY, 8, 2000, r, res), 0);
	for (int i = 0; i < MANY; i++) {
		char want[48];

		snprintf(want, sizeof(want), "{\"/echo\":\"%d\"}", i);
		assert_int_equal(res[i], i == 7 ? -ENODATA : 0);
		if (i != 7)
			assert_string_equal(r[i].json, want);
		dtel_reply_release(&r[i]);
	}
	assert_int_equal(fs_requests(fs), MANY);
	assert_true(fs_saw_pipelined(fs));
	assert_false(fs_saw_overlap(fs));
	assert_int_equal(fs_connections(fs), 1);
	assert_int_equal(dtel_shared_query_many(sh, p, 1, 0, 2000, r, res), -EINVAL);
	assert_int_equal(
		dtel_shared_query_many(sh, p, 1, DTEL_QUERY_MANY_WINDOW_MAX + 1, 2000, r, res),
		-EINVAL);
	dtel_shared_put(sh);
	fs_stop(fs);
}

/* A request that is never answered: those before it have their replies, it times out,
 * those sent after it were never answered (-ECONNABORTED); the next request reconnects. */
static void
many_stops_at_a_hung_request(void **state)
{
	struct fake_config cfg = {.handler = h_echo_or_silent};
	struct fake_server *fs = fs_start_path(&cfg);
	const char *p[] = {"/echo,a", "/echo,b", "/silent", "/echo,c", "/echo,d"};
	struct dtel_reply r[5];
	struct dtel_shared_status st;
	struct dtel_shared *sh;
	int res[5];

	(void)state;
	assert_int_equal(dtel_shared_get(fs_path(fs), &sh), 0);
	seed_cost(sh, "/echo", 10 * 1000); /* cheap: the batch keeps its window of 4 */
	assert_int_equal(dtel_shared_query_many(sh, p, 5, 4, 200, r, res), 0);
	assert_int_equal(res[0], 0);
	assert_string_equal(r[1].json, "{\"/echo\":\"b\"}");
	assert_int_equal(res[2], -ETIMEDOUT);
	/* Sent (the window refilled as a and b were answered), their replies never read. */
	assert_int_equal(res[3], -ECONNABORTED);
	assert_int_equal(res[4], -ECONNABORTED);
	assert_null(r[3].json);
	dtel_reply_release(&r[0]);
	dtel_reply_release(&r[1]);
	dtel_shared_status(sh, &st);
	assert_int_equal(st.last_error, -ETIMEDOUT);
	assert_false(st.connected);
	assert_int_equal(query_echo(sh, 500), 0);
	assert_int_equal(fs_connections(fs), 2);
	dtel_shared_put(sh);
	fs_stop(fs);
}

/* The same with a window of one: the requests after the hung one were never sent, so they
 * did not fail (-ECANCELED), whatever the reason the batch ended with. Failed before: the
 * first of them took the batch's -ETIMEDOUT, and dpdktel_events counted a second timeout
 * for one slow reply (tests/plugin/test_events.c one_slow_reply_is_no_outage, now and then
 * on a loaded machine, where a slow estimate narrowed the window). */
static void
many_hung_request_fails_alone(void **state)
{
	struct fake_config cfg = {.handler = h_echo_or_silent};
	struct fake_server *fs = fs_start_path(&cfg);
	const char *p[] = {"/echo,a", "/silent", "/echo,c", "/echo,d"};
	struct dtel_reply r[4];
	struct dtel_shared *sh;
	int res[4];

	(void)state;
	assert_int_equal(dtel_shared_get(fs_path(fs), &sh), 0);
	assert_int_equal(dtel_shared_query_many(sh, p, 4, 1, 200, r, res), 0);
	assert_int_equal(res[0], 0);
	assert_int_equal(res[1], -ETIMEDOUT);
	assert_int_equal(res[2], -ECANCELED);
	assert_int_equal(res[3], -ECANCELED);
	dtel_reply_release(&r[0]);
	assert_int_equal(fs_requests(fs), 2);
	dtel_shared_put(sh);
	fs_stop(fs);
}

/* Threads mixing single requests and batches on one shared connection get their own
 * answers: a batch holds the connection until its last reply. */
static void *
many_worker(void *arg)
{
	struct worker *w = arg;

	for (int i = 0; i < 10; i++) {
		char cmds[4][32], want[48];
		const char *p[4];
		struct dtel_reply r[4];
		int res[4];

		for (int k = 0; k < 4; k++) {
			snprintf(cmds[k], sizeof(cmds[k]), "/echo,%d-%d-%d", w->id, i, k);
			p[k] = cmds[k];
		}
		if (dtel_shared_query_many(w->sh, p, 4, 4, 5000, r, res) < 0) {
			w->failed++;
			continue;
		}
		for (int k = 0; k < 4; k++) {
			snprintf(want, sizeof(want), "{\"/echo\":\"%d-%d-%d\"}", w->id, i, k);
			if (res[k] != 0)
				w->failed++;
			else if (strcmp(r[k].json, want) != 0)
				w->wrong++;
			dtel_reply_release(&r[k]);
		}
	}
	return NULL;
}

static void
many_and_single_from_threads(void **state)
{
	struct fake_config cfg = {.handler = h_echo_slow};
	struct fake_server *fs = fs_start_path(&cfg);
	struct worker w[4];
	pthread_t t[4];

	(void)state;
	assert_non_null(fs);
	for (int i = 0; i < 4; i++) {
		w[i] = (struct worker){.id = i};
		assert_int_equal(dtel_shared_get(fs_path(fs), &w[i].sh), 0);
		assert_int_equal(
			pthread_create(&t[i], NULL, i % 2 ? many_worker : worker_main, &w[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(w[i].failed, 0);
		assert_int_equal(w[i].wrong, 0);
	}
	assert_int_equal(fs_requests(fs), 2 * PER_THREAD + 2 * 40);
	assert_false(fs_saw_overlap(fs));
	assert_int_equal(fs_connections(fs), 1);
	for (int i = 0; i < 4; i++)
		dtel_shared_put(w[i].sh);
	fs_stop(fs);
}

/* Application a (then b, the same socket path) in a new temp dir, and a shared session. */
static struct fake_server *
start_in_tmpdir(char *dir, char *path, size_t size, struct fake_config *a, struct fake_config *b,
	struct dtel_shared **ret_sh)
{
	struct fake_server *fs;

	assert_int_equal(test_tmpdir("reg", dir, 32), 0);
	snprintf(path, size, "%s/dpdk_telemetry.v2", dir);
	a->path = b->path = path;
	fs = fs_start_path(a);
	assert_int_equal(dtel_shared_get(path, ret_sh), 0);
	return fs;
}

static void
restart_changes_generation(void **state)
{
	char dir[32], path[128];
	struct fake_config a = {.pid = 100}, b = {.pid = 200};
	struct dtel_shared_status st;
	struct dtel_shared *sh;
	struct fake_server *fs = start_in_tmpdir(dir, path, sizeof(path), &a, &b, &sh);

	(void)state;
	dtel_shared_status(sh, &st);
	assert_int_equal(st.generation, 0);
	assert_false(st.connected);
	assert_int_equal(query_echo(sh, 500), 0);
	dtel_shared_status(sh, &st);
	assert_int_equal(st.generation, 1);
	assert_int_equal(st.greeting.pid, 100);
	assert_true(st.connected);
	/* The application restarts between two requests: the next one just works. */
	fs_stop(fs);
	fs = fs_start_path(&b);
	assert_int_equal(query_echo(sh, 500), 0);
	dtel_shared_status(sh, &st);
	assert_int_equal(st.generation, 2);
	assert_int_equal(st.connects, 2);
	assert_int_equal(st.greeting.pid, 200);
	assert_int_equal(st.last_error, 0);
	dtel_shared_put(sh);
	fs_stop(fs);
	test_rmdir(dir);
}

static void
h_close_each(struct fake_server *fs, unsigned int c, const char *req, struct fake_reply *o, void *a)
{
	(void)fs, (void)c, (void)a, (void)req;
	o->data = fs_printf("{\"/echo\":\"x\"}");
	o->action = FAKE_CLOSE; /* reply, then close */
}

/* Three reconnects to one socket file of one process: one generation, even after a chmod of the
 * socket (a new change time: dpdktel-fwd --telemetry-group), where the pid SO_PEERCRED gives
 * and its start time show the same process. */
static void
reconnect_same_socket_keeps_generation(void **state)
{
	struct fake_config cfg = {.pid = 77, .handler = h_close_each};
	struct fake_server *fs = fs_start_path(&cfg);
	struct dtel_shared_status st;
	struct dtel_shared *sh;

	(void)state;
	assert_int_equal(dtel_shared_get(fs_path(fs), &sh), 0);
	for (unsigned int i = 0; i < 3; i++) {
		uint64_t deadline = test_now_ms() + 3000;

		assert_int_equal(query_echo(sh, 500), 0);
		/* Let the close land first: a close racing a request is a real failure. */
		while (fs_closed(fs) < i + 1 && test_now_ms() < deadline)
			usleep(1000);
		if (i == 0)
			assert_int_equal(chmod(fs_path(fs), 0770), 0);
	}
	dtel_shared_status(sh, &st);
	assert_int_equal(st.connects, 3);
	assert_int_equal(st.generation, 1);
	/* The pid to read /proc with is SO_PEERCRED's (the fake server is this process), not the
	 * greeting's; its start time comes with it. */
	assert_int_equal(st.owner_pid, getpid());
	assert_int_equal(st.greeting.pid, 77);
	assert_true(st.owner_start != 0);
	assert_true(st.owner_start == dtel__proc_start_ticks(getpid()));
	dtel_shared_put(sh);
	fs_stop(fs);
}

/*
 * An application that starts again with the pid it had, as an entrypoint is pid 1 of its own
 * namespace at every start: the greeting's pid does not change, but the socket file is a new
 * one (a new inode: the old file is kept linked meanwhile, so that the file system cannot hand
 * its inode back). A new generation.
 */
static void
new_socket_same_greeting_pid_is_a_restart(void **state)
{
	char dir[32], path[128], keep[160];
	struct fake_config a = {.pid = 1, .handler = h_close_each}, b = {.pid = 1};
	struct dtel_shared_status st;
	struct dtel_shared *sh;
	struct fake_server *fs = start_in_tmpdir(dir, path, sizeof(path), &a, &b, &sh);
	uint64_t deadline = test_now_ms() + 3000;

	(void)state;
	assert_int_equal(query_echo(sh, 500), 0);
	while (fs_closed(fs) < 1 && test_now_ms() < deadline)
		usleep(1000);
	snprintf(keep, sizeof(keep), "%s.old", path);
	assert_int_equal(link(path, keep), 0);
	fs_stop(fs);
	fs = fs_start_path(&b);
	assert_non_null(fs);
	assert_int_equal(query_echo(sh, 500), 0);
	dtel_shared_status(sh, &st);
	assert_int_equal(st.connects, 2);
	assert_int_equal(st.greeting.pid, 1);
	assert_int_equal(st.generation, 2);
	unlink(keep);
	dtel_shared_put(sh);
	fs_stop(fs);
	test_rmdir(dir);
}

static void
absent_socket_reports_enoent(void **state)
{
	struct dtel_shared_status st;
	struct dtel_shared *sh;

	(void)state;
	assert_int_equal(dtel_shared_get("/tmp/dtel-none-here/dpdk_telemetry.v2", &sh), 0);
	assert_int_equal(query_echo(sh, 100), -ENOENT);
	/* Backing off: not sent, said at once; the status keeps the refusal's error. */
	assert_int_equal(query_echo(sh, 100), -EAGAIN);
	dtel_shared_status(sh, &st);
	assert_int_equal(st.last_error, -ENOENT);
	assert_false(st.connected);
	dtel_shared_put(sh);
}

static void
backoff_limits_connect_attempts(void **state)
{
	struct fake_config cfg = {.close_at_accept = true};
	struct fake_server *fs = fs_start_path(&cfg);
	struct dtel_shared *sh;
	uint64_t deadline;

	(void)state;
	assert_int_equal(dtel_shared_get(fs_path(fs), &sh), 0);
	assert_int_equal(query_echo(sh, 200), -ECONNRESET);
	assert_int_equal(fs_connections(fs), 1);
	assert_int_equal(query_echo(sh, 200), -EAGAIN);
	assert_int_equal(fs_connections(fs), 1); /* within the backoff: no new connection */
	/* After the backoff (25 ms, then 50 ms, ...) it tries again by itself. */
	deadline = test_now_ms() + 3000;
	while (fs_connections(fs) < 2 && test_now_ms() < deadline) {
		query_echo(sh, 200);
		usleep(5000);
	}
	assert_int_equal(fs_connections(fs), 2);
	dtel_shared_put(sh);
	fs_stop(fs);
}

/* A socket file nobody listens on, as a killed application leaves it. */
static void
stale_socket(const char *path)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);

	assert_true(fd >= 0);
	assert_true(strlen(path) < sizeof(addr.sun_path));
	memcpy(addr.sun_path, path, strlen(path) + 1);
	assert_int_equal(bind(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
	close(fd);
}

/* Fail until the backoff is at least 400 ms; returns the error of the last refused connect. */
static int
fail_for_400ms(struct dtel_shared *sh)
{
	uint64_t end = test_now_ms() + 400;
	struct dtel_shared_status st;

	while (test_now_ms() < end) {
		query_echo(sh, 100);
		usleep(5000);
	}
	dtel_shared_status(sh, &st);
	return st.last_error;
}

static void
new_socket_skips_backoff(void **state)
{
	char dir[32], path[128];
	struct fake_config a = {.pid = 100}, b = {.pid = 200};
	struct dtel_shared_status st;
	struct dtel_shared *sh;
	struct fake_server *fs = start_in_tmpdir(dir, path, sizeof(path), &a, &b, &sh);

	(void)state;
	assert_int_equal(query_echo(sh, 500), 0);
	/* Killed: the socket file stays (stale), connecting fails and backs off. */
	fs_stop(fs);
	stale_socket(path);
	assert_int_equal(fail_for_400ms(sh), -ECONNREFUSED);
	assert_int_equal(query_echo(sh, 100), -EAGAIN); /* same file: still backing off */
	/* Started again: a new socket file at the path is tried at once, not after the
	 * backoff (which is 400 ms or more by now). */
	fs = fs_start_path(&b);
	assert_int_equal(query_echo(sh, 500), 0);
	dtel_shared_status(sh, &st);
	assert_int_equal(st.greeting.pid, 200);
	assert_int_equal(st.generation, 2);
	/* Gone without a socket file, then back: the same. */
	fs_stop(fs);
	assert_int_equal(fail_for_400ms(sh), -ENOENT);
	fs = fs_start_path(&a);
	assert_int_equal(query_echo(sh, 500), 0);
	dtel_shared_put(sh);
	fs_stop(fs);
	test_rmdir(dir);
}

/* One connection of a socket that listens late: greet it and answer one request. */
static void *
late_main(void *arg)
{
	int fd = *(int *)arg, c = accept(fd, NULL, NULL);
	char buf[256];

	if (c < 0)
		return NULL;
	snprintf(buf, sizeof(buf),
		"{\"version\":\"DPDK 22.11.11\",\"pid\":300,\"max_output_len\":16384}");
	send(c, buf, strlen(buf), MSG_NOSIGNAL);
	if (recv(c, buf, sizeof(buf), 0) > 0)
		send(c, "{\"/echo\":\"x\"}", 13, MSG_NOSIGNAL);
	recv(c, buf, sizeof(buf), 0); /* until the client closes */
	close(c);
	return NULL;
}

/*
 * An application starting again binds its socket before it listens (DPDK lib/telemetry/
 * telemetry.c create_socket(): bind(), then listen()): a connect refused in between, by a
 * socket file that had not refused before, starts the backoff over at 25 ms instead of the
 * 400 ms or more the outage had reached, so the application's first values are not late
 * (seen as a stats read without values after a restart in the fault tests).
 */
static void
refused_by_a_new_socket_retries_soon(void **state)
{
	char dir[32], path[128];
	struct fake_config a = {.pid = 100}, b = {.pid = 200};
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	struct dtel_shared *sh;
	struct fake_server *fs = start_in_tmpdir(dir, path, sizeof(path), &a, &b, &sh);
	pthread_t t;
	uint64_t t0;
	int fd;

	(void)state;
	assert_int_equal(query_echo(sh, 500), 0);
	fs_stop(fs);
	stale_socket(path);
	assert_int_equal(fail_for_400ms(sh), -ECONNREFUSED); /* backoff 400 ms or more now */
	unlink(path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	assert_true(fd >= 0);
	memcpy(addr.sun_path, path, strlen(path) + 1);
	assert_int_equal(bind(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
	/* Bound, not listening yet: refused, by a file that is new. */
	assert_int_equal(query_echo(sh, 100), -ECONNREFUSED);
	assert_int_equal(listen(fd, 1), 0);
	assert_int_equal(pthread_create(&t, NULL, late_main, &fd), 0);
	t0 = test_now_ms();
	while (query_echo(sh, 100) != 0 && test_now_ms() - t0 < 3000)
		usleep(2000);
	assert_true(test_now_ms() - t0 < 350); /* 25 ms now; 800 ms or more before */
	dtel_shared_put(sh);
	pthread_join(t, NULL);
	close(fd);
	test_rmdir(dir);
}

static void
h_hang(struct fake_server *fs, unsigned int c, const char *req, struct fake_reply *o, void *a)
{
	(void)fs, (void)a, (void)req;
	if (c == 0)
		o->action = FAKE_SILENT; /* the first connection never answers */
	else
		o->data = fs_printf("{\"/echo\":\"x\"}");
}

static void
timeout_drops_connection_and_recovers(void **state)
{
	struct fake_config cfg = {.handler = h_hang};
	struct fake_server *fs = fs_start_path(&cfg);
	struct dtel_shared_status st;
	struct dtel_shared *sh;
	uint64_t deadline;
	int ret = -1;

	(void)state;
	assert_int_equal(dtel_shared_get(fs_path(fs), &sh), 0);
	assert_int_equal(query_echo(sh, 100), -ETIMEDOUT);
	dtel_shared_status(sh, &st);
	assert_false(st.connected);
	assert_int_equal(st.last_error, -ETIMEDOUT);
	deadline = test_now_ms() + 3000;
	while (ret != 0 && test_now_ms() < deadline) {
		ret = query_echo(sh, 200);
		if (ret != 0)
			usleep(5000);
	}
	assert_int_equal(ret, 0);
	assert_int_equal(fs_connections(fs), 2);
	dtel_shared_put(sh);
	fs_stop(fs);
}

/* Connection 0 misbehaves once with what the request names; later ones answer. */
static void
h_once(struct fake_server *fs, unsigned int c, const char *req, struct fake_reply *o, void *a)
{
	(void)a;
	if (c == 0 && strcmp(req, "/hang") == 0) {
		o->action = FAKE_SILENT;
	} else if (c == 0 && strcmp(req, "/garbage") == 0) {
		o->data = fs_printf("{\"/other\":1}"); /* another command's reply */
	} else if (c == 0 && strcmp(req, "/huge") == 0) {
		o->data = fs_printf("{\"/huge\":\"%0*d\"}", 20000, 0); /* > max_output_len */
	} else {
		o->data = fs_printf("{\"/echo\":\"x\"}");
	}
	(void)fs;
}

/*
 * A request that timed out or got an unusable reply ends that request only: the very next
 * one is sent to the application (a new connection), not refused by a backoff. A slow
 * application must not look like a gone one.
 */
static void
failed_request_does_not_back_off(void **state)
{
	static const struct {
		const char *cmd;
		int err;
	} cases[] = {{"/hang", -ETIMEDOUT}, {"/garbage", -EPROTO}, {"/huge", -EMSGSIZE}};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fake_config cfg = {.handler = h_once};
		struct fake_server *fs = fs_start_path(&cfg);
		struct dtel_shared *sh;
		struct dtel_reply r = {0};
		unsigned int before;

		assert_int_equal(dtel_shared_get(fs_path(fs), &sh), 0);
		assert_int_equal(dtel_shared_query(sh, cases[i].cmd, 100, &r), cases[i].err);
		before = fs_requests(fs);
		assert_int_equal(query_echo(sh, 500), 0);
		assert_int_equal(fs_requests(fs), before + 1);
		dtel_shared_put(sh);
		fs_stop(fs);
	}
}

/* The application accepts but does not greet in time (stopped, busy): not a refusal. */
static void
greeting_timeout_does_not_back_off(void **state)
{
	struct fake_config cfg = {.no_greeting = true};
	struct fake_server *fs = fs_start_path(&cfg);
	struct dtel_shared *sh;

	(void)state;
	assert_int_equal(dtel_shared_get(fs_path(fs), &sh), 0);
	assert_int_equal(query_echo(sh, 50), -ETIMEDOUT);
	assert_int_equal(query_echo(sh, 50), -ETIMEDOUT); /* tried again, not -EAGAIN */
	assert_int_equal(fs_connections(fs), 2);
	dtel_shared_put(sh);
	fs_stop(fs);
}

/* /x,<n> answers {"/x":<n>}, the way /ethdev/xstats,<port> answers without naming its port;
 * the second request is answered late. */
static void
h_numbered(struct fake_server *fs, unsigned int c, const char *req, struct fake_reply *o, void *a)
{
	(void)c, (void)a;
	if (fs_requests(fs) == 2)
		o->delay_ms = 30;
	if (strncmp(req, "/x,", 3) == 0)
		o->data = fs_printf("{\"/x\":%s}", req + 3);
	else
		o->data = fs_printf("{\"%.*s\":null}", (int)strcspn(req, ","), req);
}

/*
 * A batch that ends on an error that ends nothing by itself (ENOBUFS from sendmmsg(), with a
 * request sent and its reply still to come) must not leave that reply on the connection: the
 * next request would take it for its own (both are /x; the replies do not say which n they
 * answer). The connection is closed (requests sent after the one that met the error would get
 * -ECONNABORTED; here that one is the only one sent). Failed before: the next /x,5 got
 * {"/x":0}.
 */
static void
many_error_with_replies_in_flight_closes(void **state)
{
	struct fake_config cfg = {.handler = h_numbered};
	struct fake_server *fs = fs_start_path(&cfg);
	const char *p[] = {"/x,0", "/x,1", "/x,2", "/x,3"};
	struct dtel_reply r[4], one;
	struct dtel_shared_status st;
	struct dtel_shared *sh;
	int res[4];

	(void)state;
	assert_int_equal(dtel_shared_get(fs_path(fs), &sh), 0);
	/* /x is cheap, once learnt: the batch then keeps its whole window in flight. */
	assert_int_equal(dtel_shared_query(sh, "/x,9", 500, &one), 0);
	dtel_reply_release(&one);
	seed_cost(sh, "/x", 10 * 1000); /* whatever a busy machine's first reply took */
	arm_fault(false, ENOBUFS);
	assert_int_equal(dtel_shared_query_many(sh, p, 4, 4, 500, r, res), 0);
	fault.armed = false;
	assert_int_equal(res[0], -ENOBUFS); /* sent, its reply not read yet */
	assert_int_equal(res[1], -ECANCELED); /* never sent */
	dtel_shared_status(sh, &st);
	assert_int_equal(dtel_shared_query(sh, "/x,5", 500, &one), 0);
	assert_string_equal(one.json, "{\"/x\":5}");
	dtel_reply_release(&one);
	assert_false(st.connected); /* closed by the batch, not by the request after it */
	assert_int_equal(fs_connections(fs), 2);
	dtel_shared_put(sh);
	fs_stop(fs);
}

/* The same for one request whose reply could not be received (ENOMEM from recvmsg()): it is
 * still on its way, so the connection goes. Failed before: the next /x,7 got {"/x":6}. */
static void
receive_error_closes(void **state)
{
	struct fake_config cfg = {.handler = h_numbered};
	struct fake_server *fs = fs_start_path(&cfg);
	struct dtel_shared *sh;
	struct dtel_reply one;

	(void)state;
	assert_int_equal(dtel_shared_get(fs_path(fs), &sh), 0);
	assert_int_equal(dtel_shared_query(sh, "/x,9", 500, &one), 0); /* connected */
	dtel_reply_release(&one);
	arm_fault(true, ENOMEM);
	assert_int_equal(dtel_shared_query(sh, "/x,6", 500, &one), -ENOMEM);
	fault.armed = false;
	assert_int_equal(dtel_shared_query(sh, "/x,7", 500, &one), 0);
	assert_string_equal(one.json, "{\"/x\":7}");
	dtel_reply_release(&one);
	assert_int_equal(fs_connections(fs), 2);
	dtel_shared_put(sh);
	fs_stop(fs);
}

#define LATE_GREETER "--late-greeter"

/*
 * Another process behind the socket that never greets (stopped right after it made its
 * socket): SO_PEERCRED names it at connect, a new generation begins with it as the owner,
 * and its greeting, when it comes, belongs to that same generation.
 */
/* The late greeter itself, in a process of its own (started by late_greeter()): a socket
 * that greets nobody until SIGUSR1, then greets (the same socket file); "a", then "b" on
 * @ready. */
static int
late_greeter_main(const char *path, int ready)
{
	struct fake_config a = {.path = path, .no_greeting = true, .handler = h_echo_slow};
	struct fake_server *s;
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	a.pid = getpid();
	s = fs_start_path(&a);
	if (s == NULL || write(ready, "a", 1) != 1)
		return 1;
	sigwait(&set, &sig);
	fs_greet(s, true);
	if (write(ready, "b", 1) != 1)
		return 1;
	for (;;)
		pause();
}

/* This program again as the late greeter (a new process image, not a fork of this
 * multi-threaded one: ThreadSanitizer refuses threads started after such a fork). */
static pid_t
late_greeter(const char *path, int *ret_ready)
{
	char fd[16], *argv[5];
	int fds[2];
	pid_t child;

	assert_int_equal(pipe(fds), 0);
	snprintf(fd, sizeof(fd), "%d", fds[1]);
	argv[0] = (char *)"test_registry";
	argv[1] = (char *)LATE_GREETER;
	argv[2] = (char *)path;
	argv[3] = fd;
	argv[4] = NULL;
	assert_int_equal(posix_spawn(&child, "/proc/self/exe", NULL, NULL, argv, environ), 0);
	close(fds[1]);
	*ret_ready = fds[0];
	return child;
}

static void
ungreeted_owner_starts_a_generation(void **state)
{
	char dir[32], path[128], c;
	struct fake_config a = {.pid = 100, .handler = h_echo_slow}, b = {0};
	struct dtel_shared_status st;
	struct dtel_shared *sh;
	struct fake_server *fs = start_in_tmpdir(dir, path, sizeof(path), &a, &b, &sh);
	pid_t child;
	int ready;

	(void)state;
	assert_int_equal(query_echo(sh, 500), 0);
	dtel_shared_status(sh, &st);
	assert_int_equal(st.generation, 1);
	assert_int_equal(st.owner_pid, getpid()); /* SO_PEERCRED's: the fake runs in this process */
	assert_int_equal(st.peer_pid, getpid());
	assert_int_equal(st.greeting.pid, 100); /* what it calls itself */
	fs_stop(fs);
	child = late_greeter(path, &ready);
	assert_int_equal(read(ready, &c, 1), 1);
	assert_int_equal(query_echo(sh, 100), -ETIMEDOUT);
	dtel_shared_status(sh, &st);
	assert_int_equal(st.generation, 2);
	assert_int_equal(st.owner_pid, child);
	assert_int_equal(st.peer_pid, child);
	assert_int_equal(st.greeting.pid, 0); /* not the old process's */
	assert_string_equal(st.greeting.version, "");
	kill(child, SIGUSR1);
	assert_int_equal(read(ready, &c, 1), 1);
	assert_int_equal(query_echo(sh, 500), 0);
	dtel_shared_status(sh, &st);
	assert_int_equal(st.generation, 2); /* the same process, greeting at last */
	assert_int_equal(st.owner_pid, child);
	assert_int_equal(st.greeting.pid, child);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	close(ready);
	dtel_shared_put(sh);
	test_rmdir(dir);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(eight_threads_get_their_own_answers),
		cmocka_unit_test(same_path_same_session),
		cmocka_unit_test(many_replies_in_order),
		cmocka_unit_test(many_hung_request_fails_alone),
		cmocka_unit_test(many_stops_at_a_hung_request),
		cmocka_unit_test(many_and_single_from_threads),
		cmocka_unit_test(restart_changes_generation),
		cmocka_unit_test(reconnect_same_socket_keeps_generation),
		cmocka_unit_test(new_socket_same_greeting_pid_is_a_restart),
		cmocka_unit_test(absent_socket_reports_enoent),
		cmocka_unit_test(backoff_limits_connect_attempts),
		cmocka_unit_test(new_socket_skips_backoff),
		cmocka_unit_test(refused_by_a_new_socket_retries_soon),
		cmocka_unit_test(timeout_drops_connection_and_recovers),
		cmocka_unit_test(failed_request_does_not_back_off),
		cmocka_unit_test(greeting_timeout_does_not_back_off),
		cmocka_unit_test(many_error_with_replies_in_flight_closes),
		cmocka_unit_test(receive_error_closes),
		cmocka_unit_test(ungreeted_owner_starts_a_generation),
	};

	if (argc == 4 && strcmp(argv[1], LATE_GREETER) == 0)
		return late_greeter_main(argv[2], atoi(argv[3]));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
