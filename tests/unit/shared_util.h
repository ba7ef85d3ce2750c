/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the shared-session tests (test_registry, test_queue, test_cost, test_budget) share:
 * handlers of the fake server (tests/common/fake_server.h) and a batch of reads that runs
 * in a thread of its own while a test asks something else of the same session.
 */
#ifndef SHARED_UTIL_H
#define SHARED_UTIL_H

#include <pthread.h>
#include <stdbool.h>

#include "dtel_private.h"
#include "fake_server.h"

/* /echo,<x> answers "<x>" after 1 ms; /slow after 400 ms; anything else null. */
void h_echo_slow(
	struct fake_server *fs, unsigned int c, const char *req, struct fake_reply *o, void *a);
/* /echo,<x> answers "<x>"; /silent never answers (its callback hangs: nothing more is answered
 * on that connection, tests/common/fake_server.c CONN_STUCK). */
void h_echo_or_silent(
	struct fake_server *fs, unsigned int c, const char *req, struct fake_reply *o, void *a);
/* "/echo,x" over @sh: 0 or the error. */
int query_echo(struct dtel_shared *sh, int timeout_ms);

/* "/t,<ms>,<tag>": answers "<tag>" after <ms> (busy on the CPU while tagged_spin, as a driver
 * that polls its firmware); the order tags arrive in is recorded (position_of()). */
void h_tagged(
	struct fake_server *fs, unsigned int c, const char *req, struct fake_reply *o, void *a);
extern bool tagged_spin;
/* Forget the tags seen so far. */
void tagged_reset(void);
/* Where @tag arrived among the requests since tagged_reset(), -1: not at all. */
int position_of(const char *tag);

#define READS 10

/* READS reads "/t,<ms>,r<i>" in one dtel_shared_request_many() of @window, in a thread. */
struct batch {
	struct dtel_shared *sh;
	int ms;
	unsigned int window;
	int ret;
	int results[READS];
	struct dtel_reply replies[READS];
};

void *batch_main(void *arg);
/* A fake server of h_tagged and the batch started on it, its first request arrived. */
struct fake_server *start_batch(struct batch *b, pthread_t *t);
/* The batch ended well (every read answered), and the server is stopped. */
void finish_batch(struct fake_server *fs, struct batch *b, pthread_t t);

#endif
