/* Native call stacks of the calls that can block: captured with backtrace(3) on the calling
 * thread, written once per distinct stack as a "stack" record (objects and symbols from
 * dladdr), and referred to by id. */
#ifndef SBA_STACKS_H
#define SBA_STACKS_H

#define SBA_MAX_FRAMES 32

/* Frames kept per stack (SYNCBENCH_AUDIT_DEPTH, 0 = none). Call once before any capture. */
void sba_stacks_init(int depth);
/* Captures the calling thread's stack into pcs; returns the frame count (0 when disabled). */
int sba_stack_capture(void **pcs);
/* The id of this stack, writing its record the first time; -1 when n == 0 or the table is
 * full. */
long sba_stack_id(void *const *pcs, int n);
/* From now on each new stack's record is kept for sba_stack_line (the in-process API). */
void sba_stacks_keep_lines(void);
/* A copy of stack id's record (malloc'd), or NULL when none was kept. */
char *sba_stack_line(long id);

#endif
