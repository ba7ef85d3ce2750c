/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The stand-in collectd daemon of the plugin suite (see fake_collectd.h).
 *
 * Each contract of collectd 5.12 that the plugins rely on is imitated here with a comment
 * naming the function of collectd-5.12.0 it comes from (src/daemon/plugin.c unless said
 * otherwise): who frees a read callback's user data on each path, when an unregistered
 * callback is freed, that read callbacks of different names run on several threads at once
 * but one callback never on two, and what plugin_dispatch_values() and
 * plugin_dispatch_notification() copy.
 */
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "fake_collectd.h"
#include "utils/common/common.h"
#include "utils_complain.h"

#define MAX_CALLBACKS 512
#define MAX_TYPES 1024

char *hostname_g = "fakehost";
cdtime_t interval_g = TIME_T_TO_CDTIME_T_STATIC(10);

struct read_cb {
	char name[DATA_MAX_NAME_LEN];
	plugin_read_cb cb;
	user_data_t ud;
	bool removed; /* unregistered: never called again */
	bool freed; /* its user data was freed */
	bool running; /* called right now (on some thread) */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	char name[DATA_MAX_NAME_LEN];
	int (*cb)(oconfig_item_t *);
} configs[16];
static size_t nconfigs;
static plugin_init_cb inits[16];
static size_t ninits;
static plugin_shutdown_cb shutdowns[16];
static size_t nshutdowns;
static struct read_cb reads[MAX_CALLBACKS];
static size_t nreads;
static int refuse_reads; /* registrations still to refuse, as for lack of memory */

static struct fc_value *values;
static size_t nvalues, capvalues;
static struct fc_notification *notes;
static size_t nnotes, capnotes;
static char **logs;
static size_t nlogs, caplogs;

static data_set_t types[MAX_TYPES];
static size_t ntypes;

/* types.db ------------------------------------------------------------------------------ */

static void
load_types_line(char *line)
{
	data_set_t *ds;
	char *save = NULL, *tok;

	if (line[0] == '#' || ntypes == MAX_TYPES)
		return;
	tok = strtok_r(line, " \t\n", &save);
	if (tok == NULL)
		return;
	ds = &types[ntypes];
	memset(ds, 0, sizeof(*ds));
	sstrncpy(ds->type, tok, sizeof(ds->type));
	ds->ds = calloc(8, sizeof(*ds->ds));
	while ((tok = strtok_r(NULL, " \t\n,", &save)) != NULL && ds->ds_num < 8) {
		data_source_t *s = &ds->ds[ds->ds_num++];
		char *c1 = strchr(tok, ':');

		if (c1 == NULL)
			continue;
		*c1 = '\0';
		sstrncpy(s->name, tok, sizeof(s->name));
		s->type = strncmp(c1 + 1, "GAUGE", 5) == 0   ? DS_TYPE_GAUGE
			: strncmp(c1 + 1, "DERIVE", 6) == 0  ? DS_TYPE_DERIVE
			: strncmp(c1 + 1, "COUNTER", 7) == 0 ? DS_TYPE_COUNTER
							     : DS_TYPE_ABSOLUTE;
	}
	ntypes++;
}

static void
load_types(const char *path)
{
	char line[1024];
	FILE *f = fopen(path, "r");

	if (f == NULL) {
		fprintf(stderr, "fake_collectd: cannot read %s\n", path);
		abort();
	}
	while (fgets(line, sizeof(line), f) != NULL)
		load_types_line(line);
	fclose(f);
}

static void
ensure_types(void)
{
	const char *ours = getenv("DTEL_TYPES_DB");

	if (ntypes > 0)
		return;
	load_types("/usr/share/collectd/types.db");
	load_types(ours ? ours : "plugins/dpdktel.types.db");
}

const data_set_t *
plugin_get_ds(const char *name)
{
	ensure_types();
	for (size_t i = 0; i < ntypes; i++)
		if (strcmp(types[i].type, name) == 0)
			return &types[i];
	return NULL;
}

/* Registration ---------------------------------------------------------------------------- */

int
plugin_register_complex_config(const char *type, int (*callback)(oconfig_item_t *))
{
	sstrncpy(configs[nconfigs].name, type, sizeof(configs[0].name));
	configs[nconfigs++].cb = callback;
	return 0;
}

