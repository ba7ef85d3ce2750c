/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The rte_tel_data_* API across DPDK releases, so that the forwarder builds without
 * warnings against 22.11 through 26.07 (docs/compatibility.md).
 *
 * DPDK 23.03 renamed rte_tel_data_add_array_u64/_dict_u64 to _uint (the old names are
 * deprecated from then on and gone in 26.07) and widened the _int adders to int64_t. The
 * code keeps calling the 22.11 names; on newer releases they mean the new functions.
 */
#ifndef FWD_TEL_COMPAT_H
#define FWD_TEL_COMPAT_H

#include <stdint.h>

#include <rte_telemetry.h>
#include <rte_version.h>

#if RTE_VERSION >= RTE_VERSION_NUM(23, 3, 0, 0)
#define rte_tel_data_add_array_u64 rte_tel_data_add_array_uint
#define rte_tel_data_add_dict_u64 rte_tel_data_add_dict_uint
/** The value type of rte_tel_data_add_array_int/_dict_int. */
typedef int64_t fwd_tel_int_t;
#else
typedef int fwd_tel_int_t;
#endif

#endif /* FWD_TEL_COMPAT_H */
