/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the kernel tells collectd of the process behind a fake application's socket
 * (fake_proc.c): the greeting's pid, as for an application in collectd's pid namespace.
 */
#ifndef FAKE_PROC_H
#define FAKE_PROC_H

#include <stdbool.h>

/** true: as from a sibling pid namespace, SO_PEERCRED names no process (until false). */
void fp_hide_pid(bool hide);

#endif