int
plugin_register_init(const char *name, plugin_init_cb callback)
{
	(void)name;
	inits[ninits++] = callback;
	return 0;
}

int
plugin_register_shutdown(const char *name, plugin_shutdown_cb callback)
{
	(void)name;
	shutdowns[nshutdowns++] = callback;
	return 0;
}

/* free_userdata(): free_func(data), when both are set. */
static void
free_userdata(const user_data_t *ud)
{
	if (ud != NULL && ud->data != NULL && ud->free_func != NULL)
		ud->free_func(ud->data);
}

/*
 * plugin_register_complex_read() and plugin_insert_read(): a name that is registered already
 * is refused with EINVAL (a warning "The read function ... is already registered"), and on
 * every failure, that one included, collectd itself calls free_userdata(user_data) before
 * returning: the caller must not free the data again.
 */
int
plugin_register_complex_read(const char *group, const char *name, plugin_read_cb callback,
	cdtime_t interval, user_data_t const *user_data)
{
	int r = 0;

	(void)group;
	(void)interval;
	pthread_mutex_lock(&lock);
	if (refuse_reads > 0) {
		refuse_reads--;
		r = ENOMEM; /* the calloc() that fails: free_userdata(user_data), ENOMEM */
	}
	for (size_t i = 0; r == 0 && i < nreads; i++)
		if (!reads[i].removed && strcmp(reads[i].name, name) == 0)
			r = EINVAL;
	if (r == 0 && nreads < MAX_CALLBACKS) {
		memset(&reads[nreads], 0, sizeof(reads[0]));
		sstrncpy(reads[nreads].name, name, sizeof(reads[0].name));
		reads[nreads].cb = callback;
		reads[nreads].ud = user_data ? *user_data : (user_data_t){0};
		nreads++;
	} else if (r == 0) {
		r = ENOMEM;
	}
	pthread_mutex_unlock(&lock);
	if (r != 0) {
		plugin_log(LOG_WARNING,
			"fake_collectd: The read function \"%s\" is already registered or "
			"there is no room",
			name);
		free_userdata(user_data);
	}
	return r;
}

/*
 * plugin_unregister_read() only marks the callback RF_REMOVE; plugin_read_thread() frees it
 * (destroy_callback(): free_userdata) when it next takes it from the heap, on a read thread,
 * after a call that is running has returned. Here: at the next fc_read*() pass, or at
 * shutdown. The name is free again at once.
 */
int
plugin_unregister_read(const char *name)
{
	int r = -ENOENT;

	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < nreads; i++) {
		if (!reads[i].removed && strcmp(reads[i].name, name) == 0) {
			reads[i].removed = true;
			r = 0;
			break;
		}
	}
	pthread_mutex_unlock(&lock);
	return r;
}

/* What a read thread does with callbacks marked for removal: free their user data. */
static void
free_removed(void)
{
	for (;;) {
		user_data_t ud = {0};
		bool found = false;

		pthread_mutex_lock(&lock);
		for (size_t i = 0; i < nreads && !found; i++) {
			if (reads[i].removed && !reads[i].freed && !reads[i].running) {
				reads[i].freed = true;
				ud = reads[i].ud;
				found = true;
			}
		}
		pthread_mutex_unlock(&lock);
		if (!found)
			return;
		free_userdata(&ud);
	}
}

void
fc_refuse_reads(int n)
{
	pthread_mutex_lock(&lock);
	refuse_reads = n;
	pthread_mutex_unlock(&lock);
}

size_t
fc_reads_pending_free(void)
{
	size_t n = 0;

	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < nreads; i++)
		n += reads[i].removed && !reads[i].freed;
	pthread_mutex_unlock(&lock);
	return n;
}

cdtime_t
plugin_get_interval(void)
{
	return interval_g;
}

int
plugin_thread_create(pthread_t *thread, void *(*start_routine)(void *), void *arg, char const *name)
{
	(void)name;
	return pthread_create(thread, NULL, start_routine, arg);
}

cdtime_t
cdtime(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return TIMESPEC_TO_CDTIME_T(&ts);
}

