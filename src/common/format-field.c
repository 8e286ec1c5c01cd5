/* SPDX-License-Identifier: MIT */
/*
 * format-field.c - an event format's field lines, read one line at a time (format-field.h).
 *
 * The line is read by itself and nothing past its end: the declaration up to its ';', then
 * "offset:", "size:" and "signed:" with their numbers.  The name is the declaration's last
 * identifier, leaving out a fixed array's "[N]" after it; the type is what comes before it,
 * with that "[N]" put back after the type ("char[16]"), as the kernel keeps the types of its
 * fields.  A "__data_loc"/"__rel_loc" word in the type makes a dynamic field.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <limits.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format-field.h"
#include "number.h"

static bool is_ident(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* "KEY:N;" after blanks at *p (before @end): N into *out, *p past the ';'. */
static int keyed_number(const char **p, const char *end, const char *key, uint64_t max,
			uint64_t *out)
{
	const char *s = *p, *digits_end;
	size_t key_len = strlen(key);
	char digits[24];
	size_t n;

	while (s < end && is_blank(*s))
		s++;
	if ((size_t)(end - s) < key_len || memcmp(s, key, key_len))
		return -EINVAL;
	s += key_len;
	for (n = 0; s + n < end && s[n] != ';'; n++)
		;
	if (s + n == end || !n || n >= sizeof(digits))
		return -EINVAL;
	memcpy(digits, s, n);
	digits[n] = 0;
	if (usertp__parse_u64_prefix(digits, &digits_end, 0, max, out) || *digits_end)
		return -EINVAL;
	*p = s + n + 1;
	return 0;
}

int usertp__format_field_parse(const char *line, size_t len, struct usertp__format_field *out)
{
	const char *p = line, *end = line + len, *decl, *semi, *decl_end, *suffix = NULL;
	const char *name, *type_end;
	size_t suffix_len = 0, type_len, name_len;
	uint64_t offset, size, is_signed;

	while (p < end && is_blank(*p))
		p++;
	if ((size_t)(end - p) < 6 || memcmp(p, "field:", 6))
		return -EINVAL;
	decl = p + 6;
	semi = memchr(decl, ';', (size_t)(end - decl));
	if (!semi)
		return -EINVAL;
	p = semi + 1;
	if (keyed_number(&p, end, "offset:", UINT32_MAX, &offset) ||
	    keyed_number(&p, end, "size:", UINT32_MAX, &size) ||
	    keyed_number(&p, end, "signed:", 1, &is_signed))
		return -EINVAL;

	/* The declaration, trimmed; a fixed array's "[N]" at its end set apart. */
	while (decl < semi && is_blank(*decl))
		decl++;
	decl_end = semi;
	while (decl_end > decl && is_blank(decl_end[-1]))
		decl_end--;
	if (decl_end > decl && decl_end[-1] == ']') {
		const char *open = decl_end - 1;

		while (open > decl && *open != '[')
			open--;
		if (*open != '[')
			return -EINVAL;
		suffix = open;
		suffix_len = (size_t)(decl_end - open);
		decl_end = open;
		while (decl_end > decl && is_blank(decl_end[-1]))
			decl_end--;
	}
	name = decl_end;
	while (name > decl && is_ident(name[-1]))
		name--;
	name_len = (size_t)(decl_end - name);
	type_end = name;
	while (type_end > decl && is_blank(type_end[-1]))
		type_end--;
	type_len = (size_t)(type_end - decl);
	if (!name_len || isdigit((unsigned char)*name) || !type_len ||
	    name_len >= sizeof(out->name) || type_len + suffix_len >= sizeof(out->type))
		return -EINVAL;
	/* Brackets in the type itself only as a dynamic field's "[]". */
	for (const char *b = decl; (b = memchr(b, '[', (size_t)(type_end - b))); b++)
		if (b + 1 >= type_end || b[1] != ']')
			return -EINVAL;

	memcpy(out->name, name, name_len);
	out->name[name_len] = 0;
	memcpy(out->type, decl, type_len);
	if (suffix_len)
		memcpy(out->type + type_len, suffix, suffix_len);
	out->type[type_len + suffix_len] = 0;
	out->offset = (unsigned int)offset;
	out->size = (unsigned int)size;
	out->is_signed = is_signed != 0;
	if (strstr(out->type, "__data_loc"))
		out->kind = USERTP__FORMAT_DATA_LOC;
	else if (strstr(out->type, "__rel_loc"))
		out->kind = USERTP__FORMAT_REL_LOC;
	else if (suffix_len)
		out->kind = USERTP__FORMAT_ARRAY;
	else
		out->kind = USERTP__FORMAT_SCALAR;
	return 0;
}

/* Say why in @why; return false. */
__attribute__((format(printf, 3, 4))) static bool refuse(char *why, size_t size,
							 const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, size, fmt, ap);
	va_end(ap);
	return false;
}

