/* SPDX-License-Identifier: MIT */
/*
 * <linux/tracepoint.h> for user space: kernel trace headers include this name, so it is
 * provided (in the directory that `pkg-config --cflags usertp` adds) as the usertp tracepoint
 * API.  That directory holds only this file and trace/, so no system header is hidden.
 *
 * No include guard of its own: usertp/tracepoint.h keeps the TRACE_EVENT() declarations
 * outside its guard on purpose, and they must be found again by every trace header.
 */
#include <usertp/tracepoint.h>