char *
sstrncpy(char *dest, const char *src, size_t n)
{
	strncpy(dest, src, n);
	dest[n - 1] = '\0';
	return dest;
}

/* Recording ------------------------------------------------------------------------------- */

static void *
grow(void *v, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return v;
	*cap = *cap ? *cap * 2 : 256;
	v = realloc(v, *cap * size);
	if (v == NULL)
		abort();
	return v;
}

/*
 * collectd's cache keeps the time of the last value of each identifier and refuses a value
 * that is not newer: src/daemon/utils_cache.c uc_update(), "if (ce->last_time >= vl->time)",
 * NOTICE "uc_update: Value too old" and the value is dropped. And the order values reach it
 * is not always the order they were dispatched in: plugin_dispatch_values() only enqueues
 * (plugin_write_enqueue()), and several write threads (WriteThreads, default 5) each take
 * one off the queue (plugin_write_dequeue()) and run plugin_dispatch_values_internal(),
 * which calls uc_update(): of two values of one identifier enqueued close together, the
 * later can reach the cache first, and the earlier is then "too old" although its time was
 * older. Here each identifier's last time and enqueue instant are kept: a value not newer
 * than the last is counted as collectd would refuse it, and one enqueued less than
 * FC_WRITE_WINDOW_MS after the last of its identifier as one that may reach the cache
 * first (and get the other refused). Kept across fc_clear_records(), as the cache is.
 */
#define FC_WRITE_WINDOW_MS 50

struct cached {
	char id[6 * DATA_MAX_NAME_LEN];
	cdtime_t time;
	uint64_t enqueued_ns;
};

static struct cached *cache;
static size_t ncache, capcache;
static size_t too_old, too_close;
static char first_bad[8 * DATA_MAX_NAME_LEN];

static uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Under lock. */
static void
cache_update(const struct fc_value *r)
{
	char id[6 * DATA_MAX_NAME_LEN];
	uint64_t now = mono_ns();
	struct cached *c = NULL;

	snprintf(id, sizeof(id), "%s/%s-%s/%s-%s", hostname_g, r->plugin, r->plugin_instance,
		r->type, r->type_instance);
	for (size_t i = 0; i < ncache && c == NULL; i++)
		if (strcmp(cache[i].id, id) == 0)
			c = &cache[i];
	if (c == NULL) {
		cache = grow(cache, &capcache, ncache, sizeof(*cache));
		c = &cache[ncache++];
		snprintf(c->id, sizeof(c->id), "%s", id);
		c->time = r->time;
		c->enqueued_ns = now;
		return;
	}
	if (r->time <= c->time || now - c->enqueued_ns < FC_WRITE_WINDOW_MS * 1000000ull) {
		if (too_old + too_close == 0)
			snprintf(first_bad, sizeof(first_bad),
				"%s: value time %.3f, last %.3f, %.3f ms after it", id,
				CDTIME_T_TO_DOUBLE(r->time), CDTIME_T_TO_DOUBLE(c->time),
				(double)(now - c->enqueued_ns) / 1e6);
		if (r->time <= c->time)
			too_old++;
		else
			too_close++;
	}
	if (r->time > c->time)
		c->time = r->time;
	c->enqueued_ns = now;
}

/*
 * plugin_dispatch_values() -> plugin_write_enqueue() -> plugin_value_list_clone(): the
 * value list, its values and its meta data are copied before it returns (host defaults to
 * hostname_g, time 0 to now), so the caller may reuse its buffers at once. Recorded here
 * as a copy for the same reason.
 */
