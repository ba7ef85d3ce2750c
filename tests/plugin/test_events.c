/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdktel_events against the fake collectd daemon and a simulated DPDK application: link
 * down and up, a flap storm, a swapped answer that must not raise an alarm, a down+up missed
 * between two polls, stalls and recovery, an exited lcore, an application gone, back and
 * restarted, timeouts; with the exact text, severity, identifiers and meta data of each
 * notification. The plugin's poll thread runs for real; tests wait on conditions with
 * deadlines, and step the simulation only after the plugin has polled it.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "dtel.h"
#include "fake_collectd.h"
#include "fake_proc.h"
#include "fake_server.h"
#include "test_util.h"

void module_register(void);

#define MAXP 4
#define LINK_POLLS 64

/* The simulated application; the test changes it, the fake server's threads read it. */
struct sim {
	pthread_mutex_t m;
	bool fwd; /* offers /fwd/ports, /fwd/lcores, /fwd/info */
	int nports;
	bool up[MAXP];
	uint64_t speed[MAXP];
	uint64_t changes[MAXP];
	int lie_port; /* the next link answer for this port says the opposite, once */
	int nlcores;
	int state[MAXP];
	uint64_t age_us[MAXP];
	uint64_t stalls[MAXP];
	bool silent; /* never answers */
	bool silent_but_root; /* answers the command list "/" only */
	const char *dev; /* the driver part of the device names of /ethdev/info ("net_tap") */
	bool garbage; /* answers with bytes that are not JSON */
	bool bad_values; /* link answers with a negative speed */
	bool started[MAXP]; /* dev_started of /ethdev/info */
	int start_on_info; /* this port is started (and up) when its /ethdev/info is asked */
	unsigned int link_queries; /* link answers given so far */
	unsigned int port_link_queries[MAXP]; /* ... of each port */
	int slow_once_ms; /* the next reply waits this long, once */
	bool eal; /* offers /eal/lcore/list, /eal/lcore/info, /eal/lcore/usage (DPDK >= 23.03) */
	bool no_usage_cb; /* eal: no usage callback (testpmd without --record-core-cycles) */
	bool frozen[MAXP]; /* eal: this lcore's cycles stand still */
	uint64_t cycles[MAXP]; /* eal: total_cycles */
	unsigned int lcore_queries; /* eal: /eal/lcore/info answers given so far */
	unsigned int list_queries, usage_queries; /* eal: /eal/lcore/list, /eal/lcore/usage */
	/* Requests of one poll, which begins with /ethdev/list (the first request of a poll of
	 * an application without /fwd/ports): link_status and usage requests in the current
	 * poll, and how many polls had 1 and 2 of each (of link requests, up to MAXP). */
	unsigned int poll_links, poll_usage, polls_links[MAXP + 1], polls_usage[3];
	uint64_t main_age_ms; /* fwd: link_check_age_ms of /fwd/info */
	int link_delay_ms; /* each /ethdev/link_status takes this long (a slow driver) */
	int info_delay_ms; /* each /info takes this long, on the CPU */
	bool info_by_turns; /* ... every other one, the others at once */
	unsigned int info_queries; /* /info answers given so far */
	unsigned int root_queries; /* command lists "/" given so far */
	int cold_link_ms; /* port 0's first link answer takes this much longer (a cold reply) */
	/* When each poll that asked links began (its list), the first LINK_POLLS since the
	 * counts were forgotten; list_ms: when the current poll began. */
	uint64_t link_poll_ms[LINK_POLLS], list_ms;
	unsigned int nlink_polls;
};

static struct sim sim = {.m = PTHREAD_MUTEX_INITIALIZER};

static uint64_t ms_now(void);

static void
sim_set(void (*fn)(void *), void *arg)
{
	pthread_mutex_lock(&sim.m);
	fn(arg);
	pthread_mutex_unlock(&sim.m);
}

static unsigned int
sim_link_queries(void)
{
	unsigned int n;

	pthread_mutex_lock(&sim.m);
	n = sim.link_queries;
	pthread_mutex_unlock(&sim.m);
	return n;
}

static char *
fwd_ports(void)
{
	char ids[64] = "", st[128] = "", sp[128] = "", dx[256] = "", ch[128] = "", age[64] = "";

	for (int i = 0; i < sim.nports; i++) {
		bool up = sim.up[i] != (sim.lie_port == i);
		const char *c = i ? "," : "";

		snprintf(ids + strlen(ids), sizeof(ids) - strlen(ids), "%s%d", c, i);
		snprintf(st + strlen(st), sizeof(st) - strlen(st), "%s\"%s\"", c,
			up ? "UP" : "DOWN");
		snprintf(sp + strlen(sp), sizeof(sp) - strlen(sp), "%s%" PRIu64, c,
			up ? sim.speed[i] : 0);
		snprintf(dx + strlen(dx), sizeof(dx) - strlen(dx), "%s\"%s\"", c,
			up ? "full-duplex" : "unknown");
		snprintf(ch + strlen(ch), sizeof(ch) - strlen(ch), "%s%" PRIu64, c, sim.changes[i]);
		snprintf(age + strlen(age), sizeof(age) - strlen(age), "%s0", c);
	}
	sim.lie_port = -1;
	return fs_printf(
		"{\"/fwd/ports\":{\"port_id\":[%s],\"link_status\":[%s],\"link_speed\":[%s],"
		"\"link_duplex\":[%s],\"link_changes\":[%s],\"last_change_age_ms\":[%s]}}",
		ids, st, sp, dx, ch, age);
}

static char *
fwd_lcores(void)
{
	static const char *const names[] = {"STARTING", "RUNNING", "IDLE", "STALLED", "EXITED"};
	char ids[64] = "", nm[128] = "", sc[64] = "", hb[64] = "", age[128] = "", stl[64] = "";

	for (int i = 0; i < sim.nlcores; i++) {
		const char *c = i ? "," : "";

		snprintf(ids + strlen(ids), sizeof(ids) - strlen(ids), "%s%d", c, i + 1);
		snprintf(nm + strlen(nm), sizeof(nm) - strlen(nm), "%s\"%s\"", c,
			names[sim.state[i]]);
		snprintf(sc + strlen(sc), sizeof(sc) - strlen(sc), "%s%d", c, sim.state[i]);
		snprintf(hb + strlen(hb), sizeof(hb) - strlen(hb), "%s7", c);
		snprintf(age + strlen(age), sizeof(age) - strlen(age), "%s%" PRIu64, c,
			sim.age_us[i]);
		snprintf(stl + strlen(stl), sizeof(stl) - strlen(stl), "%s%" PRIu64, c,
			sim.stalls[i]);
	}
	return fs_printf("{\"/fwd/lcores\":{\"lcore_id\":[%s],\"state\":[%s],\"state_code\":[%s],"
			 "\"heartbeat\":[%s],\"heartbeat_age_us\":[%s],\"stalls\":[%s]}}",
		ids, nm, sc, hb, age, stl);
}

static char *
link_status(unsigned int port)
{
	bool up = sim.up[port] != (sim.lie_port == (int)port);

	if (sim.lie_port == (int)port)
		sim.lie_port = -1;
	if (!up)
		return fs_printf("{\"/ethdev/link_status\":{\"status\":\"DOWN\"}}");
	return fs_printf("{\"/ethdev/link_status\":{\"status\":\"UP\",\"speed\":%" PRIu64
			 ",\"duplex\":\"full-duplex\"}}",
		sim.speed[port]);
}

static char *
root(void)
{
	return fs_printf(
		"{\"/\":[\"/\",\"/ethdev/info\",\"/ethdev/link_status\",\"/ethdev/list\"%s%s]}",
		sim.fwd ? ",\"/fwd/info\",\"/fwd/lcores\",\"/fwd/ports\"" : "",
		sim.eal ? ",\"/eal/lcore/info\",\"/eal/lcore/list\",\"/eal/lcore/usage\"" : "");
}

/* Shaped as DPDK 23.11 lib/eal/common/eal_common_lcore.c handle_lcore_info() answers, with
 * cycles as testpmd --record-core-cycles reports them; lcores 1..nlcores. */
static char *
eal_lcore_info(unsigned int id)
{
	if (id < 1 || id > (unsigned int)sim.nlcores)
		return fs_printf("{\"/eal/lcore/info\":null}");
	sim.lcore_queries++;
	if (sim.no_usage_cb) /* handle_lcore_info adds cycles only when the callback answers */
		return fs_printf("{\"/eal/lcore/info\":{\"lcore_id\":%u,\"socket\":0,"
				 "\"role\":\"RTE\",\"cpuset\":[%u]}}",
			id, id);
	if (!sim.frozen[id - 1])
		sim.cycles[id - 1] += 1000;
	return fs_printf("{\"/eal/lcore/info\":{\"lcore_id\":%u,\"socket\":0,\"role\":\"RTE\","
			 "\"cpuset\":[%u],\"total_cycles\":%" PRIu64 ",\"busy_cycles\":%" PRIu64
			 "}}",
		id, id, sim.cycles[id - 1], sim.cycles[id - 1] / 2);
}

static char *
eal_lcore_list(void)
{
	sim.list_queries++;
	return fs_printf("{\"/eal/lcore/list\":[%s]}", sim.nlcores == 1 ? "1" : "1,2");
}

/*
 * Shaped as DPDK 23.11 to 26.07 lib/eal/common/eal_common_lcore.c handle_lcore_usage()
 * answers: a dict of four arrays, one entry per lcore whose usage callback answered (testpmd
 * --record-core-cycles: its forwarding lcores; empty arrays without a callback). The cycles
 * of an lcore that is not frozen move on with every answer; busy is half of total.
 */
static char *
eal_lcore_usage(void)
{
	char ids[32] = "", tot[96] = "", busy[96] = "", ratio[48] = "";

	sim.usage_queries++;
	sim.poll_usage++;
	for (int i = 0; !sim.no_usage_cb && i < sim.nlcores; i++) {
		const char *c = i ? "," : "";

		if (!sim.frozen[i])
			sim.cycles[i] += 1000;
		snprintf(ids + strlen(ids), sizeof(ids) - strlen(ids), "%s%d", c, i + 1);
		snprintf(tot + strlen(tot), sizeof(tot) - strlen(tot), "%s%" PRIu64, c,
			sim.cycles[i]);
		snprintf(busy + strlen(busy), sizeof(busy) - strlen(busy), "%s%" PRIu64, c,
			sim.cycles[i] / 2);
		snprintf(ratio + strlen(ratio), sizeof(ratio) - strlen(ratio), "%s\"50.00%%\"", c);
	}
	return fs_printf("{\"/eal/lcore/usage\":{\"lcore_ids\":[%s],\"total_cycles\":[%s],"
			 "\"busy_cycles\":[%s],\"usage_ratio\":[%s]}}",
		ids, tot, busy, ratio);
}

/* A poll begins (/ethdev/list): count what the one before it sent. */
static void
poll_begins(void)
{
	if (sim.poll_links >= 1 && sim.poll_links <= MAXP)
		sim.polls_links[sim.poll_links]++;
	if (sim.poll_usage >= 1 && sim.poll_usage <= 2)
		sim.polls_usage[sim.poll_usage]++;
	if (sim.poll_links >= 1 && sim.nlink_polls < LINK_POLLS)
		sim.link_poll_ms[sim.nlink_polls++] = sim.list_ms;
	sim.list_ms = ms_now();
	sim.poll_links = sim.poll_usage = 0;
}

static void
sim_handler(
	struct fake_server *fs, unsigned int conn, const char *req, struct fake_reply *o, void *arg)
{
	const char *comma = strchr(req, ',');
	unsigned int id = comma ? (unsigned int)strtoul(comma + 1, NULL, 10) : 0;
	size_t n = comma ? (size_t)(comma - req) : strlen(req);

