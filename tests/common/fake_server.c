/* SPDX-License-Identifier: BSD-3-Clause */
/* The scripted fake telemetry server (see fake_server.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "fake_server.h"

#define MAX_CONNS 256

struct conn {
	struct fake_server *fs;
	unsigned int id;
	int fd;
	pthread_t thread;
};

struct fake_server {
	struct fake_config cfg;
	char *greeting; /* a copy of cfg.greeting, which the caller need not keep */
	char dir[64];
	char path[108];
	int listen_fd;
	int stop_pipe[2]; /* written once by fs_stop: ends every thread */
	int accept_stop[2]; /* written by fs_make_stale: ends the acceptor only */
	pthread_t acceptor;
	bool have_acceptor;
	pthread_mutex_t lock;
	struct conn conns[MAX_CONNS];
	unsigned int nconns;
	unsigned int requests;
	unsigned int busy; /* connections now answering */
	unsigned int closed; /* connections whose thread has ended */
	bool overlap;
	bool pipelined;
};

char *
fs_printf(const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	return s;
}

char *
fs_golden(const char *name, size_t *ret_len)
{
	const char *dir = getenv("DTEL_TEST_DATA");
	char path[512];
	char *buf;
	long n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir ? dir : "tests/data", name);
	f = fopen(path, "rb");
	if (f == NULL) {
		fprintf(stderr, "fake_server: cannot open golden file %s\n", path);
		abort();
	}
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	if (buf == NULL || fread(buf, 1, (size_t)n, f) != (size_t)n)
		abort();
	fclose(f);
	/* Golden files are single datagrams; drop a trailing newline an editor may add. */
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		n--;
	buf[n] = '\0';
	if (ret_len != NULL)
		*ret_len = (size_t)n;
	return buf;
}

static void
sleep_ms(int ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* On the CPU for @ms of this thread's CPU time (not wall time: on a busy host the spin is
 * what the thread costs, as a driver's spin is). */
static void
spin_ms(int ms)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	do
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
}

/* Wait for data on fd or a stop request on stop_fd; true when fd is readable. */
static bool
wait_readable(int fd, int stop_fd)
{
	struct pollfd p[2] = {{.fd = fd, .events = POLLIN}, {.fd = stop_fd, .events = POLLIN}};

	for (;;) {
		int r = poll(p, 2, -1);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 || (p[1].revents & POLLIN))
			return false;
		if (p[0].revents)
			return true;
	}
}

static void
default_handler(struct fake_server *fs, unsigned int conn, const char *req, struct fake_reply *out,
	void *arg)
{
	(void)fs;
	(void)conn;
	(void)arg;
	if (strncmp(req, "/echo,", 6) == 0)
		out->data = fs_printf("{\"/echo\":\"%s\"}", req + 6);
	else if (strcmp(req, "/ethdev/list") == 0)
		out->data = fs_golden("dpdk-22.11/ethdev_list.json", &out->len);
	else if (strncmp(req, "/ethdev/stats,", 14) == 0)
		out->data = fs_golden("dpdk-22.11/ethdev_stats-0.json", &out->len);
	else {
		size_t n = strcspn(req, ",");

		out->data = fs_printf("{\"%.*s\":null}", (int)n, req);
	}
}

static void
send_greeting(struct fake_server *fs, int fd)
{
	char buf[256];

	if (fs->cfg.greeting != NULL) {
		send(fd, fs->cfg.greeting, strlen(fs->cfg.greeting), MSG_NOSIGNAL);
		return;
	}
	snprintf(buf, sizeof(buf),
		"{\"version\":\"DPDK 22.11.11\",\"pid\":%ld,\"max_output_len\":%u}",
		fs->cfg.pid ? fs->cfg.pid : (long)getpid(),
		fs->cfg.max_output_len ? fs->cfg.max_output_len : 16384);
	send(fd, buf, strlen(buf), MSG_NOSIGNAL);
}

/* What a connection does after a request. */
enum conn_next {
	CONN_GO,
	CONN_END,
	/* A request not answered: DPDK's callback for it never returned, and the connection's
	 * thread (lib/telemetry/telemetry.c client_handler, one request at a time) reads no
	 * other request of it: nothing more is answered on this connection. */
	CONN_STUCK,
};

