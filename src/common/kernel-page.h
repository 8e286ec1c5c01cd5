/* SPDX-License-Identifier: MIT */
/*
 * kernel-page.h - the kernel's ring-buffer page (a "sub-buffer"), as trace_pipe_raw gives it
 * and trace.dat files hold it, and as each CPU buffer of a program's ring buffer is made of
 * (ring-buffer.h): its constants, the entry header word, a record encoder and the seal of the
 * commit word.  The one home of this format: only the ring buffer's assembly writer repeats
 * two of its numbers.
 *
 * A page: a u64 timestamp (of its first entry), a u64 commit word (the bytes of entries, and
 * flags), then entries.  Each entry starts with a u32 word: type_len in its 5 low bits, the
 * time delta since the entry before in the 27 above.  type_len 1..28 is a record of that many
 * 4-byte words; 0 a record whose length (a u32, counting itself) follows; 29 padding; 30 a
 * time extend (the delta's bits above 27 in the next u32); 31 an absolute time stamp.
 */
#ifndef USERTP_KERNEL_PAGE_H
#define USERTP_KERNEL_PAGE_H

#include <stdbool.h>
#include <stdint.h>

#define USERTP__KPAGE_SIZE 4096u
#define USERTP__KPAGE_HEADER 16u
#define USERTP__KPAGE_DATA (USERTP__KPAGE_SIZE - USERTP__KPAGE_HEADER)

#define USERTP__KPAGE_TYPE_PADDING 29
#define USERTP__KPAGE_TYPE_TIME_EXTEND 30
#define USERTP__KPAGE_TYPE_TIME_STAMP 31
#define USERTP__KPAGE_DELTA_BITS 27
#define USERTP__KPAGE_MAX_SMALL 112u /* the longest payload type_len 1..28 holds */

/*
 * The commit word: bits 31 and 30 (the kernel's), the bytes of entries in the bits below 27.
 * The kernel sets bit 31 on a long, so the bits above it come sign-extended (all ones) in its
 * pages: what is not flags or size is ignored, as libtraceevent does.
 */
#define USERTP__KPAGE_LOST_EVENTS (1ull << 31) /* events were lost before this page */
#define USERTP__KPAGE_LOST_COUNT (1ull << 30)  /* their count follows the entries (a u64) */
#define USERTP__KPAGE_COMMIT_MASK ((1ull << 27) - 1)

/* Lost events whose number is not known: the page is flagged without a count. */
#define USERTP__KPAGE_LOST_UNKNOWN UINT64_MAX

/* An entry's header word. */
static inline uint32_t usertp__kpage_entry_word(uint32_t type_len, uint64_t delta)
{
	return type_len | (uint32_t)(delta << 5);
}

/*
 * The entry of a record of @size bytes, as the kernel lays it out on x86-64: the payload
 * rounded up to whole 4-byte words (*@len), after the header word alone (type_len: the words)
 * when that is at most USERTP__KPAGE_MAX_SMALL bytes, else after a header word of type_len 0
 * and a length word (@len + 4, counting itself).  Return: the bytes before the payload, 4 or
 * 8.  The one statement of this rule: the encoder below and the programs' writer
 * (ring-buffer.c) use it; rb-rseq-x86_64.S repeats it.
 */
static inline uint32_t usertp__kpage_record_header(uint32_t size, uint32_t *len)
{
	*len = (size + 3) & ~3u;
	return *len <= USERTP__KPAGE_MAX_SMALL ? 4 : 8;
}

/*
 * A page being filled with records, as the kernel writes them on x86-64: 4-byte aligned
 * (usertp__kpage_record_header()); a time extend before a record more than 2^27 - 1 ns after
 * the one before.  Used by the trace.dat merge and the mount's trace_pipe_raw.
 */
struct usertp__kpage {
	unsigned char *data; /* USERTP__KPAGE_SIZE bytes */
	uint32_t used;	     /* bytes of entries */
	uint64_t ts;	     /* of the last entry */
};

/* Start @p on @data (its header's timestamp @ts; its entries empty). */
void usertp__kpage_open(struct usertp__kpage *p, unsigned char *data, uint64_t ts);

/*
 * Append the header of a record of @size bytes at @ts (not before the page's last entry)
 * within @room bytes of entries (USERTP__KPAGE_DATA, less what the caller keeps for a lost
 * count).  Return: where its @size bytes go (the padding after them is zeroed), or NULL when
 * it does not fit, or comes more than 2^59 ns after the last (the page is then unchanged).
 */