	(void)fs, (void)conn, (void)arg;
	pthread_mutex_lock(&sim.m);
	o->delay_ms = sim.slow_once_ms;
	sim.slow_once_ms = 0;
#define IS(c) (n == strlen(c) && strncmp(req, c, n) == 0)
	if (sim.silent || (sim.silent_but_root && !IS("/")))
		o->action = FAKE_SILENT;
	else if (sim.garbage)
		o->data = fs_printf("\xff garbage %s", req), sim.link_queries++;
	else if (sim.bad_values && IS("/ethdev/link_status"))
		o->data = fs_printf("{\"/ethdev/link_status\":{\"status\":\"UP\",\"speed\":-10,"
				    "\"duplex\":\"full-duplex\"}}"),
		sim.link_queries++;
	else if (IS("/") && (++sim.root_queries, true))
		o->data = root();
	else if (IS("/slow")) /* a read of the other plugin's that takes 15 ms */
		o->data = fs_printf("{\"/slow\":1}"), o->delay_ms = 15;
	else if (IS("/info") && (++sim.info_queries, true)) /* telemetry.c json_info() */
		o->data = fs_printf("{\"/info\":{\"version\":\"DPDK 22.11.11\",\"pid\":%ld,"
				    "\"max_output_len\":16384}}",
			(long)getpid()),
		o->delay_ms = sim.info_by_turns && sim.info_queries % 2 ? 0 : sim.info_delay_ms,
		o->spin = true;
	else if (IS("/ethdev/list") && (poll_begins(), true))
		o->data = fs_printf("{\"/ethdev/list\":[%s]}",
			sim.nports == 1           ? "0"
				: sim.nports == 2 ? "0,1"
						  : "0,1,2");
	else if (IS("/ethdev/link_status") && id < MAXP)
		o->data = link_status(id), sim.link_queries++, sim.poll_links++,
		sim.port_link_queries[id]++, o->delay_ms += sim.link_delay_ms,
		o->delay_ms += id == 0 && sim.port_link_queries[0] == 1 ? sim.cold_link_ms : 0,
		o->spin = sim.link_delay_ms > 0;
	else if (IS("/ethdev/info") && id < MAXP) {
		if ((int)id == sim.start_on_info) {
			sim.started[id] = sim.up[id] = true;
			sim.start_on_info = -1;
		}
		o->data = fs_printf("{\"/ethdev/info\":{\"name\":\"%s%u\",\"port_id\":%u,"
				    "\"dev_started\":%d}}",
			sim.dev, id, id, sim.started[id]);
	} else if (IS("/fwd/ports") && sim.fwd)
		o->data = fwd_ports(), sim.link_queries++;
	else if (IS("/fwd/lcores") && sim.fwd)
		o->data = fwd_lcores();
	else if (IS("/fwd/info") && sim.fwd)
		o->data = fs_printf("{\"/fwd/info\":{\"stall_ms\":100,\"link_poll_ms\":10,"
				    "\"main_lcore\":0,\"link_check_age_ms\":%" PRIu64 "}}",
			sim.main_age_ms);
	else if (IS("/eal/params")) /* recorded from testpmd 22.11 (tests/data) */
		o->data = fs_golden("dpdk-22.11/eal_params.json", &o->len);
	else if (IS("/eal/lcore/list") && sim.eal)
		o->data = eal_lcore_list();
	else if (IS("/eal/lcore/info") && sim.eal)
		o->data = eal_lcore_info(id);
	else if (IS("/eal/lcore/usage") && sim.eal)
		o->data = eal_lcore_usage();
	else
		o->data = fs_printf("{\"%.*s\":null}", (int)n, req);
#undef IS
	pthread_mutex_unlock(&sim.m);
}

/* Fixture ------------------------------------------------------------------------------ */

static struct fake_server *fs;
static char dir[64], path[128];

static void
start_server(long pid)
{
	struct fake_config cfg = {.handler = sim_handler, .pid = pid, .path = path};

	fs = fs_start_path(&cfg);
	assert_non_null(fs);
}

/* The simulated application greets as DPDK @version (e.g. "25.11.2"). */
static void
start_server_release(long pid, const char *version)
{
	char greeting[128];
	struct fake_config cfg = {
		.handler = sim_handler, .pid = pid, .path = path, .greeting = greeting};

	snprintf(greeting, sizeof(greeting),
		"{\"version\":\"DPDK %s\",\"pid\":%ld,\"max_output_len\":16384}", version, pid);
	fs = fs_start_path(&cfg);
	assert_non_null(fs);
}

static void
stop_server(void)
{
	fs_stop(fs);
	fs = NULL;
}

