/* The framework table's user rows (`syncbench audit --rules FILE`, src/analyze/fw_file.c),
 * fuzzed: an input is an INI file, read as the audit reads it before the command starts.
 * Checked besides memory and undefined behaviour: a file read holds at least one row, each whole
 * by the rows' own checks (sb_fw_row_problem) with a unique id; a file refused gives one
 * printable line. */
#include <stdint.h>
#include <string.h>

#include "analyze/frameworks.h"
#include "base/error.h"
#include "fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static fuzz_file file = FUZZ_FILE_INIT;
    const char *path = fuzz_file_set(&file, data, size);
    sb_error_clear();
    sb_fw_row *rows = NULL;
    size_t n = 0;
    char err[1024] = "";
    int rc = sb_fw_file_load(path, &rows, &n, err, sizeof err);
    if (rc) {
        FUZZ_CHECK(rows == NULL || n == 0);
        fuzz_check_message(err);
    } else {
        FUZZ_CHECK(n >= 1);
        for (size_t i = 0; i < n; i++) {
            FUZZ_CHECK(sb_fw_row_problem(&rows[i]) == NULL);
            for (size_t k = 0; k < i; k++)
                FUZZ_CHECK(strcmp(rows[i].id, rows[k].id) != 0);
        }
    }
    sb_fw_file_free(rows, n);
    return 0;
}
