/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: a plugin's configuration, from collectd config text turned into an
 * oconfig tree, through the plugin's own config, init and shutdown callbacks, on the plugin
 * suite's stand-in collectd. Compiled once per plugin (FUZZ_PLUGIN names it).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fake_collectd.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
void module_register(void);

/* Discovery without a RuntimeDir looks where EAL would: make that an empty dir of ours. */
int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static char dir[] = "/tmp/dtel-fuzz-XXXXXX";

	(void)argc, (void)argv;
	if (mkdtemp(dir) != NULL)
		setenv("RUNTIME_DIRECTORY", dir, 1);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);

	if (text == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	/* A config that discovers would scan whatever directory the input names: keep the
	 * scans to a directory of our own. */
	if (strstr(text, "RuntimeDir") == NULL && strstr(text, "Runtimedir") == NULL) {
		fc_reset();
		fc_load(module_register);
		if (fc_configure(FUZZ_PLUGIN, text) == 0 && fc_init() == 0)
			fc_read_all();
		fc_shutdown();
		fc_clear_records();
	}
	free(text);
	return 0;
}
