/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdktel-fwd: the reference DPDK forwarder of dpdktel. This file only wires the parts
 * together, in the order of DPDK's examples/l2fwd:
 *
 *   options (options.c) -> telemetry commands registered -> EAL -> ports chosen and paired (port.c)
 * -> lcores given ports (lcore.c) -> ports started -> health, rte_metrics, telemetry replies ->
 * lcores launched -> main lcore loop (health.c) until SIGINT/SIGTERM -> final counters (counters.c)
 * -> ports closed -> rte_eal_cleanup().
 *
 * The telemetry commands are documented in docs/fwd-telemetry.md.
 */
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_launch.h>

#include "fwd.h"

RTE_LOG_REGISTER_DEFAULT(fwd_logtype, NOTICE);

/* Static: telemetry threads may read it until the process is gone (see fwd.h). */
static struct fwd_ctx ctx;

static void
on_signal(int sig)
{
	RTE_SET_USED(sig);
	__atomic_store_n(&ctx.quit, 1, __ATOMIC_RELAXED);
}

static void
usage_hook(const char *prog)
{
	printf("\n");
	fwd_options_usage(stdout, prog);
}

/* The application arguments: those after the first "--". */
static int
app_args(int argc, char **argv, char ***ret)
{
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			*ret = argv + i + 1;
			return argc - i - 1;
		}
	*ret = argv + argc;
	return 0;
}

/*
 * Every telemetry reply allocates rte_tel_data containers of ~66 KiB each (/fwd/lcores has
 * 12, /ethdev/stats 5) on the client's thread. glibc then trims that thread's arena after
 * each reply (madvise MADV_DONTNEED) and faults the pages back in on the next: a TLB
 * flush that reaches the forwarding lcores too, ~2% of their rate at 100 queries/s here.
 * Keeping up to 64 MiB of freed heap in the process (about 1 MiB per telemetry client)
 * removes that cost. Allocations stay below the mmap threshold (128 KiB). Under
 * AddressSanitizer malloc is ASan's, which has no such setting (mallopt() fails).
 */
#if defined(__SANITIZE_ADDRESS__)
#define FWD_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FWD_ASAN 1
#endif
#endif

static void
keep_freed_heap(void)
{
#ifndef FWD_ASAN
	if (mallopt(M_TRIM_THRESHOLD, 64 << 20) != 1)
		fprintf(stderr, "%s: mallopt(M_TRIM_THRESHOLD) failed\n", FWD_APP_NAME);
#endif
}

static void
install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	/* No SA_RESTART: the main lcore's sleep ends early on a signal. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

static void
log_start(const struct fwd_ctx *c)
{
	for (unsigned int i = 0; i < c->nb_workers; i++) {
		struct fwd_lcore_snap s;
		char ports[RTE_TEL_MAX_STRING_LEN];

		fwd_snap_lcore(c, i, 0, &s);
		if (fwd_format_idlist(s.ports, s.nb_ports, ports, sizeof(ports)) < 0)
			snprintf(ports, sizeof(ports), "%u ports", s.nb_ports);
		FWD_LOG(NOTICE, "lcore %u receives on port(s) %s", s.lcore_id, ports);
	}
	for (unsigned int i = 0; i < c->nb_ports; i++)
		FWD_LOG(NOTICE, "port %u (%s) -> port %u, link %s", c->ports[i].port_id,
			c->ports[i].name, c->ports[i].peer, fwd_link_status_name(c->ports[i].link));
	FWD_LOG(NOTICE,
		"forwarding with mac-mode %s on %u lcore(s); main lcore %u checks "
		"health every %u ms",
		fwd_mac_mode_name(c->cfg.mac_mode), c->nb_workers, c->main_lcore,
		c->cfg.heartbeat_ms);
}

int
main(int argc, char **argv)
{
	char err[512];
	char **args;
	int nargs, ret;

	nargs = app_args(argc, argv, &args);
	ret = fwd_options_parse(nargs, args, &ctx.cfg, err, sizeof(err));
	if (ret < 0) {
		fprintf(stderr, "%s: %s\n", FWD_APP_NAME, err);
		return 2;
	}
	if (ctx.cfg.help) {
		fwd_options_usage(stdout, argv[0]);
		return 0;
	}
	clock_gettime(CLOCK_MONOTONIC, &ctx.start_time);
	keep_freed_heap();
	install_signals();
	rte_set_application_usage_hook(usage_hook);
	/* Before EAL starts the telemetry threads; they reply null until published. */
	if (fwd_telemetry_register() != 0)
		return 1;

	ret = rte_eal_init(argc, argv);
	if (ret < 0)
		rte_exit(EXIT_FAILURE, "%s: EAL initialisation failed: %s\n", FWD_APP_NAME,
			rte_strerror(rte_errno));
	ctx.tsc_hz = rte_get_tsc_hz();

	fwd_ports_select(&ctx);
	fwd_lcores_assign(&ctx);
	fwd_ports_start(&ctx);
	fwd_health_init(&ctx);
	fwd_metrics_init(&ctx);
	/* Permissions first: a client that sees /fwd/info answer may rely on them. */
	fwd_access_apply(&ctx);
	fwd_telemetry_publish(&ctx);
	log_start(&ctx);

	fwd_lcores_launch(&ctx);
	fwd_main_loop(&ctx);

	FWD_LOG(NOTICE, "stopping: waiting for the forwarding lcores");
	fwd_lcores_wait(&ctx);
	fwd_stats_print(&ctx, stdout, "final counters");

	fwd_telemetry_quiesce(&ctx);
	fwd_metrics_deinit(&ctx);
	fwd_ports_close(&ctx);
	ret = rte_eal_cleanup();
	if (ret != 0)
		FWD_LOG(WARNING, "rte_eal_cleanup: %s", rte_strerror(-ret));
	return 0;
}
