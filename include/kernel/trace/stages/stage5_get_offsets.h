/* SPDX-License-Identifier: MIT */
/*
 * Stage 5: the size of each record's dynamic part, computed from the tracepoint's arguments,
 * and where each dynamic field's payload goes.
 *
 *	static unsigned long usertp__get_offsets_<call>(
 *		struct trace_event_data_offsets_<call> *__data_offsets, <proto>)
 *	{
 *		unsigned long __data_size = 0;
 *		for each dynamic field, in order:
 *			length = <len> * sizeof(<type>);
 *			__data_offsets-><item> = (length << 16) | (offset of __data + __data_size);
 *			__data_size += length;
 *		return __data_size;
 *	}
 *
 * Strings are measured once, kept in <item>_ptr_ (a NULL one as "(null)"), and cut at
 * USERTP_STRING_MAX bytes.  A record whose total size does not fit a location word is refused
 * by the event file's reserve (counted as lost), so a too-long length here never corrupts
 * anything.
 */
#define TP_STRUCT__entry(...) __VA_ARGS__

#define __field(type, item)
#define __field_struct(type, item)
#define __array(type, item, len)
#define USERTP__DYNAMIC(item, length, base)                                                        \
	__item_length = (unsigned long)(length);                                                   \
	__data_offsets->item = (uint32_t)((__data_size + (base)) & 0xffff) |                       \
			       (uint32_t)((__item_length & 0xffff) << 16);                         \
	__data_size += __item_length;
#define __dynamic_array(type, item, len)                                                           \
	USERTP__DYNAMIC(item, (len) * sizeof(type), offsetof(usertp__raw, __data))
#define __rel_dynamic_array(type, item, len)                                                       \
	USERTP__DYNAMIC(item, (len) * sizeof(type),                                                \
			offsetof(usertp__raw, __data) - offsetof(usertp__raw, __rel_loc_##item) -  \
				sizeof(uint32_t))
#define __string(item, src)                                                                        \
	__data_offsets->item##_ptr_ = usertp__str_src((const char *)(src));                        \
	__dynamic_array(char, item, usertp__str_size((const char *)__data_offsets->item##_ptr_))
#define __string_len(item, src, len)                                                               \
	__data_offsets->item##_ptr_ = (const void *)(src);                                         \
	__dynamic_array(char, item,                                                                \
			usertp_str_len_size((const char *)__data_offsets->item##_ptr_, (len)))     \
	__data_offsets->item##_ptr_ = usertp__str_src((const char *)__data_offsets->item##_ptr_);
#define __vstring(item, fmt, ap) __dynamic_array(char, item, usertp_vstr_len(fmt, ap))
#define __bitmask(item, nr_bits) __dynamic_array(unsigned long, item, USERTP__BITS_TO_LONGS(nr_bits))
#define __rel_string(item, src)                                                                    \
	__data_offsets->item##_ptr_ = usertp__str_src((const char *)(src));                        \
	__rel_dynamic_array(char, item,                                                            \
			    usertp__str_size((const char *)__data_offsets->item##_ptr_))
#define __rel_string_len(item, src, len)                                                           \
	__data_offsets->item##_ptr_ = (const void *)(src);                                         \
	__rel_dynamic_array(char, item,                                                            \
			    usertp_str_len_size((const char *)__data_offsets->item##_ptr_, (len))) \
	__data_offsets->item##_ptr_ = usertp__str_src((const char *)__data_offsets->item##_ptr_);
#define __rel_bitmask(item, nr_bits)                                                               \
	__rel_dynamic_array(unsigned long, item, USERTP__BITS_TO_LONGS(nr_bits))

#define DECLARE_EVENT_CLASS(call, proto, args, tstruct, assign, print)                             \
	static inline unsigned long usertp__get_offsets_##call(                                    \
		struct trace_event_data_offsets_##call *__data_offsets, proto)                     \
	{                                                                                          \
		typedef struct trace_event_raw_##call usertp__raw __attribute__((unused));         \
		unsigned long __data_size = 0;                                                     \
		unsigned long __item_length __attribute__((unused));                               \
		(void)__data_offsets;                                                              \
		tstruct return __data_size;                                                        \
	}

#define DEFINE_EVENT(template, name, proto, args)
#define DEFINE_EVENT_PRINT(template, name, proto, args, print)
#define TRACE_DEFINE_ENUM(a)
#define TRACE_DEFINE_SIZEOF(a)
