/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DiscoverContainers' scan (plugins/common/containers.c) and container names
 * (container_name.c), against a /proc of the test's own: a directory of the shape proc(5)
 * documents for what the scan reads, <pid>/ns/mnt (a link "mnt:[<inode>]"), <pid>/root (a
 * link to the process's root directory: here a plain link to a directory of the test) and
 * <pid>/cgroup ("<id>:<controllers>:<path>" lines), and self/ns/mnt. The sockets are real
 * (the fake telemetry server listens on them), so the links the scan makes are connected
 * through.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/containers.h"
#include "dtel.h"
#include "fake_server.h"
#include "test_util.h"

#define DOCKER "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define POD_UID "0a1b2c3d-4e5f-6789-abcd-ef0123456789"

static char root[64]; /* the test's directory: proc/, links/, the containers' roots */

static void
must(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "%s: %s\n", what, strerror(errno));
		fail();
	}
}

/* mkdir -p of root/@rel. */
static void
dir(const char *rel)
{
	char p[512];

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	for (char *c = p + strlen(root) + 1; *c != '\0'; c++)
		if (*c == '/') {
			*c = '\0';
			mkdir(p, 0755);
			*c = '/';
		}
	mkdir(p, 0755);
}

static void
put(const char *rel, const char *text)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	f = fopen(p, "w");
	must(f != NULL, p);
	fputs(text, f);
	fclose(f);
}

/* root/@rel -> @target ("" + @target_rel: a path in root) */
static void
ln(const char *target, const char *rel)
{
	char p[512];

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	unlink(p);
	must(symlink(target, p) == 0, p);
}

static void
ln_in(const char *target_rel, const char *rel)
{
	char t[512];

	snprintf(t, sizeof(t), "%s/%s", root, target_rel);
	ln(t, rel);
}

/* Process @pid in mount namespace @ns, its root the test's dir @croot, its cgroup @cgroup. */
static void
process(long pid, unsigned long ns, const char *croot, const char *cgroup)
{
	char rel[128], target[64];

	snprintf(rel, sizeof(rel), "proc/%ld/ns", pid);
	dir(rel);
	snprintf(rel, sizeof(rel), "proc/%ld/ns/mnt", pid);
	snprintf(target, sizeof(target), "mnt:[%lu]", ns);
	ln(target, rel);
	if (croot != NULL) {
		snprintf(rel, sizeof(rel), "proc/%ld/root", pid);
		ln_in(croot, rel);
	}
	if (cgroup != NULL) {
		snprintf(rel, sizeof(rel), "proc/%ld/cgroup", pid);
		put(rel, cgroup);
	}
}

/* A telemetry server at root/@rel. */
static struct fake_server *
app(const char *rel)
{
	char p[512];
	struct fake_config cfg = {.path = p, .pid = 1};
	struct fake_server *fs;

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	fs = fs_start_path(&cfg);
	must(fs != NULL, p);
	return fs;
}

/* Namespaces a pass looks into (a small DTP_CONTAINER_NS_MAX, for the test of many). */
static unsigned int ns_max;

static int
scan(struct dtel_socket_info **list, struct dtp_container_scan *sc,
	const struct dtel_socket_info *host, int nhost)
{
	char proc[128], links[128];
	static const char dirs[2][DTEL_PATH_MAX] = {"/var/run/dpdk", "/srv/dpdk"};
	struct dtp_container_where w = {
		.proc = proc, .link_dir = links, .dirs = dirs, .ndirs = 2, .ns_max = ns_max};

	snprintf(proc, sizeof(proc), "%s/proc", root);
	snprintf(links, sizeof(links), "%s/links", root);
	return dtp_containers_scan(&w, host, nhost, list, sc);
}

static const struct dtel_socket_info *
by_name(const struct dtel_socket_info *list, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (strcmp(list[i].prefix, name) == 0)
			return &list[i];
	fprintf(stderr, "no socket named %s among the %d found:\n", name, n);
	for (int i = 0; i < n; i++)
		fprintf(stderr, "  %s -> %s\n", list[i].prefix, list[i].path);
	return NULL;
}

static int
setup(void **state)
{
	(void)state;
	if (test_tmpdir("cont", root, sizeof(root)) < 0)
		return -1;
	dir("proc/self/ns");
	ln("mnt:[100]", "proc/self/ns/mnt");
	process(1, 100, "host", "0::/init.scope\n"); /* ours: never looked into */
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	return test_rmdir(root);
}

/* Docker with /var/run -> /run (Debian's images), a Kubernetes pod with two sockets under a
 * RuntimeDir, a process gone mid-scan, a non-socket, a cgroup with odd characters. */
