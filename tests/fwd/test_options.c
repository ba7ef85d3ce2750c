/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdktel-fwd option parsing (fwd/options.c), a pure function: every option, the
 * defaults, and each bad value with its exact message.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "options.h"

#define MAX_ARGS 40

static char err[512];

/* Parse a NULL-terminated list of arguments. */
static int
parse_v(struct fwd_config *cfg, const char *first, va_list ap)
{
	char *argv[MAX_ARGS];
	int argc = 0;

	for (const char *a = first; a != NULL && argc < MAX_ARGS; a = va_arg(ap, const char *))
		argv[argc++] = (char *)a;
	memset(err, 'X', sizeof(err));
	return fwd_options_parse(argc, argv, cfg, err, sizeof(err));
}

static int
parse(struct fwd_config *cfg, const char *first, ...)
{
	va_list ap;
	int ret;

	va_start(ap, first);
	ret = parse_v(cfg, first, ap);
	va_end(ap);
	return ret;
}

/* The arguments must fail with exactly this message. */
static void
expect_error(const char *message, const char *first, ...)
{
	struct fwd_config cfg;
	va_list ap;
	int ret;

	va_start(ap, first);
	ret = parse_v(&cfg, first, ap);
	va_end(ap);
	if (ret != -EINVAL)
		fail_msg("expected -EINVAL and '%s', got %d", message, ret);
	if (strcmp(err, message) != 0)
		fail_msg("expected message\n  '%s'\ngot\n  '%s'", message, err);
}

static void
defaults(void **state)
{
	struct fwd_config cfg;

	(void)state;
	assert_int_equal(fwd_options_parse(0, NULL, &cfg, err, sizeof(err)), 0);
	assert_false(cfg.portmask_set);
	assert_int_equal(cfg.mac_mode, FWD_MAC_REWRITE);
	assert_int_equal(cfg.heartbeat_ms, 10);
	assert_int_equal(cfg.stall_ms, 100);
	assert_int_equal(cfg.link_poll_ms, 10);
	assert_int_equal(cfg.stats_period_s, 0);
	assert_int_equal(cfg.idle_sleep_us, 0);
	assert_string_equal(cfg.telemetry_group, "");
	assert_int_equal(cfg.nb_faults, 0);
	assert_false(cfg.help);
	assert_string_equal(err, "");
}

static void
every_option(void **state)
{
	struct fwd_config cfg;

	(void)state;
	assert_int_equal(parse(&cfg, "-p", "0x5", "--mac-mode", "swap", "--heartbeat-ms", "20",
				 "--stall-ms", "250", "--link-poll-ms", "5", "--stats-period", "3",
				 "--idle-sleep-us", "500", "--telemetry-group", "collectd",
				 "--fault", "stall:1:1000:200", "--fault", "exit:2:3000", NULL),
		0);
	assert_true(cfg.portmask_set);
	assert_true(cfg.portmask == 0x5);
	assert_int_equal(cfg.mac_mode, FWD_MAC_SWAP);
	assert_int_equal(cfg.heartbeat_ms, 20);
	assert_int_equal(cfg.stall_ms, 250);
	assert_int_equal(cfg.link_poll_ms, 5);
	assert_int_equal(cfg.stats_period_s, 3);
	assert_int_equal(cfg.idle_sleep_us, 500);
	assert_string_equal(cfg.telemetry_group, "collectd");
	assert_int_equal(cfg.nb_faults, 2);
	assert_int_equal(cfg.faults[0].kind, FWD_FAULT_STALL);
	assert_int_equal(cfg.faults[0].lcore, 1);
	assert_int_equal(cfg.faults[0].after_ms, 1000);
	assert_int_equal(cfg.faults[0].for_ms, 200);
	assert_int_equal(cfg.faults[1].kind, FWD_FAULT_EXIT);
	assert_int_equal(cfg.faults[1].lcore, 2);
	assert_int_equal(cfg.faults[1].after_ms, 3000);
	assert_int_equal(cfg.faults[1].for_ms, 0);
	assert_false(cfg.help);
}

