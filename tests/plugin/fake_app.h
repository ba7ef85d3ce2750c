/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The fake application of the plugin tests: one DPDK application's telemetry socket
 * (<tmpdir>/edge1/dpdk_telemetry.v2, as DPDK names it under its runtime directory), served
 * by the fake telemetry server (tests/common/fake_server.h) with the replies a test file's
 * handler gives, and the plugin under test loaded into the fake collectd daemon
 * (fake_collectd.h) and configured with an <Instance "edge1"> on that socket. Each test
 * file keeps its own handler (what its application answers) and its own cases.
 */
#ifndef DTEL_TEST_FAKE_APP_H
#define DTEL_TEST_FAKE_APP_H

#include "fake_collectd.h"
#include "fake_server.h"

/* The plugin instance of the application: its <Instance> block's name. */
#define PI "edge1"

struct fake_app {
	struct fake_server *fs; /* NULL until fa_start() */
	char dir[64]; /* the test's temporary directory */
	char path[128]; /* the socket: <dir>/edge1/dpdk_telemetry.v2 */
};

/* The application of the running test (one at a time: cmocka runs tests in turn). */
extern struct fake_app fa;

/* Per test: a fresh temporary directory (@prefix names it), the fake daemon reset and the
 * plugin of @module_register_fn loaded. 0, or -1 (the test is then not run). */
int fa_setup(const char *prefix, void (*module_register_fn)(void));
/* The plugin shut down, the application stopped, the directory removed. */
int fa_teardown(void);
/* Start the application: @handler answers with @arg; the greeting says pid @pid and, where
 * @version is not NULL (a release as in its greeting: "DPDK 23.11.0"), that release (else
 * the DPDK 22.11 greeting). */
void fa_start(fake_handler_t handler, void *arg, long pid, const char *version);
/* Configure @plugin: @global, then <Instance "edge1"> on the socket with @instance_opts,
 * then @after (each may be NULL), and run its init. What fc_init() returns. */
int fa_configure(
	const char *plugin, const char *global, const char *instance_opts, const char *after);
/* The value @pi/@type-@ti the last reads dispatched; fails the test, listing the values of
 * that type and the plugin's log, when there is none. */
const struct fc_value *fa_must_find(const char *pi, const char *type, const char *ti);

#endif
