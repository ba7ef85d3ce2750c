/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A DPDK application as one plugin sees it: requests through libdpdktel's shared session
 * for its socket (one connection per socket for the whole collectd process), the plugin's
 * health counters, one log line when it goes and one when it comes back, restarts.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dtp.h"

int
dtp_target_init(struct dtp_target *t, const char *plugin, const char *name, const char *path,
	int timeout_ms)
{
	memset(t, 0, sizeof(*t));
	t->plugin = plugin;
	snprintf(t->name, sizeof(t->name), "%s", name);
	snprintf(t->path, sizeof(t->path), "%s", path);
	t->timeout_ms = timeout_ms;
	t->dpdk_version = -EINVAL;
	C_COMPLAIN_INIT(&t->down_complaint);
	return dtel_shared_get(path, &t->sh);
}

void
dtp_target_fini(struct dtp_target *t)
{
	dtel_shared_put(t->sh);
	t->sh = NULL;
}

/* Why a request failed, in the operator's terms: completes "DPDK application 'x' (path) ". */
static const char *
reason(int err, char *buf, size_t size)
{
	switch (err) {
	case -ENOENT:
		return "is not running (no socket)";
	case -ECONNREFUSED:
		return "is gone (stale socket: the application exited without removing it)";
	case -EACCES:
		return "refuses us: permission denied: run collectd as root or as a member of the "
		       "group the application gives its socket to (see dpdktel-fwd "
		       "--telemetry-group)";
	case -ECONNRESET:
		return "closed the connection: it exited or restarted, or already serves the 10 "
		       "telemetry clients DPDK allows";
	case -ETIMEDOUT:
		return "does not answer within the timeout";
	case -EBUSY:
		return "does not answer within the timeout (another request to it is still "
		       "waiting)";
	default:
		snprintf(buf, size, "cannot be read: %s", dtel_strerror(err));
		return buf;
	}
}

/* Reasons that do not go away by themselves: the operator has something to fix. */
static bool
needs_fixing(int err)
{
	return err == -EACCES || err == -ENOTSOCK || err == -EPROTOTYPE || err == -EPROTO;
}

static void
note_down(struct dtp_target *t, const char *cmd, int err)
{
	char buf[128];

	t->up = false;
	t->last_error = err;
	/* Once per outage (c_complain_once stays quiet until c_release), and again when the
	 * outage that began as an exit or a restart turns into something to fix: otherwise a
	 * restarted application that refuses us would show only as "it exited". */
	if (c_would_release(&t->down_complaint)) {
		if (err == t->down_logged || !needs_fixing(err))
			return;
		plugin_log(LOG_WARNING, "%s plugin: DPDK application '%s' (%s) %s [%s]", t->plugin,
			t->name, t->path, reason(err, buf, sizeof(buf)), cmd);
		t->down_logged = err;
		return;
	}
	c_complain_once(LOG_WARNING, &t->down_complaint,
		"%s plugin: DPDK application '%s' (%s) %s [%s]", t->plugin, t->name, t->path,
		reason(err, buf, sizeof(buf)), cmd);
	t->down_logged = err;
}

static void
note_up(struct dtp_target *t)
{
	struct dtel_shared_status st;

	if (!t->up) {
		dtel_shared_status(t->sh, &st);
		c_release(LOG_INFO, &t->down_complaint,
			"%s plugin: DPDK application '%s' (%s) answers again, pid %ld", t->plugin,
			t->name, t->path, st.greeting.pid);
	}
	t->up = true;
	t->down_logged = 0;
	t->ever_up = true;
	t->last_error = 0;
}

/* Log the first unusable reply of an application process; later ones are only counted. */
static void
log_bad_reply(struct dtp_target *t, const char *what, int err)
{
	struct dtel_shared_status st;

	if (t->bad_reply_logged)
		return;
	t->bad_reply_logged = true;
	if (err == -EMSGSIZE) {
		dtel_shared_status(t->sh, &st);
		plugin_log(LOG_WARNING,
			"%s plugin: DPDK application '%s' (%s) sent a reply to %s larger than "
			"the %zu bytes of max_output_len its greeting announced: dropped "
			"(counted in telemetry_requests/truncated; later bad replies are only "
			"counted)",
			t->plugin, t->name, t->path, what, st.greeting.max_output_len);
		return;
	}
	plugin_log(LOG_WARNING,
		"%s plugin: DPDK application '%s' (%s) sent an unusable reply to %s: %s; its "
		"values are not dispatched (counted in telemetry_requests/invalid; later bad "
		"replies are only counted)",
		t->plugin, t->name, t->path, what,
		err == -ERANGE ? "a counter above 2^63-1, which collectd cannot store"
			       : "cut or malformed JSON, nesting too deep, or a value that is "
				 "negative, not an integer or of the wrong type");
}

void
dtp_bad_reply(struct dtp_target *t, const char *what, int err, uint64_t n)
{
	t->invalid += n;
	log_bad_reply(t, what, err);
}

