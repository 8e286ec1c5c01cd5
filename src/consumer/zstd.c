/* SPDX-License-Identifier: MIT */
/* zstd.c - libzstd through dlopen (zstd.h says why). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>

#include "zstd.h"

static struct {
	size_t (*decompress)(void *dst, size_t dst_size, const void *src, size_t src_size);
	unsigned int (*is_error)(size_t code);
	size_t (*bound)(size_t size);
	void *(*cctx_new)(void);
	size_t (*cctx_free)(void *cctx);
	size_t (*compress)(void *cctx, void *dst, size_t dst_cap, const void *src, size_t size,
			   int level);
	const char *(*version)(void);
	unsigned long long (*frame_size)(const void *src, size_t size);
	bool loaded;
} api;

static void load(void)
{
	void *lib = dlopen("libzstd.so.1", RTLD_NOW | RTLD_LOCAL);

	if (!lib)
		return;
	*(void **)&api.decompress = dlsym(lib, "ZSTD_decompress");
	*(void **)&api.is_error = dlsym(lib, "ZSTD_isError");
	*(void **)&api.bound = dlsym(lib, "ZSTD_compressBound");
	*(void **)&api.cctx_new = dlsym(lib, "ZSTD_createCCtx");
	*(void **)&api.cctx_free = dlsym(lib, "ZSTD_freeCCtx");
	*(void **)&api.compress = dlsym(lib, "ZSTD_compressCCtx");
	*(void **)&api.version = dlsym(lib, "ZSTD_versionString");
	*(void **)&api.frame_size = dlsym(lib, "ZSTD_getFrameContentSize");
	api.loaded = api.decompress && api.is_error && api.bound && api.cctx_new && api.cctx_free &&
		     api.compress && api.version && api.frame_size;
}

bool usertp__zstd_available(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, load);
	return api.loaded;
}

const char *usertp__zstd_version(void)
{
	return usertp__zstd_available() ? api.version() : "";
}

bool usertp__zstd_decompress(void *dst, size_t dst_size, const void *src, size_t src_size)
{
	size_t got;

	if (!usertp__zstd_available())
		return false;
	got = api.decompress(dst, dst_size, src, src_size);
	return !api.is_error(got) && got == dst_size;
}

int usertp__zstd_frame_size(const void *src, size_t size, uint64_t *out)
{
	unsigned long long n;

	if (!usertp__zstd_available())
		return -1;
	n = api.frame_size(src, size);
	if (n == (unsigned long long)-1) /* ZSTD_CONTENTSIZE_UNKNOWN */
		return 0;
	if (n == (unsigned long long)-2) /* ZSTD_CONTENTSIZE_ERROR */
		return -1;
	*out = n;
	return 1;
}

struct usertp__zstd_cctx {
	void *cctx;
	int level;
};

struct usertp__zstd_cctx *usertp__zstd_cctx_new(int level)
{
	struct usertp__zstd_cctx *z;

	if (!usertp__zstd_available() || !(z = calloc(1, sizeof(*z))))
		return NULL;
	z->cctx = api.cctx_new();
	z->level = level;
	if (!z->cctx) {
		free(z);
		return NULL;
	}
	return z;
}

void usertp__zstd_cctx_free(struct usertp__zstd_cctx *z)
{
	if (!z)
		return;
	api.cctx_free(z->cctx);
	free(z);
}

size_t usertp__zstd_bound(size_t size)
{
	return usertp__zstd_available() ? api.bound(size) : 0;
}

size_t usertp__zstd_compress(struct usertp__zstd_cctx *z, void *dst, size_t dst_cap,
			     const void *src, size_t src_size)
{
	size_t n = api.compress(z->cctx, dst, dst_cap, src, src_size, z->level);

	return api.is_error(n) ? 0 : n;
}
