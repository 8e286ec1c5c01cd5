/* SPDX-License-Identifier: MIT */
/*
 * test-number - the numbers usertp takes from outside (src/common/number.c): decimal values
 * with bounds (usertp__parse_u64), and the kernel's kstrtoull() that tracefs's number files,
 * its pid lists and the filters' values follow (usertp__kstrtoull), case by case.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "harness.h"
#include "number.h"

static void kstrtoull_case(const char *text, unsigned int base, int want, uint64_t want_value)
{
	uint64_t v = 12345;
	int ret = usertp__kstrtoull(text, strlen(text), base, &v);

	CHECK(ret == want, "kstrtoull(\"%s\", %u): %d, not %d", text, base, ret, want);
	CHECK(want || v == want_value, "kstrtoull(\"%s\", %u): %" PRIu64 ", not %" PRIu64, text, base,
	      v, want_value);
}

int main(void)
{
	uint64_t v;

	/* As the kernel's number files (base 10): a '+', leading zeros, one newline. */
	kstrtoull_case("1", 10, 0, 1);
	kstrtoull_case("+1", 10, 0, 1);
	kstrtoull_case("01", 10, 0, 1);
	kstrtoull_case("1\n", 10, 0, 1);
	kstrtoull_case("18446744073709551615", 10, 0, UINT64_MAX);
	kstrtoull_case("18446744073709551616", 10, -ERANGE, 0);
	kstrtoull_case("", 10, -EINVAL, 0);
	kstrtoull_case("\n", 10, -EINVAL, 0);
	kstrtoull_case("+", 10, -EINVAL, 0);
	kstrtoull_case("1\n\n", 10, -EINVAL, 0);
	kstrtoull_case(" 1", 10, -EINVAL, 0);
	kstrtoull_case("1 ", 10, -EINVAL, 0);
	kstrtoull_case("-1", 10, -EINVAL, 0);
	kstrtoull_case("0x1", 10, -EINVAL, 0);
	kstrtoull_case("++1", 10, -EINVAL, 0);
	/* Base 0 (the pid lists, the filters): hex, octal, decimal. */
	kstrtoull_case("0x1f", 0, 0, 31);
	kstrtoull_case("0X1F", 0, 0, 31);
	kstrtoull_case("017", 0, 0, 15);
	kstrtoull_case("0", 0, 0, 0);
	kstrtoull_case("19", 0, 0, 19);
	kstrtoull_case("08", 0, -EINVAL, 0);
	kstrtoull_case("0x", 0, -EINVAL, 0);
	kstrtoull_case("0xg", 0, -EINVAL, 0);
	kstrtoull_case("0xffffffffffffffff", 0, 0, UINT64_MAX);
	kstrtoull_case("0x10000000000000000", 0, -ERANGE, 0);
	/* Bytes past @len are not read. */
	CHECK(!usertp__kstrtoull("12junk", 2, 10, &v) && v == 12, "kstrtoull of 2 bytes of \"12junk\"");
	/* usertp__parse_u64: decimal, all of it, within bounds. */
	CHECK(!usertp__parse_u64("42", 1, 100, &v) && v == 42, "parse_u64(42)");
	CHECK(usertp__parse_u64("0", 1, 100, &v) == -ERANGE, "parse_u64(0) in [1, 100]");
	CHECK(usertp__parse_u64("99999999999999999999999", 1, 100, &v) == -ERANGE, "parse_u64(huge)");
	CHECK(usertp__parse_u64("4x", 1, 100, &v) == -EINVAL, "parse_u64(4x)");
	CHECK(usertp__parse_u64("", 1, 100, &v) == -EINVAL, "parse_u64(empty)");
	CHECK(usertp__parse_u64("-4", 0, 100, &v) == -EINVAL, "parse_u64(-4)");
	return harness_done();
}
