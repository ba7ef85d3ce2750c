/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared sessions: one connection per socket for the whole process, one request at a time,
 * reconnection with backoff, restart detection (by pid, start time and socket file).
 */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
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

static void
h_echo_slow(struct fake_server *fs, unsigned int c, const char *req, struct fake_reply *o, void *a)
{
	(void)fs, (void)c, (void)a;
	/* A pause makes an overlapping request visible to the server if one were sent. */
	o->delay_ms = 1;
	if (strncmp(req, "/echo,", 6) == 0)
		o->data = fs_printf("{\"/echo\":\"%s\"}", req + 6);
	else if (strcmp(req, "/slow") == 0) {
		o->delay_ms = 400;
		o->data = fs_printf("{\"/slow\":1}");
	} else
		o->data = fs_printf("{\"%.*s\":null}", (int)strcspn(req, ","), req);
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

static int
query_echo(struct dtel_shared *sh, int timeout_ms)
{
	struct dtel_reply r = {0}; /* untouched on failure */
	int ret = dtel_shared_query(sh, "/echo,x", timeout_ms, &r);

	dtel_reply_release(&r);
	return ret;
}

/* /echo,<x> answers "<x>"; /silent never answers (its callback hangs: nothing more is
 * answered on that connection, tests/common/fake_server.c CONN_STUCK). */
static void
h_echo_or_silent(
	struct fake_server *fs, unsigned int c, const char *req, struct fake_reply *o, void *a)
{
	(void)fs, (void)c, (void)a;
	if (strcmp(req, "/silent") == 0)
		o->action = FAKE_SILENT;
	else if (strncmp(req, "/echo,", 6) == 0)
		o->data = fs_printf("{\"/echo\":\"%s\"}", req + 6);
	else
		o->data = fs_printf("{\"%.*s\":null}", (int)strcspn(req, ","), req);
}

#define MANY 40

/* More requests than the window: each reply in its place, sent ahead of the replies. */
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

struct slow_arg {
	struct dtel_shared *sh;
	int ret;
};

static void *
slow_main(void *arg)
{
	struct slow_arg *a = arg;
	struct dtel_reply r = {0};

	a->ret = dtel_shared_query(a->sh, "/slow", 3000, &r);
	dtel_reply_release(&r);
	return NULL;
}

/* Behind a request of ours that the application has not answered for as long as its own
 * timeout, a request is not sent, and the application is the reason: -ETIMEDOUT. */
static void
behind_an_unanswered_request_is_etimedout(void **state)
{
	struct fake_config cfg = {.handler = h_echo_slow};
	struct fake_server *fs = fs_start_path(&cfg);
	struct slow_arg a = {0};
	pthread_t t;
	uint64_t deadline, t0;

	(void)state;
	assert_int_equal(dtel_shared_get(fs_path(fs), &a.sh), 0);
	assert_int_equal(pthread_create(&t, NULL, slow_main, &a), 0);
	deadline = test_now_ms() + 3000;
	while (fs_requests(fs) < 1 && test_now_ms() < deadline)
		usleep(1000);
	assert_int_equal(fs_requests(fs), 1);
	t0 = test_now_ms();
	assert_int_equal(query_echo(a.sh, 100), -ETIMEDOUT);
	assert_true(test_now_ms() - t0 < 390); /* gave up at its own timeout, not the other's */
	assert_int_equal(fs_requests(fs), 1); /* and was not sent */
	pthread_join(t, NULL);
	assert_int_equal(a.ret, 0);
	assert_int_equal(query_echo(a.sh, 500), 0);
	dtel_shared_put(a.sh);
	fs_stop(fs);
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

/* Priorities ------------------------------------------------------------------------------ */

/* "/t,<ms>,<tag>": answers "<tag>" after <ms>; the order tags arrive in is recorded. */
static pthread_mutex_t order_lock = PTHREAD_MUTEX_INITIALIZER;
static char order[64][16];
static unsigned int norder;

static bool tagged_spin; /* h_tagged's delays busy, on the CPU, not asleep */

static void
h_tagged(struct fake_server *fs, unsigned int c, const char *req, struct fake_reply *o, void *a)
{
	char tag[16] = "";
	int ms = 0;

	(void)fs, (void)c, (void)a;
	if (sscanf(req, "/t,%d,%15s", &ms, tag) != 2) {
		o->data = fs_printf("{\"/t\":null}");
		return;
	}
	pthread_mutex_lock(&order_lock);
	if (norder < 64)
		snprintf(order[norder++], sizeof(order[0]), "%s", tag);
	pthread_mutex_unlock(&order_lock);
	o->delay_ms = ms;
	o->spin = tagged_spin; /* on the CPU, as a driver that polls its firmware */
	o->data = fs_printf("{\"/t\":\"%s\"}", tag);
}

static int
position_of(const char *tag)
{
	int at = -1;

	pthread_mutex_lock(&order_lock);
	for (unsigned int i = 0; i < norder && at < 0; i++)
		if (strcmp(order[i], tag) == 0)
			at = (int)i;
	pthread_mutex_unlock(&order_lock);
	return at;
}

#define READS 10

struct batch {
	struct dtel_shared *sh;
	int ms;
	unsigned int window;
	int ret;
	int results[READS];
	struct dtel_reply replies[READS];
};

static void *
batch_main(void *arg)
{
	struct batch *b = arg;
	struct dtel_request rq = {.prio = DTEL_PRIO_READ, .timeout_ms = 2000, .window = b->window};
	char cmds[READS][32];
	const char *p[READS];

	for (int i = 0; i < READS; i++) {
		snprintf(cmds[i], sizeof(cmds[i]), "/t,%d,r%d", b->ms, i);
		p[i] = cmds[i];
	}
	b->ret = dtel_shared_request_many(b->sh, &rq, p, READS, b->replies, b->results);
	for (int i = 0; i < READS; i++)
		dtel_reply_release(&b->replies[i]);
	return NULL;
}

static struct fake_server *
start_batch(struct batch *b, pthread_t *t)
{
	struct fake_config cfg = {.handler = h_tagged};
	struct fake_server *fs = fs_start_path(&cfg);
	uint64_t deadline = test_now_ms() + 3000;

	assert_non_null(fs);
	norder = 0;
	tagged_spin = false;
	assert_int_equal(dtel_shared_get(fs_path(fs), &b->sh), 0);
	assert_int_equal(pthread_create(t, NULL, batch_main, b), 0);
	while (fs_requests(fs) < 1 && test_now_ms() < deadline)
		usleep(500);
	assert_int_equal(fs_requests(fs), 1);
	return fs;
}

static void
finish_batch(struct fake_server *fs, struct batch *b, pthread_t t)
{
	pthread_join(t, NULL);
	assert_int_equal(b->ret, 0);
	for (int i = 0; i < READS; i++)
		assert_int_equal(b->results[i], 0); /* the batch went on after the poll */
	assert_false(fs_saw_overlap(fs));
	dtel_shared_put(b->sh);
	fs_stop(fs);
}

/* A poll that comes while a batch of reads runs is answered after the reads in flight, not
 * after the whole batch. */
static void
poll_goes_before_the_rest_of_a_batch(void **state)
{
	struct batch b = {.ms = 20, .window = 4};
	struct dtel_request rq = {.prio = DTEL_PRIO_POLL, .timeout_ms = 1000};
	struct dtel_reply r = {0};
	struct fake_server *fs;
	pthread_t t;

	(void)state;
	fs = start_batch(&b, &t);
	assert_int_equal(dtel_shared_request(b.sh, &rq, "/t,0,poll", &r), 0);
	assert_string_equal(r.json, "{\"/t\":\"poll\"}");
	dtel_reply_release(&r);
	assert_int_equal(rq.queued, 1);
	assert_true(rq.queued_ns > 0);
	/* At most the first read and the window in flight went before it, of ten. */
	assert_true(position_of("poll") >= 1);
	assert_true(position_of("poll") <= 1 + 4);
	finish_batch(fs, &b, t);
}

/* Behind our own reads, each answered in time, a poll that cannot go within its timeout is
 * not sent: -EBUSY, our queue, not the application. */
static void
queued_past_the_timeout_is_ebusy(void **state)
{
	struct batch b = {.ms = 60, .window = 8};
	struct dtel_request rq = {.prio = DTEL_PRIO_POLL, .timeout_ms = 100};
	struct dtel_reply r = {0};
	struct fake_server *fs;
	pthread_t t;

	(void)state;
	fs = start_batch(&b, &t);
	assert_int_equal(dtel_shared_request(b.sh, &rq, "/t,0,poll", &r), -EBUSY);
	assert_int_equal(rq.queued, 1);
	assert_true(rq.queued_ns >= 90 * 1000000ull);
	assert_int_equal(position_of("poll"), -1);
	finish_batch(fs, &b, t);
}

struct single {
	struct dtel_shared *sh;
	int ret;
};

static void *
read_main(void *arg)
{
	struct single *a = arg;
	struct dtel_request rq = {.prio = DTEL_PRIO_READ, .timeout_ms = 100};
	struct dtel_reply r = {0};

	a->ret = dtel_shared_request(a->sh, &rq, "/t,0,read", &r);
	dtel_reply_release(&r);
	return NULL;
}

/* While a poll is in progress, reads wait (-EBUSY when it lasts longer than their timeout). */
static void
reads_wait_for_a_poll_in_progress(void **state)
{
	struct fake_config cfg = {.handler = h_tagged};
	struct fake_server *fs = fs_start_path(&cfg);
	struct single a = {0};
	pthread_t t;

	(void)state;
	norder = 0;
	assert_int_equal(dtel_shared_get(fs_path(fs), &a.sh), 0);
	dtel_shared_poll_begin(a.sh);
	assert_int_equal(pthread_create(&t, NULL, read_main, &a), 0);
	pthread_join(t, NULL);
	assert_int_equal(a.ret, -EBUSY);
	assert_int_equal(fs_requests(fs), 0);
	dtel_shared_poll_end(a.sh);
	assert_int_equal(pthread_create(&t, NULL, read_main, &a), 0);
	pthread_join(t, NULL);
	assert_int_equal(a.ret, 0);
	dtel_shared_put(a.sh);
	fs_stop(fs);
}

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
	norder = 0;
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

/* The budget: classes within it run as they want; over it, a cheap class keeps its interval
 * and the expensive ones share the rest equally; the smallest budget is in force. */
static void
classes_share_the_budget(void **state)
{
	struct dtel_shared_class *links, *reads;
	struct dtel_shared_load load;
	struct dtel_shared *sh;
	uint64_t ms = 1000000;

	(void)state;
	assert_int_equal(dtel_shared_get("/tmp/dtel-budget/dpdk_telemetry.v2", &sh), 0);
	assert_int_equal(dtel_shared_class_new(sh, &links), 0);
	assert_int_equal(dtel_shared_class_new(sh, &reads), 0);
	/* Unknown cost: as wanted. */
	assert_int_equal(dtel_shared_class_plan(links, 0, 20 * ms, 0.01), 20 * ms);
	/* 32 links at 12 us every 20 ms: 1.9 %; reads 33 x 15 us every 10 s: tiny. */
	for (int k = 0; k < 3; k++)
		assert_int_equal(
			dtel_shared_class_plan(reads, 500 * 1000, 10000 * ms, 0.01), 10000 * ms);
	/* Not before its third round: costs of the first replies may be wrong. */
	for (int k = 1; k < 3; k++)
		assert_int_equal(dtel_shared_class_plan(links, 384 * 1000, 20 * ms, 0.01), 20 * ms);
	uint64_t i = dtel_shared_class_plan(links, 384 * 1000, 20 * ms, 0.01);
	/* Links get the budget less what the reads use: 384 us / (1 % - 0.005 %) = 38.6 ms. */
	assert_true(i > 38 * ms && i < 39 * ms);
	/* Both expensive: 32 links at 2 ms (64 ms a round), 32 xstats at 15 ms (480 ms). */
	/* At once to what its cost allows (0.5 ms + 480 ms smoothed: 120 ms a round, at what
	 * the links leave), not doubling from read to read: a slow read ran 1 s, 2 s, 4 s...
	 * and cost 2 % of a core for its first minutes. */
	i = dtel_shared_class_plan(reads, 480 * ms, 10000 * ms, 0.01);
	assert_true(i > 20000 * ms);
	for (int k = 0; k < 20; k++) /* the smoothed cost settles */
		dtel_shared_class_plan(reads, 480 * ms, 10000 * ms, 0.01);
	i = dtel_shared_class_plan(links, 64 * ms, 20 * ms, 0.01);
	for (int k = 0; k < 20; k++)
		i = dtel_shared_class_plan(links, 64 * ms, 20 * ms, 0.01);
	assert_true(i > 12700 * ms && i < 12900 * ms); /* 64 ms at 0.5 %: 12.8 s */
	i = dtel_shared_class_plan(reads, 0, 10000 * ms, 0.01);
	assert_true(i > 95000 * ms && i < 97000 * ms); /* 480 ms at 0.5 %: 96 s */
	dtel_shared_load(sh, &load);
	assert_true(load.planned > 0.0099 && load.planned < 0.0101);
	/* A smaller budget of one class is the budget of all. */
	i = dtel_shared_class_plan(reads, 0, 10000 * ms, 0.005);
	assert_true(i > 191000 * ms && i < 193000 * ms);
	dtel_shared_load(sh, &load);
	assert_true(load.budget == 0.005);
	dtel_shared_class_free(links);
	dtel_shared_class_free(reads);
	dtel_shared_put(sh);
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

/* The CPU time of the application's thread that serves our connection (here the fake's,
 * in this process) is what a request costs, not its service time: 10 ms replies of 5 ms CPU
 * cost about 5 ms. */
static void
cpu_time_corrects_the_estimates(void **state)
{
	struct fake_config cfg = {.handler = h_half_cpu};
	struct fake_server *fs = fs_start_path(&cfg);
	struct dtel_shared *sh;
	uint64_t end = test_now_ms() + 8000, last = UINT64_MAX, before = dtel__boottime_ns(), cpu;
	int fd, n = 0;

	(void)state;
	assert_non_null(fs);
	assert_int_equal(dtel_shared_get(fs_path(fs), &sh), 0);
	/* Each turn counts the CPU time of the fake's thread that served it: 5 ms, where the
	 * service time is 10 ms and more. The first turn may take the greeting's too. */
	while (test_now_ms() < end && n++ < 5) {
		struct dtel_request rq = {.prio = DTEL_PRIO_READ, .timeout_ms = 1000};
		struct dtel_reply r;

		assert_int_equal(dtel_shared_request(sh, &rq, "/x", &r), 0);
		dtel_reply_release(&r);
		last = rq.service_ns;
	}
	if (last < 3000000 || last > 8000000)
		fail_msg("a 10 ms reply of 5 ms CPU counted %" PRIu64 " ns", last);
	/* The thread it found is the fake's: one of this process, started after the connect. */
	assert_int_equal(dtel__server_thread(getpid(), before, &fd, NULL), 0);
	assert_int_equal(dtel__thread_cpu_ns(fd, &cpu), 0);
	assert_true(cpu >= 5000000); /* its 5 ms spins */
	close(fd);
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
 * the first request of a connection is answered late. */
static void
h_numbered(struct fake_server *fs, unsigned int c, const char *req, struct fake_reply *o, void *a)
{
	(void)c, (void)a;
	if (fs_requests(fs) == 1)
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

/*
 * Another process behind the socket that never greets (stopped right after it made its
 * socket): SO_PEERCRED names it at connect, a new generation begins with it as the owner,
 * and its greeting, when it comes, belongs to that same generation.
 */
static pid_t
fork_late_greeter(const char *path, int *ret_ready)
{
	int fds[2];
	pid_t child;

	assert_int_equal(pipe(fds), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		struct fake_config a = {.path = path, .no_greeting = true};
		struct fake_config b = {.path = path, .handler = h_echo_slow};
		struct fake_server *s;
		sigset_t set;
		int sig;

		close(fds[0]);
		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		sigprocmask(SIG_BLOCK, &set, NULL);
		s = fs_start_path(&a);
		if (s == NULL || write(fds[1], "a", 1) != 1)
			_exit(1);
		sigwait(&set, &sig);
		fs_stop(s);
		b.pid = getpid();
		s = fs_start_path(&b);
		if (s == NULL || write(fds[1], "b", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
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
	child = fork_late_greeter(path, &ready);
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
main(void)
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
		cmocka_unit_test(behind_an_unanswered_request_is_etimedout),
		cmocka_unit_test(timeout_drops_connection_and_recovers),
		cmocka_unit_test(failed_request_does_not_back_off),
		cmocka_unit_test(greeting_timeout_does_not_back_off),
		cmocka_unit_test(poll_goes_before_the_rest_of_a_batch),
		cmocka_unit_test(queued_past_the_timeout_is_ebusy),
		cmocka_unit_test(reads_wait_for_a_poll_in_progress),
		cmocka_unit_test(request_cost_is_measured),
		cmocka_unit_test(classes_share_the_budget),
		cmocka_unit_test(cpu_time_corrects_the_estimates),
		cmocka_unit_test(server_thread_is_a_telemetry_client),
		cmocka_unit_test(server_thread_not_guessed),
		cmocka_unit_test(many_error_with_replies_in_flight_closes),
		cmocka_unit_test(receive_error_closes),
		cmocka_unit_test(ungreeted_owner_starts_a_generation),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
