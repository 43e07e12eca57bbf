#include "pywalk.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "pyoffsets.h"

/* Where a frame's parts lie in the CPythons that publish no offsets (before 3.13), and in 3.13
 * should its published ones not hold: offsetof in each version's own headers. */
typedef struct {
    int minor;
    sba_pylayout l;
} frame_table;

static const frame_table tables[] = {
    {9, {24, 0, 0, 24, 32, 104, 1, 0, 0, 104, 40, 112, 1, 0, 48, 72, 8, 16, 32}},
    {10, {24, 0, 0, 24, 32, 96, 1, 0, 0, 104, 40, 112, 2, 0, 48, 72, 8, 16, 32}},
    {11, {56, 1, 8, 48, 32, 56, 0, 0, 69, 112, 72, 120, 0, 184, 48, 72, 8, 16, 32}},
    {12, {56, 1, 0, 8, 0, 56, 0, 1, 70, 112, 68, 120, 0, 192, 40, 56, 8, 16, 32}},
    {13, {72, 0, 0, 8, 0, 56, 0, 1, 70, 112, 68, 120, 0, 200, 40, 56, 8, 16, 32}},
};

/* The frame owners from which on a frame is a shim the writer skips, no Python function's:
 * 3.12's and 3.13's FRAME_OWNED_BY_CSTACK, 3.14's FRAME_OWNED_BY_INTERPRETER and _CSTACK. */
enum { FRAME_OWNED_BY_SHIM = 3 };

static sba_pylayout live;           /* the running CPython's, once layout points at it */
static const sba_pylayout *layout;  /* NULL: its frames are not read */
static const char *source = "none"; /* where live came from: "offsets" or "table" */
static char why_not[160];           /* why not from the published offsets, 3.13 on */
static const void *code_type;       /* &PyCode_Type */
static const void *str_type;        /* &PyUnicode_Type: a name of another type is not read */
static int (*addr_to_line)(const void *code, int addr); /* PyCode_Addr2Line */

/* The layout of CPython 3.minor: the offsets it publishes, else the table's. */
static void pick_layout(void *handle, int minor)
{
    if (sba_pyoffsets_layout(handle, minor, &live, why_not, sizeof why_not) == 0) {
        why_not[0] = 0;
        source = "offsets";
        layout = &live;
        return;
    }
    if (minor < 13)
        why_not[0] = 0; /* none published: the table is the way, not a fallback */
    for (size_t i = 0; i < sizeof tables / sizeof *tables; i++)
        if (tables[i].minor == minor) {
            live = tables[i].l;
            source = "table";
            layout = &live;
        }
}

int sba_pywalk_init(void *handle, const char *(*version)(void))
{
    layout = NULL, source = "none", why_not[0] = 0;
#if defined(__x86_64__) || defined(__aarch64__)
    int major = 0, minor = 0;
    code_type = dlsym(handle, "PyCode_Type");
    str_type = dlsym(handle, "PyUnicode_Type");
    addr_to_line = (int (*)(const void *, int))dlsym(handle, "PyCode_Addr2Line");
    if (!code_type || !str_type || !version || sscanf(version(), "%d.%d", &major, &minor) != 2 ||
        major != 3)
        return -1;
    /* a free-threaded build lays its objects out otherwise; 3.13t exports this, and 3.14t's
     * debug offsets say so too */
    if (dlsym(handle, "_Py_MergeZeroLocalRefcount")) {
        snprintf(why_not, sizeof why_not, "a free-threaded build");
        return -1;
    }
    pick_layout(handle, minor);
    return layout ? 0 : -1;
#else
    (void)handle, (void)version;
    return -1;
#endif
}

const char *sba_pywalk_source(const char **why)
{
    if (why)
        *why = why_not[0] ? why_not : NULL;
    return source;
}

static const void *ptr_at(const void *base, size_t off)
{
    return *(const void *const *)((const char *)base + off);
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h ^= h >> 31;
    return h * 0xbf58476d1ce4e5b9ull;
}

/* A frame the writer writes: its code must be a code object, else the layout is wrong. */
static int add_frame(const void *frame, sba_pywalk_stack *s)
{
    const sba_pylayout *l = layout;
    /* 3.14's f_executable is a _PyStackRef, its low two bits a tag (objects are aligned) */
    const void *code = (const void *)((uintptr_t)ptr_at(frame, l->code) & ~(uintptr_t)3);
    if (!code || ptr_at(code, l->ob_type) != code_type)
        return -1;
    uint64_t instr = l->instr_is_int
                         ? (uint64_t)(unsigned)*(const int *)((const char *)frame + l->instr)
                         : (uint64_t)(uintptr_t)ptr_at(frame, l->instr);
    /* the file and first line as well as the code's address: a code object freed and another
     * made at its address would need the same file and first line to be taken for it */
    uint64_t file = (uint64_t)(uintptr_t)ptr_at(code, l->co_filename);
    uint64_t first = (uint64_t) * (const int *)((const char *)code + l->co_firstlineno);
    s->key[0] = mix(mix(mix(s->key[0], (uintptr_t)code), instr), file ^ first << 48);
    s->key[1] = mix(mix(s->key[1] ^ first, instr), (uintptr_t)code ^ file);
    s->code[s->frames] = code;
    s->addr[s->frames] =
        l->instr_is_int ? (int)instr * l->lasti_scale
                        : (int)((const char *)(uintptr_t)instr - ((const char *)code + l->co_code));
    return 0;
}

