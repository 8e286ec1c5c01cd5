/* SPDX-License-Identifier: MIT */
/*
 * Stage 7: the event class and event objects, and the "print fmt" text of the format file.
 *
 *	static struct usertp_event_class event_class_<call> = {
 *		..., "<TRACE_SYSTEM>", usertp__fields_<call>, sizeof(record),
 *		usertp__event_probe_<call>, "\"<fmt>\", <args as text>", trace_raw_output_<call>
 *	};
 *	static struct usertp_event event_<name> = { ..., "<name>", &event_class_<template>,
 *						    &__tracepoint_<name>, ... };
 *	static struct usertp_event *ptr __attribute__((section("__usertp_events"))) = &event_<name>;
 *
 * The print fmt is TP_printk stringified after expansion with __entry spelled REC, as the
 * kernel writes it.  The helpers (__get_str, __print_flags, ...) are left undefined here so
 * that they stay literal for libtraceevent to interpret.
 */
#define __entry REC
#define USERTP__PRINT_FMT_0(fmt) "\"" fmt "\""
#define USERTP__PRINT_FMT_1(fmt, ...) "\"" fmt "\", " USERTP_STRINGIFY(__VA_ARGS__)
#define TP_printk(...) USERTP_PASTE(USERTP__PRINT_FMT_, USERTP_HAS_ARGS(__VA_ARGS__))(__VA_ARGS__)
#define __print_dynamic_array(array, el_size)                                                      \
	__print_array(__get_dynamic_array(array), __get_dynamic_array_len(array) / (el_size), el_size)

#define DECLARE_EVENT_CLASS(call, proto, args, tstruct, assign, print)                             \
	static struct usertp_event_class event_class_##call = {                                    \
		sizeof(struct usertp_event_class),                                                 \
		USERTP__SYSTEM_STRING,                                                             \
		usertp__fields_##call,                                                             \
		(unsigned int)sizeof(struct trace_event_raw_##call),                               \
		(usertp_probe_func)usertp__event_probe_##call,                                     \
		print,                                                                             \
		trace_raw_output_##call,                                                           \
	};

#define USERTP__DEFINE_EVENT(template, name, print_fmt, print_func)                                \
	static struct usertp_event event_##name = {                                                \
		sizeof(struct usertp_event), #name, &event_class_##template, &__tracepoint_##name, \
		print_fmt, print_func, NULL,                                                       \
	};                                                                                         \
	static struct usertp_event *__usertp_event_ptr_##name                                      \
		__attribute__((used, section("__usertp_events"))) = &event_##name;

#define DEFINE_EVENT(template, name, proto, args) USERTP__DEFINE_EVENT(template, name, NULL, NULL)
#define DEFINE_EVENT_PRINT(template, name, proto, args, print)                                     \
	USERTP__DEFINE_EVENT(template, name, print, trace_raw_output_##name)
#define TRACE_DEFINE_ENUM(a)
#define TRACE_DEFINE_SIZEOF(a)