/* Serve one request. */
static enum conn_next
serve_one(struct conn *c)
{
	struct fake_server *fs = c->fs;
	struct fake_reply out = {.action = FAKE_REPLY};
	char req[2048];
	struct pollfd p = {.fd = c->fd, .events = POLLIN};
	ssize_t n;

	if (!wait_readable(c->fd, fs->stop_pipe[0]))
		return CONN_END;
	n = recv(c->fd, req, sizeof(req) - 1, 0);
	if (n <= 0)
		return CONN_END;
	req[n] = '\0';
	pthread_mutex_lock(&fs->lock);
	fs->requests++;
	if (fs->busy > 0)
		fs->overlap = true;
	fs->busy++;
	pthread_mutex_unlock(&fs->lock);
	(fs->cfg.handler ? fs->cfg.handler : default_handler)(fs, c->id, req, &out, fs->cfg.arg);
	if (out.delay_ms > 0 && out.spin)
		spin_ms(out.delay_ms);
	else if (out.delay_ms > 0)
		sleep_ms(out.delay_ms);
	/* A second request on the same connection before this reply: pipelined (DPDK answers
	 * it after this one, on this connection's thread). */
	if (poll(&p, 1, 0) > 0 && (p.revents & POLLIN)) {
		pthread_mutex_lock(&fs->lock);
		fs->pipelined = true;
		pthread_mutex_unlock(&fs->lock);
	}
	if (out.action != FAKE_SILENT && out.data != NULL)
		send(c->fd, out.data, out.len ? out.len : strlen(out.data), MSG_NOSIGNAL);
	if (out.after_ms > 0)
		spin_ms(out.after_ms);
	free(out.data);
	pthread_mutex_lock(&fs->lock);
	fs->busy--;
	pthread_mutex_unlock(&fs->lock);
	return out.action == FAKE_CLOSE     ? CONN_END
		: out.action == FAKE_SILENT ? CONN_STUCK
					    : CONN_GO;
}

static void *
conn_main(void *arg)
{
	struct conn *c = arg;
	struct fake_server *fs = c->fs;
	enum conn_next next = CONN_END;
	char buf[2048];

	/* DPDK's client threads bear the v2 listener's name, inherited from the thread that
	 * creates them (lib/telemetry/telemetry.c socket_listener(); the name is set in
	 * telemetry_v2_init()): libdpdktel finds its server thread by it (appcpu.c). */
	pthread_setname_np(pthread_self(), FAKE_V2_THREAD_NAME);
	if (fs->cfg.close_at_accept)
		goto out;
	if (!__atomic_load_n(&fs->cfg.no_greeting, __ATOMIC_ACQUIRE))
		send_greeting(fs, c->fd);
	while ((next = serve_one(c)) == CONN_GO)
		;
	/* Stuck: until the client gives up, what it sends is left unanswered. */
	while (next == CONN_STUCK && wait_readable(c->fd, fs->stop_pipe[0]) &&
		recv(c->fd, buf, sizeof(buf), 0) > 0)
		;
out:
	shutdown(c->fd, SHUT_RDWR);
	pthread_mutex_lock(&fs->lock);
	fs->closed++;
	pthread_mutex_unlock(&fs->lock);
	return NULL;
}

static int
add_conn(struct fake_server *fs, int fd)
{
	struct conn *c;

	pthread_mutex_lock(&fs->lock);
	if (fs->nconns == MAX_CONNS) {
		pthread_mutex_unlock(&fs->lock);
		close(fd);
		return -1;
	}
	c = &fs->conns[fs->nconns];
	c->fs = fs;
	c->id = fs->nconns;
	c->fd = fd;
	fs->nconns++;
	pthread_mutex_unlock(&fs->lock);
	return pthread_create(&c->thread, NULL, conn_main, c);
}

static void *
accept_main(void *arg)
{
	struct fake_server *fs = arg;

	pthread_setname_np(pthread_self(), FAKE_V2_THREAD_NAME); /* the listener's */
	while (wait_readable(fs->listen_fd, fs->accept_stop[0])) {
		int fd = accept4(fs->listen_fd, NULL, NULL, SOCK_CLOEXEC);

		if (fd >= 0)
			add_conn(fs, fd);
	}
	return NULL;
}

static struct fake_server *
fs_new(const struct fake_config *cfg)
{
	struct fake_server *fs = calloc(1, sizeof(*fs));

	if (fs == NULL)
		return NULL;
	if (cfg != NULL)
		fs->cfg = *cfg;
	if (fs->cfg.greeting != NULL) {
		fs->greeting = strdup(fs->cfg.greeting);
		if (fs->greeting == NULL) {
			free(fs);
			return NULL;
		}
		fs->cfg.greeting = fs->greeting;
	}
	fs->listen_fd = -1;
	pthread_mutex_init(&fs->lock, NULL);
	if (pipe2(fs->stop_pipe, O_CLOEXEC) < 0) {
		free(fs->greeting);
		free(fs);
		return NULL;
	}
	if (pipe2(fs->accept_stop, O_CLOEXEC) < 0) {
		close(fs->stop_pipe[0]);
		close(fs->stop_pipe[1]);
		free(fs->greeting);
		free(fs);
		return NULL;
	}
	return fs;
}

