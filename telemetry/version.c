/* SPDX-License-Identifier: BSD-3-Clause */
/* The version of the library that is loaded, for logs and bug reports. */
#include "dtel.h"

const char *
dtel_version(void)
{
	return DPDKTEL_VERSION;
}
