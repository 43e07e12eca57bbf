/* Blocks: the spans of code that python/syncbench's no_syncs() and count_syncs() watch (api.c
 * opens and closes them). A block belongs to the thread that opened it, or to every thread of
 * the process; it counts the watched calls made inside it by class and keeps their record lines
 * (records.h), so that a failing test can name each one as the audit does. Blocks nest. */
#ifndef SBA_BLOCKS_H
#define SBA_BLOCKS_H

#include <stddef.h>

#include "record/classes.h"

#define SBA_MAX_BLOCKS 1024 /* open at once, all threads together */
#define SBA_BLOCK_KEEP 256  /* the blocking calls' lines a block keeps; the rest are counted */

/* Once per process, before the first block: a forked child starts with none. */
void sba_blocks_init(void);
/* Nonzero when a call made on this thread now would go into a block: the callback's fast path. */
int sba_blocks_watching(void);
/* Nonzero when a block this thread's calls go into still keeps lines: a blocking call then
 * needs its line, stacks and ranges worked out; once every such block is full it is only
 * counted. */
int sba_blocks_keeping(void);
/* A watched call of class cls on this thread: counted in every block it falls into, and its
 * record line kept there when it blocks (its stack and Python stack ids, -1 when none). A call
 * may come without its line (NULL): it is only counted. */
void sba_blocks_add(sb_audit_class cls, const char *line, size_t len, long stack, long py);
/* Opens a block of this thread (all_threads 0) or of every thread; its id (>= 0: its slot and
 * that slot's generation), or -1 when SBA_MAX_BLOCKS are open or memory is short. */
int sba_block_open(int all_threads);
/* The counts so far, per class (SB_AUDIT_NCLASS of them); -1 for an id that is not open. */
int sba_block_counts(int id, long long *counts);
/* Closes the block: its counts, and (when text is not NULL) its record lines in a malloc'd,
 * NUL-ended buffer (*text, *len; NULL when it kept none) holding the stack and Python stack
 * records the lines refer to, before them. -1 for an id that is not open (or was opened on another
 * thread, for a block of one thread). */
int sba_block_close(int id, long long *counts, char **text, size_t *len);

#endif
