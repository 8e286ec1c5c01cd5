/* SPDX-License-Identifier: MIT */
/*
 * pid-list.h - lists of thread ids, as tracefs's set_event_pid and set_event_notrace_pid keep
 * them (pid-list.c): ascending, no duplicates.  One home for their text forms: the file's
 * (white space between pids) and the control protocol's (commas), and for the rule that a
 * list with one bad token adds nothing.
 */
#ifndef USERTP_PID_LIST_H
#define USERTP_PID_LIST_H

#include <stdbool.h>
#include <stddef.h>

/* The highest pid taken, as tracefs's pid lists (above pid_max too: 2^30 - 1). */
#define USERTP__PID_LIST_MAX_PID 1073741823

struct usertp__pid_list {
	int *pids; /* ascending, unique */
	size_t nr;
};

/*
 * Add every pid of @text (separated by any of @seps) to @list.  A pid is written as the
 * kernel's kstrtoul() reads it: decimal, octal after a 0, hex after 0x, a '+' before.
 * Return: 0; -EINVAL for a token that is not such a number, -EPERM for one above
 * USERTP__PID_LIST_MAX_PID (tracefs's errnos), -ENOMEM: then nothing is added.  Text with
 * no pid changes nothing.
 */
int usertp__pid_list_parse(struct usertp__pid_list *list, const char *text, const char *seps);
/* The same check, adding nothing. */
int usertp__pid_list_check(const char *text, const char *seps);
/*
 * @nr pids of an array given to an API into @list (added).  Return: 0, -EINVAL (one below 0
 * or above USERTP__PID_LIST_MAX_PID: nothing is added) or -ENOMEM (nothing is added).
 */
int usertp__pid_list_from(struct usertp__pid_list *list, const int *pids, size_t nr);
/* Is @pid in @list? */
bool usertp__pid_list_has(const struct usertp__pid_list *list, int pid);
/* Add or remove one pid.  Return: 0 or -ENOMEM (for add). */
int usertp__pid_list_add(struct usertp__pid_list *list, int pid);
void usertp__pid_list_remove(struct usertp__pid_list *list, int pid);
/* A copy of @from into @to (empty on -ENOMEM). */
int usertp__pid_list_copy(struct usertp__pid_list *to, const struct usertp__pid_list *from);
/* The pids separated by @sep (a line each with '\n'), into a new string (to free()), or NULL. */
char *usertp__pid_list_text(const struct usertp__pid_list *list, char sep);
void usertp__pid_list_free(struct usertp__pid_list *list);

#endif
