/* SPDX-License-Identifier: MIT */
/*
 * rb-sink.h - private to libusertp: rb-sink.c's, the event-file heads that record into ring
 * buffers.
 */
#ifndef USERTP_LIB_RB_SINK_H
#define USERTP_LIB_RB_SINK_H

#include "internal.h"

/*
 * A consumer that records into ring buffers: the embedded recorder, and each session of a
 * recorder outside the process.  Its listener's files record with usertp__rb_sink_ops(), the
 * reserve and commit for the buffers' writer mode and the process's clock.
 */
struct usertp__rb_sink {
	bool active; /* false: events are not recorded (the buffers are being written out) */
	struct usertp__rb rb;
};
USERTP_HIDDEN const struct usertp_event_file_head *usertp__rb_sink_ops(const struct usertp__rb *rb);
/* How many ring-buffer sinks exist (they share usertp__rb_clock_id: one clock per process). */
extern unsigned int usertp__rb_sinks USERTP_HIDDEN;

#endif /* USERTP_LIB_RB_SINK_H */
