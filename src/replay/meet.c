/* Where the ranks of a job meet in one play (replay_model.h): a collective completes when the
 * last rank's part of it has arrived, each rank going on as long after that as it did in the run.
 * job.c owns the arrivals and sets them up; replay.c notes each part and asks for its end. */
#include <stdint.h>

#include "replay/replay_model.h"

void sb_replay_meet_arrive(sb_replay_meet *mt, size_t rank, const rpart *pt, int64_t at)
{
    mt->arrived[(size_t)pt->match * mt->n + rank] = at + mt->off[rank];
    mt->narrived[pt->match]++;
}

int sb_replay_meet_complete(const sb_replay_meet *mt, size_t rank, const rpart *pt, int64_t *end)
{
    if (mt->narrived[pt->match] < mt->n)
        return 0;
    const int64_t *at = &mt->arrived[(size_t)pt->match * mt->n];
    int64_t last = at[0];
    for (size_t r = 1; r < mt->n; r++)
        last = max64(last, at[r]);
    /* as long after the last arrival as in the run; never before its own (clocks of one
     * machine, but a negative lag is possible at the edge of their resolution) */
    *end = max64(last + pt->lag, at[rank]) - mt->off[rank];
    return 1;
}
