/* SPDX-License-Identifier: MIT */
/*
 * fast-print.c - an event's text without libtraceevent's work per conversion (which formats:
 * private/usertp-consumer-private.h).  Each event's print format is turned once into a plan: pieces of
 * literal text (escapes done as libtraceevent does them) and conversions, each with the field
 * it prints and the C type libtraceevent casts the field's value to.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "private/usertp-consumer-private.h"

void usertp__text_put(struct usertp__text *t, const char *s, size_t len)
{
	if (t->len + len + 1 > t->cap) {
		size_t cap = (t->cap ? t->cap : 256) * 2;
		char *buf;

		while (cap < t->len + len + 1)
			cap *= 2;
		buf = realloc(t->buf, cap);
		if (!buf) {
			t->failed = true;
			return;
		}
		t->buf = buf;
		t->cap = cap;
	}
	memcpy(t->buf + t->len, s, len);
	t->len += len;
	t->buf[t->len] = 0;
}

void usertp__text_putc(struct usertp__text *t, char c)
{
	if (t->len + 2 <= t->cap) {
		t->buf[t->len++] = c;
		t->buf[t->len] = 0;
	} else {
		usertp__text_put(t, &c, 1);
	}
}

void usertp__text_put_u64(struct usertp__text *t, unsigned long long v, int width, bool left,
			  char pad)
{
	char digits[24], out[64];
	int n = 0, len = 0;

	do {
		digits[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	if (width > 40)
		width = 40;
	for (; !left && len < width - n; len++)
		out[len] = pad;
	while (n)
		out[len++] = digits[--n];
	for (; left && len < width; len++)
		out[len] = ' ';
	usertp__text_put(t, out, (size_t)len);
}

enum piece_kind {
	PIECE_TEXT,	/* literal text */
	PIECE_NUMBER,	/* %d %i %u %x %X %o of a field */
	PIECE_STRING,	/* %s of __get_str() / __get_rel_str() */
	PIECE_ARRAY,	/* %s of a char array field */
};

struct piece {
	enum piece_kind kind;
	char *text;	   /* PIECE_TEXT: the text; otherwise the conversion ("%5lu") */
	size_t text_len;
	bool plain;	   /* no flags, width or precision: formatted here */
	char conv;	   /* d i u x X o s */
	int ls;		   /* libtraceevent's length: -2 hh, -1 h, 0, 1 l, 2 ll */
	const struct tep_format_field *field;
};

/* An event's plan: NULL pieces and !usable when libtraceevent prints it. */
struct plan {
	bool made, usable;
	struct piece *pieces;
	unsigned int nr;
};

struct usertp__fast_print {
	struct plan *plans; /* by event id */
	unsigned int nr_plans;
};

struct usertp__fast_print *usertp__fast_print_new(void)
{
	return calloc(1, sizeof(struct usertp__fast_print));
}

static void plan_clear(struct plan *p)
{
	for (unsigned int i = 0; i < p->nr; i++)
		free(p->pieces[i].text);
	free(p->pieces);
	p->pieces = NULL;
	p->nr = 0;
}

void usertp__fast_print_free(struct usertp__fast_print *fp)
{
	if (!fp)
		return;
	for (unsigned int i = 0; i < fp->nr_plans; i++)
		plan_clear(&fp->plans[i]);
	free(fp->plans);
	free(fp);
}

static bool add_piece(struct plan *p, const struct piece *piece)
{
	struct piece *pieces = realloc(p->pieces, (p->nr + 1) * sizeof(*pieces));

	if (!pieces)
		return false;
	p->pieces = pieces;
	p->pieces[p->nr++] = *piece;
	return true;
}

/* Literal text [start, end) with libtraceevent's escapes (\n \t \r \\, else the char). */
static bool add_text(struct plan *p, const char *start, const char *end)
{
	char *text = malloc((size_t)(end - start) + 1);
	size_t len = 0;

	if (!text)
		return false;
	for (const char *c = start; c < end; c++) {
		if (*c == '\\' && c + 1 < end) {
			c++;
			text[len++] = *c == 'n' ? '\n' : *c == 't' ? '\t' : *c == 'r' ? '\r' : *c;
		} else if (*c == '%') { /* "%%" (the only % in text) */
			text[len++] = '%';
			c++;
		} else {
			text[len++] = *c;
		}
	}
	text[len] = 0;
	if (!len) {
		free(text);
		return true;
	}
	if (!add_piece(p, &(struct piece){ .kind = PIECE_TEXT, .text = text, .text_len = len })) {
		free(text);
		return false;
	}
	return true;
}

/* The field an argument prints, when it is a plain field of the record (no cast, no expression). */
static struct tep_format_field *arg_field(struct tep_event *event, struct tep_print_arg *arg)
{
	const char *name;

	if (!arg)
		return NULL;
	if (arg->type == TEP_PRINT_FIELD)
		name = arg->field.name;
	else if (arg->type == TEP_PRINT_STRING)
		name = arg->string.string;
	else
		return NULL;
	return name ? tep_find_any_field(event, name) : NULL;
}

