/* SPDX-License-Identifier: MIT */
/*
 * elf-events.c - the events an executable or shared library defines, read from its file
 * (usertp list -f FILE), without running it: the pointers of its __usertp_events section lead
 * to each event's name and to its class's system name.  In a position-independent file those
 * pointers are relocations (R_X86_64_RELATIVE) applied at load time: their addends are taken
 * here instead.  64-bit little-endian x86-64 ELF files; nothing in the file is trusted.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf-events.h"

struct elf {
	const unsigned char *data;
	size_t size;
	const Elf64_Ehdr *eh;
	const Elf64_Rela *relas; /* R_X86_64_RELATIVE ones, sorted by offset */
	size_t nr_relas;
};

static const void *at(const struct elf *e, uint64_t off, uint64_t len)
{
	return off <= e->size && len <= e->size - off ? e->data + off : NULL;
}

/* The file offset of virtual address @va (@len bytes in one PT_LOAD), or UINT64_MAX. */
static uint64_t va_to_off(const struct elf *e, uint64_t va, uint64_t len)
{
	for (unsigned int i = 0; i < e->eh->e_phnum; i++) {
		const Elf64_Phdr *ph = at(e, e->eh->e_phoff + (uint64_t)i * sizeof(*ph), sizeof(*ph));

		if (ph && ph->p_type == PT_LOAD && va >= ph->p_vaddr && va - ph->p_vaddr < ph->p_filesz &&
		    len <= ph->p_filesz - (va - ph->p_vaddr))
			return ph->p_offset + (va - ph->p_vaddr);
	}
	return UINT64_MAX;
}

static int cmp_rela(const void *a, const void *b)
{
	const Elf64_Rela *x = a, *y = b;

	return (x->r_offset > y->r_offset) - (x->r_offset < y->r_offset);
}

/* The pointer stored at @va as the loader leaves it; 0 if it cannot be read. */
static uint64_t read_ptr(const struct elf *e, uint64_t va)
{
	Elf64_Rela key = { .r_offset = va };
	const Elf64_Rela *r = e->nr_relas ? bsearch(&key, e->relas, e->nr_relas, sizeof(key), cmp_rela)
					  : NULL;
	uint64_t off = va_to_off(e, va, 8), v;

	if (r)
		return (uint64_t)r->r_addend;
	if (off == UINT64_MAX)
		return 0;
	memcpy(&v, e->data + off, 8);
	return v;
}

/* The NUL-terminated string at @va (at most 255 bytes), or NULL. */
static const char *read_str(const struct elf *e, uint64_t va)
{
	uint64_t off = va ? va_to_off(e, va, 1) : UINT64_MAX;
	const char *s;
	size_t max;

	if (off == UINT64_MAX)
		return NULL;
	s = (const char *)e->data + off;
	max = e->size - off < 256 ? e->size - off : 256;
	return memchr(s, 0, max) ? s : NULL;
}

static int load_relas(struct elf *e)
{
	size_t n = 0;

	for (unsigned int i = 0; i < e->eh->e_shnum; i++) {
		const Elf64_Shdr *sh = at(e, e->eh->e_shoff + (uint64_t)i * sizeof(*sh), sizeof(*sh));
		const Elf64_Rela *r;
		Elf64_Rela *grown;
		size_t count;

		if (!sh || sh->sh_type != SHT_RELA || !(r = at(e, sh->sh_offset, sh->sh_size)))
			continue;
		count = sh->sh_size / sizeof(*r);
		grown = realloc((void *)e->relas, (n + count) * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		e->relas = grown;
		for (size_t k = 0; k < count; k++)
			if (ELF64_R_TYPE(r[k].r_info) == R_X86_64_RELATIVE)
				grown[n++] = r[k];
	}
	e->nr_relas = n;
	if (n)
		qsort((void *)e->relas, n, sizeof(*e->relas), cmp_rela);
	return 0;
}

int usertp_elf_events(const char *path, char **out, char *err, size_t errlen)
{
	struct elf e = { 0 };
	const Elf64_Shdr *strtab, *sh;
	struct stat st;
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	int fd, ret = 0;
	bool found = false;

	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return ret;
	}
	e.size = (size_t)st.st_size;
	e.data = e.size >= sizeof(Elf64_Ehdr) ? mmap(NULL, e.size, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
	close(fd);
	if (e.data == MAP_FAILED) {
		snprintf(err, errlen, "%s: not an ELF file", path);
		return -EINVAL;
	}
	e.eh = (const Elf64_Ehdr *)e.data;
	if (memcmp(e.eh->e_ident, ELFMAG, SELFMAG) || e.eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    e.eh->e_ident[EI_DATA] != ELFDATA2LSB || e.eh->e_machine != EM_X86_64 ||
	    e.eh->e_shentsize != sizeof(Elf64_Shdr) || e.eh->e_phentsize != sizeof(Elf64_Phdr) ||
	    !(strtab = at(&e, e.eh->e_shoff + (uint64_t)e.eh->e_shstrndx * sizeof(Elf64_Shdr),
			  sizeof(Elf64_Shdr)))) {
		snprintf(err, errlen, "%s: not a 64-bit x86-64 ELF file", path);
		munmap((void *)e.data, e.size);
		return -EINVAL;
	}
	if (load_relas(&e) || !(f = open_memstream(&text, &len))) {
		free((void *)e.relas);
		munmap((void *)e.data, e.size);
		return -ENOMEM;
	}
	for (unsigned int i = 0; i < e.eh->e_shnum; i++) {
		const char *name;

		sh = at(&e, e.eh->e_shoff + (uint64_t)i * sizeof(*sh), sizeof(*sh));
		name = sh ? (const char *)at(&e, strtab->sh_offset + sh->sh_name, 16) : NULL;
		/* usertp_printk()'s sites: the process has libusertp's ftrace:bprint and bputs. */
		if (name && !strncmp(name, "__usertp_printk", 16) && sh->sh_size) {
			found = true;
			fputs("ftrace:bprint\nftrace:bputs\n", f);
			continue;
		}
		if (!name || strncmp(name, "__usertp_events", 16))
			continue;
		found = true;
		/* Each slot: a struct usertp_event *; name at 8, event_class at 16, system at 8. */
		for (uint64_t slot = sh->sh_addr; slot + 8 <= sh->sh_addr + sh->sh_size; slot += 8) {
			uint64_t ev = read_ptr(&e, slot), cls = ev ? read_ptr(&e, ev + 16) : 0;
			const char *evname = ev ? read_str(&e, read_ptr(&e, ev + 8)) : NULL;
			const char *system = cls ? read_str(&e, read_ptr(&e, cls + 8)) : NULL;

			if (evname && system)
				fprintf(f, "%s:%s\n", system, evname);
		}
	}
	fclose(f);
	free((void *)e.relas);
	munmap((void *)e.data, e.size);
	if (!found) {
		free(text);
		snprintf(err, errlen, "%s: defines no events (no __usertp_events section)", path);
		return -ENOENT;
	}
	*out = text;
	return ret;
}
