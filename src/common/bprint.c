/* SPDX-License-Identifier: MIT */
/* bprint.c - usertp_printk()'s formats, packed arguments, keys and lines (bprint.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bprint.h"
#include "hash.h"

/* One conversion of a format, as libtraceevent's make_bprint_args() walks it. */
struct conv {
	const char *start, *end; /* from its '%' to its last letter, included */
	int length;		 /* 0 none (int), 1 l or z, 2 ll or L */
	char letter;		 /* d i u x X o p s, or '%' */
};

/*
 * Read the conversion at @p (just after a '%').  Return: 0, or -EINVAL with *why.
 */
static int conv_read(const char *p, struct conv *c, const char **why)
{
	*c = (struct conv){ .start = p - 1 };
	if (*p == '%') {
		c->letter = '%';
		c->end = p;
		return 0;
	}
	for (;; p++) {
		switch (*p) {
		case '#': case '0' ... '9': case '.':
			continue;
		case 'l':
			c->length++;
			continue;
		case 'L':
			c->length = 2;
			continue;
		case 'z': case 'Z':
			c->length = 1;
			continue;
		case 'd': case 'i': case 'u': case 'x': case 'X': case 'o':
			break;
		case 'p':
			/* %pS, %ps, %px...: the kernel's, which libtraceevent reads its own way. */
			if ((p[1] >= 'a' && p[1] <= 'z') || (p[1] >= 'A' && p[1] <= 'Z') ||
			    (p[1] >= '0' && p[1] <= '9')) {
				*why = "%p followed by a letter or digit is read as the kernel's %pS, %px... "
				       "(put a space or a sign after %p)";
				return -EINVAL;
			}
			c->length = 1;
			break;
		case 's':
			if (c->length) {
				*why = "%ls: wide strings are not recorded";
				return -EINVAL;
			}
			break;
		case '-': case ' ': case '\'': case '+':
			*why = "the '-', ' ', '+' and '\\'' flags are not printed by libtraceevent";
			return -EINVAL;
		case '*':
			*why = "a width or precision '*' is not printed by libtraceevent (write the number)";
			return -EINVAL;
		case 'h': case 'j': case 't': case 'q':
			*why = "the length modifiers h, j and t are not read back by libtraceevent (use "
			       "int, long or long long)";
			return -EINVAL;
		case 'c':
			*why = "%c is not read back by libtraceevent (use %d, or %s with a string)";
			return -EINVAL;
		case 'e': case 'E': case 'f': case 'F': case 'g': case 'G': case 'a': case 'A':
			*why = "floating point is not recorded, as in the kernel's trace_printk()";
			return -EINVAL;
		case '\0':
			*why = "the format ends inside a conversion";
			return -EINVAL;
		default:
			*why = "a conversion the kernel's binary printk does not have";
			return -EINVAL;
		}
		if (c->length > 2) {
			*why = "too many 'l's";
			return -EINVAL;
		}
		c->letter = *p;
		c->end = p;
		return 0;
	}
}

int usertp__bprint_parse(const char *fmt, unsigned char *kinds, const char **why, size_t *at)
{
	unsigned int n = 0;
	struct conv c;

	/* (libtraceevent reads outside a printk_formats entry of fewer.) */
	if (strlen(fmt) < 2) {
		*why = "a format of fewer than 2 characters";
		*at = 0;
		return -EINVAL;
	}
	for (const char *p = fmt; *p; p++) {
		if (*p != '%')
			continue;
		if (conv_read(p + 1, &c, why) < 0) {
			*at = (size_t)(p - fmt);
			return -EINVAL;
		}
		p = c.end;
		if (c.letter == '%')
			continue;
		if (n + 1 > USERTP_BPRINT_MAX_ARGS) {
			*why = "more than 32 arguments";
			*at = (size_t)(c.start - fmt);
			return -EINVAL;
		}
		kinds[n++] = c.letter == 's' ? USERTP_BPRINT_STR
			     : c.length   ? USERTP_BPRINT_LONG
					  : USERTP_BPRINT_INT;
	}
	return (int)n;
}

/* The most a number argument takes, its alignment included (a string: 1 byte at least). */
#define ARG_ROOM_MAX (8 + 3)