int
plugin_dispatch_values(value_list_t const *vl)
{
	const data_set_t *ds = plugin_get_ds(vl->type);
	struct fc_value *r;

	if (ds == NULL || ds->ds_num != vl->values_len || vl->values_len > FC_MAX_VALUES) {
		plugin_log(LOG_ERR,
			"fake_collectd: dispatch of %s/%s-%s: type unknown or %zu values",
			vl->plugin, vl->type, vl->type_instance, vl->values_len);
		return -1;
	}
	pthread_mutex_lock(&lock);
	values = grow(values, &capvalues, nvalues, sizeof(*values));
	r = &values[nvalues++];
	memset(r, 0, sizeof(*r));
	sstrncpy(r->plugin, vl->plugin, sizeof(r->plugin));
	sstrncpy(r->plugin_instance, vl->plugin_instance, sizeof(r->plugin_instance));
	sstrncpy(r->type, vl->type, sizeof(r->type));
	sstrncpy(r->type_instance, vl->type_instance, sizeof(r->type_instance));
	r->time = vl->time != 0 ? vl->time : cdtime();
	/* collectd 5.12 plugin_dispatch_values: an interval of 0 is the plugin's. */
	r->interval = vl->interval != 0 ? vl->interval : interval_g;
	r->n = vl->values_len;
	for (size_t i = 0; i < r->n; i++) {
		r->v[i] = vl->values[i];
		r->ds_type[i] = ds->ds[i].type;
	}
	cache_update(r);
	pthread_mutex_unlock(&lock);
	return 0;
}

size_t
fc_out_of_order(char *first, size_t size)
{
	size_t n;

	pthread_mutex_lock(&lock);
	n = too_old + too_close;
	if (first != NULL && size > 0)
		snprintf(first, size, "%s", n > 0 ? first_bad : "");
	pthread_mutex_unlock(&lock);
	return n;
}

static void append_meta(struct fc_notification *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void
append_meta(struct fc_notification *r, const char *fmt, ...)
{
	size_t n = strlen(r->meta);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->meta + n, sizeof(r->meta) - n, fmt, ap);
	va_end(ap);
}

/*
 * plugin_dispatch_notification() calls each notification callback synchronously with the
 * caller's notification_t and frees nothing of it (the caller frees its meta data with
 * plugin_notification_meta_free()); a callback copies what it keeps. So the caller may
 * reuse or free everything once it returns: recorded as a copy.
 */
static void (*note_hook)(const notification_t *n);

void
fc_set_note_hook(void (*hook)(const notification_t *n))
{
	__atomic_store_n(&note_hook, hook, __ATOMIC_RELEASE);
}

int
plugin_dispatch_notification(const notification_t *n)
{
	void (*hook)(const notification_t *n);

	struct fc_notification *r;

	pthread_mutex_lock(&lock);
	notes = grow(notes, &capnotes, nnotes, sizeof(*notes));
	r = &notes[nnotes++];
	memset(r, 0, sizeof(*r));
	r->severity = n->severity;
	r->time = n->time;
	sstrncpy(r->message, n->message, sizeof(r->message));
	sstrncpy(r->host, n->host, sizeof(r->host));
	sstrncpy(r->plugin, n->plugin, sizeof(r->plugin));
	sstrncpy(r->plugin_instance, n->plugin_instance, sizeof(r->plugin_instance));
	sstrncpy(r->type, n->type, sizeof(r->type));
	sstrncpy(r->type_instance, n->type_instance, sizeof(r->type_instance));
	for (const notification_meta_t *m = n->meta; m != NULL; m = m->next) {
		if (m->type == NM_TYPE_STRING)
			append_meta(r, "%s=%s;", m->name, m->nm_value.nm_string);
		else if (m->type == NM_TYPE_SIGNED_INT)
			append_meta(r, "%s=%" PRId64 ";", m->name, m->nm_value.nm_signed_int);
		else if (m->type == NM_TYPE_UNSIGNED_INT)
			append_meta(r, "%s=%" PRIu64 ";", m->name, m->nm_value.nm_unsigned_int);
		else if (m->type == NM_TYPE_DOUBLE)
			append_meta(r, "%s=%g;", m->name, m->nm_value.nm_double);
		else
			append_meta(
				r, "%s=%s;", m->name, m->nm_value.nm_boolean ? "true" : "false");
	}
	pthread_mutex_unlock(&lock);
	hook = __atomic_load_n(&note_hook, __ATOMIC_ACQUIRE);
	if (hook != NULL)
		hook(n);
	return 0;
}

static notification_meta_t *
meta_new(notification_t *n, const char *name, enum notification_meta_type_e type)
{
	notification_meta_t *m = calloc(1, sizeof(*m)), **tail = &n->meta;

	if (m == NULL)
		return NULL;
	sstrncpy(m->name, name, sizeof(m->name));
	m->type = type;
	while (*tail != NULL)
		tail = &(*tail)->next;
	*tail = m;
	return m;
}

