/* SPDX-License-Identifier: BSD-3-Clause */
/* Value lists and notifications with the identifiers of docs/metrics.md. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dtp.h"

static void
set_id(struct dtp_id *id, const char *plugin, cdtime_t time)
{
	id->plugin = plugin;
	id->time = time;
}

void
dtp_id_instance(struct dtp_id *id, const char *plugin, const char *inst, cdtime_t time)
{
	set_id(id, plugin, time);
	snprintf(id->plugin_instance, sizeof(id->plugin_instance), "%s", inst);
}

void
dtp_id_port(
	struct dtp_id *id, const char *plugin, const char *inst, unsigned int port, cdtime_t time)
{
	set_id(id, plugin, time);
	snprintf(id->plugin_instance, sizeof(id->plugin_instance), "%s.port%u", inst, port);
}

void
dtp_id_lcore(
	struct dtp_id *id, const char *plugin, const char *inst, unsigned int lcore, cdtime_t time)
{
	set_id(id, plugin, time);
	snprintf(id->plugin_instance, sizeof(id->plugin_instance), "%s.lcore%u", inst, lcore);
}

/* Value lists held back between dtp_batch_begin() and dtp_batch_end(), per thread. The
 * buffer is kept for the next read (a read thread reads the same instances again) and freed
 * by a thread-specific key's destructor when the thread ends (collectd joins its read
 * threads at shutdown; a thread-local pointer alone would leak the buffer then). */
struct held {
	value_list_t vl;
	value_t v[4];
};

static __thread struct held *held;
static __thread size_t nheld, capheld;
static __thread bool holding;
static pthread_key_t held_key;
static pthread_once_t held_once = PTHREAD_ONCE_INIT;
static bool held_key_ok;

static void
held_key_init(void)
{
	held_key_ok = pthread_key_create(&held_key, free) == 0;
}

void
dtp_batch_begin(void)
{
	holding = true;
	nheld = 0;
}

void
dtp_batch_end(void)
{
	holding = false;
	for (size_t i = 0; i < nheld; i++) {
		held[i].vl.values = held[i].v;
		plugin_dispatch_values(&held[i].vl);
	}
	nheld = 0;
}

void
dtp_batch_cancel(void)
{
	holding = false;
	nheld = 0;
}

/* A free slot in the held-back list, or NULL (not holding, or no memory: dispatch now). */
static struct held *
hold_slot(void)
{
	if (!holding)
		return NULL;
	if (nheld == capheld) {
		size_t cap = capheld ? capheld * 2 : 256;
		struct held *h;

		/* Without the key nothing would free the buffer: dispatch at once instead. */
		if (pthread_once(&held_once, held_key_init) != 0 || !held_key_ok)
			return NULL;
		h = realloc(held, cap * sizeof(*h));
		if (h == NULL)
			return NULL;
		if (pthread_setspecific(held_key, h) != 0) {
			/* Only a thread's first call can fail (no memory), with nothing held yet.
			 */
			free(h);
			held = NULL;
			capheld = 0;
			return NULL;
		}
		held = h;
		capheld = cap;
	}
	return &held[nheld++];
}

/* dtp_dispatch_interval(): of this thread's value lists, 0: collectd's. */
static __thread cdtime_t dispatch_interval;

void
dtp_dispatch_interval(cdtime_t interval)
{
	dispatch_interval = interval;
}

