/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdktel-fwd application options (the arguments after "--").
 *
 * fwd_options_parse() is a pure function from argv to struct fwd_config: no EAL, no I/O, no
 * global state, so it is unit-tested on its own (tests/fwd/test_options.c). Checks that need
 * the running EAL (does port N exist, is lcore N a forwarding lcore, does the group exist)
 * are made at start-up by the code that owns those things.
 */
#ifndef FWD_OPTIONS_H
#define FWD_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/** Most --fault options accepted. */
#define FWD_MAX_FAULTS 16
/** Longest --telemetry-group name (bytes, without the NUL). */
#define FWD_GROUP_NAME_MAX 64
/** Highest lcore id a --fault may name (checked against the real lcores at start-up). */
#define FWD_OPT_MAX_LCORE 1023

/* Defaults, also printed by --help. */
#define FWD_DEFAULT_HEARTBEAT_MS 10
#define FWD_DEFAULT_STALL_MS 100
#define FWD_DEFAULT_LINK_POLL_MS 10

/* Ranges of the numeric options. */
#define FWD_MAX_HEARTBEAT_MS 10000
#define FWD_MAX_STALL_MS 600000
#define FWD_MAX_LINK_POLL_MS 10000
#define FWD_MAX_STATS_PERIOD_S 86400
#define FWD_MAX_IDLE_SLEEP_US 1000000
#define FWD_MAX_FAULT_AFTER_MS 86400000
#define FWD_MAX_FAULT_FOR_MS 3600000

/** What happens to the Ethernet addresses of a forwarded frame. */
enum fwd_mac_mode {
	/** As l2fwd: source = MAC of the port it leaves by, destination 02:00:00:00:00:<port>. */
	FWD_MAC_REWRITE = 0,
	/** Source and destination swapped. */
	FWD_MAC_SWAP,
	/** Left alone. */
	FWD_MAC_NONE,
};

/** Fault injection (--fault), for tests and demos. */
enum fwd_fault_kind {
	/** The lcore stops its loop and its heartbeat for for_ms, then carries on. */
	FWD_FAULT_STALL = 0,
	/** The lcore's loop function returns (the lcore is then EXITED). */
	FWD_FAULT_EXIT,
	/** The main lcore's loop (health and link checks) stops for for_ms, then carries on;
	 * lcore is unused. */
	FWD_FAULT_MAIN_STALL,
};

struct fwd_fault {
	enum fwd_fault_kind kind;
	unsigned int lcore;
	/** Milliseconds after forwarding starts. */
	uint32_t after_ms;
	/** Length of a stall; 0 for exit. */
	uint32_t for_ms;
};

struct fwd_config {
	/** Ports to forward: bit N = port N. Meaningful only when portmask_set. */
	uint64_t portmask;
	/** -p was given; otherwise every port is used. */
	bool portmask_set;
	enum fwd_mac_mode mac_mode;
	unsigned int heartbeat_ms;
	unsigned int stall_ms;
	unsigned int link_poll_ms;
	/** 0 = no periodic table. */
	unsigned int stats_period_s;
	/** 0 = never sleep. */
	unsigned int idle_sleep_us;
	/** Empty = leave the runtime dir and socket as EAL made them. */
	char telemetry_group[FWD_GROUP_NAME_MAX + 1];
	unsigned int nb_faults;
	struct fwd_fault faults[FWD_MAX_FAULTS];
	/** --help or -h was given: print fwd_options_usage() and exit 0. */
	bool help;
};

/** Fill *cfg with the defaults. */
void fwd_options_defaults(struct fwd_config *cfg);

/**
 * Parse the application arguments (those after "--"; argv[0] is the first option, not the
 * program name) into *cfg, starting from the defaults.
 *
 * Accepts "--opt VALUE", "--opt=VALUE", "-p MASK" and "-pMASK". A repeated option replaces
 * the earlier value, except --fault, which accumulates.
 *
 * Returns 0 on success (check cfg->help), or -EINVAL with one line in err (no trailing
 * newline, no program name) that names the option, the value and what was expected. *cfg
 * is undefined on failure. err may be NULL.
 */
int fwd_options_parse(
	int argc, char *const argv[], struct fwd_config *cfg, char *err, size_t errlen);

/** Print the usage of the application options to f. prog names the program. */
void fwd_options_usage(FILE *f, const char *prog);

/** "rewrite", "swap" or "none". */
const char *fwd_mac_mode_name(enum fwd_mac_mode mode);

#endif
