/* The calling thread's Python frames read raw, as sampling profilers (py-spy, austin) read them:
 * each frame's code object and instruction, with no GIL, no allocation and no system call. Only
 * the identity of a stack is taken here (a 128-bit key); its file, function and line come from
 * CPython's own writer (pyframes.c), once per distinct key.
 *
 * The offsets are those of CPython 3.9 to 3.13's own headers (x86-64 and aarch64, the default
 * build), checked against each version's headers by tests/cli/test_pyframes.py. Any other
 * version, or a build whose frames do not look as expected (a code object whose type is not
 * PyCode_Type), reads nothing and the caller falls back to the writer for every call. */
#ifndef SBA_PYWALK_H
#define SBA_PYWALK_H

#include <stddef.h>
#include <stdint.h>

/* The frames the writer keeps (CPython's MAX_FRAME_DEPTH in Python/traceback.c). */
#define SBA_PYWALK_MAX_FRAMES 100

/* Picks the layout of the running CPython (its version string and PyCode_Type, looked up in
 * handle, as dlsym takes it). 0 when it can be read, -1 when not. */
int sba_pywalk_init(void *handle, const char *(*version)(void));

typedef struct {
    uint64_t key[2]; /* the stack's identity: two hashes of its frames, never both 0 */
    int frames;      /* the frames the writer writes (at most SBA_PYWALK_MAX_FRAMES) */
    int truncated;   /* more frames beyond those: the writer ends with "  ..." */
    const void *code[SBA_PYWALK_MAX_FRAMES]; /* each frame's code object, innermost first */
    int addr[SBA_PYWALK_MAX_FRAMES];         /* and its instruction, as PyCode_Addr2Line takes it */
} sba_pywalk_stack;

/* Reads the stack of tstate (the calling thread's PyThreadState). 0 on success; -1 when the
 * layout is not known or a frame does not look like one (the caller then uses the writer). */
int sba_pywalk_read(const void *tstate, sba_pywalk_stack *out);

/* The text CPython's traceback writer would write for s ("  File \"F\", line N in NAME" a
 * frame, innermost first), into buf (NUL-ended); its length. For a Python that exports no
 * writer; reads only the frames' code objects, which live while the thread is in the call. */
size_t sba_pywalk_text(const sba_pywalk_stack *s, char *buf, size_t n);

#endif
