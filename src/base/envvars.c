#include "base/envvars.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define TEXT 0, 0, 0, 0
#define NUMBER(lo, hi, dflt) 1, lo, hi, dflt

/* One row a variable. Its readers: docs/environment.md names them; the launcher's hand-offs
 * are set by src/cmd/audit_launch.c through src/record/records.h's SB_AUDIT_ENV_* names, which
 * tests/unit/test_envvars.c holds to these. */
static const sb_env_var vars[SB_ENV_COUNT] = {
    [SB_ENV_AUDIT_LIB] = {"SYNCBENCH_AUDIT_LIB", SB_ENV_FOR_USER, TEXT,
                          "the injection library's file (default: beside the binary, then "
                          "PREFIX/lib/syncbench/)",
                          "audit.md"},
    [SB_ENV_WAITS_LIB] = {"SYNCBENCH_WAITS_LIB", SB_ENV_FOR_USER, TEXT,
                          "the waits library's file (default: beside the injection library)",
                          "audit.md"},
    [SB_ENV_CUPTI] = {"SYNCBENCH_CUPTI", SB_ENV_FOR_USER, TEXT,
                      "a libcupti.so.13 file, that one only (default: looked for)", "python.md"},
    [SB_ENV_NO_TOOLKIT] = {"SYNCBENCH_NO_TOOLKIT", SB_ENV_FOR_USER, TEXT,
                           "1: the toolkit and the loader's search skipped (default: unset)",
                           "run.md"},
    [SB_ENV_SITE_PACKAGES] = {"SYNCBENCH_SITE_PACKAGES", SB_ENV_FOR_USER, TEXT,
                              "site-packages folders, colon-separated, searched for NVIDIA's "
                              "wheels (set by the pip-installed console script)",
                              "run.md"},
    [SB_ENV_NCCL_LIB] = {"SYNCBENCH_NCCL_LIB", SB_ENV_FOR_USER, TEXT,
                         "the libnccl.so.2 file (default: libnccl.so.2, libnccl.so)", "run.md"},
    [SB_ENV_PY_WALK] = {"SYNCBENCH_PY_WALK", SB_ENV_FOR_DEV, TEXT,
                        "0: Python stacks by CPython's writer at every call, not read raw "
                        "(default: read raw)",
                        "audit.md"},
    [SB_ENV_STACK_REUSE] = {"SYNCBENCH_STACK_REUSE", SB_ENV_FOR_DEV, NUMBER(0, 1, 1),
                            "1: a Python stack's native stack reused once three walks agree, "
                            "walked again every 64th call; 0: walked at every call",
                            "audit.md"},
    [SB_ENV_PY_OFFSETS_NEWEST] = {"SYNCBENCH_PY_OFFSETS_NEWEST", SB_ENV_FOR_TEST,
                                  NUMBER(13, 99, 99),
                                  "the newest CPython minor version whose debug offsets are taken "
                                  "as known, 13 to 99: a newer one is read as that one",
                                  "audit.md"},
    [SB_ENV_ACTIVITY_CALIBRATE] = {"SYNCBENCH_ACTIVITY_CALIBRATE", SB_ENV_FOR_DEV, TEXT,
                                   "0: no --gpu-activity calibration (default: calibrated)",
                                   "dev/testing.md"},
    [SB_ENV_ACTIVITY_OFF] = {"SYNCBENCH_ACTIVITY_OFF", SB_ENV_FOR_DEV, TEXT,
                             "kinds of record not asked for, comma-separated, or all "
                             "(default: none)",
                             "dev/testing.md"},
    [SB_ENV_ACTIVITY_BUFFER_MB] = {"SYNCBENCH_ACTIVITY_BUFFER_MB", SB_ENV_FOR_DEV,
                                   NUMBER(1, 1024, 8), "each CUPTI buffer's size in MiB",
                                   "dev/testing.md"},
    [SB_ENV_ACTIVITY_FLUSH_MS] = {"SYNCBENCH_ACTIVITY_FLUSH_MS", SB_ENV_FOR_DEV,
                                  NUMBER(0, 60000, 500), "CUPTI's flush period (0: none)",
                                  "dev/testing.md"},
    [SB_ENV_ACTIVITY_ZEROED] = {"SYNCBENCH_ACTIVITY_ZEROED", SB_ENV_FOR_DEV, NUMBER(0, 1, 0),
                                "1: the buffers handed to CUPTI zeroed", "dev/testing.md"},
    [SB_ENV_FAULT] = {"SYNCBENCH_FAULT", SB_ENV_FOR_TEST, TEXT,
                      "fault names, comma-separated: a scenario damages its own result "
                      "(default: none)",
                      "dev/testing.md"},
    [SB_ENV_RECORDING_TURNS] = {"SYNCBENCH_RECORDING_TURNS", SB_ENV_FOR_TEST, NUMBER(0, 1, 0),
                                "1: run's recording turns, under the audit's library only",
                                "replay.md"},
    [SB_ENV_WAITS_KEEP_GIL] = {"SYNCBENCH_WAITS_KEEP_GIL", SB_ENV_FOR_TEST, TEXT,
                               "1: the GIL's hand-offs kept (default: left out); read by "
                               "waits/ with its own getenv",
                               "environment.md"},
    [SB_ENV_AUDIT_DIR] = {"SYNCBENCH_AUDIT_DIR", SB_ENV_FOR_HANDOFF, TEXT,
                          "where proc-PID.jsonl goes; unset: the library stays out of the way",
                          "record-format.md"},
    [SB_ENV_AUDIT_MODE] = {"SYNCBENCH_AUDIT_MODE", SB_ENV_FOR_HANDOFF, TEXT,
                           "count (default) or trace", "record-format.md"},
    [SB_ENV_AUDIT_DEPTH] = {"SYNCBENCH_AUDIT_DEPTH", SB_ENV_FOR_HANDOFF, NUMBER(0, 32, 16),
                            "native frames kept per stack (--depth)", "record-format.md"},
    [SB_ENV_AUDIT_GPU] = {"SYNCBENCH_AUDIT_GPU", SB_ENV_FOR_HANDOFF, NUMBER(0, 3, 0),
                          "GPU activity: 0 none, 1 copies and memsets, 2 kernels too, 3 the "
                          "launches too",
                          "record-format.md"},
    [SB_ENV_AUDIT_PYTHON] = {"SYNCBENCH_AUDIT_PYTHON", SB_ENV_FOR_HANDOFF, NUMBER(0, 1, 1),
                             "1: Python stacks recorded, 0: none (--no-python)",
                             "record-format.md"},
    [SB_ENV_AUDIT_SOCK] = {"SYNCBENCH_AUDIT_SOCK", SB_ENV_FOR_HANDOFF, TEXT,
                           "the launcher's status socket (abstract namespace)", "record-format.md"},
    [SB_ENV_AUDIT_WINDOW] = {"SYNCBENCH_AUDIT_WINDOW", SB_ENV_FOR_HANDOFF, TEXT,
                             "the window of GPU activity, NAME[@DOMAIN]:FIRST-LAST "
                             "(--gpu-activity-range, --gpu-activity-steps; unset: the whole run)",
                             "record-format.md"},
};

