/* SPDX-License-Identifier: MIT */
/*
 * print.c - the text side of events: the usertp_seq buffer, the helpers behind
 * __print_flags() and friends (same output as the kernel's trace_print_*_seq()), the string
 * helpers that TP_fast_assign uses, and usertp_event_print().
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

void usertp__seq_init(struct usertp_seq *s, char *buf, unsigned int size)
{
	s->buffer = buf;
	s->size = size;
	s->len = 0;
	s->full = 0;
	if (size)
		buf[0] = '\0';
}

/* Append @n bytes vsnprintf() said it wrote (or would have) at the end of @s. */
static void seq_took(struct usertp_seq *s, int n, unsigned int room)
{
	if (n < 0)
		return;
	if ((unsigned int)n >= room) {
		s->len = s->size - 1;
		s->full = 1;
	} else {
		s->len += (unsigned int)n;
	}
}

static void seq_vprintf_plain(struct usertp_seq *s, const char *fmt, va_list ap)
{
	unsigned int room = s->size > s->len ? s->size - s->len : 0;

	if (s->full || !room)
		return;
	seq_took(s, vsnprintf(s->buffer + s->len, room, fmt, ap), room);
}

static void seq_format1(struct usertp_seq *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	seq_vprintf_plain(s, fmt, ap);
	va_end(ap);
}

/* Is @c one of the kernel's %p extensions that print a symbol (%pS %ps %pF %pf %pB)? */
static bool symbol_ext(char c)
{
	return c == 'S' || c == 's' || c == 'F' || c == 'f' || c == 'B';
}

/*
 * The kernel's %pS (name+0xoff/0xsize) and %ps (name) of @addr, from the program's own
 * symbols (dladdr()), as the kernel's from kallsyms; without one, what the kernel prints
 * then, the address in hex.
 */
static void seq_symbol(struct usertp_seq *s, const void *addr, bool offset)
{
	const ElfW(Sym) *sym = NULL;
	Dl_info info;

	if (!addr || !dladdr1(addr, &info, (void **)&sym, RTLD_DL_SYMENT) || !info.dli_sname ||
	    !info.dli_saddr) {
		seq_format1(s, "0x%lx", (unsigned long)(uintptr_t)addr);
		return;
	}
	if (!offset) {
		seq_format1(s, "%s", info.dli_sname);
		return;
	}
	seq_format1(s, "%s+0x%lx/0x%lx", info.dli_sname,
		    (unsigned long)((uintptr_t)addr - (uintptr_t)info.dli_saddr),
		    (unsigned long)(sym ? sym->st_size : 0));
}

/*
 * A format with the kernel's symbol extensions (%pS and friends), which printf() prints as
 * %p and a letter: each conversion printed on its own, its argument taken by its type.
 */
static void seq_vprintf_ext(struct usertp_seq *s, const char *fmt, va_list ap)
{
	while (*fmt && !s->full) {
		const char *pct = strchr(fmt, '%');
		char spec[64];
		size_t len;
		int longs = 0;
		bool size_t_arg = false, long_double = false;

		if (!pct) {
			seq_format1(s, "%s", fmt);
			return;
		}
		if (pct > fmt)
			seq_format1(s, "%.*s", (int)(pct - fmt), fmt);
		/* flags, width, precision, length, then the conversion */
		len = 1 + strspn(pct + 1, "-+ #0'123456789.*");
		for (;; len++) {
			char c = pct[len];

			if (c == 'l')
				longs++;
			else if (c == 'z' || c == 'j' || c == 't')
				size_t_arg = true;
			else if (c == 'L')
				long_double = true;
			else if (c != 'h')
				break;
		}
		if (!pct[len] || len + 2 > sizeof(spec)) {
			seq_format1(s, "%s", pct);
			return;
		}
		memcpy(spec, pct, len + 1);
		spec[len + 1] = 0;
		fmt = pct + len + 1;
		if (spec[len] == '%') {
			seq_format1(s, "%%");
			continue;
		}
		if (spec[len] == 'p' && symbol_ext(*fmt)) {
			seq_symbol(s, va_arg(ap, void *), *fmt != 's' && *fmt != 'f');
			fmt++;
			continue;
		}
		/* (a '*' width or precision takes an int first) */
		for (const char *star = strchr(spec, '*'); star; star = strchr(star + 1, '*')) {
			int v = va_arg(ap, int);
			char digits[16];
			size_t dlen = (size_t)snprintf(digits, sizeof(digits), "%d", v);

			if (strlen(spec) + dlen >= sizeof(spec))
				return;
			memmove((char *)star + dlen, star + 1, strlen(star + 1) + 1);
			memcpy((char *)star, digits, dlen);
			len += dlen - 1;
		}
		switch (spec[len]) {
		case 'd': case 'i': case 'u': case 'x': case 'X': case 'o': case 'c':
			if (size_t_arg)
				seq_format1(s, spec, va_arg(ap, size_t));
			else if (longs >= 2)
				seq_format1(s, spec, va_arg(ap, long long));
			else if (longs)
				seq_format1(s, spec, va_arg(ap, long));
			else
				seq_format1(s, spec, va_arg(ap, int));
			break;
		case 'e': case 'E': case 'f': case 'F': case 'g': case 'G': case 'a': case 'A':
			if (long_double)
				seq_format1(s, spec, va_arg(ap, long double));
			else
				seq_format1(s, spec, va_arg(ap, double));
			break;
		case 's':
			seq_format1(s, spec, va_arg(ap, const char *));
			break;
		case 'p':
			seq_format1(s, spec, va_arg(ap, void *));
			break;
		default:
			seq_format1(s, "%s", spec); /* (not a conversion printf knows: as written) */
			break;
		}
	}
}

