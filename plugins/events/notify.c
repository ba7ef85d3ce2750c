/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdktel_events' notification texts: what a link, an lcore, the main lcore or the
 * application became, in the words of docs/dpdktel_events.md, with its meta data.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "instance.h"

/* "2.5 s", "340 ms", "3 min 2 s": how long a state lasted. */
static const char *
duration(uint64_t ms, char *buf, size_t size)
{
	if (ms < 1000)
		snprintf(buf, size, "%" PRIu64 " ms", ms);
	else if (ms < 60000)
		snprintf(buf, size, "%.1f s", (double)ms / 1000.0);
	else
		snprintf(buf, size, "%" PRIu64 " min %" PRIu64 " s", ms / 60000, (ms / 1000) % 60);
	return buf;
}

static const char *
link_word(enum events_link s)
{
	return s == EVENTS_LINK_UP ? "up" : s == EVENTS_LINK_DOWN ? "down" : "unknown";
}

/* A notification about port p; @what is the message after "Link <what> on <inst> port N". */
static void
notify_port(struct ev_instance *ei, const struct events_port *p, int severity, const char *old,
	const char *new, int64_t duration_ms, const char *what, const char *detail)
{
	struct dtp_meta meta = DTP_META_NONE;
	struct dtp_id id;

	dtp_id_port(&id, PLUGIN, ei->t.name, p->id, cdtime());
	meta.port_id = p->id;
	meta.name = p->name[0] ? p->name : NULL;
	meta.old_state = old;
	meta.new_state = new;
	meta.duration_ms = duration_ms;
	dtp_notify(&id, severity, "link_status", NULL, &meta, "Link %s on %s port %u%s", what,
		ei->t.name, p->id, detail);
}

static void
notify_down(
	struct ev_instance *ei, const struct events_port *p, enum events_link old, uint64_t up_ms)
{
	char detail[DTEL_STRING_MAX + 8];

	snprintf(detail, sizeof(detail), " (%s)", p->name[0] ? p->name : "?");
	notify_port(ei, p, NOTIF_FAILURE, link_word(old), "down",
		old == EVENTS_LINK_UP ? (int64_t)up_ms : -1, "down", detail);
}

static void
notify_up(
	struct ev_instance *ei, const struct events_port *p, enum events_link old, uint64_t down_ms)
{
	char detail[128], d[32];

	if (old == EVENTS_LINK_DOWN)
		snprintf(detail, sizeof(detail), ": %" PRIu64 " Mbps %s after %s down", p->speed,
			dtel_duplex_name(p->duplex), duration(down_ms, d, sizeof(d)));
	else
		snprintf(detail, sizeof(detail), ": %" PRIu64 " Mbps %s", p->speed,
			dtel_duplex_name(p->duplex));
	notify_port(ei, p, NOTIF_OKAY, link_word(old), "up",
		old == EVENTS_LINK_DOWN ? (int64_t)down_ms : -1, "up", detail);
}

/* One transition of the link machine, as the table of docs/dpdktel_events.md says. */
void
ev_notify_link(struct ev_instance *ei, const struct events_port *p, const struct events_link_tr *tr)
{
	const char *now = link_word(p->state);
	char detail[160];

	switch (tr->kind) {
	case EVENTS_TR_DOWN:
		notify_down(ei, p, tr->old, tr->lasted_ms);
		break;
	case EVENTS_TR_UP:
		notify_up(ei, p, tr->old, tr->lasted_ms);
		break;
	case EVENTS_TR_SPEED:
		snprintf(detail, sizeof(detail), ": %" PRIu64 " Mbps %s → %" PRIu64 " Mbps %s",
			tr->old_speed, dtel_duplex_name(tr->old_duplex), p->speed,
			dtel_duplex_name(p->duplex));
		notify_port(ei, p, NOTIF_WARNING, "up", "up", -1, "speed changed", detail);
		break;
	case EVENTS_TR_FLAPPED:
		snprintf(detail, sizeof(detail), ": %" PRIu64 " changes between two polls, now %s",
			tr->count, now);
		notify_port(ei, p, NOTIF_WARNING, now, now, -1, "flapped", detail);
		break;
	case EVENTS_TR_FLAPPING:
		snprintf(detail, sizeof(detail), ": %" PRIu64 " changes within %g s", tr->count,
			ei->o->flap_window);
		notify_port(ei, p, NOTIF_WARNING, "stable", "flapping", -1, "flapping", detail);
		break;
	case EVENTS_TR_SETTLED:
		if (p->state == EVENTS_LINK_UP)
			snprintf(detail, sizeof(detail), ": up, %" PRIu64 " Mbps %s", p->speed,
				dtel_duplex_name(p->duplex));
		else
			snprintf(detail, sizeof(detail), ": %s", now);
		notify_port(ei, p, p->state == EVENTS_LINK_UP ? NOTIF_OKAY : NOTIF_FAILURE,
			"flapping", now, -1, "stopped flapping", detail);
		break;
	case EVENTS_TR_DISCARDED:
		ei->t.discarded++; /* contradicted by the second query: not reported */
		break;
	}
}

void
ev_notify_lcore(
	struct ev_instance *ei, const struct events_lcore *l, const struct events_lcore_tr *tr)
{
	struct dtp_meta meta = DTP_META_NONE;
	char msg[NOTIF_MAX_MSG_LEN], d[32];
	int severity = NOTIF_FAILURE;
	struct dtp_id id;

