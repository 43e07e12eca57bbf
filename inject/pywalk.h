/* The calling thread's Python frames read raw, as sampling profilers (py-spy, austin) read them:
 * each frame's code object and instruction, with no GIL, no allocation and no system call. Only
 * the identity of a stack is taken here (a 128-bit key); its file, function and line come from
 * CPython's own writer (pyframes.c), once per distinct key.
 *
 * Where the parts of a frame lie: from 3.13 on, where CPython publishes them
 * (_Py_DebugOffsets, pyoffsets.c), so that a new patch release or build needs nothing new here;
 * before 3.13, and for 3.13 should the published ones not hold, the offsets of each version's
 * own headers (x86-64 and aarch64, the default build). tests/cli/test_pyframes.py holds each
 * installed version's reading to the lines Python itself sees. A version neither covers, a
 * free-threaded build, or frames that do not look as expected (a code object whose type is not
 * PyCode_Type) read nothing, and the caller falls back to the writer for every call. */
#ifndef SBA_PYWALK_H
#define SBA_PYWALK_H

#include <stddef.h>
#include <stdint.h>

/* The frames the writer keeps (CPython's MAX_FRAME_DEPTH in Python/traceback.c). */
#define SBA_PYWALK_MAX_FRAMES 100

/* Picks the layout of the running CPython (its version string and PyCode_Type, looked up in
 * handle, as dlsym takes it). 0 when it can be read, -1 when not. */
int sba_pywalk_init(void *handle, const char *(*version)(void));

/* Where the layout came from: "offsets" (the ones CPython publishes), "table" (this file's) or
 * "none" (not read raw). *why (may be NULL): why not the published offsets, for a CPython that
 * can publish them (3.13 on) or a free-threaded build; NULL otherwise. */
const char *sba_pywalk_source(const char **why);

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