static void seq_vprintf(struct usertp_seq *s, const char *fmt, va_list ap)
{
	for (const char *p = strstr(fmt, "%p"); p; p = strstr(p + 2, "%p")) {
		if (symbol_ext(p[2]) && (p == fmt || p[-1] != '%')) {
			seq_vprintf_ext(s, fmt, ap);
			return;
		}
	}
	seq_vprintf_plain(s, fmt, ap);
}

void usertp_seq_printf(struct usertp_seq *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	seq_vprintf(s, fmt, ap);
	va_end(ap);
}

static void seq_puts(struct usertp_seq *s, const char *str)
{
	usertp_seq_printf(s, "%s", str);
}

/* Helpers write into p and return their own text: terminate it and step past the NUL. */
static const char *seq_end_string(struct usertp_seq *p, unsigned int start)
{
	const char *ret = p->buffer + start;

	if (p->len + 1 < p->size)
		p->len++; /* keep the NUL that vsnprintf left */
	return ret;
}

const char *usertp_print_flags_seq(struct usertp_seq *p, const char *delim, unsigned long flags,
				   const struct usertp_print_flag *flag_array)
{
	unsigned int start = p->len;
	bool first = true;
	int i;

	p->buffer[p->len] = '\0';
	for (i = 0; flag_array[i].name && flags; i++) {
		unsigned long mask = flag_array[i].mask;

		if ((flags & mask) != mask)
			continue;
		flags &= ~mask;
		if (!first && delim)
			seq_puts(p, delim);
		first = false;
		seq_puts(p, flag_array[i].name);
	}
	if (flags) {
		if (!first && delim)
			seq_puts(p, delim);
		usertp_seq_printf(p, "0x%lx", flags);
	}
	return seq_end_string(p, start);
}

const char *usertp_print_symbols_seq(struct usertp_seq *p, unsigned long val,
				     const struct usertp_print_flag *symbol_array)
{
	unsigned int start = p->len;
	int i;

	p->buffer[p->len] = '\0';
	for (i = 0; symbol_array[i].name; i++) {
		if (val != symbol_array[i].mask)
			continue;
		seq_puts(p, symbol_array[i].name);
		break;
	}
	if (!symbol_array[i].name)
		usertp_seq_printf(p, "0x%lx", val);
	return seq_end_string(p, start);
}

const char *usertp_print_hex_seq(struct usertp_seq *p, const void *buf, int len, int concatenate)
{
	const unsigned char *b = buf;
	unsigned int start = p->len;
	int i;

	p->buffer[p->len] = '\0';
	for (i = 0; i < len; i++)
		usertp_seq_printf(p, "%s%2.2x", concatenate || i == 0 ? "" : " ", b[i]);
	return seq_end_string(p, start);
}

/*
 * Elements in unsigned decimal separated by spaces.  This is libtraceevent's rendering (the
 * kernel's own trace file prints "{0x1,0x2}"), chosen so that usertp and trace-cmd print the
 * same lines for the same records.
 */
const char *usertp_print_array_seq(struct usertp_seq *p, const void *buf, int count,
				   size_t el_size)
{
	const unsigned char *ptr = buf;
	unsigned int start = p->len;
	int i;

	p->buffer[p->len] = '\0';
	for (i = 0; i < count; i++, ptr += el_size) {
		uint64_t v = 0;

		if (i)
			seq_puts(p, " ");
		switch (el_size) {
		case 1: v = *ptr; break;
		case 2: { uint16_t x; memcpy(&x, ptr, 2); v = x; break; }
		case 4: { uint32_t x; memcpy(&x, ptr, 4); v = x; break; }
		case 8: memcpy(&v, ptr, 8); break;
		default:
			usertp_seq_printf(p, "BAD SIZE:%zu 0x%x", el_size, *ptr);
			continue;
		}
		usertp_seq_printf(p, "%llu", (unsigned long long)v);
	}
	return seq_end_string(p, start);
}

/* As the kernel's "%*pb": 32-bit chunks in hex, most significant first, comma-separated. */
const char *usertp_print_bitmask_seq(struct usertp_seq *p, const void *bitmask, unsigned int size)
{
	const unsigned char *b = bitmask;
	unsigned int start = p->len;
	int chunk;

	p->buffer[p->len] = '\0';
	for (chunk = (int)(size / 4) - 1; chunk >= 0; chunk--) {
		uint32_t v;

		memcpy(&v, b + chunk * 4, 4);
		usertp_seq_printf(p, "%s%08x", chunk == (int)(size / 4) - 1 ? "" : ",", v);
	}
	return seq_end_string(p, start);
}

