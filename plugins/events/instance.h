/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One application as dpdktel_events sees it (struct ev_instance), and what each file of
 * plugins/events/ gives the others. See dpdktel_events.c for what lives where.
 */
#ifndef DTEL_EVENTS_INSTANCE_H
#define DTEL_EVENTS_INSTANCE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/dtp.h"
#include "machines.h"
#include "netdev.h"

#define PLUGIN "dpdktel_events"
#define LOG(level, ...) DTP_LOG(level, PLUGIN, __VA_ARGS__)

/* Configuration ---------------------------------------------------------------------------- */

struct events_opts {
	double poll_interval;
	struct dtp_ports ports;
	bool link, link_confirm, lcores, instance_events, initial_state;
	double flap_window;
	unsigned int flap_threshold;
	double stall_threshold; /* 0: the application's own (/fwd/info stall_ms), else 0.1 s */
	double timeout;
	unsigned int not_responding_polls;
	double poll_load; /* PollLoad: percent of one core for this plugin's polls, 0: none */
	double max_app_load; /* MaxAppLoad: both plugins together, < 0: not set, 0: none */
	double down_poll_interval; /* a down port's link, at most this often (seconds) */
	bool link_netdev; /* LinkNetdev: links from the kernel netdev of ports that have one */
	struct ev_port_netdevs port_netdev; /* PortNetdev, in <Instance> blocks only */
};

/* Runtime state ------------------------------------------------------------------------- */

/* When the values of the instance, a port or an lcore last went to collectd. */
struct sent_at {
	unsigned int id; /* first: dtp_slot() */
	cdtime_t at;
	bool dirty; /* changed in a poll, not sent since (by the poll thread or a read) */
};

/* What the read callback dispatches: a copy the poll thread publishes after each poll. */
struct snapshot {
	bool polled; /* false until the first poll: nothing is known to dispatch */
	bool not_responding;
	struct dtp_target health; /* a copy: its counters, and up as this plugin says it */
	struct events_port *ports; /* copies: their flap_ms is not theirs to use */
	size_t nports;
	struct events_lcore *lcores;
	size_t nlcores;
	double link_interval, lcore_interval; /* in force, seconds; 0: not polled */
	struct link_sched *sched; /* copies, for each port's poll_interval and detection_bound */
	size_t nsched;
	double fwd_link_bound; /* links from /fwd/ports: the detection bound of every port, s */
};

/* Link requests of a port whose service times are kept (link_sched). */
#define LINK_SAMPLES 8

/* When a port's link is due (schedule.c), where links are read port by port. */
struct link_sched {
	unsigned int id; /* port id; first: dtp_slot() */
	uint64_t next_ms; /* due then (0: at once) */
	uint64_t polled_ms; /* last asked, 0: never */
	uint64_t period_ns; /* in force, 0: not planned yet (PollInterval) */
	uint32_t samples[LINK_SAMPLES]; /* service times of its last link requests (ns) */
	unsigned int n, next;
	bool quiet; /* its kernel netdev tells its changes: a slow cross-check only */
	bool only_signal; /* ... and its DPDK link never follows it: the netdev is the link */
	bool spread; /* its stretched period was given a phase of its own */
};

/* The kinds of poll, each run at its own interval within the budget (PollLoad). */
enum poll_kind { POLL_LINKS, POLL_LCORES, POLL_ALIVE, POLL_KINDS };

struct ev_instance {
	struct dtp_target t;
	const struct events_opts *o;
	pthread_t thread;
	pthread_mutex_t lock; /* stop, shared with shutdown */
	/* Held while publishing snap and dispatching this instance's values, the time taken
	 * inside: values of one identifier from the poll thread and the read callback then
	 * never go out of order, and a read never sends a state older than a change. */
	pthread_mutex_t dispatch_lock;
	int wake_fd; /* an eventfd: ev_instance_stop() wakes the poll thread's poll() */
	struct snapshot snap; /* under dispatch_lock (and lock) */
	/* When the values of the instance, of each port and of each lcore last went to
	 * collectd, from either thread (under dispatch_lock): see dispatch_gap(). */
	struct sent_at inst_sent;
	struct sent_at *port_sent, *lcore_sent;
	cdtime_t last_read; /* when collectd's read callback last sent the snapshot, 0: never */
	size_t nport_sent, nlcore_sent;
	/* Values above INT64_MAX that collectd could not take, counted by whichever thread
	 * dispatched them (atomic); added to telemetry_requests/invalid. */
	uint64_t range_invalid;
	bool discovered;
	bool running; /* the poll thread was started */
	bool stop;

