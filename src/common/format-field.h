/* SPDX-License-Identifier: MIT */
/*
 * format-field.h - the one reader of an event format's field lines (format-field.c):
 *
 *	field:TYPE NAME;	offset:N;	size:N;	signed:N;
 *	field:char NAME[16];	...		(a fixed array: the length after the name)
 *	field:__data_loc char[] NAME;	...	(a dynamic one: "[]" in the type)
 *
 * as tracefs's format files and libusertp (lib/format.c) write them.  Every piece of usertp
 * that reads a format's fields (the filter compiler for the mount, the checks of formats from
 * programs usertp does not trust) takes them from here, each line on its own.
 */
#ifndef USERTP_FORMAT_FIELD_H
#define USERTP_FORMAT_FIELD_H

#include <stdbool.h>
#include <stddef.h>

#ifndef USERTP_HIDDEN
#define USERTP_HIDDEN __attribute__((visibility("hidden")))
#endif

/* How a field is laid out (the same four as the public enum usertp_field_kind). */
enum usertp__format_field_kind {
	USERTP__FORMAT_SCALAR,	 /* TYPE NAME */
	USERTP__FORMAT_ARRAY,	 /* TYPE NAME[N] */
	USERTP__FORMAT_DATA_LOC, /* __data_loc TYPE[] NAME: u32 offset | length << 16 */
	USERTP__FORMAT_REL_LOC,	 /* __rel_loc TYPE[] NAME: the same, from the u32's end */
};

/* Longest type and name taken (a line with a longer one is not a field line). */
#define USERTP__FORMAT_FIELD_TEXT 128

struct usertp__format_field {
	/* The type as the kernel keeps it: "unsigned long", "char[16]", "__data_loc char[]". */
	char type[USERTP__FORMAT_FIELD_TEXT];
	char name[USERTP__FORMAT_FIELD_TEXT];
	unsigned int offset, size;
	bool is_signed;
	enum usertp__format_field_kind kind;
};

/*
 * One field line, @len bytes from @line (white space before "field:" allowed; what follows
 * "signed:N;" ignored).  Return: 0 with *out, or -EINVAL when it is not a field line (no
 * "field:", no name, a number that is not one, a type or name too long).
 */
USERTP_HIDDEN int usertp__format_field_parse(const char *line, size_t len,
					     struct usertp__format_field *out);

/*
 * Check an event format from someone not trusted (another user's program, a trace.dat file)
 * before libtraceevent parses it (it is not hardened against hostile formats: a field line it
 * half-reads can make it fault when it prints).  Every line holding "field:" must be a whole
 * field line, every field end within USERTP__FORMAT_MAX_FIELD_END bytes, a dynamic field 4
 * bytes, an array's length a number, and there must be a "print fmt:" (to the end of the
 * text) whose REC->NAME and dynamic helpers name fields of their kind, whose divisions are by
 * numbers other than 0 and whose array printers print fields, without
 * __get_rel_dynamic_array_len() (libtraceevent 1.7 faults on each: the comments of
 * format-field.c say how).  Return: true, or false with why in @why.
 */
#define USERTP__FORMAT_MAX_FIELD_END (1U << 20)
USERTP_HIDDEN bool usertp__format_check(const char *format, size_t len, char *why, size_t why_size);

/*
 * The next line of @format holding "field:" from *@pos on (start with *pos = 0): its start,
 * its length in *len (without the '\n'), *pos moved past it.  NULL after the last one.
 */
USERTP_HIDDEN const char *usertp__format_next_field_line(const char *format, size_t *pos,
							 size_t *len);

/*
 * The head of a format file, "name: NAME\nID: N\nREST": *@head_end after the name line, *@id,
 * *@body after the ID line.  Return: false if @format does not begin so.
 */
USERTP_HIDDEN bool usertp__format_split_id(const char *format, const char **head_end,
					   unsigned int *id, const char **body);
/* @format with its ID line saying @id (to free()), or NULL: not a format, or no memory. */
USERTP_HIDDEN char *usertp__format_with_id(const char *format, unsigned int id);

#endif
