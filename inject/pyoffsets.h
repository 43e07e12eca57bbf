/* Where the parts of a CPython frame lie, for the raw reader (pywalk.c), and where that comes
 * from in CPython 3.13 and later: the interpreter publishes the offsets itself, in
 * _Py_DebugOffsets, the first member of the exported _PyRuntime (the structure py-spy, austin
 * and pstack read from outside the process; read here from inside it). Its cookie and version
 * are checked, and its offsets against the interpreter's own types, before any is used. */
#ifndef SBA_PYOFFSETS_H
#define SBA_PYOFFSETS_H

#include <stddef.h>

/* Byte offsets in CPython's structures (PyThreadState, _PyCFrame, _PyInterpreterFrame or
 * PyFrameObject, PyCodeObject, PyObject, PyASCIIObject). */
typedef struct {
    size_t ts_frame;     /* 3.9-3.10 ts->frame, 3.11-3.12 ts->cframe, 3.13 on ts->current_frame */
    int via_cframe;      /* the frame is ts->cframe->current_frame */
    size_t cframe_frame; /* _PyCFrame.current_frame */
    size_t previous;     /* f_back / previous */
    size_t code;         /* f_code / f_executable */
    size_t instr;        /* f_lasti (an int) / prev_instr / instr_ptr (a pointer) */
    int instr_is_int;
    int has_owner; /* 3.12 on have shim frames the writer skips */
    size_t owner;
    size_t co_filename, co_firstlineno, co_name;
    /* the byte offset PyCode_Addr2Line takes: f_lasti times lasti_scale (3.9: bytes, 3.10:
     * code units), or the instruction pointer less the code's co_code_adaptive */
    int lasti_scale;
    size_t co_code;
    size_t ascii_size, compact_size; /* sizeof PyASCIIObject, PyCompactUnicodeObject */
    size_t ob_type;                  /* offsetof(PyObject, ob_type) */
    size_t str_length, str_state;    /* offsetof(PyASCIIObject, length), (..., state) */
} sba_pylayout;

/* Fills *l from the running CPython's _Py_DebugOffsets (_PyRuntime, looked up in handle as
 * dlsym takes it), minor being the running interpreter's (Py_GetVersion's). 0 when the cookie,
 * the version and the offsets hold; -1 with the reason in why (a phrase, NUL-ended) when they
 * do not, when this CPython publishes none (before 3.13) or is a free-threaded build. A minor
 * newer than the newest this file knows is read by the newest's positions, and taken only
 * when its offsets match the interpreter's types. */
int sba_pyoffsets_layout(void *handle, int minor, sba_pylayout *l, char *why, size_t n);

#endif
