#include "pyoffsets.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/envvars.h"

/* Where each offset read sits in _Py_DebugOffsets (a byte offset into it), per minor version:
 * CPython adds members to it between minor versions (3.14: interpreter_state.threads_main, the
 * frame's stackpointer and more; 3.15: thread_state.base_frame and more), never within one.
 * From each version's Include/internal/pycore_runtime.h (3.13) or pycore_debug_offsets.h. */
typedef struct {
    int minor;
    uint16_t ts_size, ts_frame;
    uint16_t fr_size, fr_previous, fr_code, fr_instr, fr_owner;
    uint16_t co_size, co_filename, co_name, co_firstlineno, co_code;
    uint16_t ob_size, ob_type;
    uint16_t str_size, str_state, str_length, str_ascii_size;
    uint16_t str_compact_size; /* 0: not published (3.13, 3.14) */
} debug_positions;

/* clang-format off */
static const debug_positions positions[] = {
    /* minor, thread state: size, current frame; frame: size, previous, executable, instr_ptr,
     * owner; code: size, filename, name, firstlineno, co_code_adaptive; PyObject: size,
     * ob_type; str: size, state, length, sizeof PyASCIIObject, sizeof PyCompactUnicodeObject */
    {13, 152, 184,  224, 232, 240, 248, 264,  272, 280, 288, 312, 344,  352, 360,
         536, 544, 552, 560, 0},
    {14, 176, 208,  248, 256, 264, 272, 288,  312, 320, 328, 352, 384,  400, 408,
         616, 624, 632, 640, 0},
    {15, 176, 208,  312, 320, 328, 336, 352,  376, 384, 392, 416, 448,  464, 472,
         712, 720, 728, 736, 744},
};
/* clang-format on */

enum { NPOS = sizeof positions / sizeof *positions, VERSION = 8, FREE_THREADED = 16 };

static uint64_t word(const void *base, size_t off)
{
    uint64_t v;
    memcpy(&v, (const char *)base + off, sizeof v);
    return v;
}

/* The positions of minor's offsets: its own, or the newest known for a newer minor. Only those
 * of minors up to SYNCBENCH_PY_OFFSETS_NEWEST are known (the test of a newer CPython). */
static const debug_positions *positions_of(int minor)
{
    long newest_known = sb_env_long(SB_ENV_PY_OFFSETS_NEWEST, NULL);
    const debug_positions *newest = NULL;
    for (size_t i = 0; i < NPOS && positions[i].minor <= newest_known; i++) {
        if (positions[i].minor == minor)
            return &positions[i];
        newest = &positions[i];
    }
    return newest && minor > newest->minor ? newest : NULL;
}

/* Each offset inside its structure's size, and the sizes those of objects. */
static int offsets_fit(const sba_pylayout *l, const uint64_t *size)
{
    enum { TS, FR, CO, OB, STR };
    for (int i = TS; i <= STR; i++)
        if (size[i] == 0 || size[i] > 1 << 16)
            return 0;
    if (size[OB] > 64)
        return 0; /* a PyObject is 16 bytes (32 free-threaded): its type is read through it */
    return l->ts_frame + 8 <= size[TS] && l->previous + 8 <= size[FR] && l->code + 8 <= size[FR] &&
           l->instr + 8 <= size[FR] && l->owner < size[FR] && l->co_filename + 8 <= size[CO] &&
           l->co_name + 8 <= size[CO] && l->co_firstlineno + 4 <= size[CO] &&
           l->co_code < size[CO] && l->ob_type + 8 <= size[OB] &&
           l->str_length + 8 <= l->ascii_size && l->str_state + 4 <= l->ascii_size &&
           l->ascii_size <= l->compact_size && l->compact_size <= size[STR];
}

/* The offsets against the interpreter's own types: PyCode_Type is a type (its ob_type), its
 * tp_basicsize is the offset of co_code_adaptive (code objects are variable-sized from there)
 * and str's is sizeof(PyUnicodeObject). A structure read by another version's positions gives
 * other numbers. */
static int types_agree(void *handle, const sba_pylayout *l, uint64_t ob_size, uint64_t str_size)
{
    const void *code_type = dlsym(handle, "PyCode_Type");
    const void *str_type = dlsym(handle, "PyUnicode_Type");
    const void *type_type = dlsym(handle, "PyType_Type");
    if (!code_type || !str_type || !type_type)
        return 0;
    size_t basicsize = ob_size + 16; /* PyVarObject's ob_size, then tp_name */
    return word(code_type, l->ob_type) == (uintptr_t)type_type &&
           word(code_type, basicsize) == l->co_code && word(str_type, basicsize) == str_size;
}

static void layout_of(const void *d, const debug_positions *p, sba_pylayout *l)
{
    memset(l, 0, sizeof *l);
    l->ts_frame = word(d, p->ts_frame);
    l->previous = word(d, p->fr_previous);
    l->code = word(d, p->fr_code);
    l->instr = word(d, p->fr_instr);
    l->has_owner = 1;
    l->owner = word(d, p->fr_owner);
    l->co_filename = word(d, p->co_filename);
    l->co_firstlineno = word(d, p->co_firstlineno);
    l->co_name = word(d, p->co_name);
    l->co_code = word(d, p->co_code);
    l->ob_type = word(d, p->ob_type);
    l->str_length = word(d, p->str_length);
    l->str_state = word(d, p->str_state);
    l->ascii_size = word(d, p->str_ascii_size);
    /* PyCompactUnicodeObject is PyASCIIObject, utf8_length and utf8 from 3.12 on */
    l->compact_size = p->str_compact_size ? word(d, p->str_compact_size) : l->ascii_size + 16;
}

int sba_pyoffsets_layout(void *handle, int minor, sba_pylayout *l, char *why, size_t n)
{
    const char *d = dlsym(handle, "_PyRuntime");
    if (!d || minor < 13) {
        snprintf(why, n, "CPython 3.%d publishes no debug offsets", minor);
        return -1;
    }
    if (memcmp(d, "xdebugpy", 8) != 0) {
        snprintf(why, n, "_PyRuntime's debug offsets have no \"xdebugpy\" cookie");
        return -1;
    }
    uint64_t version = word(d, VERSION);
    if (version >> 24 != 3 || (int)(version >> 16 & 0xff) != minor) {
        snprintf(why, n, "_PyRuntime's debug offsets are of version 0x%llx, not of 3.%d",
                 (unsigned long long)version, minor);
        return -1;
    }
    if (word(d, FREE_THREADED)) {
        snprintf(why, n, "a free-threaded build");
        return -1;
    }
    const debug_positions *p = positions_of(minor);
    if (!p) {
        snprintf(why, n, "the debug offsets of 3.%d are not known", minor);
        return -1;
    }
    layout_of(d, p, l);
    const uint64_t size[] = {word(d, p->ts_size), word(d, p->fr_size), word(d, p->co_size),
                             word(d, p->ob_size), word(d, p->str_size)};
    if (!offsets_fit(l, size) || !types_agree(handle, l, size[3], size[4])) {
        snprintf(why, n, "the debug offsets of 3.%d, read as 3.%d's, do not match its types", minor,
                 p->minor);
        return -1;
    }
    return 0;
}
