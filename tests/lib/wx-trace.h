/* SPDX-License-Identifier: MIT */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM wx
#if !defined(_WX_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _WX_TRACE_H
#include <linux/tracepoint.h>
DECLARE_TRACE(wx_hit, TP_PROTO(int n), TP_ARGS(n));
#endif
#undef TRACE_INCLUDE_PATH
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_PATH .
#define TRACE_INCLUDE_FILE wx-trace
#include <trace/define_trace.h>