/*
 * One conversion at *fmt ('%' not followed by '%'), with its argument @arg.  Return: false
 * when it is not one of ours (the plan is then not usable).
 */
static bool add_conversion(struct plan *p, struct tep_event *event, const char **fmt,
			   struct tep_print_arg *arg)
{
	const char *start = *fmt, *c = start + 1;
	struct piece piece = { 0 };
	struct tep_format_field *field;
	int ls = 0, digits = 0;
	bool plain = true;

	for (;; c++) {
		/* A width or precision over 999: libtraceevent's (it grows its text as needed). */
		digits = *c >= '0' && *c <= '9' ? digits + 1 : 0;
		if (digits > 3)
			return false;
		if (*c == 'h')
			ls--;
		else if (*c == 'l')
			ls++;
		else if (*c == 'L')
			ls = 2;
		else if (*c == 'z' || *c == 'Z')
			ls = 1;
		else if (*c == '#' || *c == '-' || *c == '.' || (*c >= '0' && *c <= '9'))
			plain = false;
		else
			break;
	}
	if (!strchr("diuxXos", *c) || !*c || ls < -2 || ls > 2 || c - start > 29)
		return false;
	field = arg_field(event, arg);
	if (!field)
		return false;
	piece.conv = *c;
	piece.ls = *c == 's' ? 0 : ls;
	piece.field = field;
	piece.plain = plain && (*c != 'o') && (ls >= 0 || *c == 's');
	if (*c == 's') {
		if (arg->type == TEP_PRINT_STRING)
			piece.kind = PIECE_STRING;
		else if ((field->flags & TEP_FIELD_IS_ARRAY) && field->size > 0 &&
			 !(field->flags & TEP_FIELD_IS_DYNAMIC))
			piece.kind = PIECE_ARRAY;
		else
			return false; /* (a long-sized field is printed as a pointer) */
	} else {
		if (arg->type != TEP_PRINT_FIELD ||
		    (field->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_STRING | TEP_FIELD_IS_DYNAMIC)) ||
		    (field->size != 1 && field->size != 2 && field->size != 4 && field->size != 8))
			return false;
		piece.kind = PIECE_NUMBER;
	}
	piece.text_len = (size_t)(c + 1 - start);
	piece.text = strndup(start, piece.text_len);
	if (!piece.text || !add_piece(p, &piece)) {
		free(piece.text);
		return false;
	}
	*fmt = c + 1;
	return true;
}

static void plan_make(struct plan *p, struct tep_event *event)
{
	const char *fmt = event->print_fmt.format, *text;
	struct tep_print_arg *arg = event->print_fmt.args;

	p->made = true;
	if (!fmt || event->handler || (event->flags & (TEP_EVENT_FL_FAILED | TEP_EVENT_FL_ISBPRINT |
							TEP_EVENT_FL_PRINTRAW)))
		return;
	text = fmt;
	while (*fmt) {
		if (*fmt == '\\' && fmt[1]) {
			fmt += 2;
		} else if (*fmt == '%' && fmt[1] == '%') {
			fmt += 2;
		} else if (*fmt == '%') {
			if (!add_text(p, text, fmt) || !add_conversion(p, event, &fmt, arg))
				goto unusable;
			arg = arg->next;
			text = fmt;
		} else {
			fmt++;
		}
	}
	if (arg || !add_text(p, text, fmt))
		goto unusable; /* (more arguments than conversions: libtraceevent's case) */
	p->usable = true;
	return;
unusable:
	plan_clear(p);
}

static struct plan *plan_of(struct usertp__fast_print *fp, struct tep_event *event)
{
	unsigned int id = (unsigned int)event->id;

	if (event->id < 0 || id > 65535)
		return NULL;
	if (id >= fp->nr_plans) {
		struct plan *plans = realloc(fp->plans, (id + 1) * sizeof(*plans));

		if (!plans)
			return NULL;
		memset(plans + fp->nr_plans, 0, (id + 1 - fp->nr_plans) * sizeof(*plans));
		fp->plans = plans;
		fp->nr_plans = id + 1;
	}
	if (!fp->plans[id].made)
		plan_make(&fp->plans[id], event);
	return fp->plans[id].usable ? &fp->plans[id] : NULL;
}

static unsigned long long read_number(const unsigned char *at, int size)
{
	switch (size) {
	case 1:
		return *at;
	case 2: {
		uint16_t v;

		memcpy(&v, at, 2);
		return v;
	}
	case 4: {
		uint32_t v;

		memcpy(&v, at, 4);
		return v;
	}
	default: {
		uint64_t v;

		memcpy(&v, at, 8);
		return v;
	}
	}
}

static void put_hex(struct usertp__text *t, unsigned long long v, bool upper)
{
	const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	char out[16];
	int n = 16;

	do {
		out[--n] = digits[v & 15];
		v >>= 4;
	} while (v);
	usertp__text_put(t, out + n, (size_t)(16 - n));
}

/*
 * The conversions below are the event's, checked by add_conversion(): flags, a width and a
 * precision of at most three digits, a length, one of d i u x X o s; never '*' or 'n'.
 */
#pragma GCC diagnostic ignored "-Wformat-nonliteral"

