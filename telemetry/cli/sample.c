/* SPDX-License-Identifier: BSD-3-Clause */
/* Reading every port's info, link and counters, for dpdktel ports and watch. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int
cli_shared(const struct cli_opts *o, char *path, struct dtel_shared **ret)
{
	int r = cli_resolve_socket(o, path);

	if (r != 0)
		return r;
	r = dtel_shared_get(path, ret);
	if (r < 0)
		return cli_fail(o, path, r);
	return 0;
}

/* Send "<name>,<id>". */
static int
query(struct dtel_shared *sh, int timeout_ms, const char *name, unsigned int id,
	struct dtel_reply *r)
{
	char cmd[64];

	snprintf(cmd, sizeof(cmd), "%s,%u", name, id);
	return dtel_shared_query(sh, cmd, timeout_ms, r);
}

static int
sample_port(struct dtel_shared *sh, int timeout_ms, struct port_sample *p)
{
	struct dtel_reply r;
	int ret;

	ret = query(sh, timeout_ms, "/ethdev/stats", p->port_id, &r);
	if (ret < 0)
		return ret;
	ret = dtel_parse_port_stats(&r, &p->stats);
	dtel_reply_release(&r);
	if (ret < 0)
		return ret;
	/* Name and link are extras: a port without them is still shown. */
	if (query(sh, timeout_ms, "/ethdev/info", p->port_id, &r) == 0) {
		if (dtel_parse_port_info(&r, &p->info) < 0)
			p->info.name[0] = '\0';
		dtel_reply_release(&r);
	}
	if (query(sh, timeout_ms, "/ethdev/link_status", p->port_id, &r) == 0) {
		p->have_link = dtel_parse_link(&r, &p->link) == 0;
		dtel_reply_release(&r);
	}
	return 0;
}

int
cli_sample_ports(struct dtel_shared *sh, int timeout_ms, struct port_sample **ret)
{
	struct port_sample *v = NULL;
	struct dtel_reply r;
	uint16_t *ids = NULL;
	int n, k = 0, err = 0;

	n = dtel_shared_query(sh, "/ethdev/list", timeout_ms, &r);
	if (n < 0)
		return n;
	n = dtel_parse_port_list(&r, &ids);
	dtel_reply_release(&r);
	if (n < 0)
		return n;
	if (n > 0) {
		v = calloc((size_t)n, sizeof(*v));
		if (v == NULL) {
			free(ids);
			return -ENOMEM;
		}
	}
	for (int i = 0; i < n; i++) {
		v[k].port_id = ids[i];
		err = sample_port(sh, timeout_ms, &v[k]);
		if (err == -ENODATA)
			continue; /* the port went away between the list and its stats */
		if (err < 0)
			break;
		k++;
	}
	free(ids);
	if (err < 0 && err != -ENODATA) {
		free(v);
		return err;
	}
	*ret = v;
	return k;
}

const char *
cli_port_name(const struct port_sample *p, char buf[CLI_NAME_SIZE])
{
	return cli_escape(p->info.name[0] ? p->info.name : "-", buf, CLI_NAME_SIZE);
}
