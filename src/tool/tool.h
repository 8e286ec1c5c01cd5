/* SPDX-License-Identifier: MIT */
/*
 * tool.h - private to the usertp command: its subcommands and what they share.
 */
#ifndef USERTP_TOOL_H
#define USERTP_TOOL_H

/* Each subcommand gets argv from its own name on; returns the process exit status. */
int usertp__cmd_list(int argc, char **argv);
int usertp__cmd_record(int argc, char **argv);
int usertp__cmd_report(int argc, char **argv);
int usertp__cmd_stream(int argc, char **argv); /* record.c */
int usertp__cmd_snapshot(int argc, char **argv);
int usertp__cmd_mount(int argc, char **argv);

/* "usertp <cmd>: <message>" on stderr (printf-style). */
void usertp__tool_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* What getopt found wrong ('?'), as "usertp <cmd>: invalid option -x" and the like. */
void usertp__tool_bad_option(const char *cmd, const char *optstring, char **argv);

/* usertp report over one file held in memory, output discarded: the fuzz target's entry
 * (report.c). Always returns 0; what it must never do is crash or hang. */
#include <stddef.h>
#include <stdint.h>
int usertp_report_fuzz_one(const uint8_t *data, size_t size);

#endif /* USERTP_TOOL_H */
