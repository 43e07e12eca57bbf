#include "pywalk.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* Where a frame's parts lie, per CPython minor version (offsetof in its own headers:
 * PyThreadState, _PyCFrame, _PyInterpreterFrame or PyFrameObject, PyCodeObject). */
typedef struct {
    int minor;
    size_t ts_frame;     /* 3.9-3.10 ts->frame, 3.11-3.12 ts->cframe, 3.13 ts->current_frame */
    int via_cframe;      /* the frame is ts->cframe->current_frame */
    size_t cframe_frame; /* _PyCFrame.current_frame */
    size_t previous;     /* f_back / previous */
    size_t code;         /* f_code / f_executable */
    size_t instr;        /* f_lasti (an int) / prev_instr / instr_ptr (a pointer) */
    int instr_is_int;
    int has_owner; /* 3.12 and 3.13 have shim frames the writer skips */
    size_t owner;
    size_t co_filename, co_firstlineno, co_name;
    /* the byte offset PyCode_Addr2Line takes: f_lasti times lasti_scale (3.9: bytes, 3.10:
     * code units), or the instruction pointer less the code's co_code_adaptive */
    int lasti_scale;
    size_t co_code;
    size_t ascii_size, compact_size; /* sizeof PyASCIIObject, PyCompactUnicodeObject */
} frame_layout;

static const frame_layout layouts[] = {
    {9, 24, 0, 0, 24, 32, 104, 1, 0, 0, 104, 40, 112, 1, 0, 48, 72},
    {10, 24, 0, 0, 24, 32, 96, 1, 0, 0, 104, 40, 112, 2, 0, 48, 72},
    {11, 56, 1, 8, 48, 32, 56, 0, 0, 69, 112, 72, 120, 0, 184, 48, 72},
    {12, 56, 1, 0, 8, 0, 56, 0, 1, 70, 112, 68, 120, 0, 192, 40, 56},
    {13, 72, 0, 0, 8, 0, 56, 0, 1, 70, 112, 68, 120, 0, 200, 40, 56},
};

enum { FRAME_OWNED_BY_CSTACK = 3, OB_TYPE = 8 /* offsetof(PyObject, ob_type) */ };

static const frame_layout *layout;
static const void *code_type; /* &PyCode_Type */
static const void *str_type;  /* &PyUnicode_Type: a name of another type is not read */
static int (*addr_to_line)(const void *code, int addr); /* PyCode_Addr2Line */

int sba_pywalk_init(void *handle, const char *(*version)(void))
{
#if defined(__x86_64__) || defined(__aarch64__)
    int major = 0, minor = 0;
    code_type = dlsym(handle, "PyCode_Type");
    str_type = dlsym(handle, "PyUnicode_Type");
    addr_to_line = (int (*)(const void *, int))dlsym(handle, "PyCode_Addr2Line");
    if (!code_type || !str_type || !version || sscanf(version(), "%d.%d", &major, &minor) != 2 ||
        major != 3)
        return -1;
    /* a free-threaded build (3.13t) lays its objects out otherwise; it alone exports this */
    if (dlsym(handle, "_Py_MergeZeroLocalRefcount"))
        return -1;
    for (size_t i = 0; i < sizeof layouts / sizeof *layouts; i++)
        if (layouts[i].minor == minor)
            layout = &layouts[i];
    return layout ? 0 : -1;
#else
    (void)handle, (void)version;
    return -1;
#endif
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
    const frame_layout *l = layout;
    const void *code = ptr_at(frame, l->code);
    if (!code || ptr_at(code, OB_TYPE) != code_type)
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
    const frame_layout *l = layout;
    if (!l || !tstate)
        return -1;
    const void *frame = ptr_at(tstate, l->ts_frame);
    if (l->via_cframe && frame)
        frame = ptr_at(frame, l->cframe_frame);
    s->key[0] = 0x243f6a8885a308d3ull, s->key[1] = 0x13198a2e03707344ull;
    s->frames = 0, s->truncated = 0;
    /* at most one shim between two frames: the loop ends within twice the frames kept */
    for (int steps = 0; frame && steps < 2 * SBA_PYWALK_MAX_FRAMES + 2; steps++) {
        int shim = l->has_owner && *((const char *)frame + l->owner) == FRAME_OWNED_BY_CSTACK;
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
    const frame_layout *l = layout;
    if (!str || ptr_at(str, OB_TYPE) != str_type) { /* a subclass of str is not read either */
        put(o, "???", 3);
        return;
    }
    unsigned state = *(const unsigned *)((const char *)str + 32);
    unsigned kind = (state >> 2) & 7, compact = state >> 5 & 1, ascii = state >> 6 & 1;
    long size = *(const long *)((const char *)str + 16);
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