	/* Everything below belongs to the poll thread alone. */
	bool have_caps;
	bool caps_again; /* the command list came from a starting application: read it again */
	struct dtp_caps caps;
	bool usage_lcores; /* /eal/lcore/usage listed lcores when probed: the lcore source */
	bool has_link_check_age; /* /fwd/info reports link_check_age_ms */
	bool said_links_only;
	bool main_stalled; /* announced: the main lcore no longer checks the links */
	struct events_instance st; /* up, gone, not responding */
	struct events_link_conf link_conf;
	uint64_t caps_again_ms; /* ... at this time */
	uint64_t caps_again_step_ms; /* ... that long after the last one, 0: not read yet */
	uint64_t stall_us; /* in force for lcores */
	uint64_t main_stalled_ms;
	/* After a hang the instance event reported, heartbeats still date from it: until this
	 * time no lcore or main lcore goes into a stall (the instance event covered it). */
	uint64_t quiet_until_ms;
	unsigned int main_lcore;
	int poll_err; /* the connection error that ended this poll, 0: none yet */
	/* A restart seen inside a poll, told after it (ev_tell_restart()): the old process. */
	bool restarted;
	struct dtp_pids restarted_from;
	bool alive_capped; /* the liveness request was once kept to its share of the budget */
	double alive_avg; /* ns: its rounds' average, as libdpdktel keeps its class's (poll.c) */
	/* Links, lcores, and a request that only shows the application answers when neither
	 * is due: each at PollInterval, or less often when the budget says so. */
	struct dtp_budget budget[POLL_KINDS];
	uint64_t next_ms[POLL_KINDS]; /* when each is due */
	uint64_t round_ns[POLL_KINDS]; /* what this poll's requests of each cost */
	struct events_port *ports;
	size_t nports;
	struct events_lcore *lcores;
	size_t nlcores;
	/* The ports whose links the last /ethdev/list gave (those the Ports option selects):
	 * the next poll asks their links together with the list. */
	uint16_t *link_ids;
	size_t nlink_ids;
	/* Where links are read port by port: each port's schedule (schedule.c), and what a
	 * link poll costs beyond its ports' requests (the list; on a VM, the wake-up). */
	struct link_sched *sched;
	size_t nsched;
	double link_fixed; /* ns: what a link poll costs beyond its ports' own requests */
	uint32_t fixed_samples[LINK_SAMPLES]; /* its last samples (ns): the lower quartile */
	unsigned int nfixed, fixed_next;
	unsigned int link_group; /* stretched ports asked together in a poll (schedule.c) */
	unsigned int spread_group; /* the group their phases were spread for */
	/* Link polls a carrier event brought (follow.c), outside the plan: what they cost,
	 * fraction of one core, decaying (schedule.c), as of unplanned_ms; check_poll: this
	 * poll is one. */
	double unplanned;
	uint64_t unplanned_ms;
	bool check_poll;
	bool warned_slow; /* the ports too slow to poll within a second were logged */
	bool links_from_fwd; /* the last link poll read /fwd/ports */
	uint64_t fwd_link_poll_ms; /* /fwd/info link_poll_ms: how often the forwarder checks */
	/* Links from the kernel netdev (follow.c): the application's namespace, opened once per
	 * process (nd_tried; nd_why says why not), and the listed ports, followed or not. */
	struct ev_netdev *nd;
	bool nd_tried;
	char nd_why[EV_NETDEV_WHY_MAX];
	struct ev_follow *follow;
	size_t nfollow;
	char (*eal_argv)[DTEL_STRING_MAX]; /* /eal/params, once per process */
	int eal_argc; /* -1: not to be had */
};

/* What /fwd/info says of the forwarder's own thresholds and its main lcore. */
struct fwd_info {
	uint64_t stall_ms; /* 0: not said */
	uint64_t link_poll_ms;
	bool has_age;
	uint64_t link_check_age_ms; /* since the main lcore last checked the links */
	unsigned int main_lcore;
};

/* What one poll read, and what its checks said. */
struct reading {
	bool due[POLL_KINDS]; /* which kinds of poll this one runs */
	bool have_main; /* /fwd/info of the forwarder, for its main lcore */
	struct fwd_info main;
	bool main_passed;
	bool have_links;
	bool links_from_fwd; /* /fwd/ports, else /ethdev/link_status of each port */
	struct events_link_reading *links;
	bool *link_passed;
	size_t nlinks, caplinks;
	bool have_lcores;
	bool lcores_from_fwd; /* /fwd/lcores, else the cycles of /eal/lcore/usage */
	struct events_lcore_reading *lcores;
	uint64_t *total, *busy; /* /eal/lcore/usage cycles of each lcore */
	bool *lcore_passed;
	size_t nlcores;
};