static int
setup(void **state)
{
	(void)state;
	pthread_mutex_lock(&sim.m);
	sim.fwd = false;
	sim.nports = 2;
	sim.lie_port = -1;
	sim.nlcores = 2;
	sim.silent = false;
	sim.silent_but_root = false;
	sim.dev = "net_tap";
	sim.garbage = false;
	sim.bad_values = false;
	sim.start_on_info = -1;
	sim.link_queries = 0;
	sim.slow_once_ms = 0;
	sim.link_delay_ms = 0;
	sim.info_delay_ms = 0;
	sim.info_queries = 0;
	sim.root_queries = 0;
	sim.cold_link_ms = 0;
	sim.info_by_turns = false;
	sim.nlink_polls = 0;
	sim.list_ms = 0;
	sim.eal = false;
	sim.no_usage_cb = false;
	sim.lcore_queries = 0;
	sim.list_queries = sim.usage_queries = 0;
	sim.poll_links = sim.poll_usage = 0;
	memset(sim.polls_links, 0, sizeof(sim.polls_links));
	memset(sim.polls_usage, 0, sizeof(sim.polls_usage));
	sim.main_age_ms = 2;
	for (int i = 0; i < MAXP; i++) {
		sim.frozen[i] = false;
		sim.cycles[i] = 0;
		sim.up[i] = true;
		sim.started[i] = true;
		sim.speed[i] = 10000;
		sim.changes[i] = 0;
		sim.state[i] = 1;
		sim.age_us[i] = 5;
		sim.stalls[i] = 0;
	}
	pthread_mutex_unlock(&sim.m);
	if (test_tmpdir("ev", dir, sizeof(dir)) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/edge1", dir);
	mkdir(path, 0700);
	strcat(path, "/dpdk_telemetry.v2");
	fc_reset();
	/* 0.4 s: values of one identifier go out at most every 0.2 s (the plugin's
	 * dispatch_gap()), far more than the fake's 50 ms window of write threads. */
	interval_g = MS_TO_CDTIME_T(400);
	fc_load(module_register);
	return 0;
}

/*
 * Opens of /proc/<pid>/stat, where the plugin reads a process's start time (its liveness):
 * the plugin is compiled into this program, so its fopen() calls land here first.
 */
static unsigned int proc_stat_opens; /* atomic */

FILE *
fopen(const char *name, const char *mode)
{
	FILE *(*real)(const char *, const char *) =
		(FILE * (*)(const char *, const char *)) dlsym(RTLD_NEXT, "fopen");
	size_t n = strlen(name);

	if (strncmp(name, "/proc/", 6) == 0 && n > 5 && strcmp(name + n - 5, "/stat") == 0)
		__atomic_fetch_add(&proc_stat_opens, 1, __ATOMIC_RELAXED);
	return real(name, mode);
}

/* A process a test forked to serve the socket: teardown ends it when the test failed. */
static pid_t helper_child;

static bool reading; /* atomic */
static pthread_t reader;
static bool reader_started;

static void *
reader_main(void *arg)
{
	(void)arg;
	while (__atomic_load_n(&reading, __ATOMIC_RELAXED))
		fc_read_all();
	return NULL;
}

/* Also from teardown: a test that failed half-way must not leave its reader running. */
static void
stop_reader(void)
{
	if (!reader_started)
		return;
	__atomic_store_n(&reading, false, __ATOMIC_RELAXED);
	pthread_join(reader, NULL);
	reader_started = false;
}

static int
teardown(void **state)
{
	(void)state;
	stop_reader();
	if (helper_child > 0) {
		kill(helper_child, SIGKILL);
		waitpid(helper_child, NULL, 0);
		helper_child = 0;
	}
	fc_shutdown(); /* stops the poll threads */
	fp_hide_pid(false);
	if (fs != NULL)
		stop_server();
	return test_rmdir(dir);
}

static void
start_plugin(const char *opts)
{
	char text[1024];

	/* Polls every 5 ms of a fake on a busy host can be over the default budget: these
	 * tests are of the events (each poll asks links and lcores together), the budget's
	 * set it. */
	snprintf(text, sizeof(text),
		"PollInterval 0.005\nFlapWindow 1\n%s\n%s\n<Instance \"edge1\">\n"
		" SocketPath \"%s\"\n</Instance>\n",
		opts && (strstr(opts, "MaxAppLoad") || strstr(opts, "PollLoad")) ? ""
										 : "MaxAppLoad 0",
		opts ? opts : "", path);
	assert_int_equal(fc_configure("dpdktel_events", text), 0);
	if (fc_init() != 0) {
		fc_dump_logs();
		fail_msg("init failed");
	}
}

static uint64_t
ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Wait until @n notifications contain @needle; the last into *out. */
static void
wait_note(const char *needle, size_t n, struct fc_notification *out)
{
	uint64_t deadline = ms_now() + 5000;

	while (fc_notifications_matching(needle, out) < n && ms_now() < deadline)
		usleep(1000);
	if (fc_notifications_matching(needle, out) < n) {
		fc_dump_logs();
		fail_msg("no notification \"%s\" (wanted %zu)", needle, n);
	}
}

/* Wait until @n log lines contain @needle. */
static void
wait_logs(const char *needle, size_t n)
{
	uint64_t deadline = ms_now() + 5000;

	while (fc_logs_matching(needle) < n && ms_now() < deadline)
		usleep(1000);
	if (fc_logs_matching(needle) < n) {
		fc_dump_logs();
		fail_msg("no log line \"%s\" (wanted %zu)", needle, n);
	}
}

/* Wait until the last value of pi/type is @want (it follows its notification). */
static void
wait_gauge(const char *pi, const char *type, double want)
{
	uint64_t deadline = ms_now() + 5000;
	struct fc_value v;

	while (!(fc_find_copy(pi, type, NULL, &v) && v.v[0].gauge == want) && ms_now() < deadline)
		usleep(1000);
	if (!(fc_find_copy(pi, type, NULL, &v) && v.v[0].gauge == want))
		fail_msg("%s/%s never became %g", pi, type, want);
}

static void
wait_derive(const char *pi, const char *type, derive_t want)
{
	uint64_t deadline = ms_now() + 5000;
	struct fc_value v;

	while (!(fc_find_copy(pi, type, NULL, &v) && v.v[0].derive == want) && ms_now() < deadline)
		usleep(1000);
	if (!(fc_find_copy(pi, type, NULL, &v) && v.v[0].derive == want))
		fail_msg("%s/%s never became %" PRId64, pi, type, (int64_t)want);
}

/*
 * collectd's read of the instance, until the value pi/type-ti went out at or after this call
 * (a read skips values a poll sent less than half an interval ago: dispatch_gap() in the
 * plugin), into *out; false at the deadline.
 */
static bool
read_fresh(const char *pi, const char *type, const char *ti, struct fc_value *out)
{
	uint64_t deadline = ms_now() + 5000;
	cdtime_t t0 = cdtime();

	do {
		fc_read_all();
		if (fc_find_copy(pi, type, ti, out) && out->time >= t0)
			return true;
		usleep(10000);
	} while (ms_now() < deadline);
	return false;
}

/* Let the plugin poll the links k more times (so that a state is surely seen, or not). */
static void
wait_polls(unsigned int k)
{
	unsigned int start = sim_link_queries();
	uint64_t deadline = ms_now() + 5000;

	while (sim_link_queries() < start + k && ms_now() < deadline)
		usleep(500);
	assert_true(sim_link_queries() >= start + k);
}

static void
set_up(void *arg)
{
	int *a = arg;

	sim.up[a[0]] = a[1];
}

static void
set_link_delay(void *arg)
{
	sim.link_delay_ms = *(int *)arg;
}

static void
set_link(int port, bool up)
{
	int a[2] = {port, up};

	sim_set(set_up, a);
}

static unsigned int sim_get(const unsigned int *counter);

/* Tests ---------------------------------------------------------------------------------- */

static void
link_down_then_up(void **state)
{
	struct fc_notification n;

	(void)state;
	start_server(10);
	start_plugin(NULL);
	wait_polls(4);
	assert_int_equal(fc_notifications_matching("Link", NULL), 0);
	set_link(0, false);
	wait_note("Link down on edge1 port 0", 1, &n);
	assert_int_equal(n.severity, NOTIF_FAILURE);
	assert_string_equal(n.message, "Link down on edge1 port 0 (net_tap0)");
	assert_string_equal(n.plugin, "dpdktel_events");
	assert_string_equal(n.plugin_instance, "edge1.port0");
	assert_string_equal(n.type, "link_status");
	assert_string_equal(n.host, "fakehost");
	assert_non_null(strstr(n.meta, "port_id=0;name=net_tap0;old_state=up;new_state=down;"));
	/* The value goes out at the change, not only at the next interval. */
	wait_gauge("edge1.port0", "link_status", 0);
	set_link(0, true);
	wait_note("Link up on edge1 port 0", 1, &n);
	assert_int_equal(n.severity, NOTIF_OKAY);
	assert_non_null(
		strstr(n.message, "Link up on edge1 port 0: 10000 Mbps full-duplex after "));
	assert_non_null(strstr(n.meta, "old_state=down;new_state=up;duration_ms="));
	wait_gauge("edge1.port0", "link_status", 1);
	/* No counter from the application: ours. Dispatched after link_status, in the same
	 * burst: waited for, not read at once. */
	wait_derive("edge1.port0", "link_changes", 2);
	wait_polls(4);
	assert_int_equal(fc_notifications_matching("Link", NULL), 2);
	assert_int_equal(fc_notifications_matching("port 1", NULL), 0);
}

static void
lie(void *arg)
{
	sim.lie_port = *(int *)arg;
}

static void
swapped_answer_raises_no_alarm(void **state)
{
	struct fc_value v;
	int port = 1;

	(void)state;
	start_server(10);
	start_plugin(NULL);
	wait_polls(4);
	sim_set(lie, &port); /* one answer says down; the confirming query says up */
	wait_polls(6);
	assert_int_equal(fc_notifications_matching("Link", NULL), 0);
	assert_true(read_fresh("edge1", "telemetry_requests", "discarded", &v));
	assert_int_equal(v.v[0].derive, 1);
	assert_true(fc_find_copy("edge1.port1", "link_status", NULL, &v));
	assert_true(v.v[0].gauge == 1);
}

static void
flap_storm_one_warning(void **state)
{
	struct fc_notification n;

	(void)state;
	start_server(10);
	/* A down port is polled as often as an up one here, to see every state. */
	start_plugin("FlapThreshold 3\nDownPollInterval 0.005");
	wait_polls(4);
	for (int i = 0; i < 20; i++) {
		set_link(0, i % 2 == 1);
		wait_polls(3); /* every state seen and confirmed */
	}
	wait_note("Link flapping on edge1 port 0", 1, &n);
	assert_int_equal(n.severity, NOTIF_WARNING);
	assert_string_equal(n.message, "Link flapping on edge1 port 0: 3 changes within 1 s");
	/* Stable for a whole window: one notification with the settled state. */
	wait_note("Link stopped flapping on edge1 port 0", 1, &n);
	assert_int_equal(n.severity, NOTIF_OKAY);
	assert_string_equal(
		n.message, "Link stopped flapping on edge1 port 0: up, 10000 Mbps full-duplex");
	/* Two ordinary changes before the third made it flapping, then silence. */
	assert_int_equal(fc_notifications_matching("Link flapping", NULL), 1);
	assert_int_equal(fc_notifications_matching("Link down on edge1 port 0", NULL), 1);
	assert_int_equal(fc_notifications_matching("Link up on edge1 port 0", NULL), 1);
	assert_int_equal(fc_notifications_matching("edge1 port 0", NULL), 4);
}

/*
 * A port whose link is down is polled every DownPollInterval only (a down ixgbe fiber port
 * starts a link-setup thread at each request); once up again it is polled at PollInterval
 * at once: the next down is seen within a few polls, not a DownPollInterval later (it was,
 * for the first version of the per-port schedule).
 */
static void
down_port_polled_slowly_up_port_fast_again(void **state)
{
	struct fc_notification n;
	unsigned int before;
	uint64_t t0;

	(void)state;
	start_server(10);
	start_plugin("DownPollInterval 0.5\nFlapThreshold 10");
	wait_polls(4);
	set_link(0, false);
	wait_note("Link down on edge1 port 0", 1, &n);
	/* Down: about 0.5 s between two of its link requests, against 5 ms for port 1. */
	before = sim_get(&sim.port_link_queries[0]);
	usleep(300 * 1000);
	assert_true(sim_get(&sim.port_link_queries[0]) <= before + 1);
	set_link(0, true);
	wait_note("Link up on edge1 port 0", 1, &n);
	t0 = ms_now();
	set_link(0, false);
	wait_note("Link down on edge1 port 0", 2, &n);
	if (ms_now() - t0 > 300)
		fail_msg("the second down took %" PRIu64 " ms: the port was still polled as a down "
			 "one",
			ms_now() - t0);
}

static void
bump_changes(void *arg)
{
	sim.changes[0] += *(int *)arg;
}

static void
missed_down_up_seen_from_counter(void **state)
{
	struct fc_notification n;
	int two = 2;

	(void)state;
	sim.fwd = true;
	start_server(10);
	start_plugin(NULL);
	wait_polls(4);
	sim_set(bump_changes, &two); /* down and up between two polls: state unchanged */
	wait_note("Link flapped on edge1 port 0", 1, &n);
	assert_int_equal(n.severity, NOTIF_WARNING);
	assert_string_equal(n.message,
		"Link flapped on edge1 port 0: 2 changes between two polls, "
		"now up");
	/* The values of a poll go out at its end, after its notifications. */
	wait_derive("edge1.port0", "link_changes", 2);
}

static void
set_lcore(void *arg)
{
	uint64_t *a = arg;

	sim.state[a[0]] = (int)a[1];
	sim.age_us[a[0]] = a[2];
	sim.stalls[a[0]] = a[3];
}

static void
stall_and_recovery(void **state)
{
	struct fc_notification n;
	struct fc_value v;

	(void)state;
	sim.fwd = true;
	start_server(10);
	start_plugin(NULL);
	wait_polls(4);
	sim_set(set_lcore, (uint64_t[]){0, 3, 250000, 1});
	wait_note("lcore 1 of edge1 stalled", 1, &n);
	assert_int_equal(n.severity, NOTIF_FAILURE);
	assert_string_equal(n.message, "lcore 1 of edge1 stalled: no heartbeat for 250 ms");
	assert_string_equal(n.plugin_instance, "edge1.lcore1");
	assert_string_equal(n.type, "lcore_state");
	assert_string_equal(n.meta, "lcore_id=1;old_state=RUNNING;new_state=STALLED;");
	wait_gauge("edge1.lcore1", "lcore_state", 3);
	sim_set(set_lcore, (uint64_t[]){0, 1, 3, 1});
	wait_note("lcore 1 of edge1 recovered after", 1, &n);
	assert_int_equal(n.severity, NOTIF_OKAY);
	assert_non_null(strstr(n.meta, "old_state=STALLED;new_state=RUNNING;duration_ms="));
	wait_gauge("edge1.lcore1", "lcore_state", 1);
	assert_true(fc_find_copy("edge1.lcore1", "stalls", NULL, &v));
	assert_int_equal(v.v[0].derive, 1);
	assert_int_equal(fc_notifications_matching("lcore 2", NULL), 0);
}

static void
stall_seen_before_the_application_says_so(void **state)
{
	struct fc_notification n;

	(void)state;
	sim.fwd = true;
	start_server(10);
	start_plugin("StallThreshold 0.05");
	wait_polls(4);
	/* Still RUNNING by the application's clock, but no heartbeat for 60 ms: ours is 50. */
	sim_set(set_lcore, (uint64_t[]){1, 1, 60000, 0});
	wait_note("lcore 2 of edge1 stalled: no heartbeat for 60 ms", 1, &n);
}

static void
exited_lcore(void **state)
{
	struct fc_notification n;

	(void)state;
	sim.fwd = true;
	start_server(10);
	start_plugin(NULL);
	wait_polls(4);
	sim_set(set_lcore, (uint64_t[]){1, 4, 900000, 0});
	wait_note("lcore 2 of edge1 exited", 1, &n);
	assert_int_equal(n.severity, NOTIF_FAILURE);
	assert_string_equal(n.meta, "lcore_id=2;old_state=RUNNING;new_state=EXITED;");
}

static void
gone_back_and_restarted(void **state)
{
	struct fc_notification n;
	char keep[160];

	(void)state;
	start_server(10);
	start_plugin(NULL);
	wait_polls(4);
	/* The old socket file kept linked, so that the file system cannot hand its inode to the
	 * next one. */
	snprintf(keep, sizeof(keep), "%s.old", path);
	assert_int_equal(link(path, keep), 0);
	stop_server();
	wait_note("DPDK application edge1 is gone", 1, &n);
	assert_int_equal(n.severity, NOTIF_FAILURE);
	assert_string_equal(n.plugin_instance, "edge1");
	assert_string_equal(n.type, "up");
	assert_string_equal(n.meta, "name=edge1;old_state=up;new_state=gone;");
	/* Started again with the same pid (pid 1 of a container that restarted): a new socket
	 * file, so another process. */
	start_server(10);
	wait_note("DPDK application edge1 is back after", 1, &n);
	assert_int_equal(n.severity, NOTIF_OKAY);
	wait_note("DPDK application edge1 restarted (pid 10 → 10)", 1, NULL);
	unlink(keep);
	stop_server();
	wait_note("DPDK application edge1 is gone", 2, NULL);
	start_server(11);
	wait_note("DPDK application edge1 restarted (pid 10 → 11)", 1, &n);
	assert_int_equal(n.severity, NOTIF_WARNING);
	assert_string_equal(n.meta, "name=edge1;old_state=10;new_state=11;");
	wait_note("is back after", 2, NULL);
	/* The outage was one event, not a link down per port. */
	assert_int_equal(fc_notifications_matching("Link", NULL), 0);
	/* gone, back, restarted, gone, restarted, back */
	assert_int_equal(fc_notifications_matching("DPDK application", NULL), 6);
}

/*
 * A port whose kernel netdev is followed (PortNetdev "0=lo": the loopback of this process's
 * namespace, carrier up, since the fake runs here and SO_PEERCRED names us): its telemetry
 * is a cross-check at DownPollInterval, not every PollInterval; when the telemetry says down
 * while the netdev says up, the telemetry is trusted ("Link down"), and one WARNING per
 * episode says they disagree. Port 1 has no netdev (no netdev has a fake's MAC): one INFO
 * line says why, once per process, again after a restart; port 0 is followed again too.
 */
static void
netdev_followed_and_disagreement_said_once(void **state)
{
	static const char *const warn = "its kernel netdev lo says carrier up but its telemetry "
					"says link down";
	unsigned int q0, q1;
	char text[512], restarted[96];
	/* Greeting pids of processes that exist here (fake_proc.c makes them SO_PEERCRED's):
	 * the netdev is opened in /proc/<pid>/ns/net. */
	long first = (long)getpid(), second = (long)getppid();

	(void)state;
	start_server(first);
	snprintf(text, sizeof(text),
		"PollInterval 0.005\nFlapWindow 1\nMaxAppLoad 0\nDownPollInterval 0.1\n"
		"<Instance \"edge1\">\n SocketPath \"%s\"\n PortNetdev \"0=lo\"\n</Instance>\n",
		path);
	assert_int_equal(fc_configure("dpdktel_events", text), 0);
	assert_int_equal(fc_init(), 0);
	wait_polls(4);
	wait_logs("port 0 (net_tap0) of DPDK application 'edge1': its link follows kernel "
		  "netdev lo; each change is checked with the telemetry",
		1);
	wait_logs("port 1 (net_tap1) of DPDK application 'edge1': its link comes from the "
		  "telemetry alone, not from a kernel netdev: ",
		1);
	q0 = sim_get(&sim.port_link_queries[0]);
	q1 = sim_get(&sim.port_link_queries[1]);
	wait_polls(60);
	/* 20 times less often by the plan; a third of that is the margin of a busy host. */
	assert_true((sim_get(&sim.port_link_queries[1]) - q1) >
		6 * (sim_get(&sim.port_link_queries[0]) - q0));
	set_link(0, false);
	wait_note("Link down on edge1 port 0", 1, NULL);
	wait_logs(warn, 1);
	wait_polls(40);
	assert_int_equal(fc_logs_matching(warn), 1);
	set_link(0, true);
	wait_note("Link up on edge1 port 0", 1, NULL);
	/* Another episode (within the FlapWindow: not notified, but still said). */
	set_link(0, false);
	wait_logs(warn, 2);
	/* Another process: the netdevs are found again, and why not said again. */
	stop_server();
	wait_note("DPDK application edge1 is gone", 1, NULL);
	start_server(second);
	snprintf(restarted, sizeof(restarted), "DPDK application edge1 restarted (pid %ld → %ld)",
		first, second);
	wait_note(restarted, 1, NULL);
	wait_logs("its link follows kernel netdev lo", 2);
	wait_logs("telemetry alone, not from a kernel netdev", 2);
}

/* What a read of the stats plugin's priority got from within the "restarted" notification
 * (1: none came): a notification plugin that takes its time must not hold the reads. */
static int read_in_note = 1;

static void
read_at_restart(const notification_t *n)
{
	struct dtel_request rq = {.prio = DTEL_PRIO_READ, .timeout_ms = 200};
	struct dtel_shared *sh;
	struct dtel_reply r;
	int ret;

	if (strstr(n->message, "restarted") == NULL || dtel_shared_get(path, &sh) < 0)
		return;
	ret = dtel_shared_request(sh, &rq, "/info", &r);
	if (ret == 0)
		dtel_reply_release(&r);
	__atomic_store_n(&read_in_note, ret, __ATOMIC_RELEASE);
	dtel_shared_put(sh);
}

/*
 * The restart warning is dispatched after the poll, not inside it: reads wait while a poll
 * is in progress, so a read asked from a notification callback inside the poll would wait
 * for the poll that waits for the callback, until its Timeout (-EBUSY, issue 32).
 */
static void
restart_notified_outside_the_poll(void **state)
{
	long first = (long)getpid(), second = (long)getppid();

	(void)state;
	__atomic_store_n(&read_in_note, 1, __ATOMIC_RELEASE);
	fc_set_note_hook(read_at_restart);
	start_server(first);
	start_plugin(NULL);
	wait_polls(4);
	stop_server();
	wait_note("DPDK application edge1 is gone", 1, NULL);
	start_server(second);
	wait_note("restarted", 1, NULL);
	/* The callback runs once the notification is recorded: its read, until its Timeout. */
	for (int i = 0; i < 2000 && __atomic_load_n(&read_in_note, __ATOMIC_ACQUIRE) == 1; i++)
		usleep(1000);
	assert_int_equal(read_in_note, 0);
}

static void
set_silent(void *arg)
{
	sim.silent = *(bool *)arg;
}

/*
 * An application whose process runs on but does not answer is hung, not gone: after
 * NotRespondingPolls unanswered polls one FAILURE, up 0 and not_responding 1; one OKAY when
 * it answers again. (Before, timeouts made it "gone" and "back".)
 */
static void
silent_live_process_is_not_responding(void **state)
{
	struct fc_notification n;
	char want[128];
	struct fc_value v;
	bool yes = true, no = false;

	(void)state;
	start_server(getpid()); /* a process that surely runs: this one */
	start_plugin("Timeout 0.02");
	wait_polls(4);
	sim_set(set_silent, &yes);
	wait_note("DPDK application edge1 is not responding", 1, &n);
	assert_int_equal(n.severity, NOTIF_FAILURE);
	snprintf(want, sizeof(want), "(pid %ld alive, no reply for ", (long)getpid());
	assert_non_null(strstr(n.message, want));
	assert_string_equal(n.meta, "name=edge1;old_state=up;new_state=not_responding;");
	assert_true(read_fresh("edge1", "up", NULL, &v));
	assert_true(v.v[0].gauge == 0);
	assert_true(fc_find_copy("edge1", "not_responding", NULL, &v));
	assert_true(v.v[0].gauge == 1);
	assert_int_equal(fc_logs_matching("does not answer within the timeout"), 1);
	sim_set(set_silent, &no);
	wait_note("DPDK application edge1 answers again after", 1, &n);
	assert_int_equal(n.severity, NOTIF_OKAY);
	assert_non_null(
		strstr(n.meta, "name=edge1;old_state=not_responding;new_state=up;duration_ms="));
	wait_gauge("edge1", "not_responding", 0);
	wait_gauge("edge1", "up", 1);
	assert_int_equal(fc_notifications_matching("gone", NULL), 0);
	assert_int_equal(fc_notifications_matching("DPDK application", NULL), 2);
}

/* Unanswered, and the process behind the greeting has exited since: gone, not hung. */
static void
silent_exited_process_is_gone(void **state)
{
	pid_t child = fork();
	bool yes = true;

	(void)state;
	if (child == 0) {
		pause();
		_exit(0);
	}
	assert_true(child > 0);
	start_server(child);
	start_plugin("Timeout 0.02");
	wait_polls(4);
	kill(child, SIGKILL);
	assert_int_equal(waitpid(child, NULL, 0), child);
	sim_set(set_silent, &yes);
	wait_note("DPDK application edge1 is gone", 1, NULL);
	assert_int_equal(fc_notifications_matching("not responding", NULL), 0);
}

static void
set_slow_once(void *arg)
{
	sim.slow_once_ms = *(int *)arg;
}

/*
 * One reply later than Timeout ends that poll only: the next poll asks the application again
 * at once (no backoff refusal counted as a second failure, no burst of missed polls), so
 * nothing is announced. Fails on the code before: "is gone" then "is back after".
 */
static void
one_slow_reply_is_no_outage(void **state)
{
	int slow = 80;
	struct fc_value v;
	size_t timeouts;

	(void)state;
	start_server(getpid());
	start_plugin("Timeout 0.05");
	wait_polls(4);
	sim_set(set_slow_once, &slow);
	wait_polls(20);
	assert_int_equal(fc_notifications_matching("DPDK application", NULL), 0);
	assert_true(read_fresh("edge1", "telemetry_requests", "failed", &v));
	/* The one timeout, nothing refused or left unsent counted with it: each failure is a
	 * timeout of its own, logged. (A loaded machine may add one: another reply late.) */
	timeouts = fc_logs_matching("does not answer within the timeout");
	if (v.v[0].derive != (derive_t)timeouts)
		fc_dump_logs();
	assert_true(timeouts >= 1);
	assert_int_equal(v.v[0].derive, (derive_t)timeouts);
	assert_true(fc_find_copy("edge1", "up", NULL, &v));
	assert_true(v.v[0].gauge == 1);
}

static void
set_garbage(void *arg)
{
	sim.garbage = *(bool *)arg;
}

/*
 * An application that answers with garbage does not answer its polls: up 0 and one "gone"
 * (it stayed up 1 before, since a malformed reply was not a connection error). Found by the
 * misbehaving-server fault test (tests/integration/test_faults.py).
 */
static void
garbage_replies_make_it_gone(void **state)
{
	struct fc_value v;
	bool yes = true;

	(void)state;
	start_server(10);
	start_plugin(NULL);
	wait_polls(4);
	sim_set(set_garbage, &yes);
	wait_note("DPDK application edge1 is gone", 1, NULL);
	wait_polls(3); /* each garbage reply closes the connection: reconnects back off */
	assert_true(read_fresh("edge1", "up", NULL, &v));
	assert_true(v.v[0].gauge == 0);
	assert_int_equal(fc_notifications_matching("is gone", NULL), 1);
	assert_int_equal(fc_logs_matching("malformed greeting or reply"), 1);
}

static void
set_bad_values(void *arg)
{
	sim.bad_values = *(bool *)arg;
}

/* Replies that do not parse: counted in telemetry_requests/invalid, logged once, no link
 * value from them, and the application still counts as answering. */
static void
bad_values_counted_and_logged_once(void **state)
{
	struct fc_value v;
	bool yes = true;

	(void)state;
	sim_set(set_bad_values, &yes);
	start_server(10);
	start_plugin(NULL);
	wait_polls(12); /* 6 polls begun: 5 done and published, 2 bad answers each */
	assert_true(read_fresh("edge1", "up", NULL, &v) && v.v[0].gauge == 1);
	assert_false(fc_find_copy("edge1.port0", "link_status", NULL, &v));
	assert_true(fc_find_copy("edge1", "telemetry_requests", "invalid", &v));
	assert_true(v.v[0].derive >= 10);
	assert_int_equal(fc_logs_matching("sent an unusable reply to /ethdev/link_status,"), 1);
	assert_int_equal(fc_notifications_matching("", NULL), 0);
}

static void
initial_down_reported_once(void **state)
{
	struct fc_notification n;

	(void)state;
	set_link(1, false);
	start_server(10);
	start_plugin(NULL);
	wait_note("Link down on edge1 port 1", 1, &n);
	assert_non_null(strstr(n.meta, "old_state=unknown;new_state=down;"));
	wait_polls(6);
	assert_int_equal(fc_notifications_matching("Link", NULL), 1);
}

static void
start_port_1_on_info(void *arg)
{
	(void)arg;
	sim.up[1] = sim.started[1] = false;
	sim.start_on_info = 1;
}

/*
 * An application that is starting its ports: port 1 reads down (not started yet), and is
 * started between that reading and the /ethdev/info that tells whether it is. It was
 * reported "Link down", then "Link up after 20 ms" (found by the restart fault test under
 * ASan, where the forwarder starts more slowly): the link is now read again after the info.
 */
static void
port_started_while_first_read_is_no_alarm(void **state)
{
	(void)state;
	sim_set(start_port_1_on_info, NULL);
	start_server(10);
	start_plugin(NULL);
	wait_gauge("edge1.port1", "link_status", 1);
	wait_polls(6);
	assert_int_equal(fc_notifications_matching("Link", NULL), 0);
}

static void
initial_state_can_be_silenced(void **state)
{
	(void)state;
	set_link(1, false);
	start_server(10);
	start_plugin("ReportInitialState false");
	wait_polls(6);
	assert_int_equal(fc_notifications_matching("Link", NULL), 0);
}

static void
links_only_said_once(void **state)
{
	(void)state;
	start_server(10);
	start_plugin(NULL);
	wait_polls(6);
	assert_int_equal(fc_logs_matching("reports no lcore data"), 1);
	assert_int_equal(fc_logs_matching("only its links are watched"), 1);
}

static void
set_speed(void *arg)
{
	sim.speed[0] = *(uint64_t *)arg;
}

static void
speed_change_warns(void **state)
{
	struct fc_notification n;
	uint64_t slow = 1000;

	(void)state;
	start_server(10);
	start_plugin(NULL);
	wait_polls(4);
	sim_set(set_speed, &slow);
	wait_note("Link speed changed on edge1 port 0", 1, &n);
	assert_int_equal(n.severity, NOTIF_WARNING);
	assert_string_equal(n.message,
		"Link speed changed on edge1 port 0: 10000 Mbps full-duplex → "
		"1000 Mbps full-duplex");
}

static void
values_at_each_interval(void **state)
{
	struct fc_value v;

	(void)state;
	sim.fwd = true;
	start_server(10);
	start_plugin(NULL);
	wait_polls(4);
	fc_clear_records();
	for (int p = 0; p < 2; p++) {
		char pi[32];

		snprintf(pi, sizeof(pi), "edge1.port%d", p);
		assert_true(read_fresh(pi, "link_status", NULL, &v) && v.v[0].gauge == 1);
		assert_true(fc_find_copy(pi, "link_speed", NULL, &v) && v.v[0].gauge == 10000);
		assert_true(fc_find_copy(pi, "link_changes", NULL, &v));
		assert_true(fc_find_copy(pi, "link_flapping", NULL, &v) && v.v[0].gauge == 0);
	}
	assert_true(fc_find_copy("edge1.lcore1", "lcore_state", NULL, &v) && v.v[0].gauge == 1);
	assert_true(
		fc_find_copy("edge1.lcore2", "heartbeat_age", NULL, &v) && v.v[0].gauge == 5e-6);
	assert_true(fc_find_copy("edge1", "up", NULL, &v) && v.v[0].gauge == 1);
	assert_true(fc_find_copy("edge1", "telemetry_requests", "sent", &v) && v.v[0].derive > 0);
}

/* Found by fuzzing (tests/fuzz/fuzz_config.c): an instance that never answers has no ports
 * or lcores yet, and publishing its empty state once copied from a NULL pointer. */
static void
unreachable_instance_publishes_empty_state(void **state)
{
	struct fc_value v;
	uint64_t deadline = ms_now() + 5000;

	(void)state;
	start_plugin("ReportInitialState false");
	while (fc_logs_matching("is not running (no socket)") == 0 && ms_now() < deadline)
		usleep(1000);
	assert_int_equal(fc_logs_matching("is not running (no socket)"), 1);
	/* The first poll publishes right after it logged. */
	while (fc_read_all() == 0 && !fc_find_copy("edge1", "up", NULL, &v) && ms_now() < deadline)
		usleep(1000);
	assert_true(fc_find_copy("edge1", "up", NULL, &v));
	assert_true(v.v[0].gauge == 0);
	assert_false(fc_find_copy("edge1.port0", "link_status", NULL, &v));
}

static void
set_fwd(void *arg)
{
	sim.fwd = *(bool *)arg;
}

/*
 * A starting application registers its own commands after the EAL opened the socket: a
 * command list read before that is read again, and its lcores are watched once they are
 * there. Found by the restart fault test (tests/integration/test_faults.py): after some
 * forwarder restarts, lcore values never came back.
 */
static void
late_commands_of_a_starting_application(void **state)
{
	pid_t young = test_young_process();
	uint64_t deadline;
	struct fc_value v;
	bool yes = true;

	(void)state;
	assert_true(young > 0);
	start_server(young);
	start_plugin(NULL);
	wait_polls(4);
	assert_int_equal(fc_logs_matching("only its links are watched"), 1);
	assert_false(fc_find_copy("edge1.lcore1", "lcore_state", NULL, &v));
	sim_set(set_fwd, &yes);
	deadline = ms_now() + 5000;
	while (!fc_find_copy("edge1.lcore1", "lcore_state", NULL, &v) && ms_now() < deadline)
		usleep(1000);
	test_end_process(young);
	assert_true(fc_find_copy("edge1.lcore1", "lcore_state", NULL, &v));
	assert_true(v.v[0].gauge == 1);
	assert_int_equal(fc_logs_matching("now reports lcore data: its lcores are watched"), 1);
}

/* An application that is not starting is asked for its commands once. */
static void
command_list_read_once_when_not_starting(void **state)
{
	struct fc_value v;
	bool yes = true;

	(void)state;
	start_server(1); /* init: started long ago */
	start_plugin(NULL);
	wait_polls(4);
	sim_set(set_fwd, &yes);
	wait_polls(20);
	assert_false(fc_find_copy("edge1.lcore1", "lcore_state", NULL, &v));
}

/* A read before the first poll has finished dispatches nothing: "up 0" for a healthy
 * application that was not polled yet would be a false reading (seen in the fault tests as
 * one up 0 at each collectd start). */
static void
nothing_dispatched_before_the_first_poll(void **state)
{
	struct fc_value v;
	bool yes = true;

	(void)state;
	sim_set(set_silent, &yes);
	start_server(10);
	start_plugin("Timeout 1");
	assert_int_equal(fc_read_all(), 0); /* the first poll waits for its reply */
	assert_false(fc_find_copy("edge1", "up", NULL, &v));
	assert_int_equal(fc_nvalues(), 0);
}

/* FlapWindow shorter than PollInterval is one error, named by its block: it was logged once
 * for the <Plugin> block and again, without a name, for each instance inheriting it. Found
 * by the configuration matrix in a real collectd (tests/integration). */
static void
short_flap_window_one_error_per_block(void **state)
{
	char text[512];

	(void)state;
	snprintf(text, sizeof(text),
		"PollInterval 1\nFlapWindow 0.5\n<Instance \"edge1\">\n SocketPath \"%s\"\n"
		"</Instance>\n<Instance \"b\">\n SocketPath \"/b\"\n FlapWindow 0.2\n"
		"PollInterval 0.3\n</Instance>",
		path);
	assert_int_equal(fc_configure("dpdktel_events", text), 0);
	assert_int_not_equal(fc_init(), 0);
	assert_int_equal(fc_logs_matching("is shorter than PollInterval"), 2);
	assert_int_equal(
		fc_logs_matching(
			"dpdktel_events plugin: FlapWindow 0.5 is shorter than PollInterval 1"),
		1);
	assert_int_equal(fc_logs_matching("<Instance \"b\">: FlapWindow 0.2 is shorter than "
					  "PollInterval 0.3"),
		1);
	assert_int_equal(fc_reads(), 0);
}

static void
bad_configurations_refused(void **state)
{
	static const char *const cases[][2] = {
		{"PollInterval 0", "option 'PollInterval' has the out-of-range value 0"},
		{"PollInterval \"fast\"", "option 'PollInterval' has the invalid value \"fast\""},
		{"FlapThreshold 1", "option 'FlapThreshold' has the out-of-range value 1"},
		{"FlapThreshold 2.5", "option 'FlapThreshold' has the out-of-range value 2.5"},
		{"FlapWindow -3", "option 'FlapWindow' has the out-of-range value -3"},
		{"StallThreshold 0", "option 'StallThreshold' has the out-of-range value 0"},
		{"LinkConfirm 2", "option 'LinkConfirm' has the invalid value 2"},
		{"Lcores \"no\"", "option 'Lcores' has the invalid value \"no\""},
		{"InstanceEvents", "option 'InstanceEvents' has the invalid value no value"},
		{"ReportInitialState 0", "option 'ReportInitialState' has the invalid value 0"},
		{"Link \"up\"", "option 'Link' has the invalid value \"up\""},
		{"Timeout 100", "option 'Timeout' has the out-of-range value 100"},
		{"Ports \"1-\"", "option 'Ports' has the invalid value \"1-\""},
		{"Interval 3", "unknown option 'Interval'"},
		{"PollInterval 1\nFlapWindow 0.5", "FlapWindow 0.5 is shorter than PollInterval 1"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char text[512];

		fc_reset();
		fc_load(module_register);
		snprintf(text, sizeof(text),
			"%s\n<Instance \"edge1\">\n SocketPath \"%s\"\n</Instance>", cases[i][0],
			path);
		assert_int_equal(fc_configure("dpdktel_events", text), 0);
		if (fc_init() == 0 || fc_logs_matching(cases[i][1]) == 0) {
			fc_dump_logs();
			fail_msg("case %zu (%s): no refusal with \"%s\"", i, cases[i][0],
				cases[i][1]);
		}
		assert_int_equal(fc_reads(), 0);
		fc_shutdown();
	}
}

/* PortNetdev: each bad value named with the option, the value and what is expected, in an
 * <Instance> block or out of one; good values (and LinkNetdev) start the plugin. */
static void
port_netdev_option(void **state)
{
	static const char *const cases[][3] = {
		{"", " PortNetdev \"eth3\"",
			"option 'PortNetdev' has the invalid value \"eth3\": expected \"<port "
			"id>=<netdev>\" such as \"0=eth3\""},
		{"", " PortNetdev \"70000=eth3\"",
			"option 'PortNetdev' has the invalid value \"70000=eth3\": the port id is "
			"above 65535"},
		{"", " PortNetdev \"0=a/b\"",
			"\"0=a/b\": 'a/b' is not a netdev name: expected 1 to 15 characters"},
		{"", " PortNetdev 3",
			"option 'PortNetdev' has the invalid value 3: expected one "
			"or more \"<port id>=<netdev>\""},
		{"", " PortNetdev", "option 'PortNetdev' has the invalid value no value"},
		{"", " PortNetdev \"0=eth3\"\n PortNetdev \"1=eth4\" \"0=eth5\"",
			"option 'PortNetdev' names port 0 twice (\"0=eth3\" and \"0=eth5\")"},
		{"PortNetdev \"0=eth3\"", "",
			"option 'PortNetdev' belongs in an <Instance \"name\"> block (port ids are "
			"an application's own); did you forget to add one?"},
		{"LinkNetdev \"yes\"", "",
			"option 'LinkNetdev' has the invalid value \"yes\": expected true or "
			"false"},
	};
	char text[512];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fc_reset();
		fc_load(module_register);
		snprintf(text, sizeof(text),
			"%s\n<Instance \"edge1\">\n SocketPath \"%s\"\n%s\n</Instance>",
			cases[i][0], path, cases[i][1]);
		assert_int_equal(fc_configure("dpdktel_events", text), 0);
		if (fc_init() == 0 || fc_logs_matching(cases[i][2]) != 1) {
			fc_dump_logs();
			fail_msg("case %zu: no refusal with \"%s\"", i, cases[i][2]);
		}
		fc_shutdown();
	}
	fc_reset();
	fc_load(module_register);
	snprintf(text, sizeof(text),
		"LinkNetdev false\n<Instance \"edge1\">\n SocketPath \"%s\"\n LinkNetdev true\n"
		" PortNetdev \"0=eth3\" \"1=eth3\"\n PortNetdev \"65535=veth-a.100\"\n</Instance>",
		path);
	assert_int_equal(fc_configure("dpdktel_events", text), 0);
	if (fc_init() != 0) {
		fc_dump_logs();
		fail_msg("a good PortNetdev was refused");
	}
	fc_shutdown();
}

static void
set_frozen(void *arg)
{
	int *a = arg;

	sim.frozen[a[0]] = a[1];
}

static void wait_log(const char *needle);

static unsigned int
sim_get(const unsigned int *counter)
{
	unsigned int n;

	pthread_mutex_lock(&sim.m);
	n = *counter;
	pthread_mutex_unlock(&sim.m);
	return n;
}

/* Wait until lcore @pi's busy percent is @want. */
static void
wait_busy(const char *pi, double want)
{
	uint64_t deadline = ms_now() + 5000;
	struct fc_value v;

	/* Not a change: it goes out with every read, as the values of an interval do. */
	while (!(fc_find_copy(pi, "percent", "busy", &v) && v.v[0].gauge == want) &&
		ms_now() < deadline) {
		fc_read_all();
		usleep(10000);
	}
	if (!(fc_find_copy(pi, "percent", "busy", &v) && v.v[0].gauge == want))
		fail_msg("%s/percent-busy never became %g", pi, want);
}

/*
 * DPDK >= 23.03 without /fwd: the cycles of all lcores come from one /eal/lcore/usage per
 * poll (before: /eal/lcore/list and an /eal/lcore/info per lcore, every poll). An lcore
 * whose total_cycles stand still is STALLED, confirmed by a second /eal/lcore/usage (not by
 * /fwd/lcores, which answers null there), recovered when they move again; the lcore that
 * kept running gives no notification; busy percent is published.
 */
static void
eal_lcore_stall_confirmed_by_its_own_source(void **state)
{
	unsigned int usage0, links0, usage, links;
	struct fc_notification n;
	struct fc_value v;

	(void)state;
	sim.eal = true;
	start_server(10);
	start_plugin(NULL);
	wait_polls(4);
	usage0 = sim_get(&sim.usage_queries);
	links0 = sim_get(&sim.link_queries);
	wait_polls(40); /* two ports: 20 polls */
	usage = sim_get(&sim.usage_queries) - usage0;
	links = sim_get(&sim.link_queries) - links0;
	/* One usage request per poll, and never an lcore list or info. */
	if (usage < links / 2 - 1 || usage > links / 2 + 1)
		fail_msg("%u usage requests in %u polls: expected one per poll", usage, links / 2);
	assert_int_equal(sim_get(&sim.list_queries), 0);
	assert_int_equal(sim_get(&sim.lcore_queries), 0);
	sim_set(set_frozen, (int[]){0, 1});
	wait_note("lcore 1 of edge1 stalled", 1, &n);
	assert_int_equal(n.severity, NOTIF_FAILURE);
	assert_string_equal(n.plugin_instance, "edge1.lcore1");
	assert_string_equal(n.type, "lcore_state");
	assert_non_null(strstr(n.message,
		"lcore 1 of edge1 stalled: total_cycles did not "
		"advance for "));
	assert_non_null(strstr(n.meta, "lcore_id=1;"));
	assert_non_null(strstr(n.meta, "new_state=STALLED;"));
	wait_gauge("edge1.lcore1", "lcore_state", 3);
	wait_derive("edge1.lcore1", "stalls", 1);
	sim_set(set_frozen, (int[]){0, 0});
	wait_note("lcore 1 of edge1 recovered after", 1, &n);
	assert_int_equal(n.severity, NOTIF_OKAY);
	wait_gauge("edge1.lcore1", "lcore_state", 1);
	assert_int_equal(fc_notifications_matching("lcore 2", NULL), 0);
	wait_busy("edge1.lcore2", 50);
	assert_true(read_fresh("edge1", "telemetry_requests", "failed", &v));
	assert_int_equal(v.v[0].derive, 0);
	assert_true(fc_find_copy("edge1", "telemetry_requests", "discarded", &v));
	assert_int_equal(v.v[0].derive, 0);
}

static void
restart_sim(void *arg)
{
	(void)arg;
	stop_server();
}

/*
 * DPDK >= 23.03 without a usage callback (testpmd without --record-core-cycles): the usage
 * reply lists no lcore, so the application is watched for its links only, said once, with
 * no lcore request per poll (before: /eal/lcore/list and an /eal/lcore/info per lcore every
 * poll, for no values, and no INFO line). Its restart reads the usage once more.
 */
static void
no_usage_callback_is_links_only(void **state)
{
	struct fc_value v;

	(void)state;
	sim.eal = true;
	sim.no_usage_cb = true;
	start_server(10);
	start_plugin(NULL);
	wait_polls(40);
	wait_log("DPDK application 'edge1' reports no lcore data (no /fwd/lcores, no lcore in "
		 "/eal/lcore/usage): only its links are watched");
	assert_int_equal(sim_get(&sim.usage_queries), 1);
	assert_int_equal(sim_get(&sim.list_queries), 0);
	assert_int_equal(sim_get(&sim.lcore_queries), 0);
	fc_read_all();
	assert_false(fc_find_copy("edge1.lcore1", "lcore_state", NULL, &v));
	/* A new process behind the socket: its usage is read once more, and said no more. */
	restart_sim(NULL);
	start_server(11);
	wait_note("DPDK application edge1 restarted (pid 10 → 11)", 1, NULL);
	wait_polls(40);
	assert_int_equal(sim_get(&sim.usage_queries), 2);
	assert_int_equal(sim_get(&sim.list_queries), 0);
	assert_int_equal(fc_logs_matching("only its links are watched"), 1);
}

static void
set_one_port(void *arg)
{
	(void)arg;
	sim.nports = 1;
}

/*
 * The second, confirming query of a change, per release: a stall, its recovery, a link down
 * and up on an application that greets as @version. Returns nothing; fills in how many polls
 * sent two usage requests and two link requests (a poll sends one of each otherwise).
 */
static void
confirmations(const char *version, unsigned int *ret_usage2, unsigned int *ret_links2)
{
	sim.eal = true;
	sim_set(set_one_port, NULL);
	start_server_release(10, version);
	start_plugin("StallThreshold 0.05");
	wait_polls(4);
	sim_set(set_frozen, (int[]){0, 1});
	wait_note("lcore 1 of edge1 stalled", 1, NULL);
	sim_set(set_frozen, (int[]){0, 0});
	wait_note("lcore 1 of edge1 recovered after", 1, NULL);
	set_link(0, false);
	wait_note("Link down on edge1 port 0", 1, NULL);
	set_link(0, true);
	wait_note("Link up on edge1 port 0", 1, NULL);
	wait_polls(4); /* the polls before are counted when the next one begins */
	*ret_usage2 = sim_get(&sim.polls_usage[2]);
	*ret_links2 = sim_get(&sim.polls_links[2]);
	assert_true(sim_get(&sim.polls_usage[1]) > 4);
	assert_true(sim_get(&sim.polls_links[1]) > 4);
}

/* DPDK 25.11 parses commands with strtok(): each change costs a second query in its poll. */
static void
changes_confirmed_on_25_11(void **state)
{
	unsigned int usage2, links2;

	(void)state;
	confirmations("25.11.2", &usage2, &links2);
	assert_int_equal(usage2, 2); /* the stall and the recovery */
	assert_int_equal(links2, 2); /* down and up */
}

/* DPDK 26.07 uses strtok_r(): no answer can be another client's, so no second query. The
 * polls of the four changes send one usage or link request, half of what 25.11 needs. */
static void
no_confirmation_on_26_07(void **state)
{
	unsigned int usage2, links2;

	(void)state;
	confirmations("26.07.0", &usage2, &links2);
	assert_int_equal(usage2, 0);
	assert_int_equal(links2, 0);
}

/* FlapThreshold holds over its whole range: 100 changes make a port flapping, once, and no
 * "flapped" warning follows while it flaps (history was capped at 64 changes before). */
static void
flap_threshold_above_64(void **state)
{
	struct fc_notification n;
	size_t flapped;
	int ten = 10;

	(void)state;
	sim.fwd = true;
	start_server(10);
	start_plugin("FlapThreshold 100");
	wait_polls(4);
	for (int i = 0; i < 10; i++) {
		sim_set(bump_changes, &ten);
		wait_polls(2);
	}
	wait_note("Link flapping on edge1 port 0", 1, &n);
	assert_string_equal(n.message, "Link flapping on edge1 port 0: 100 changes within 1 s");
	flapped = fc_notifications_matching("Link flapped", NULL);
	for (int i = 0; i < 5; i++) {
		sim_set(bump_changes, &ten);
		wait_polls(2);
	}
	assert_int_equal(fc_notifications_matching("Link flapped", NULL), flapped);
	assert_int_equal(fc_notifications_matching("Link flapping", NULL), 1);
}

static void
set_counts(void *arg)
{
	int *a = arg;

	sim.nports = a[0];
	sim.nlcores = a[1];
}

static void
wait_log(const char *needle)
{
	uint64_t deadline = ms_now() + 5000;

	while (fc_logs_matching(needle) == 0 && ms_now() < deadline)
		usleep(1000);
	if (fc_logs_matching(needle) == 0) {
		fc_dump_logs();
		fail_msg("no log line \"%s\"", needle);
	}
}

/* Reads of the other plugin on the same socket: batches of eight 15 ms requests, back to
 * back (the stats plugin at 32 ports of a slow driver), through the same shared session. */
struct other_plugin {
	pthread_t thread;
	bool stop;
	unsigned int batches;
};

static void *
other_plugin_main(void *arg)
{
	struct other_plugin *r = arg;
	const char *cmds[8] = {
		"/slow", "/slow", "/slow", "/slow", "/slow", "/slow", "/slow", "/slow"};
	struct dtel_shared *sh;

	if (dtel_shared_get(path, &sh) < 0)
		return NULL;
	while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED)) {
		struct dtel_reply rep[8];
		int res[8];

		if (dtel_shared_query_many(sh, cmds, 8, 8, 1000, rep, res) == 0)
			__atomic_add_fetch(&r->batches, 1, __ATOMIC_RELAXED);
		for (int i = 0; i < 8; i++)
			dtel_reply_release(&rep[i]);
	}
	dtel_shared_put(sh);
	return NULL;
}