/* Does @format have a field line naming @name (@n bytes)?  Its kind in *kind. */
static bool has_field(const char *format, const char *name, size_t n,
		      enum usertp__format_field_kind *kind)
{
	struct usertp__format_field f;
	size_t pos = 0, l;
	const char *line;

	while ((line = usertp__format_next_field_line(format, &pos, &l)))
		if (!usertp__format_field_parse(line, l, &f) && strlen(f.name) == n &&
		    !memcmp(f.name, name, n)) {
			*kind = f.kind;
			return true;
		}
	return false;
}

/*
 * The print fmt @p (@n bytes) reads fields as they are: every REC->NAME names a field of
 * @format, and the helpers of dynamic fields name fields of that kind (libtraceevent takes a
 * field's 4 bytes for a __data_loc word whatever the field is, and reads where it points).
 */
static bool print_fields_known(const char *format, const char *p, size_t n, char *why,
			       size_t why_size)
{
	static const struct {
		const char *call;
		enum usertp__format_field_kind kind; /* USERTP__FORMAT_SCALAR: any field */
	} readers[] = {
		{ "REC->", USERTP__FORMAT_SCALAR },
		{ "__get_str(", USERTP__FORMAT_DATA_LOC },
		{ "__get_dynamic_array(", USERTP__FORMAT_DATA_LOC },
		{ "__get_dynamic_array_len(", USERTP__FORMAT_DATA_LOC },
		{ "__get_bitmask(", USERTP__FORMAT_DATA_LOC },
		{ "__get_rel_str(", USERTP__FORMAT_REL_LOC },
		{ "__get_rel_dynamic_array(", USERTP__FORMAT_REL_LOC },
		{ "__get_rel_bitmask(", USERTP__FORMAT_REL_LOC },
	};
	const char *end = p + n;

	for (size_t r = 0; r < sizeof(readers) / sizeof(readers[0]); r++) {
		size_t call_len = strlen(readers[r].call);

		for (const char *at = memmem(p, n, readers[r].call, call_len); at;
		     at = memmem(at, (size_t)(end - at), readers[r].call, call_len)) {
			enum usertp__format_field_kind kind;
			const char *name;

			at += call_len;
			while (at < end && (*at == ' ' || *at == '\t'))
				at++;
			name = at;
			while (at < end && (isalnum((unsigned char)*at) || *at == '_'))
				at++;
			int shown = (int)(at - name) > 64 ? 64 : (int)(at - name);

			if (!has_field(format, name, (size_t)(at - name), &kind))
				return refuse(why, why_size, "its print fmt reads %s%.*s, not a "
					      "field", readers[r].call, shown, name);
			if (readers[r].kind != USERTP__FORMAT_SCALAR && kind != readers[r].kind)
				return refuse(why, why_size, "its print fmt reads %s%.*s), not a "
					      "%s field", readers[r].call, shown, name,
					      readers[r].kind == USERTP__FORMAT_DATA_LOC
						      ? "__data_loc" : "__rel_loc");
		}
	}
	return true;
}

/*
 * The print fmt @p (@n bytes) divides only by a number other than 0, or a sizeof, as the
 * kernel's formats do (libtraceevent evaluates "/ REC->x" with x 0 as it is: SIGFPE).
 */
static bool print_divides_safely(const char *p, size_t n, char *why, size_t why_size)
{
	const char *end = p + n;

	for (const char *at = p; at < end; at++) {
		const char *next;

		if (*at == '"' || *at == '\'') {
			char q = *at;

			for (at++; at < end && *at != q; at++)
				if (*at == '\\' && at + 1 < end)
					at++;
			continue;
		}
		if (*at != '/' && *at != '%')
			continue;
		for (next = at + 1; next < end && (*next == ' ' || *next == '('); next++)
			;
		if (next + 6 <= end && !memcmp(next, "sizeof", 6))
			continue;
		if (next < end && isdigit((unsigned char)*next) && strtoull(next, NULL, 0))
			continue;
		return refuse(why, why_size, "its print fmt divides by \"%.*s\", not a number",
			      (int)(end - next) > 16 ? 16 : (int)(end - next), next);
	}
	return true;
}

/*
 * The array printers of the print fmt @p (@n bytes) print a field: their first argument is
 * REC->NAME or a dynamic array, as in the kernel's formats (libtraceevent faults printing an
 * array of anything else).
 */
