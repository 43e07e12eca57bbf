/* The injection library's Python-frame reader (inject/pyframes.c) with no GPU: a
 * Python program loads this through ctypes (which releases the GIL around the call, as torch
 * does inside .item()) and calls sbp_capture() where a CUDA call would be; the pystack record
 * goes to DIR/proc-PID.jsonl as in the audit (tests/cli/test_pyframes.py). */
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>

#include "inject/out.h"
#include "inject/pyframes.h"
#include "inject/pywalk.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT int sbp_open(const char *dir)
{
    sba_py_init();
    int rc = sba_out_open(dir);
    sba_py_warn(); /* into the file, as the library writes it after the proc record */
    return rc;
}

/* The caller's Python stack id (-1: none), as a blocking call would record it. */
EXPORT long sbp_capture(void)
{
    return sba_py_stack_here();
}

/* The id as waits/'s probe takes it on a just-woken thread (raw reading only). */
EXPORT long sbp_capture_waiting(void)
{
    return sba_py_stack_waiting();
}

/* Whether stacks are known by their raw identity (1) or by the writer's text at each call. */
EXPORT int sbp_walking(void)
{
    return sba_py_walking();
}

EXPORT void sbp_flush(void)
{
    sba_out_flush(0);
}

/* The raw reader alone (a Python whose traceback writer is not exported can still be read):
 * the frames it counts on the calling thread, its key into key[2]; -1 when it cannot read. */
EXPORT int sbp_walk(uint64_t *key)
{
    static void *(*this_thread)(void);
    static int ready;
    if (!ready) {
        this_thread = (void *(*)(void))dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState");
        const char *(*version)(void) = (const char *(*)(void))dlsym(RTLD_DEFAULT, "Py_GetVersion");
        ready = this_thread && sba_pywalk_init(RTLD_DEFAULT, version) == 0 ? 1 : -1;
    }
    sba_pywalk_stack s;
    if (ready < 0 || sba_pywalk_read(this_thread(), &s) != 0)
        return -1;
    key[0] = s.key[0], key[1] = s.key[1];
    return s.frames + s.truncated * 1000;
}

/* How stacks are read: "offsets", "table", "writer" or "none" (inject/pyframes.h). */
EXPORT const char *sbp_reader(void)
{
    return sba_py_reader();
}