/* Count a sent request's outcome @r, and note what it says of the application. */
static int
account(struct dtp_target *t, const char *cmd, int r, const struct dtel_reply *reply)
{
	t->sent++;
	/* Sent in a batch that an error ended before its reply came: the reply was left unread
	 * on a connection closed for it (so that it is never taken for another's). */
	if (r == -ECONNABORTED) {
		t->discarded++;
		return r;
	}
	if (r == 0) {
		note_up(t);
		if (reply->flags & DTEL_F_NEAR_LIMIT)
			t->truncated++;
		return 0;
	}
	t->failed++;
	/* A null reply or a cut datagram is this command's problem, not the application's. */
	if (r == -ENODATA || r == -EMSGSIZE) {
		if (r == -EMSGSIZE) {
			t->truncated++;
			log_bad_reply(t, cmd, r);
		}
		note_up(t);
		return r;
	}
	note_down(t, cmd, r);
	return r;
}

/* Not sent (reconnecting backs off after a refused connect, maybe the other plugin's): not a
 * request sent, but one without an answer, and the application is down for the reason of
 * that refusal: this plugin says so once as well. */
static int
unsent(struct dtp_target *t, const char *cmd)
{
	struct dtel_shared_status st;

	t->failed++;
	dtel_shared_status(t->sh, &st);
	if (st.last_error < 0 && st.last_error != -EAGAIN)
		note_down(t, cmd, st.last_error);
	return -EAGAIN;
}

/* A request's outcome @r that was never sent, or a sent one's: counted. */
static int
outcome(struct dtp_target *t, const char *cmd, int r, const struct dtel_reply *reply)
{
	if (r == -EAGAIN)
		return unsent(t, cmd);
	/* Our own queue was longer than the Timeout: nothing was asked of the application. */
	if (r == -EBUSY) {
		t->deferred++;
		return r;
	}
	return account(t, cmd, r, reply);
}

static struct dtel_request
request_of(const struct dtp_target *t, unsigned int window)
{
	return (struct dtel_request){
		.prio = t->prio, .timeout_ms = t->timeout_ms, .window = window};
}

static void
took(struct dtp_target *t, const struct dtel_request *rq)
{
	t->queued += rq->queued;
	t->service_ns += rq->service_ns;
}

int
dtp_query(struct dtp_target *t, const char *cmd, struct dtel_reply *ret)
{
	struct dtel_request rq = request_of(t, 1);
	int r = dtel_shared_request(t->sh, &rq, cmd, ret);

	took(t, &rq);
	return outcome(t, cmd, r, ret);
}

int
dtp_query_many(struct dtp_target *t, const char *const *cmds, size_t n, struct dtel_reply *ret,
	int *ret_results)
{
	return dtp_query_many_timed(t, cmds, n, ret, ret_results, NULL);
}

int
dtp_query_many_timed(struct dtp_target *t, const char *const *cmds, size_t n,
	struct dtel_reply *ret, int *ret_results, uint64_t *ret_sample_ns)
{
	struct dtel_request rq = request_of(t, DTP_QUERY_WINDOW);
	int r;

	rq.sample_ns = ret_sample_ns;
	r = dtel_shared_request_many(t->sh, &rq, cmds, n, ret, ret_results);

	took(t, &rq);
	if (n == 0)
		return 0;
	/* None went out: the first one failed as dtp_query() would have failed it. */
	if (r < 0) {
		ret_results[0] = outcome(t, cmds[0], r, NULL);
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		if (ret_results[i] != -ECANCELED)
			outcome(t, cmds[i], ret_results[i], &ret[i]);
	return 0;
}

static bool
read_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	bool ok;

	if (f == NULL)
		return false;
	ok = fgets(buf, (int)size, f) != NULL;
	fclose(f);
	return ok;
}

/* When process @pid started, in clock ticks since boot; 0 when there is no such process. */
static unsigned long long
proc_start_ticks(long pid)
{
	char path[64], buf[1024], *p, *end;
	unsigned long long start;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	if (pid <= 0 || !read_line(path, buf, sizeof(buf)))
		return 0;
	/* Field 22 is starttime (clock ticks); comm (field 2) may hold spaces, so count the
	 * fields from the ")" that ends it: starttime is the 20th after it. */
	p = strrchr(buf, ')');
	for (int field = 0; p != NULL && field < 20; field++)
		p = strchr(p + 1, ' ');
	if (p == NULL)
		return 0;
	errno = 0;
	start = strtoull(p + 1, &end, 10);
	return errno != 0 || end == p + 1 ? 0 : start;
}

/* "24.11.6" of "DPDK 24.11.6"; another greeting's version as it is. */
static const char *
release_of(const char *version)
{
	return strncmp(version, "DPDK ", 5) == 0 ? version + 5 : version;
}

/* Follow the process that holds the socket now: its start time is read from /proc once, when
 * the pid changes (not at each poll). */
static void
follow_owner(struct dtp_target *t, long pid)
{
	if (pid == t->pid)
		return;
	t->pid = pid;
	t->start_ticks = proc_start_ticks(pid);
}

