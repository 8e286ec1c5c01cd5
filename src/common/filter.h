/* SPDX-License-Identifier: MIT */
/*
 * filter.h - event filters in the kernel's grammar (docs/tracefs.md section 4): the one home of the
 * grammar, its errors and its semantics, for libusertp (filters run in the traced program)
 * and libusertp-consumer.
 *
 * A filter is compiled against an event's fields into a program: the predicates in the
 * order of the text, each with where to go when it matches and when it does not (the next
 * predicate, or the result), evaluated by a loop that only jumps forward: no recursion, no
 * allocation, no system call.  Errors are the kernel's: its errno (the unusual ENOENT, EPERM
 * and ESRCH of its parser too), its message, and its position, rendered as the filter file
 * and error_log show them.
 *
 * Where this differs from the kernel (6.18), on purpose, as its own selftests expect:
 *   - an expression that ends in "&&" or "||" is refused ("Meaningless filter expression",
 *     the caret under the operator); the kernel takes it and ignores the operator;
 *   - a suffix glob ("*xyz") on a fixed char array or COMM matches strings that end with
 *     xyz; the kernel compares the end of the whole array, bytes after the NUL included.
 */
#ifndef USERTP_FILTER_H
#define USERTP_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifndef USERTP_HIDDEN
#define USERTP_HIDDEN __attribute__((visibility("hidden")))
#endif

/* Longest filter text (the kernel refuses writes of 4096 bytes or more). */
#define USERTP__FILTER_MAX 4095

/* What a field holds, for the filter. */
enum usertp__filter_type {
	USERTP__FILTER_NUMBER,	 /* integer of size 1, 2, 4 or 8 (others never match) */
	USERTP__FILTER_CHARS,	 /* char name[N]: a string of at most N bytes */
	USERTP__FILTER_DATA_LOC, /* __data_loc char[]: u32, offset | length << 16, from the record */
	USERTP__FILTER_REL_LOC,	 /* __rel_loc char[]: the same, from the end of the u32 */
	USERTP__FILTER_OTHER,	 /* arrays of other things: accepted, never match */
};

/* One field of an event, as its format shows it (the common fields are added). */
struct usertp__filter_field {
	const char *name;
	unsigned int offset, size;
	bool is_signed;
	enum usertp__filter_type type;
};

/*
 * What a field of type @type holds for a filter, by the kernel's rule (its
 * filter_assign_type()): "__data_loc"/"__rel_loc" with "char" a dynamic string, "[" with
 * "char" a fixed one, other arrays nothing a filter can match, the rest numbers.  @type is
 * as the kernel keeps it: "char[16]", "__data_loc char[]", "unsigned int".  The one rule for
 * fields taken from an event (libusertp) and from its format text (the mount).
 */
USERTP_HIDDEN enum usertp__filter_type usertp__filter_type_of(const char *type);

/*
 * The fields of an event's format text (tracefs's "format" file: "field:TYPE NAME;
 * offset:N; size:N; signed:N;" lines, each read by format-field.c; the common fields are
 * left out: they are the compiler's).  *names holds their names (to free(), with *out).
 * Return: how many, or a negative errno (-EINVAL: not a format).
 */
USERTP_HIDDEN int usertp__filter_fields_of_format(const char *format,
						  struct usertp__filter_field **out, char **names);

/* A refused filter: the kernel's errno (negative), message (NULL: none) and position. */
struct usertp__filter_error {
	int err;
	const char *msg;
	int pos;
};

struct usertp__filter;

/*
 * Compile @text (at most USERTP__FILTER_MAX bytes; trailing white space is the caller's to
 * trim, as tracefs does) against @fields.  Return: 0 with *out (free it with
 * usertp__filter_free()), or a negative errno, *err saying what and where.
 * -ENOMEM: no memory (err->msg NULL).
 */
USERTP_HIDDEN int usertp__filter_compile(const char *text, const struct usertp__filter_field *fields,
					 unsigned int nr_fields, struct usertp__filter **out,
					 struct usertp__filter_error *err);
USERTP_HIDDEN void usertp__filter_free(struct usertp__filter *f);

/*
 * Check @text without an event's fields: every name is taken as a field of any type, so what
 * is found is what does not depend on the fields (quotes, parentheses, operators, numbers,
 * terms).  For a filter to check before its event's format is known.  Return: as compile.
 */
USERTP_HIDDEN int usertp__filter_check(const char *text, struct usertp__filter_error *err);

/* The first member of a compiled filter (filter.c): what its users read on every record. */
struct usertp__filter_head {
	unsigned int nr; /* predicates */
	bool uses_cpu;	 /* one looks at the CPU (CPU, cpu, common_cpu) */
};

/* Does the filter look at the CPU?  Else rec->cpu need not be set.  (Inline: per record.) */
static inline bool usertp__filter_uses_cpu(const struct usertp__filter *f)
{
	return f && ((const struct usertp__filter_head *)(const void *)f)->uses_cpu;
}

/* What a record is evaluated with: not all of it is in the record. */
struct usertp__filter_record {
	const void *data; /* the record, common header first */
	size_t size;
	unsigned int cpu;
	const char *comm; /* the recording thread's name (COMM) */
};

/* Does the record pass?  No allocation, no system call, no recursion. */
USERTP_HIDDEN bool usertp__filter_match(const struct usertp__filter *f,
					const struct usertp__filter_record *rec);

/*
 * The filter file after a refused write: @text, a caret line, "parse_error: MSG", an empty
 * line (or "Error: (0)" without a message).  Return: its length (snprintf's).
 */
USERTP_HIDDEN int usertp__filter_error_file(const char *text, const struct usertp__filter_error *err,
					    char *buf, size_t size);
/* The same for error_log: "  Command: TEXT" and its caret line (the header line is the log's). */
USERTP_HIDDEN int usertp__filter_error_log(const char *text, const struct usertp__filter_error *err,
					   char *buf, size_t size);

#endif
