/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One connection to a DPDK telemetry v2 socket (protocol summary in dtel.h).
 *
 * Connecting and reading the greeting use a non-blocking socket and poll() against a
 * deadline. Requests then use the socket in blocking mode bounded by SO_SNDTIMEO and
 * SO_RCVTIMEO: one send() and one recvmsg() per request, the fewest system calls a request
 * can cost, and no call takes longer than its timeout. A connection the application closed
 * shows as EPIPE on send(), before anything was sent. Replies are received whole into a
 * buffer one byte larger than the greeting's max_output_len: SOCK_SEQPACKET drops the rest of
 * a datagram that does not fit, and MSG_TRUNC (or a datagram longer than announced) is
 * reported as -EMSGSIZE.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "dtel_private.h"

/* The greeting is about 70 bytes; anything near this size is not a DPDK greeting. */
#define GREETING_BUF 2048

struct dtel_session {
	int fd;
	long peer_pid; /* SO_PEERCRED: the application's pid in our pid namespace, 0: unknown */
	uint64_t opened_boot_ns; /* CLOCK_BOOTTIME just before connect() */
	struct dtel_greeting greeting;
	char *buf; /* max_output_len + 2 bytes: one to detect overruns, one for the NUL */
	size_t buf_size;
	int io_timeout_ms; /* SO_RCVTIMEO / SO_SNDTIMEO now set on fd; 0: none yet */
};

/* The pid of the process at the other end of a connected socket: SO_PEERCRED, the
 * credentials of the process that called listen() (the application), in this process's pid
 * namespace; 0 when that cannot be told. */
static long
peer_pid(int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || len != sizeof(cred))
		return 0;
	return cred.pid;
}

bool
dtel__error_closes(int err)
{
	return err == -ETIMEDOUT || err == -ECONNRESET || err == -EPROTO || err == -EMSGSIZE ||
		err == -ENOTCONN;
}

int
dtel__check_request(const char *req, size_t *ret_cmd_len)
{
	size_t len, cmd_len;

	if (req == NULL || req[0] != '/')
		return -EINVAL;
	len = strnlen(req, DTEL__REQUEST_MAX + 1);
	if (len > DTEL__REQUEST_MAX)
		return -EINVAL;
	cmd_len = strcspn(req, ",");
	if (cmd_len >= DTEL__COMMAND_MAX)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)req[i];

		if (c < 0x20 || c == 0x7f)
			return -EINVAL;
		if (i < cmd_len &&
			!(c == '/' || c == '_' || (c >= '0' && c <= '9') ||
				(c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')))
			return -EINVAL;
	}
	*ret_cmd_len = cmd_len;
	return 0;
}

static int
wait_fd(int fd, short events, uint64_t deadline_ns)
{
	struct pollfd p = {.fd = fd, .events = events};
	int ret;

	for (;;) {
		ret = poll(&p, 1, dtel__ms_left(deadline_ns));
		if (ret > 0)
			return 0;
		if (ret == 0)
			return -ETIMEDOUT;
		if (errno != EINTR)
			return -errno;
	}
}

/* Map connect() errors to the ones dtel.h documents. */
static int
connect_error(int err)
{
	switch (err) {
	case EPERM:
		return -EACCES;
	case ENOTDIR:
		return -ENOENT;
	default:
		return -err;
	}
}

static int
connect_until(int fd, const char *path, uint64_t deadline_ns)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};

	memcpy(addr.sun_path, path, strlen(path) + 1);
	for (;;) {
		if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0)
			return 0;
		if (errno == EINTR)
			continue;
		/* A Unix socket refuses with EAGAIN while the listener's backlog (1 in DPDK) is
		 * full; poll() cannot wait for that, so retry shortly until the deadline. */
		if (errno != EAGAIN)
			return connect_error(errno);
		if (dtel__now_ns() >= deadline_ns)
			return -ETIMEDOUT;
		usleep(1000);
	}
}

