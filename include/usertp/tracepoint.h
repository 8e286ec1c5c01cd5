/* SPDX-License-Identifier: MIT */
/*
 * usertp/tracepoint.h - static tracepoints for user-space programs, with the API of the
 * kernel's include/linux/tracepoint.h.
 *
 * A tracepoint is a hook in the program that calls the functions ("probes") attached to it.
 * While nothing is attached, its call site is a 5-byte nop (x86-64) that the runtime rewrites
 * into a jump when the first probe is registered; the arguments are not even evaluated.
 *
 *	DECLARE_TRACE(job_start, TP_PROTO(int id), TP_ARGS(id));   in a header: declares
 *	    trace_job_start(int id), trace_job_start_enabled(), register_trace_job_start(),
 *	    register_trace_prio_job_start(), unregister_trace_job_start()
 *	DEFINE_TRACE(job_start, TP_PROTO(int id), TP_ARGS(id));    in exactly one .c file
 *
 * A probe has the tracepoint's prototype preceded by the data pointer given at registration:
 *
 *	static void my_probe(void *data, int id) { ... }
 *	register_trace_job_start(my_probe, my_data);
 *
 * Probes run in the thread that hit the tracepoint, highest priority first (default 10, as in
 * the kernel; equal priorities in registration order).  Probe lists are published with RCU
 * (liburcu's "bulletproof" flavour, which needs no per-thread registration): after
 * unregister_trace_<name>() and tracepoint_synchronize_unregister() return, no thread is
 * running the removed probe any more.
 *
 * Most programs do not use this header directly but TRACE_EVENT() (see trace-event.h and
 * <trace/define_trace.h>), which defines a tracepoint together with a binary record and a
 * format description for it.
 *
 * Building with -DUSERTP_NO_JUMP_LABEL (automatic on architectures other than x86-64) turns
 * every site into a relaxed load and an unlikely branch instead of a patched nop: use it
 * where code pages must never be written (W^X policies).
 */
#ifndef USERTP_TRACEPOINT_H
#define USERTP_TRACEPOINT_H

#ifndef __cplusplus
#include <stdbool.h>
#endif
#include <stddef.h>
#include <stdint.h>

#include <usertp/compiler.h>

USERTP__C_BEGIN

/* The generic type probes are stored as; each is called through its real prototype. */
typedef void (*usertp_probe_func)(void);

/* One attached probe.  A tracepoint's probes form an array ended by func == NULL. */
struct usertp_probe {
	usertp_probe_func func;
	void *data;
	int prio;
};

/*
 * struct usertp_tracepoint - one tracepoint, defined by DEFINE_TRACE() in the program.
 *
 * Part of the ABI between compiled programs and libusertp: only ever grows at the end,
 * and struct_size tells the library which fields a program was built with.
 */
struct usertp_tracepoint {
	uint32_t struct_size;
	int enabled;			 /* 1 while probes are attached (read by fallback sites) */
	const char *name;
	struct usertp_probe *probes;	 /* RCU-published; NULL when no probe is attached, */
					 /* so a published array is never empty */
	int (*regfunc)(void);		 /* TRACE_EVENT_FN: run before the first probe */
	void (*unregfunc)(void);	 /* TRACE_EVENT_FN: run after the last probe went */
};

#define TRACEPOINT_DEFAULT_PRIO 10

USERTP_EXPORT int usertp_tracepoint_probe_register(struct usertp_tracepoint *tp,
						   usertp_probe_func probe, void *data);
USERTP_EXPORT int usertp_tracepoint_probe_register_prio(struct usertp_tracepoint *tp,
							usertp_probe_func probe, void *data,
							int prio);
USERTP_EXPORT int usertp_tracepoint_probe_unregister(struct usertp_tracepoint *tp,
						     usertp_probe_func probe, void *data);
USERTP_EXPORT void usertp_tracepoint_synchronize_unregister(void);

/* Used by the generated iterators: enter/leave an RCU read-side section around the probes. */
USERTP_EXPORT USERTP__NOPLT struct usertp_probe *usertp__probes_begin(struct usertp_tracepoint *tp);
USERTP_EXPORT USERTP__NOPLT void usertp__probes_end(void);