void *usertp__kpage_add(struct usertp__kpage *p, uint64_t ts, uint32_t size, uint32_t room);

/*
 * Make page @data (@used bytes of entries) a page as readers expect it, in place: the size and
 * the loss flags in its commit word, a known count of @lost events after the entries where it
 * fits (USERTP__KPAGE_LOST_UNKNOWN: the flag alone), zeros after.
 */
void usertp__kpage_seal(unsigned char *data, uint32_t used, uint64_t lost);

/*
 * How a host lays its pages out, as trace.dat files hold them: the page size, the size of a
 * long (of the commit word and of the lost count after the entries: 8, or 4 from a 32-bit
 * kernel, whose header is then 12 bytes) and the byte order.  On a big-endian host the kernel's
 * bitfields put type_len in the entry word's 5 high bits and the delta in the 27 low ones.
 * Pages this code writes are usertp__kpage_native's.
 */
struct usertp__kpage_format {
	uint32_t page_size;
	uint8_t long_size;
	bool big_endian;
};
extern const struct usertp__kpage_format usertp__kpage_native;

/*
 * The commit word of page @data in format @f: its bytes of entries into *@used, and the
 * events lost just before it into *@lost: 0, the count stored after the entries, or
 * USERTP__KPAGE_LOST_UNKNOWN when the page is flagged without one.  As libtraceevent reads
 * it: the count's flag without the loss flag means nothing lost.  Return: false when it does
 * not hold together (entries, or the count after them, past the page).
 */
bool usertp__kpage_header_as(const struct usertp__kpage_format *f, const unsigned char *data,
			     uint32_t *used, uint64_t *lost);
/* The same, for a page of this host's (usertp__kpage_native). */
bool usertp__kpage_header(const unsigned char *data, uint32_t *used, uint64_t *lost);

/*
 * One record of a page; ts is absolute; off is where its header word is in the entries (after
 * any time extend before it).
 */
struct usertp__kpage_entry {
	uint64_t ts;
	const unsigned char *data;
	uint32_t size;
	uint32_t off;
};

/*
 * The one walker of a page's entries, every offset checked: records, with the padding, time
 * extends and time stamps between them applied.  A record in the short form has the size of
 * its words; one with a length word the size that word gives.
 */
struct usertp__kpage_iter {
	const unsigned char *page;
	const unsigned char *entries; /* after the page's header */
	uint32_t used;		      /* bytes of entries to walk (at most the page's room) */
	uint32_t off;		      /* of the next entry; of the bad one after -EINVAL */
	uint64_t ts;
	bool big_endian;
};
/* Start at the first entry of @page, in format @f, of which @used bytes of entries are walked. */
void usertp__kpage_iter_init_as(struct usertp__kpage_iter *it, const struct usertp__kpage_format *f,
				const unsigned char *page, uint32_t used);
/* The same, for a page of this host's. */
void usertp__kpage_iter_init(struct usertp__kpage_iter *it, const unsigned char *page, uint32_t used);
/*
 * Return: 1 with *entry filled, 0 at the end of the entries (or the kernel's null entry),
 * -EINVAL at an entry that does not fit in them.
 */
int usertp__kpage_iter_next(struct usertp__kpage_iter *it, struct usertp__kpage_entry *entry);

/* The most records a page holds (each takes 8 bytes at least). */
#define USERTP__KPAGE_MAX_RECORDS (USERTP__KPAGE_DATA / 8)

/*
 * Walk all of a page's entries at once (@used bytes of them), every one checked: its records
 * into @out (@max of them at most).  For a page taken whole or not at all, walked once.
 * Return: how many, or -EINVAL when an entry does not fit in the entries.
 */
int usertp__kpage_records(const unsigned char *page, uint32_t used,
			  struct usertp__kpage_entry *out, unsigned int max);

/*
 * Page @data's @used bytes of entries made two pages, for a count of events lost before it
 * that a full page has no room for: its records in order, re-encoded (usertp__kpage_add()),
 * into @first as far as @room bytes of entries take them, the rest into @second; *@used1 and
 * *@used2 their bytes of entries (0: no records there).  Neither is sealed.  Return: 0, or
 * -EINVAL when @data does not parse.
 */
int usertp__kpage_split(const unsigned char *data, uint32_t used, uint32_t room,
			unsigned char *first, uint32_t *used1, unsigned char *second, uint32_t *used2);

#endif /* USERTP_KERNEL_PAGE_H */
