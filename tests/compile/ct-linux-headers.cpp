// SPDX-License-Identifier: MIT
// ct-linux-headers.c compiled as C++.
#include "ct-linux-headers.c"