/*
 * A poll that waits behind the other plugin's reads is answered once the reads in flight are,
 * and is never taken for an unanswered one. Fails on the code before the request queue: a
 * batch held the connection for 120 ms, the poll gave up at its 50 ms Timeout, and three of
 * them made "not responding".
 */
static void
polls_go_before_the_other_plugins_reads(void **state)
{
	struct other_plugin r = {0};
	struct fc_value v;

	(void)state;
	start_server(getpid());
	start_plugin("Timeout 0.05");
	wait_polls(4);
	assert_int_equal(pthread_create(&r.thread, NULL, other_plugin_main, &r), 0);
	while (__atomic_load_n(&r.batches, __ATOMIC_RELAXED) < 10)
		wait_polls(2);
	__atomic_store_n(&r.stop, true, __ATOMIC_RELAXED);
	pthread_join(r.thread, NULL);
	assert_int_equal(fc_notifications_matching("not responding", NULL), 0);
	assert_int_equal(fc_notifications_matching("DPDK application", NULL), 0);
	fc_read_all();
	assert_true(fc_find_copy("edge1", "telemetry_requests", "failed", &v));
	assert_int_equal(v.v[0].derive, 0);
	assert_true(fc_find_copy("edge1", "telemetry_requests", "queued", &v));
	assert_true(v.v[0].derive > 0); /* polls did wait for the reads */
}

