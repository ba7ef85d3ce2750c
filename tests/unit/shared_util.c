/* SPDX-License-Identifier: BSD-3-Clause */
/* The shared-session tests' helpers: shared_util.h. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "shared_util.h"
#include "test_util.h"

static pthread_mutex_t order_lock = PTHREAD_MUTEX_INITIALIZER;
static char order[64][16];
static unsigned int norder;

bool tagged_spin;

void
tagged_reset(void)
{
	pthread_mutex_lock(&order_lock);
	norder = 0;
	pthread_mutex_unlock(&order_lock);
}

void
h_echo_slow(struct fake_server *fs, unsigned int c, const char *req, struct fake_reply *o, void *a)
{
	(void)fs, (void)c, (void)a;
	/* A pause makes an overlapping request visible to the server if one were sent. */
	o->delay_ms = 1;
	if (strncmp(req, "/echo,", 6) == 0)
		o->data = fs_printf("{\"/echo\":\"%s\"}", req + 6);
	else if (strcmp(req, "/slow") == 0) {
		o->delay_ms = 400;
		o->data = fs_printf("{\"/slow\":1}");
	} else
		o->data = fs_printf("{\"%.*s\":null}", (int)strcspn(req, ","), req);
}

int
query_echo(struct dtel_shared *sh, int timeout_ms)
{
	struct dtel_reply r = {0}; /* untouched on failure */
	int ret = dtel_shared_query(sh, "/echo,x", timeout_ms, &r);

	dtel_reply_release(&r);
	return ret;
}

/* /echo,<x> answers "<x>"; /silent never answers (its callback hangs: nothing more is
 * answered on that connection, tests/common/fake_server.c CONN_STUCK). */
void
h_echo_or_silent(
	struct fake_server *fs, unsigned int c, const char *req, struct fake_reply *o, void *a)
{
	(void)fs, (void)c, (void)a;
	if (strcmp(req, "/silent") == 0)
		o->action = FAKE_SILENT;
	else if (strncmp(req, "/echo,", 6) == 0)
		o->data = fs_printf("{\"/echo\":\"%s\"}", req + 6);
	else
		o->data = fs_printf("{\"%.*s\":null}", (int)strcspn(req, ","), req);
}

void
h_tagged(struct fake_server *fs, unsigned int c, const char *req, struct fake_reply *o, void *a)
{
	char tag[16] = "";
	int ms = 0;

	(void)fs, (void)c, (void)a;
	if (sscanf(req, "/t,%d,%15s", &ms, tag) != 2) {
		o->data = fs_printf("{\"/t\":null}");
		return;
	}
	pthread_mutex_lock(&order_lock);
	if (norder < 64)
		snprintf(order[norder++], sizeof(order[0]), "%s", tag);
	pthread_mutex_unlock(&order_lock);
	o->delay_ms = ms;
	o->spin = tagged_spin; /* on the CPU, as a driver that polls its firmware */
	o->data = fs_printf("{\"/t\":\"%s\"}", tag);
}

int
position_of(const char *tag)
{
	int at = -1;

	pthread_mutex_lock(&order_lock);
	for (unsigned int i = 0; i < norder && at < 0; i++)
		if (strcmp(order[i], tag) == 0)
			at = (int)i;
	pthread_mutex_unlock(&order_lock);
	return at;
}

void *
batch_main(void *arg)
{
	struct batch *b = arg;
	struct dtel_request rq = {.prio = DTEL_PRIO_READ, .timeout_ms = 2000, .window = b->window};
	char cmds[READS][32];
	const char *p[READS];

	for (int i = 0; i < READS; i++) {
		snprintf(cmds[i], sizeof(cmds[i]), "/t,%d,r%d", b->ms, i);
		p[i] = cmds[i];
	}
	b->ret = dtel_shared_request_many(b->sh, &rq, p, READS, b->replies, b->results);
	for (int i = 0; i < READS; i++)
		dtel_reply_release(&b->replies[i]);
	return NULL;
}

struct fake_server *
start_batch(struct batch *b, pthread_t *t)
{
	struct fake_config cfg = {.handler = h_tagged};
	struct fake_server *fs = fs_start_path(&cfg);
	uint64_t deadline = test_now_ms() + 3000;

	assert_non_null(fs);
	tagged_reset();
	tagged_spin = false;
	assert_int_equal(dtel_shared_get(fs_path(fs), &b->sh), 0);
	assert_int_equal(pthread_create(t, NULL, batch_main, b), 0);
	while (fs_requests(fs) < 1 && test_now_ms() < deadline)
		usleep(500);
	assert_int_equal(fs_requests(fs), 1);
	return fs;
}

void
finish_batch(struct fake_server *fs, struct batch *b, pthread_t t)
{
	pthread_join(t, NULL);
	assert_int_equal(b->ret, 0);
	for (int i = 0; i < READS; i++)
		assert_int_equal(b->results[i], 0); /* the batch went on after the poll */
	assert_false(fs_saw_overlap(fs));
	dtel_shared_put(b->sh);
	fs_stop(fs);
}
