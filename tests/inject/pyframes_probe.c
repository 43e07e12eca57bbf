/* The injection library's Python-frame reader (inject/pyframes.c) with no GPU: a
 * Python program loads this through ctypes (which releases the GIL around the call, as torch
 * does inside .item()) and calls sbp_capture() where a CUDA call would be; the pystack record
 * goes to DIR/proc-PID.jsonl as in the audit (tests/cli/test_pyframes.py). */
#include <stddef.h>

#include "inject/out.h"
#include "inject/pyframes.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT int sbp_open(const char *dir)
{
    sba_py_init();
    return sba_out_open(dir);
}

/* The caller's Python stack id (-1: none), as a blocking call would record it. */
EXPORT long sbp_capture(void)
{
    static _Thread_local char text[32 << 10];
    size_t n = sba_py_capture(text, sizeof text);
    return sba_py_stack_id(text, n);
}

EXPORT void sbp_flush(void)
{
    sba_out_flush(0);
}
