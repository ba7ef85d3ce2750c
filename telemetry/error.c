/* SPDX-License-Identifier: BSD-3-Clause */
/* Error descriptions in the terms of the telemetry protocol. */
#include <errno.h>
#include <string.h>

#include "dtel.h"

const char *
dtel_strerror(int err)
{
	switch (err) {
	case 0:
		return "success";
	case -ENOENT:
		return "no socket: the DPDK application is not running";
	case -ECONNREFUSED:
		return "connection refused: stale socket of an application that is gone";
	case -EACCES:
	case -EPERM:
		return "permission denied";
	case -ENOTSOCK:
		return "not a socket";
	case -EPROTOTYPE:
		return "not a SOCK_SEQPACKET socket: not a DPDK telemetry v2 socket";
	case -ENAMETOOLONG:
		return "socket path too long (at most 107 bytes)";
	case -ETIMEDOUT:
		return "no answer within the timeout";
	case -ECONNRESET:
		return "connection closed by the application (it serves at most 10 clients)";
	case -EPROTO:
		return "malformed greeting or reply";
	case -EMSGSIZE:
		return "reply larger than max_output_len: truncated";
	case -ENODATA:
		return "the application answered null: unknown command or bad parameter";
	case -EBUSY:
		return "another request on this socket did not finish within the timeout";
	case -EAGAIN:
		return "not sent: reconnecting is backing off after a refused connect";
	case -ECONNABORTED:
		return "sent, but its reply was never read: an earlier request of the batch failed "
		       "and the connection was closed";
	case -ENOTCONN:
		return "session closed after an earlier error";
	case -EINVAL:
		return "invalid argument";
	case -ENOMEM:
		return "out of memory";
	default:
		break;
	}
	/* strerrordesc_np() returns static strings, so this stays thread-safe. */
	if (err < 0 && strerrordesc_np(-err) != NULL)
		return strerrordesc_np(-err);
	return "unknown error";
}
