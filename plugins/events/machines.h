/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The state machines of dpdktel_events: plain structs and pure functions, no collectd and no
 * socket in them, time (monotonic milliseconds) an argument. A poll of the plugin reads every
 * source, confirms the candidate changes with a second query (the only I/O besides the read),
 * applies the readings here, then notifies the transitions these functions return and
 * dispatches the values that changed. Each row of the tables in docs/dpdktel_events.md is a
 * transition returned here (tests/unit/test_events_sm.c drives every one).
 *
 * Ownership: every struct here belongs to the caller. struct events_port owns its flap_ms
 * array: events_port_fini() frees it; a plain copy of the struct must not use it.
 */
#ifndef DTEL_EVENTS_H
#define DTEL_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dtel.h"

/* Links ---------------------------------------------------------------------------------- */

enum events_link { EVENTS_LINK_UNKNOWN, EVENTS_LINK_UP, EVENTS_LINK_DOWN };

/** What one poll read of a port. */
struct events_link_reading {
	unsigned int port;
	enum events_link state;
	uint64_t speed;
	enum dtel_duplex duplex;
	bool have_changes;
	uint64_t changes; /* the application's own link change counter */
	bool valid; /* false: listed by the application, but its link could not be read */
};

/** The options the link machine uses. */
struct events_link_conf {
	uint64_t flap_window_ms;
	unsigned int flap_threshold; /* 2..1000 */
	bool report_initial; /* ReportInitialState */
};

/** One port's confirmed state. */
struct events_port {
	unsigned int id; /* first: dtp_slot() */
	bool known; /* a first reading was applied */
	bool dirty; /* its values changed in this poll */
	enum events_link state;
	uint64_t speed;
	enum dtel_duplex duplex;
	uint64_t since_ms; /* when the confirmed state began */
	/* Dispatched link_changes: never goes back while the port is known, whatever the
	 * source (a restart forgets the port, and the count starts again from the
	 * application's). */
	uint64_t changes;
	bool have_app_changes; /* the last reading had the application's counter */
	bool app_base; /* app_changes below is the application's counter at some reading */
	uint64_t app_changes; /* the application's counter at the last reading that had it */
	uint64_t own_changes; /* changes confirmed here since that reading */
	uint64_t *flap_ms; /* the last (at most flap_threshold) change times; owned */
	unsigned int nflaps;
	bool flapping;
	char name[DTEL_STRING_MAX]; /* device name, "" until known */
};

/** What a reading needs checked by a query before it can be applied. */
enum events_link_check {
	EVENTS_CHECK_NONE,
	/* First reading, down: is the port started (not started: not news), and still down? */
	EVENTS_CHECK_FIRST_DOWN,
	/* A change: does a second reading of the same source agree? */
	EVENTS_CHECK_AGAIN,
};

enum events_link_tr_kind {
	EVENTS_TR_DOWN, /* FAILURE: went down (from old; lasted_ms up, 0: first reading) */
	EVENTS_TR_UP, /* OKAY: came up (lasted_ms down) */
	EVENTS_TR_SPEED, /* WARNING: speed or duplex changed while up (old_* before) */
	EVENTS_TR_FLAPPED, /* WARNING: the application counted changes no poll saw (count) */
	EVENTS_TR_FLAPPING, /* WARNING: count changes within the window */
	EVENTS_TR_SETTLED, /* OKAY (up) / FAILURE (down): stable for a window after flapping */
	EVENTS_TR_DISCARDED, /* a change that its check contradicted: counted, not reported */
};

struct events_link_tr {
	enum events_link_tr_kind kind;
	enum events_link old;
	uint64_t lasted_ms;
	uint64_t count;
	uint64_t old_speed;
	enum dtel_duplex old_duplex;
};

/** Most transitions one reading gives: a change, missed flaps, settling. */
#define EVENTS_LINK_TR_MAX 3

/** Which check reading @r of port @p needs (@confirm: LinkConfirm). */
enum events_link_check events_link_check(
	const struct events_port *p, const struct events_link_reading *r, bool confirm);

/**
 * Apply reading @r to port @p at time @t. @passed: the answer of the check
 * events_link_check() asked for (true when none). Writes the transitions to @tr (at most
 * EVENTS_LINK_TR_MAX) and returns how many; sets p->dirty when its values changed. Without
 * memory for the flap history, flap detection is off for that port.
 */
size_t events_link_apply(struct events_port *p, const struct events_link_reading *r, bool passed,
	uint64_t t, const struct events_link_conf *c, struct events_link_tr *tr);

/** A port that was not in this poll's reading: settles a flapping port (0 or 1 transition). */
size_t events_link_tick(struct events_port *p, uint64_t t, const struct events_link_conf *c,
	struct events_link_tr *tr);

/** Free what a port owns. */
void events_port_fini(struct events_port *p);

/* Lcores --------------------------------------------------------------------------------- */

/** What one poll read of an lcore (from /fwd/lcores, or made from /eal/lcore cycles). */
struct events_lcore_reading {
	unsigned int id;
	enum dtel_lcore_state state; /* as the application classifies it */
	uint64_t age_us; /* heartbeat age */
	uint64_t stalls;
};