/* Check the path before connecting, so that each kind of wrong file has its own error. */
static int
check_path(const char *path)
{
	struct stat st;

	if (path == NULL || path[0] == '\0')
		return -EINVAL;
	if (strnlen(path, DTEL_PATH_MAX) >= DTEL_PATH_MAX)
		return -ENAMETOOLONG;
	if (stat(path, &st) < 0)
		return errno == ENOTDIR ? -ENOENT : -errno;
	if (!S_ISSOCK(st.st_mode))
		return -ENOTSOCK;
	return 0;
}

static int
open_socket(const char *path, uint64_t deadline_ns, int *ret_fd)
{
	int fd = -1, ret;

	ret = check_path(path);
	if (ret < 0)
		return ret;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	ret = connect_until(fd, path, deadline_ns);
	if (ret < 0) {
		close(fd);
		return ret;
	}
	*ret_fd = fd;
	return 0;
}

int
dtel_probe(const char *path)
{
	int fd = -1, ret;

	/* A Unix connect() does not wait for the server: 50 ms only bounds a full backlog. */
	ret = open_socket(path, dtel__now_ns() + 50 * 1000000ull, &fd);
	if (ret < 0)
		return ret;
	close(fd);
	return 0;
}

int
dtel_probe_pid(const char *path, long *ret_pid)
{
	long pid;
	int fd = -1, ret;

	if (ret_pid == NULL)
		return -EINVAL;
	ret = open_socket(path, dtel__now_ns() + 50 * 1000000ull, &fd);
	if (ret < 0)
		return ret;
	/* The credentials the listening process had at listen(): no reply needed. */
	pid = peer_pid(fd);
	close(fd);
	if (pid == 0)
		return -EPROTO;
	*ret_pid = pid;
	return 0;
}

/* Receive one datagram into buf (size bytes). Returns its length or -errno. */
static ssize_t
recv_datagram(int fd, char *buf, size_t size, uint64_t deadline_ns)
{
	struct iovec iov = {.iov_base = buf, .iov_len = size};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
	ssize_t n;
	int ret;

	for (;;) {
		ret = wait_fd(fd, POLLIN, deadline_ns);
		if (ret < 0)
			return ret;
		n = recvmsg(fd, &msg, MSG_DONTWAIT);
		if (n > 0)
			return (msg.msg_flags & MSG_TRUNC) ? -EMSGSIZE : n;
		if (n == 0)
			return -ECONNRESET;
		if (errno == EAGAIN || errno == EINTR)
			continue;
		return errno == EPIPE ? -ECONNRESET : -errno;
	}
}

static int
read_greeting(int fd, uint64_t deadline_ns, struct dtel_greeting *ret_greeting)
{
	char buf[GREETING_BUF];
	ssize_t n;

	n = recv_datagram(fd, buf, sizeof(buf) - 1, deadline_ns);
	if (n == -EMSGSIZE)
		return -EPROTO;
	if (n < 0)
		return (int)n;
	buf[n] = '\0';
	return dtel_parse_greeting(buf, (size_t)n, ret_greeting);
}

/* Make a session of a connected socket (owned from here on, also on failure). */
static int
session_start(int fd, uint64_t opened_boot_ns, uint64_t deadline_ns, struct dtel_session **ret)
{
	struct dtel_session *s;
	int r;

	s = calloc(1, sizeof(*s));
	if (s == NULL) {
		close(fd);
		return -ENOMEM;
	}
	s->fd = fd;
	s->opened_boot_ns = opened_boot_ns;
	s->peer_pid = peer_pid(fd);
	r = read_greeting(fd, deadline_ns, &s->greeting);
	if (r < 0)
		goto fail;
	/* From here on: blocking I/O bounded by socket timeouts (see the top of this file). */
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0) {
		r = -errno;
		goto fail;
	}
	s->buf_size = s->greeting.max_output_len + 2;
	s->buf = malloc(s->buf_size);
	if (s->buf == NULL) {
		r = -ENOMEM;
		goto fail;
	}
	*ret = s;
	return 0;
fail:
	dtel_session_close(s);
	return r;
}