size_t usertp__bprint_pack(const unsigned char *kinds, unsigned int n, va_list ap, void *buf,
			   size_t cap)
{
	unsigned char *out = buf;
	size_t off = 0;

	for (unsigned int i = 0; i < n; i++) {
		if (kinds[i] == USERTP_BPRINT_STR) {
			const char *s = va_arg(ap, const char *);
			/*
			 * Cut to leave room for the arguments after it: a record without all of
			 * them is one libtraceevent fails to print, and every bprint after it.
			 */
			size_t rest = (size_t)(n - i - 1) * ARG_ROOM_MAX;
			size_t room = cap > off + rest + 1 ? cap - off - rest - 1 : 0;
			size_t len;

			if (!s)
				s = "(null)";
			len = strnlen(s, room);
			memcpy(out + off, s, len);
			out[off + len] = 0;
			off += len + 1;
			continue;
		}
		off = (off + 3) & ~(size_t)3;
		if (kinds[i] == USERTP_BPRINT_INT) {
			unsigned int v = va_arg(ap, unsigned int);

			memcpy(out + off, &v, 4);
			off += 4;
		} else {
			unsigned long long v = va_arg(ap, unsigned long long);

			memcpy(out + off, &v, 8);
			off += 8;
		}
	}
	return (off + 3) & ~(size_t)3;
}

/* Reading packed arguments back, never past their end. */
struct args {
	const unsigned char *buf;
	size_t len, off;
};

static unsigned long long args_number(struct args *a, unsigned int size)
{
	unsigned long long v = 0;

	a->off = (a->off + 3) & ~(size_t)3;
	if (a->off + size > a->len) {
		a->off = a->len;
		return 0;
	}
	memcpy(&v, a->buf + a->off, size); /* (little-endian, as the writer) */
	a->off += size;
	return v;
}

static const char *args_string(struct args *a)
{
	const unsigned char *s = a->buf + a->off, *nul;

	if (a->off >= a->len)
		return "";
	nul = memchr(s, 0, a->len - a->off);
	if (!nul) {
		a->off = a->len;
		return "";
	}
	a->off += (size_t)(nul - s) + 1;
	return (const char *)s;
}

/* snprintf()'s way: append to @out of @size at *@len. */
static void put(char *out, size_t size, size_t *len, const char *spec, ...)
	__attribute__((format(printf, 4, 5)));
static void put(char *out, size_t size, size_t *len, const char *spec, ...)
{
	va_list ap;
	int n;

	va_start(ap, spec);
	n = vsnprintf(*len < size ? out + *len : NULL, *len < size ? size - *len : 0, spec, ap);
	va_end(ap);
	if (n > 0)
		*len += (size_t)n;
}

/* Each conversion is printed with its own text, checked by conv_read() first. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
size_t usertp__bprint_text(const char *fmt, const void *buf, size_t buflen, char *out, size_t size)
{
	struct args a = { buf, buflen, 0 };
	size_t len = 0, flen = strlen(fmt);
	const char *why;

	if (flen && fmt[flen - 1] == '\n')
		flen--;
	if (size)
		out[0] = 0;
	for (const char *p = fmt; p < fmt + flen; p++) {
		char spec[48], *s = spec;
		struct conv c;

		if (*p != '%' || conv_read(p + 1, &c, &why) < 0 || c.end >= fmt + flen) {
			/* The text up to the next '%', at once. */
			size_t run = strcspn(p + 1, "%") + 1;

			if (run > (size_t)(fmt + flen - p))
				run = (size_t)(fmt + flen - p);
			put(out, size, &len, "%.*s", (int)run, p);
			p += run - 1;
			continue;
		}
		p = c.end;
		if (c.letter == '%') {
			put(out, size, &len, "%%");
			continue;
		}
		/* The conversion again, its length modifier made ll (the values are read wide). */
		for (const char *q = c.start; q < c.end && s < spec + sizeof(spec) - 4; q++)
			if (*q != 'l' && *q != 'L' && *q != 'z' && *q != 'Z')
				*s++ = *q;
		if (c.letter == 's') {
			*s++ = 's';
			*s = 0;
			const char *str = args_string(&a);

			put(out, size, &len, spec, str);
			continue;
		}
		if (c.letter == 'p') {
			void *ptr = (void *)(uintptr_t)args_number(&a, 8);

			*s++ = 'p';
			*s = 0;
			put(out, size, &len, spec, ptr);
			continue;
		}
		{
			unsigned long long v = args_number(&a, c.length ? 8 : 4);
			bool is_signed = c.letter == 'd' || c.letter == 'i';

			/* An int is printed as an int: its 4 bytes, sign-extended for %d. */
			if (!c.length)
				v = is_signed ? (unsigned long long)(long long)(int)v : (unsigned int)v;
			*s++ = 'l';
			*s++ = 'l';
			*s++ = c.letter;
			*s = 0;
			put(out, size, &len, spec, v);
		}
	}
	return len;
}
#pragma GCC diagnostic pop

