/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: every reply parser of libdpdktel. The first byte picks the parser, the
 * rest is the datagram; the reply flags come from the second byte. Each parser must return
 * 0 or a negative errno, never crash, read out of bounds or leak.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dtel.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
run(unsigned int which, const struct dtel_reply *r)
{
	struct dtel_port_stats st;
	struct dtel_xstats x;
	struct dtel_link l;
	struct dtel_port_info pi;
	struct dtel_eal_params ep;
	struct dtel_eal_lcore_info li;
	struct dtel_dict d;
	struct dtel_fwd_lcores fl;
	struct dtel_fwd_ports fp;
	struct dtel_eal_lcore_usage u;
	struct dtel_numbers nums;
	uint16_t *ids = NULL;

	switch (which % 12) {
	case 0:
		if (dtel_parse_port_list(r, &ids) >= 0)
			free(ids);
		break;
	case 1:
		dtel_parse_port_stats(r, &st);
		break;
	case 2:
		if (dtel_parse_xstats(r, &x) == 0)
			dtel_xstats_clear(&x);
		break;
	case 3:
		dtel_parse_link(r, &l);
		break;
	case 4:
		dtel_parse_port_info(r, &pi);
		break;
	case 5:
		dtel_parse_eal_params(r, &ep);
		break;
	case 6:
		dtel_parse_eal_lcore_info(r, &li);
		break;
	case 7:
		if (dtel_parse_dict(r, NULL, &d) == 0) {
			dtel_dict_find(&d, "a.b");
			dtel_dict_clear(&d);
		}
		break;
	case 8:
		if (dtel_parse_fwd_lcores(r, &fl) == 0)
			dtel_fwd_lcores_clear(&fl);
		break;
	case 9:
		if (dtel_parse_eal_lcore_usage(r, &u) == 0)
			dtel_eal_lcore_usage_clear(&u);
		break;
	case 10:
		if (dtel_parse_numbers(r, NULL, &nums) == 0)
			dtel_numbers_clear(&nums);
		break;
	default:
		if (dtel_parse_fwd_ports(r, &fp) == 0)
			dtel_fwd_ports_clear(&fp);
		break;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dtel_reply r;
	char *copy;

	if (size < 2)
		return 0;
	/* No NUL at the end on purpose: the parsers must honour the length. */
	copy = malloc(size - 2 + 1);
	if (copy == NULL)
		return 0;
	memcpy(copy, data + 2, size - 2);
	r.json = copy;
	r.len = size - 2;
	r.flags = data[1] & DTEL_F_NEAR_LIMIT;
	run(data[0], &r);
	free(copy);
	return 0;
}
