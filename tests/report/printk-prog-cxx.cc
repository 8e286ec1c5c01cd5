// SPDX-License-Identifier: MIT
// printk-prog.c compiled as C++: <usertp/printk.h> from a C++ program.
#include "printk-prog.c"
