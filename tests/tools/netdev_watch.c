/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * netdev_watch: the kernel-netdev link source of dpdktel_events (plugins/events/netdev.h)
 * against a running DPDK application, for tests and for an operator's debugging.
 *
 *   netdev_watch SOCKET_PATH [PORT=NETDEV ...]
 *
 * Asks the application (its telemetry socket) for its ports (/ethdev/list, /ethdev/info of
 * each, /eal/params for the --vdev arguments) and the pid behind the socket (SO_PEERCRED),
 * opens rtnetlink in that process's network namespace and maps each port as the plugin does
 * (PORT=NETDEV as PortNetdev). Prints, one line each, flushed:
 *   netns same|other
 *   port N NAME netdev IFNAME by operator|iface|parent|sysfs|mac only_signal 0|1 carrier 0|1
 *   port N NAME none REASON
 *   ready
 *   event T port N carrier 1|0|-19      (T: CLOCK_MONOTONIC seconds when it was read)
 * until stdin reaches EOF. When the netdev source cannot be used at all:
 *   unused -ERRNO REASON
 * and exit code 3. Exit codes: 0 after EOF on stdin, 1 the application did not answer,
 * 2 bad usage, 3 unused.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dtel.h"
#include "netdev.h"

#define TIMEOUT_MS 2000

struct app {
	struct dtel_session *s;
	int version;
	uint16_t *ports;
	int nports;
	char (*argv)[DTEL_STRING_MAX];
	int argc;
};

static int
ask(struct app *a, const char *cmd, struct dtel_reply *r)
{
	int ret = dtel_query(a->s, cmd, TIMEOUT_MS, r);

	if (ret < 0)
		fprintf(stderr, "netdev_watch: %s: %s\n", cmd, strerror(-ret));
	return ret;
}

static int
app_open(const char *path, struct app *a)
{
	struct dtel_reply r;
	int ret = dtel_session_open(path, TIMEOUT_MS, &a->s);

	if (ret < 0) {
		fprintf(stderr, "netdev_watch: %s: %s\n", path, strerror(-ret));
		return ret;
	}
	a->version = dtel_dpdk_version(dtel_session_greeting(a->s)->version);
	ret = ask(a, "/ethdev/list", &r);
	if (ret < 0)
		return ret;
	a->nports = dtel_parse_port_list(&r, &a->ports);
	dtel_reply_release(&r);
	if (a->nports < 0)
		return a->nports;
	if (ask(a, "/eal/params", &r) == 0) {
		a->argc = dtel_parse_eal_argv(&r, &a->argv);
		dtel_reply_release(&r);
	}
	return 0;
}

static const char *const how_names[] = {"operator", "iface", "parent", "sysfs", "mac"};

static const char *
operator_netdev(int argc, char **argv, unsigned int port, char *buf)
{
	for (int i = 2; i < argc; i++) {
		unsigned int p;

		if (ev_netdev_parse_spec(argv[i], &p, buf, NULL, 0) == 0 && p == port)
			return buf;
	}
	return NULL;
}

/* Map every port, as the plugin does, and say how. */
static void
map_ports(struct ev_netdev *nd, struct app *a, int argc, char **argv)
{
	for (int i = 0; i < a->nports; i++) {
		char cmd[64], why[EV_NETDEV_WHY_MAX], args[DTEL_STRING_MAX], ifname[IFNAMSIZ];
		struct dtel_port_info info;
		struct ev_netdev_want w = {.info = &info, .dpdk_version = a->version};
		struct ev_netdev_port p;
		struct dtel_reply r;

		snprintf(cmd, sizeof(cmd), "/ethdev/info,%u", a->ports[i]);
		if (ask(a, cmd, &r) < 0)
			continue;
		if (dtel_parse_port_info(&r, &info) < 0) {
			dtel_reply_release(&r);
			continue;
		}
		dtel_reply_release(&r);
		w.ifname = operator_netdev(argc, argv, a->ports[i], ifname);
		if (a->argc > 0 &&
			ev_netdev_vdev_args((const char(*)[DTEL_STRING_MAX])a->argv,
				(size_t)a->argc, info.name, args, sizeof(args)) == 0)
			w.devargs = args;
		if (ev_netdev_map(nd, a->ports[i], &w, &p, why, sizeof(why)) == 0)
			printf("port %u %s netdev %s by %s only_signal %d carrier %d\n",
				a->ports[i], info.name, p.ifname, how_names[p.how], p.only_signal,
				ev_netdev_carrier(nd, a->ports[i]));
		else
			printf("port %u %s none %s\n", a->ports[i], info.name, why);
	}
}

static void
print_event(void *ctx, unsigned int port, int carrier)
{
	struct timespec ts;

	(void)ctx;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	printf("event %ld.%09ld port %u carrier %d\n", (long)ts.tv_sec, ts.tv_nsec, port, carrier);
	fflush(stdout);
}

/* Carrier events as they come, until stdin reaches EOF. */
static int
watch(struct ev_netdev *nd)
{
	struct pollfd p[2] = {
		{.fd = ev_netdev_fd(nd), .events = POLLIN}, {.fd = STDIN_FILENO, .events = POLLIN}};

	for (;;) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return 1;
		}
		if (p[0].revents & POLLIN) {
			int r = ev_netdev_drain(nd, print_event, NULL);

			if (r < 0)
				fprintf(stderr, "netdev_watch: drain: %s\n", strerror(-r));
		}
		if (p[1].revents) {
			char buf[64];

			if (read(STDIN_FILENO, buf, sizeof(buf)) <= 0)
				return 0;
		}
	}
}

int
main(int argc, char **argv)
{
	struct app a = {0};
	struct ev_netdev *nd;
	char why[EV_NETDEV_WHY_MAX];
	long pid = 0;
	int ret;

	if (argc < 2) {
		fprintf(stderr, "usage: netdev_watch SOCKET_PATH [PORT=NETDEV ...]\n");
		return 2;
	}
	/* SO_PEERCRED says 0 for a process outside our pid namespace: ev_netdev_open() then
	 * says why (-ESRCH). */
	if (dtel_probe_pid(argv[1], &pid) < 0)
		pid = 0;
	if (app_open(argv[1], &a) < 0) {
		ret = 1;
		goto out;
	}
	ret = ev_netdev_open(pid, TIMEOUT_MS, &nd, why, sizeof(why));
	if (ret < 0) {
		printf("unused %d %s\n", ret, why);
		ret = 3;
	} else {
		printf("netns %s\n", ev_netdev_other_netns(nd) ? "other" : "same");
		map_ports(nd, &a, argc, argv);
		printf("ready\n");
		fflush(stdout);
		ret = watch(nd);
		ev_netdev_close(nd);
	}
out:
	dtel_session_close(a.s);
	free(a.ports);
	free(a.argv);
	return ret;
}