/*
 * PollLoad: links whose requests cost more than the budget are polled less often, with one
 * line each way and the interval in force as values (of the instance: its slowest port; of
 * each port, with the bound on its link-down detection); the application's liveness is still
 * asked at every PollInterval, so a hang is not found later.
 */
static void
budget_stretches_links_not_liveness(void **state)
{
	struct fc_value v, b;
	int delay = 2;
	unsigned int info0;
	uint64_t deadline;

	(void)state;
	start_server(getpid());
	/* Two ports at 2 ms every 5 ms: 80 % of a core, four times the budget. */
	start_plugin("PollLoad 20");
	sim_set(set_link_delay, &delay);
	wait_log("link poll every");
	assert_int_equal(fc_logs_matching("PollLoad 20 %"), 1);
	fc_read_all();
	assert_true(fc_find_copy("edge1", "poll_interval", "link", &v));
	if (v.v[0].gauge < 0.0075)
		fail_msg("poll_interval-link %g s: expected at least 1.5 PollInterval",
			v.v[0].gauge);
	assert_true(fc_find_copy("edge1.port0", "poll_interval", "link", &v));
	assert_true(fc_find_copy("edge1.port0", "detection_bound", "link", &b));
	if (v.v[0].gauge < 0.0075 || b.v[0].gauge < v.v[0].gauge + 0.19)
		fail_msg("port 0: poll_interval-link %g s, detection_bound-link %g s: expected "
			 "stretched, and the bound that plus Timeout",
			v.v[0].gauge, b.v[0].gauge);
	/* Liveness between link polls. */
	info0 = sim_get(&sim.info_queries);
	deadline = ms_now() + 5000;
	while (sim_get(&sim.info_queries) < info0 + 4 && ms_now() < deadline)
		usleep(1000);
	assert_true(sim_get(&sim.info_queries) >= info0 + 4);
	/* Fast again: the links come back to PollInterval, said once. */
	delay = 0;
	sim_set(set_link_delay, &delay);
	wait_log("link poll every 0.005 s again");
	fc_read_all();
	assert_true(fc_find_copy("edge1", "poll_interval", "link", &v));
	assert_true(v.v[0].gauge < 0.0055);
}

