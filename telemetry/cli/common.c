/* SPDX-License-Identifier: BSD-3-Clause */
/* The dpdktel command-line client: socket selection and error messages. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

void
cli_err(const char *fmt, ...)
{
	va_list ap;

	fputs("dpdktel: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static const char *
who(const struct cli_opts *o, char *buf, size_t size)
{
	if (o->socket != NULL)
		snprintf(buf, size, "at %s", o->socket);
	else if (o->index > 0)
		snprintf(buf, size, "with prefix '%s' and instance %u",
			o->prefix ? o->prefix : DTEL_DEFAULT_PREFIX, o->index);
	else
		snprintf(
			buf, size, "with prefix '%s'", o->prefix ? o->prefix : DTEL_DEFAULT_PREFIX);
	return buf;
}

int
cli_fail(const struct cli_opts *o, const char *raw_path, int err)
{
	char w[DTEL_PATH_MAX + 64], path[CLI_ESCAPED_SIZE(DTEL_PATH_MAX)];

	/* A path found by discovery holds a prefix the application chose. */
	cli_escape(raw_path, path, sizeof(path));

	switch (err) {
	case -ENOENT:
		cli_err("no DPDK application %s is running (no socket %s)", who(o, w, sizeof(w)),
			path);
		break;
	case -ECONNREFUSED:
		cli_err("the DPDK application %s is gone (stale socket %s)", who(o, w, sizeof(w)),
			path);
		break;
	case -EACCES:
		cli_err("permission denied on %s (run as root, as the application's user, or in "
			"the "
			"group the application gives its socket to, e.g. dpdktel-fwd "
			"--telemetry-group)",
			path);
		break;
	default:
		cli_err("%s: %s", path, dtel_strerror(err));
		break;
	}
	return EXIT_ERROR;
}

int
cli_discover(const struct cli_opts *o, unsigned int flags, struct dtel_socket_info **ret,
	char *ret_dir, size_t size)
{
	char dirs[DTEL_RUNTIME_DIRS_MAX][DTEL_PATH_MAX];
	int errors[DTEL_RUNTIME_DIRS_MAX], ndirs = 1, n;

	*ret = NULL;
	if (o->runtime_dir != NULL)
		snprintf(dirs[0], sizeof(dirs[0]), "%s", o->runtime_dir);
	else
		ndirs = dtel_runtime_dirs(dirs, DTEL_RUNTIME_DIRS_MAX);
	n = dtel_discover_dirs((const char(*)[DTEL_PATH_MAX])dirs, ndirs, flags, ret, errors);
	if (n < 0)
		return n;
	/* A missing dir: no DPDK application ever ran there. */
	for (int k = 0; k < ndirs; k++)
		if (errors[k] < 0 && errors[k] != -ENOENT) {
			snprintf(ret_dir, size, "%s", dirs[k]);
			dtel_discover_free(*ret);
			*ret = NULL;
			return errors[k];
		}
	return n;
}

static int
only_live(const struct cli_opts *o, char *path)
{
	struct dtel_socket_info *list = NULL;
	char names[512] = "", e[CLI_ESCAPED_SIZE(DTEL_PATH_MAX)];
	char dir[DTEL_PATH_MAX];
	int n, live = 0, found = -1;
	size_t len = 0;

	n = cli_discover(o, DTEL_DISCOVER_PROBE, &list, dir, sizeof(dir));
	if (n < 0) {
		dtel_discover_free(list); /* NULL: for the analyzer, which cannot tell */
		cli_err("cannot read the DPDK runtime dir %s: %s", dir, dtel_strerror(n));
		return EXIT_ERROR;
	}
	for (int i = 0; i < n; i++) {
		if (list[i].state != DTEL_SOCKET_LIVE)
			continue;
		live++;
		found = i;
		if (len < sizeof(names))
			len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s",
				len ? ", " : "", cli_escape(list[i].prefix, e, sizeof(e)));
		if (list[i].index > 0 && len < sizeof(names))
			len += (size_t)snprintf(
				names + len, sizeof(names) - len, ":%u", list[i].index);
	}
	if (live == 1)
		snprintf(path, DTEL_PATH_MAX, "%s", list[found].path);
	dtel_discover_free(list);
	if (live == 1)
		return 0;
	if (live == 0) {
		cli_err("no DPDK application is running (no live telemetry socket found; see "
			"'dpdktel list')");
		return EXIT_ERROR;
	}
	cli_err("several DPDK applications are running (%s); choose one with -p PREFIX or -s "
		"SOCKET",
		names);
	return EXIT_USAGE;
}

int
cli_resolve_socket(const struct cli_opts *o, char *path)
{
	if (o->socket != NULL) {
		if (strlen(o->socket) >= DTEL_PATH_MAX) {
			cli_err("socket path too long (at most %d bytes): %s", DTEL_PATH_MAX - 1,
				o->socket);
			return EXIT_USAGE;
		}
		snprintf(path, DTEL_PATH_MAX, "%s", o->socket);
		return 0;
	}
	int n;

	/* Without -d the library looks for the prefix in every default runtime dir. */
	n = dtel_socket_path(o->runtime_dir, o->prefix, o->index, path, DTEL_PATH_MAX);
	if (n == -EINVAL) {
		cli_err("invalid file prefix '%s': expected a directory name without '/'",
			o->prefix);
		return EXIT_USAGE;
	}
	if (n < 0) {
		cli_err("the socket path for prefix '%s' is too long", o->prefix);
		return EXIT_USAGE;
	}
	/* Without -p, fall back from the default prefix to the only running application. */
	if (o->prefix == NULL && o->index == 0 && dtel_probe(path) == -ENOENT)
		return only_live(o, path);
	return 0;
}

int
cli_open(const struct cli_opts *o, char *path, struct dtel_session **ret)
{
	int r = cli_resolve_socket(o, path);

	if (r != 0)
		return r;
	r = dtel_session_open(path, o->timeout_ms, ret);
	if (r < 0)
		return cli_fail(o, path, r);
	return 0;
}

bool
cli_parse_seconds(const char *s, double *ret)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !isfinite(v) || v <= 0 || v > 86400)
		return false;
	*ret = v;
	return true;
}

const char *
cli_si(double v, char *buf, size_t size)
{
	static const char suffix[] = " kMGTPE";
	int i = 0;

	while (v >= 1000 && i < 6) {
		v /= 1000;
		i++;
	}
	if (i == 0)
		snprintf(buf, size, "%.0f", v);
	else
		snprintf(buf, size, "%.*f%c", v < 10 ? 2 : v < 100 ? 1 : 0, v, suffix[i]);
	return buf;
}
