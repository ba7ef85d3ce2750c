/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The device classes of dpdktel_stats besides ethdev: cryptodev, dmadev, eventdev and rawdev
 * (docs/dpdktel_stats.md "Device classes", docs/metrics.md). Each class has an on/off option
 * and include/exclude patterns on its counter names; its values are DERIVE, dispatched with
 * the instance's plugin_instance, type "<class>_ops" or "<class>_xstat" and type instance
 * "<class><id>.<counter>" ("eventdev0.port1.<counter>", "dmadev0.vchan0.<counter>"); the
 * eventdev xstats that are levels (EventdevGauge) are GAUGE, type "eventdev_gauge".
 *
 * Requests: a class is asked only where the application's command list (dtp_caps) has it.
 * Device lists, dmadev vchans and eventdev ports and queues are read once per application
 * generation, and again at each read while the application is young (dtp_target_young():
 * it may create devices or configure them after the socket appeared), then only the counters.
 *
 * Thread: the instance's read callback; the state belongs to the instance.
 */
#ifndef DTEL_STATS_DEVICES_H
#define DTEL_STATS_DEVICES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/dtp.h"

enum stats_dev_class {
	STATS_DEV_CRYPTO,
	STATS_DEV_DMA,
	STATS_DEV_EVENT,
	STATS_DEV_RAW,
	STATS_DEV_CLASSES
};

/** The options of the device classes, a member of the plugin's options struct. */
struct stats_devices_opts {
	bool on[STATS_DEV_CLASSES];
	struct dtp_globs include[STATS_DEV_CLASSES], exclude[STATS_DEV_CLASSES];
	/* eventdev xstats that are levels, not counters; none given: devices.c's list */
	struct dtp_globs event_gauge;
};

#define STATS_DEVICES_DEFAULTS                   \
	{                                        \
		.on = { true, true, true, true } \
	}

/* The option rows of one class, for member @f (struct stats_devices_opts) of struct @st. */
#define STATS_DEV_OPTS_(st, f, name, c, example)                                 \
	DTP_OPT(st, name "Stats", DTP_OPT_BOOL, f.on[c], 0, 0, "true or false"), \
		DTP_OPT(st, name "Include", DTP_OPT_GLOBS, f.include[c], 0, 0,   \
			"one or more shell patterns such as \"" example "\""),   \
		DTP_OPT(st, name "Exclude", DTP_OPT_GLOBS, f.exclude[c], 0, 0,   \
			"one or more shell patterns such as \"" example "\"")

/** The rows of the plugin's option table for member @f of its options struct @st. */
#define STATS_DEVICES_OPTS(st, f)                                                 \
	STATS_DEV_OPTS_(st, f, "Cryptodev", STATS_DEV_CRYPTO, "*_err_count"),     \
		STATS_DEV_OPTS_(st, f, "Dmadev", STATS_DEV_DMA, "errors"),        \
		STATS_DEV_OPTS_(st, f, "Eventdev", STATS_DEV_EVENT, "port_*_rx"), \
		STATS_DEV_OPTS_(st, f, "Rawdev", STATS_DEV_RAW, "*_count"),       \
		DTP_OPT(st, "EventdevGauge", DTP_OPT_GLOBS, f.event_gauge, 0, 0,  \
			"one or more shell patterns such as \"port_*_inflight\"")

/** One device of a class. */
struct stats_dev {
	unsigned int id;
	bool no_stats; /* its counter request answered null: not asked again this generation */
	unsigned int nsub; /* dmadev: vchans; eventdev: ports */
	unsigned int nqueues; /* eventdev: queues */
	bool cut_logged;
};

/** What an instance knows of one class. */
struct stats_dev_list {
	uint64_t generation; /* the devices below were listed for this generation; 0: never */
	bool young; /* ... while the application was young: list again */
	struct stats_dev *v;
	size_t n;
};

/** The device state of an instance; zeroed to start, stats_devices_fini() to end. */
struct stats_devices {
	struct stats_dev_list c[STATS_DEV_CLASSES];
};

/** How stats_devices_read() reaches the application: the plugin's own request function. */
struct stats_devices_io {
	dtp_query_fn query;
	void *ctx;
	struct dtp_target *t;
	int (*halted)(void *ctx); /* non-zero: this read met a connection failure, ask nothing */
};

/**
 * Read and dispatch the counters of every class that is on in @o and that the application
 * has (@caps), with plugin_instance @id (the instance's). Never fails: an unusable reply is
 * counted and logged once through io->t (dtp_bad_reply).
 */
void stats_devices_read(struct stats_devices *s, const struct stats_devices_opts *o,
	const struct dtp_caps *caps, const struct stats_devices_io *io, const struct dtp_id *id);

/** Free what @s holds. Accepts a zeroed one. */
void stats_devices_fini(struct stats_devices *s);

/** Whether collectd knows the types of the device classes (see dtp_types_defined()). */
bool stats_devices_types_defined(const char *plugin);

#endif
