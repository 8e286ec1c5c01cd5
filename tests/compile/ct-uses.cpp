// SPDX-License-Identifier: MIT
// ct-uses.c compiled as C++.
#include "ct-uses.c"