unsigned int usertp_str_size(const char *src)
{
	return usertp__str_size(usertp__str_src(src));
}

unsigned int usertp_str_len_size(const char *src, size_t len)
{
	if (!src)
		return usertp_str_size(NULL);
	return (unsigned int)(len < USERTP_STRING_MAX - 1 ? len : USERTP_STRING_MAX - 1) + 1;
}

/* Copy at most size-1 bytes, stopping at a NUL, and zero the rest of the space. */
void usertp_str_copy(char *dst, int size, const char *src)
{
	size_t n;

	if (size <= 0)
		return;
	if (!src)
		src = "(null)";
	n = strnlen(src, (size_t)size - 1);
	memcpy(dst, src, n);
	memset(dst + n, 0, (size_t)size - n);
}

void usertp_str_assign(char *dst, int size, const char *src)
{
	if (size > 0)
		usertp__str_assign(dst, (unsigned int)size, usertp__str_src(src));
}

void usertp_bitmask_copy(void *dst, int size, const void *src, size_t src_size)
{
	size_t n = size > 0 ? (size_t)size : 0;

	if (src_size < n) {
		memset((char *)dst + src_size, 0, n - src_size);
		n = src_size;
	}
	memcpy(dst, src, n);
}

unsigned int usertp_vstr_len(const char *fmt, va_list *va)
{
	va_list ap;
	int n;

	va_copy(ap, *va);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	return (unsigned int)(n < USERTP_STRING_MAX - 1 ? n : USERTP_STRING_MAX - 1) + 1;
}

void usertp_vstr_assign(char *dst, unsigned int size, const char *fmt, va_list *va)
{
	va_list ap;

	if (!size)
		return;
	va_copy(ap, *va);
	vsnprintf(dst, size, fmt, ap);
	va_end(ap);
}

/*
 * Check that a record holds together before compiled code reads it: big enough for its
 * fixed part, every location word inside the record, strings terminated.
 */
static bool record_valid(const struct usertp_event_class *class, const unsigned char *rec,
			 size_t size)
{
	const struct usertp_event_field *fields;
	unsigned int nr, i;

	if (size < class->fixed_size || size > 0xffff)
		return false;
	fields = class->fields(&nr);
	for (i = 0; i < nr; i++) {
		const struct usertp_event_field *f = &fields[i];
		uint32_t loc;
		size_t off, len;

		if (f->kind != USERTP_FIELD_DATA_LOC && f->kind != USERTP_FIELD_REL_LOC)
			continue;
		memcpy(&loc, rec + f->offset, 4);
		off = loc & 0xffff;
		len = loc >> 16;
		if (f->kind == USERTP_FIELD_REL_LOC)
			off += f->offset + 4u;
		if (off + len > size)
			return false;
		if (f->is_string && (len == 0 || memchr(rec + off, '\0', len) == NULL))
			return false;
	}
	return true;
}

__thread size_t usertp__printing_size;

int usertp__event_print_buf(const struct usertp_event *ev, const void *record, size_t record_size,
			    char *buf, size_t size, bool *truncated)
{
	char scratch[8192];
	struct usertp_seq s, p;
	usertp_event_print_func print;
	uint64_t aligned[USERTP_RECORD_MAX / 8 + 1];

	if (!ev || !record || !buf || !size)
		return -EINVAL;
	if (!record_valid(ev->event_class, record, record_size))
		return -EINVAL;
	/*
	 * Ring-buffer records are only 4-byte aligned in the kernel's format; the compiled
	 * printer reads fields through the record struct, so give it an aligned copy.
	 */
	if (((uintptr_t)record & 7) && record_size <= sizeof(aligned)) {
		memcpy(aligned, record, record_size);
		record = aligned;
	}
	print = ev->print ? ev->print : ev->event_class->print;
	usertp__printing_size = record_size;
	usertp__seq_init(&s, buf, size > 0xffffffffu ? 0xffffffffu : (unsigned int)size);
	usertp__seq_init(&p, scratch, sizeof(scratch));
	print(&s, &p, record);
	*truncated = s.full;
	return (int)s.len;
}

int usertp_event_print(const struct usertp_event *ev, const void *record, size_t record_size,
		       char *buf, size_t size)
{
	const unsigned int big_size = 1u << 16;
	bool truncated;
	char one, *big;
	int len;

	if (!buf && size)
		return -EINVAL;
	len = usertp__event_print_buf(ev, record, record_size, size ? buf : &one, size ? size : 1,
				      &truncated);
	if (len < 0 || !truncated)
		return len;
	/* Truncated: measure the whole text in a big enough buffer. */
	big = malloc(big_size);
	if (!big)
		return -ENOMEM;
	len = usertp__event_print_buf(ev, record, record_size, big, big_size, &truncated);
	free(big);
	return len;
}
