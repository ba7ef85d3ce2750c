/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdktel_events' liveness: what a poll says of the application (answered, unanswered,
 * refused, nothing asked), a restart behind the socket, and the verdict the instance state
 * machine (machines.h) gives: gone, back, not responding, answering again.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "instance.h"

/* /info: the smallest reply every DPDK release has (lib/telemetry/telemetry.c json_info). */
void
ev_read_alive(struct ev_instance *ei)
{
	struct dtel_reply r;

	if (ev_query(ei, "/info", &r) == 0)
		dtel_reply_release(&r);
}

enum events_poll
ev_outcome(const struct ev_instance *ei, uint64_t sent_before)
{
	/* Nothing due in this poll (the budget stretched every kind): nothing was learnt. */
	if (ei->poll_err == 0 && ei->t.sent == sent_before)
		return EVENTS_POLL_NOT_SENT;
	/* Not sent (reconnecting backs off after a refusal): nothing was learnt. Unanswered in
	 * time: hung, or gone if its process exited. Refused, or answered only with what the
	 * protocol does not allow (garbage, a bad greeting): gone. A null reply, or one that
	 * does not parse, is an answer. */
	/* Not sent either: our own requests before it were still being answered when its
	 * Timeout ran out (-EBUSY): the application was answering. */
	if (ei->poll_err == -EAGAIN || ei->poll_err == -EBUSY)
		return EVENTS_POLL_NOT_SENT;
	if (ei->poll_err == -ETIMEDOUT)
		return EVENTS_POLL_UNANSWERED;
	if (ei->poll_err != 0 || !ei->t.up)
		return EVENTS_POLL_REFUSED;
	return EVENTS_POLL_ANSWERED;
}

/* "1234", or "?" for a pid that is not known. */
static const char *
pid_word(long pid, char *buf, size_t size)
{
	if (pid > 0)
		snprintf(buf, size, "%ld", pid);
	else
		snprintf(buf, size, "?");
	return buf;
}

/*
 * Another process behind the socket, whether this poll was answered or not (one that hangs
 * right after it made its socket never answers, and SO_PEERCRED names it at connect): what
 * was known of the old one goes at once, and liveness is then the new process's. Told by
 * ev_tell_restart() once the poll is over: a notification plugin may take its time, and the
 * stats plugin's reads wait while a poll is in progress.
 */
void
ev_check_restart(struct ev_instance *ei)
{
	long old_pid;

	if (!dtp_target_restarted(&ei->t, &old_pid))
		return;
	ei->restarted_from = old_pid != 0 ? old_pid : -1;
	ev_forget_state(ei);
}

/* One warning for the restart ev_check_restart() saw, if any. */
void
ev_tell_restart(struct ev_instance *ei)
{
	char a[24], b[24];

	if (ei->restarted_from == 0)
		return;
	pid_word(ei->restarted_from > 0 ? ei->restarted_from : 0, a, sizeof(a));
	pid_word(ei->t.pid, b, sizeof(b));
	ei->restarted_from = 0;
	ev_notify_instance(ei, NOTIF_WARNING, a, b, -1,
		"DPDK application %s restarted (pid %s → %s)", ei->t.name, a, b);
}

/*
 * The verdict of a poll (ev_outcome()) on the application: gone, back, not responding,
 * answering again (machines.h, events_instance_apply), notified at once. /proc is read only
 * for an unanswered poll, the one whose verdict it decides.
 */
void
ev_judge(struct ev_instance *ei, enum events_poll poll, uint64_t t)
{
	struct events_instance_tr itr;

	if (events_instance_apply(&ei->st, poll,
		    poll == EVENTS_POLL_UNANSWERED && dtp_target_exited(&ei->t), ei->t.ever_up, t,
		    dtp_now_ms(), ei->o->not_responding_polls, &itr) <= 0)
		return;
	ev_notify_instance_tr(ei, &itr);
	/* After a hang, heartbeats still date from it: no lcore stall until they are fresh. */
	if (itr.kind == EVENTS_TR_ANSWERS_AGAIN)
		ei->quiet_until_ms = dtp_now_ms() + ei->stall_us / 1000 +
			2 * (uint64_t)(ei->o->poll_interval * 1000);
}