int
plugin_notification_meta_add_string(notification_t *n, const char *name, const char *value)
{
	notification_meta_t *m = meta_new(n, name, NM_TYPE_STRING);

	if (m == NULL)
		return -1;
	m->nm_value.nm_string = strdup(value);
	return 0;
}

int
plugin_notification_meta_add_signed_int(notification_t *n, const char *name, int64_t value)
{
	notification_meta_t *m = meta_new(n, name, NM_TYPE_SIGNED_INT);

	if (m == NULL)
		return -1;
	m->nm_value.nm_signed_int = value;
	return 0;
}

int
plugin_notification_meta_add_unsigned_int(notification_t *n, const char *name, uint64_t value)
{
	notification_meta_t *m = meta_new(n, name, NM_TYPE_UNSIGNED_INT);

	if (m == NULL)
		return -1;
	m->nm_value.nm_unsigned_int = value;
	return 0;
}

int
plugin_notification_meta_add_double(notification_t *n, const char *name, double value)
{
	notification_meta_t *m = meta_new(n, name, NM_TYPE_DOUBLE);

	if (m == NULL)
		return -1;
	m->nm_value.nm_double = value;
	return 0;
}

int
plugin_notification_meta_add_boolean(notification_t *n, const char *name, bool value)
{
	notification_meta_t *m = meta_new(n, name, NM_TYPE_BOOLEAN);

	if (m == NULL)
		return -1;
	m->nm_value.nm_boolean = value;
	return 0;
}

int
plugin_notification_meta_free(notification_meta_t *n)
{
	while (n != NULL) {
		notification_meta_t *next = n->next;

		if (n->type == NM_TYPE_STRING)
			free((char *)n->nm_value.nm_string);
		free(n);
		n = next;
	}
	return 0;
}

static const char *
level_name(int level)
{
	return level <= LOG_ERR        ? "error"
		: level == LOG_WARNING ? "warning"
		: level == LOG_NOTICE  ? "notice"
		: level == LOG_INFO    ? "info"
				       : "debug";
}

void
plugin_log(int level, const char *format, ...)
{
	char msg[1024], *line;
	va_list ap;

	va_start(ap, format);
	vsnprintf(msg, sizeof(msg), format, ap);
	va_end(ap);
	if (asprintf(&line, "%s %s", level_name(level), msg) < 0)
		abort();
	pthread_mutex_lock(&lock);
	logs = grow(logs, &caplogs, nlogs, sizeof(*logs));
	logs[nlogs++] = line;
	pthread_mutex_unlock(&lock);
	if (getenv("FC_VERBOSE"))
		fprintf(stderr, "[log] %s\n", line);
}

/* The same contract as collectd's utils_complain.c: complain once until released. */
void
c_complain(int level, c_complain_t *c, const char *format, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, format);
	vsnprintf(msg, sizeof(msg), format, ap);
	va_end(ap);
	if (c->interval == 0)
		c->interval = 1;
	plugin_log(level, "%s", msg);
}

void
c_complain_once(int level, c_complain_t *c, const char *format, ...)
{
	char msg[1024];
	va_list ap;

	if (c->complained_once)
		return;
	c->complained_once = true;
	c->interval = 1;
	va_start(ap, format);
	vsnprintf(msg, sizeof(msg), format, ap);
	va_end(ap);
	plugin_log(level, "%s", msg);
}

void
c_do_release(int level, c_complain_t *c, const char *format, ...)
{
	char msg[1024];
	va_list ap;

	if (c->interval == 0)
		return;
	c->interval = 0;
	c->complained_once = false;
	va_start(ap, format);
	vsnprintf(msg, sizeof(msg), format, ap);
	va_end(ap);
	plugin_log(level, "%s", msg);
}

/* Driving the plugin --------------------------------------------------------------------- */

void
fc_load(void (*module_register_fn)(void))
{
	module_register_fn();
}

/*
 * plugin_load_file(): dlopen(file, RTLD_NOW), RTLD_GLOBAL only for a plugin loaded with
 * "Globals true" (never ours), then dlsym(dlh, "module_register") and a call to it; a plugin
 * without that symbol is refused. collectd never closes a plugin it loaded; nor does this.
 */
