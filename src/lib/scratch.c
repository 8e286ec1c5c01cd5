/* SPDX-License-Identifier: MIT */
/*
 * scratch.c - the records a thread is writing (scratch.h): its area, made by its first
 * record and freed when the thread ends.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>

#include "scratch.h"

__thread struct usertp__scratch *usertp__thread_scratch __attribute__((tls_model("initial-exec")));
static pthread_key_t scratch_key;
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;

static void scratch_free(void *p)
{
	free(p);
}

static void scratch_key_create(void)
{
	pthread_key_create(&scratch_key, scratch_free);
}

struct usertp__scratch *usertp__scratch_new(void)
{
	struct usertp__scratch *s;

	pthread_once(&scratch_once, scratch_key_create);
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	pthread_setspecific(scratch_key, s);
	usertp__thread_scratch = s;
	return s;
}
