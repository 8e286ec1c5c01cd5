/* SPDX-License-Identifier: MIT */
/*
 * fast-print.h - usertp report's quick way to an event's text, for the print formats most
 * events have: literal text and conversions %d %i %u %x %X %s (any flags, width, precision,
 * h/hh/l/ll) of plain fields and __get_str() strings.  The format and its arguments are
 * libtraceevent's parse (event->print_fmt); the text is what libtraceevent's pretty printer
 * makes of them (the same value casts, the same printf conversions), without its work per
 * conversion (a copy of the format, a trace_seq, vsnprintf for every piece).  Anything else
 * (another conversion, an expression, a typecast, a plugin's handler, a field outside the
 * record, a string without its NUL) is left to libtraceevent: the caller's tep_print_event().
 */
#ifndef USERTP_FAST_PRINT_H
#define USERTP_FAST_PRINT_H

#include <stdbool.h>
#include <stddef.h>

#include <event-parse.h>

/* Text being built: grows as needed. */
struct usertp__text {
	char *buf;
	size_t len, cap;
	bool failed; /* out of memory: the text is cut */
};

void usertp__text_put(struct usertp__text *t, const char *s, size_t len);
void usertp__text_putc(struct usertp__text *t, char c);
/* @v in decimal, at least @width columns, left-aligned if @left. */
void usertp__text_put_u64(struct usertp__text *t, unsigned long long v, int width, bool left,
			  char pad);

/* The plans of one tep's events, made as they are first printed. */
struct usertp__fast_print;
struct usertp__fast_print *usertp__fast_print_new(void);
void usertp__fast_print_free(struct usertp__fast_print *fp);

/*
 * Append the text of @rec (an event of @event) to @t, as tep_print_event()'s TEP_PRINT_INFO.
 * Return: false (nothing appended) when it is libtraceevent's to print.
 */
bool usertp__fast_print_info(struct usertp__fast_print *fp, struct tep_event *event,
			     struct tep_record *rec, struct usertp__text *t);

#endif /* USERTP_FAST_PRINT_H */
