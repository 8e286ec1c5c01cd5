/* SPDX-License-Identifier: MIT */
/*
 * comms.h - private to libusertp-consumer: the names of a program's threads as a session
 * keeps them, "tid comm" lines (saved_cmdlines' text), merged as the program tells more.
 */
#ifndef USERTP_CONSUMER_COMMS_H
#define USERTP_CONSUMER_COMMS_H

#include "session-core.h"

/*
 * Merge @lines into *@text (NULL: none yet): a thread @lines names takes its name there (a
 * thread id used again, by a new thread), the others are kept.  Return: 0 or -ENOMEM (*@text
 * unchanged).
 */
USERTP__HIDDEN int usertp__comms_merge(char **text, const char *lines);

#endif
