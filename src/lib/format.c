/* SPDX-License-Identifier: MIT */
/*
 * format.c - the "format" text of an event, byte for byte as tracefs writes it, and the
 * TRACE_DEFINE_ENUM() replacement of enum names in print fmt.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct out {
	char *buf;
	size_t size;
	size_t len;
};

static void out_printf(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void out_printf(struct out *o, const char *fmt, ...)
{
	size_t room = o->len < o->size ? o->size - o->len : 0;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(room ? o->buf + o->len : NULL, room, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->len += (size_t)n;
}

/*
 * Plain char arrays and strings show signed:0 whatever the compiler's char is: that is what
 * the kernel (built with -funsigned-char) writes and what every reader expects of text.
 */
static int shown_signed(const struct usertp_event_field *f)
{
	if (f->kind != USERTP_FIELD_SCALAR) {
		const char *t = f->type;

		if (!strncmp(t, "__data_loc ", 11))
			t += 11;
		else if (!strncmp(t, "__rel_loc ", 10))
			t += 10;
		if (!strncmp(t, "char[", 5))
			return 0;
	}
	return f->is_signed;
}

int usertp__format_write(const struct usertp__event_node *node, char *buf, size_t size)
{
	const struct usertp_event *ev = node->instances[0];
	struct out o = { buf, size, 0 };
	unsigned int i;

	out_printf(&o, "name: %s\nID: %d\nformat:\n", ev->name, node->id);
	out_printf(&o, "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
		       "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
		       "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
		       "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n");
	for (i = 0; i < node->nr_fields; i++) {
		const struct usertp_event_field *f = &node->fields[i];
		const char *bracket = strchr(f->type, '[');

		if (f->kind == USERTP_FIELD_ARRAY && bracket)
			/* "char[16]" is shown as "char name[16]" */
			out_printf(&o, "\tfield:%.*s %s%s;", (int)(bracket - f->type), f->type,
				   f->name, bracket);
		else
			out_printf(&o, "\tfield:%s %s;", f->type, f->name);
		out_printf(&o, "\toffset:%u;\tsize:%u;\tsigned:%d;\n", f->offset, f->size,
			   shown_signed(f));
	}
	out_printf(&o, "\nprint fmt: %s\n", node->print_fmt);
	if (size)
		buf[o.len < size ? o.len : size - 1] = '\0';
	return (int)o.len;
}

static bool is_ident(int c)
{
	return isalnum(c) || c == '_';
}

/* The value of an enum name defined for @system by a registered object, if any. */
static bool eval_lookup(const char *system, const char *name, size_t len, unsigned long *value)
{
	unsigned int i, n = usertp__objects_count_locked();

	for (i = 0; i < n; i++) {
		struct usertp__object *obj = usertp__object_at_locked(i);
		struct usertp_eval_map **m;

		if (!obj->eval_maps)
			continue;
		for (m = obj->eval_maps; m < obj->eval_maps_end; m++) {
			const struct usertp_eval_map *map = *m;

			if (!map || strcmp(map->system, system) || strlen(map->eval_string) != len ||
			    memcmp(map->eval_string, name, len))
				continue;
			*value = map->eval_value;
			return true;
		}
	}
	return false;
}

/* Sizes of the basic types a print fmt may take sizeof() of. */
static const struct {
	const char *type;
	unsigned int size;
} basic_types[] = {
	{ "char", 1 }, { "signed char", 1 }, { "unsigned char", 1 }, { "bool", 1 }, { "_Bool", 1 },
	{ "short", sizeof(short) }, { "short int", sizeof(short) },
	{ "unsigned short", sizeof(short) }, { "unsigned short int", sizeof(short) },
	{ "int", sizeof(int) }, { "signed", sizeof(int) }, { "unsigned", sizeof(int) },
	{ "unsigned int", sizeof(int) }, { "long", sizeof(long) }, { "long int", sizeof(long) },
	{ "unsigned long", sizeof(long) }, { "unsigned long int", sizeof(long) },
	{ "long long", sizeof(long long) }, { "unsigned long long", sizeof(long long) },
	{ "float", sizeof(float) }, { "double", sizeof(double) },
	{ "u8", 1 }, { "s8", 1 }, { "u16", 2 }, { "s16", 2 }, { "u32", 4 }, { "s32", 4 },
	{ "u64", 8 }, { "s64", 8 }, { "uint8_t", 1 }, { "int8_t", 1 }, { "uint16_t", 2 },
	{ "int16_t", 2 }, { "uint32_t", 4 }, { "int32_t", 4 }, { "uint64_t", 8 }, { "int64_t", 8 },
	{ "size_t", sizeof(size_t) }, { "pid_t", 4 }, { "void *", sizeof(void *) },
};

