// SPDX-License-Identifier: MIT
/*
 * plugin-usertp_spans.cpp - a KernelShark plugin that draws the spans of <usertp/track.h>:
 *
 *	kernelshark -p plugin-usertp_spans.so run.dat
 *
 * Each span (usertp:usertp_span, begin to end on its thread, nested as usertp report --spans
 * pairs them) and each async span (usertp:usertp_async, begin to end of one name and id, on
 * any threads) is a box over the graph of the task that ended it and of the CPU it ended on,
 * from its begin to its end; nested spans are taller than the ones they hold.  Built against
 * libkshark-dev (KernelShark 2.x); KernelShark loads it with -p (or Tools > Add plugins).
 */
#include <algorithm>
#include <unordered_map>
#include <vector>

#include "libkshark.h"
#include "libkshark-model.h"
#include "libkshark-plugin.h"
#include "KsPlotTools.hpp"
#include "KsPlugins.hpp"

namespace {

/* A begin or an end, as loaded: the entry, its type ('B' or 'E') and its key. */
struct mark {
	kshark_entry *entry;
	int type;
	int64_t key; /* the thread (spans), the id (async spans) */
};

/* A span drawn: from begin to end, and how deep it is nested (0: not). */
struct span {
	kshark_entry *begin, *end;
	int depth;
};

struct spans {
	int span_id = -1, async_id = -1;
	std::vector<mark> spans, asyncs;
	bool paired = false;
	std::unordered_multimap<int, span> by_task, by_cpu;
};

/* KernelShark's per-stream context is calloc()ed: it holds a pointer to ours. */
struct context {
	spans *s;
};

void free_context(context *ctx)
{
	if (ctx)
		delete ctx->s;
}

} // namespace

KS_DEFINE_PLUGIN_CONTEXT(struct context, free_context);

static void add(spans *s, const span &sp)
{
	s->by_task.emplace(sp.end->pid, sp);
	s->by_cpu.emplace(sp.end->cpu, sp);
}

/* Begins and ends paired in time order: per thread the last begun ends first; async by id. */
static void pair(spans *s)
{
	auto by_time = [](const mark &a, const mark &b) { return a.entry->ts < b.entry->ts; };
	std::unordered_map<int64_t, std::vector<kshark_entry *>> open;

	std::stable_sort(s->spans.begin(), s->spans.end(), by_time);
	for (const mark &m : s->spans) {
		auto &stack = open[m.key];

		if (m.type == 'B') {
			stack.push_back(m.entry);
		} else if (m.type == 'E' && !stack.empty()) {
			kshark_entry *begin = stack.back();

			stack.pop_back();
			add(s, { begin, m.entry, (int)stack.size() });
		}
	}
	open.clear();
	std::stable_sort(s->asyncs.begin(), s->asyncs.end(), by_time);
	for (const mark &m : s->asyncs) {
		auto &stack = open[m.key];

		if (m.type == 'B') {
			stack.assign(1, m.entry);
		} else if (m.type == 'E' && !stack.empty()) {
			add(s, { stack.back(), m.entry, 0 });
			stack.clear();
		}
	}
	s->paired = true;
}

static void on_record(kshark_data_stream *stream, void *rec, kshark_entry *entry)
{
	context *ctx = __get_context(stream->stream_id);
	int64_t type = 0, id = 0;

	if (!ctx || kshark_read_record_field_int(stream, rec, "track_event_type", &type))
		return;
	if (entry->event_id == ctx->s->span_id) {
		ctx->s->spans.push_back({ entry, (int)type, entry->pid });
	} else if (!kshark_read_record_field_int(stream, rec, "scope_span_id", &id)) {
		ctx->s->asyncs.push_back({ entry, (int)type, id });
	}
}

static void draw(kshark_cpp_argv *argv_c, int sd, int val, int draw_action)
{
	context *ctx = __get_context(sd);
	KsCppArgV *argv = KS_ARGV_TO_CPP(argv_c);
	KsPlot::Graph *graph = argv->_graph;
	kshark_trace_histo *histo = argv->_histo;

	if (!ctx || !graph->size())
		return;
	if (!ctx->s->paired)
		pair(ctx->s);
	auto &map = (draw_action & KSHARK_TASK_DRAW) ? ctx->s->by_task : ctx->s->by_cpu;
	auto range = map.equal_range(val);
	int last = graph->size() - 1;

	for (auto it = range.first; it != range.second; ++it) {
		const span &sp = it->second;
		int b0, b1, height;

		/* (Outside the view on one side: from or to its edge; wholly outside: not drawn.) */
		if ((int64_t)sp.end->ts < (int64_t)histo->min || (int64_t)sp.begin->ts > (int64_t)histo->max)
			continue;
		b0 = (int64_t)sp.begin->ts < (int64_t)histo->min ? 0 : ksmodel_get_bin(histo, sp.begin);
		b1 = (int64_t)sp.end->ts > (int64_t)histo->max ? last : ksmodel_get_bin(histo, sp.end);
		if (b0 < 0 || b1 < 0)
			continue;
		height = graph->height() * (0.3 + 0.15 * std::min(sp.depth, 4));

		KsPlot::Rectangle *box = new KsPlot::Rectangle;
		KsPlot::Point p0 = graph->bin(b0)._base, p1 = graph->bin(b1)._base;

		box->setFill(false);
		box->setPoint(0, p0.x() - 1, p0.y() - height);
		box->setPoint(1, p0.x() - 1, p0.y() - 1);
		box->setPoint(2, p1.x() + 1, p1.y() - 1);
		box->setPoint(3, p1.x() + 1, p1.y() - height);
		box->_color = KsPlot::Color(0, 128, 255);
		box->_size = 1.5;
		argv->_shapes->push_front(box);
	}
}

extern "C" int KSHARK_PLOT_PLUGIN_INITIALIZER(struct kshark_data_stream *stream)
{
	context *ctx = __init(stream->stream_id);

	if (!ctx)
		return 0;
	ctx->s = new spans;
	ctx->s->span_id = kshark_find_event_id(stream, "usertp/usertp_span");
	ctx->s->async_id = kshark_find_event_id(stream, "usertp/usertp_async");
	if (ctx->s->span_id < 0 && ctx->s->async_id < 0) {
		__close(stream->stream_id);
		return 0;
	}
	if (ctx->s->span_id >= 0)
		kshark_register_event_handler(stream, ctx->s->span_id, on_record);
	if (ctx->s->async_id >= 0)
		kshark_register_event_handler(stream, ctx->s->async_id, on_record);
	kshark_register_draw_handler(stream, draw);
	return 1;
}

extern "C" int KSHARK_PLOT_PLUGIN_DEINITIALIZER(struct kshark_data_stream *stream)
{
	context *ctx = __get_context(stream->stream_id);
	int ret = 0;

	if (ctx) {
		if (ctx->s->span_id >= 0)
			kshark_unregister_event_handler(stream, ctx->s->span_id, on_record);
		if (ctx->s->async_id >= 0)
			kshark_unregister_event_handler(stream, ctx->s->async_id, on_record);
		kshark_unregister_draw_handler(stream, draw);
		ret = 1;
	}
	__close(stream->stream_id);
	return ret;
}
