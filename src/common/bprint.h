/* SPDX-License-Identifier: MIT */
/*
 * bprint.h - usertp_printk()'s records (<usertp/printk.h>), the one home of their rules: the
 * kernel's binary printk (trace_printk(): an ftrace:bprint record holds the address of its
 * format and the arguments in binary; the text is made when the trace is read, from the
 * formats a trace.dat keeps in its printk_formats section), as libtraceevent reads it back.
 *
 *   - Formats: the conversions libtraceevent reads back and prints right, no others: the flags
 *     '#' and '0', a width and a precision in digits, the lengths l, ll, L, z, Z, and
 *     d i u x X o p s (and %%).  Not '-', ' ' or '+' (make_bprint_args() stops at the first
 *     two, the printer shows "%+d" as ">+<d"), nor '*' (read, then printed wrong), no h, j or
 *     t, no %c, no floating point (nor has the kernel's): such a format is refused where it is
 *     registered, with what and where, rather than printed wrong.
 *   - Arguments, packed as the kernel's vbin_printf(): an int in 4 bytes, a
 *     long, long long, size_t or pointer in 8, each at a 4-byte boundary; a string inline,
 *     NUL-terminated, at no boundary ("(null)" for NULL; cut so that every argument fits the
 *     record: libtraceevent prints no bprint record after one that lacks an argument).
 *   - Keys: a record names its format and its call site by a 64-bit number, as the kernel's
 *     by addresses.  Here they are hashes (of the format; of the function and the format), in
 *     user-space's address range, never a kernel address: the same in every process and
 *     every run, so that several programs' records share one printk_formats section with
 *     nothing to rewrite, and a file may hold the kernel's trace_printk() records too.  The
 *     file maps each format key to its format (printk_formats: `0xKEY : "FORMAT"`, escaped as
 *     the kernel's) and each call-site key to its function (kallsyms: `KEY t FUNCTION`), which
 *     is what ftrace:bprint's "%ps" prints.
 */
#ifndef USERTP_BPRINT_H
#define USERTP_BPRINT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* What one argument is, in the record. */
enum usertp__bprint_kind {
	USERTP_BPRINT_INT,  /* 4 bytes: int, unsigned */
	USERTP_BPRINT_LONG, /* 8 bytes: long, long long, size_t, a pointer */
	USERTP_BPRINT_STR,  /* a string, inline */
};

#define USERTP_BPRINT_MAX_ARGS 32

/*
 * Check @fmt and list its arguments' kinds in @kinds (room for USERTP_BPRINT_MAX_ARGS).
 * Return: how many, or -EINVAL with *why (static text) and *at (the offset in @fmt of the
 * conversion) saying what is refused.
 */
int usertp__bprint_parse(const char *fmt, unsigned char *kinds, const char **why, size_t *at);

/*
 * Pack the arguments @ap holds, of kinds @kinds (@n of them, at most USERTP_BPRINT_MAX_ARGS),
 * into @buf of @cap bytes (a multiple of 4, at least 12 a number and 1 a string: strings are
 * cut to leave room for every argument after them).  Return: the bytes used, rounded up to 4
 * (what the record's buf[] takes).
 */
size_t usertp__bprint_pack(const unsigned char *kinds, unsigned int n, va_list ap, void *buf,
			   size_t cap);

/*
 * The text of a record: @fmt (the format, as the program wrote it) with the arguments
 * packed in @buf (@len bytes), into @out of @size bytes, snprintf()'s way; the format's last
 * newline left out (libtraceevent leaves it out).  Nothing is read outside @buf: what is
 * missing prints as libtraceevent prints it (nothing).  Return: the length of the whole text.
 */
size_t usertp__bprint_text(const char *fmt, const void *buf, size_t len, char *out, size_t size);

/* The key of a format, and of a call site (@function's use of @fmt). */
uint64_t usertp__printk_key(const char *fmt);
uint64_t usertp__printk_site_key(const char *function, const char *fmt);

/*
 * The printk_formats line for @key and @fmt (`0x%llx : "..."` and a newline, escaped as the
 * kernel's: \n, \t, \" and \\ written as such), into @out of @size bytes, snprintf()'s way.
 * Return: the length of the whole line.
 */
size_t usertp__printk_format_line(char *out, size_t size, uint64_t key, const char *fmt);
/* The kallsyms line for call site @key in @function ("%016llx t FUNCTION\n"), the same way. */
size_t usertp__printk_site_line(char *out, size_t size, uint64_t key, const char *function);

/*
 * Read back a printk_formats line (@len bytes, no newline) made as above, by a program we do
 * not trust: its key (user space's range, as above), and its format unescaped into @fmt of
 * @size bytes (NULL: not wanted; cut to fit).  At least 2 characters between the quotes
 * (libtraceevent reads outside fewer).  Return: the key, or 0 for a line that is not one.
 */
uint64_t usertp__printk_format_parse(const char *line, size_t len, char *fmt, size_t size);
/* The same for a kallsyms line: the key, the function into @function (NULL: not wanted). */
uint64_t usertp__printk_site_parse(const char *line, size_t len, char *function, size_t size);

#endif /* USERTP_BPRINT_H */
