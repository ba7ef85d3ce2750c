/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdktel watch [-i SECONDS] [-c COUNT]: per-port rates, refreshed in place on a terminal and
 * as key=value lines when piped. It outlives the application: while the socket is gone it
 * says so and keeps trying, and after a restart (new pid) it starts its rates afresh.
 */
#include <errno.h>
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
print_tty_row(const struct port_sample *p, const struct rates *r)
{
	char b[7][16], name[CLI_NAME_SIZE];

	printf("%-4u %-16s %-4s ", p->port_id, cli_port_name(p, name), link_word(p));
	if (!r->valid) {
		printf("%9s (counters were reset)\n", "-");
		return;
	}
	printf("%9s %9s %9s %9s %9s %9s %9s\n", cli_si(r->rx_pps, b[0], 16),
		cli_si(r->tx_pps, b[1], 16), cli_si(r->rx_bps, b[2], 16),
		cli_si(r->tx_bps, b[3], 16), cli_si(r->missed_ps, b[4], 16),
		cli_si(r->nombuf_ps, b[5], 16), cli_si(r->errors_ps, b[6], 16));
}

static void
print_tty(const char *path, const struct dtel_shared_status *st, double interval,
	const struct port_sample *v, const struct rates *r, int n)
{
	char version[CLI_ESCAPED_SIZE(DTEL_STRING_MAX)];

	/* Home the cursor and clear below: redraw in place without scrolling. */
	printf("\033[H\033[J");
	printf("dpdktel watch  %s  pid %ld  %s  every %gs (Ctrl-C to quit)\n\n", path,
		st->greeting.pid, cli_escape(st->greeting.version, version, sizeof(version)),
		interval);
	printf("%-4s %-16s %-4s %9s %9s %9s %9s %9s %9s %9s\n", "PORT", "NAME", "LINK", "RX-PPS",
		"TX-PPS", "RX-BPS", "TX-BPS", "MISSED/S", "NOMBUF/S", "ERRORS/S");
	for (int i = 0; i < n; i++)
		print_tty_row(&v[i], &r[i]);
	fflush(stdout);
}

static void
print_lines(const struct port_sample *v, const struct rates *r, int n)
{
	char ts[32];
	time_t t = time(NULL);
	struct tm tm;
	char name[CLI_NAME_SIZE];

	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", localtime_r(&t, &tm));
	for (int i = 0; i < n; i++) {
		printf("%s port=%u name=%s link=%s", ts, v[i].port_id, cli_port_name(&v[i], name),
			link_word(&v[i]));
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
	long count; /* refreshes left; 0: until stopped */
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

/* -i SECONDS, -c COUNT */
static int
watch_opt(int c, const char *arg, void *ctx)
{
	struct watch *w = ctx;
	char *end;

	if (c == 'i') {
		if (cli_parse_seconds(arg, &w->interval) && w->interval >= 0.1)
			return 0;
		cli_err("invalid interval '%s': expected seconds, at least 0.1", arg);
		return EXIT_USAGE;
	}
	w->count = strtol(arg, &end, 10);
	if (*arg == '\0' || *end != '\0' || w->count <= 0) {
		cli_err("invalid count '%s': expected a number > 0", arg);
		return EXIT_USAGE;
	}
	return 0;
}

int
cmd_watch(struct cli_opts *o, int argc, char **argv)
{
	static const struct option opts[] = {
		{"interval", required_argument, NULL, 'i'},
		{"count", required_argument, NULL, 'c'},
		{NULL, 0, NULL, 0},
	};
	struct watch w = {.o = o, .interval = 1.0};
	struct cli_cmd_opts cmd = {"i:c:", opts, watch_opt, &w};
	char path[DTEL_PATH_MAX], shown[CLI_ESCAPED_SIZE(DTEL_PATH_MAX)];
	double next;
	int ret = cli_parse_opts(o, argc, argv, &cmd);

	if (ret != 0)
		return ret;
	if (optind != argc) {
		cli_err("watch takes no arguments besides -i and -c");
		return EXIT_USAGE;
	}
	ret = cli_shared(o, path, &w.sh);
	if (ret != 0)
		return ret;
	w.path = cli_escape(path, shown, sizeof(shown)); /* the prefix is the application's */
	w.tty = isatty(STDOUT_FILENO);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (w.tty)
		printf("\033[?25l"); /* hide the cursor while redrawing */
	next = now_s();
	while (!stop) {
		if (step(&w) && w.count > 0 && --w.count == 0)
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
