/* SPDX-License-Identifier: MIT */
/* ct-main.c - main() of every compile-* test: the test itself is ct_run() in ct-uses.c. */
#include "ct-common.h"

int main(void)
{
	return ct_run();
}
