#include "report.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "error.h"

const char *const sb_csv_columns[] = {
    "run_id", "timestamp", "host", "gpu",    "driver", "cuda_runtime", "scenario", "variant",
    "params", "iters",     "reps", "metric", "unit",   "better",       "median",   "mean",
    "stddev", "min",       "max",  "p05",    "p95",    "cv",           NULL,
};

void sb_csv_write_field(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

void sb_csv_write_header(FILE *f)
{
    for (int i = 0; sb_csv_columns[i]; i++) {
        if (i)
            fputc(',', f);
        fputs(sb_csv_columns[i], f);
    }
    fputc('\n', f);
}

static void num(FILE *f, double v)
{
    fprintf(f, ",%.9g", v);
}

void sb_csv_write_row(FILE *f, const sb_env *env, const sb_row *r)
{
    const char *text[] = {env->run_id,       r->timestamp, env->host,  env->gpu, env->driver,
                          env->cuda_runtime, r->scenario,  r->variant, r->params};
    for (size_t i = 0; i < sizeof text / sizeof text[0]; i++) {
        if (i)
            fputc(',', f);
        sb_csv_write_field(f, text[i]);
    }
    fprintf(f, ",%lld,%d,", r->iters, r->reps);
    sb_csv_write_field(f, r->metric);
    fputc(',', f);
    sb_csv_write_field(f, r->unit);
    fprintf(f, ",%s", sb_better_name(r->better));
    num(f, r->st.median);
    num(f, r->st.mean);
    num(f, r->st.stddev);
    num(f, r->st.min);
    num(f, r->st.max);
    num(f, r->st.p05);
    num(f, r->st.p95);
    num(f, r->st.cv);
    fputc('\n', f);
}

int sb_csv_open(sb_csv_file *c, const char *path)
{
    memset(c, 0, sizeof *c);
    if (strcmp(path, "-") == 0) {
        c->to_stdout = 1;
        c->f = stdout;
        return 0;
    }
    snprintf(c->path, sizeof c->path, "%s", path);
    snprintf(c->tmp, sizeof c->tmp, "%s.tmp-%d", path, (int)getpid());
    c->f = fopen(c->tmp, "w");
    if (!c->f)
        return sb_fail(SB_EXIT_USAGE, "--csv %s: cannot create: %s", path, strerror(errno));
    return 0;
}

int sb_csv_commit(sb_csv_file *c, const sb_env *env, const sb_results *res)
{
    if (!c->f)
        return 0;
    sb_csv_write_header(c->f);
    for (int i = 0; i < res->n; i++)
        sb_csv_write_row(c->f, env, &res->rows[i]);
    if (c->to_stdout) {
        fflush(stdout);
        c->f = NULL;
        return 0;
    }
    int bad = ferror(c->f);
    bad |= fclose(c->f) != 0;
    c->f = NULL;
    if (bad || rename(c->tmp, c->path) != 0) {
        int err = errno;
        unlink(c->tmp);
        return sb_fail(SB_EXIT_FAIL, "--csv %s: write failed: %s", c->path, strerror(err));
    }
    return 0;
}

void sb_csv_discard(sb_csv_file *c)
{
    if (c->f && !c->to_stdout) {
        fclose(c->f);
        unlink(c->tmp);
    }
    c->f = NULL;
}
