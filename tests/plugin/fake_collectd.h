/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A small stand-in for the collectd 5.12 daemon, for the plugin suite: the plugin under test
 * links against these functions instead of collectd's. It records what the plugin registers,
 * dispatches and logs, and checks each value list against the types of collectd's types.db
 * and plugins/dpdktel.types.db (the number of values must match the data set).
 */
#ifndef FAKE_COLLECTD_H
#define FAKE_COLLECTD_H

#include <stdbool.h>
#include <stddef.h>

#include "collectd.h"
#include "plugin.h"

#define FC_MAX_VALUES 4

struct fc_value {
	char plugin[DATA_MAX_NAME_LEN], plugin_instance[DATA_MAX_NAME_LEN];
	char type[DATA_MAX_NAME_LEN], type_instance[DATA_MAX_NAME_LEN];
	cdtime_t time;
	cdtime_t interval;
	size_t n;
	value_t v[FC_MAX_VALUES];
	int ds_type[FC_MAX_VALUES];
};

struct fc_notification {
	int severity;
	cdtime_t time;
	char message[NOTIF_MAX_MSG_LEN];
	char host[DATA_MAX_NAME_LEN], plugin[DATA_MAX_NAME_LEN];
	char plugin_instance[DATA_MAX_NAME_LEN], type[DATA_MAX_NAME_LEN];
	char type_instance[DATA_MAX_NAME_LEN];
	char meta[512]; /* "key=value;key=value;" in the order added */
};

/** Forget everything recorded and registered (between tests). */
void fc_reset(void);
/**
 * A notification callback of the test's, called as collectd calls each notification plugin:
 * synchronously, in the dispatching thread, after the notification is recorded (NULL: none;
 * fc_reset() removes it).
 */
void fc_set_note_hook(void (*hook)(const notification_t *n));

/** Call module_register() of the plugin and record what it registers. */
void fc_load(void (*module_register_fn)(void));
/**
 * Load a plugin's shared object as collectd does and call its module_register(): for a test
 * of several plugins in one process, each .so with its own module_register(). The test
 * program must export these functions to it (meson: export_dynamic). 0, or -1 with the
 * reason on stderr.
 */
int fc_load_file(const char *path);
/** Give the plugin a <Plugin> block written in collectd's config syntax; its return value. */
int fc_configure(const char *plugin, const char *text);
/** Run the init callbacks; the first non-zero return, else 0. */
int fc_init(void);
/** Run every registered read callback once, in registration order (new ones included). */
int fc_read_all(void);
/**
 * Run every registered read callback once, each on its own thread, all at the same time (as
 * collectd's read threads run the callbacks of different instances).
 */
int fc_read_all_threads(void);
/** Refuse the next @n read callback registrations, as collectd does without memory. */
void fc_refuse_reads(int n);
/** Read callbacks unregistered whose user data is not freed yet (freed at the next pass). */
size_t fc_reads_pending_free(void);
/** Run the read callback registered under @name; -1 when there is none. */
int fc_read(const char *name);
/** Number of registered read callbacks. */
size_t fc_reads(void);
/** Run the shutdown callbacks and free every read callback's user data. */
void fc_shutdown(void);

/** Values dispatched so far. */
size_t fc_nvalues(void);
const struct fc_value *fc_value_at(size_t i);
/** The last value list with these identifiers (type_instance NULL: any), or NULL. */
const struct fc_value *fc_find(
	const char *plugin_instance, const char *type, const char *type_instance);
/** How many value lists with these identifiers were dispatched. */
size_t fc_count(const char *plugin_instance, const char *type, const char *type_instance);
/**
 * Value lists that collectd's cache could refuse as "Value too old" (fake_collectd.c,
 * cache_update()): not newer than the last of their identifier, or enqueued within
 * FC_WRITE_WINDOW_MS of it, so that collectd's write threads may store them in either order.
 * The first one is described into @first (NULL: not wanted). Since fc_reset().
 */
size_t fc_out_of_order(char *first, size_t size);

/** Forget recorded values and notifications (keeps registrations). */
void fc_clear_records(void);

size_t fc_nnotifications(void);
const struct fc_notification *fc_notification_at(size_t i);

/*
 * Thread-safe lookups, for plugins that dispatch from their own threads: each copies what
 * it finds into *out (when not NULL) under the recorder's lock.
 */
/** How many notifications contain @needle in their message; the last one into *out. */
size_t fc_notifications_matching(const char *needle, struct fc_notification *out);
/** The last value list with these identifiers into *out; false when there is none. */
bool fc_find_copy(const char *plugin_instance, const char *type, const char *type_instance,
	struct fc_value *out);

/** As fc_find_copy(), of one plugin only (plugins that dispatch the same identifiers). */
bool fc_find_plugin_copy(const char *plugin, const char *plugin_instance, const char *type,
	const char *type_instance, struct fc_value *out);

/** Log lines recorded so far, each "<level> <message>". */
size_t fc_nlogs(void);
const char *fc_log_at(size_t i);
/** How many log lines contain @needle. */
size_t fc_logs_matching(const char *needle);
/** Print every log line to stderr (when a test fails). */
void fc_dump_logs(void);

/** Parse collectd config text into an oconfig tree (the subset the plugins use). */
oconfig_item_t *fc_parse_config(const char *text);
void fc_free_config(oconfig_item_t *ci);

#endif