int
dtel__session_open_until(
	const char *path, uint64_t deadline_ns, struct dtel_session **ret, long *ret_peer_pid)
{
	uint64_t opened = dtel__boottime_ns();
	int fd = -1, r;

	r = open_socket(path, deadline_ns, &fd);
	if (r < 0)
		return r;
	/* Known before the greeting, which a hung application never sends. */
	if (ret_peer_pid != NULL)
		*ret_peer_pid = peer_pid(fd);
	return session_start(fd, opened, deadline_ns, ret);
}

int
dtel__session_attach(int fd, int timeout_ms, struct dtel_session **ret)
{
	return session_start(
		fd, dtel__boottime_ns(), dtel__now_ns() + (uint64_t)timeout_ms * 1000000u, ret);
}

void
dtel__session_peer(const struct dtel_session *s, long *ret_pid, uint64_t *ret_opened_boot_ns)
{
	*ret_pid = s->peer_pid;
	*ret_opened_boot_ns = s->opened_boot_ns;
}

int
dtel_session_open(const char *path, int timeout_ms, struct dtel_session **ret_session)
{
	if (timeout_ms <= 0 || ret_session == NULL)
		return -EINVAL;
	return dtel__session_open_until(
		path, dtel__now_ns() + (uint64_t)timeout_ms * 1000000u, ret_session, NULL);
}

void
dtel_session_close(struct dtel_session *session)
{
	if (session == NULL)
		return;
	if (session->fd >= 0)
		close(session->fd);
	free(session->buf);
	free(session);
}

const struct dtel_greeting *
dtel_session_greeting(const struct dtel_session *session)
{
	return &session->greeting;
}

bool
dtel__session_is_open(const struct dtel_session *s)
{
	return s != NULL && s->fd >= 0;
}

static void
drop_connection(struct dtel_session *s)
{
	if (s->fd >= 0) {
		close(s->fd);
		s->fd = -1;
	}
}

