/* SPDX-License-Identifier: MIT */
/*
 * printk.c - usertp_printk() and usertp_puts() (<usertp/printk.h>): the events ftrace:bprint and
 * ftrace:bputs, their probes and their text, and the process's table of printk formats and
 * call sites that readers of its records need (bprint.h has the rules).
 *
 * The events are described by hand, not by TRACE_EVENT(): their format must be the kernel's
 * byte for byte (libtraceevent reads bprint's records by it, and a file with the kernel's own
 * trace_printk() records then holds one event), and bprint's buf[] is an array of no fixed
 * size at the record's end, which TRACE_EVENT() cannot say.
 *
 * The table: one entry per distinct (format, call site), appended as objects load (never
 * removed: records of an object dlclose()d may still be in a buffer), read without a lock
 * (by the text printer, which also runs in fatal-signal handlers).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <usertp/printk.h>

#include "bprint.h"
#include "internal.h"

/* (Their tracepoints are exported: the call sites are in the programs.) */
#pragma GCC visibility push(default)
DEFINE_TRACE(usertp_bprint, PARAMS(struct usertp_printk_site *site, va_list *ap), PARAMS(site, ap));
DEFINE_TRACE(usertp_bputs, PARAMS(struct usertp_printk_site *site), PARAMS(site));
#pragma GCC visibility pop

/* The records: the common header, then these (the kernel's struct bprint_entry, bputs_entry). */
#define BPRINT_HEAD 24u /* common header, ip, fmt */
#define BPRINT_ROOM (USERTP_RECORD_MAX - BPRINT_HEAD)

static const struct usertp_event_field bprint_fields[] = {
	{ "unsigned long", "ip", 8, 8, 0, USERTP_FIELD_SCALAR, 0 },
	{ "const char *", "fmt", 16, 8, 0, USERTP_FIELD_SCALAR, 0 },
	{ "u32[]", "buf", 24, 0, 0, USERTP_FIELD_ARRAY, 0 },
};

static const struct usertp_event_field bputs_fields[] = {
	{ "unsigned long", "ip", 8, 8, 0, USERTP_FIELD_SCALAR, 0 },
	{ "const char *", "str", 16, 8, 0, USERTP_FIELD_SCALAR, 0 },
};

static const struct usertp_event_field *bprint_fields_of(unsigned int *nr)
{
	*nr = sizeof(bprint_fields) / sizeof(bprint_fields[0]);
	return bprint_fields;
}

static const struct usertp_event_field *bputs_fields_of(unsigned int *nr)
{
	*nr = sizeof(bputs_fields) / sizeof(bputs_fields[0]);
	return bputs_fields;
}

/*
 * The events exist in a process once it has a usertp_printk() site (its first object with one
 * registers them; never removed): one without any neither lists nor records them (a mount's
 * top level, which records them wherever they are, then costs it nothing).
 */
static struct usertp_event bprint_event, bputs_event;
static bool events_added;

/* --- the table ------------------------------------------------------------------------- */

struct printk_entry {
	struct printk_entry *next;
	uint64_t fmt_key, site_key;
	char *fmt, *function;
};

/*
 * Oldest first: an entry is appended (under usertp__lock) by publishing it, with release, in
 * the last one's next; readers walk from the head with no lock, and see a prefix.
 */
static struct printk_entry *printk_head, **printk_tail = &printk_head;
static unsigned int printk_count;

static const struct printk_entry *entry_find(uint64_t site_key, uint64_t fmt_key)
{
	for (const struct printk_entry *e = __atomic_load_n(&printk_head, __ATOMIC_ACQUIRE); e;
	     e = __atomic_load_n(&e->next, __ATOMIC_ACQUIRE))
		if (e->fmt_key == fmt_key && e->site_key == site_key)
			return e;
	return NULL;
}

/* Under usertp__lock.  Return: whether the table grew. */
static bool entry_add(const struct usertp_printk_site *site)
{
	struct printk_entry *e;

	if (entry_find(site->site_key, site->fmt_key))
		return false;
	e = calloc(1, sizeof(*e));
	if (!e)
		return false;
	e->fmt_key = site->fmt_key;
	e->site_key = site->site_key;
	e->fmt = strdup(site->fmt);
	e->function = strdup(site->function);
	if (!e->fmt || !e->function) {
		free(e->fmt);
		free(e->function);
		free(e);
		return false;
	}
	__atomic_store_n(printk_tail, e, __ATOMIC_RELEASE);
	printk_tail = &e->next;
	__atomic_store_n(&printk_count, printk_count + 1, __ATOMIC_RELEASE); /* (after: a bound) */
	return true;
}

unsigned int usertp__printk_count(void)
{
	return __atomic_load_n(&printk_count, __ATOMIC_ACQUIRE);
}

size_t usertp__printk_lines(unsigned int skip, unsigned int upto, bool kallsyms, char *buf,
			    size_t size)
{
	const struct printk_entry *e = __atomic_load_n(&printk_head, __ATOMIC_ACQUIRE);
	size_t len = 0;

	for (unsigned int k = 0; e && k < upto; k++, e = __atomic_load_n(&e->next, __ATOMIC_ACQUIRE)) {
		char *at = len < size ? buf + len : NULL;
		size_t room = len < size ? size - len : 0;

		if (k < skip)
			continue;
		len += kallsyms ? usertp__printk_site_line(at, room, e->site_key, e->function)
				: usertp__printk_format_line(at, room, e->fmt_key, e->fmt);
	}
	return len;
}

