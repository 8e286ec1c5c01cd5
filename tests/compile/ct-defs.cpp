// SPDX-License-Identifier: MIT
// ct-defs.c compiled as C++.
#include "ct-defs.c"
