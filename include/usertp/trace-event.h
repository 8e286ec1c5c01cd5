/* SPDX-License-Identifier: MIT */
/*
 * usertp/trace-event.h - the types that TRACE_EVENT() definitions compile into, and the
 * library calls their generated code makes.
 *
 * A program never fills these structures by hand: <trace/define_trace.h> generates them from
 * a trace header.  They are part of the ABI between compiled programs and libusertp; each
 * starts with its size and only ever grows at the end.
 *
 * Record layout (the kernel's): an 8-byte common header, then the TP_STRUCT__entry fields at
 * their natural alignment, then the payloads of dynamic fields in declaration order.  A
 * dynamic field is a u32 "location" word: (length << 16) | offset, where the offset counts
 * from the start of the record (__data_loc) or from the end of the word itself (__rel_loc).
 */
#ifndef USERTP_TRACE_EVENT_H
#define USERTP_TRACE_EVENT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <usertp/compiler.h>
#include <usertp/tracepoint.h>

#ifdef __cplusplus
/* Signedness of a field type, enums included; works inside extern "C" blocks. */
extern "C++" {
#include <type_traits>
template <typename T, bool = std::is_enum<T>::value> struct usertp__signedness {
	static constexpr bool value = std::is_signed<T>::value;
};
template <typename T> struct usertp__signedness<T, true> {
	static constexpr bool value = std::is_signed<typename std::underlying_type<T>::type>::value;
};
}
#define usertp__is_signed_type(type) (usertp__signedness<type>::value)
#else
#define usertp__is_signed_type(type) (((type)(-1)) < (type)1)
#endif

USERTP__C_BEGIN

/* The common header of every record (the kernel's struct trace_entry). */
struct usertp_trace_entry {
	unsigned short type;	    /* event id */
	unsigned char flags;	    /* kernel irq/preempt flags; always 0 in user space */
	unsigned char preempt_count;
	int pid;		    /* thread id of the writer */
};

enum usertp_field_kind {
	USERTP_FIELD_SCALAR,	/* __field, __field_struct */
	USERTP_FIELD_ARRAY,	/* __array: "type[len]" */
	USERTP_FIELD_DATA_LOC,	/* __dynamic_array, __string, __vstring, __bitmask */
	USERTP_FIELD_REL_LOC,	/* the __rel_ forms */
};

/* One field of an event class, as its format file shows it. */
struct usertp_event_field {
	const char *type; /* as written; "char[16]" for arrays, "__data_loc char[]" for dynamic */
	const char *name;
	unsigned short offset;
	unsigned short size;
	unsigned char is_signed;
	unsigned char kind; /* enum usertp_field_kind */
	unsigned char is_string; /* dynamic field holding a NUL-terminated string */
};

/* Text buffer for printing records (the kernel's trace_seq). */
struct usertp_seq {
	char *buffer;
	unsigned int size;
	unsigned int len;
	int full;
};

struct usertp_event_class;
typedef void (*usertp_event_print_func)(struct usertp_seq *s, struct usertp_seq *p,
					const void *record);

/* What DECLARE_EVENT_CLASS() generates. */
struct usertp_event_class {
	uint32_t struct_size;
	const char *system;
	const struct usertp_event_field *(*fields)(unsigned int *nr);
	unsigned int fixed_size; /* sizeof the record struct: header and fixed fields */
	usertp_probe_func probe; /* records an event; its data is a struct usertp_event_file */
	const char *print_fmt;	 /* the format file's "print fmt:" text */
	usertp_event_print_func print;
};

/* What DEFINE_EVENT() (and TRACE_EVENT()) generates: one event, one tracepoint. */
struct usertp_event {
	uint32_t struct_size;
	const char *name;
	struct usertp_event_class *event_class;
	struct usertp_tracepoint *tp;
	const char *print_fmt;		/* DEFINE_EVENT_PRINT's own, else NULL */
	usertp_event_print_func print;	/* DEFINE_EVENT_PRINT's own, else NULL */
	void *runtime;			/* owned by libusertp */
};

/* TRACE_DEFINE_ENUM() / TRACE_DEFINE_SIZEOF(): a name to replace by its value in print fmt. */
struct usertp_eval_map {
	const char *system;
	const char *eval_string;
	unsigned long eval_value;
};

/*
 * Recording.  An event is enabled by registering its class probe on its tracepoint with an
 * event file (one per consumer) as data.  The file starts with the consumer's reserve and
 * commit, which the probe calls directly: reserve returns where to write the record (its
 * common header filled in by the consumer) or NULL (no room: counted as lost); the probe
 * fills the fields and hands the same pointer to commit.  The rest of the file is
 * libusertp's.
 */
struct usertp_event_file;
struct usertp_event_file_head {
	void *(*reserve)(struct usertp_event_file *file, size_t size);
	void (*commit)(struct usertp_event_file *file, void *record);
};

