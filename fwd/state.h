/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Lcore states and link words: the vocabulary shared by the health checks, the counters
 * table and the telemetry replies. Pure: no EAL.
 */
#ifndef FWD_STATE_H
#define FWD_STATE_H

#include <stdbool.h>
#include <stdint.h>

/** Lcore states; the codes are part of the telemetry contract (state_code). */
enum fwd_lcore_state {
	/** Not yet classified. */
	FWD_LCORE_STARTING = 0,
	/** Heartbeat advanced and the lcore moved packets since the last check. */
	FWD_LCORE_RUNNING = 1,
	/** Heartbeat advanced, nothing to do (or sleeping between polls). */
	FWD_LCORE_IDLE = 2,
	/** No heartbeat for at least --stall-ms. */
	FWD_LCORE_STALLED = 3,
	/** Its loop function returned. */
	FWD_LCORE_EXITED = 4,
};
#define FWD_LCORE_NB_STATES 5

/** "STARTING", "RUNNING", "IDLE", "STALLED", "EXITED"; "UNKNOWN" for a bad code. */
const char *fwd_lcore_state_name(unsigned int state);

/**
 * The state of an lcore after one heartbeat check.
 * @param prev      the state it had
 * @param exited    its loop function returned
 * @param advanced  its heartbeat moved since the previous check
 * @param moved     it moved packets since the previous check
 * @param overdue   its last loop is at least --stall-ms old
 */
enum fwd_lcore_state fwd_lcore_classify(
	enum fwd_lcore_state prev, bool exited, bool advanced, bool moved, bool overdue);

/*
 * A link as one 64-bit word, so that a reader on another thread sees status, speed and
 * duplex of the same poll with one relaxed load: bits 0-31 speed in Mbps, bit 32 up,
 * bit 33 full duplex.
 */
#define FWD_LINK_UP (UINT64_C(1) << 32)
#define FWD_LINK_FULL_DUPLEX (UINT64_C(1) << 33)

static inline uint64_t
fwd_link_word(bool up, uint32_t speed_mbps, bool full_duplex)
{
	return (up ? FWD_LINK_UP : 0) | (up && full_duplex ? FWD_LINK_FULL_DUPLEX : 0) |
		(up ? speed_mbps : 0);
}

static inline bool
fwd_link_up(uint64_t w)
{
	return (w & FWD_LINK_UP) != 0;
}

static inline uint32_t
fwd_link_speed(uint64_t w)
{
	return (uint32_t)w;
}

/** "UP" or "DOWN". */
const char *fwd_link_status_name(uint64_t w);
/** "full-duplex", "half-duplex" (up) or "unknown" (down), as /ethdev/link_status. */
const char *fwd_link_duplex_name(uint64_t w);

#endif