/*
 * Per shared object bookkeeping.  Every object (the executable and each shared library)
 * collects its tracepoints, events and call sites in ELF sections; the linker provides their
 * bounds as __start_/__stop_ symbols, hidden so that each object sees its own.  A constructor
 * emitted into every translation unit that includes this header hands them to libusertp; the
 * weak, hidden usertp__this_object makes that one registration per object (the library
 * ignores repeats), and the destructor withdraws them at dlclose().
 */
struct usertp_event;
struct usertp_eval_map;
struct usertp_printk_site;

/* One call site: where the nop is, where the "on" path starts, and whose key it follows. */
struct usertp__jump_entry {
	uint64_t code;
	uint64_t target;
	struct usertp_tracepoint *tp;
};

struct usertp__object {
	uint32_t struct_size;
	int registered;
	struct usertp_tracepoint **tracepoints, **tracepoints_end;
	struct usertp_event **events, **events_end;
	struct usertp__jump_entry *jumps, *jumps_end;
	struct usertp_eval_map **eval_maps, **eval_maps_end;
	/* Since 0.2 (struct_size says): usertp_printk()'s call sites (usertp/printk.h). */
	struct usertp_printk_site **printk_sites, **printk_sites_end;
};

USERTP_EXPORT void usertp__object_register(struct usertp__object *obj);
USERTP_EXPORT void usertp__object_unregister(struct usertp__object *obj);

#if !defined(USERTP__BUILDING_LIBRARY)
#define USERTP__SECTION_BOUNDS(type, sec)                                                          \
	extern type __start_##sec[] __attribute__((weak, visibility("hidden")));                  \
	extern type __stop_##sec[] __attribute__((weak, visibility("hidden")));
USERTP__SECTION_BOUNDS(struct usertp_tracepoint *, __usertp_tracepoints)
USERTP__SECTION_BOUNDS(struct usertp_event *, __usertp_events)
USERTP__SECTION_BOUNDS(struct usertp__jump_entry, __usertp_jump_table)
USERTP__SECTION_BOUNDS(struct usertp_eval_map *, __usertp_eval_maps)
USERTP__SECTION_BOUNDS(struct usertp_printk_site *, __usertp_printk)
#undef USERTP__SECTION_BOUNDS

__attribute__((weak, visibility("hidden"))) struct usertp__object usertp__this_object = {
	sizeof(struct usertp__object),
	0,
	__start___usertp_tracepoints,
	__stop___usertp_tracepoints,
	__start___usertp_events,
	__stop___usertp_events,
	__start___usertp_jump_table,
	__stop___usertp_jump_table,
	__start___usertp_eval_maps,
	__stop___usertp_eval_maps,
	__start___usertp_printk,
	__stop___usertp_printk,
};

static void __attribute__((constructor, used)) usertp__object_ctor(void)
{
	usertp__object_register(&usertp__this_object);
}

static void __attribute__((destructor, used)) usertp__object_dtor(void)
{
	usertp__object_unregister(&usertp__this_object);
}
#endif

/*
 * The on/off test at a call site.
 *
 * x86-64: a 5-byte nop, and an entry in __usertp_jump_table naming the site, the "on" label
 * and the tracepoint.  The runtime turns the nop into "jmp on-label" with one atomic store;
 * ".p2align 6,,4" keeps the 5 bytes inside one 64-byte cache line (it pads, with nops, only
 * when the site would start in the last 4 bytes of a line), so that the store never tears an
 * instruction another thread is executing.  The tracepoint is named in the assembly by its
 * symbol, because "i" constraints cannot take addresses in PIC code.
 *
 * Elsewhere (or with USERTP_NO_JUMP_LABEL): a relaxed load of tp->enabled.
 */
#if defined(__x86_64__) && !defined(USERTP_NO_JUMP_LABEL)
#define USERTP_HAVE_JUMP_LABEL 1
#define USERTP__DEFINE_SITE_TEST(name)                                                             \
	static inline __attribute__((always_inline)) bool usertp__tp_on_##name(void)              \
	{                                                                                          \
		__asm__ goto(".p2align 6, , 4\n\t"                                                 \
			     "1: .byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n\t"                           \
			     ".pushsection __usertp_jump_table, \"aw\"\n\t"                        \
			     ".balign 8\n\t"                                                       \
			     ".quad 1b, %l[l_on], __tracepoint_" #name "\n\t"                      \
			     ".popsection"                                                         \
			     :                                                                     \
			     :                                                                     \
			     :                                                                     \
			     : l_on);                                                              \
		return false;                                                                      \
	l_on:                                                                                      \
		return true;                                                                       \
	}
