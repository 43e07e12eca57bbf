/* The output registry: a row per format (outputs/formats.h). */
#include "outputs/formats.h"

#include "report/report.h"

static int audit_csv(FILE *f, const sb_audit_analysis *an, const sb_audit_opts *o,
                     const sb_env *env)
{
    (void)o, (void)env;
    return sb_audit_write_csv(f, an);
}

static int audit_trace(FILE *f, const sb_audit_analysis *an, const sb_audit_opts *o,
                       const sb_env *env)
{
    (void)o, (void)env;
    return sb_audit_write_trace(f, an);
}

/* clang-format off */
const sb_output_format sb_output_formats[] = {
    {.name = "CSV", .option = "csv", .run = &sb_csv_sink, .audit = audit_csv},
    {.name = "JSON", .option = "json", .run = &sb_json_sink, .audit = sb_audit_write_json},
    {.name = "Markdown", .option = "markdown", .run = &sb_markdown_sink,
     .audit = sb_audit_write_markdown, .compare = sb_compare_out_markdown},
    {.name = "Chrome trace", .option = "trace", .audit = audit_trace},
    {.name = "samples CSV", .option = "samples", .run = &sb_samples_sink},
    {.name = "github-action-benchmark JSON", .option = "github-benchmark",
     .run = &sb_github_benchmark_sink},
    {.name = "Bencher Metric Format", .option = "bmf", .run = &sb_bmf_sink},
    {.name = "verdicts CSV", .option = "verdicts", .compare = sb_compare_out_verdicts},
    {.name = "rerun suite", .option = "rerun", .compare = sb_compare_out_rerun},
    {.name = "JUnit XML", .option = "junit", .ci = 1, .audit = sb_audit_write_junit,
     .compare = sb_compare_out_junit},
    {.name = NULL},
};
/* clang-format on */

int sb_output_formats_count(void)
{
    int n = 0;
    while (sb_output_formats[n].name)
        n++;
    return n;
}