static void
equals_and_glued_forms(void **state)
{
	struct fwd_config cfg;

	(void)state;
	assert_int_equal(parse(&cfg, "-pff", "--mac-mode=none", "--heartbeat-ms=1", "--stall-ms=2",
				 "--link-poll-ms=10000", "--stats-period=0", "--idle-sleep-us=0",
				 "--telemetry-group=1001", "--fault=stall:0:0:1", NULL),
		0);
	assert_true(cfg.portmask == 0xff);
	assert_int_equal(cfg.mac_mode, FWD_MAC_NONE);
	assert_int_equal(cfg.heartbeat_ms, 1);
	assert_int_equal(cfg.stall_ms, 2);
	assert_int_equal(cfg.link_poll_ms, 10000);
	assert_string_equal(cfg.telemetry_group, "1001");
	assert_int_equal(cfg.faults[0].after_ms, 0);
	assert_int_equal(parse(&cfg, "--mac-mode", "rewrite", NULL), 0);
	assert_int_equal(cfg.mac_mode, FWD_MAC_REWRITE);
}

static void
portmask_forms(void **state)
{
	struct fwd_config cfg;

	(void)state;
	assert_int_equal(parse(&cfg, "-p", "3", NULL), 0);
	assert_true(cfg.portmask == 3);
	assert_int_equal(parse(&cfg, "-p", "0XaB", NULL), 0);
	assert_true(cfg.portmask == 0xab);
	assert_int_equal(parse(&cfg, "-p", "0xffffffffffffffff", NULL), 0);
	assert_true(cfg.portmask == UINT64_MAX);
	assert_int_equal(parse(&cfg, "-p", "0x1", "-p", "0x2", NULL), 0);
	assert_true(cfg.portmask == 2); /* the last one counts */
}

static void
range_limits(void **state)
{
	struct fwd_config cfg;

	(void)state;
	assert_int_equal(parse(&cfg, "--heartbeat-ms", "10000", "--stall-ms", "600000", NULL), 0);
	assert_int_equal(parse(&cfg, "--stats-period", "86400", NULL), 0);
	assert_int_equal(
		parse(&cfg, "--stall-ms", "600000", "--idle-sleep-us", "1000000", NULL), 0);
	/* exactly a tenth of --stall-ms is allowed */
	assert_int_equal(parse(&cfg, "--idle-sleep-us", "10000", NULL), 0);
	assert_int_equal(parse(&cfg, "--fault", "stall:1023:86400000:3600000", NULL), 0);
}

static void
help(void **state)
{
	struct fwd_config cfg;

	(void)state;
	assert_int_equal(parse(&cfg, "--help", NULL), 0);
	assert_true(cfg.help);
	assert_int_equal(parse(&cfg, "-h", NULL), 0);
	assert_true(cfg.help);
	/* --help wins over cross-checks of the other options */
	assert_int_equal(parse(&cfg, "--stall-ms", "5", "--help", NULL), 0);
	assert_true(cfg.help);
	expect_error("--help takes no value (got 'x')", "--help=x", NULL);
}