/*
 * Links too dear to poll within a second are said once, naming every up port that is, not
 * the first to have had WARN_SAMPLES replies: after the first rounds (every port asked
 * alike) the stretched polls are spread over their period, and port 0 comes first.
 */
static void
slow_links_warning_names_every_port(void **state)
{
	uint64_t deadline;
	int delay = 2;

	(void)state;
	start_server(getpid());
	sim_set(set_link_delay, &delay);
	/* Two ports at 2 ms: within 0.15 % (what the liveness request leaves of PollLoad 0.2),
	 * each every 2.7 s. */
	start_plugin("PollLoad 0.2");
	deadline = ms_now() + 20000; /* the fourth reply of a port comes in its second period */
	while (fc_logs_matching("is polled only every") == 0 && ms_now() < deadline)
		usleep(10000);
	/* Not the cost itself: on a loaded machine a 2 ms sleep is seen taking 3 ms or more. */
	if (fc_logs_matching("the link of 2 ports (0,1) costs its telemetry thread up to ") != 1 ||
		fc_logs_matching("intr_conf.lsc = 1") != 1) {
		fc_dump_logs();
		fail_msg("expected one WARNING naming ports 0 and 1 and the fixes");
	}
}

static void
set_four_ports(void *arg)
{
	(void)arg;
	sim.nports = MAXP;
}

static void
forget_poll_counts(void *arg)
{
	(void)arg;
	memset(sim.polls_links, 0, sizeof(sim.polls_links));
	sim.nlink_polls = 0;
}

/* How many polls asked @k links (0: any number of them) since the counts were forgotten. */
static unsigned int
polls_asking(unsigned int k)
{
	unsigned int n = 0;

	pthread_mutex_lock(&sim.m);
	for (unsigned int i = 1; i <= MAXP; i++)
		n += k == 0 || k == i ? sim.polls_links[i] : 0;
	pthread_mutex_unlock(&sim.m);
	return n;
}

/* Four ports whose link costs @delay ms (spinning) within PollLoad 4: once their polls have
 * stretched, the polls that ask links are counted until there are @n (10 s at most). */
static void
count_stretched_polls(int delay, unsigned int n)
{
	uint64_t deadline;

	sim_set(set_four_ports, NULL);
	start_server(getpid());
	start_plugin("PollLoad 4");
	sim_set(set_link_delay, &delay);
	wait_log("link poll every");
	sim_set(forget_poll_counts, NULL);
	deadline = ms_now() + 10000;
	while (polls_asking(0) < n && ms_now() < deadline)
		usleep(5000);
}

/*
 * Stretched links are asked a group a poll (schedule.c group_of()), so that one wake-up of
 * the application's thread and one list serve several ports: four ports at 1 ms (spinning)
 * within PollLoad 4 are a sweep every 0.15 s or so, against PollInterval 5 ms, and a group
 * is as many as 5 ms of requests. Before, each poll asked one port (spread over the period).
 */
static void
stretched_links_asked_in_groups(void **state)
{
	unsigned int one;

	(void)state;
	count_stretched_polls(1, 13);
	one = polls_asking(1);
	if (polls_asking(0) < 13 || one * 2 > polls_asking(0)) {
		fc_dump_logs();
		fail_msg("polls asking links: %u, of which %u asked one port (2: %u, 3: %u, 4: %u)",
			polls_asking(0), one, polls_asking(2), polls_asking(3), polls_asking(4));
	}
}

/*
 * A poll asks at most a group of stretched ports (read.c batch_make()), those due longest
 * first, so that it never holds the application's telemetry thread for much more than 5 ms:
 * four ports at 2 ms are a group of two. Without the cap, the four ports of one period were
 * asked in one poll, 8 ms.
 */
static void
poll_takes_at_most_a_group(void **state)
{
	(void)state;
	count_stretched_polls(2, 12);
	if (polls_asking(0) < 12 || polls_asking(3) + polls_asking(4) > 0) {
		fc_dump_logs();
		fail_msg("polls asking links: %u (1: %u, 2: %u, 3: %u, 4: %u); at most 2 each",
			polls_asking(0), polls_asking(1), polls_asking(2), polls_asking(3),
			polls_asking(4));
	}
}

/*
 * Stretched polls stay spread over their period (schedule.c spread()): three ports at 6 ms,
 * one a poll (a group is 5 ms of requests), each a third of a period after the other. The
 * phases given at the first plan held only until the next plan, which the first port's poll
 * brought: the two others were then due a whole period after the sweep that had asked all
 * three together, in consecutive polls 5 ms apart, at every period (a third of the gaps; on
 * 32 ports, 14 s without a link poll, then the 32 in a row).
 */
static void
stretched_polls_stay_spread(void **state)
{
	uint64_t at[LINK_POLLS];
	unsigned int n, close = 0;

	(void)state;
	count_stretched_polls(6, 13);
	pthread_mutex_lock(&sim.m);
	n = sim.nlink_polls;
	memcpy(at, sim.link_poll_ms, sizeof(at));
	pthread_mutex_unlock(&sim.m);
	for (unsigned int i = 1; i < n; i++)
		close += at[i] - at[i - 1] < 15; /* three PollIntervals */
	if (n < 12 || close > 2) {
		fc_dump_logs();
		fail_msg("%u of the %u gaps between polls that asked links were under 15 ms: the "
			 "ports were asked together, not spread",
			close, n > 0 ? n - 1 : 0);
	}
}

static void
set_cold_port0(void *arg)
{
	sim.cold_link_ms = *(int *)arg;
}

/*
 * A port's first reply is cold: until it has a few samples, the plan counts its link at no
 * more than the command costs on the other ports (schedule.c plan_cost()). Port 0's first
 * link answer takes 40 ms more than the 2 ms of every other: planned at 42 ms, its period
 * was twenty times the others', and so was its next sample and a link down it would see.
 * While port 1 is asked ten times, port 0 is asked at least five.
 */
static void
cold_first_reply_does_not_stretch_a_port(void **state)
{
	int delay = 2, cold = 40;
	unsigned int p0, p1;
	uint64_t deadline;

	(void)state;
	sim_set(set_cold_port0, &cold);
	sim_set(set_link_delay, &delay);
	start_server(getpid());
	start_plugin("PollLoad 4");
	wait_log("link poll every");
	p0 = sim_get(&sim.port_link_queries[0]);
	p1 = sim_get(&sim.port_link_queries[1]);
	deadline = ms_now() + 10000;
	while (sim_get(&sim.port_link_queries[1]) < p1 + 10 && ms_now() < deadline)
		usleep(5000);
	p1 = sim_get(&sim.port_link_queries[1]) - p1;
	p0 = sim_get(&sim.port_link_queries[0]) - p0;
	if (p1 < 10 || p0 < 5) {
		fc_dump_logs();
		fail_msg("port 0 asked %u times while port 1 was asked %u: its cold first reply "
			 "stretched its period",
			p0, p1);
	}
}

static void
set_info_by_turns(void *arg)
{
	sim.info_delay_ms = *(int *)arg;
	sim.info_by_turns = true;
}

/*
 * The liveness request takes a quarter of PollLoad at most, planned from the average of its
 * rounds, which is what libdpdktel makes its class's demand of (poll.c alive_want()): with
 * /info costing 4 ms and nothing by turns, the link polls' grant, and so their period, hold
 * still. Planned from the last round, a cheap one asked for the average at PollInterval,
 * half the budget, and the links' period swung by nearly two (0.5 % to 0.93 % of PollLoad
 * 1 on a VM).
 */
