/* SPDX-License-Identifier: MIT */
/*
 * dat-fire - fires a fixed sequence of events of every field kind and helper (the events of
 * fixtures/trace-all.h), from one thread, so that two runs record the same records.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>

#define CREATE_TRACE_POINTS
#include "trace-all.h"

int test_fn_reg(void)
{
	return 0;
}

void test_fn_unreg(void)
{
}

static void fire_strings(const char *str, const char *bytes, int len, const char *fmt, ...)
{
	va_list va;

	va_start(va, fmt);
	trace_t_strings(str, bytes, len, fmt, &va);
	va_end(va);
}

int main(int argc, char **argv)
{
	static const int arr[5] = { 1, -2, 3, 40000, -5 };
	static const unsigned long mask[2] = { 0xdeadbeefUL, 0x1UL };
	static const unsigned char buf[4] = { 0x01, 0x02, 0xfe, 0xff };
	struct test_pair pair = { 3, 4 };
	int i, rounds = argc > 1 ? atoi(argv[1]) : 10;

	for (i = 0; i < rounds; i++) {
		trace_t_scalars(-7 + i, -1234567890123L, 4000000000u, 'A', 18000000000000000000ull,
				-300, true, (const void *)0x1234, pair, "worker-thread-long-name");
		fire_strings("hello", "abcdefgh", 5, "n=%d s=%s", i, "fmt");
		trace_t_dynamic(arr, 5, mask, 128, buf, 4);
		trace_t_helpers(1 | 4 | 0x100, TEST_LEVEL_HIGH, 0xbeef, 0x123456789abcULL);
		trace_t_rel("relative", arr, 3, mask, 64);
		trace_t_class_plain(i, NULL);
		trace_t_class_print(i, "print");
		trace_t_class_cond(i, "cond");
		trace_t_cond(i);
		trace_t_plain_text(i);
		trace_t_sizes(i);
	}
	return 0;
}
