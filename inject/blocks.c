#include "blocks.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pyframes.h"
#include "record/classes.h"
#include "stacks.h"

/* A block keeps the record lines of its first KEEP blocking calls (a test that fails names
 * them); it counts them all. */
#define KEEP SBA_BLOCK_KEEP

/* A block's id is its slot and the slot's generation (id = gen << SLOT_BITS | slot): an id
 * closed twice, or kept after its block closed, never reaches the slot's next block. */
#define SLOT_BITS 10 /* SBA_MAX_BLOCKS == 1 << SLOT_BITS */
#define GEN_MASK ((1 << 20) - 1)

typedef struct {
    int gen;
    int all;  /* every thread's calls */
    long tid; /* the thread that opened it */
    long long counts[SB_AUDIT_NCLASS];
    char *text; /* kept call lines, each ending in '\n' */
    size_t len, cap;
    int kept;
    long *refs; /* what the kept lines refer to: 2 per line, stack and Python stack (-1: none);
                 * allocated with the first kept line, so that opening a block stays cheap */
} block;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static block *slots[SBA_MAX_BLOCKS];
static int gens[SBA_MAX_BLOCKS];     /* each slot's last generation */
static int open_ids[SBA_MAX_BLOCKS]; /* the open blocks, in no order */
static int nopen;
static int all_open;                /* open blocks of every thread (read without the lock) */
static _Thread_local int own_open;  /* open blocks of this thread */
static _Thread_local long this_tid; /* gettid(), once per thread */

static long tid(void)
{
    if (!this_tid)
        this_tid = (long)syscall(SYS_gettid);
    return this_tid;
}

/* A child forked while a block was open, or while another thread held the lock: no block is
 * the child's (python/syncbench refuses to close them there), and the lock is free. */
static void after_fork_child(void)
{
    pthread_mutex_init(&lock, NULL);
    memset(slots, 0, sizeof slots); /* the parent's blocks: left, not freed (not the child's) */
    nopen = 0;
    all_open = 0;
    own_open = 0;
}

static void at_fork_once(void)
{
    pthread_atfork(NULL, NULL, after_fork_child);
}

void sba_blocks_init(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, at_fork_once);
}

int sba_blocks_watching(void)
{
    return own_open > 0 || __atomic_load_n(&all_open, __ATOMIC_RELAXED) > 0;
}

/* Appends s and a newline to (*out, *len, *cap), which stays NUL-ended; -1 when memory is
 * short. */
static int append(char **out, size_t *len, size_t *cap, const char *s, size_t n)
{
    if (*len + n + 2 > *cap) {
        size_t c = *cap ? *cap : 4096;
        while (c < *len + n + 2)
            c *= 2;
        char *t = realloc(*out, c);
        if (!t)
            return -1;
        *out = t;
        *cap = c;
    }
    memcpy(*out + *len, s, n);
    (*out)[*len + n] = '\n';
    *len += n + 1;
    (*out)[*len] = 0;
    return 0;
}

static void keep_line(block *b, const char *line, size_t len, long stack, long py)
{
    if (!line || b->kept >= KEEP || (!b->refs && !(b->refs = malloc(2 * KEEP * sizeof *b->refs))) ||
        append(&b->text, &b->len, &b->cap, line, len) < 0)
        return; /* counted, not kept */
    b->refs[2 * b->kept] = stack;
    b->refs[2 * b->kept++ + 1] = py;
}

int sba_blocks_keeping(void)
{
    long me = tid();
    int room = 0;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < nopen && !room; i++) {
        const block *b = slots[open_ids[i]];
        room = (b->all || b->tid == me) && b->kept < KEEP;
    }
    pthread_mutex_unlock(&lock);
    return room;
}