int
fc_load_file(const char *path)
{
	void (*reg)(void);
	void *dlh = dlopen(path, RTLD_NOW);

	if (dlh == NULL) {
		fprintf(stderr, "fake_collectd: dlopen(\"%s\") failed: %s\n", path, dlerror());
		return -1;
	}
	*(void **)&reg = dlsym(dlh, "module_register");
	if (reg == NULL) {
		fprintf(stderr, "fake_collectd: %s has no module_register: %s\n", path, dlerror());
		return -1;
	}
	reg();
	return 0;
}

int
fc_init(void)
{
	for (size_t i = 0; i < ninits; i++) {
		int r = inits[i]();

		if (r != 0)
			return r;
	}
	return 0;
}

/* Call read callback i, unless it was removed; -2 when it was. */
static int
call_read(size_t i)
{
	plugin_read_cb cb;
	user_data_t *ud;
	int r;

	pthread_mutex_lock(&lock);
	if (reads[i].removed || reads[i].running) {
		pthread_mutex_unlock(&lock);
		return -2;
	}
	/* plugin_read_thread() takes a callback off the heap while it runs it: one callback
	 * never runs on two threads at once. It passes &rf->rf_udata, collectd's own copy. */
	reads[i].running = true;
	cb = reads[i].cb;
	ud = &reads[i].ud;
	pthread_mutex_unlock(&lock);
	r = cb(ud);
	pthread_mutex_lock(&lock);
	reads[i].running = false;
	pthread_mutex_unlock(&lock);
	return r;
}

int
fc_read(const char *name)
{
	int r = -1;

	free_removed();
	for (size_t i = 0; i < nreads; i++) {
		if (!reads[i].removed && strcmp(reads[i].name, name) == 0) {
			r = call_read(i);
			break;
		}
	}
	free_removed();
	return r;
}

int
fc_read_all(void)
{
	int ret = 0;

	free_removed();
	/* Callbacks registered during this pass (discovery) run in it too, as collectd would
	 * run a new callback right away. */
	for (size_t i = 0; i < nreads; i++) {
		int r = call_read(i);

		if (r != 0 && r != -2)
			ret = -1;
	}
	free_removed();
	return ret;
}

struct read_job {
	size_t i;
	int ret;
};

static void *
read_job(void *arg)
{
	struct read_job *j = arg;

	j->ret = call_read(j->i);
	return NULL;
}

/*
 * start_read_threads() starts ReadThreads threads (5 unless configured), and each runs
 * whichever callback is due next (plugin_read_thread()): callbacks of different names,
 * here each instance's, run at the same time. One pass here runs every callback that is
 * registered when it starts, each on its own thread, all at once.
 */
int
fc_read_all_threads(void)
{
	struct read_job jobs[MAX_CALLBACKS];
	pthread_t tids[MAX_CALLBACKS];
	size_t n;
	int ret = 0;

	free_removed();
	pthread_mutex_lock(&lock);
	n = nreads;
	pthread_mutex_unlock(&lock);
	for (size_t i = 0; i < n; i++) {
		jobs[i] = (struct read_job){.i = i};
		if (pthread_create(&tids[i], NULL, read_job, &jobs[i]) != 0)
			abort();
	}
	for (size_t i = 0; i < n; i++) {
		pthread_join(tids[i], NULL);
		if (jobs[i].ret != 0 && jobs[i].ret != -2)
			ret = -1;
	}
	free_removed();
	return ret;
}

size_t
fc_reads(void)
{
	size_t n = 0;

	for (size_t i = 0; i < nreads; i++)
		n += !reads[i].removed;
	return n;
}

/*
 * plugin_shutdown_all(): stop_read_threads(), then destroy_read_heap() frees the user data
 * of every read callback (those marked for removal included), and only then do the shutdown
 * callbacks run.
 */
void
fc_shutdown(void)
{
	for (size_t i = 0; i < nreads; i++)
		reads[i].removed = true;
	free_removed();
	for (size_t i = 0; i < nshutdowns; i++)
		shutdowns[i]();
}

