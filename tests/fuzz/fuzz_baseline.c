/* The sync baseline (`syncbench audit --baseline FILE`, src/analyze/baseline_file.c), fuzzed:
 * an input is an INI file, read as the audit reads it before the command starts. Checked besides
 * memory and undefined behaviour: a file read has a range when it is per step, budgets and
 * skip_first never negative, and no two sites with one key; a file refused gives one printable
 * line. */
#include <stdint.h>
#include <string.h>

#include "analyze/baseline.h"
#include "base/error.h"
#include "fuzz_file.h"

static int same_key(const sb_bl_site *a, const sb_bl_site *b)
{
    return !strcmp(a->file, b->file) && !strcmp(a->function, b->function) &&
           !strcmp(a->text, b->text) && !strcmp(a->operation, b->operation) &&
           !strcmp(a->library_line, b->library_line) && !strcmp(a->thread, b->thread);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static fuzz_file file = FUZZ_FILE_INIT;
    const char *path = fuzz_file_set(&file, data, size);
    sb_error_clear();
    sb_baseline *b = NULL;
    char err[1024] = "";
    if (sb_baseline_load(path, &b, err, sizeof err) != 0) {
        FUZZ_CHECK(b == NULL);
        fuzz_check_message(err);
        return 0;
    }
    FUZZ_CHECK(b != NULL);
    FUZZ_CHECK(!b->per_step || (b->range && b->range[0]));
    FUZZ_CHECK(b->skip_first >= 0);
    for (size_t i = 0; i < b->n; i++) {
        FUZZ_CHECK(b->sites[i].budget >= 0 && b->sites[i].skip_first >= -1);
        for (size_t k = 0; k < i; k++)
            FUZZ_CHECK(!same_key(&b->sites[i], &b->sites[k]));
    }
    sb_baseline_free(b);
    return 0;
}
