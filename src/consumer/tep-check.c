/* SPDX-License-Identifier: MIT */
/* tep-check.c - a record's fields against its bounds, before libtraceevent prints it. */
#include <string.h>

#include "tep-check.h"

static unsigned long long word_at(const unsigned char *p, int size)
{
	if (size == 2) {
		unsigned short v;

		memcpy(&v, p, 2);
		return v;
	}
	unsigned int v;

	memcpy(&v, p, 4);
	return v;
}

bool usertp__tep_record_ok(const struct tep_event *ev, const void *data, int size,
			   const char **bad)
{
	const unsigned char *rec = data;

	for (const struct tep_format_field *f = ev ? ev->format.fields : NULL; f; f = f->next) {
		unsigned long long word;
		unsigned int off, len;

		if (f->offset < 0 || f->size < 0 || f->offset + f->size > size)
			goto out;
		if (!(f->flags & TEP_FIELD_IS_DYNAMIC))
			continue;
		if (f->size != 2 && f->size != 4)
			goto out;
		word = word_at(rec + f->offset, f->size);
		off = (unsigned int)(word & 0xffff);
		len = f->size == 2 ? 0 : (unsigned int)(word >> 16);
		if (f->flags & TEP_FIELD_IS_RELATIVE)
			off += (unsigned int)(f->offset + f->size);
		if (off > (unsigned int)size || len > (unsigned int)size - off)
			goto out;
		continue;
out:
		if (bad)
			*bad = f->name;
		return false;
	}
	return true;
}
