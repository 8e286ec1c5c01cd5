/* SPDX-License-Identifier: MIT */
/*
 * tep-check.h - what usertp checks of a record before libtraceevent prints it (tep-check.c).
 * libtraceevent trusts a record's __data_loc / __rel_loc words; one that points outside the
 * record can make its print path fault.  Records come from programs and files usertp does not
 * trust (another user's, as root): the printers (usertp report, the mount) ask first.
 */
#ifndef USERTP_TEP_CHECK_H
#define USERTP_TEP_CHECK_H

#include <stdbool.h>
#include <stddef.h>

#include <traceevent/event-parse.h>

/*
 * Do @ev's dynamic fields all lie within the record @data of @size bytes (and every fixed
 * field too)?  False: the name of the first that does not in *bad (when @bad is not NULL).
 * (A string libtraceevent prints to its NUL: the buffers records are printed from end in
 * zeroes, so that it stops there: dat-read.c's page_room, reader.c's queued_page.)
 */
bool usertp__tep_record_ok(const struct tep_event *ev, const void *data, int size,
			   const char **bad);

/*
 * Would libtraceevent parse the format @text (@len bytes) whole, its print fmt included, with
 * longs of @long_size bytes?  Tried in a forked child with a handle of its own, where a fault
 * of the parser costs nothing: a parse adds the event even when its print fmt failed, and the
 * records of such an event are printed field by field (a char array read to its NUL, wherever
 * that is), and libtraceevent's parser faults on some malformed texts.  False: refuse it.
 */
bool usertp__tep_format_ok(const char *text, size_t len, const char *system, int long_size);

#endif
