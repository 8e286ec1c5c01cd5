/* SPDX-License-Identifier: MIT */
/*
 * Undefine every macro a stage of <trace/trace_events.h> may define, so that each stage
 * starts from nothing and a helper a stage does not define stays literal text (which the
 * format stage relies on).  Private to usertp's headers.
 */
#undef DECLARE_EVENT_CLASS
#undef DEFINE_EVENT
#undef DEFINE_EVENT_PRINT
#undef TRACE_DEFINE_ENUM
#undef TRACE_DEFINE_SIZEOF

#undef TP_STRUCT__entry
#undef TP_fast_assign
#undef TP_printk
#undef __entry

#undef __field
#undef __field_struct
#undef __array
#undef __dynamic_array
#undef __string
#undef __string_len
#undef __vstring
#undef __bitmask
#undef __rel_dynamic_array
#undef __rel_string
#undef __rel_string_len
#undef __rel_bitmask

#undef __get_dynamic_array
#undef __get_dynamic_array_len
#undef __get_str
#undef __get_bitmask
#undef __get_rel_dynamic_array
#undef __get_rel_dynamic_array_len
#undef __get_rel_str
#undef __get_rel_bitmask
#undef __assign_str
#undef __assign_rel_str
#undef __assign_vstr
#undef __assign_bitmask
#undef __assign_rel_bitmask
#undef __print_flags
#undef __print_symbolic
#undef __print_hex
#undef __print_hex_str
#undef __print_array
#undef __print_dynamic_array
