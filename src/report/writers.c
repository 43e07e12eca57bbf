/* The file writers behind one interface, by the option that names them. */
#include "report/report.h"

static int write_csv(FILE *f, const sb_audit_run *run, const sb_audit_opts *o, const sb_env *env)
{
    (void)o, (void)env;
    return sb_audit_write_csv(f, run);
}

static int write_trace(FILE *f, const sb_audit_run *run, const sb_audit_opts *o, const sb_env *env)
{
    (void)o, (void)env;
    return sb_audit_write_trace(f, run);
}

const sb_report_writer sb_report_writers[] = {
    {.name = "csv", .write = write_csv},     {.name = "json", .write = sb_audit_write_json},
    {.name = "trace", .write = write_trace}, {.name = "junit", .write = sb_audit_write_junit},
    {.name = NULL, .write = NULL},
};

const sb_report_writer sb_report_github_writers[] = {
    {.name = "annotations", .write = sb_audit_write_annotations},
    {.name = "summary", .write = sb_audit_write_summary},
    {.name = NULL, .write = NULL},
};