const sb_env_var *sb_env_var_of(sb_env_id id)
{
    return (unsigned)id < SB_ENV_COUNT ? &vars[id] : NULL;
}

const char *sb_env_name(sb_env_id id)
{
    const sb_env_var *v = sb_env_var_of(id);
    return v ? v->name : NULL;
}

const char *sb_env_raw(sb_env_id id)
{
    const char *name = sb_env_name(id);
    return name ? getenv(name) : NULL;
}

const char *sb_env_str(sb_env_id id)
{
    const char *s = sb_env_raw(id);
    return s && *s ? s : NULL;
}

int sb_env_is(sb_env_id id, const char *value)
{
    const char *s = sb_env_raw(id);
    return s && !strcmp(s, value);
}

/* s as a whole number: an optional minus and digits, all of it (no space, no plus); 0 when it
 * is not one. */
static int whole_number(const char *s, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if ((*s != '-' && (*s < '0' || *s > '9')) || end == s || *end || errno)
        return 0;
    *out = v;
    return 1;
}

long sb_env_long(sb_env_id id, int *bad)
{
    const sb_env_var *v = sb_env_var_of(id);
    const char *s = sb_env_str(id);
    long n = 0;
    int wrong = v && v->number && s && (!whole_number(s, &n) || n < v->lo || n > v->hi);
    if (bad)
        *bad = wrong;
    if (!v || !v->number)
        return 0;
    return s && !wrong ? n : v->dflt;
}

long sb_env_long_named(const char *name, long dflt)
{
    const char *s = getenv(name);
    long n = 0;
    return s && *s && whole_number(s, &n) ? n : dflt;
}