/* A number, as printf(conversion, value cast by ls) prints it. */
static void put_number(struct usertp__text *t, const struct piece *c, unsigned long long val)
{
	char buf[128];
	int n = 0;

	if (c->plain) {
		/* The value as the cast libtraceevent makes: int, long, long long (64-bit longs). */
		long long v = c->ls == 0 ? (long long)(int)val : (long long)val;
		unsigned long long u = c->ls == 0 ? (unsigned int)val : val;

		switch (c->conv) {
		case 'd':
		case 'i':
			if (v < 0) {
				usertp__text_putc(t, '-');
				usertp__text_put_u64(t, 0ull - (unsigned long long)v, 0, false, ' ');
			} else {
				usertp__text_put_u64(t, (unsigned long long)v, 0, false, ' ');
			}
			return;
		case 'u':
			usertp__text_put_u64(t, u, 0, false, ' ');
			return;
		default:
			put_hex(t, u, c->conv == 'X');
			return;
		}
	}
	switch (c->ls) {
	case -2:
		n = snprintf(buf, sizeof(buf), c->text, (char)val);
		break;
	case -1:
		n = snprintf(buf, sizeof(buf), c->text, (short)val);
		break;
	case 0:
		n = snprintf(buf, sizeof(buf), c->text, (int)val);
		break;
	case 1:
		n = snprintf(buf, sizeof(buf), c->text, (long)val);
		break;
	default:
		n = snprintf(buf, sizeof(buf), c->text, (long long)val);
		break;
	}
	if (n > 0)
		usertp__text_put(t, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

static void put_string(struct usertp__text *t, const struct piece *c, const char *s, size_t len)
{
	char small[256], *buf = small;
	int n;

	if (c->plain) {
		usertp__text_put(t, s, len);
		return;
	}
	/* With a width or precision: printf's, on a NUL-terminated copy. */
	n = snprintf(small, sizeof(small), c->text, s);
	if (n >= (int)sizeof(small) && (buf = malloc((size_t)n + 1)) != NULL)
		snprintf(buf, (size_t)n + 1, c->text, s);
	if (n > 0 && buf)
		usertp__text_put(t, buf, buf == small && n >= (int)sizeof(small) ? sizeof(small) - 1
										 : (size_t)n);
	if (buf != small)
		free(buf);
}

/* Where a dynamic field's string is, as libtraceevent finds it.  Return: false: let it. */
static bool dynamic_string(const struct tep_format_field *f, const unsigned char *data, int size,
			   const char **s, size_t *len)
{
	unsigned long long word;
	unsigned int off, dlen;
	const void *nul;

	if (f->offset + f->size > size || (f->size != 2 && f->size != 4))
		return false;
	word = read_number(data + f->offset, f->size);
	off = (unsigned int)(word & 0xffff);
	dlen = f->size == 2 ? (unsigned int)size - off : (unsigned int)((word >> 16) & 0xffff);
	if (f->flags & TEP_FIELD_IS_RELATIVE)
		off += (unsigned int)(f->offset + f->size);
	if (off + dlen > (unsigned int)size || off >= (unsigned int)size)
		return false;
	*s = (const char *)data + off;
	if (!dlen) {
		*len = SIZE_MAX; /* nothing printed */
		return true;
	}
	/* libtraceevent prints up to the NUL, wherever it is: only when it is in the record. */
	nul = memchr(*s, 0, (size_t)size - off);
	if (!nul)
		return false;
	*len = (size_t)((const char *)nul - *s);
	return true;
}

bool usertp__fast_print_info(struct usertp__fast_print *fp, struct tep_event *event,
			     struct tep_record *rec, struct usertp__text *t)
{
	const struct plan *p = plan_of(fp, event);
	const unsigned char *data = rec->data;
	size_t start = t->len;

	if (!p)
		return false;
	for (unsigned int i = 0; i < p->nr; i++) {
		const struct piece *c = &p->pieces[i];
		const struct tep_format_field *f = c->field;
		const char *s;
		size_t len;

		switch (c->kind) {
		case PIECE_TEXT:
			usertp__text_put(t, c->text, c->text_len);
			break;
		case PIECE_NUMBER:
			if (f->offset + f->size > rec->size)
				goto libtraceevent;
			put_number(t, c, read_number(data + f->offset, f->size));
			break;
		case PIECE_STRING:
			if (!dynamic_string(f, data, rec->size, &s, &len))
				goto libtraceevent;
			if (len != SIZE_MAX)
				put_string(t, c, s, len);
			break;
		case PIECE_ARRAY:
			if (f->offset + f->size > rec->size)
				goto libtraceevent;
			s = (const char *)data + f->offset;
			len = strnlen(s, (size_t)f->size);
			if (c->plain) {
				usertp__text_put(t, s, len);
			} else {
				char *copy = strndup(s, len);

				if (!copy)
					goto libtraceevent;
				put_string(t, c, copy, len);
				free(copy);
			}
			break;
		}
	}
	return !t->failed;
libtraceevent:
	t->len = start;
	if (t->buf)
		t->buf[start] = 0;
	return false;
}
