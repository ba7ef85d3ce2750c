/* SPDX-License-Identifier: BSD-3-Clause */
/* dtel_version() of the shared library is the project's version (meson.build). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "dtel.h"

static void
test_version_is_project_version(void **state)
{
	(void)state;
	assert_non_null(dtel_version());
	assert_string_equal(dtel_version(), DPDKTEL_VERSION);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_version_is_project_version),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