static void
many_faults(void **state)
{
	struct fwd_config cfg;
	char *argv[2 * (FWD_MAX_FAULTS + 1)];

	(void)state;
	for (int i = 0; i < FWD_MAX_FAULTS + 1; i++) {
		argv[2 * i] = (char *)"--fault";
		argv[2 * i + 1] = (char *)"stall:1:10:10";
	}
	assert_int_equal(fwd_options_parse(2 * FWD_MAX_FAULTS, argv, &cfg, err, sizeof(err)), 0);
	assert_int_equal(cfg.nb_faults, FWD_MAX_FAULTS);
	assert_int_equal(
		fwd_options_parse(2 * (FWD_MAX_FAULTS + 1), argv, &cfg, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "--fault 'stall:1:10:10': too many faults (at most 16)");
}

static void
bad_portmask(void **state)
{
	(void)state;
	expect_error("-p 'xyz': expected a hexadecimal port mask such as 0x3 (bit N enables port "
		     "N, at most 16 hex digits)",
		"-p", "xyz", NULL);
	expect_error("-p '0x': expected a hexadecimal port mask such as 0x3 (bit N enables port "
		     "N, at most 16 hex digits)",
		"-p", "0x", NULL);
	expect_error("-p '': expected a hexadecimal port mask such as 0x3 (bit N enables port N, "
		     "at most 16 hex digits)",
		"-p", "", NULL);
	expect_error("-p '0x1ffffffffffffffff': expected a hexadecimal port mask such as 0x3 (bit "
		     "N enables port N, at most 16 hex digits)",
		"-p", "0x1ffffffffffffffff", NULL);
	expect_error("-p '3g': expected a hexadecimal port mask such as 0x3 (bit N enables port N, "
		     "at most 16 hex digits)",
		"-p", "3g", NULL);
	expect_error("-p '-1': expected a hexadecimal port mask such as 0x3 (bit N enables port N, "
		     "at most 16 hex digits)",
		"-p", "-1", NULL);
	expect_error("-p '0x0': the port mask enables no port (expected at least one bit set, "
		     "such as 0x3)",
		"-p", "0x0", NULL);
	expect_error(
		"-p: missing value (expected a hexadecimal port mask such as 0x3)", "-p", NULL);
}

static void
bad_mac_mode(void **state)
{
	(void)state;
	expect_error("--mac-mode 'macswap': expected rewrite, swap or none", "--mac-mode",
		"macswap", NULL);
	expect_error(
		"--mac-mode 'Swap': expected rewrite, swap or none", "--mac-mode", "Swap", NULL);
	expect_error("--mac-mode '': expected rewrite, swap or none", "--mac-mode=", NULL);
	expect_error(
		"--mac-mode: missing value (expected rewrite, swap or none)", "--mac-mode", NULL);
}

static void
bad_numbers(void **state)
{
	(void)state;
	expect_error("--heartbeat-ms 'abc': expected a whole number of milliseconds from 1 to "
		     "10000",
		"--heartbeat-ms", "abc", NULL);
	expect_error("--heartbeat-ms '0': expected a whole number of milliseconds from 1 to 10000",
		"--heartbeat-ms", "0", NULL);
	expect_error("--heartbeat-ms '10001': expected a whole number of milliseconds from 1 to "
		     "10000",
		"--heartbeat-ms", "10001", NULL);
	expect_error("--heartbeat-ms '-5': expected a whole number of milliseconds from 1 to "
		     "10000",
		"--heartbeat-ms", "-5", NULL);
	expect_error("--heartbeat-ms ' 5': expected a whole number of milliseconds from 1 to "
		     "10000",
		"--heartbeat-ms", " 5", NULL);
	expect_error("--heartbeat-ms '5ms': expected a whole number of milliseconds from 1 to "
		     "10000",
		"--heartbeat-ms", "5ms", NULL);
	expect_error("--heartbeat-ms '1.5': expected a whole number of milliseconds from 1 to "
		     "10000",
		"--heartbeat-ms", "1.5", NULL);
	expect_error("--stall-ms '0': expected a whole number of milliseconds from 1 to 600000",
		"--stall-ms", "0", NULL);
	expect_error("--stall-ms '99999999999999999999': expected a whole number of milliseconds "
		     "from 1 to 600000",
		"--stall-ms", "99999999999999999999", NULL);
	expect_error("--link-poll-ms '': expected a whole number of milliseconds from 1 to 10000",
		"--link-poll-ms", "", NULL);
	expect_error("--link-poll-ms '0': expected a whole number of milliseconds from 1 to 10000",
		"--link-poll-ms=0", NULL);
	expect_error("--stats-period '86401': expected a whole number of seconds from 0 to 86400 "
		     "(0 = off)",
		"--stats-period", "86401", NULL);
	expect_error("--stats-period 'often': expected a whole number of seconds from 0 to 86400 "
		     "(0 = off)",
		"--stats-period", "often", NULL);
	expect_error("--idle-sleep-us '1000001': expected a whole number of microseconds from 0 "
		     "to 1000000 (0 = never sleep)",
		"--idle-sleep-us", "1000001", NULL);
	expect_error("--idle-sleep-us 'x': expected a whole number of microseconds from 0 to "
		     "1000000 (0 = never sleep)",
		"--idle-sleep-us", "x", NULL);
	expect_error("--stall-ms: missing value (expected a whole number of milliseconds from 1 "
		     "to 600000)",
		"--stall-ms", NULL);
	expect_error("--stats-period: missing value (expected a whole number of seconds from 0 to "
		     "86400 (0 = off))",
		"--stats-period", NULL);
}

static void
bad_combinations(void **state)
{
	(void)state;
	expect_error("--stall-ms 10: must be greater than --heartbeat-ms 10 (stalls are found by "
		     "the heartbeat check)",
		"--stall-ms", "10", NULL);
	expect_error("--stall-ms 100: must be greater than --heartbeat-ms 200 (stalls are found "
		     "by the heartbeat check)",
		"--heartbeat-ms", "200", NULL);
	expect_error("--idle-sleep-us 10001: must be at most 10000 (a tenth of --stall-ms 100), "
		     "so that a sleeping lcore is never taken for a stalled one",
		"--idle-sleep-us", "10001", NULL);
	expect_error("--idle-sleep-us 1000: must be at most 500 (a tenth of --stall-ms 5), so "
		     "that a sleeping lcore is never taken for a stalled one",
		"--heartbeat-ms", "1", "--stall-ms", "5", "--idle-sleep-us", "1000", NULL);
}

static void
bad_group(void **state)
{
	(void)state;
	expect_error("--telemetry-group '': expected a group name or numeric group id",
		"--telemetry-group", "", NULL);
	expect_error("--telemetry-group 'a b': expected a group name or numeric group id (no "
		     "':', '/' or spaces)",
		"--telemetry-group", "a b", NULL);
	expect_error("--telemetry-group 'a:b': expected a group name or numeric group id (no "
		     "':', '/' or spaces)",
		"--telemetry-group", "a:b", NULL);
	expect_error("--telemetry-group '../x': expected a group name or numeric group id (no "
		     "':', '/' or spaces)",
		"--telemetry-group", "../x", NULL);
	expect_error(
		"--telemetry-group "
		"'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa': expected "
		"a group name of at most 64 characters",
		"--telemetry-group",
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", NULL);
	expect_error("--telemetry-group: missing value (expected a group name or numeric group "
		     "id)",
		"--telemetry-group", NULL);
}

static void
bad_fault(void **state)
{
	(void)state;
	expect_error(
		"--fault 'boom:1:2': unknown fault 'boom' (expected "
		"stall:LCORE:AFTER_MS:FOR_MS, exit:LCORE:AFTER_MS or main-stall:AFTER_MS:FOR_MS)",
		"--fault", "boom:1:2", NULL);
	expect_error("--fault '': unknown fault '' (expected stall:LCORE:AFTER_MS:FOR_MS, "
		     "exit:LCORE:AFTER_MS or main-stall:AFTER_MS:FOR_MS)",
		"--fault", "", NULL);
	expect_error("--fault 'stall:1:100': expected stall:LCORE:AFTER_MS:FOR_MS", "--fault",
		"stall:1:100", NULL);
	expect_error("--fault 'stall:1:100:50:9': expected stall:LCORE:AFTER_MS:FOR_MS", "--fault",
		"stall:1:100:50:9", NULL);
	expect_error("--fault 'exit:1': expected exit:LCORE:AFTER_MS", "--fault", "exit:1", NULL);
	expect_error("--fault 'exit:1:2:3': expected exit:LCORE:AFTER_MS", "--fault", "exit:1:2:3",
		NULL);
	expect_error("--fault 'stall:x:100:50': LCORE 'x' is not an lcore id from 0 to 1023",
		"--fault", "stall:x:100:50", NULL);
	expect_error("--fault 'stall:1024:100:50': LCORE '1024' is not an lcore id from 0 to 1023",
		"--fault", "stall:1024:100:50", NULL);
	expect_error("--fault 'exit::100': LCORE '' is not an lcore id from 0 to 1023", "--fault",
		"exit::100", NULL);
	expect_error("--fault 'stall:1:soon:50': AFTER_MS 'soon' is not a number of milliseconds "
		     "from 0 to 86400000",
		"--fault", "stall:1:soon:50", NULL);
	expect_error("--fault 'exit:1:86400001': AFTER_MS '86400001' is not a number of "
		     "milliseconds from 0 to 86400000",
		"--fault", "exit:1:86400001", NULL);
	expect_error("--fault 'stall:1:100:0': FOR_MS '0' is not a number of milliseconds from 1 "
		     "to 3600000",
		"--fault", "stall:1:100:0", NULL);
	expect_error("--fault 'stall:1:100:-1': FOR_MS '-1' is not a number of milliseconds from "
		     "1 to 3600000",
		"--fault", "stall:1:100:-1", NULL);
	expect_error("--fault: missing value (expected stall:LCORE:AFTER_MS:FOR_MS, "
		     "exit:LCORE:AFTER_MS or main-stall:AFTER_MS:FOR_MS)",
		"--fault", NULL);
}

static void
main_stall_fault(void **state)
{
	struct fwd_config cfg;

	(void)state;
	assert_int_equal(parse(&cfg, "--fault", "main-stall:1500:2000", "--fault=main-stall:0:1",
				 "--fault", "main-stall:86400000:3600000", NULL),
		0);
	assert_int_equal(cfg.nb_faults, 3);
	assert_int_equal(cfg.faults[0].kind, FWD_FAULT_MAIN_STALL);
	assert_int_equal(cfg.faults[0].after_ms, 1500);
	assert_int_equal(cfg.faults[0].for_ms, 2000);
	assert_int_equal(cfg.faults[1].kind, FWD_FAULT_MAIN_STALL);
	assert_int_equal(cfg.faults[1].after_ms, 0);
	assert_int_equal(cfg.faults[1].for_ms, 1);
	assert_int_equal(cfg.faults[2].after_ms, 86400000);
	assert_int_equal(cfg.faults[2].for_ms, 3600000);
}

static void
bad_main_stall_fault(void **state)
{
	(void)state;
	expect_error("--fault 'main-stall:100': expected main-stall:AFTER_MS:FOR_MS", "--fault",
		"main-stall:100", NULL);
	/* the worker form with an lcore is not taken for AFTER_MS:FOR_MS */
	expect_error("--fault 'main-stall:0:100:50': expected main-stall:AFTER_MS:FOR_MS",
		"--fault", "main-stall:0:100:50", NULL);
	expect_error("--fault 'main-stall': expected main-stall:AFTER_MS:FOR_MS", "--fault",
		"main-stall", NULL);
	expect_error("--fault 'main-stall:soon:50': AFTER_MS 'soon' is not a number of "
		     "milliseconds from 0 to 86400000",
		"--fault", "main-stall:soon:50", NULL);
	expect_error("--fault 'main-stall:86400001:50': AFTER_MS '86400001' is not a number of "
		     "milliseconds from 0 to 86400000",
		"--fault", "main-stall:86400001:50", NULL);
	expect_error("--fault 'main-stall:100:0': FOR_MS '0' is not a number of milliseconds "
		     "from 1 to 3600000",
		"--fault", "main-stall:100:0", NULL);
	expect_error("--fault 'main-stall:100:': FOR_MS '' is not a number of milliseconds "
		     "from 1 to 3600000",
		"--fault", "main-stall:100:", NULL);
	expect_error("--fault 'main-stall:100:3600001': FOR_MS '3600001' is not a number of "
		     "milliseconds from 1 to 3600000",
		"--fault", "main-stall:100:3600001", NULL);
	expect_error(
		"--fault 'mainstall:1:2': unknown fault 'mainstall' (expected "
		"stall:LCORE:AFTER_MS:FOR_MS, exit:LCORE:AFTER_MS or main-stall:AFTER_MS:FOR_MS)",
		"--fault", "mainstall:1:2", NULL);
}

static void
unknown_and_stray(void **state)
{
	(void)state;
	expect_error("unknown option '--portmask' (see --help)", "--portmask", "3", NULL);
	expect_error("unknown option '--stall' (see --help)", "--stall=5", NULL);
	expect_error("unknown option '-q' (see --help)", "-q", "1", NULL);
	expect_error("unknown option '--' (see --help)", "--", NULL);
	expect_error("unexpected argument 'eth0' (every argument after -- is an option; see "
		     "--help)",
		"eth0", NULL);
	/* the value of a bad option is not taken for an option */
	expect_error("--mac-mode '--help': expected rewrite, swap or none", "--mac-mode", "--help",
		NULL);
}

static void
usage_lists_every_option(void **state)
{
	char buf[8192] = "";
	FILE *f = fmemopen(buf, sizeof(buf) - 1, "w");
	static const char *const opts[] = {"-p PORTMASK", "--mac-mode", "--heartbeat-ms",
		"--stall-ms", "--link-poll-ms", "--stats-period", "--idle-sleep-us",
		"--telemetry-group", "--fault stall:LCORE:AFTER_MS:FOR_MS",
		"--fault exit:LCORE:AFTER_MS", "--fault main-stall:AFTER_MS:FOR_MS", "--help", "-l",
		"fault injection"};

	(void)state;
	assert_non_null(f);
	fwd_options_usage(f, "dpdktel-fwd");
	fclose(f);
	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
		if (strstr(buf, opts[i]) == NULL)
			fail_msg("--help does not mention '%s'", opts[i]);
	assert_string_equal(fwd_mac_mode_name(FWD_MAC_REWRITE), "rewrite");
	assert_string_equal(fwd_mac_mode_name(FWD_MAC_SWAP), "swap");
	assert_string_equal(fwd_mac_mode_name(FWD_MAC_NONE), "none");
}

static void
null_err_buffer(void **state)
{
	struct fwd_config cfg;
	char *argv[] = {(char *)"--stall-ms", (char *)"x"};

	(void)state;
	assert_int_equal(fwd_options_parse(2, argv, &cfg, NULL, 0), -EINVAL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(defaults),
		cmocka_unit_test(every_option),
		cmocka_unit_test(equals_and_glued_forms),
		cmocka_unit_test(portmask_forms),
		cmocka_unit_test(range_limits),
		cmocka_unit_test(help),
		cmocka_unit_test(many_faults),
		cmocka_unit_test(bad_portmask),
		cmocka_unit_test(bad_mac_mode),
		cmocka_unit_test(bad_numbers),
		cmocka_unit_test(bad_combinations),
		cmocka_unit_test(bad_group),
		cmocka_unit_test(bad_fault),
		cmocka_unit_test(main_stall_fault),
		cmocka_unit_test(bad_main_stall_fault),
		cmocka_unit_test(unknown_and_stray),
		cmocka_unit_test(usage_lists_every_option),
		cmocka_unit_test(null_err_buffer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