/*
 * "sizeof(type)" at @s?  Return the length of the whole expression and its value, when a
 * TRACE_DEFINE_SIZEOF() or the table of basic types knows the type (libtraceevent only knows
 * a few type names; numbers it always reads).
 */
static size_t sizeof_expr(const char *system, const char *s, unsigned long *value)
{
	char type[64], text[80];
	size_t len = 0, i;
	const char *p = s + 6;

	if (strncmp(s, "sizeof", 6) || *p != '(')
		return 0;
	for (p++; *p && *p != ')'; p++) {
		if (isspace((unsigned char)*p) && (!len || type[len - 1] == ' '))
			continue;
		if (len + 1 >= sizeof(type))
			return 0;
		type[len++] = isspace((unsigned char)*p) ? ' ' : *p;
	}
	if (*p != ')')
		return 0;
	while (len && type[len - 1] == ' ')
		len--;
	type[len] = '\0';
	/* TRACE_DEFINE_SIZEOF() of the event's system first, then the basic types. */
	snprintf(text, sizeof(text), "sizeof(%s)", type);
	if (eval_lookup(system, text, strlen(text), value))
		return (size_t)(p + 1 - s);
	for (i = 0; i < sizeof(basic_types) / sizeof(basic_types[0]); i++) {
		if (!strcmp(type, basic_types[i].type)) {
			*value = basic_types[i].size;
			return (size_t)(p + 1 - s);
		}
	}
	return 0;
}

/*
 * Replace, in the arguments of a print fmt, every identifier that a TRACE_DEFINE_ENUM() of
 * the same system names by its value, and sizeof() of a basic type by the size; string
 * literals and REC-> field names are left alone.
 * Return: a new string (NULL when out of memory).
 */
char *usertp__print_fmt_eval(const char *fmt, const char *system)
{
	size_t cap = strlen(fmt) * 2 + 64, len = 0;
	char *res = malloc(cap);
	const char *s = fmt;
	char quote = 0;

	if (!res)
		return NULL;
	while (*s) {
		char piece[32];
		const char *text = s;
		size_t n = 1;

		if (quote) {
			if (*s == '\\' && s[1])
				n = 2;
			else if (*s == quote)
				quote = 0;
		} else if (*s == '"' || *s == '\'') {
			quote = *s;
		} else if ((isalpha((unsigned char)*s) || *s == '_') &&
			   (s == fmt || !is_ident((unsigned char)s[-1]))) {
			unsigned long value;
			size_t whole = sizeof_expr(system, s, &value);
			bool member = (s - fmt >= 2 && s[-1] == '>' && s[-2] == '-') ||
				      (s > fmt && s[-1] == '.');

			while (is_ident((unsigned char)s[n]))
				n++;
			if (whole)
				n = whole;
			if (!member && (whole || eval_lookup(system, s, n, &value))) {
				snprintf(piece, sizeof(piece), "%lu", value);
				text = piece;
				s += n;
				n = strlen(piece);
				goto append;
			}
		}
		s += n;
append:
		if (len + n + 1 > cap) {
			char *bigger;

			cap = (len + n + 1) * 2;
			bigger = realloc(res, cap);
			if (!bigger) {
				free(res);
				return NULL;
			}
			res = bigger;
		}
		memcpy(res + len, text, n);
		len += n;
	}
	res[len] = '\0';
	return res;
}
