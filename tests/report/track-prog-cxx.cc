// SPDX-License-Identifier: MIT
// track-prog.c compiled as C++: <usertp/track.h> from a C++ program.
#include "track-prog.c"
