#include "suite/gpus.h"

#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "scenarios/multi_gpu.h"

int sb_plan_multi_gpu(const sb_plan *plan)
{
    for (int i = 0; i < plan->n; i++)
        if (plan->entries[i].sc->multi)
            return 1;
    return 0;
}

/* "collective (needs 2 or more GPUs)" for each scenario taken out, once. */
static void add_to_note(char *note, size_t n, const sb_scenario *sc)
{
    char item[128];
    snprintf(item, sizeof item, "%s (needs %d or more GPUs)", sc->name, sc->multi->min_gpus);
    if (strstr(note, item))
        return;
    size_t used = strlen(note);
    snprintf(note + used, n - used, "%s%s", used ? ", " : "", item);
}

int sb_plan_fit_gpus(sb_plan *plan, int visible, char *note, size_t note_len)
{
    char skipped[1024] = "";
    int kept = 0;
    for (int i = 0; i < plan->n; i++) {
        const sb_plan_entry *e = &plan->entries[i];
        const sb_multi_gpu *m = e->sc->multi;
        if (m) {
            sb_param_values pv = sb_plan_params(e);
            int asked = m->asked(&pv);
            if (asked > visible) {
                char params[256];
                sb_params_format_all(e->sc->params, e->values, params, sizeof params);
                return sb_fail(SB_EXIT_USAGE,
                               "%s %s: asks for %d GPUs, this machine has %d (gpus=all takes "
                               "every visible one)",
                               e->sc->name, params, asked, visible);
            }
            if (!asked && visible < m->min_gpus) {
                add_to_note(skipped, sizeof skipped, e->sc);
                continue;
            }
        }
        plan->entries[kept++] = *e;
    }
    plan->n = kept;
    if (note_len)
        note[0] = '\0';
    if (note_len && *skipped)
        snprintf(note, note_len, "this machine has %d GPU%s: skipped %s", visible,
                 visible == 1 ? "" : "s", skipped);
    return 0;
}

/* Whether entry i checks what an earlier one already checked: the same scenario, GPUs and
 * variants (the checks read nothing else). */
static int checked_before(const sb_plan *plan, int i, int visible)
{
    const sb_plan_entry *e = &plan->entries[i];
    sb_param_values pe = sb_plan_params(e);
    int gpus = sb_gpus_for(e->sc->multi->asked(&pe), visible);
    for (int j = 0; j < i; j++) {
        const sb_plan_entry *f = &plan->entries[j];
        if (f->sc != e->sc || f->n_variants != e->n_variants ||
            memcmp(f->variants, e->variants, sizeof *e->variants * (size_t)e->n_variants))
            continue;
        sb_param_values pf = sb_plan_params(f);
        if (sb_gpus_for(f->sc->multi->asked(&pf), visible) == gpus)
            return 1;
    }
    return 0;
}

int sb_plan_check_gpus(const sb_plan *plan, int visible)
{
    for (int i = 0; i < plan->n; i++) {
        const sb_plan_entry *e = &plan->entries[i];
        const sb_multi_gpu *m = e->sc->multi;
        if (!m || !m->check || checked_before(plan, i, visible))
            continue;
        sb_param_values pv = sb_plan_params(e);
        int rc = m->check(&pv, e->variants, e->n_variants, sb_gpus_for(m->asked(&pv), visible));
        if (rc)
            return rc;
    }
    return 0;
}
