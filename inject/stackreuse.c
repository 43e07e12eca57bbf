#include "stackreuse.h"

#include <pthread.h>
#include <string.h>

#include "pyframes.h"
#include "base/envvars.h"

/* Walks that must agree before a stack is reused, and how often a reused one is walked again.
 * A check that finds another stack starts the count again (a path that changed once: a lazy
 * first-call set-up); the second such check means the Python stack's calls take several paths,
 * and every call under it walks from then on. */
#define ALIKE_TO_REUSE 3
#define CHECK_EVERY 64
#define CHECKS_TO_VARY 2

typedef struct {
    unsigned api; /* the API whose stack it keeps (the first seen under the Python stack); 0 none */
    int id;       /* the native stack id last walked, -1 none */
    int alike;    /* walks in a row that gave id */
    int since;    /* reused calls since the last walk */
    int differed; /* checks of a reused stack that found another */
} reuse_entry;

static reuse_entry entries[SBA_PY_MAX_STACKS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int reuse_on;

void sba_stackreuse_init(void)
{
    pthread_mutex_lock(&lock);
    reuse_on = sb_env_long(SB_ENV_STACK_REUSE, NULL) != 0;
    memset(entries, 0, sizeof entries);
    pthread_mutex_unlock(&lock);
}

/* py's entry for api, NULL when api's stacks under py are not reused (lock held). */
static reuse_entry *entry(long py, unsigned api)
{
    if (!reuse_on || py < 0 || py >= SBA_PY_MAX_STACKS || !api)
        return NULL;
    reuse_entry *e = &entries[py];
    if (!e->api)
        e->api = api;
    return e->api == api && e->differed < CHECKS_TO_VARY ? e : NULL;
}

long sba_stackreuse_lookup(long py, unsigned api)
{
    long id = -2;
    pthread_mutex_lock(&lock);
    reuse_entry *e = entry(py, api);
    if (e && e->alike >= ALIKE_TO_REUSE && ++e->since < CHECK_EVERY)
        id = e->id;
    pthread_mutex_unlock(&lock);
    return id;
}

void sba_stackreuse_seen(long py, unsigned api, long id)
{
    pthread_mutex_lock(&lock);
    reuse_entry *e = entry(py, api);
    if (e && e->alike && e->id == id) {
        e->alike++;
    } else if (e) {
        if (e->alike >= ALIKE_TO_REUSE)
            e->differed++;
        e->id = (int)id;
        e->alike = 1;
    }
    if (e)
        e->since = 0;
    pthread_mutex_unlock(&lock);
}
