/* The SYNCBENCH_* environment variables: one table (envvars.c) holds each one's name, default,
 * range or values, who it is for and where it is documented (docs/environment.md lists the
 * same rows; tests/cli/test_envvars.py holds the table, the readers and the doc together).
 * Every C reader of one goes through these getters, the injection library's too: they read
 * the environment and never allocate. waits/ includes nothing of the project and keeps its own
 * getenv of its one variable, a row here all the same. */
#ifndef SB_BASE_ENVVARS_H
#define SB_BASE_ENVVARS_H

typedef enum {
    SB_ENV_AUDIT_LIB,
    SB_ENV_WAITS_LIB,
    SB_ENV_CUPTI,
    SB_ENV_NO_TOOLKIT,
    SB_ENV_SITE_PACKAGES,
    SB_ENV_NCCL_LIB,
    SB_ENV_PY_WALK,
    SB_ENV_STACK_REUSE,
    SB_ENV_PY_OFFSETS_NEWEST,
    SB_ENV_ACTIVITY_CALIBRATE,
    SB_ENV_ACTIVITY_OFF,
    SB_ENV_ACTIVITY_BUFFER_MB,
    SB_ENV_ACTIVITY_FLUSH_MS,
    SB_ENV_ACTIVITY_ZEROED,
    SB_ENV_FAULT,
    SB_ENV_RECORDING_TURNS,
    SB_ENV_WAITS_KEEP_GIL,
    SB_ENV_AUDIT_DIR,
    SB_ENV_AUDIT_MODE,
    SB_ENV_AUDIT_DEPTH,
    SB_ENV_AUDIT_GPU,
    SB_ENV_AUDIT_PYTHON,
    SB_ENV_AUDIT_SOCK,
    SB_ENV_AUDIT_WINDOW,
    SB_ENV_COUNT
} sb_env_id;

/* Who a variable is for. */
typedef enum {
    SB_ENV_FOR_USER,    /* a user's setting */
    SB_ENV_FOR_DEV,     /* a developer's knob: what a part of the recording costs */
    SB_ENV_FOR_TEST,    /* a test hook */
    SB_ENV_FOR_HANDOFF, /* set by the launcher for the injected library, never by hand */
} sb_env_for;

typedef struct {
    const char *name;
    sb_env_for who;
    int number;         /* 1: a whole number from lo to hi (sb_env_long); 0: text */
    long lo, hi, dflt;  /* a number's range and default */
    const char *values; /* the text's values, or the number's meaning; the default said */
    const char *doc;    /* where it is documented, from docs/ */
} sb_env_var;

/* The row of id (NULL for an id out of range). */
const sb_env_var *sb_env_var_of(sb_env_id id);
const char *sb_env_name(sb_env_id id);

/* The value as the environment holds it: NULL when unset, "" when set empty. */
const char *sb_env_raw(sb_env_id id);
/* The value, NULL when unset or empty. */
const char *sb_env_str(sb_env_id id);
/* Whether it is set to exactly value. */
int sb_env_is(sb_env_id id, const char *value);
/* A number row's value: its default when unset or empty; its default too, with *bad set to 1,
 * when it is not a whole number from lo to hi (bad may be NULL; it is 0 otherwise). */
long sb_env_long(sb_env_id id, int *bad);
/* A whole number of a variable outside the table (RANK, LOCAL_RANK: the launchers' of
 * torchrun and MPI): dflt when unset, empty or not a whole number. */
long sb_env_long_named(const char *name, long dflt);

#endif