void
fc_clear_records(void)
{
	pthread_mutex_lock(&lock);
	nvalues = 0;
	nnotes = 0;
	for (size_t i = 0; i < nlogs; i++)
		free(logs[i]);
	nlogs = 0;
	pthread_mutex_unlock(&lock);
}

void
fc_reset(void)
{
	fc_clear_records();
	pthread_mutex_lock(&lock);
	ncache = 0;
	too_old = too_close = 0;
	pthread_mutex_unlock(&lock);
	refuse_reads = 0;
	nconfigs = ninits = nshutdowns = nreads = 0;
	fc_set_note_hook(NULL);
}

size_t
fc_nvalues(void)
{
	size_t n;

	/* Read from the fake server's threads too (tests that watch values while a read runs). */
	pthread_mutex_lock(&lock);
	n = nvalues;
	pthread_mutex_unlock(&lock);
	return n;
}

const struct fc_value *
fc_value_at(size_t i)
{
	return i < nvalues ? &values[i] : NULL;
}

static bool
matches(const struct fc_value *v, const char *pi, const char *type, const char *ti)
{
	return strcmp(v->plugin_instance, pi) == 0 && strcmp(v->type, type) == 0 &&
		(ti == NULL || strcmp(v->type_instance, ti) == 0);
}

const struct fc_value *
fc_find(const char *pi, const char *type, const char *ti)
{
	for (size_t i = nvalues; i-- > 0;)
		if (matches(&values[i], pi, type, ti))
			return &values[i];
	return NULL;
}

size_t
fc_count(const char *pi, const char *type, const char *ti)
{
	size_t n = 0;

	for (size_t i = 0; i < nvalues; i++)
		n += matches(&values[i], pi, type, ti);
	return n;
}

size_t
fc_nnotifications(void)
{
	return nnotes;
}

const struct fc_notification *
fc_notification_at(size_t i)
{
	return i < nnotes ? &notes[i] : NULL;
}

size_t
fc_notifications_matching(const char *needle, struct fc_notification *out)
{
	size_t n = 0;

	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < nnotes; i++) {
		if (strstr(notes[i].message, needle) == NULL)
			continue;
		n++;
		if (out != NULL)
			*out = notes[i];
	}
	pthread_mutex_unlock(&lock);
	return n;
}

bool
fc_find_copy(const char *pi, const char *type, const char *ti, struct fc_value *out)
{
	bool found = false;

	pthread_mutex_lock(&lock);
	for (size_t i = nvalues; i-- > 0 && !found;) {
		if (matches(&values[i], pi, type, ti)) {
			found = true;
			if (out != NULL)
				*out = values[i];
		}
	}
	pthread_mutex_unlock(&lock);
	return found;
}

bool
fc_find_plugin_copy(
	const char *plugin, const char *pi, const char *type, const char *ti, struct fc_value *out)
{
	bool found = false;

	pthread_mutex_lock(&lock);
	for (size_t i = nvalues; i-- > 0 && !found;) {
		if (strcmp(values[i].plugin, plugin) == 0 && matches(&values[i], pi, type, ti)) {
			found = true;
			if (out != NULL)
				*out = values[i];
		}
	}
	pthread_mutex_unlock(&lock);
	return found;
}

size_t
fc_nlogs(void)
{
	return nlogs;
}

const char *
fc_log_at(size_t i)
{
	return i < nlogs ? logs[i] : NULL;
}

size_t
fc_logs_matching(const char *needle)
{
	size_t n = 0;

	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < nlogs; i++)
		n += strstr(logs[i], needle) != NULL;
	pthread_mutex_unlock(&lock);
	return n;
}

void
fc_dump_logs(void)
{
	for (size_t i = 0; i < nlogs; i++)
		fprintf(stderr, "  log: %s\n", logs[i]);
}

int
fc_configure(const char *plugin, const char *text)
{
	oconfig_item_t *ci = fc_parse_config(text);
	int r = -1;

	if (ci == NULL)
		return -1;
	for (size_t i = 0; i < nconfigs; i++)
		if (strcasecmp(configs[i].name, plugin) == 0)
			r = configs[i].cb(ci);
	fc_free_config(ci);
	return r;
}