static bool print_arrays_of_fields(const char *p, size_t n, char *why, size_t why_size)
{
	static const char *const printers[] = { "__print_array(", "__print_hex(",
						"__print_hex_str(", "__print_dynamic_array(" };
	static const char *const arrays[] = { "REC->", "__get_dynamic_array(",
					      "__get_rel_dynamic_array(" };
	const char *end = p + n;

	for (size_t i = 0; i < sizeof(printers) / sizeof(printers[0]); i++) {
		size_t len = strlen(printers[i]);

		for (const char *at = memmem(p, n, printers[i], len); at;
		     at = memmem(at, (size_t)(end - at), printers[i], len)) {
			bool field = false;

			for (at += len; at < end && *at == ' '; at++)
				;
			for (size_t k = 0; k < sizeof(arrays) / sizeof(arrays[0]); k++)
				field |= (size_t)(end - at) >= strlen(arrays[k]) &&
					 !memcmp(at, arrays[k], strlen(arrays[k]));
			if (!field)
				return refuse(why, why_size, "its print fmt has %s of something "
					      "not a field", printers[i]);
		}
	}
	return true;
}

bool usertp__format_check(const char *format, size_t len, char *why, size_t why_size)
{
	const char *p = format, *end = format + len;
	bool print_fmt = false;

	if (memchr(format, 0, len))
		return refuse(why, why_size, "a NUL in its text");
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		struct usertp__format_field f;

		if (memmem(p, n, "field:", 6)) {
			if (usertp__format_field_parse(p, n, &f))
				return refuse(why, why_size, "\"%.*s\" is not a field line",
					      n > 80 ? 80 : (int)n, p);
			if ((uint64_t)f.offset + f.size > USERTP__FORMAT_MAX_FIELD_END)
				return refuse(why, why_size, "field %s ends past byte %u", f.name,
					      USERTP__FORMAT_MAX_FIELD_END);
			bool dynamic = f.kind == USERTP__FORMAT_DATA_LOC ||
				       f.kind == USERTP__FORMAT_REL_LOC;

			if (dynamic && f.size != 4)
				return refuse(why, why_size, "dynamic field %s of %u bytes", f.name,
					      f.size);
			/* "[]" in a type only with __data_loc / __rel_loc ("TYPE[] NAME") */
			if (f.kind == USERTP__FORMAT_SCALAR && strchr(f.type, '['))
				return refuse(why, why_size, "field %s: type %s", f.name, f.type);
			/* An array's length is a number, or none ("[]"), as the kernel's. */
			for (const char *b = strchr(f.type, '['); b; b = strchr(b + 1, '['))
				if (b[1 + strspn(b + 1, "0123456789")] != ']')
					return refuse(why, why_size, "field %s: type %s", f.name,
						      f.type);
		} else if (n >= 10 && !memcmp(p, "print fmt:", 10)) {
			/* The print fmt is the rest of the text (its string may span lines). */
			n = (size_t)(end - p);
			print_fmt = true;
			/*
			 * libtraceevent 1.7 (Debian 12's, which trace-cmd prints with) faults on
			 * every record of an event that prints __get_rel_dynamic_array_len().
			 */
			if (memmem(p, n, "__get_rel_dynamic_array_len", 27))
				return refuse(why, why_size, "its print fmt uses "
					      "__get_rel_dynamic_array_len(), which libtraceevent "
					      "1.7 faults on");
			/* (libtraceevent's parser faults on a REC-> of no field) */
			if (!print_fields_known(format, p, n, why, why_size) ||
			    !print_divides_safely(p + 10, n - 10, why, why_size) ||
			    !print_arrays_of_fields(p, n, why, why_size))
				return false;
		}
		p += n + (nl != NULL);
	}
	return print_fmt || refuse(why, why_size, "no \"print fmt:\" line");
}

const char *usertp__format_next_field_line(const char *format, size_t *pos, size_t *len)
{
	const char *line = format + *pos;

	while (*line) {
		const char *nl = strchr(line, '\n');
		size_t n = nl ? (size_t)(nl - line) : strlen(line);
		const char *field = memmem(line, n, "field:", 6);

		*pos = (size_t)(line - format) + n + (nl != NULL);
		if (field) {
			*len = n;
			return line;
		}
		line += n + (nl != NULL);
	}
	return NULL;
}

bool usertp__format_split_id(const char *format, const char **head_end, unsigned int *id,
			     const char **body)
{
	const char *nl, *p;
	unsigned long v = 0;

	if (strncmp(format, "name: ", 6) || !(nl = strchr(format, '\n')) || strncmp(nl + 1, "ID: ", 4))
		return false;
	p = nl + 5;
	if (*p < '0' || *p > '9')
		return false;
	while (*p >= '0' && *p <= '9' && v <= UINT_MAX / 10)
		v = v * 10 + (unsigned long)(*p++ - '0');
	if (*p != '\n' || v > UINT_MAX)
		return false;
	*head_end = nl + 1;
	*id = (unsigned int)v;
	*body = p + 1;
	return true;
}

char *usertp__format_with_id(const char *format, unsigned int id)
{
	const char *head_end, *body;
	unsigned int old;
	char *text;

	if (!usertp__format_split_id(format, &head_end, &old, &body) ||
	    asprintf(&text, "%.*sID: %u\n%s", (int)(head_end - format), format, id, body) < 0)
		return NULL;
	return text;
}