static void
finds_and_names_each_container(void **state)
{
	struct fake_server *a, *b, *b1, *c;
	struct dtel_socket_info *list = NULL;
	struct dtp_container_scan sc;
	const struct dtel_socket_info *si;
	char want[512], got[512];
	ssize_t len;
	int n;

	(void)state;
	dir("c1/run/dpdk/rte");
	dir("c1/var");
	ln("/run", "c1/var/run");
	a = app("c1/run/dpdk/rte/dpdk_telemetry.v2");
	process(200, 201, "c1", "12:memory:/\n0::/system.slice/docker-" DOCKER ".scope\n");
	process(205, 201, "c1", "0::/system.slice/docker-" DOCKER ".scope\n");
	dir("c2/srv/dpdk/app");
	b = app("c2/srv/dpdk/app/dpdk_telemetry.v2");
	b1 = app("c2/srv/dpdk/app/dpdk_telemetry.v2:1");
	process(300, 301, "c2",
		"0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod"
		"0a1b2c3d_4e5f_6789_abcd_ef0123456789.slice/cri-containerd-" DOCKER ".scope\n");
	process(400, 401, "gone", "0::/vanished.scope\n"); /* its root is not there */
	dir("c3/var/run/dpdk/odd");
	c = app("c3/var/run/dpdk/odd/dpdk_telemetry.v2");
	process(500, 501, "c3", "0::/lxc/we ird:na,me\x01\n");
	dir("c4/var/run/dpdk/file");
	put("c4/var/run/dpdk/file/dpdk_telemetry.v2", "not a socket");
	process(600, 601, "c4", "0::/plain\n");

	n = scan(&list, &sc, NULL, 0);
	assert_int_equal(n, 4);
	assert_int_equal(sc.processes, 7);
	assert_int_equal(sc.namespaces, 5);
	assert_int_equal(sc.vanished, 1);
	assert_int_equal(sc.not_sockets, 1);
	assert_int_equal(sc.denied, 0);
	assert_int_equal(sc.links_made, 4);
	si = by_name(list, n, "ctr0123456789ab_rte");
	assert_non_null(si);
	snprintf(want, sizeof(want), "%s/links/ctr0123456789ab_rte", root);
	assert_string_equal(si->path, want);
	/* The link goes through the lowest pid, to the dir as the container sees it. */
	len = readlink(si->path, got, sizeof(got) - 1);
	assert_true(len > 0);
	got[len] = '\0';
	snprintf(want, sizeof(want), "%s/proc/200/root/run/dpdk/rte/dpdk_telemetry.v2", root);
	assert_string_equal(got, want);
	assert_int_equal(dtel_probe(si->path), 0);
	assert_non_null(by_name(list, n, "pod" POD_UID "_app"));
	assert_non_null(si = by_name(list, n, "pod" POD_UID "_app_1"));
	assert_int_equal(dtel_probe(si->path), 0);
	assert_non_null(by_name(list, n, "we_ird_na_me__odd"));
	free(list);
	/* Nothing changed: nothing made again. */
	assert_int_equal(scan(&list, &sc, NULL, 0), 4);
	assert_int_equal(sc.links_made, 0);
	free(list);
	fs_stop(a);
	fs_stop(b);
	fs_stop(b1);
	fs_stop(c);
}

/* The container restarts under another pid (its new process, a new socket): the same name and
 * link path, the link moved. Then it stops: its link is removed. */
static void
link_follows_a_restart_then_goes(void **state)
{
	struct dtel_socket_info *list = NULL;
	struct dtp_container_scan sc;
	struct fake_server *a;
	char path[256], proc_dir[256], cmd[300];

	(void)state;
	dir("c1/var/run/dpdk/rte");
	a = app("c1/var/run/dpdk/rte/dpdk_telemetry.v2");
	process(200, 201, "c1", "0::/docker/" DOCKER "\n");
	assert_int_equal(scan(&list, &sc, NULL, 0), 1);
	snprintf(path, sizeof(path), "%s", list[0].path);
	assert_string_equal(list[0].prefix, "ctr0123456789ab_rte");
	free(list);
	fs_stop(a);
	snprintf(proc_dir, sizeof(proc_dir), "%s/proc/200", root);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", proc_dir);
	assert_int_equal(system(cmd), 0);
	dir("c1b/var/run/dpdk/rte");
	a = app("c1b/var/run/dpdk/rte/dpdk_telemetry.v2");
	process(900, 901, "c1b", "0::/docker/" DOCKER "\n");
	assert_int_equal(scan(&list, &sc, NULL, 0), 1);
	assert_string_equal(list[0].path, path);
	assert_int_equal(sc.links_made, 1);
	assert_int_equal(dtel_probe(path), 0);
	free(list);
	/* Stopped: its process gone, the link's target with it. */
	fs_stop(a);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s/proc/900'", root);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(scan(&list, &sc, NULL, 0), 0);
	assert_null(list);
	assert_int_equal(sc.links_removed, 1);
	assert_int_equal(access(path, F_OK), -1);
}

/* A runtime dir the container shares with the host (a hostPath mount: the same socket file,
 * here by a hard link): found there already, not again; one two namespaces share: once. */
