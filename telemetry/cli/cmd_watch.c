/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdktel watch [-i SECONDS] [-c COUNT]: per-port rates, refreshed in place on a terminal and
 * as key=value lines when piped. It outlives the application: while the socket is gone it
 * says so and keeps trying, and after a restart (new pid) it starts its rates afresh.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

static volatile sig_atomic_t stop;

static void
on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

struct rates {
	double rx_pps, tx_pps, rx_bps, tx_bps, missed_ps, nombuf_ps, errors_ps;
	bool valid; /* false when a counter went backwards (reset) */
};

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static bool
delta(uint64_t now, uint64_t then, double dt, double *ret)
{
	if (now < then)
		return false;
	*ret = (double)(now - then) / dt;
	return true;
}

static struct rates
rates_of(const struct dtel_port_stats *a, const struct dtel_port_stats *b, double dt)
{
	struct rates r = {.valid = true};
	double ie, oe;

	r.valid = delta(a->ipackets, b->ipackets, dt, &r.rx_pps) &&
		delta(a->opackets, b->opackets, dt, &r.tx_pps) &&
		delta(a->ibytes, b->ibytes, dt, &r.rx_bps) &&
		delta(a->obytes, b->obytes, dt, &r.tx_bps) &&
		delta(a->imissed, b->imissed, dt, &r.missed_ps) &&
		delta(a->rx_nombuf, b->rx_nombuf, dt, &r.nombuf_ps) &&
		delta(a->ierrors, b->ierrors, dt, &ie) && delta(a->oerrors, b->oerrors, dt, &oe);
	r.rx_bps *= 8;
	r.tx_bps *= 8;
	r.errors_ps = r.valid ? ie + oe : 0;
	return r;
}

static const struct port_sample *
find_port(const struct port_sample *v, int n, uint16_t id)
{
	for (int i = 0; i < n; i++)
		if (v[i].port_id == id)
			return &v[i];
	return NULL;
}

static const char *
link_word(const struct port_sample *p)
{
	return !p->have_link ? "?" : p->link.up ? "up" : "down";
}

static void
print_tty(const char *path, const struct dtel_shared_status *st, double interval,
	const struct port_sample *v, const struct rates *r, int n)
{
	char b[7][16];

	/* Home the cursor and clear below: redraw in place without scrolling. */
	printf("\033[H\033[J");
	printf("dpdktel watch  %s  pid %ld  %s  every %gs (Ctrl-C to quit)\n\n", path,
		st->greeting.pid, st->greeting.version, interval);
	printf("%-4s %-16s %-4s %9s %9s %9s %9s %9s %9s %9s\n", "PORT", "NAME", "LINK", "RX-PPS",
		"TX-PPS", "RX-BPS", "TX-BPS", "MISSED/S", "NOMBUF/S", "ERRORS/S");
	for (int i = 0; i < n; i++) {
		if (!r[i].valid) {
			printf("%-4u %-16s %-4s %9s (counters were reset)\n", v[i].port_id,
				v[i].info.name, link_word(&v[i]), "-");
			continue;
		}
		printf("%-4u %-16s %-4s %9s %9s %9s %9s %9s %9s %9s\n", v[i].port_id,
			v[i].info.name[0] ? v[i].info.name : "-", link_word(&v[i]),
			cli_si(r[i].rx_pps, b[0], 16), cli_si(r[i].tx_pps, b[1], 16),
			cli_si(r[i].rx_bps, b[2], 16), cli_si(r[i].tx_bps, b[3], 16),
			cli_si(r[i].missed_ps, b[4], 16), cli_si(r[i].nombuf_ps, b[5], 16),
			cli_si(r[i].errors_ps, b[6], 16));
	}
	fflush(stdout);
}

static void
print_lines(const struct port_sample *v, const struct rates *r, int n)
{
	char ts[32];
	time_t t = time(NULL);
	struct tm tm;

	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", localtime_r(&t, &tm));
	for (int i = 0; i < n; i++) {
		printf("%s port=%u name=%s link=%s", ts, v[i].port_id,
			v[i].info.name[0] ? v[i].info.name : "-", link_word(&v[i]));
		if (r[i].valid)
			printf(" rx_pps=%.0f tx_pps=%.0f rx_bps=%.0f tx_bps=%.0f missed_ps=%.0f "
			       "nombuf_ps=%.0f errors_ps=%.0f\n",
				r[i].rx_pps, r[i].tx_pps, r[i].rx_bps, r[i].tx_bps, r[i].missed_ps,
				r[i].nombuf_ps, r[i].errors_ps);
		else
			printf(" reset=1\n");
	}
	fflush(stdout);
}