static void
liveness_share_holds_still(void **state)
{
	int delay = 2, info = 4;
	double least = 0, most = 0;
	struct fc_value v;
	uint64_t until;

	(void)state;
	sim_set(set_four_ports, NULL);
	sim_set(set_link_delay, &delay);
	sim_set(set_info_by_turns, &info);
	start_server(getpid());
	start_plugin("PollLoad 4");
	wait_log("link poll every");
	wait_polls(20);
	until = ms_now() + 3000;
	while (ms_now() < until) {
		fc_read_all();
		if (fc_find_copy("edge1", "poll_interval", "link", &v)) {
			least = least == 0 || v.v[0].gauge < least ? v.v[0].gauge : least;
			most = v.v[0].gauge > most ? v.v[0].gauge : most;
		}
		usleep(50 * 1000);
	}
	if (least <= 0 || most > 1.35 * least) {
		fc_dump_logs();
		fail_msg("the link poll interval went from %g s to %g s while /info cost 4 ms and "
			 "nothing by turns",
			least, most);
	}
}

/*
 * A starting application's command list is read again with a back-off (read.c caps_step():
 * 100 ms, twice as long each time, up to 1 s), not every 100 ms: its reply is the largest a
 * poll asks for. In its first 3 s: the first read and at most 6 more (100, 200, 400, 800
 * ms, then every second), where every 100 ms made 30.
 */
static void
command_list_of_a_young_application_backs_off(void **state)
{
	pid_t young = test_young_process();
	uint64_t until;
	unsigned int n;

	(void)state;
	assert_true(young > 0);
	start_server(young);
	start_plugin(NULL);
	wait_polls(1);
	until = ms_now() + 3000;
	while (ms_now() < until) /* a window of 3 s, counted */
		usleep(10000);
	n = sim_get(&sim.root_queries);
	test_end_process(young);
	if (n < 3 || n > 7)
		fail_msg("the command list was read %u times in 3 s; expected 3 to 7", n);
}

static void
set_dear(void *arg)
{
	(void)arg;
	sim.link_delay_ms = 4;
	sim.info_delay_ms = 10;
}

/*
 * With every kind of poll stretched by the budget, some polls are due to ask nothing: such a
 * poll says nothing of the application. A hang is "not responding", never "gone" (the poll
 * that asked nothing was taken for a refused one, after the first unanswered request).
 */
static void
hang_while_every_poll_is_stretched(void **state)
{
	bool yes = true;

	(void)state;
	/* Greeting as pid 1: an application long started, whose command list is not asked
	 * again (a young one's is, from every 100 ms up to every second, and that would be asked
	 * in those polls). */
	start_server(1);
	/* A Timeout shorter than the stretched liveness interval leaves polls after it with
	 * nothing due. */
	start_plugin("MaxAppLoad 20\nTimeout 0.02");
	sim_set(set_dear, NULL);
	wait_log("link poll every");
	/* 10 ms a request: kept to a quarter of the polls' budget (poll.c alive_want()). */
	wait_log("liveness request every");
	assert_int_equal(fc_logs_matching("liveness request every"), 1);
	sim_set(set_silent, &yes);
	wait_note("DPDK application edge1 is not responding", 1, NULL);
	assert_int_equal(fc_notifications_matching("is gone", NULL), 0);
}

/* A port or lcore the application no longer lists: one INFO line, then no more values. */
static void
unlisted_port_and_lcore_stop(void **state)
{
	struct fc_value v;

	(void)state;
	sim.fwd = true;
	start_server(10);
	start_plugin(NULL);
	wait_polls(4);
	fc_read_all();
	assert_true(fc_find_copy("edge1.port1", "link_status", NULL, &v));
	assert_true(fc_find_copy("edge1.lcore2", "lcore_state", NULL, &v));
	sim_set(set_counts, (int[]){1, 1});
	wait_log("port 1 of DPDK application 'edge1' is no longer listed: its values stop");
	wait_log("lcore 2 of DPDK application 'edge1' is no longer reported: its values stop");
	wait_polls(4);
	assert_int_equal(fc_logs_matching("is no longer listed"), 1);
	assert_int_equal(fc_logs_matching("is no longer reported"), 1);
	fc_clear_records();
	assert_true(read_fresh("edge1.port0", "link_status", NULL, &v));
	assert_true(read_fresh("edge1.lcore1", "lcore_state", NULL, &v));
	assert_false(fc_find_copy("edge1.port1", "link_status", NULL, &v));
	assert_false(fc_find_copy("edge1.lcore2", "lcore_state", NULL, &v));
}

/*
 * Reads at any moment never undo a change: in the order values were dispatched, port 0's
 * link_status changes exactly as often as the link did (a read between the poll thread's
 * dispatch of a change and its snapshot sent the old state again, with a later time).
 */
static void
reads_never_undo_a_change(void **state)
{
	unsigned int changes = 0;
	double last = -1;

	(void)state;
	start_server(10);
	start_plugin("LinkConfirm false\nFlapThreshold 1000");
	wait_polls(4);
	__atomic_store_n(&reading, true, __ATOMIC_RELAXED);
	assert_int_equal(pthread_create(&reader, NULL, reader_main, NULL), 0);
	reader_started = true;
	for (size_t i = 1; i <= 10; i++) {
		set_link(0, false);
		wait_note("Link down on edge1 port 0", i, NULL);
		wait_gauge("edge1.port0", "link_status", 0);
		set_link(0, true);
		wait_note("Link up on edge1 port 0", i, NULL);
		wait_gauge("edge1.port0", "link_status", 1);
	}
	stop_reader();
	for (size_t i = 0; i < fc_nvalues(); i++) {
		const struct fc_value *v = fc_value_at(i);

		if (strcmp(v->plugin_instance, "edge1.port0") != 0 ||
			strcmp(v->type, "link_status") != 0)
			continue;
		if (last >= 0 && v->v[0].gauge != last)
			changes++;
		last = v->v[0].gauge;
	}
	assert_int_equal(changes, 20);
}

static void
set_main_age(void *arg)
{
	sim.main_age_ms = *(uint64_t *)arg;
}

/*
 * The forwarder's main lcore stops checking links: /fwd/ports goes stale, so links are read
 * from /ethdev/link_status meanwhile, with one FAILURE, and one OKAY when it moves again.
 */
static void
main_lcore_stall_reads_links_from_ports(void **state)
{
	struct fc_notification n;
	uint64_t stale = 500, fresh = 3;

	(void)state;
	sim.fwd = true;
	start_server(10);
	start_plugin(NULL);
	wait_polls(4);
	sim_set(set_main_age, &stale);
	wait_note("main lcore 0 of edge1 stalled", 1, &n);
	assert_int_equal(n.severity, NOTIF_FAILURE);
	assert_string_equal(n.message,
		"main lcore 0 of edge1 stalled: links not checked for "
		"500 ms (read from the ports meanwhile)");
	assert_string_equal(n.plugin_instance, "edge1.lcore0");
	/* /fwd/ports is stale (it still says up); the ports themselves say down. */
	set_link(1, false);
	wait_note("Link down on edge1 port 1", 1, NULL);
	sim_set(set_main_age, &fresh);
	wait_note("main lcore 0 of edge1 checks the links again after", 1, &n);
	assert_int_equal(n.severity, NOTIF_OKAY);
	assert_int_equal(fc_notifications_matching("main lcore", NULL), 2);
}

/*
 * A hang the instance event reported (not responding) leaves heartbeats that date from it:
 * when the application answers again, its lcores and main lcore are not announced as stalled
 * for it (found by the soak: "answers again" followed by "lcore 1 stalled: 2998 ms" and a
 * "recovered after 192 ms"). An lcore that stays stalled after that is still reported.
 */
static void
hang_covers_its_lcores(void **state)
{
	bool yes = true, no = false;
	uint64_t old = 3000, fresh = 2;

	(void)state;
	sim.fwd = true;
	start_server(getpid());
	start_plugin("Timeout 0.02");
	wait_polls(4);
	sim_set(set_silent, &yes);
	wait_note("DPDK application edge1 is not responding", 1, NULL);
	/* What it says when it answers again: nothing ran while it was stopped. */
	sim_set(set_lcore, (uint64_t[]){0, 1, 3000000, 0});
	sim_set(set_lcore, (uint64_t[]){1, 1, 3000000, 0});
	sim_set(set_main_age, &old);
	sim_set(set_silent, &no);
	wait_note("DPDK application edge1 answers again", 1, NULL);
	wait_polls(3);
	/* Lcore 1 and the main lcore run again; lcore 2 does not. */
	sim_set(set_lcore, (uint64_t[]){0, 1, 5, 0});
	sim_set(set_main_age, &fresh);
	wait_note("lcore 2 of edge1 stalled", 1, NULL);
	wait_polls(10);
	assert_int_equal(fc_notifications_matching("lcore 1 of edge1", NULL), 0);
	assert_int_equal(fc_notifications_matching("main lcore", NULL), 0);
}

/*
 * Discovered names that clash (tests/common/test_util.h) each get a name of their own,
 * renamed by a hash of the socket path and logged once; <Instance "discover"> beside
 * Discover true keeps its name. On today's main they shared names: the values of two
 * applications under one plugin instance.
 */
static void
clashing_names_made_unique(void **state)
{
	char text[512], names[16][64];
	size_t n = 0;

	(void)state;
	start_server(1);
	assert_int_equal(test_plant_clashes(dir), 7);
	snprintf(text, sizeof(text),
		"PollInterval 0.05\nDiscover true\nRuntimeDir \"%s\"\n<Instance \"discover\">\n"
		" SocketPath \"%s\"\n</Instance>\n",
		dir, path);
	assert_int_equal(fc_configure("dpdktel_events", text), 0);
	assert_int_equal(fc_init(), 0);
	assert_int_equal(fc_read_all(), 0);
	for (size_t i = 0; i < fc_nlogs() && n < 16; i++) {
		const char *needle = "watching DPDK application '";
		const char *l = strstr(fc_log_at(i), needle), *end;

		if (l == NULL)
			continue;
		l += strlen(needle);
		end = strchr(l, '\'');
		snprintf(names[n++], sizeof(names[0]), "%.*s", (int)(end - l), l);
	}
	if (n != 8)
		fc_dump_logs();
	assert_int_equal(n, 8);
	for (size_t i = 0; i < n; i++)
		for (size_t k = i + 1; k < n; k++)
			if (strcmp(names[i], names[k]) == 0)
				fail_msg("two instances named '%s'", names[i]);
	assert_string_equal(names[0], "discover");
	assert_int_equal(fc_logs_matching("is named '"), 5);
	/* Known now: the next pass starts nothing and logs no rename again. */
	assert_int_equal(fc_read_all(), 0);
	assert_int_equal(fc_logs_matching("watching DPDK application '"), 8);
	assert_int_equal(fc_logs_matching("is named '"), 5);
}

/* Threads of this process (/proc/self/status). */
static int
threads_now(void)
{
	char line[256];
	int n = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f != NULL && fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "Threads: %d", &n) == 1)
			break;
	if (f != NULL)
		fclose(f);
	return n;
}

/*
 * Many short-lived discovered applications: each poll thread is stopped, joined and its
 * instance freed RetireAfter after its socket went away, so the thread count comes back to
 * where it started. On today's main a poll thread stayed for every socket ever discovered.
 */
static void
short_lived_applications_retired(void **state)
{
	enum { N = 30 };
	char text[256], p[128];
	uint64_t deadline;
	int base;

	(void)state;
	snprintf(text, sizeof(text), "PollInterval 0.01\nRuntimeDir \"%s\"\nRetireAfter 1", dir);
	assert_int_equal(fc_configure("dpdktel_events", text), 0);
	assert_int_equal(fc_init(), 0);
	base = threads_now();
	for (int i = 0; i < N; i++) {
		struct fake_config cfg = {.handler = sim_handler, .pid = 1000 + i, .path = p};
		struct fake_server *f;

		snprintf(p, sizeof(p), "%s/run%d", dir, i);
		mkdir(p, 0700);
		strcat(p, "/dpdk_telemetry.v2");
		f = fs_start_path(&cfg);
		assert_non_null(f);
		assert_int_equal(fc_read_all(), 0);
		fs_stop(f);
	}
	assert_int_equal(fc_logs_matching("watching DPDK application 'run"), N);
	/* A thread each; on a slow run (TSan, valgrind) the first may be retired already. */
	assert_true(threads_now() + (int)fc_logs_matching("RetireAfter: retired") >= base + N);
	deadline = ms_now() + 6000;
	while (fc_logs_matching("RetireAfter: retired") < N && ms_now() < deadline) {
		usleep(50000);
		assert_int_equal(fc_read_all(), 0);
	}
	if (fc_logs_matching("RetireAfter: retired") < N)
		fc_dump_logs();
	assert_int_equal(fc_logs_matching("RetireAfter: retired"), N);
	assert_int_equal(threads_now(), base);
	/* One comes back: watched anew. */
	snprintf(p, sizeof(p), "%s/run3/dpdk_telemetry.v2", dir);
	fs = fs_start_path(&(struct fake_config){.handler = sim_handler, .pid = 7, .path = p});
	assert_non_null(fs);
	assert_int_equal(fc_read_all(), 0);
	assert_int_equal(fc_logs_matching("watching DPDK application 'run3'"), 2);
}