bool
dtp_target_restarted(struct dtp_target *t, long *ret_old_pid)
{
	struct dtel_shared_status st;
	bool restarted;

	dtel_shared_status(t->sh, &st);
	if (st.connects > t->connects && t->connects > 0)
		t->reconnects += st.connects - t->connects;
	t->connects = st.connects;
	restarted = t->generation != 0 && st.generation != t->generation;
	if (ret_old_pid != NULL)
		*ret_old_pid = t->pid;
	if (restarted) {
		t->restarts++;
		t->bad_reply_logged = false; /* a new process: its first bad reply is news */
	}
	t->generation = st.generation;
	follow_owner(t, st.owner_pid);
	/* "" and unknown while the process of this generation has not greeted yet. */
	t->dpdk_version = dtel_dpdk_version(st.greeting.version);
	snprintf(t->dpdk_release, sizeof(t->dpdk_release), "%.*s", (int)sizeof(t->dpdk_release) - 1,
		release_of(st.greeting.version));
	return restarted;
}

int
dtp_proc_comm(long pid, char *buf, size_t size)
{
	char path[64];

	if (size == 0)
		return -EINVAL;
	buf[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
	if (pid <= 0 || !read_line(path, buf, size)) {
		buf[0] = '\0';
		return -ESRCH;
	}
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

bool
dtp_target_exited(const struct dtp_target *t)
{
	return t->start_ticks != 0 && proc_start_ticks(t->pid) != t->start_ticks;
}

int
dtp_socket_app(const char *path, char *buf, size_t size)
{
	char comm[32];
	long pid;
	int ret;

	if (size == 0)
		return -EINVAL;
	buf[0] = '\0';
	ret = dtel_probe_pid(path, &pid);
	if (ret < 0)
		return ret;
	if (dtp_proc_comm(pid, comm, sizeof(comm)) < 0)
		return -ESRCH;
	for (char *c = comm; *c; c++)
		if (!isalnum((unsigned char)*c) && *c != '-' && *c != '_')
			*c = '_';
	snprintf(buf, size, "%s", comm);
	return 0;
}

void
dtp_discovered_name(const struct dtel_socket_info *si, const char *app, char *buf, size_t size)
{
	if (si->index == 0)
		snprintf(buf, size, "%s", si->prefix);
	else if (app != NULL && app[0] != '\0')
		snprintf(buf, size, "%s_%s", si->prefix, app);
	else
		snprintf(buf, size, "%s_%u", si->prefix, si->index);
	/* As a configured <Instance> name must be (conf.c valid_name()): the name goes into
	 * plugin_instance, csv file names and Prometheus labels; a file prefix can hold a
	 * space, a quote or a newline. */
	for (char *c = buf; *c; c++)
		if (!isalnum((unsigned char)*c) && *c != '_' && *c != '-' && *c != '.')
			*c = '_';
	if (dtp_name_ambiguous(buf))
		*strrchr(buf, '.') = '_';
}

double
dtp_target_uptime(struct dtp_target *t)
{
	struct dtel_shared_status st;
	struct timespec now;

	dtel_shared_status(t->sh, &st);
	if (st.connects == 0)
		return -1;
	if (st.connects != t->up_connects || st.owner_pid != t->up_pid) {
		t->up_connects = st.connects;
		t->up_pid = st.owner_pid;
		t->up_start = proc_start_ticks(st.owner_pid);
	}
	if (t->up_start == 0 || clock_gettime(CLOCK_BOOTTIME, &now) != 0)
		return -1;
	return (double)now.tv_sec + (double)now.tv_nsec / 1e9 -
		(double)t->up_start / (double)sysconf(_SC_CLK_TCK);
}

bool
dtp_target_young(struct dtp_target *t)
{
	double up = dtp_target_uptime(t);

	return up >= 0 && up < DTP_YOUNG_S;
}

void *
dtp_slot(void *arr, size_t *n, size_t size, unsigned int id, size_t *ret_i, bool *ret_new)
{
	char *v = arr;
	unsigned int have;

	if (ret_new != NULL)
		*ret_new = false;
	for (size_t i = 0; i < *n; i++) {
		memcpy(&have, v + i * size, sizeof(have));
		if (have == id) {
			*ret_i = i;
			return arr;
		}
	}
	v = realloc(arr, (*n + 1) * size);
	if (v == NULL)
		return NULL;
	memset(v + *n * size, 0, size);
	memcpy(v + *n * size, &id, sizeof(id));
	if (ret_new != NULL)
		*ret_new = true;
	*ret_i = (*n)++;
	return v;
}

bool
dtp_types_defined(const char *plugin, const char *const *types, size_t n, const char *doc)
{
	for (size_t i = 0; i < n; i++) {
		if (plugin_get_ds(types[i]) == NULL) {
			DTP_LOG(LOG_ERR, plugin,
				"type '%s' is not defined: add a second TypesDB line with "
				"dpdktel.types.db (see %s)",
				types[i], doc);
			return false;
		}
	}
	return true;
}

uint64_t
dtp_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}
