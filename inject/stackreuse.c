#include "stackreuse.h"

#include <pthread.h>

#include "base/envvars.h"

/* Python stack ids are below pyframes.c's table size. */
#define MAX_PY_STACKS 8192
/* Walks that must agree before a stack is reused, and how often a reused one is walked again:
 * once a check finds another stack, the Python stack's native stacks vary and every call
 * walks. */
#define ALIKE_TO_REUSE 3
#define CHECK_EVERY 64

typedef struct {
    int id;     /* the native stack id last walked, -1 none */
    int alike;  /* walks in a row that gave id */
    int since;  /* reused calls since the last walk */
    int varies; /* a check found another stack: never reused again */
} reuse_entry;

static reuse_entry entries[MAX_PY_STACKS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int reuse_on;

void sba_stackreuse_init(void)
{
    reuse_on = sb_env_long(SB_ENV_STACK_REUSE, NULL) != 0;
}

static int reusable(long py)
{
    return reuse_on && py >= 0 && py < MAX_PY_STACKS;
}

long sba_stackreuse_lookup(long py)
{
    if (!reusable(py))
        return -2;
    long id = -2;
    pthread_mutex_lock(&lock);
    reuse_entry *e = &entries[py];
    if (!e->varies && e->alike >= ALIKE_TO_REUSE && ++e->since < CHECK_EVERY)
        id = e->id;
    pthread_mutex_unlock(&lock);
    return id;
}

void sba_stackreuse_seen(long py, long id)
{
    if (!reusable(py))
        return;
    pthread_mutex_lock(&lock);
    reuse_entry *e = &entries[py];
    if (e->alike && e->id == id) {
        e->alike++;
    } else {
        /* a reused stack that a check contradicts: the calls under py take several paths */
        if (e->alike >= ALIKE_TO_REUSE)
            e->varies = 1;
        e->id = (int)id;
        e->alike = 1;
    }
    e->since = 0;
    pthread_mutex_unlock(&lock);
}
