/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The queue of a shared session (telemetry/queue.c): polls before reads, a batch of reads
 * yields to a poll, a batch keeps little of our work queued (and a request of unknown cost
 * goes alone), and a request that waited for our own earlier ones is not sent (-EBUSY) unless
 * the application does not answer them (-ETIMEDOUT).
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "dtel_private.h"
#include "fake_server.h"
#include "shared_util.h"
#include "test_util.h"

struct single {
	struct dtel_shared *sh;
	int ret;
};

struct slow_arg {
	struct dtel_shared *sh;
	int ret;
	int timeout_ms;
	const char *cmd;
};

static void *
slow_main(void *arg)
{
	struct slow_arg *a = arg;
	struct dtel_reply r = {0};

	a->ret = dtel_shared_query(a->sh, a->cmd, a->timeout_ms, &r);
	dtel_reply_release(&r);
	return NULL;
}

/* @a's request in a thread of its own, once it has reached the server. */
static void
start_slow(struct fake_server *fs, struct slow_arg *a, pthread_t *t)
{
	uint64_t deadline = test_now_ms() + 3000;

	assert_int_equal(dtel_shared_get(fs_path(fs), &a->sh), 0);
	assert_int_equal(pthread_create(t, NULL, slow_main, a), 0);
	while (fs_requests(fs) < 1 && test_now_ms() < deadline)
		usleep(1000);
	assert_int_equal(fs_requests(fs), 1);
}

/*
 * Behind a slow request of ours that the application answers within that request's own
 * timeout, a request that cannot go within its shorter timeout is not sent, and our queue is
 * the reason (-EBUSY), not the application: a poll of Timeout 0.2 s behind a 0.3 s xstats
 * read of Timeout 0.5 s. It was -ETIMEDOUT, a failed request and an outage logged, before.
 */
static void
behind_a_slower_read_is_ebusy(void **state)
{
	struct fake_config cfg = {.handler = h_echo_slow};
	struct fake_server *fs = fs_start_path(&cfg);
	struct slow_arg a = {.cmd = "/slow", .timeout_ms = 3000};
	pthread_t t;
	uint64_t t0;

	(void)state;
	start_slow(fs, &a, &t);
	t0 = test_now_ms();
	assert_int_equal(query_echo(a.sh, 100), -EBUSY);
	assert_true(test_now_ms() - t0 < 390); /* gave up at its own timeout, not the other's */
	assert_int_equal(fs_requests(fs), 1); /* and was not sent */
	pthread_join(t, NULL);
	assert_int_equal(a.ret, 0);
	assert_int_equal(query_echo(a.sh, 500), 0);
	dtel_shared_put(a.sh);
	fs_stop(fs);
}

/*
 * Behind a request of ours that the application leaves unanswered past its own timeout, a
 * request with time left is sent as soon as that one gives up (on a new connection) and
 * measures the application itself.
 */
static void
behind_an_unanswered_request_goes_next(void **state)
{
	struct fake_config cfg = {.handler = h_echo_or_silent};
	struct fake_server *fs = fs_start_path(&cfg);
	struct slow_arg a = {.cmd = "/silent", .timeout_ms = 100};
	pthread_t t;
	uint64_t t0;

	(void)state;
	start_slow(fs, &a, &t);
	t0 = test_now_ms();
	assert_int_equal(query_echo(a.sh, 1000), 0);
	assert_true(test_now_ms() - t0 < 900); /* once the other gave up, not at its deadline */
	pthread_join(t, NULL);
	assert_int_equal(a.ret, -ETIMEDOUT);
	assert_int_equal(fs_connections(fs), 2);
	dtel_shared_put(a.sh);
	fs_stop(fs);
}

/* A poll that comes while a batch of reads runs is answered after the reads in flight, not
 * after the whole batch. */
