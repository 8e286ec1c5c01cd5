/* SPDX-License-Identifier: MIT */
/*
 * zstd.h - libzstd, loaded (dlopen) the first time a trace.dat needs it: the reader of
 * compressed version 7 files and the writer of them.  Neither the usertp command nor
 * libusertp-consumer links it, so that nothing needs it installed until it is used.
 */
#ifndef USERTP_ZSTD_H
#define USERTP_ZSTD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Whether libzstd.so.1 could be loaded (it is tried once). */
bool usertp__zstd_available(void);
/* Its version ("1.5.4"), for the file's header; "" if not loaded. */
const char *usertp__zstd_version(void);

/* @src (@src_size bytes) into exactly @dst_size bytes at @dst.  Return: false if it does not. */
bool usertp__zstd_decompress(void *dst, size_t dst_size, const void *src, size_t src_size);
/*
 * What the zstd frame at @src says it holds (its header's content size), before anything is
 * decompressed.  Return: 1 with *out, 0 when the frame does not say, -1 when it is not one.
 */
int usertp__zstd_frame_size(const void *src, size_t size, uint64_t *out);

/* A compression context, kept for many blocks (one per block would be slower). */
struct usertp__zstd_cctx;
struct usertp__zstd_cctx *usertp__zstd_cctx_new(int level);
void usertp__zstd_cctx_free(struct usertp__zstd_cctx *z);
/* The most bytes @size bytes can take compressed. */
size_t usertp__zstd_bound(size_t size);
/* Return: the compressed size at @dst (room: @dst_cap), or 0 on an error. */
size_t usertp__zstd_compress(struct usertp__zstd_cctx *z, void *dst, size_t dst_cap,
			     const void *src, size_t src_size);

#endif /* USERTP_ZSTD_H */