#else
#define USERTP_HAVE_JUMP_LABEL 0
#define USERTP__DEFINE_SITE_TEST(name)                                                             \
	static inline __attribute__((always_inline)) bool usertp__tp_on_##name(void)              \
	{                                                                                          \
		return usertp_unlikely(__atomic_load_n(&__tracepoint_##name.enabled,               \
						       __ATOMIC_RELAXED));                         \
	}
#endif

#ifndef PARAMS
#define PARAMS(...) __VA_ARGS__
#endif

/* The tracepoint and its iterator have C linkage, so C and C++ files can share them. */
#ifdef __cplusplus
#define USERTP__EXTERN_C extern "C"
#else
#define USERTP__EXTERN_C extern
#endif
#define TP_PROTO(...) __VA_ARGS__
#define TP_ARGS(...) __VA_ARGS__
#define TP_CONDITION(...) __VA_ARGS__

/*
 * __DECLARE_TRACE - everything a caller of a tracepoint sees.
 *
 * trace_<name>() tests the site and, when on, checks the condition and calls the iterator
 * defined once by DEFINE_TRACE(), which runs the probes inside an RCU read-side section.
 * Keeping the loop out of line keeps every call site small.
 *
 * trace_<name>() is a function, as in the kernel, so C evaluates its arguments before the
 * test; the compiler moves the computations without side effects into the "on" path, but a
 * call such as trace_x(expensive()) runs expensive() every time.  usertp_trace(x, ...) is the
 * macro form that evaluates its arguments only when the tracepoint is on.
 */
