/* SPDX-License-Identifier: MIT */
/*
 * <trace/trace_events.h> - turns the TRACE_EVENT() definitions of one trace header into
 * events.  Included by <trace/define_trace.h> only, in the CREATE_TRACE_POINTS translation
 * unit.  Each stage redefines the field and helper macros, then re-reads the trace header;
 * the stage headers in trace/stages/ each open with a sketch of what their pass produces.
 *
 *	1 record struct		trace_event_raw_<class>, TRACE_DEFINE_ENUM tables
 *	2 dynamic offsets	trace_event_data_offsets_<class>
 *	3 printer		trace_raw_output_<class>(): TP_printk compiled
 *	4 field table		usertp__fields_<class>()
 *	5 dynamic sizes		usertp__get_offsets_<class>()
 *	6 probe			usertp__event_probe_<class>(): reserve, assign, commit
 *	7 objects		event_class_<class>, event_<name>, print fmt text
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <usertp/trace-event.h>

#include <trace/stages/init.h>

/* Generated functions take every tracepoint argument whether they use it or not. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"

#include <trace/stages/reset.h>
#include <trace/stages/stage1_struct_define.h>
#include TRACE_INCLUDE(TRACE_INCLUDE_FILE)

#include <trace/stages/reset.h>
#include <trace/stages/stage2_data_offsets.h>
#include TRACE_INCLUDE(TRACE_INCLUDE_FILE)

#include <trace/stages/reset.h>
#include <trace/stages/stage3_trace_output.h>
#include TRACE_INCLUDE(TRACE_INCLUDE_FILE)

#include <trace/stages/reset.h>
#include <trace/stages/stage4_event_fields.h>
#include TRACE_INCLUDE(TRACE_INCLUDE_FILE)

#include <trace/stages/reset.h>
#include <trace/stages/stage5_get_offsets.h>
#include TRACE_INCLUDE(TRACE_INCLUDE_FILE)

#include <trace/stages/reset.h>
#include <trace/stages/stage6_event_callback.h>
#include TRACE_INCLUDE(TRACE_INCLUDE_FILE)

#include <trace/stages/reset.h>
#include <trace/stages/stage7_class_define.h>
#include TRACE_INCLUDE(TRACE_INCLUDE_FILE)

#include <trace/stages/reset.h>

#pragma GCC diagnostic pop

/* As in the kernel: TRACE_SYSTEM_VAR belongs to this header only. */
#undef TRACE_SYSTEM_VAR
#undef USERTP__SYSTEM_STRING
