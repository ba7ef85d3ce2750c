/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Telemetry sockets inside containers (DiscoverContainers, docs/deployment.md): a scan of
 * /proc for processes in mount namespaces other than collectd's, each namespace's runtime
 * dirs looked at through /proc/<pid>/root, each socket found named after its container's
 * cgroup and reached through a symbolic link of ours that follows the container across its
 * restarts. Pure of collectd (no log, no dispatch): the caller logs what the counts say, so
 * that tests/unit drives it against a /proc of its own.
 */
#ifndef DTP_CONTAINERS_H
#define DTP_CONTAINERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dtel.h"

/** At most this many other mount namespaces, and this many sockets, per pass. */
#define DTP_CONTAINER_NS_MAX 4096
#define DTP_CONTAINER_SOCKETS_MAX 1024
/** The longest container name part (before "_<prefix>"): "pod" and a 36-character uid. */
#define DTP_CONTAINER_KEY_MAX 48

/** What one scan looked at and met (the caller logs from it). */
struct dtp_container_scan {
	unsigned int processes; /* /proc entries looked at */
	unsigned int namespaces; /* mount namespaces other than ours */
	unsigned int vanished; /* processes gone while they were looked at */
	unsigned int denied; /* could not be looked into (EACCES, EPERM) */
	long denied_pid; /* the first of those */
	unsigned int not_sockets; /* dpdk_telemetry.v2 names that are not sockets */
	unsigned int over; /* namespaces or sockets left out: over the limits above */
	unsigned int links_made, links_removed;
	uint64_t ns_ns; /* wall time of the scan, ns */
};

/** Where to look, and where to keep the links. */
struct dtp_container_where {
	const char *proc; /* "/proc", or a directory of the same shape (tests) */
	const char *link_dir; /* ContainerLinkDir: made when missing, ours alone */
	const char (*dirs)[DTEL_PATH_MAX]; /* runtime dirs as the containers see them */
	int ndirs;
	unsigned int ns_max; /* namespaces looked into per pass; 0: DTP_CONTAINER_NS_MAX */
};

/**
 * One pass: every telemetry socket (dpdk_telemetry.v2, :N) in the runtime dirs of another
 * mount namespace, not counting one that is a socket of @host (the same file: a runtime dir
 * shared with the host by a bind mount, found there already), each once (a socket two
 * namespaces share is taken from the lowest pid). Each gets a link @link_dir/<name> to
 * /proc/<pid>/root/<dir>/<prefix>/<socket> (pid: the lowest of its namespace; the dir
 * resolved as the container sees it: /var/run is often a link to /run), made or moved when
 * needed; a link of @link_dir whose target is gone is removed. <name>: dtp_container_name()
 * of the namespace's cgroup, '_', the prefix, and "_<N>" for dpdk_telemetry.v2:N, made of
 * letters, digits, '_', '-' and '.' only and at most DTEL_PATH_MAX / 2 characters (a hash
 * of it replaces the end of a longer one); two sockets of one name in one pass: the second
 * gets a hash of its cgroup path. *ret_list gets them as dtel_socket_info (prefix: the name,
 * path: the link, index 0), malloc'ed, the caller's to free (NULL when none); *ret_scan what
 * the pass met. Returns their number, or -errno: -ENOMEM, @proc unreadable, or @link_dir
 * unusable (-EPERM: not a directory of ours alone).
 */
int dtp_containers_scan(const struct dtp_container_where *w, const struct dtel_socket_info *host,
	int nhost, struct dtel_socket_info **ret_list, struct dtp_container_scan *ret_scan);

/**
 * The name of a container from its cgroup file's text (/proc/<pid>/cgroup: lines
 * "<id>:<controllers>:<path>"), into @buf: "pod<uid>" for a Kubernetes pod (the pod's UID,
 * as kube-state-metrics' kube_pod_info{uid} has it, "kubepods...pod<uid>" in the path;
 * stable across restarts of its containers), else "ctr<12 hex digits>" for a container id of
 * 64 (docker, containerd, cri-o, podman: "docker-<id>.scope", "/docker/<id>"; stable across
 * restarts of that container), else the last part of the path without ".scope" or ".slice"
 * (systemd-nspawn's "machine-<name>", LXC's "lxc.payload.<name>"), else "" (the root cgroup).
 * Characters other than letters, digits, '_', '-' and '.' become '_'; at most
 * DTP_CONTAINER_KEY_MAX - 1 of them.
 */
void dtp_container_name(const char *cgroup, char *buf, size_t size);

/** Replace every character of @s other than letters, digits, '_', '-' and '.' with '_': the
 * characters of an instance name (conf.c valid_name()). */
void dtp_sanitize_name(char *s);

#endif