#define usertp_trace(name, ...)                                                                    \
	do {                                                                                       \
		if (usertp__tp_on_##name())                                                        \
			usertp__trace_on_##name(__VA_ARGS__);                                      \
	} while (0)

#define __DECLARE_TRACE(name, proto, args, cond, data_proto)                                        \
	USERTP__EXTERN_C struct usertp_tracepoint __tracepoint_##name;                             \
	USERTP__EXTERN_C void __traceiter_##name(data_proto);                                      \
	USERTP__DEFINE_SITE_TEST(name)                                                             \
	static inline void usertp__trace_on_##name(proto)                                          \
	{                                                                                          \
		if (cond)                                                                          \
			__traceiter_##name(NULL, args);                                            \
	}                                                                                          \
	static inline __attribute__((always_inline)) void trace_##name(proto)                      \
	{                                                                                          \
		if (usertp__tp_on_##name())                                                        \
			usertp__trace_on_##name(args);                                             \
	}                                                                                          \
	static inline bool trace_##name##_enabled(void)                                            \
	{                                                                                          \
		return usertp__tp_on_##name();                                                     \
	}                                                                                          \
	static inline int register_trace_##name(void (*probe)(data_proto), void *data)             \
	{                                                                                          \
		return usertp_tracepoint_probe_register(&__tracepoint_##name,                      \
							(usertp_probe_func)probe, data);           \
	}                                                                                          \
	static inline int register_trace_prio_##name(void (*probe)(data_proto), void *data,        \
						     int prio)                                     \
	{                                                                                          \
		return usertp_tracepoint_probe_register_prio(&__tracepoint_##name,                 \
							     (usertp_probe_func)probe, data, prio); \
	}                                                                                          \
	static inline int unregister_trace_##name(void (*probe)(data_proto), void *data)           \
	{                                                                                          \
		return usertp_tracepoint_probe_unregister(&__tracepoint_##name,                    \
							  (usertp_probe_func)probe, data);         \
	}                                                                                          \
	static inline void check_trace_callback_type_##name(void (*cb)(data_proto))                \
	{                                                                                          \
		(void)cb;                                                                          \
	}

/*
 * DEFINE_TRACE_FN - the tracepoint object, its entry in __usertp_tracepoints, and the
 * iterator.  Probes are called through their real prototype, data first.  The array the
 * iterator gets is never empty (no probe is NULL), so the first probe is called untested.
 */
#define DEFINE_TRACE_FN(name, reg, unreg, proto, args)                                              \
	USERTP__EXTERN_C struct usertp_tracepoint __tracepoint_##name;                             \
	USERTP__EXTERN_C void __traceiter_##name(void *__data, proto);                             \
	struct usertp_tracepoint __tracepoint_##name __attribute__((used)) = {                     \
		sizeof(struct usertp_tracepoint), 0, #name, NULL, reg, unreg,                      \
	};                                                                                         \
	static struct usertp_tracepoint *__usertp_tp_ptr_##name                                    \
		__attribute__((used, section("__usertp_tracepoints"))) = &__tracepoint_##name;     \
	void __traceiter_##name(void *__data, proto)                                               \
	{                                                                                          \
		struct usertp_probe *it = usertp__probes_begin(&__tracepoint_##name);              \
		(void)__data;                                                                      \
		if (it) {                                                                          \
			do                                                                         \
				((void (*)(void *, proto))it->func)(it->data, args);               \
			while ((++it)->func);                                                      \
		}                                                                                  \
		usertp__probes_end();                                                              \
	}

#define DEFINE_TRACE(name, proto, args) DEFINE_TRACE_FN(name, NULL, NULL, PARAMS(proto), PARAMS(args))

#ifndef USERTP_NO_KERNEL_NAMES
/* The kernel's names for the generic calls. */
static inline int tracepoint_probe_register(struct usertp_tracepoint *tp, void *probe, void *data)
{
	return usertp_tracepoint_probe_register(tp, (usertp_probe_func)probe, data);
}
static inline int tracepoint_probe_register_prio(struct usertp_tracepoint *tp, void *probe,
						 void *data, int prio)
{
	return usertp_tracepoint_probe_register_prio(tp, (usertp_probe_func)probe, data, prio);
}
static inline int tracepoint_probe_unregister(struct usertp_tracepoint *tp, void *probe,
					      void *data)
{
	return usertp_tracepoint_probe_unregister(tp, (usertp_probe_func)probe, data);
}
static inline void tracepoint_synchronize_unregister(void)
{
	usertp_tracepoint_synchronize_unregister();
}
#endif

USERTP__C_END

#endif /* USERTP_TRACEPOINT_H */

/*
 * The declaring side of the TRACE_EVENT family lives outside the include guard, as in the
 * kernel: <trace/define_trace.h> undefines these after processing one trace header, and a
 * second trace header in the same file must find them again when it includes this file.
 */
#ifndef DECLARE_TRACE
#define DECLARE_TRACE(name, proto, args)                                                            \
	__DECLARE_TRACE(name, PARAMS(proto), PARAMS(args), 1, PARAMS(void *__data, proto))
#define DECLARE_TRACE_CONDITION(name, proto, args, cond)                                           \
	__DECLARE_TRACE(name, PARAMS(proto), PARAMS(args), PARAMS(cond),                           \
			PARAMS(void *__data, proto))
#endif

#ifndef TRACE_EVENT
#define DECLARE_EVENT_CLASS(name, proto, args, tstruct, assign, print)
#define DEFINE_EVENT(template, name, proto, args) DECLARE_TRACE(name, PARAMS(proto), PARAMS(args))
#define DEFINE_EVENT_FN(template, name, proto, args, reg, unreg)                                   \
	DECLARE_TRACE(name, PARAMS(proto), PARAMS(args))
#define DEFINE_EVENT_PRINT(template, name, proto, args, print)                                     \
	DECLARE_TRACE(name, PARAMS(proto), PARAMS(args))
#define DEFINE_EVENT_CONDITION(template, name, proto, args, cond)                                  \
	DECLARE_TRACE_CONDITION(name, PARAMS(proto), PARAMS(args), PARAMS(cond))
#define TRACE_EVENT(name, proto, args, struct, assign, print)                                      \
	DECLARE_TRACE(name, PARAMS(proto), PARAMS(args))
#define TRACE_EVENT_FN(name, proto, args, struct, assign, print, reg, unreg)                       \
	DECLARE_TRACE(name, PARAMS(proto), PARAMS(args))
#define TRACE_EVENT_FN_COND(name, proto, args, cond, struct, assign, print, reg, unreg)            \
	DECLARE_TRACE_CONDITION(name, PARAMS(proto), PARAMS(args), PARAMS(cond))
#define TRACE_EVENT_CONDITION(name, proto, args, cond, struct, assign, print)                      \
	DECLARE_TRACE_CONDITION(name, PARAMS(proto), PARAMS(args), PARAMS(cond))
#define TRACE_DEFINE_ENUM(a)
#define TRACE_DEFINE_SIZEOF(a)
#endif