/*
 * The heads change while other threads record (a filter set: event-filter.c installs the
 * commit, then the reserve): loaded atomically, the reserve with acquire so that the commit
 * read after it is at least as new (plain loads on x86).
 */
static inline void *usertp__event_reserve(void *file, size_t size)
{
	const struct usertp_event_file_head *head = (const struct usertp_event_file_head *)file;

	return __atomic_load_n(&head->reserve, __ATOMIC_ACQUIRE)((struct usertp_event_file *)file,
								 size);
}

static inline void usertp__event_commit(void *file, void *record)
{
	const struct usertp_event_file_head *head = (const struct usertp_event_file_head *)file;

	__atomic_load_n(&head->commit, __ATOMIC_RELAXED)((struct usertp_event_file *)file, record);
}

/* Print helpers behind __print_flags() and friends; each returns its text inside p. */
struct usertp_print_flag {
	unsigned long mask;
	const char *name;
};
USERTP_EXPORT void usertp_seq_printf(struct usertp_seq *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
USERTP_EXPORT const char *usertp_print_flags_seq(struct usertp_seq *p, const char *delim,
						 unsigned long flags,
						 const struct usertp_print_flag *flag_array);
USERTP_EXPORT const char *usertp_print_symbols_seq(struct usertp_seq *p, unsigned long val,
						   const struct usertp_print_flag *symbol_array);
USERTP_EXPORT const char *usertp_print_hex_seq(struct usertp_seq *p, const void *buf, int len,
					       int concatenate);
USERTP_EXPORT const char *usertp_print_array_seq(struct usertp_seq *p, const void *buf,
						 int count, size_t el_size);
USERTP_EXPORT const char *usertp_print_bitmask_seq(struct usertp_seq *p, const void *bitmask,
						   unsigned int size);

/*
 * Strings stored by __string, __string_len and __vstring are cut to USERTP_STRING_MAX bytes
 * (NUL included), so that one long argument cannot make an event too big to record.
 */
#define USERTP_STRING_MAX 1024
USERTP_EXPORT unsigned int usertp_str_size(const char *src);
USERTP_EXPORT unsigned int usertp_str_len_size(const char *src, size_t len);
USERTP_EXPORT void usertp_str_copy(char *dst, int size, const char *src);
USERTP_EXPORT void usertp_bitmask_copy(void *dst, int size, const void *src, size_t src_size);

/*
 * __assign_str(dst) with the source __string() measured: copy exactly what was measured (as
 * the kernel does) and terminate it.  The two-argument form names a source that was not
 * measured, and goes through usertp_str_copy().
 */
USERTP_EXPORT void usertp_str_assign(char *dst, int size, const char *src);

/*
 * What generated probes use for __string and __assign_str(dst): the same as
 * usertp_str_size() and usertp_str_assign(), but inline, since every recorded string pays
 * for them.  The source is made non-NULL once, when measured.
 */
static inline const char *usertp__str_src(const char *src)
{
	return src ? src : "(null)";
}

/*
 * strlen() rather than a bounded memchr(): the argument is a C string either way (as in the
 * kernel's __string), and libc's strlen() takes a third fewer instructions on short strings,
 * which is what almost every event records.  Only a string longer than the cap is read past
 * the part kept.
 */
static inline unsigned int usertp__str_size(const char *src)
{
	size_t len = strlen(src);

	return usertp_likely(len < USERTP_STRING_MAX - 1) ? (unsigned int)len + 1 : USERTP_STRING_MAX;
}

/* Copy @n bytes: up to 16 (most strings) by two overlapping loads and stores, no call. */
static inline void usertp__copy(char *dst, const char *src, size_t n)
{
	if (n - 8 <= 8) {
		uint64_t head, tail;

		memcpy(&head, src, 8);
		memcpy(&tail, src + n - 8, 8);
		memcpy(dst, &head, 8);
		memcpy(dst + n - 8, &tail, 8);
	} else if (n - 4 <= 3) {
		uint32_t head, tail;

		memcpy(&head, src, 4);
		memcpy(&tail, src + n - 4, 4);
		memcpy(dst, &head, 4);
		memcpy(dst + n - 4, &tail, 4);
	} else {
		memcpy(dst, src, n);
	}
}

/* @size is the measured one: at least 1. */
static inline void usertp__str_assign(char *dst, unsigned int size, const char *src)
{
	/*
	 * dst is past the end of the record's struct (in its dynamic part), which GCC's
	 * object-size checks take for an overflow once the copy is inline: hide where it points.
	 */
	__asm__("" : "+r"(dst));
	usertp__copy(dst, src, size - 1);
	dst[size - 1] = '\0';
}

/* __vstring helpers: length of the formatted text (with its NUL), and the formatting. */
USERTP_EXPORT unsigned int usertp_vstr_len(const char *fmt, va_list *va);
USERTP_EXPORT void usertp_vstr_assign(char *dst, unsigned int size, const char *fmt, va_list *va);

USERTP__C_END

#endif /* USERTP_TRACE_EVENT_H */