struct events_lcore {
	unsigned int id; /* first: dtp_slot() */
	bool known;
	bool dirty;
	bool seen; /* in this poll's reading */
	enum dtel_lcore_state state; /* confirmed */
	uint64_t since_ms;
	uint64_t age_us;
	uint64_t stalls;
	/* From /eal/lcore/usage cycles: the last reading's and the one before, when they last
	 * moved; busy percent over the last window of EVENTS_BUSY_WINDOW_MS or more. */
	bool have_cycles;
	uint64_t total, prev_total, busy, advanced_ms;
	uint64_t win_total, win_busy, win_ms;
	bool have_busy_pct;
	double busy_pct;
};

/** The busy percent of an lcore is taken over windows of at least this long. */
#define EVENTS_BUSY_WINDOW_MS 1000

/** The state we report: EXITED as the application says, STALLED by our own threshold. */
enum dtel_lcore_state events_lcore_effective(
	const struct events_lcore_reading *r, uint64_t stall_us);

/** Whether reading @r of @l needs a second query before it is applied: into or out of a bad
 * state (STALLED, EXITED). */
bool events_lcore_check(
	const struct events_lcore *l, const struct events_lcore_reading *r, uint64_t stall_us);

/**
 * From the cycle counters of /eal/lcore/usage (DPDK >= 23.03) read at @t: an lcore whose
 * total_cycles did not move is as old as the last time they did (STALLED once that is
 * StallThreshold); RUNNING when busy_cycles moved, else IDLE; STARTING while total_cycles is
 * still 0 (its loop never ran: testpmd before forwarding starts), which never ages. Also
 * updates l->busy_pct: 100 × Δbusy / Δtotal over each window of EVENTS_BUSY_WINDOW_MS or
 * more (0 when total_cycles stood still all of it: a stalled lcore does no work); counters
 * that went back (a restarted application) start over.
 */
void events_lcore_cycles(struct events_lcore *l, uint64_t total, uint64_t busy, uint64_t t,
	struct events_lcore_reading *ret_reading);

enum events_lcore_tr_kind {
	EVENTS_TR_LCORE, /* the confirmed state changed from old (lasted_ms in it) */
	EVENTS_TR_LCORE_DISCARDED, /* its check contradicted it */
};

struct events_lcore_tr {
	enum events_lcore_tr_kind kind;
	enum dtel_lcore_state old;
	uint64_t lasted_ms;
};

/**
 * Apply reading @r to lcore @l (@passed: the check's answer, true when none). Returns 0 or 1
 * transition in @tr; sets l->dirty when its values should go out. A first reading in a bad
 * state is a transition from STARTING when @report_initial.
 */
size_t events_lcore_apply(struct events_lcore *l, const struct events_lcore_reading *r, bool passed,
	uint64_t t, uint64_t stall_us, bool report_initial, struct events_lcore_tr *tr);

/** Whether a state is one an operator is alarmed about. */
bool events_lcore_bad(enum dtel_lcore_state s);

/* The application ------------------------------------------------------------------------ */

/** How a poll went. */
enum events_poll {
	EVENTS_POLL_NOT_SENT, /* nothing was sent: reconnecting backs off after a refusal */
	EVENTS_POLL_ANSWERED,
	EVENTS_POLL_REFUSED, /* no socket, stale socket, closed, garbage */
	EVENTS_POLL_UNANSWERED, /* sent (or connected), no answer within Timeout */
};

struct events_instance {
	bool up; /* answers (false until its first answer) */
	bool gone; /* announced gone */
	bool not_responding; /* announced not responding */
	unsigned int fails; /* refused polls in a row */
	uint64_t gone_ms; /* when the first of them began */
	unsigned int unanswered; /* unanswered polls in a row */
	uint64_t unanswered_ms; /* when the first of them began */
};

enum events_instance_tr_kind {
	EVENTS_TR_GONE, /* FAILURE */
	EVENTS_TR_BACK, /* OKAY, after gone (lasted_ms) */
	EVENTS_TR_NOT_RESPONDING, /* FAILURE (lasted_ms: unanswered for) */
	EVENTS_TR_ANSWERS_AGAIN, /* OKAY, after not responding (lasted_ms) */
};

struct events_instance_tr {
	enum events_instance_tr_kind kind;
	const char *old; /* "up", "gone", "not_responding" */
	uint64_t lasted_ms;
};

/** The instance's state as a word (notification meta data). */
const char *events_instance_word(const struct events_instance *s);

/**
 * Apply how a poll begun at @began and ended at @t went. @exited: the process behind the
 * greeting has surely exited (an unanswered poll of it is then a refusal); @ever_up: it
 * answered once; @polls: NotRespondingPolls. Refused twice in a row: gone (one alone is no
 * outage). Unanswered @polls times in a row while the process runs: not responding.
 * Returns 0 or 1 transition in @tr.
 */
size_t events_instance_apply(struct events_instance *s, enum events_poll poll, bool exited,
	bool ever_up, uint64_t began, uint64_t t, unsigned int polls,
	struct events_instance_tr *tr);

/**
 * dpdktel-fwd's main lcore checks the links every @link_poll_ms: stalled when its last
 * check is older than three periods and than the lcore stall threshold (so that a busy
 * host's scheduling delay is no alarm).
 */
bool events_main_stale(uint64_t link_check_age_ms, uint64_t link_poll_ms, uint64_t stall_us);

#endif