struct fake_server *
fs_start_path(const struct fake_config *cfg)
{
	struct fake_server *fs = fs_new(cfg);
	struct sockaddr_un addr = {.sun_family = AF_UNIX};

	if (fs == NULL)
		return NULL;
	if (fs->cfg.path != NULL) {
		snprintf(fs->path, sizeof(fs->path), "%s", fs->cfg.path);
		unlink(fs->path);
	} else {
		snprintf(fs->dir, sizeof(fs->dir), "/tmp/dtel-fake-XXXXXX");
		if (mkdtemp(fs->dir) == NULL)
			goto fail;
		snprintf(fs->path, sizeof(fs->path), "%s/dpdk_telemetry.v2", fs->dir);
	}
	fs->listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	strcpy(addr.sun_path, fs->path);
	if (fs->listen_fd < 0 || bind(fs->listen_fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 ||
		listen(fs->listen_fd, 16) < 0)
		goto fail;
	if (pthread_create(&fs->acceptor, NULL, accept_main, fs) != 0)
		goto fail;
	fs->have_acceptor = true;
	return fs;
fail:
	fs_stop(fs);
	return NULL;
}

struct fake_server *
fs_start_pair(const struct fake_config *cfg, int *ret_fd)
{
	struct fake_server *fs = fs_new(cfg);
	int sv[2];

	if (fs == NULL)
		return NULL;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		fs_stop(fs);
		return NULL;
	}
	if (add_conn(fs, sv[1]) != 0) {
		close(sv[0]);
		fs_stop(fs);
		return NULL;
	}
	*ret_fd = sv[0];
	return fs;
}

static void
stop_listener(struct fake_server *fs, bool unlink_path)
{
	if (fs->have_acceptor) {
		if (write(fs->accept_stop[1], "x", 1) < 0)
			perror("fake_server: stop acceptor");
		pthread_join(fs->acceptor, NULL);
		fs->have_acceptor = false;
	}
	if (fs->listen_fd >= 0) {
		close(fs->listen_fd);
		fs->listen_fd = -1;
	}
	if (unlink_path && fs->path[0])
		unlink(fs->path);
}

void
fs_make_stale(struct fake_server *fs)
{
	stop_listener(fs, false);
}

void
fs_stop(struct fake_server *fs)
{
	if (fs == NULL)
		return;
	if (write(fs->stop_pipe[1], "x", 1) < 0)
		perror("fake_server: stop");
	stop_listener(fs, true);
	for (unsigned int i = 0; i < fs->nconns; i++) {
		shutdown(fs->conns[i].fd, SHUT_RDWR);
		pthread_join(fs->conns[i].thread, NULL);
		close(fs->conns[i].fd);
	}
	if (fs->dir[0])
		rmdir(fs->dir);
	close(fs->stop_pipe[0]);
	close(fs->stop_pipe[1]);
	close(fs->accept_stop[0]);
	close(fs->accept_stop[1]);
	pthread_mutex_destroy(&fs->lock);
	free(fs->greeting);
	free(fs);
}

const char *
fs_path(const struct fake_server *fs)
{
	return fs->path;
}

unsigned int
fs_requests(struct fake_server *fs)
{
	unsigned int n;

	pthread_mutex_lock(&fs->lock);
	n = fs->requests;
	pthread_mutex_unlock(&fs->lock);
	return n;
}

unsigned int
fs_connections(struct fake_server *fs)
{
	unsigned int n;

	pthread_mutex_lock(&fs->lock);
	n = fs->nconns;
	pthread_mutex_unlock(&fs->lock);
	return n;
}

unsigned int
fs_closed(struct fake_server *fs)
{
	unsigned int n;

	pthread_mutex_lock(&fs->lock);
	n = fs->closed;
	pthread_mutex_unlock(&fs->lock);
	return n;
}

void
fs_greet(struct fake_server *fs, bool greet)
{
	__atomic_store_n(&fs->cfg.no_greeting, !greet, __ATOMIC_RELEASE);
}

bool
fs_saw_pipelined(struct fake_server *fs)
{
	bool o;

	pthread_mutex_lock(&fs->lock);
	o = fs->pipelined;
	pthread_mutex_unlock(&fs->lock);
	return o;
}

bool
fs_saw_overlap(struct fake_server *fs)
{
	bool o;

	pthread_mutex_lock(&fs->lock);
	o = fs->overlap;
	pthread_mutex_unlock(&fs->lock);
	return o;
}
