/* syncbench.1 in roff (man(7)): the prose here, the options from the tables. */
#include "cmd/man.h"

#include <stdio.h>

#include "base/error.h"
#include "cli/args.h"
#include "cli/audit_args.h"
#include "cli/cli.h"
#include "cli/compare_args.h"
#include "suite/run_spec.h"

static void head(FILE *f)
{
    fputs(".TH SYNCBENCH 1 \"\" \"syncbench " SB_VERSION "\" \"User Commands\"\n"
          ".SH NAME\n"
          "syncbench \\- what CPU\\(enGPU synchronization costs, and where the syncs are\n"
          ".SH SYNOPSIS\n"
          ".B syncbench\n[\\fBrun\\fR] [\\fIoptions\\fR]\n.br\n"
          ".B syncbench compare\n\\fIBASELINE.csv CURRENT.csv\\fR [\\fIoptions\\fR]\n.br\n"
          ".B syncbench audit\n[\\fIoptions\\fR] \\fB\\-\\-\\fR \\fICMD\\fR [\\fIARGS\\fR...]\n"
          ".br\n"
          ".B syncbench audit \\-\\-merge\n\\fIREPORT.json\\fR... [\\fIoptions\\fR]\n.br\n"
          ".B syncbench list\n"
          ".SH DESCRIPTION\n"
          "\\fBsyncbench run\\fR (the default) measures what a host\\(enGPU synchronization "
          "costs in each scenario and what its sync\\-free alternative saves. "
          "\\fBsyncbench compare\\fR is the regression gate between two runs. "
          "\\fBsyncbench audit\\fR runs any CUDA program with a CUPTI library loaded into it "
          "and reports, prices and gates every host API call that blocked.\n",
          f);
}

static void tail(FILE *f)
{
    fputs(".SH EXIT STATUS\n"
          ".TP\n0\nsuccess; the gate passed\n"
          ".TP\n1\na measurement failed its check, a write failed, a regression "
          "(\\fBcompare\\fR), or the audit's gate failed or could not check (a process not "
          "watched or its records incomplete)\n"
          ".TP\n2\nbad input: one line on stderr, before any GPU work and before an audited "
          "command starts\n"
          ".TP\n3\nno usable GPU, driver, cuBLAS or CUPTI\n"
          ".TP\n126, 127, 128+N\n\\fBaudit\\fR: the command is not executable, not found, "
          "or ended by signal N; otherwise the command's own exit status\n"
          ".SH ENVIRONMENT\n"
          ".TP\nGITHUB_ACTIONS\n\\fBtrue\\fR (GitHub Actions): \\fBcompare\\fR and "
          "\\fBaudit\\fR annotate their failures and write the step summary, unless "
          "\\fB\\-\\-ci none\\fR\n"
          ".TP\nGITHUB_STEP_SUMMARY\nthe file the step summary is appended to (at most 1 MiB a "
          "step)\n"
          ".TP\nGITHUB_WORKSPACE\nthe repository's root, which annotated files are relative to "
          "(else the current folder)\n"
          ".TP\nSYNCBENCH_CUPTI\nthe \\fIlibcupti.so.13\\fR that \\fBaudit\\fR loads; else "
          "it is looked for in LD_LIBRARY_PATH, the toolkit (CUDA_HOME, /usr/local/cuda) and "
          "the NVIDIA wheels of a Python environment (SYNCBENCH_SITE_PACKAGES, VIRTUAL_ENV, "
          "CONDA_PREFIX)\n"
          ".TP\nSYNCBENCH_NO_TOOLKIT\n\\fB1\\fR: CUPTI and cuBLAS are not taken from a CUDA "
          "toolkit or the loader's own search\n"
          ".SH FILES\n"
          ".TP\n\\fISITE\\fR/syncbench/_bin/\nthe binary and both libraries, where the wheel "
          "installs them (the console script \\fBsyncbench\\fR runs the binary)\n"
          ".TP\n\\fIPREFIX\\fR/share/syncbench/configs/*.ini\nthe shipped suites\n"
          ".TP\n\\fIPREFIX\\fR/lib/syncbench/libsyncbench_audit.so\nthe audit's CUPTI library\n"
          ".TP\n\\fIPREFIX\\fR/lib/syncbench/libsyncbench_waits.so\nthe hand-offs between "
          "threads, preloaded by \\fBaudit --gpu-activity\\fR\n"
          ".SH SEE ALSO\n"
          "The documentation in the source tree: README.md, docs/run.md, docs/compare.md, "
          "docs/audit.md, docs/replay.md, docs/python.md, docs/ci.md, docs/exit-codes.md.\n",
          f);
}

int sb_cmd_man(int argc, char **argv)
{
    (void)argv;
    if (argc > 1)
        return sb_fail(SB_EXIT_USAGE, SB_MAN_CMD ": takes no arguments");
    FILE *f = stdout;
    head(f);
    const sb_argtable run[] = {{sb_run_optdefs, NULL, NULL}, {sb_cli_optdefs(), NULL, NULL}};
    const sb_argtable compare[] = {{sb_compare_optdefs(), NULL, NULL}};
    const sb_argtable audit[] = {{sb_audit_optdefs(), NULL, NULL}};
    sb_args_man(f, "RUN OPTIONS", run, 2);
    sb_args_man(f, "COMPARE OPTIONS", compare, 1);
    sb_args_man(f, "AUDIT OPTIONS", audit, 1);
    tail(f);
    return 0;
}
