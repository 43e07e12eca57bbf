/* An object's ELF symbol tables (.symtab and .dynsym), read from its file: which function
 * covers an address. A stripped library keeps only its exported symbols, and the nearest one
 * below an address of a hidden function is some other function (dladdr's and addr2line's
 * answer); a symbol names a frame here only when its [value, value + size) holds the address.
 * 64-bit little-endian ELF only (what CUDA runs on); anything else reads as no symbols. */
#include "analyze/analyze.h"
#include "base/regfile.h"
#include "base/arrays.h"

#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SYMBOLS (8u << 20) /* entries read from one table, at most */
#define BACKWARD 64            /* symbols looked at below an address for one that covers it */

typedef struct {
    uint64_t value, size;
    uint64_t name; /* the name's offset in the file */
} elf_sym;

struct sb_elf_syms {
    FILE *f;       /* open for the names */
    int exec;      /* ET_EXEC: addresses are absolute */
    uint64_t base; /* ET_DYN: the lowest loaded address, page-aligned (what dladdr's base is) */
    elf_sym *s;    /* by value */
    size_t n, cap;
};

static int read_at(FILE *f, uint64_t off, void *buf, size_t n)
{
    return fseeko(f, (off_t)off, SEEK_SET) == 0 && fread(buf, 1, n, f) == n;
}

static int cmp_sym(const void *a, const void *b)
{
    const elf_sym *x = a, *y = b;
    return x->value < y->value ? -1 : x->value > y->value;
}

/* The defined functions of one symbol table (sh) whose size is known, names in strtab (str). */
static int read_table(sb_elf_syms *e, const Elf64_Shdr *sh, const Elf64_Shdr *str)
{
    if (sh->sh_entsize != sizeof(Elf64_Sym) || sh->sh_size / sizeof(Elf64_Sym) > MAX_SYMBOLS ||
        fseeko(e->f, (off_t)sh->sh_offset, SEEK_SET) != 0)
        return 0;
    size_t count = sh->sh_size / sizeof(Elf64_Sym);
    for (size_t i = 0; i < count; i++) {
        Elf64_Sym sym;
        if (fread(&sym, sizeof sym, 1, e->f) != 1)
            return 0;
        int type = ELF64_ST_TYPE(sym.st_info);
        if ((type != STT_FUNC && type != STT_GNU_IFUNC) || !sym.st_size ||
            sym.st_shndx == SHN_UNDEF || sym.st_name >= str->sh_size)
            continue;
        if (sb_grow(&e->s, &e->cap, e->n, sizeof *e->s) < 0)
            return -1;
        e->s[e->n++] = (elf_sym){sym.st_value, sym.st_size, str->sh_offset + sym.st_name};
    }
    return 0;
}

/* The lowest address a PT_LOAD segment asks for, page-aligned: dladdr's base is where that
 * page was mapped. 0 when unknown. */
static uint64_t load_base(FILE *f, const Elf64_Ehdr *h)
{
    uint64_t low = UINT64_MAX;
    for (int i = 0; h->e_phentsize == sizeof(Elf64_Phdr) && i < h->e_phnum; i++) {
        Elf64_Phdr ph;
        if (!read_at(f, h->e_phoff + (uint64_t)i * sizeof ph, &ph, sizeof ph))
            return 0;
        if (ph.p_type == PT_LOAD && ph.p_vaddr < low)
            low = ph.p_vaddr;
    }
    return low == UINT64_MAX ? 0 : low & ~(uint64_t)0xfff;
}

static int read_tables(sb_elf_syms *e, const Elf64_Ehdr *h)
{
    if (h->e_shentsize != sizeof(Elf64_Shdr) || !h->e_shnum) /* e_shnum: at most 65535 */
        return 0;
    Elf64_Shdr *sh = malloc((size_t)h->e_shnum * sizeof *sh);
    if (!sh)
        return -1;
    int rc = read_at(e->f, h->e_shoff, sh, (size_t)h->e_shnum * sizeof *sh) ? 0 : 1;
    for (int i = 0; !rc && i < h->e_shnum; i++)
        if ((sh[i].sh_type == SHT_SYMTAB || sh[i].sh_type == SHT_DYNSYM) &&
            sh[i].sh_link < h->e_shnum)
            rc = read_table(e, &sh[i], &sh[sh[i].sh_link]);
    free(sh);
    return rc < 0 ? -1 : 0;
}

sb_elf_syms *sb_elf_syms_open(const char *path)
{
    FILE *f = NULL; /* a regular file only: a record may name a FIFO, which would block */
    Elf64_Ehdr h;
    if (path[0] != '/' || sb_open_regular(path, &f) != SB_REG_OK)
        return NULL;
    if (!read_at(f, 0, &h, sizeof h) || memcmp(h.e_ident, ELFMAG, SELFMAG) != 0 ||
        h.e_ident[EI_CLASS] != ELFCLASS64 || h.e_ident[EI_DATA] != ELFDATA2LSB ||
        (h.e_type != ET_EXEC && h.e_type != ET_DYN)) {
        fclose(f);
        return NULL;
    }
    sb_elf_syms *e = calloc(1, sizeof *e);
    if (!e) {
        fclose(f);
        return NULL;
    }
    e->f = f;
    e->exec = h.e_type == ET_EXEC;
    e->base = e->exec ? 0 : load_base(f, &h);
    if (read_tables(e, &h) < 0) {
        sb_elf_syms_free(e);
        return NULL;
    }
    sb_sort(e->s, e->n, sizeof *e->s, cmp_sym);
    return e;
}

uint64_t sb_elf_addr(const sb_elf_syms *e, const sb_audit_frame *f)
{
    return e->exec ? (uint64_t)f->abs : (uint64_t)f->off + e->base;
}

const char *sb_elf_sym_at(const sb_elf_syms *e, const sb_audit_frame *f, char *buf, size_t n)
{
    if (!e || n < 2)
        return NULL;
    uint64_t addr = sb_elf_addr(e, f);
    size_t lo = 0, hi = e->n; /* the first symbol above addr */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (e->s[mid].value <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t k = lo; k > 0 && lo - k < BACKWARD; k--) {
        const elf_sym *s = &e->s[k - 1];
        if (addr - s->value >= s->size)
            continue;
        /* the name up to its NUL (fgets reads on past it: the string ends there) */
        if (fseeko(e->f, (off_t)s->name, SEEK_SET) != 0 || !fgets(buf, (int)n, e->f) || !buf[0])
            return NULL;
        return buf;
    }
    return NULL;
}

void sb_elf_syms_free(sb_elf_syms *e)
{
    if (!e)
        return;
    if (e->f)
        fclose(e->f);
    free(e->s);
    free(e);
}