static void
host_socket_not_found_twice(void **state)
{
	struct dtel_socket_info host = {0}, *list = NULL;
	struct dtp_container_scan sc;
	struct fake_server *a;
	char from[256], to[256];

	(void)state;
	dir("hostrun/dpdk/rte");
	a = app("hostrun/dpdk/rte/dpdk_telemetry.v2");
	snprintf(host.path, sizeof(host.path), "%s/hostrun/dpdk/rte/dpdk_telemetry.v2", root);
	snprintf(from, sizeof(from), "%s", host.path);
	dir("c5/var/run/dpdk/rte");
	snprintf(to, sizeof(to), "%s/c5/var/run/dpdk/rte/dpdk_telemetry.v2", root);
	assert_int_equal(link(from, to), 0);
	dir("c6/var/run/dpdk/rte");
	snprintf(to, sizeof(to), "%s/c6/var/run/dpdk/rte/dpdk_telemetry.v2", root);
	assert_int_equal(link(from, to), 0);
	process(700, 701, "c5", "0::/docker/" DOCKER "\n");
	process(720, 721, "c6", "0::/docker/" DOCKER "\n");
	assert_int_equal(scan(&list, &sc, &host, 1), 0);
	assert_int_equal(sc.namespaces, 2);
	assert_int_equal(scan(&list, &sc, NULL, 0), 1);
	assert_int_equal(sc.links_made, 1);
	free(list);
	fs_stop(a);
}

/* The link dir must be ours alone: a link another user could plant would send collectd to any
 * socket. */
static void
link_dir_of_others_refused(void **state)
{
	struct dtel_socket_info *list = NULL;
	struct dtp_container_scan sc;
	char links[128];

	(void)state;
	snprintf(links, sizeof(links), "%s/links", root);
	assert_int_equal(mkdir(links, 0777), 0);
	assert_int_equal(chmod(links, 0777), 0);
	assert_int_equal(scan(&list, &sc, NULL, 0), -EPERM);
	assert_int_equal(chmod(links, 0700), 0);
	assert_int_equal(scan(&list, &sc, NULL, 0), 0);
}

/* Thousands of processes, more namespaces than a pass takes (here 200: the real limit is
 * DTP_CONTAINER_NS_MAX): counted, the rest left out, the scan ends. */
static void
thousands_of_processes(void **state)
{
	struct dtel_socket_info *list = NULL;
	struct dtp_container_scan sc;

	(void)state;
	ns_max = 200;
	for (long pid = 1000; pid < 1300; pid++)
		process(pid, (unsigned long)pid, NULL, NULL); /* no root: gone meanwhile */
	for (long pid = 9000; pid < 11000; pid++)
		process(pid, 100, NULL, NULL); /* in our namespace */
	assert_int_equal(scan(&list, &sc, NULL, 0), 0);
	ns_max = 0;
	assert_int_equal(sc.processes, 300 + 2000 + 1);
	assert_int_equal(sc.namespaces, 300);
	assert_int_equal(sc.over, 100);
	assert_int_equal(sc.vanished, 200);
}

static const struct {
	const char *cgroup, *name;
} names[] = {
	{"0::/system.slice/docker-" DOCKER ".scope\n", "ctr0123456789ab"},
	{"12:pids:/docker/" DOCKER "\n11:memory:/docker/" DOCKER "\n", "ctr0123456789ab"},
	{"0::/machine.slice/libpod-" DOCKER ".scope/container\n", "ctr0123456789ab"},
	{"0::/system.slice/crio-" DOCKER ".scope\n", "ctr0123456789ab"},
	{"0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod0a1b2c3d_4e5f_6789_"
	 "abcd_ef0123456789.slice/cri-containerd-" DOCKER ".scope\n",
		"pod" POD_UID},
	{"0::/kubepods/besteffort/pod" POD_UID "/" DOCKER "\n", "pod" POD_UID},
	{"0::/kubepods/pod" POD_UID "/" DOCKER "\n", "pod" POD_UID},
	{"0::/machine.slice/machine-dpdk1.scope\n", "machine-dpdk1"},
	{"0::/lxc.payload.edge\n", "lxc.payload.edge"},
	{"9:name=systemd:/\n0::/\n", ""},
	{"0::/a/we ird:na,me/\"x\"\n", "_x_"},
	{"", ""},
	{"garbage without colons", ""},
	/* 63 hex digits is no container id, 65 neither */
	{"0::/docker-" DOCKER "0.scope\n", "docker-" DOCKER "0"},
};

static void
container_names(void **state)
{
	char buf[DTP_CONTAINER_KEY_MAX];
	int bad = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char want[DTP_CONTAINER_KEY_MAX];

		snprintf(want, sizeof(want), "%s", names[i].name);
		dtp_container_name(names[i].cgroup, buf, sizeof(buf));
		if (strcmp(buf, want) != 0) {
			fprintf(stderr, "row %zu: expected '%s', got '%s'\n", i, want, buf);
			bad++;
		}
	}
	assert_int_equal(bad, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(finds_and_names_each_container, setup, teardown),
		cmocka_unit_test_setup_teardown(link_follows_a_restart_then_goes, setup, teardown),
		cmocka_unit_test_setup_teardown(host_socket_not_found_twice, setup, teardown),
		cmocka_unit_test_setup_teardown(link_dir_of_others_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(thousands_of_processes, setup, teardown),
		cmocka_unit_test(container_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