/* A pid that no process has: a child that has exited and been reaped. */
static pid_t
dead_pid(void)
{
	pid_t child = fork();

	if (child == 0)
		_exit(0);
	assert_true(child > 0);
	assert_int_equal(waitpid(child, NULL, 0), child);
	return child;
}

/*
 * Another process takes the socket and hangs at once (a DPDK application stopped right after
 * its EAL made the socket): it listens, so the kernel accepts connections into its backlog
 * (listen(fd, 1), as lib/telemetry/telemetry.c create_socket() does), but it never accepts
 * one and never greets. It runs as a process of its own, so that SO_PEERCRED names it
 * (without threads: this process has some, and a forked child may not start any under
 * ThreadSanitizer); it binds a path of its own and is moved onto the socket path once the
 * old server is gone, as fast as an application restarts.
 */
static pid_t
replace_with_hung_process(void)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fds[2];
	pid_t child;
	char c;

	assert_true(strlen(path) + 5 <= sizeof(a.sun_path));
	memcpy(a.sun_path, path, strlen(path));
	memcpy(a.sun_path + strlen(path), ".new", 5);
	assert_int_equal(pipe(fds), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);

		close(fds[0]);
		if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
			listen(fd, 1) != 0 || write(fds[1], "r", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	helper_child = child;
	close(fds[1]);
	assert_int_equal(read(fds[0], &c, 1), 1);
	close(fds[0]);
	stop_server();
	assert_int_equal(rename(a.sun_path, path), 0);
	return child;
}

/*
 * A restart into a hung process is a restart, then a process that does not respond: decided
 * for the process that holds the socket now (SO_PEERCRED: it never greets), not for the one
 * that answered last. Failed before: the old pid had exited, so the unanswered polls made it
 * "is gone" while a process listened there, and no restart was seen.
 */
static void
restart_into_hung_process(void **state)
{
	struct fc_notification n;
	char want[160];
	pid_t old = dead_pid(), child;

	(void)state;
	start_server(old);
	start_plugin("Timeout 0.02");
	wait_polls(4);
	child = replace_with_hung_process();
	snprintf(want, sizeof(want), "DPDK application edge1 restarted (pid %ld → %ld)", (long)old,
		(long)child);
	wait_note("restarted", 1, &n);
	assert_string_equal(n.message, want);
	assert_int_equal(n.severity, NOTIF_WARNING);
	wait_note("is not responding", 1, &n);
	snprintf(want, sizeof(want), "(pid %ld alive, no reply for ", (long)child);
	assert_non_null(strstr(n.message, want));
	assert_int_equal(n.severity, NOTIF_FAILURE);
	assert_int_equal(fc_notifications_matching("gone", NULL), 0);
	/* The restart came first. */
	assert_non_null(strstr(fc_notification_at(0)->message, "restarted"));
}

static void
set_silent_but_root(void *arg)
{
	sim.silent_but_root = *(bool *)arg;
}

/*
 * An application whose first poll got the command list answered, then nothing: not
 * responding, and the message names its pid (the greeting's), never "pid 0". Failed before:
 * "(pid 0 alive, ...)", the pid being taken only from a poll answered to the end.
 */
static void
hung_after_first_answer_names_its_pid(void **state)
{
	struct fc_notification n;
	char want[96];
	bool yes = true;

	(void)state;
	sim_set(set_silent_but_root, &yes);
	start_server(getpid()); /* a process that surely runs: this one */
	start_plugin("Timeout 0.02");
	wait_note("is not responding", 1, &n);
	snprintf(want, sizeof(want), "(pid %ld alive, no reply for ", (long)getpid());
	assert_non_null(strstr(n.message, want));
	assert_int_equal(fc_notifications_matching("pid 0", NULL), 0);
}

/*
 * The same hang, of an application collectd cannot see the pid of (a sibling pid namespace):
 * not responding, without claiming a pid is alive (collectd cannot tell), and never the
 * pid of its greeting read as one of collectd's. Failed before: "(pid <greeting> alive"
 * for a pid /proc knows as another process.
 */
static void
hung_hidden_pid_names_no_pid(void **state)
{
	struct fc_notification n;
	bool yes = true;

	(void)state;
	fp_hide_pid(true);
	sim_set(set_silent_but_root, &yes);
	start_server(1); /* an entrypoint: pid 1 of its namespace; this machine's pid 1 runs */
	start_plugin("Timeout 0.02");
	wait_note("is not responding", 1, &n);
	assert_non_null(strstr(n.message, "is not responding (no reply for "));
	assert_null(strstr(n.message, "alive"));
	assert_int_equal(fc_notifications_matching("is gone", NULL), 0);
	assert_int_equal(fc_logs_matching("runs in a pid namespace collectd cannot see into"), 1);
	fp_hide_pid(false);
}

/*
 * An application that answers is not checked in /proc: its start time is read once (when
 * its pid is first seen), liveness only for a poll that went unanswered. Failed before: a
 * /proc/<pid>/stat read at every poll (50 a second at PollInterval 0.02).
 */
static void
no_proc_read_while_answering(void **state)
{
	unsigned int before;

	(void)state;
	start_server(getpid());
	start_plugin(NULL);
	wait_polls(4);
	before = __atomic_load_n(&proc_stat_opens, __ATOMIC_RELAXED);
	wait_polls(40);
	assert_int_equal(__atomic_load_n(&proc_stat_opens, __ATOMIC_RELAXED), before);
}

static void
set_dev(void *arg)
{
	sim.dev = arg;
}

/* The device at a port changes (another attached at its id): the next link-down names the
 * new one. Failed before: the name was learnt once per port ("net_tap0" for ever). */
static void
link_down_names_the_device_now_there(void **state)
{
	(void)state;
	start_server(10);
	start_plugin("FlapThreshold 10"); /* three changes in a second: not flapping here */
	wait_polls(4);
	set_link(0, false);
	wait_note("Link down on edge1 port 0 (net_tap0)", 1, NULL);
	set_link(0, true);
	wait_note("Link up on edge1 port 0", 1, NULL);
	sim_set(set_dev, (void *)"net_null");
	set_link(0, false);
	wait_note("Link down on edge1 port 0 (net_null0)", 1, NULL);
}

/*
 * One identifier, one time order, with the poll thread and collectd's read callback
 * dispatching at once (reads back to back, changes of links and lcores): no value list that
 * collectd's cache could refuse as "Value too old", by its own rule or by its write threads
 * taking two close values out of order (fake_collectd.c, cache_update()). Failed before:
 * the poll's change and the read's snapshot went out microseconds apart (in collectd 5.12:
 * "uc_update: Value too old: ... dpdktel_events-<inst>/up" at start-up, one run in three).
 */
static void
poll_and_read_in_one_time_order(void **state)
{
	char first[512];

	(void)state;
	sim.fwd = true;
	start_server(10);
	start_plugin("LinkConfirm false\nFlapThreshold 1000");
	/* Reads from the start, with the first polls (the fake daemon registers callbacks on
	 * one thread: reads begin once init has returned, as collectd's do). */
	__atomic_store_n(&reading, true, __ATOMIC_RELAXED);
	assert_int_equal(pthread_create(&reader, NULL, reader_main, NULL), 0);
	reader_started = true;
	wait_polls(4);
	for (size_t i = 1; i <= 3; i++) {
		set_link(1, false);
		wait_note("Link down on edge1 port 1", i, NULL);
		set_link(1, true);
		wait_note("Link up on edge1 port 1", i, NULL);
	}
	wait_gauge("edge1.port1", "link_status", 1);
	stop_reader();
	if (fc_out_of_order(first, sizeof(first)) != 0)
		fail_msg("%zu value lists out of order, the first %s", fc_out_of_order(NULL, 0),
			first);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(link_down_then_up, setup, teardown),
		cmocka_unit_test_setup_teardown(
			link_down_names_the_device_now_there, setup, teardown),
		cmocka_unit_test_setup_teardown(swapped_answer_raises_no_alarm, setup, teardown),
		cmocka_unit_test_setup_teardown(flap_storm_one_warning, setup, teardown),
		cmocka_unit_test_setup_teardown(
			down_port_polled_slowly_up_port_fast_again, setup, teardown),
		cmocka_unit_test_setup_teardown(missed_down_up_seen_from_counter, setup, teardown),
		cmocka_unit_test_setup_teardown(stall_and_recovery, setup, teardown),
		cmocka_unit_test_setup_teardown(
			stall_seen_before_the_application_says_so, setup, teardown),
		cmocka_unit_test_setup_teardown(exited_lcore, setup, teardown),
		cmocka_unit_test_setup_teardown(gone_back_and_restarted, setup, teardown),
		cmocka_unit_test_setup_teardown(
			silent_live_process_is_not_responding, setup, teardown),
		cmocka_unit_test_setup_teardown(silent_exited_process_is_gone, setup, teardown),
		cmocka_unit_test_setup_teardown(restart_into_hung_process, setup, teardown),
		cmocka_unit_test_setup_teardown(hung_hidden_pid_names_no_pid, setup, teardown),
		cmocka_unit_test_setup_teardown(no_proc_read_while_answering, setup, teardown),
		cmocka_unit_test_setup_teardown(
			hung_after_first_answer_names_its_pid, setup, teardown),
		cmocka_unit_test_setup_teardown(one_slow_reply_is_no_outage, setup, teardown),
		cmocka_unit_test_setup_teardown(
			eal_lcore_stall_confirmed_by_its_own_source, setup, teardown),
		cmocka_unit_test_setup_teardown(no_usage_callback_is_links_only, setup, teardown),
		cmocka_unit_test_setup_teardown(changes_confirmed_on_25_11, setup, teardown),
		cmocka_unit_test_setup_teardown(no_confirmation_on_26_07, setup, teardown),
		cmocka_unit_test_setup_teardown(flap_threshold_above_64, setup, teardown),
		cmocka_unit_test_setup_teardown(unlisted_port_and_lcore_stop, setup, teardown),
		cmocka_unit_test_setup_teardown(
			polls_go_before_the_other_plugins_reads, setup, teardown),
		cmocka_unit_test_setup_teardown(
			budget_stretches_links_not_liveness, setup, teardown),
		cmocka_unit_test_setup_teardown(
			slow_links_warning_names_every_port, setup, teardown),
		cmocka_unit_test_setup_teardown(stretched_links_asked_in_groups, setup, teardown),
		cmocka_unit_test_setup_teardown(poll_takes_at_most_a_group, setup, teardown),
		cmocka_unit_test_setup_teardown(stretched_polls_stay_spread, setup, teardown),
		cmocka_unit_test_setup_teardown(
			cold_first_reply_does_not_stretch_a_port, setup, teardown),
		cmocka_unit_test_setup_teardown(liveness_share_holds_still, setup, teardown),
		cmocka_unit_test_setup_teardown(
			command_list_of_a_young_application_backs_off, setup, teardown),
		cmocka_unit_test_setup_teardown(
			hang_while_every_poll_is_stretched, setup, teardown),
		cmocka_unit_test_setup_teardown(reads_never_undo_a_change, setup, teardown),
		cmocka_unit_test_setup_teardown(poll_and_read_in_one_time_order, setup, teardown),
		cmocka_unit_test_setup_teardown(
			main_lcore_stall_reads_links_from_ports, setup, teardown),
		cmocka_unit_test_setup_teardown(hang_covers_its_lcores, setup, teardown),
		cmocka_unit_test_setup_teardown(initial_down_reported_once, setup, teardown),
		cmocka_unit_test_setup_teardown(initial_state_can_be_silenced, setup, teardown),
		cmocka_unit_test_setup_teardown(links_only_said_once, setup, teardown),
		cmocka_unit_test_setup_teardown(
			port_started_while_first_read_is_no_alarm, setup, teardown),
		cmocka_unit_test_setup_teardown(garbage_replies_make_it_gone, setup, teardown),
		cmocka_unit_test_setup_teardown(
			bad_values_counted_and_logged_once, setup, teardown),
		cmocka_unit_test_setup_teardown(speed_change_warns, setup, teardown),
		cmocka_unit_test_setup_teardown(values_at_each_interval, setup, teardown),
		cmocka_unit_test_setup_teardown(
			unreachable_instance_publishes_empty_state, setup, teardown),
		cmocka_unit_test_setup_teardown(
			late_commands_of_a_starting_application, setup, teardown),
		cmocka_unit_test_setup_teardown(
			command_list_read_once_when_not_starting, setup, teardown),
		cmocka_unit_test_setup_teardown(
			nothing_dispatched_before_the_first_poll, setup, teardown),
		cmocka_unit_test_setup_teardown(bad_configurations_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(port_netdev_option, setup, teardown),
		cmocka_unit_test_setup_teardown(
			netdev_followed_and_disagreement_said_once, setup, teardown),
		cmocka_unit_test_setup_teardown(restart_notified_outside_the_poll, setup, teardown),
		cmocka_unit_test_setup_teardown(
			short_flap_window_one_error_per_block, setup, teardown),
		cmocka_unit_test_setup_teardown(clashing_names_made_unique, setup, teardown),
		cmocka_unit_test_setup_teardown(short_lived_applications_retired, setup, teardown),
	};

	/* To run some tests only, e.g. in a loop while chasing a flaky one. */
	if (getenv("DTEL_TEST_FILTER"))
		cmocka_set_test_filter(getenv("DTEL_TEST_FILTER"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
