/* SPDX-License-Identifier: MIT */
/*
 * Stage 6: the probe of each event class, which writes one record.
 *
 *	static void usertp__event_probe_<call>(void *__data, <proto>)
 *	{
 *		size = usertp__get_offsets_<call>(&__data_offsets, <args>);
 *		__entry = usertp__event_reserve(file, sizeof(*__entry) + size);
 *		if (!__entry)
 *			return;				(no room: counted as lost)
 *		__entry->__data_loc_<item> = __data_offsets.<item>;	for each dynamic field
 *		{ <TP_fast_assign> }
 *		usertp__event_commit(file, __entry);
 *	}
 *
 * __data is the struct usertp_event_file the probe was registered with.
 */
#include <trace/stages/record_access.h>

#define __entry __usertp_entry
#define TP_STRUCT__entry(...) __VA_ARGS__
#define TP_fast_assign(...) __VA_ARGS__

#define __field(type, item)
#define __field_struct(type, item)
#define __array(type, item, len)
#define __dynamic_array(type, item, len) __entry->__data_loc_##item = __data_offsets.item;
#define __rel_dynamic_array(type, item, len) __entry->__rel_loc_##item = __data_offsets.item;
#define __string(item, src) __dynamic_array(char, item, -1)
#define __string_len(item, src, len) __dynamic_array(char, item, -1)
#define __vstring(item, fmt, ap) __dynamic_array(char, item, -1)
#define __bitmask(item, nr_bits) __dynamic_array(unsigned long, item, -1)
#define __rel_string(item, src) __rel_dynamic_array(char, item, -1)
#define __rel_string_len(item, src, len) __rel_dynamic_array(char, item, -1)
#define __rel_bitmask(item, nr_bits) __rel_dynamic_array(unsigned long, item, -1)

#define __get_bitmask(field) ((unsigned long *)__get_dynamic_array(field))
#define __get_rel_bitmask(field) ((unsigned long *)__get_rel_dynamic_array(field))

/* __assign_str(dst) copies the source given to __string(), as measured; the older
 * __assign_str(dst, src) names it again, and is copied up to its NUL.  Either way the copy is
 * bounded by the space reserved. */
#define USERTP__ASSIGN_STR_0(dst)                                                                  \
	usertp__str_assign(__get_str(dst), (unsigned int)__get_dynamic_array_len(dst),             \
			   (const char *)__data_offsets.dst##_ptr_)
#define USERTP__ASSIGN_STR_1(dst, src)                                                             \
	usertp_str_copy(__get_str(dst), __get_dynamic_array_len(dst), (const char *)(src))
#define USERTP__ASSIGN_REL_STR_0(dst)                                                              \
	usertp__str_assign(__get_rel_str(dst), (unsigned int)__get_rel_dynamic_array_len(dst),     \
			   (const char *)__data_offsets.dst##_ptr_)
#define USERTP__ASSIGN_REL_STR_1(dst, src)                                                         \
	usertp_str_copy(__get_rel_str(dst), __get_rel_dynamic_array_len(dst), (const char *)(src))
#define __assign_str(...) USERTP_PASTE(USERTP__ASSIGN_STR_, USERTP_HAS_ARGS(__VA_ARGS__))(__VA_ARGS__)
#define __assign_rel_str(...)                                                                      \
	USERTP_PASTE(USERTP__ASSIGN_REL_STR_, USERTP_HAS_ARGS(__VA_ARGS__))(__VA_ARGS__)
#define __assign_vstr(dst, fmt, va)                                                                \
	usertp_vstr_assign(__get_str(dst), (unsigned int)__get_dynamic_array_len(dst), fmt, va)
#define __assign_bitmask(dst, src, nr_bits)                                                        \
	usertp_bitmask_copy(__get_dynamic_array(dst), __get_dynamic_array_len(dst), src,           \
			    USERTP__BITS_TO_LONGS(nr_bits) * sizeof(unsigned long))
#define __assign_rel_bitmask(dst, src, nr_bits)                                                    \
	usertp_bitmask_copy(__get_rel_dynamic_array(dst), __get_rel_dynamic_array_len(dst), src,   \
			    USERTP__BITS_TO_LONGS(nr_bits) * sizeof(unsigned long))

#define DECLARE_EVENT_CLASS(call, proto, args, tstruct, assign, print)                             \
	static void usertp__event_probe_##call(void *__data, proto)                                \
	{                                                                                          \
		struct trace_event_data_offsets_##call __data_offsets;                             \
		usertp__record_##call *__entry;                                                    \
		unsigned long __data_size = usertp__get_offsets_##call(&__data_offsets, args);     \
		__entry = (usertp__record_##call *)usertp__event_reserve(                          \
			__data, sizeof(*__entry) + __data_size);                                   \
		if (!__entry)                                                                      \
			return;                                                                    \
		tstruct                                                                            \
		{                                                                                  \
			assign;                                                                    \
		}                                                                                  \
		usertp__event_commit(__data, __entry);                                             \
	}

#define DEFINE_EVENT(template, name, proto, args)                                                  \
	static inline void usertp__check_probe_##name(void)                                        \
	{                                                                                          \
		check_trace_callback_type_##name(usertp__event_probe_##template);                  \
	}
#define DEFINE_EVENT_PRINT(template, name, proto, args, print)                                     \
	DEFINE_EVENT(template, name, PARAMS(proto), PARAMS(args))
#define TRACE_DEFINE_ENUM(a)
#define TRACE_DEFINE_SIZEOF(a)