static void
poll_goes_before_the_rest_of_a_batch(void **state)
{
	struct batch b = {.ms = 20, .window = 4};
	struct dtel_request rq = {.prio = DTEL_PRIO_POLL, .timeout_ms = 1000};
	struct dtel_reply r = {0};
	struct fake_server *fs;
	pthread_t t;

	(void)state;
	fs = start_batch(&b, &t);
	assert_int_equal(dtel_shared_request(b.sh, &rq, "/t,0,poll", &r), 0);
	assert_string_equal(r.json, "{\"/t\":\"poll\"}");
	dtel_reply_release(&r);
	assert_int_equal(rq.queued, 1);
	assert_true(rq.queued_ns > 0);
	/* At most the first read and the window in flight went before it, of ten. */
	assert_true(position_of("poll") >= 1);
	assert_true(position_of("poll") <= 1 + 4);
	finish_batch(fs, &b, t);
}

/* Behind our own reads, each answered in time, a poll that cannot go within its timeout is
 * not sent: -EBUSY, our queue, not the application. */
static void
queued_past_the_timeout_is_ebusy(void **state)
{
	struct batch b = {.ms = 150, .window = 8};
	struct dtel_request rq = {.prio = DTEL_PRIO_POLL, .timeout_ms = 100};
	struct dtel_reply r = {0};
	struct fake_server *fs;
	pthread_t t;

	(void)state;
	fs = start_batch(&b, &t);
	assert_int_equal(dtel_shared_request(b.sh, &rq, "/t,0,poll", &r), -EBUSY);
	assert_int_equal(rq.queued, 1);
	assert_true(rq.queued_ns >= 90 * 1000000ull);
	assert_int_equal(position_of("poll"), -1);
	finish_batch(fs, &b, t);
}

static void *
read_main(void *arg)
{
	struct single *a = arg;
	struct dtel_request rq = {.prio = DTEL_PRIO_READ, .timeout_ms = 100};
	struct dtel_reply r = {0};

	a->ret = dtel_shared_request(a->sh, &rq, "/t,0,read", &r);
	dtel_reply_release(&r);
	return NULL;
}

/* While a poll is in progress, reads wait (-EBUSY when it lasts longer than their timeout). */
static void
reads_wait_for_a_poll_in_progress(void **state)
{
	struct fake_config cfg = {.handler = h_tagged};
	struct fake_server *fs = fs_start_path(&cfg);
	struct single a = {0};
	pthread_t t;

	(void)state;
	tagged_reset();
	assert_int_equal(dtel_shared_get(fs_path(fs), &a.sh), 0);
	dtel_shared_poll_begin(a.sh);
	assert_int_equal(pthread_create(&t, NULL, read_main, &a), 0);
	pthread_join(t, NULL);
	assert_int_equal(a.ret, -EBUSY);
	assert_int_equal(fs_requests(fs), 0);
	dtel_shared_poll_end(a.sh);
	assert_int_equal(pthread_create(&t, NULL, read_main, &a), 0);
	pthread_join(t, NULL);
	assert_int_equal(a.ret, 0);
	dtel_shared_put(a.sh);
	fs_stop(fs);
}
/*
 * The first request of a batch whose cost is not known yet goes alone: a poll that comes
 * meanwhile waits behind that one, not behind a whole window of requests that may each take
 * milliseconds (the first read after collectd starts queued its whole window before: the
 * poll came eighth of ten here).
 */
static void
unknown_cost_goes_alone(void **state)
{
	struct batch b = {.ms = 30, .window = 8};
	struct dtel_request rq = {.prio = DTEL_PRIO_POLL, .timeout_ms = 1000};
	struct dtel_reply r = {0};
	struct fake_server *fs;
	pthread_t t;

	(void)state;
	fs = start_batch(&b, &t);
	assert_int_equal(dtel_shared_request(b.sh, &rq, "/t,0,poll", &r), 0);
	dtel_reply_release(&r);
	assert_int_equal(position_of("poll"), 1);
	finish_batch(fs, &b, t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(behind_a_slower_read_is_ebusy),
		cmocka_unit_test(behind_an_unanswered_request_goes_next),
		cmocka_unit_test(poll_goes_before_the_rest_of_a_batch),
		cmocka_unit_test(queued_past_the_timeout_is_ebusy),
		cmocka_unit_test(reads_wait_for_a_poll_in_progress),
		cmocka_unit_test(unknown_cost_goes_alone),
	};

	if (getenv("DTEL_TEST_FILTER"))
		cmocka_set_test_filter(getenv("DTEL_TEST_FILTER"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
