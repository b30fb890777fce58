/* SPDX-License-Identifier: BSD-3-Clause */
/* Symbols of sampled addresses through elfutils' libdwfl: file offset to ELF address, function,
 * file:line. */
#include <stdlib.h>
#include <string.h>

#include <elfutils/libdwfl.h>
#include <gelf.h>

#include "grow.h"
#include "spacetime_impl.h"

/* One ELF file, reported once at its link-time addresses. */
typedef struct sym_file {
	char *path;
	Dwfl *dwfl;
	Dwfl_Module *mod; /* NULL when the file cannot be read as ELF */
	GElf_Addr bias;
} sym_file;

struct st_symbols {
	sym_file *files;
	size_t n, cap;
	mpxkit__u64map index; /* path hash -> file */
};

static const Dwfl_Callbacks offline_callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
};

int st_symbols_open(st_symbols **out)
{
	*out = calloc(1, sizeof **out);
	return *out ? 0 : -MPXKIT_ENOMEM;
}

void st_symbols_close(st_symbols *s)
{
	if (s == NULL)
		return;
	for (size_t i = 0; i < s->n; i++) {
		free(s->files[i].path);
		if (s->files[i].dwfl)
			dwfl_end(s->files[i].dwfl);
	}
	free(s->files);
	mpxkit__u64map_free(&s->index);
	free(s);
}

static sym_file *file_of(st_symbols *s, const char *path)
{
	uint64_t h = mpxkit__hash_bytes(path, strlen(path));
	size_t cursor;
	uint32_t v;
	sym_file *f;

	for (int found = mpxkit__u64map_find(&s->index, h, &v, &cursor); found;
	     found = mpxkit__u64map_find_next(&s->index, h, &v, &cursor))
		if (strcmp(s->files[v].path, path) == 0)
			return &s->files[v];
	if (mpxkit__reserve((void **)&s->files, &s->cap, s->n + 1, sizeof *s->files) < 0)
		return NULL;
	f = &s->files[s->n];
	memset(f, 0, sizeof *f);
	if ((f->path = strdup(path)) == NULL ||
	    mpxkit__u64map_add(&s->index, h, (uint32_t)s->n) < 0) {
		free(f->path);
		return NULL;
	}
	s->n++;
	/* A file that is gone or not ELF stays without a module: its addresses are unknown. */
	f->dwfl = dwfl_begin(&offline_callbacks);
	if (f->dwfl != NULL) {
		dwfl_report_begin(f->dwfl);
		f->mod = dwfl_report_offline(f->dwfl, path, path, -1);
		dwfl_report_end(f->dwfl, NULL, NULL);
		if (f->mod != NULL && dwfl_module_getelf(f->mod, &f->bias) == NULL)
			f->mod = NULL;
	}
	return f;
}

/* The ELF address of a file offset, through the PT_LOAD segment that maps it. */
static int vaddr_of(sym_file *f, uint64_t offset, uint64_t *vaddr)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(f->mod, &bias);
	size_t n;

	if (elf == NULL || elf_getphdrnum(elf, &n) != 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(elf, (int)i, &ph) == NULL || ph.p_type != PT_LOAD)
			continue;
		if (offset >= ph.p_offset && offset - ph.p_offset < ph.p_filesz) {
			*vaddr = offset - ph.p_offset + ph.p_vaddr;
			return 0;
		}
	}
	return -1;
}

int st_symbols_lookup(st_symbols *s, const char *path, uint64_t offset, st_symbol *out)
{
	sym_file *f;
	GElf_Off off;
	GElf_Sym sym;
	Dwfl_Line *line;
	const char *name;
	uint64_t vaddr;

	memset(out, 0, sizeof *out);
	out->address = offset;
	f = file_of(s, path);
	if (f == NULL)
		return -MPXKIT_ENOMEM;
	if (f->mod == NULL || vaddr_of(f, offset, &vaddr) < 0)
		return 0;
	out->address = vaddr;
	name = dwfl_module_addrinfo(f->mod, vaddr + f->bias, &off, &sym, NULL, NULL, NULL);
	if (name != NULL) {
		out->function = name;
		out->lo = vaddr - off;
		out->size = sym.st_size;
		if (out->size <= off)
			out->size = 0; /* a symbol without a size: its extent is not known */
	}
	line = dwfl_module_getsrc(f->mod, vaddr + f->bias);
	if (line != NULL) {
		int lineno = 0;
		const char *src = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);
		if (src != NULL && lineno > 0) {
			out->file = src;
			out->line = (uint32_t)lineno;
		}
	}
	return 0;
}
