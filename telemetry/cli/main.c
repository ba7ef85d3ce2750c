/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpdktel: look at DPDK applications through their telemetry v2 socket (see dpdktel(1)).
 * Exit status: 0 success, 1 error (named with its socket and reason), 2 usage error.
 */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define DEFAULT_TIMEOUT_MS 1000

static void
usage(FILE *f)
{
	fputs("Usage: dpdktel [OPTIONS] COMMAND [ARGS]\n"
	      "\n"
	      "Look at DPDK applications through their telemetry v2 socket.\n"
	      "\n"
	      "Commands:\n"
	      "  list [--json]             DPDK applications found: prefix, socket, pid, app,\n"
	      "                            DPDK version, state (live, stale, no permission)\n"
	      "  query CMD [--raw|--numbers]\n"
	      "                            send one telemetry command (\"/ethdev/stats,0\") and\n"
	      "                            print the reply as JSON (--raw: the datagram itself;\n"
	      "                            --numbers: \"<key> <value>\" for each number, with the\n"
	      "                            keys the rules of dpdktel_stats' <Command> match)\n"
	      "  ports [--json]            one line per port: link, speed, counters\n"
	      "  watch [-i SECONDS] [-c COUNT]\n"
	      "                            live per-port packet, bit and drop rates\n"
	      "\n"
	      "Options (before or after the command and its arguments):\n"
	      "  -p, --prefix PREFIX       the application's --file-prefix (default: rte, or the\n"
	      "                            only application running)\n"
	      "  -N, --instance N          its dpdk_telemetry.v2:N socket (default 0)\n"
	      "  -s, --socket PATH         a socket path instead of -p/-N\n"
	      "  -d, --runtime-dir DIR     where to look for prefixes (default: this user's\n"
	      "                            runtime dir, /run/openvswitch/dpdk, /var/run/dpdk)\n"
	      "  -t, --timeout SECONDS     for connecting and for each request (default 1)\n"
	      "  -h, --help                this help\n"
	      "  -V, --version             the version\n"
	      "\n"
	      "Exit status: 0 success, 1 error, 2 usage error. See dpdktel(1).\n",
		f);
}

/* "dpdktel query --help": the commands' options are all in the one usage text. */
static bool
wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
			return true;
	return false;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"prefix", required_argument, NULL, 'p'},
		{"instance", required_argument, NULL, 'N'},
		{"socket", required_argument, NULL, 's'},
		{"runtime-dir", required_argument, NULL, 'd'},
		{"timeout", required_argument, NULL, 't'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	struct cli_opts o = {.timeout_ms = DEFAULT_TIMEOUT_MS};
	int c, r;

	/* '+': stop at the command, so that its own options are left to it. */
	while ((c = getopt_long(argc, argv, "+p:N:s:d:t:hV", opts, NULL)) != -1) {
		r = cli_global_opt(&o, c, optarg);
		if (r > 0)
			return r;
		if (r == 0)
			continue;
		switch (c) {
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("dpdktel %s (libdpdktel %s)\n", DPDKTEL_VERSION, dtel_version());
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		cli_err("missing command (list, query, ports or watch); see dpdktel --help");
		return EXIT_USAGE;
	}
	argc -= optind;
	argv += optind;
	if (wants_help(argc, argv)) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[0], "list") == 0)
		return cmd_list(&o, argc, argv);
	if (strcmp(argv[0], "query") == 0)
		return cmd_query(&o, argc, argv);
	if (strcmp(argv[0], "ports") == 0)
		return cmd_ports(&o, argc, argv);
	if (strcmp(argv[0], "watch") == 0)
		return cmd_watch(&o, argc, argv);
	cli_err("unknown command '%s': expected list, query, ports or watch", argv[0]);
	return EXIT_USAGE;
}
