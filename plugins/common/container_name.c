/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The name of a container, from its cgroup (containers.h dtp_container_name()): what an
 * operator can tell the container by, and what stays the same when it restarts. Container
 * runtimes put a container's processes in a cgroup named after it: Docker and containerd as
 * ".../docker-<id>.scope" or "/docker/<id>" (a 64-digit id), Kubernetes' kubelet under
 * ".../kubepods-<qos>-pod<uid>.slice/..." (systemd driver, '_' in the UID) or
 * "/kubepods/<qos>/pod<uid>/<id>" (cgroupfs driver). The pod's UID outlives the restarts of its
 * containers (each gets a new id), so a pod is named by it; the pod's name and namespace are
 * not in the cgroup (kube-state-metrics' kube_pod_info{uid} has them).
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "containers.h"

void
dtp_sanitize_name(char *s)
{
	for (; *s != '\0'; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-' && *s != '.')
			*s = '_';
}

/* Cgroup names ------------------------------------------------------------------------- */

/* A pod UID at @p (at most @len bytes): 32 hex digits in groups of 8-4-4-4-12 joined by '-'
 * (the cgroupfs driver) or '_' (systemd's, which cannot have '-' in a slice name), then the
 * end or a non-hex character. Written as Kubernetes writes it ("8-4-4-4-12", '-') into @uid
 * (37 bytes). */
static bool
pod_uid(const char *p, size_t len, char *uid)
{
	static const size_t group[] = {8, 4, 4, 4, 12};
	char hex[33];
	size_t k = 0, n = 0;

	for (size_t g = 0; g < 5; g++) {
		if (g > 0 && (k >= len || (p[k] != '-' && p[k] != '_')))
			return false;
		k += g > 0;
		for (size_t d = 0; d < group[g]; d++, k++) {
			if (k >= len || !isxdigit((unsigned char)p[k]))
				return false;
			hex[n++] = (char)tolower((unsigned char)p[k]);
		}
	}
	if (k < len && isxdigit((unsigned char)p[k]))
		return false;
	hex[32] = '\0';
	snprintf(uid, 37, "%.8s-%.4s-%.4s-%.4s-%.12s", hex, hex + 8, hex + 12, hex + 16, hex + 20);
	return true;
}

/* A run of exactly 64 hex digits in @comp (a container id), into @id (13 bytes: its first
 * 12, as `docker ps` shows it). */
static bool
container_id(const char *comp, size_t len, char *id)
{
	for (size_t i = 0; i < len; i++) {
		size_t n = 0;

		while (i + n < len && isxdigit((unsigned char)comp[i + n]))
			n++;
		if (n == 64) {
			for (int k = 0; k < 12; k++)
				id[k] = (char)tolower((unsigned char)comp[i + k]);
			id[12] = '\0';
			return true;
		}
		i += n;
	}
	return false;
}

/* The name of one cgroup path (@path, @len bytes): pod, else container, else last part. */
static bool
name_of_path(const char *path, size_t len, bool any, char *buf, size_t size)
{
	char uid[40], id[13];
	const char *last = NULL;
	size_t last_len = 0;
	bool found_id = false;

	for (size_t i = 0; i < len;) {
		size_t n = 0;
		const char *pod;

		while (i < len && path[i] == '/')
			i++;
		while (i + n < len && path[i + n] != '/')
			n++;
		if (n == 0)
			break;
		/* "kubepods-besteffort-pod<uid>.slice": the "pod" that a UID follows. */
		for (pod = memmem(path + i, n, "pod", 3); pod != NULL;
			pod = memmem(pod + 1, (size_t)(path + i + n - (pod + 1)), "pod", 3)) {
			if (pod_uid(pod + 3, (size_t)(path + i + n - (pod + 3)), uid)) {
				snprintf(buf, size, "pod%s", uid);
				return true;
			}
		}
		found_id |= container_id(path + i, n, id);
		last = path + i;
		last_len = n;
		i += n;
	}
	if (found_id) {
		snprintf(buf, size, "ctr%s", id);
		return true;
	}
	if (!any || last == NULL)
		return false;
	/* systemd's unit suffixes say nothing of the container. */
	if (last_len > 6 &&
		(memcmp(last + last_len - 6, ".scope", 6) == 0 ||
			memcmp(last + last_len - 6, ".slice", 6) == 0))
		last_len -= 6;
	snprintf(buf, size, "%.*s", (int)last_len, last);
	return true;
}

void
dtp_container_name(const char *cgroup, char *buf, size_t size)
{
	const char *fallback = NULL, *line;
	size_t fallback_len = 0;
	char tmp[DTP_CONTAINER_KEY_MAX + 64];

	buf[0] = '\0';
	tmp[0] = '\0';
	/* The line whose path shows a pod or a container, else cgroup v2's ("0::"), else the
	 * first; v1 hierarchies a runtime left at "/" say nothing. */
	for (line = cgroup; line != NULL && *line != '\0';) {
		const char *end = strchr(line, '\n'), *path = strchr(line, ':');
		size_t len;

		if (end == NULL)
			end = line + strlen(line);
		if (path != NULL && path < end)
			path = memchr(path + 1, ':', (size_t)(end - path - 1));
		if (path != NULL && path < end) {
			path++;
			len = (size_t)(end - path);
			if (name_of_path(path, len, false, tmp, sizeof(tmp)))
				break;
			if (fallback == NULL || strncmp(line, "0::", 3) == 0) {
				fallback = path;
				fallback_len = len;
			}
		}
		line = *end != '\0' ? end + 1 : NULL;
	}
	if (tmp[0] == '\0' && fallback != NULL)
		name_of_path(fallback, fallback_len, true, tmp, sizeof(tmp));
	snprintf(buf, size, "%.*s", DTP_CONTAINER_KEY_MAX - 1, tmp);
	dtp_sanitize_name(buf);
}
