#include "scenarios/pattern_tally.h"

#include "base/fault.h"
#include "gpu/cuda_check.h"
#include "gpu/sync.h"
#include "scenarios/validation.h"
#include "pattern_check.h"

int sb_tally_init(sb_pattern_tally *t, sb_resources *res, cudaStream_t stream, const char *fault,
                  const char *what)
{
    t->stream = stream;
    t->fault = fault;
    t->what = what;
    int rc = sb_get_device(res, &t->counts, 2 * sizeof *t->counts);
    if (rc)
        return rc;
    return sb_memset_sync(t->counts, 0, 2 * sizeof *t->counts, stream);
}

int sb_tally_check(sb_pattern_tally *t, const void *buf, size_t words, uint32_t seq)
{
    SB_LAUNCH(sb_launch_check_pattern(buf, words, seq, t->counts, t->stream));
    t->launched++;
    return 0;
}

int sb_tally_validate(sb_run *r)
{
    sb_pattern_tally *t = r->state;
    unsigned long long counts[2];
    SB_CUDA(sb_read_back(counts, t->counts, sizeof counts, t->stream));
    if (sb_fault(t->fault)) /* test hook: damaged data must be caught */
        counts[0]++;
    unsigned long long launched = t->launched;
    t->launched = 0;
    if (counts[0] || counts[1] != launched)
        return sb_invalid("%llu %s; %llu of %llu checks ran", counts[0], t->what, counts[1],
                          launched);
    return sb_memset_sync(t->counts, 0, 2 * sizeof *t->counts, t->stream);
}
