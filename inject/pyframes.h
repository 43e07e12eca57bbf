/* Python stacks of the calls that can block: for a thread that runs Python, its frames (file,
 * function, line; innermost first). Each call's stack is known by its raw identity (pywalk.c:
 * the frames' code objects and instructions, read with no GIL and no system call); a stack not
 * seen before is named once, by CPython's own fault-handler writer, _Py_DumpTraceback, where
 * the interpreter exports it, else by the raw reader's own text. Where the raw reader cannot
 * read this Python, the writer names every call's stack (needs no GIL: torch releases it inside
 * .item(); it reads only the calling thread's frames, which cannot change while that thread is
 * inside this CUDA call). Written once per distinct stack as a "pystack" record
 * (src/record/records.h), referred to by id. Costs nothing in a process without Python (one
 * test of a flag per blocking call), and nothing per kernel launch. */
#ifndef SBA_PYFRAMES_H
#define SBA_PYFRAMES_H

#include <stddef.h>

/* Distinct Python stacks with an id (ids are below it); more are written without one. */
#define SBA_PY_MAX_STACKS 8192

/* Looks CPython's functions up in the process (the interpreter executable or a loaded
 * libpython). Call once, at injection. */
void sba_py_init(void);
/* Writes the warn record of a Python whose frames cannot be recorded (after the proc record,
 * which says how they are read); nothing when they can. */
void sba_py_warn(void);
/* The calling thread's Python stack's id (capture and id in one), -1 when the thread runs no
 * Python or the table is full. */
long sba_py_stack_here(void);
/* As sba_py_stack_here, for a thread just woken inside a wait (waits/'s probe, which may run
 * inside an allocator's lock): no allocation, no system call beyond a new stack's record, and
 * -1 where the stack cannot be read raw or the thread is inside this code already. */
long sba_py_stack_waiting(void);
/* Whether stacks are known by their raw identity (pywalk.c) rather than by the writer's text
 * at each call. */
int sba_py_walking(void);
/* How this process's Python stacks are read: "offsets" or "table" (raw, by the offsets CPython
 * publishes or by pywalk.c's own), "writer" (CPython's traceback writer at every call) or
 * "none" (not at all: a warn record says why); NULL when sba_py_init found no Python. */
const char *sba_py_reader(void);
/* The proc record's field that says it, ",\"pyread\":\"...\"", into buf; "" without Python. */
void sba_py_proc_field(char *buf, size_t n);
/* From now on each new stack's record is kept for sba_py_stack_line (the in-process API). */
void sba_py_keep_lines(void);
/* A copy of Python stack id's record (malloc'd), or NULL when none was kept. */
char *sba_py_stack_line(long id);

#endif