	if (tr->kind == EVENTS_TR_LCORE_DISCARDED) {
		ei->t.discarded++;
		return;
	}
	if (l->state == DTEL_LCORE_STALLED && l->have_cycles)
		snprintf(msg, sizeof(msg),
			"lcore %u of %s stalled: total_cycles did not advance for %" PRIu64 " ms",
			l->id, ei->t.name, l->age_us / 1000);
	else if (l->state == DTEL_LCORE_STALLED)
		snprintf(msg, sizeof(msg),
			"lcore %u of %s stalled: no heartbeat for %" PRIu64 " ms", l->id,
			ei->t.name, l->age_us / 1000);
	else if (l->state == DTEL_LCORE_EXITED)
		snprintf(msg, sizeof(msg), "lcore %u of %s exited", l->id, ei->t.name);
	else if (events_lcore_bad(tr->old))
		severity = NOTIF_OKAY,
		snprintf(msg, sizeof(msg), "lcore %u of %s recovered after %s", l->id, ei->t.name,
			duration(tr->lasted_ms, d, sizeof(d)));
	else
		return; /* RUNNING <-> IDLE <-> STARTING is no news */
	dtp_id_lcore(&id, PLUGIN, ei->t.name, l->id, cdtime());
	meta.lcore_id = l->id;
	meta.old_state = dtel_lcore_state_name(tr->old);
	meta.new_state = dtel_lcore_state_name(l->state);
	if (severity == NOTIF_OKAY)
		meta.duration_ms = (int64_t)tr->lasted_ms;
	dtp_notify(&id, severity, "lcore_state", NULL, &meta, "%s", msg);
}

void
ev_notify_instance(struct ev_instance *ei, int severity, const char *old, const char *new,
	int64_t duration_ms, const char *fmt, ...)
{
	struct dtp_meta meta = DTP_META_NONE;
	char msg[NOTIF_MAX_MSG_LEN];
	struct dtp_id id;
	va_list ap;

	if (!ei->o->instance_events)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	dtp_id_instance(&id, PLUGIN, ei->t.name, cdtime());
	meta.name = ei->t.name;
	meta.old_state = old;
	meta.new_state = new;
	meta.duration_ms = duration_ms;
	dtp_notify(&id, severity, "up", NULL, &meta, "%s", msg);
}

void
ev_notify_instance_tr(struct ev_instance *ei, const struct events_instance_tr *tr)
{
	const char *n = ei->t.name;
	int64_t ms = (int64_t)tr->lasted_ms;
	char d[32];

	duration(tr->lasted_ms, d, sizeof(d));
	switch (tr->kind) {
	case EVENTS_TR_GONE:
		ev_notify_instance(
			ei, NOTIF_FAILURE, tr->old, "gone", -1, "DPDK application %s is gone", n);
		break;
	case EVENTS_TR_BACK:
		ev_notify_instance(ei, NOTIF_OKAY, tr->old, "up", ms,
			"DPDK application %s is back after %s", n, d);
		break;
	case EVENTS_TR_NOT_RESPONDING:
		/* "alive" only where /proc could tell: the pid collectd sees, with its start
		 * time (dtp_target_exited() said it is still that process). */
		if (ei->t.pid > 0 && ei->t.start_ticks != 0)
			ev_notify_instance(ei, NOTIF_FAILURE, tr->old, "not_responding", -1,
				"DPDK application %s is not responding (pid %ld alive, no reply "
				"for %s)",
				n, ei->t.pid, d);
		else /* collectd cannot see its pid (another pid namespace) */
			ev_notify_instance(ei, NOTIF_FAILURE, tr->old, "not_responding", -1,
				"DPDK application %s is not responding (no reply for %s)", n, d);
		break;
	case EVENTS_TR_ANSWERS_AGAIN:
		ev_notify_instance(ei, NOTIF_OKAY, tr->old, "up", ms,
			"DPDK application %s answers again after %s", n, d);
		break;
	}
}

void
ev_notify_main_lcore(struct ev_instance *ei, uint64_t age_ms, uint64_t t)
{
	struct dtp_meta meta = DTP_META_NONE;
	struct dtp_id id;
	char d[32];

	dtp_id_lcore(&id, PLUGIN, ei->t.name, ei->main_lcore, cdtime());
	meta.lcore_id = ei->main_lcore;
	meta.old_state = ei->main_stalled ? "RUNNING" : "STALLED";
	meta.new_state = ei->main_stalled ? "STALLED" : "RUNNING";
	if (ei->main_stalled) {
		dtp_notify(&id, NOTIF_FAILURE, "lcore_state", "main", &meta,
			"main lcore %u of %s stalled: links not checked for %" PRIu64
			" ms (read from the ports meanwhile)",
			ei->main_lcore, ei->t.name, age_ms);
		return;
	}
	meta.duration_ms = (int64_t)(t - ei->main_stalled_ms);
	dtp_notify(&id, NOTIF_OKAY, "lcore_state", "main", &meta,
		"main lcore %u of %s checks the links again after %s", ei->main_lcore, ei->t.name,
		duration(t - ei->main_stalled_ms, d, sizeof(d)));
}