/* Check a site once (its object loading, under usertp__lock).  Return: whether the table grew. */
bool usertp__printk_site_add_locked(struct usertp_printk_site *site)
{
	const char *why = NULL;
	size_t at = 0;
	int n;

	if (!site || site->struct_size < sizeof(*site) || !site->fmt || !site->function)
		return false;
	if (site->state == 0) {
		n = usertp__bprint_parse(site->fmt, site->kinds, &why, &at);
		if (n < 0) {
			/* Said once, where the program's author will see it first. */
			fprintf(stderr, "usertp: %s:%d: this usertp_printk() is not recorded: %s (at \"%.*s\")\n",
				site->file ? site->file : "?", site->line, why,
				(int)strcspn(site->fmt + at, "\n\t\""), site->fmt + at);
			__atomic_store_n(&site->state, -1, __ATOMIC_RELEASE);
			return false;
		}
		site->nr_args = (unsigned int)n;
		site->fmt_key = usertp__printk_key(site->fmt);
		site->site_key = usertp__printk_site_key(site->function, site->fmt);
		__atomic_store_n(&site->state, 1, __ATOMIC_RELEASE);
	}
	if (site->state > 0 && !events_added) {
		usertp__event_add_locked(&bprint_event);
		usertp__event_add_locked(&bputs_event);
		events_added = true;
	}
	return site->state > 0 && entry_add(site);
}

/* --- recording --------------------------------------------------------------------------- */

void usertp__printk(struct usertp_printk_site *site, const char *fmt, ...)
{
	va_list ap;

	(void)fmt; /* (the same as site->fmt: there for the compiler's format check) */
	va_start(ap, fmt);
	__traceiter_usertp_bprint(NULL, site, &ap);
	va_end(ap);
}

void usertp__puts(struct usertp_printk_site *site)
{
	__traceiter_usertp_bputs(NULL, site);
}

static void bprint_probe(void *file, struct usertp_printk_site *site, va_list *ap)
{
	uint32_t buf[BPRINT_ROOM / 4];
	uint64_t keys[2];
	unsigned char *rec;
	size_t len;
	va_list args;

	if (__atomic_load_n(&site->state, __ATOMIC_ACQUIRE) <= 0)
		return;
	va_copy(args, *ap);
	len = usertp__bprint_pack(site->kinds, site->nr_args, args, buf, sizeof(buf));
	va_end(args);
	rec = usertp__event_reserve(file, BPRINT_HEAD + len);
	if (!rec)
		return;
	keys[0] = site->site_key;
	keys[1] = site->fmt_key;
	memcpy(rec + 8, keys, 16);
	memcpy(rec + BPRINT_HEAD, buf, len);
	usertp__event_commit(file, rec);
}

static void bputs_probe(void *file, struct usertp_printk_site *site)
{
	uint64_t keys[2];
	unsigned char *rec;

	if (__atomic_load_n(&site->state, __ATOMIC_ACQUIRE) <= 0)
		return;
	rec = usertp__event_reserve(file, BPRINT_HEAD);
	if (!rec)
		return;
	keys[0] = site->site_key;
	keys[1] = site->fmt_key;
	memcpy(rec + 8, keys, 16);
	usertp__event_commit(file, rec);
}

/* --- text ------------------------------------------------------------------------------ */

/* "function: text", as the kernel's trace file and libtraceevent print it. */
static void printk_print(struct usertp_seq *s, const void *record, bool puts)
{
	const unsigned char *rec = record;
	size_t size = usertp__printing_size;
	const struct printk_entry *e;
	uint64_t keys[2];
	char text[USERTP_RECORD_MAX + 64];

	memcpy(keys, rec + 8, 16);
	e = entry_find(keys[0], keys[1]);
	if (!e) {
		usertp_seq_printf(s, "0x%llx: (NO FORMAT FOUND at %llx)", (unsigned long long)keys[0],
				  (unsigned long long)keys[1]);
		return;
	}
	if (puts) {
		size_t len = strlen(e->fmt);

		usertp_seq_printf(s, "%s: %.*s", e->function,
				  (int)(len && e->fmt[len - 1] == '\n' ? len - 1 : len), e->fmt);
		return;
	}
	usertp__bprint_text(e->fmt, rec + BPRINT_HEAD, size > BPRINT_HEAD ? size - BPRINT_HEAD : 0,
			    text, sizeof(text));
	usertp_seq_printf(s, "%s: %s", e->function, text);
}

static void bprint_print(struct usertp_seq *s, struct usertp_seq *p, const void *record)
{
	(void)p;
	printk_print(s, record, false);
}

static void bputs_print(struct usertp_seq *s, struct usertp_seq *p, const void *record)
{
	(void)p;
	printk_print(s, record, true);
}

/* --- the events -------------------------------------------------------------------------- */

static struct usertp_event_class bprint_class = {
	sizeof(struct usertp_event_class), "ftrace", bprint_fields_of, BPRINT_HEAD,
	(usertp_probe_func)bprint_probe, "\"%ps: %s\", (void *)REC->ip, REC->fmt", bprint_print,
};

static struct usertp_event_class bputs_class = {
	sizeof(struct usertp_event_class), "ftrace", bputs_fields_of, BPRINT_HEAD,
	(usertp_probe_func)bputs_probe, "\"%ps: %s\", (void *)REC->ip, REC->str", bputs_print,
};

static struct usertp_event bprint_event = {
	sizeof(struct usertp_event), "bprint", &bprint_class, &__tracepoint_usertp_bprint,
	NULL, NULL, NULL,
};

static struct usertp_event bputs_event = {
	sizeof(struct usertp_event), "bputs", &bputs_class, &__tracepoint_usertp_bputs,
	NULL, NULL, NULL,
};