int sba_pywalk_read(const void *tstate, sba_pywalk_stack *s)
{
    const sba_pylayout *l = layout;
    if (!l || !tstate)
        return -1;
    const void *frame = ptr_at(tstate, l->ts_frame);
    if (l->via_cframe && frame)
        frame = ptr_at(frame, l->cframe_frame);
    s->key[0] = 0x243f6a8885a308d3ull, s->key[1] = 0x13198a2e03707344ull;
    s->frames = 0, s->truncated = 0;
    /* at most one shim between two frames: the loop ends within twice the frames kept */
    for (int steps = 0; frame && steps < 2 * SBA_PYWALK_MAX_FRAMES + 2; steps++) {
        int shim = l->has_owner && *((const char *)frame + l->owner) >= FRAME_OWNED_BY_SHIM;
        if (shim && steps == 0)
            return -1; /* the writer writes an innermost shim (3.12, a frame being cleared) */
        if (!shim) {
            if (s->frames == SBA_PYWALK_MAX_FRAMES) {
                s->truncated = 1;
                break;
            }
            if (add_frame(frame, s) != 0)
                return -1;
            s->frames++;
        }
        frame = ptr_at(frame, l->previous);
    }
    if (frame && !s->truncated)
        return -1; /* a chain longer than the loop allows: not one the writer ends either */
    s->key[0] = mix(s->key[0], (uint64_t)s->frames << 1 | (uint64_t)s->truncated);
    s->key[1] |= 1; /* never both 0: 0 marks an empty slot of the table */
    return 0;
}

/* ---- the text CPython's writer (_Py_DumpTraceback) would write, for a Python that exports
 * none (3.13's is internal): the same format, so that the same reader takes it ---- */

typedef struct {
    char *buf;
    size_t n, len;
    int full; /* a piece did not fit: nothing more is written (no half line) */
} text_out;

static void put(text_out *o, const char *s, size_t k)
{
    if (!o->full && o->len + k < o->n) {
        memcpy(o->buf + o->len, s, k);
        o->len += k;
    } else {
        o->full = 1;
    }
}

/* A str as _Py_DumpASCII writes it: printable ASCII as is, anything else \xNN, \uNNNN or
 * \UNNNNNNNN, at most 500 characters then "...". */
static void put_str(text_out *o, const void *str)
{
    const sba_pylayout *l = layout;
    if (!str || ptr_at(str, l->ob_type) != str_type) { /* a subclass of str is not read either */
        put(o, "???", 3);
        return;
    }
    unsigned state = *(const unsigned *)((const char *)str + l->str_state);
    unsigned kind = (state >> 2) & 7, compact = state >> 5 & 1, ascii = state >> 6 & 1;
    long size = *(const long *)((const char *)str + l->str_length);
    const char *data = !compact ? ptr_at(str, l->compact_size)
                       : ascii  ? (const char *)str + l->ascii_size
                                : (const char *)str + l->compact_size;
    if (!data || (kind != 1 && kind != 2 && kind != 4)) {
        put(o, "???", 3);
        return;
    }
    for (long i = 0; i < size && i < 500; i++) {
        uint32_t ch = kind == 1   ? ((const uint8_t *)data)[i]
                      : kind == 2 ? ((const uint16_t *)data)[i]
                                  : ((const uint32_t *)data)[i];
        char esc[16];
        if (ch >= ' ' && ch <= 126) {
            char c = (char)ch;
            put(o, &c, 1);
        } else {
            int k = snprintf(esc, sizeof esc,
                             ch <= 0xff     ? "\\x%02x"
                             : ch <= 0xffff ? "\\u%04x"
                                            : "\\U%08x",
                             ch);
            put(o, esc, (size_t)k);
        }
    }
    if (size > 500)
        put(o, "...", 3);
}

size_t sba_pywalk_text(const sba_pywalk_stack *s, char *buf, size_t n)
{
    if (!layout || !addr_to_line || !n)
        return 0;
    text_out o = {buf, n, 0, 0};
    put(&o, "Stack (most recent call first):\n", 32); /* the writer's header: one text, one id */
    for (int i = 0; i < s->frames; i++) {
        const void *code = s->code[i];
        char num[32];
        put(&o, "  File \"", 8);
        put_str(&o, ptr_at(code, layout->co_filename));
        int line = addr_to_line(code, s->addr[i]);
        int k = line >= 0 ? snprintf(num, sizeof num, "\", line %d in ", line)
                          : snprintf(num, sizeof num, "\", line ??? in ");
        put(&o, num, (size_t)k);
        put_str(&o, ptr_at(code, layout->co_name));
        put(&o, "\n", 1);
    }
    if (s->truncated)
        put(&o, "  ...\n", 6);
    buf[o.len] = 0;
    return o.len;
}
