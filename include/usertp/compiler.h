/* SPDX-License-Identifier: MIT */
/*
 * usertp/compiler.h - small compiler helpers shared by the public headers.
 *
 * Everything here is spelled with the usertp prefix so that including a usertp header never
 * defines a generic name (likely, __stringify, ...) in the user's program.
 */
#ifndef USERTP_COMPILER_H
#define USERTP_COMPILER_H

#define USERTP__STRINGIFY_1(...) #__VA_ARGS__
#define USERTP_STRINGIFY(...) USERTP__STRINGIFY_1(__VA_ARGS__)
#define USERTP__PASTE_1(a, b) a##b
#define USERTP_PASTE(a, b) USERTP__PASTE_1(a, b)

#define usertp_likely(x) __builtin_expect(!!(x), 1)
#define usertp_unlikely(x) __builtin_expect(!!(x), 0)

#define USERTP_EXPORT __attribute__((visibility("default")))
#define USERTP_UNUSED __attribute__((unused))

/*
 * For the library functions an enabled event calls (the iterator's RCU section, a probe's
 * reserve and commit): call them through the GOT, one instruction, rather than a PLT stub
 * that jumps through it.  GCC only; other compilers keep the PLT.
 */
#if defined(__has_attribute)
#if __has_attribute(noplt)
#define USERTP__NOPLT __attribute__((noplt))
#endif
#endif
#ifndef USERTP__NOPLT
#define USERTP__NOPLT
#endif

/*
 * USERTP_HAS_ARGS(...) is 1 when given two or more arguments and 0 for one.  TP_printk()
 * needs it: strict C11 and C++17 keep the comma of ", ##__VA_ARGS__", so the format string
 * and its arguments are told apart by counting (up to 64 arguments).
 */
#define USERTP__NTH_ARG(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16,   \
			_17, _18, _19, _20, _21, _22, _23, _24, _25, _26, _27, _28, _29, _30, _31, \
			_32, _33, _34, _35, _36, _37, _38, _39, _40, _41, _42, _43, _44, _45, _46, \
			_47, _48, _49, _50, _51, _52, _53, _54, _55, _56, _57, _58, _59, _60, _61, \
			_62, _63, _64, _65, N, ...)                                                \
	N
#define USERTP_HAS_ARGS(...) USERTP__NTH_ARG(__VA_ARGS__, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0)

#ifdef __cplusplus
#define USERTP_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#define USERTP__C_BEGIN extern "C" {
#define USERTP__C_END }
#else
#define USERTP_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#define USERTP__C_BEGIN
#define USERTP__C_END
#endif

#endif /* USERTP_COMPILER_H */
