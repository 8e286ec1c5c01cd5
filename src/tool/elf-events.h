/* SPDX-License-Identifier: MIT */
/* elf-events.h - private to the usertp command: the events an ELF file defines (elf-events.c). */
#ifndef USERTP_ELF_EVENTS_H
#define USERTP_ELF_EVENTS_H

#include <stddef.h>

/*
 * The events the executable or shared library @path defines, as "sys:event" lines in *out
 * (to free()).  Return: 0, or a negative errno with the reason in @err (-ENOENT: no events).
 */
int usertp_elf_events(const char *path, char **out, char *err, size_t errlen);

#endif
