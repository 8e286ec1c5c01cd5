// SPDX-License-Identifier: MIT
// layout-std.cpp - the same events fired from C++ std::thread threads (libstdc++ creates them
// with libc's pthread_create, whatever libusertp does).
#include <thread>
#include <vector>

#include "layout.h"

extern "C" int layout_fire_std(int threads, int n)
{
	std::vector<std::thread> pool;

	for (int t = 0; t < threads; t++)
		pool.emplace_back(layout_fire_jobs, t, n);
	for (auto &th : pool)
		th.join();
	return 2 * threads * n;
}
