/* SPDX-License-Identifier: MIT */
/*
 * Stage 4: the field table of each event class, from which the format text is written.
 *
 *	static const struct usertp_event_field *usertp__fields_<call>(unsigned int *nr)
 *	{
 *		typedef struct trace_event_raw_<call> usertp__raw;
 *		static const struct usertp_event_field fields[] = {
 *			{ "<type>", "<item>", offsetof(usertp__raw, <item>), sizeof(<type>),
 *			  <signed>, USERTP_FIELD_SCALAR, 0 },
 *			...
 *		};
 *		...
 *	}
 *
 * The typedef is local so that the field macros, which cannot know the class name, can
 * still name the record type.  Array types are written "type[len]" with len expanded, as
 * the kernel does; plain char arrays and strings show signed:0 as in the kernel.
 */
#define TP_STRUCT__entry(...) __VA_ARGS__

#define USERTP__FIELD(type_str, item, member, size, is_signed, kind, is_string)                    \
	{ type_str, #item, (unsigned short)offsetof(usertp__raw, member), (unsigned short)(size),  \
	  (unsigned char)(is_signed), kind, is_string },

#define __field(type, item)                                                                        \
	USERTP__FIELD(#type, item, item, sizeof(type), usertp__is_signed_type(type),               \
		      USERTP_FIELD_SCALAR, 0)
#define __field_struct(type, item)                                                                 \
	USERTP__FIELD(#type, item, item, sizeof(type), 0, USERTP_FIELD_SCALAR, 0)
#define __array(type, item, len)                                                                   \
	USERTP__FIELD(#type "[" USERTP_STRINGIFY(len) "]", item, item, sizeof(type) * (len),       \
		      usertp__is_signed_type(type), USERTP_FIELD_ARRAY, 0)
#define __dynamic_array(type, item, len)                                                           \
	USERTP__FIELD("__data_loc " #type "[]", item, __data_loc_##item, 4,                        \
		      usertp__is_signed_type(type), USERTP_FIELD_DATA_LOC, 0)
#define __rel_dynamic_array(type, item, len)                                                       \
	USERTP__FIELD("__rel_loc " #type "[]", item, __rel_loc_##item, 4,                          \
		      usertp__is_signed_type(type), USERTP_FIELD_REL_LOC, 0)
#define USERTP__STRING_FIELD(item)                                                                 \
	USERTP__FIELD("__data_loc char[]", item, __data_loc_##item, 4, 0, USERTP_FIELD_DATA_LOC, 1)
#define USERTP__REL_STRING_FIELD(item)                                                             \
	USERTP__FIELD("__rel_loc char[]", item, __rel_loc_##item, 4, 0, USERTP_FIELD_REL_LOC, 1)
#define __string(item, src) USERTP__STRING_FIELD(item)
#define __string_len(item, src, len) USERTP__STRING_FIELD(item)
#define __vstring(item, fmt, ap) USERTP__STRING_FIELD(item)
#define __rel_string(item, src) USERTP__REL_STRING_FIELD(item)
#define __rel_string_len(item, src, len) USERTP__REL_STRING_FIELD(item)
#define __bitmask(item, nr_bits)                                                                   \
	USERTP__FIELD("__data_loc unsigned long[]", item, __data_loc_##item, 4, 0,                 \
		      USERTP_FIELD_DATA_LOC, 0)
#define __rel_bitmask(item, nr_bits)                                                               \
	USERTP__FIELD("__rel_loc unsigned long[]", item, __rel_loc_##item, 4, 0,                   \
		      USERTP_FIELD_REL_LOC, 0)

#define DECLARE_EVENT_CLASS(call, proto, args, tstruct, assign, print)                             \
	static const struct usertp_event_field *usertp__fields_##call(unsigned int *nr)            \
	{                                                                                          \
		typedef struct trace_event_raw_##call usertp__raw __attribute__((unused));         \
		static const struct usertp_event_field fields[] = { tstruct{                       \
			NULL, NULL, 0, 0, 0, 0, 0 } };                                             \
		*nr = (unsigned int)(sizeof(fields) / sizeof(fields[0]) - 1);                      \
		return fields;                                                                     \
	}

#define DEFINE_EVENT(template, name, proto, args)
#define DEFINE_EVENT_PRINT(template, name, proto, args, print)
#define TRACE_DEFINE_ENUM(a)
#define TRACE_DEFINE_SIZEOF(a)