/* Keys in user space's range (below 2^47), never 0: a record never names a kernel address. */
static uint64_t user_key(uint64_t h)
{
	h = (h ^ (h >> 47)) & 0x7fffffffffffull;
	return h < 0x10000 ? h + 0x10000 : h;
}

uint64_t usertp__printk_key(const char *fmt)
{
	return user_key(usertp__fnv1a(USERTP_FNV1A_START, fmt, strlen(fmt)));
}

uint64_t usertp__printk_site_key(const char *function, const char *fmt)
{
	uint64_t h = usertp__fnv1a(USERTP_FNV1A_START, function, strlen(function) + 1);

	return user_key(usertp__fnv1a(h, fmt, strlen(fmt)));
}

size_t usertp__printk_format_line(char *out, size_t size, uint64_t key, const char *fmt)
{
	size_t len = 0;

	put(out, size, &len, "0x%llx : \"", (unsigned long long)key);
	for (const char *p = fmt; *p; p++) {
		switch (*p) {
		case '\n':
			put(out, size, &len, "\\n");
			break;
		case '\t':
			put(out, size, &len, "\\t");
			break;
		case '"':
			put(out, size, &len, "\\\"");
			break;
		default: /* a backslash too: the kernel writes it as it is */
			put(out, size, &len, "%c", *p);
		}
	}
	put(out, size, &len, "\"\n");
	return len;
}

size_t usertp__printk_site_line(char *out, size_t size, uint64_t key, const char *function)
{
	size_t len = 0;

	put(out, size, &len, "%016llx t %s\n", (unsigned long long)key, function);
	return len;
}

/* A key a program may use: user space's range, as user_key() makes them. */
static bool key_ok(uint64_t key)
{
	return key >= 0x10000 && key < (1ull << 47);
}

uint64_t usertp__printk_format_parse(const char *line, size_t len, char *fmt, size_t size)
{
	const char *p, *end = line + len - 1; /* the closing quote */
	char *after;
	uint64_t key;
	size_t n = 0;

	if (len < 8 || strncmp(line, "0x", 2) || line[len - 1] != '"' || len > 4200)
		return 0;
	key = strtoull(line + 2, &after, 16);
	if (after == line + 2 || (size_t)(after - line) + 4 + 3 > len || strncmp(after, " : \"", 4) ||
	    !key_ok(key))
		return 0;
	for (p = after + 4; p < end; p++) {
		char c = *p;

		if ((unsigned char)c < 0x20 && c != '\t')
			return 0;
		/* The kernel's escapes (usertp__printk_format_line()); a lone backslash is itself. */
		if (c == '\\' && p + 1 < end && (p[1] == 'n' || p[1] == 't' || p[1] == '"'))
			c = *++p == 'n' ? '\n' : *p == 't' ? '\t' : '"';
		if (fmt && n + 1 < size)
			fmt[n++] = c;
	}
	if (fmt && size)
		fmt[n] = 0;
	return key;
}

uint64_t usertp__printk_site_parse(const char *line, size_t len, char *function, size_t size)
{
	char *end;
	uint64_t key;
	size_t n;

	if (len < 20 || len > 16 + 3 + 255)
		return 0;
	key = strtoull(line, &end, 16);
	if (end != line + 16 || strncmp(end, " t ", 3) || !key_ok(key))
		return 0;
	for (size_t i = 19; i < len; i++)
		if ((unsigned char)line[i] <= ' ' || (unsigned char)line[i] >= 0x7f || line[i] == '[')
			return 0;
	if (function && size) {
		n = len - 19 < size - 1 ? len - 19 : size - 1;
		memcpy(function, line + 19, n);
		function[n] = 0;
	}
	return key;
}