static int
set_io_timeout(struct dtel_session *s, int ms)
{
	struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (suseconds_t)(ms % 1000) * 1000};

	if (ms == s->io_timeout_ms)
		return 0;
	if (setsockopt(s->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
		setsockopt(s->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0)
		return -errno;
	s->io_timeout_ms = ms;
	return 0;
}

/* After EINTR or an early EAGAIN: wait again for what is left until the deadline. */
static int
rearm(struct dtel_session *s, uint64_t deadline_ns)
{
	int left = dtel__ms_left(deadline_ns);

	if (left <= 0)
		return -ETIMEDOUT;
	return set_io_timeout(s, left);
}

static int
send_request(struct dtel_session *s, const char *cmd, size_t len, uint64_t deadline_ns)
{
	ssize_t n;
	int ret;

	for (;;) {
		n = send(s->fd, cmd, len, MSG_NOSIGNAL);
		if (n == (ssize_t)len)
			return 0;
		/* SOCK_SEQPACKET sends a datagram whole or not at all. */
		if (n >= 0)
			return -EPROTO;
		if (errno == EPIPE || errno == ENOTCONN || errno == ECONNRESET)
			return -ECONNRESET;
		if (errno != EINTR && errno != EAGAIN)
			return -errno;
		ret = rearm(s, deadline_ns);
		if (ret < 0)
			return ret;
	}
}

static ssize_t
recv_reply(struct dtel_session *s, uint64_t deadline_ns)
{
	struct iovec iov = {.iov_base = s->buf, .iov_len = s->buf_size};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
	ssize_t n;
	int ret;

	for (;;) {
		n = recvmsg(s->fd, &msg, 0);
		if (n > 0)
			return (msg.msg_flags & MSG_TRUNC) ? -EMSGSIZE : n;
		if (n == 0)
			return -ECONNRESET;
		if (errno != EINTR && errno != EAGAIN)
			return errno == ECONNRESET ? -ECONNRESET : -errno;
		ret = rearm(s, deadline_ns);
		if (ret < 0)
			return ret;
	}
}

/* Check that buf is {"<cmd>":... for this command, and whether its value is null. */
static int
check_reply(const char *buf, size_t n, const char *cmd, size_t cmd_len)
{
	static const char null_tail[] = "null}";

	if (n < cmd_len + 5 || buf[0] != '{' || buf[1] != '"' ||
		memcmp(buf + 2, cmd, cmd_len) != 0 || buf[cmd_len + 2] != '"' ||
		buf[cmd_len + 3] != ':')
		return -EPROTO;
	if (n == cmd_len + 4 + sizeof(null_tail) - 1 &&
		memcmp(buf + cmd_len + 4, null_tail, sizeof(null_tail) - 1) == 0)
		return -ENODATA;
	return 0;
}

static int
copy_reply(struct dtel_session *s, size_t n, struct dtel_reply *ret_reply)
{
	char *json = malloc(n + 1);

	if (json == NULL)
		return -ENOMEM;
	memcpy(json, s->buf, n);
	json[n] = '\0';
	ret_reply->json = json;
	ret_reply->len = n;
	ret_reply->flags =
		n + DTEL_CUT_MARGIN >= s->greeting.max_output_len ? DTEL_F_NEAR_LIMIT : 0;
	return 0;
}

/* The application starts on a request at @since_ns (0: none awaited any more). */
static void
io_serving(struct dtel__io *io, uint64_t since_ns)
{
	if (io != NULL && io->serving_since_ns != NULL)
		__atomic_store_n(io->serving_since_ns, since_ns, __ATOMIC_RELAXED);
}

/* A reply came at @done_ns for a request the application could start on at @since_ns. */
static void
io_answered(struct dtel__io *io, uint64_t since_ns, uint64_t done_ns)
{
	uint64_t ns = done_ns > since_ns ? done_ns - since_ns : 0;

	if (io == NULL)
		return;
	if (io->sample_ns != NULL)
		io->sample_ns[io->answered] = ns;
	io->service_ns += ns;
	io->answered++;
}

int
dtel__session_query(struct dtel_session *s, const char *cmd, int timeout_ms,
	struct dtel_reply *ret_reply, bool *ret_sent, struct dtel__io *io)
{
	uint64_t deadline_ns, sent_ns;
	size_t cmd_len;
	ssize_t n;
	int ret;

	*ret_sent = false;
	if (s == NULL || ret_reply == NULL || timeout_ms <= 0)
		return -EINVAL;
	ret = dtel__check_request(cmd, &cmd_len);
	if (ret < 0)
		return ret;
	if (s->fd < 0)
		return -ENOTCONN;
	deadline_ns = dtel__now_ns() + (uint64_t)timeout_ms * 1000000u;
	ret = set_io_timeout(s, timeout_ms);
	/* Before send(): the application's thread, woken by it, often runs on this CPU and
	 * answers before send() returns to us. */
	sent_ns = dtel__now_ns();
	if (ret == 0)
		ret = send_request(s, cmd, strlen(cmd), deadline_ns);
	if (ret < 0)
		goto out;
	*ret_sent = true;
	io_serving(io, sent_ns);
	n = recv_reply(s, deadline_ns);
	io_serving(io, 0);
	if (n < 0) {
		ret = (int)n;
		/* Whatever the error, a reply may still come (a timeout, or a failure such as
		 * ENOBUFS that ends nothing by itself): the connection is not reused. */
		drop_connection(s);
		goto out;
	}
	io_answered(io, sent_ns, dtel__now_ns());
	if ((size_t)n > s->greeting.max_output_len) {
		ret = -EMSGSIZE;
		goto out;
	}
	ret = check_reply(s->buf, (size_t)n, cmd, cmd_len);
	if (ret == 0)
		ret = copy_reply(s, (size_t)n, ret_reply);
out:
	if (dtel__error_closes(ret))
		drop_connection(s);
	return ret;
}

/* Pipelined requests (dtel__session_query_many) ------------------------------------------ */

struct many {
	struct dtel_session *s;
	const char *const *cmds;
	size_t n, sent, got;
	unsigned int window;
	struct dtel_reply *replies;
	int *results;
	struct dtel__io *io;
	bool stop_sending; /* io->yield said so */
	uint64_t last_done_ns; /* when the last reply came (0: none yet) */
	uint64_t sent_ns[DTEL_QUERY_MANY_WINDOW_MAX]; /* of request i at i % window max */
};

/*
 * Send what the window allows, in one sendmmsg(): were they sent one by one, the
 * application's telemetry thread, woken by the first, would take the CPU from this thread
 * (the scheduler favours a thread that slept) and answer each before the next is sent.
 * 0, or -errno of a send that failed (not EAGAIN).
 */
static int
many_send(struct many *m)
{
	struct mmsghdr msgs[DTEL_QUERY_MANY_WINDOW_MAX];
	struct iovec iov[DTEL_QUERY_MANY_WINDOW_MAX];
	size_t k = 0;
	int ret;

	if (!m->stop_sending && m->io != NULL && m->io->yield != NULL && m->sent < m->n &&
		m->io->yield(m->io->arg))
		m->stop_sending = true;
	while (!m->stop_sending && m->sent + k < m->n && m->sent + k - m->got < m->window) {
		iov[k].iov_base = (void *)(uintptr_t)m->cmds[m->sent + k];
		iov[k].iov_len = strlen(m->cmds[m->sent + k]);
		memset(&msgs[k], 0, sizeof(msgs[k]));
		msgs[k].msg_hdr.msg_iov = &iov[k];
		msgs[k].msg_hdr.msg_iovlen = 1;
		k++;
	}
	while (k > 0) {
		/* Before sendmmsg(): the application's thread may answer before it returns. */
		uint64_t now = dtel__now_ns();

		ret = sendmmsg(m->s->fd, msgs, (unsigned int)k, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (ret > 0) {
			if (m->sent == m->got)
				io_serving(m->io, now); /* the application starts on it now */
			for (int i = 0; i < ret; i++)
				m->sent_ns[(m->sent + (size_t)i) % DTEL_QUERY_MANY_WINDOW_MAX] =
					now;
			m->sent += (size_t)ret;
			return 0;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN)
			return 0; /* the socket buffer is full: poll for POLLOUT */
		return errno == EPIPE || errno == ENOTCONN || errno == ECONNRESET ? -ECONNRESET
										  : -errno;
	}
	return 0;
}

/* When the application could start on the request awaited: its send, or the reply before. */
static uint64_t
many_since(const struct many *m)
{
	uint64_t sent = m->sent_ns[m->got % DTEL_QUERY_MANY_WINDOW_MAX];

	return sent > m->last_done_ns ? sent : m->last_done_ns;
}

/* Receive the reply to m->cmds[m->got], if one is there. 1: received (its result stored), 0:
 * none yet, or a -errno that ends the connection. */
static int
many_recv(struct many *m)
{
	struct dtel_session *s = m->s;
	struct iovec iov = {.iov_base = s->buf, .iov_len = s->buf_size};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
	uint64_t now;
	size_t cmd_len;
	ssize_t n;
	int ret;

	n = recvmsg(s->fd, &msg, MSG_DONTWAIT);
	if (n == 0)
		return -ECONNRESET;
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0
			: errno == ECONNRESET            ? -ECONNRESET
							 : -errno;
	now = dtel__now_ns();
	io_answered(m->io, many_since(m), now);
	m->last_done_ns = now;
	if ((msg.msg_flags & MSG_TRUNC) || (size_t)n > s->greeting.max_output_len)
		return -EMSGSIZE;
	(void)dtel__check_request(m->cmds[m->got], &cmd_len);
	ret = check_reply(s->buf, (size_t)n, m->cmds[m->got], cmd_len);
	if (ret == 0)
		ret = copy_reply(s, (size_t)n, &m->replies[m->got]);
	if (ret == -EPROTO)
		return ret; /* not the reply to this request: out of step */
	m->results[m->got++] = ret;
	io_serving(m->io, m->got < m->sent ? now : 0);
	return 1;
}

/*
 * Until every reply is in (or, once told to yield, every reply to what was sent), each within
 * @timeout_ms of the moment the application could start on it. 0, DTEL__YIELDED or -errno.
 */
static int
many_run(struct many *m, int timeout_ms)
{
	uint64_t timeout_ns = (uint64_t)timeout_ms * 1000000u;

	uint64_t idle_since = dtel__now_ns();

	while (m->got < m->n) {
		struct pollfd p = {.fd = m->s->fd, .events = POLLIN};
		int ret = many_send(m);

		if (ret < 0)
			return ret;
		if (m->got == m->sent && m->stop_sending)
			return DTEL__YIELDED; /* nothing in flight, nothing more to send */
		if (!m->stop_sending && m->sent < m->n && m->sent - m->got < m->window)
			p.events |= POLLOUT;
		/* Nothing in flight: the socket buffer was full; the timeout runs from then. */
		ret = poll(&p, 1,
			dtel__ms_left(
				(m->got < m->sent ? many_since(m) : idle_since) + timeout_ns));
		if (ret < 0 && errno != EINTR)
			return -errno;
		if (ret == 0)
			return -ETIMEDOUT;
		ret = 1;
		while (m->got < m->sent && (ret = many_recv(m)) == 1)
			;
		if (ret < 0)
			return ret;
		idle_since = dtel__now_ns();
	}
	return 0;
}

int
dtel__many_prepare(const char *const *cmds, size_t n, unsigned int window, int timeout_ms,
	struct dtel_reply *ret_replies, int *ret_results)
{
	size_t cmd_len;

	if (cmds == NULL || ret_replies == NULL || ret_results == NULL || timeout_ms <= 0 ||
		window == 0 || window > DTEL_QUERY_MANY_WINDOW_MAX)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (dtel__check_request(cmds[i], &cmd_len) < 0)
			return -EINVAL;
		memset(&ret_replies[i], 0, sizeof(ret_replies[i]));
		ret_results[i] = -ECANCELED;
	}
	return 0;
}

int
dtel__session_query_many(struct dtel_session *s, const char *const *cmds, size_t n,
	unsigned int window, int timeout_ms, struct dtel_reply *ret_replies, int *ret_results,
	size_t *ret_sent, struct dtel__io *io)
{
	struct many m = {
		.s = s,
		.cmds = cmds,
		.n = n,
		.window = window,
		.replies = ret_replies,
		.results = ret_results,
		.io = io,
	};
	int ret;

	*ret_sent = 0;
	ret = dtel__many_prepare(cmds, n, window, timeout_ms, ret_replies, ret_results);
	if (ret < 0 || s == NULL)
		return ret < 0 ? ret : -EINVAL;
	if (s->fd < 0)
		return -ENOTCONN;
	ret = many_run(&m, timeout_ms);
	io_serving(io, 0);
	*ret_sent = m.sent;
	if (ret >= 0)
		return ret; /* 0, or DTEL__YIELDED: every request sent was answered */
	/* The request that was waiting for its reply, or that could not be sent. */
	if (m.got < n)
		ret_results[m.got] = ret;
	/* Sent after it, their replies never read: the connection goes with them (below). */
	for (size_t i = m.got + 1; i < m.sent; i++)
		ret_results[i] = -ECONNABORTED;
	/* Replies still to come (also after an error that ends nothing by itself, such as
	 * ENOBUFS from sendmmsg()): read later, each would be taken for another request's, and
	 * DPDK's replies do not name their port. */
	if (dtel__error_closes(ret) || m.sent > m.got)
		drop_connection(s);
	return ret;
}

int
dtel_query(
	struct dtel_session *session, const char *cmd, int timeout_ms, struct dtel_reply *ret_reply)
{
	bool sent;

	return dtel__session_query(session, cmd, timeout_ms, ret_reply, &sent, NULL);
}

void
dtel_reply_release(struct dtel_reply *reply)
{
	if (reply == NULL)
		return;
	free(reply->json);
	reply->json = NULL;
	reply->len = 0;
	reply->flags = 0;
}
