/* SPDX-License-Identifier: BSD-3-Clause */
/* The fake application of the plugin tests: see fake_app.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "fake_app.h"
#include "test_util.h"

struct fake_app fa;

int
fa_setup(const char *prefix, void (*module_register_fn)(void))
{
	memset(&fa, 0, sizeof(fa));
	if (test_tmpdir(prefix, fa.dir, sizeof(fa.dir)) < 0)
		return -1;
	snprintf(fa.path, sizeof(fa.path), "%s/" PI, fa.dir);
	mkdir(fa.path, 0700);
	strcat(fa.path, "/dpdk_telemetry.v2");
	fc_reset();
	fc_load(module_register_fn);
	return 0;
}

int
fa_teardown(void)
{
	fc_shutdown();
	fs_stop(fa.fs);
	return test_rmdir(fa.dir);
}

void
fa_start(fake_handler_t handler, void *arg, long pid, const char *version)
{
	struct fake_config cfg = {.handler = handler, .arg = arg, .pid = pid, .path = fa.path};
	static char greeting[128]; /* the server reads it at each accept */

	if (version != NULL) {
		snprintf(greeting, sizeof(greeting),
			"{\"version\":\"%s\",\"pid\":%ld,\"max_output_len\":16384}", version, pid);
		cfg.greeting = greeting;
	}
	fa.fs = fs_start_path(&cfg);
	assert_non_null(fa.fs);
}

int
fa_configure(const char *plugin, const char *global, const char *instance_opts, const char *after)
{
	char text[4096];

	snprintf(text, sizeof(text),
		"%s\n<Instance \"" PI "\">\n SocketPath \"%s\"\n%s\n</Instance>\n%s",
		global ? global : "", fa.path, instance_opts ? instance_opts : "",
		after ? after : "");
	assert_int_equal(fc_configure(plugin, text), 0);
	return fc_init();
}

const struct fc_value *
fa_must_find(const char *pi, const char *type, const char *ti)
{
	const struct fc_value *v = fc_find(pi, type, ti);

	if (v == NULL) {
		for (size_t i = 0; i < fc_nvalues(); i++)
			if (strcmp(fc_value_at(i)->type, type) == 0)
				print_message("have %s/%s-%s\n", fc_value_at(i)->plugin_instance,
					type, fc_value_at(i)->type_instance);
		fc_dump_logs();
		fail_msg("no value %s/%s-%s", pi, type, ti ? ti : "");
	}
	return v;
}
