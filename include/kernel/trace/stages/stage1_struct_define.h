/* SPDX-License-Identifier: MIT */
/*
 * Stage 1: the record layout of each event class, and the TRACE_DEFINE_ENUM() tables.
 *
 *	struct trace_event_raw_<call> {
 *		struct usertp_trace_entry ent;
 *		<type> <item>;			__field, __field_struct
 *		<type> <item>[<len>];		__array
 *		uint32_t __data_loc_<item>;	__dynamic_array, __string, __vstring, __bitmask
 *		uint32_t __rel_loc_<item>;	the __rel_ forms
 *		char __data[];			dynamic payloads follow
 *	};
 *	usertp__record_<call>: the same, aligned to 4 bytes, as records are in the kernel's pages:
 *	what the generated code reaches records through (__entry), so that a u64 field 4 bytes
 *	off its alignment is what the compiler expects.
 */
#define TP_STRUCT__entry(...) __VA_ARGS__

#define __field(type, item) type item;
#define __field_struct(type, item) type item;
#define __array(type, item, len) type item[len];
#define __dynamic_array(type, item, len) uint32_t __data_loc_##item;
#define __string(item, src) __dynamic_array(char, item, -1)
#define __string_len(item, src, len) __dynamic_array(char, item, -1)
#define __vstring(item, fmt, ap) __dynamic_array(char, item, -1)
#define __bitmask(item, nr_bits) __dynamic_array(unsigned long, item, -1)
#define __rel_dynamic_array(type, item, len) uint32_t __rel_loc_##item;
#define __rel_string(item, src) __rel_dynamic_array(char, item, -1)
#define __rel_string_len(item, src, len) __rel_dynamic_array(char, item, -1)
#define __rel_bitmask(item, nr_bits) __rel_dynamic_array(unsigned long, item, -1)

#define DECLARE_EVENT_CLASS(call, proto, args, tstruct, assign, print)                             \
	struct trace_event_raw_##call {                                                            \
		struct usertp_trace_entry ent;                                                     \
		tstruct char __data[];                                                             \
	};                                                                                         \
	typedef struct trace_event_raw_##call __attribute__((aligned(4))) usertp__record_##call;

#define DEFINE_EVENT(template, name, proto, args)
#define DEFINE_EVENT_PRINT(template, name, proto, args, print)

#define USERTP__DEFINE_EVAL(a, text, value)                                                        \
	static struct usertp_eval_map USERTP_PASTE(USERTP_PASTE(__usertp_eval_, TRACE_SYSTEM_VAR), \
						   _##a) = { USERTP__SYSTEM_STRING, text,          \
							     (unsigned long)(value) };             \
	static struct usertp_eval_map *USERTP_PASTE(                                               \
		USERTP_PASTE(__usertp_eval_ptr_, TRACE_SYSTEM_VAR), _##a)                          \
		__attribute__((used, section("__usertp_eval_maps"))) =                             \
			&USERTP_PASTE(USERTP_PASTE(__usertp_eval_, TRACE_SYSTEM_VAR), _##a);
/* As in the kernel, TRACE_DEFINE_SIZEOF(t) replaces the text "sizeof(t)" by the size. */
#define TRACE_DEFINE_ENUM(a) USERTP__DEFINE_EVAL(a, #a, a)
#define TRACE_DEFINE_SIZEOF(a) USERTP__DEFINE_EVAL(a, "sizeof(" #a ")", sizeof(a))
