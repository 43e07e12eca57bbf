#include "sinks/sink.h"

#include <stdio.h>
#include <string.h>

const char *const sb_csv_columns[] = {
    "run_id", "timestamp", "host", "gpu",    "driver", "cuda_runtime", "scenario", "variant",
    "params", "iters",     "reps", "metric", "unit",   "better",       "median",   "mean",
    "stddev", "min",       "max",  "p05",    "p95",    "cv",           "flags",    NULL,
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
    char stamp[32];
    sb_utc_format(r->finished, stamp, sizeof stamp);
    const char *text[] = {env->run_id,       stamp,       env->host,  env->gpu, env->driver,
                          env->cuda_runtime, r->scenario, r->variant, r->params};
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
    fputc(',', f);
    sb_csv_write_field(f, r->flags);
    fputc('\n', f);
}

/* The header at begin, each row as it comes; the set's flush makes them durable. */
static int csv_begin(sb_sink *s, const sb_env *env)
{
    (void)env;
    sb_csv_write_header(s->out.f);
    return 0;
}

static int csv_row(sb_sink *s, const sb_env *env, const sb_row *row)
{
    sb_csv_write_row(s->out.f, env, row);
    return 0;
}

const sb_sink_ops sb_csv_sink = {
    .name = "csv",
    .begin = csv_begin,
    .row = csv_row,
};
