/* SPDX-License-Identifier: MIT */
/*
 * usertp/printk.h - printf-style tracing, recorded as the kernel records trace_printk():
 *
 *	usertp_printk("job %d took %llu ns in %s\n", id, ns, name);
 *	usertp_puts("cache flushed\n");
 *
 * A record holds the format's key and the arguments in binary (the kernel's ftrace:bprint
 * layout; usertp_puts(): ftrace:bputs, the string's key alone); the text is made when the
 * trace is read, from the formats a trace.dat keeps in its printk_formats section, so that
 * trace-cmd report, KernelShark and usertp report print "function: job 3 took ..." (the
 * function is the caller's, as the kernel's %ps prints it).  Formats from shared libraries
 * and dlopen()ed objects are carried as the events' formats are.
 *
 * Each call is a site of its own: a patched nop while its event is off, its arguments not
 * even evaluated.  The events are the kernel's names, enabled as any other event:
 * USERTP_EVENTS='ftrace:*' (or ftrace:bprint, ftrace:bputs), usertp record -e 'ftrace:*'.
 * (The kernel's own ftrace events cannot be enabled, so a spec of system "ftrace" is always
 * a program's.)
 *
 * The format must be a string literal, and can use what the kernel's binary printk and
 * libtraceevent print back: d i u x X o p s with the flags '#' and '0', a width and a
 * precision in digits, and the lengths l, ll, z.  No %c, no floating point, no '-', ' ' or
 * '+' flag, no '*', no h, j or t: such a format is refused when its object is loaded (a warning
 * naming the file and line; the site records nothing), rather than printed wrong.  The
 * compiler checks the arguments' types against the format (-Wformat).  A record holds at
 * most USERTP_RECORD_MAX bytes: longer strings are cut.
 */
#ifndef USERTP_PRINTK_H
#define USERTP_PRINTK_H

#include <stdarg.h>
#include <stdint.h>

#include <usertp/compiler.h>
#include <usertp/tracepoint.h>

USERTP__C_BEGIN

/*
 * One call site, made by the macros below (never by hand): what it prints, and where.  Part
 * of the ABI: only ever grows at the end.  libusertp fills the rest when the object loads.
 */
struct usertp_printk_site {
	uint32_t struct_size;
	const char *fmt;
	const char *function; /* __func__ */
	const char *file;
	int line;
	/* libusertp's: */
	int state; /* 0 not seen, 1 usable, -1 refused */
	uint64_t fmt_key, site_key;
	unsigned int nr_args;
	unsigned char kinds[32];
};

/* The tracepoints behind ftrace:bprint and ftrace:bputs (libusertp defines them). */
__DECLARE_TRACE(usertp_bprint, PARAMS(struct usertp_printk_site *site, va_list *ap),
		PARAMS(site, ap), 1, PARAMS(void *__data, struct usertp_printk_site *site, va_list *ap))
__DECLARE_TRACE(usertp_bputs, PARAMS(struct usertp_printk_site *site), PARAMS(site), 1,
		PARAMS(void *__data, struct usertp_printk_site *site))

/* The "on" paths of the sites, out of line. */
USERTP_EXPORT void usertp__printk(struct usertp_printk_site *site, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
USERTP_EXPORT void usertp__puts(struct usertp_printk_site *site);

USERTP__C_END

/* The site's description, in its object's __usertp_printk section (read when it loads). */
#define USERTP__PRINTK_SITE(var, text)                                                              \
	static struct usertp_printk_site var = { sizeof(struct usertp_printk_site), "" text,      \
						  __func__, __FILE__, __LINE__, 0, 0, 0, 0, { 0 } }; \
	static struct usertp_printk_site *var##_ref                                                \
		__attribute__((used, section("__usertp_printk"))) = &var

#define usertp_printk(fmt, ...)                                                                    \
	do {                                                                                       \
		USERTP__PRINTK_SITE(usertp__printk_site, fmt);                                     \
		if (usertp__tp_on_usertp_bprint())                                                 \
			usertp__printk(&usertp__printk_site, fmt, ##__VA_ARGS__);                 \
	} while (0)

/* @str: a string literal (a string made at run time: usertp_printk("%s", str)). */
#define usertp_puts(str)                                                                           \
	do {                                                                                       \
		USERTP__PRINTK_SITE(usertp__puts_site, str);                                       \
		if (usertp__tp_on_usertp_bputs())                                                  \
			usertp__puts(&usertp__puts_site);                                          \
	} while (0)

#endif /* USERTP_PRINTK_H */
