/* SPDX-License-Identifier: MIT */
/*
 * printk-lib.c - usertp_printk() in a shared library: printk-prog links it (printk_lib_fire()),
 * and dlopen-host loads it as a module (rec_mod_fire()) into a program that knows nothing of
 * usertp.
 */
#include <usertp/printk.h>

void printk_lib_fire(int i) __attribute__((visibility("default")));
void rec_mod_fire(int i) __attribute__((visibility("default")));

void printk_lib_fire(int i)
{
	usertp_printk("lib %d %s\n", i, "name");
}

void rec_mod_fire(int i)
{
	usertp_printk("module %d\n", i);
}