void sba_blocks_add(sb_audit_class cls, const char *line, size_t len, long stack, long py)
{
    long me = tid();
    int blocking = sb_audit_blocking(cls);
    pthread_mutex_lock(&lock);
    for (int i = 0; i < nopen; i++) {
        block *b = slots[open_ids[i]];
        if (!b->all && b->tid != me)
            continue;
        b->counts[cls]++;
        if (blocking)
            keep_line(b, line, len, stack, py);
    }
    pthread_mutex_unlock(&lock);
}

int sba_block_open(int all_threads)
{
    block *b = calloc(1, sizeof *b);
    if (!b)
        return -1;
    b->all = all_threads != 0;
    b->tid = tid();
    int id = -1;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < SBA_MAX_BLOCKS && id < 0; i++)
        if (!slots[i])
            id = i;
    if (id >= 0) {
        b->gen = gens[id] = (gens[id] + 1) & GEN_MASK;
        slots[id] = b;
        open_ids[nopen++] = id;
        if (b->all)
            __atomic_add_fetch(&all_open, 1, __ATOMIC_RELAXED);
        else
            own_open++;
    }
    pthread_mutex_unlock(&lock);
    if (id < 0) {
        free(b);
        return -1;
    }
    return b->gen << SLOT_BITS | id;
}

/* The block of id if it is open and this thread may see it (under the lock). */
static block *visible(int id)
{
    int slot = id & (SBA_MAX_BLOCKS - 1);
    if (id < 0 || !slots[slot] || slots[slot]->gen != id >> SLOT_BITS)
        return NULL;
    block *b = slots[slot];
    return b->all || b->tid == tid() ? b : NULL;
}

int sba_block_counts(int id, long long *counts)
{
    pthread_mutex_lock(&lock);
    block *b = visible(id);
    if (b)
        memcpy(counts, b->counts, sizeof b->counts);
    pthread_mutex_unlock(&lock);
    return b ? 0 : -1;
}

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

/* The records the kept lines refer to (each once), then the lines: one malloc'd text. */
static char *records_of(const block *b, size_t *len)
{
    long ids[2][KEEP];
    char *out = NULL;
    size_t cap = 0;
    int ok = 1;
    *len = 0;
    for (int i = 0; i < b->kept; i++)
        ids[0][i] = b->refs[2 * i], ids[1][i] = b->refs[2 * i + 1];
    for (int k = 0; k < 2; k++) {
        qsort(ids[k], (size_t)b->kept, sizeof ids[k][0], cmp_long);
        for (int i = 0; i < b->kept; i++) {
            if (ids[k][i] < 0 || (i && ids[k][i] == ids[k][i - 1]))
                continue;
            char *line = k ? sba_py_stack_line(ids[k][i]) : sba_stack_line(ids[k][i]);
            if (line)
                ok = ok && append(&out, len, &cap, line, strlen(line)) == 0;
            free(line);
        }
    }
    if (b->len)
        ok = ok && append(&out, len, &cap, b->text, b->len - 1) == 0; /* its last '\n' added */
    if (!ok) {
        free(out);
        *len = 0;
        return NULL;
    }
    return out;
}

int sba_block_close(int id, long long *counts, char **text, size_t *len)
{
    pthread_mutex_lock(&lock);
    block *b = visible(id);
    int slot = id & (SBA_MAX_BLOCKS - 1);
    if (b) {
        slots[slot] = NULL;
        for (int i = 0; i < nopen; i++)
            if (open_ids[i] == slot) {
                open_ids[i] = open_ids[--nopen];
                break;
            }
        if (b->all)
            __atomic_sub_fetch(&all_open, 1, __ATOMIC_RELAXED);
        else
            own_open--;
    }
    pthread_mutex_unlock(&lock);
    if (!b)
        return -1;
    memcpy(counts, b->counts, sizeof b->counts);
    if (text) {
        *text = b->kept ? records_of(b, len) : NULL;
        if (!*text)
            *len = 0;
    }
    free(b->text);
    free(b->refs);
    free(b);
    return 0;
}