/* Sleep until t (now_s() clock) unless a signal comes first. */
static void
sleep_until(double t)
{
	double left;

	while (!stop && (left = t - now_s()) > 0) {
		struct timespec ts = {.tv_sec = (time_t)left,
			.tv_nsec = (long)((left - (double)(time_t)left) * 1e9)};

		nanosleep(&ts, NULL);
	}
}

struct watch {
	const struct cli_opts *o;
	const char *path;
	struct dtel_shared *sh;
	double interval;
	bool tty;
	struct port_sample *prev;
	int nprev;
	double tprev;
	uint64_t generation;
	int last_err;
};

static void
say_waiting(struct watch *w, int err)
{
	if (err == w->last_err)
		return;
	w->last_err = err;
	if (w->tty)
		printf("\033[H\033[J");
	printf("dpdktel watch: %s: %s; waiting for it\n", w->path, dtel_strerror(err));
	fflush(stdout);
}

/* One refresh; returns true when rates were printed. */
static bool
step(struct watch *w)
{
	struct dtel_shared_status st;
	struct port_sample *v = NULL;
	struct rates *r;
	double t = now_s();
	int n;

	n = cli_sample_ports(w->sh, w->o->timeout_ms, &v);
	if (n < 0) {
		say_waiting(w, n);
		return false;
	}
	w->last_err = 0;
	dtel_shared_status(w->sh, &st);
	if (st.generation != w->generation) {
		if (w->generation != 0 && !w->tty)
			printf("application restarted: pid %ld\n", st.greeting.pid);
		w->generation = st.generation;
		free(w->prev);
		w->prev = NULL;
	}
	r = calloc((size_t)n + 1, sizeof(*r));
	if (w->prev != NULL && r != NULL) {
		for (int i = 0; i < n; i++) {
			const struct port_sample *p = find_port(w->prev, w->nprev, v[i].port_id);

			r[i] = p ? rates_of(&v[i].stats, &p->stats, t - w->tprev)
				 : (struct rates){0};
		}
		if (w->tty)
			print_tty(w->path, &st, w->interval, v, r, n);
		else
			print_lines(v, r, n);
	}
	bool printed = w->prev != NULL && r != NULL;

	free(r);
	free(w->prev);
	w->prev = v;
	w->nprev = n;
	w->tprev = t;
	return printed;
}

int
cmd_watch(const struct cli_opts *o, int argc, char **argv)
{
	static const struct option opts[] = {
		{"interval", required_argument, NULL, 'i'},
		{"count", required_argument, NULL, 'c'},
		{NULL, 0, NULL, 0},
	};
	struct watch w = {.o = o, .interval = 1.0};
	char path[DTEL_PATH_MAX];
	long count = 0;
	char *end;
	double next;
	int c, ret;

	while ((c = getopt_long(argc, argv, "i:c:", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			if (!cli_parse_seconds(optarg, &w.interval) || w.interval < 0.1) {
				cli_err("invalid interval '%s': expected seconds, at least 0.1",
					optarg);
				return EXIT_USAGE;
			}
			break;
		case 'c':
			count = strtol(optarg, &end, 10);
			if (*optarg == '\0' || *end != '\0' || count <= 0) {
				cli_err("invalid count '%s': expected a number > 0", optarg);
				return EXIT_USAGE;
			}
			break;
		default:
			return EXIT_USAGE;
		}
	}
	if (optind != argc) {
		cli_err("watch takes no arguments besides -i and -c");
		return EXIT_USAGE;
	}
	ret = cli_shared(o, path, &w.sh);
	if (ret != 0)
		return ret;
	w.path = path;
	w.tty = isatty(STDOUT_FILENO);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (w.tty)
		printf("\033[?25l"); /* hide the cursor while redrawing */
	next = now_s();
	while (!stop) {
		if (step(&w) && count > 0 && --count == 0)
			break;
		next += w.interval;
		sleep_until(next);
	}
	if (w.tty)
		printf("\033[?25h\n");
	free(w.prev);
	dtel_shared_put(w.sh);
	return 0;
}