/* @src into @dst of @size bytes, cut to fit: sstrncpy() would also zero the rest of @dst. */
static void
copy_name(char *dst, const char *src, size_t size)
{
	size_t n = strnlen(src, size - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* Every field of @vl set, none zeroed first: 700 bytes a value list, 700 of them a read at 32
 * ports (host "" and interval 0 are collectd's: its hostname, the plugin's interval). */
static void
fill_vl(value_list_t *vl, const struct dtp_id *id, const char *type, const char *type_instance,
	value_t *v, size_t n)
{
	vl->values = v;
	vl->values_len = n;
	vl->time = id->time;
	vl->interval = dispatch_interval;
	vl->host[0] = '\0';
	copy_name(vl->plugin, id->plugin, sizeof(vl->plugin));
	copy_name(vl->plugin_instance, id->plugin_instance, sizeof(vl->plugin_instance));
	copy_name(vl->type, type, sizeof(vl->type));
	copy_name(vl->type_instance, type_instance != NULL ? type_instance : "",
		sizeof(vl->type_instance));
	vl->meta = NULL;
}

static int
dispatch(const struct dtp_id *id, const char *type, const char *type_instance, value_t *v, size_t n)
{
	value_list_t vl;
	struct held *h;

	h = n <= sizeof(h->v) / sizeof(h->v[0]) ? hold_slot() : NULL;
	if (h == NULL) {
		fill_vl(&vl, id, type, type_instance, v, n);
		return plugin_dispatch_values(&vl);
	}
	memcpy(h->v, v, n * sizeof(*v));
	fill_vl(&h->vl, id, type, type_instance, h->v, n);
	return 0;
}

int
dtp_derive(const struct dtp_id *id, const char *type, const char *type_instance, const uint64_t *v,
	size_t n)
{
	value_t values[4];

	if (n > 4)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (v[i] > INT64_MAX)
			return -ERANGE;
		values[i].derive = (derive_t)v[i];
	}
	return dispatch(id, type, type_instance, values, n);
}

int
dtp_gauge(const struct dtp_id *id, const char *type, const char *type_instance, const double *v,
	size_t n)
{
	value_t values[4];

	if (n > 4)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		values[i].gauge = v[i];
	return dispatch(id, type, type_instance, values, n);
}

static void
add_meta(notification_t *n, const struct dtp_meta *m)
{
	if (m->port_id >= 0)
		plugin_notification_meta_add_signed_int(n, "port_id", m->port_id);
	if (m->lcore_id >= 0)
		plugin_notification_meta_add_signed_int(n, "lcore_id", m->lcore_id);
	if (m->name != NULL)
		plugin_notification_meta_add_string(n, "name", m->name);
	if (m->old_state != NULL)
		plugin_notification_meta_add_string(n, "old_state", m->old_state);
	if (m->new_state != NULL)
		plugin_notification_meta_add_string(n, "new_state", m->new_state);
	if (m->duration_ms >= 0)
		plugin_notification_meta_add_signed_int(n, "duration_ms", m->duration_ms);
}

int
dtp_notify(const struct dtp_id *id, int severity, const char *type, const char *type_instance,
	const struct dtp_meta *meta, const char *fmt, ...)
{
	notification_t n = {.severity = severity, .time = id->time};
	va_list ap;
	int r;

	va_start(ap, fmt);
	vsnprintf(n.message, sizeof(n.message), fmt, ap);
	va_end(ap);
	sstrncpy(n.host, hostname_g, sizeof(n.host));
	sstrncpy(n.plugin, id->plugin, sizeof(n.plugin));
	sstrncpy(n.plugin_instance, id->plugin_instance, sizeof(n.plugin_instance));
	sstrncpy(n.type, type, sizeof(n.type));
	if (type_instance != NULL)
		sstrncpy(n.type_instance, type_instance, sizeof(n.type_instance));
	if (meta != NULL)
		add_meta(&n, meta);
	r = plugin_dispatch_notification(&n);
	plugin_notification_meta_free(n.meta);
	return r;
}

/* Info values ---------------------------------------------------------------------------- */

static bool
info_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		c == '_' || c == '.' || c == ':' || c == '-';
}

int
dtp_info_instance(char *buf, size_t size, const char *const *parts, const size_t *max, size_t n)
{
	size_t total = 0, len = 0;

	for (size_t i = 0; i < n; i++)
		total += max[i];
	if (n == 0 || total > size)
		return -ENAMETOOLONG;
	for (size_t i = 0; i < n; i++) {
		const char *p = parts[i] != NULL ? parts[i] : "";

		if (i > 0)
			buf[len++] = ',';
		for (size_t k = 0; p[k] != '\0' && k + 1 < max[i]; k++) {
			char c = p[k];

			if (!info_char(c))
				c = '_';
			buf[len++] = c;
		}
	}
	buf[len] = '\0';
	return 0;
}

/* "0000:3b:00.0": a PCI address in DPDK's domain:bus:device.function form. */
static bool
pci_address(const char *s)
{
	static const char form[] = "hhhh:hh:hh.h";

	for (size_t i = 0; i < sizeof(form) - 1; i++) {
		bool hex = (s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f');

		if (form[i] == 'h' ? !hex : s[i] != form[i])
			return false;
	}
	return true;
}

void
dtp_port_driver(const char *name, const char *sysfs, char *buf, size_t size)
{
	char link[PATH_MAX], target[PATH_MAX];
	size_t n;
	ssize_t len;
	const char *base;

	if (size == 0)
		return;
	buf[0] = '\0';
	if (pci_address(name)) {
		snprintf(link, sizeof(link), "%s/bus/pci/devices/%.12s/driver", sysfs, name);
		len = readlink(link, target, sizeof(target) - 1);
		if (len <= 0)
			return;
		target[len] = '\0';
		base = strrchr(target, '/');
		snprintf(buf, size, "%s", base != NULL ? base + 1 : target);
		return;
	}
	if (strncmp(name, "net_", 4) != 0 && strncmp(name, "eth_", 4) != 0)
		return;
	n = strspn(name, "abcdefghijklmnopqrstuvwxyz_");
	while (n > 4 && name[n - 1] == '_')
		n--;
	snprintf(buf, size, "%.*s", (int)n, name);
}
