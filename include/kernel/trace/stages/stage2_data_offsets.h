/* SPDX-License-Identifier: MIT */
/*
 * Stage 2: where each dynamic field's payload goes in the record being written.
 *
 *	struct trace_event_data_offsets_<call> {
 *		uint32_t <item>;		location word: (length << 16) | offset
 *		const void *<item>_ptr_;	source, for __assign_str(item) with one argument
 *		int __usertp_unused;
 *	};
 */
#define TP_STRUCT__entry(...) __VA_ARGS__

#define __field(type, item)
#define __field_struct(type, item)
#define __array(type, item, len)
#define __dynamic_array(type, item, len)                                                           \
	uint32_t item;                                                                             \
	const void *item##_ptr_;
#define __string(item, src) __dynamic_array(char, item, -1)
#define __string_len(item, src, len) __dynamic_array(char, item, -1)
#define __vstring(item, fmt, ap) __dynamic_array(char, item, -1)
#define __bitmask(item, nr_bits) __dynamic_array(unsigned long, item, -1)
#define __rel_dynamic_array(type, item, len) __dynamic_array(type, item, len)
#define __rel_string(item, src) __dynamic_array(char, item, -1)
#define __rel_string_len(item, src, len) __dynamic_array(char, item, -1)
#define __rel_bitmask(item, nr_bits) __dynamic_array(unsigned long, item, -1)

#define DECLARE_EVENT_CLASS(call, proto, args, tstruct, assign, print)                             \
	struct trace_event_data_offsets_##call {                                                   \
		tstruct int __usertp_unused;                                                       \
	};

#define DEFINE_EVENT(template, name, proto, args)
#define DEFINE_EVENT_PRINT(template, name, proto, args, print)
#define TRACE_DEFINE_ENUM(a)
#define TRACE_DEFINE_SIZEOF(a)
