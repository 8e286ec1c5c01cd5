/* SPDX-License-Identifier: MIT */
/*
 * Stage 3: the printer of each event class, TP_printk compiled as C.
 *
 *	static void trace_raw_output_<call>(struct usertp_seq *s, struct usertp_seq *p,
 *					    const void *record)
 *	{
 *		usertp__record_<call> *field = record;
 *		usertp_seq_printf(s, <TP_printk format and arguments, __entry being field>);
 *	}
 *
 * The __print_*() helpers write their text into the scratch buffer p and return it.
 */
#include <trace/stages/record_access.h>

#define __entry field
#define TP_printk(...) __VA_ARGS__

#define __get_bitmask(field)                                                                       \
	usertp_print_bitmask_seq(p, __get_dynamic_array(field),                                    \
				 (unsigned int)__get_dynamic_array_len(field))
#define __get_rel_bitmask(field)                                                                   \
	usertp_print_bitmask_seq(p, __get_rel_dynamic_array(field),                                \
				 (unsigned int)__get_rel_dynamic_array_len(field))
#define __print_flags(flag, delim, ...)                                                            \
	({                                                                                         \
		static const struct usertp_print_flag __flags[] = { __VA_ARGS__, { 0, NULL } };    \
		usertp_print_flags_seq(p, delim, (unsigned long)(flag), __flags);                  \
	})
#define __print_symbolic(value, ...)                                                               \
	({                                                                                         \
		static const struct usertp_print_flag __symbols[] = { __VA_ARGS__, { 0, NULL } };  \
		usertp_print_symbols_seq(p, (unsigned long)(value), __symbols);                    \
	})
#define __print_hex(buf, buf_len) usertp_print_hex_seq(p, buf, (int)(buf_len), 0)
#define __print_hex_str(buf, buf_len) usertp_print_hex_seq(p, buf, (int)(buf_len), 1)
#define __print_array(array, count, el_size)                                                       \
	({                                                                                         \
		USERTP_STATIC_ASSERT((el_size) == 1 || (el_size) == 2 || (el_size) == 4 ||               \
				       (el_size) == 8,                                             \
			       "__print_array: element size must be 1, 2, 4 or 8");                \
		usertp_print_array_seq(p, array, (int)(count), el_size);                           \
	})
/* The 6.13 kernel shorthand, written out so that libtraceevent understands the format too. */
#define __print_dynamic_array(array, el_size)                                                      \
	__print_array(__get_dynamic_array(array), __get_dynamic_array_len(array) / (el_size), el_size)

/* The printer <func> of records laid out as struct trace_event_raw_<raw>. */
#define USERTP__OUTPUT_FUNC(func, raw, print)                                                      \
	static void trace_raw_output_##func(struct usertp_seq *s, struct usertp_seq *p,             \
					    const void *record)                                    \
	{                                                                                          \
		usertp__record_##raw *field = (usertp__record_##raw *)(uintptr_t)record;           \
		(void)p;                                                                           \
		(void)field;                                                                       \
		usertp_seq_printf(s, print);                                                       \
	}

#define DECLARE_EVENT_CLASS(call, proto, args, tstruct, assign, print)                             \
	USERTP__OUTPUT_FUNC(call, call, PARAMS(print))
#define DEFINE_EVENT(template, name, proto, args)
#define DEFINE_EVENT_PRINT(template, call, proto, args, print)                                     \
	USERTP__OUTPUT_FUNC(call, template, PARAMS(print))
#define TRACE_DEFINE_ENUM(a)
#define TRACE_DEFINE_SIZEOF(a)
