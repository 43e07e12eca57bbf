/* The record table printed for the docs, and record files checked against it. */
#include "cmd/record_schema.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "model/model.h"
#include "record/schema.h"

/* A cell's text with Markdown's column bar escaped. */
static void cell(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '|')
            fputc('\\', f);
        fputc(*s, f);
    }
}

static void print_markdown(FILE *f)
{
    fputs("| `t` | field | type | required | meaning |\n"
          "| --- | --- | --- | --- | --- |\n",
          f);
    for (size_t k = 0; k < SB_REC_NKINDS; k++) {
        const sb_rec_def *def = &sb_rec_defs[k];
        fprintf(f, "| `%s` | | | | ", def->t);
        cell(f, def->meaning);
        fputs(" |\n", f);
        for (size_t i = 0; i < def->nfields; i++) {
            const sb_rec_field *fl = &def->fields[i];
            fprintf(f, "| `%s` | `%s` | %s |%s| ", def->t, fl->name, sb_rec_ftype_name(fl->type),
                    fl->required ? " yes " : " ");
            cell(f, fl->meaning);
            fputs(" |\n", f);
        }
    }
}

/* Each line of path held to the table: its faults printed; how many, or -1 (error set). */
static long check_file(const char *path)
{
    FILE *in = fopen(path, "r");
    if (!in)
        return sb_fail(SB_EXIT_FAIL, "cannot read %s: %s", path, strerror(errno)), -1;
    char *line = NULL, why[256];
    size_t cap = 0;
    ssize_t len;
    long lineno = 0, faults = 0;
    while ((len = getline(&line, &cap, in)) >= 0) {
        lineno++;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = '\0';
        if (len && !sb_audit_record_conforms(line, (size_t)len, why, sizeof why)) {
            printf("%s:%ld: %s\n", path, lineno, why);
            faults++;
        }
    }
    free(line);
    fclose(in);
    return faults;
}

int sb_cmd_record_schema(int argc, char **argv)
{
    if (argc == 1) {
        print_markdown(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--check") || argc < 3)
        return sb_fail(SB_EXIT_USAGE, SB_RECORD_SCHEMA_CMD ": takes nothing, or --check FILE...");
    long faults = 0;
    for (int i = 2; i < argc; i++) {
        long n = check_file(argv[i]);
        if (n < 0)
            return SB_EXIT_FAIL;
        faults += n;
    }
    return faults
               ? sb_fail(SB_EXIT_FAIL, "%ld record lines do not keep to the record table", faults)
               : 0;
}
