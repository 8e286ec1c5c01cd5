// SPDX-License-Identifier: MIT
// consumer.c compiled as C++.
#include "consumer.c"
