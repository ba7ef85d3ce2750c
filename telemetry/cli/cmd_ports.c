/* SPDX-License-Identifier: BSD-3-Clause */
/* dpdktel ports [--json]: one line per port with its link and counters. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"

static const char *
link_word(const struct port_sample *p)
{
	if (!p->have_link)
		return "?";
	return p->link.up ? "up" : "down";
}

static void
print_table(const struct port_sample *v, int n)
{
	printf("%-4s %-16s %-4s %6s %14s %16s %14s %16s %9s %9s %9s %9s\n", "PORT", "NAME", "LINK",
		"SPEED", "RX-PACKETS", "RX-BYTES", "TX-PACKETS", "TX-BYTES", "RX-ERRORS",
		"TX-ERRORS", "MISSED", "NOMBUF");
	for (int i = 0; i < n; i++) {
		const struct port_sample *p = &v[i];
		const struct dtel_port_stats *s = &p->stats;
		char speed[16] = "-", name[CLI_NAME_SIZE];

		if (p->have_link && p->link.up && p->link.speed_mbps != DTEL_SPEED_UNKNOWN)
			snprintf(speed, sizeof(speed), "%" PRIu64, p->link.speed_mbps);
		printf("%-4u %-16s %-4s %6s %14" PRIu64 " %16" PRIu64 " %14" PRIu64 " %16" PRIu64
		       " %9" PRIu64 " %9" PRIu64 " %9" PRIu64 " %9" PRIu64 "\n",
			p->port_id, cli_port_name(p, name), link_word(p), speed, s->ipackets,
			s->ibytes, s->opackets, s->obytes, s->ierrors, s->oerrors, s->imissed,
			s->rx_nombuf);
	}
}

static void
print_json(const struct port_sample *v, int n)
{
	putchar('[');
	for (int i = 0; i < n; i++) {
		const struct port_sample *p = &v[i];
		const struct dtel_port_stats *s = &p->stats;

		printf("%s{\"port_id\":%u,\"name\":", i ? "," : "", p->port_id);
		cli_put_json_string(p->info.name);
		printf(",\"link_status\":\"%s\",\"link_speed\":%" PRIu64 ",\"link_duplex\":\"%s\","
		       "\"ipackets\":%" PRIu64 ",\"opackets\":%" PRIu64 ",\"ibytes\":%" PRIu64
		       ",\"obytes\":%" PRIu64 ",\"imissed\":%" PRIu64 ",\"ierrors\":%" PRIu64
		       ",\"oerrors\":%" PRIu64 ",\"rx_nombuf\":%" PRIu64 "}",
			link_word(p), p->have_link ? p->link.speed_mbps : 0,
			dtel_duplex_name(p->link.duplex), s->ipackets, s->opackets, s->ibytes,
			s->obytes, s->imissed, s->ierrors, s->oerrors, s->rx_nombuf);
	}
	puts("]");
}

int
cmd_ports(struct cli_opts *o, int argc, char **argv)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'},
		{NULL, 0, NULL, 0},
	};
	char path[DTEL_PATH_MAX];
	struct port_sample *v = NULL;
	struct dtel_shared *sh;
	bool json = false;
	struct cli_cmd_opts cmd = {"j", opts, cli_flag_opt, &json};
	int n = cli_parse_opts(o, argc, argv, &cmd);

	if (n != 0)
		return n;
	if (optind != argc) {
		cli_err("ports takes no arguments besides --json");
		return EXIT_USAGE;
	}
	n = cli_shared(o, path, &sh);
	if (n != 0)
		return n;
	n = cli_sample_ports(sh, o->timeout_ms, &v);
	dtel_shared_put(sh);
	if (n < 0)
		return cli_fail(o, path, n);
	if (json)
		print_json(v, n);
	else
		print_table(v, n);
	free(v);
	return 0;
}
