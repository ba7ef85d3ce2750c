/* SPDX-License-Identifier: BSD-3-Clause */
/* Lcore states and link words (pure). */
#include "state.h"

const char *
fwd_lcore_state_name(unsigned int state)
{
	static const char *const names[FWD_LCORE_NB_STATES] = {
		[FWD_LCORE_STARTING] = "STARTING",
		[FWD_LCORE_RUNNING] = "RUNNING",
		[FWD_LCORE_IDLE] = "IDLE",
		[FWD_LCORE_STALLED] = "STALLED",
		[FWD_LCORE_EXITED] = "EXITED",
	};

	return state < FWD_LCORE_NB_STATES ? names[state] : "UNKNOWN";
}

enum fwd_lcore_state
fwd_lcore_classify(enum fwd_lcore_state prev, bool exited, bool advanced, bool moved, bool overdue)
{
	if (exited)
		return FWD_LCORE_EXITED;
	if (advanced)
		return moved ? FWD_LCORE_RUNNING : FWD_LCORE_IDLE;
	if (overdue)
		return FWD_LCORE_STALLED;
	/* Between two loops (e.g. asleep) but not late yet: nothing new to say. */
	return prev;
}

const char *
fwd_link_status_name(uint64_t w)
{
	return fwd_link_up(w) ? "UP" : "DOWN";
}

const char *
fwd_link_duplex_name(uint64_t w)
{
	if (!fwd_link_up(w))
		return "unknown";
	return (w & FWD_LINK_FULL_DUPLEX) ? "full-duplex" : "half-duplex";
}