/* dpdktel_events.c: the configuration; instance.c: every instance. */
extern struct dtp_conf ev_conf;
extern struct dtp_instances ev_instances;

/* notify.c */
void ev_notify_link(
	struct ev_instance *ei, const struct events_port *p, const struct events_link_tr *tr);
void ev_notify_lcore(
	struct ev_instance *ei, const struct events_lcore *l, const struct events_lcore_tr *tr);
void ev_notify_instance(struct ev_instance *ei, int severity, const char *old, const char *new,
	int64_t duration_ms, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
void ev_notify_instance_tr(struct ev_instance *ei, const struct events_instance_tr *tr);
void ev_notify_main_lcore(struct ev_instance *ei, uint64_t age_ms, uint64_t t);

/* publish.c */
void ev_finish_poll(struct ev_instance *ei, bool instance_changed);
void ev_dispatch_snapshot(struct ev_instance *ei);

/* read.c */
int ev_query(struct ev_instance *ei, const char *cmd, struct dtel_reply *r);
int ev_query_id(struct ev_instance *ei, const char *name, unsigned int id, struct dtel_reply *r);
int ev_query_fn(void *ctx, const char *cmd, struct dtel_reply *r);
int ev_read_fwd_info(struct ev_instance *ei, struct fwd_info *out);
void ev_reading_free(struct reading *rd);
int ev_read_fwd_ports(struct ev_instance *ei, struct reading *rd);
int ev_read_one_link(struct ev_instance *ei, unsigned int port, struct events_link_reading *out);
int ev_read_fwd_lcores(struct ev_instance *ei, struct dtel_fwd_lcores *out);
void ev_charge(struct ev_instance *ei, enum poll_kind kind, uint64_t since);
void ev_read_sources(struct ev_instance *ei, uint64_t t, struct reading *rd);

/* liveness.c */
void ev_read_alive(struct ev_instance *ei);
enum events_poll ev_outcome(const struct ev_instance *ei, uint64_t sent_before);
void ev_check_restart(struct ev_instance *ei);
void ev_tell_restart(struct ev_instance *ei);
void ev_judge(struct ev_instance *ei, enum events_poll poll, uint64_t t);

/* confirm.c */
struct events_port *ev_port_slot(struct ev_instance *ei, unsigned int id);
struct events_lcore *ev_lcore_slot(struct ev_instance *ei, unsigned int id);
void ev_confirm(struct ev_instance *ei, struct reading *rd, uint64_t t);

/* apply.c */
void ev_apply_main(struct ev_instance *ei, const struct reading *rd, uint64_t t);
bool ev_listed(const struct reading *rd, unsigned int port);
void ev_apply_links(struct ev_instance *ei, const struct reading *rd, uint64_t t);
void ev_apply_lcores(struct ev_instance *ei, const struct reading *rd, uint64_t t);
void ev_forget_state(struct ev_instance *ei);

/* schedule.c */
struct link_sched *ev_sched_slot(struct ev_instance *ei, unsigned int port);
bool ev_sched_due(const struct ev_instance *ei, unsigned int port, uint64_t t);
bool ev_sched_stretched(const struct ev_instance *ei, unsigned int port, uint64_t *ret_next_ms);
bool ev_sched_along(const struct ev_instance *ei, unsigned int port, uint64_t t);
void ev_sched_polled(struct ev_instance *ei, unsigned int port, uint64_t t, uint64_t sample_ns);
void ev_sched_overhead(struct ev_instance *ei, uint64_t turn_ns, uint64_t ports_ns);
uint64_t ev_sched_least(const struct ev_instance *ei, unsigned int port);
void ev_sched_unplanned(struct ev_instance *ei, uint64_t ns, uint64_t t);
uint64_t ev_sched_plan(struct ev_instance *ei);
double ev_sched_bound(const struct ev_instance *ei, const struct link_sched *s);

/* follow.c */
struct ev_follow;
void ev_follow_forget(struct ev_instance *ei);
int ev_follow_fd(const struct ev_instance *ei);
int ev_follow_drain(struct ev_instance *ei);
bool ev_follow_only_signal(const struct ev_instance *ei, unsigned int port);
void ev_follow_readings(struct ev_instance *ei, struct reading *rd);
void ev_follow_map(struct ev_instance *ei, const struct reading *rd);
void ev_follow_check(struct ev_instance *ei, uint64_t t);

/* poll.c */
void *ev_poll_thread(void *arg);

/* instance.c */
void ev_instance_free(struct ev_instance *ei);
int ev_instance_start(
	const char *name, const char *path, const struct events_opts *o, bool discovered);
void ev_instance_stop(struct ev_instance *ei);
void ev_discover(void);

#endif
