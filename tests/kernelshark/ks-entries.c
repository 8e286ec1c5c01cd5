/* SPDX-License-Identifier: MIT */
/*
 * ks-entries - loads a trace.dat file through KernelShark's own library (libkshark, the code
 * the GUI uses to read a file) and prints every entry it made, one line each, in its order:
 *
 *	CPU SECS.NSECS COMM-PID NAME: INFO	an event (INFO read again through the entry's offset)
 *	CPU LOST N				KernelShark's "missed events" entry (N = ? if unknown)
 *
 * test-kernelshark.sh compares these lines with `trace-cmd report` on the same file.
 *
 * Debian ships libkshark.so.2 without headers, so it is opened with dlopen() (exit 77 when it
 * is not installed) and the few functions and the one structure used are declared here, as
 * KernelShark 2.x defines them in libkshark.h.  usage: ks-entries FILE
 */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

/* KernelShark 2.x's struct kshark_entry (libkshark.h); the layout differs in 1.x. */
struct kshark_entry {
	struct kshark_entry *next;
	uint16_t visible;
	int16_t stream_id;
	int16_t event_id;
	int16_t cpu;
	int32_t pid;
	int64_t offset; /* for a missed-events entry: the number of events missed */
	int64_t ts;
};

/* KernelShark gives its entry for "events were lost here" this id (KS_EVENT_OVERFLOW). */
#define KS_EVENT_OVERFLOW (-EOVERFLOW)

struct kshark_context;

static struct {
	bool (*instance)(struct kshark_context **ctx);
	int (*open)(struct kshark_context *ctx, const char *file);
	ssize_t (*load_entries)(struct kshark_context *ctx, int sd, struct kshark_entry ***rows);
	char *(*get_event_name)(const struct kshark_entry *entry);
	char *(*get_task)(const struct kshark_entry *entry);
	char *(*get_info)(const struct kshark_entry *entry);
	void (*free_ctx)(struct kshark_context *ctx);
} ks;

/* Every symbol, or false; kshark_add_stream is there only to tell 2.x from 1.x. */
static bool load_symbols(void *lib)
{
	void *v2 = dlsym(lib, "kshark_add_stream");

	*(void **)&ks.instance = dlsym(lib, "kshark_instance");
	*(void **)&ks.open = dlsym(lib, "kshark_open");
	*(void **)&ks.load_entries = dlsym(lib, "kshark_load_entries");
	*(void **)&ks.get_event_name = dlsym(lib, "kshark_get_event_name");
	*(void **)&ks.get_task = dlsym(lib, "kshark_get_task");
	*(void **)&ks.get_info = dlsym(lib, "kshark_get_info");
	*(void **)&ks.free_ctx = dlsym(lib, "kshark_free");
	return v2 && ks.instance && ks.open && ks.load_entries && ks.get_event_name &&
	       ks.get_task && ks.get_info && ks.free_ctx;
}

/* "system/name" as KernelShark names events; trace-cmd report prints the name alone. */
static const char *event_name(const char *full)
{
	const char *slash = strchr(full, '/');

	return slash ? slash + 1 : full;
}

static int print_entry(const struct kshark_entry *e)
{
	char *name, *task, *info;
	int ret = 0;

	if (e->event_id == KS_EVENT_OVERFLOW) {
		if (e->offset < 0)
			printf("%d LOST ?\n", e->cpu);
		else
			printf("%d LOST %" PRId64 "\n", e->cpu, e->offset);
		return 0;
	}
	if (e->event_id < 0 || e->ts < 0) {
		fprintf(stderr, "ks-entries: entry with event id %d, time %" PRId64 "\n",
			e->event_id, e->ts);
		return -1;
	}
	name = ks.get_event_name(e);
	task = ks.get_task(e);
	info = ks.get_info(e);
	if (!name || !info) {
		fprintf(stderr, "ks-entries: KernelShark cannot name or read the event at offset %"
			PRId64 " (id %d)\n", e->offset, e->event_id);
		ret = -1;
	} else {
		printf("%d %" PRId64 ".%09" PRId64 " %s-%d %s: %s\n", e->cpu, e->ts / 1000000000,
		       e->ts % 1000000000, task ? task : "<...>", e->pid, event_name(name), info);
	}
	free(name);
	free(task);
	free(info);
	return ret;
}

int main(int argc, char **argv)
{
	struct kshark_context *ctx = NULL;
	struct kshark_entry **rows = NULL;
	ssize_t n, i;
	void *lib;
	int sd, ret = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: ks-entries FILE\n");
		return 2;
	}
	lib = dlopen("libkshark.so.2", RTLD_NOW);
	if (!lib) {
		printf("SKIP: KernelShark's library is not installed (%s)\n", dlerror());
		return 77;
	}
	if (!load_symbols(lib)) {
		printf("SKIP: libkshark.so.2 is not KernelShark 2.x\n");
		return 77;
	}
	if (!ks.instance(&ctx)) {
		fprintf(stderr, "ks-entries: kshark_instance failed\n");
		return 1;
	}
	sd = ks.open(ctx, argv[1]);
	if (sd < 0) {
		fprintf(stderr, "ks-entries: KernelShark cannot open %s: %s\n", argv[1], strerror(-sd));
		return 1;
	}
	n = ks.load_entries(ctx, sd, &rows);
	if (n <= 0) {
		fprintf(stderr, "ks-entries: KernelShark loaded %zd entries from %s\n", n, argv[1]);
		return 1;
	}
	for (i = 0; i < n; i++)
		if (print_entry(rows[i]))
			ret = 1;
	/* Each entry is the start of a block of libkshark's own, freed as a whole. */
	for (i = 0; i < n; i++)
		free(rows[i]);
	free(rows);
	ks.free_ctx(ctx);
	return ret;
}
