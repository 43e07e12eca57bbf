/* Syncs made by the frameworks people train with, as data (frameworks.c): one row per known
 * sync of a library's own code, matched by the library frame's module, function and line text,
 * with the option in the user's own code that removes it. docs/frameworks.md is the table a
 * user reads; tests/unit/test_audit_frameworks.c iterates the real table. */
#ifndef SB_FRAMEWORKS_H
#define SB_FRAMEWORKS_H

#include "analyze/analyze.h"

typedef struct sb_fw_row {
    const char *id;       /* "transformers.trainer.nan_inf_filter": unique, the reports' key */
    const char *package;  /* the installed package whose code makes the sync ("transformers") */
    const char *versions; /* the versions it was checked on ("5.17.0") */
    /* how it is matched, each a list of alternatives "a|b": a Python frame between the user's
     * line and the call whose file is `module` (whole path components from the package on), in
     * a function named `func`, whose line holds `text` */
    const char *module; /* "transformers/trainer.py" */
    const char *func;   /* "_run_epoch|_inner_training_loop" */
    const char *text;   /* "torch.isnan(tr_loss_step)" */
    const char *what;   /* what the sync is, in the user's terms */
    /* the fix a user applies in their own code: the option, argument or call; with `removes`
     * 0, no option removes it and `fix` is the sync-free way for the library's authors */
    const char *fix;
    const char *caveat;   /* what the user gives up, or where the syncs move; "" when nothing */
    const char *where;    /* the text of the call in the user's code to change
                             ("TrainingArguments(|Seq2SeqTrainingArguments("); NULL: none */
    const char *scenario; /* the syncbench scenario that prices it; NULL: none */
    int removes;          /* 1: the option removes the line's syncs (checked on a GPU) */
} sb_fw_row;

/* The built-in table, NULL-terminated by id. */
extern const sb_fw_row sb_fw_rows[];

/* ---- fw_file.c: rows a user adds (--rules FILE), tried before the built-in ones ---- */
/* Keeps rows (the caller keeps them alive through the analysis); NULL, 0: none. */
void sb_fw_use_user_rows(const sb_fw_row *rows, size_t n);
/* The rows kept, *n of them; NULL when none. */
const sb_fw_row *sb_fw_user_rows(size_t *n);

/* What the table says of one call with Python stack s, whose user's frame is ci->pyframe: the
 * first row (the user's, then the built-in) that a frame between the call and the user's line
 * matches, innermost first; NULL when none. *changed is set when the frame that made the call
 * matches a row's module and function but not its text (a release that changed the line: not
 * known to syncbench), else cleared. */
struct sb_audit_analysis;
const sb_fw_row *sb_fw_match(const sb_audit_pystack *s, const sb_audit_call_info *ci,
                             struct sb_audit_analysis *an, const sb_fw_row **changed);

/* A call's row of the table (m->fw, m->fw_changed) and where its fix goes (m->fix_at: the line
 * of the user's files on the stack that holds the row's `where` call); with a row, ci->rule
 * becomes `own`, the row's (its scenario). 0, or -1 out of memory. */
struct sb_audit_rule;
int sb_fw_attribute(struct sb_audit_analysis *an, const sb_audit_pystack *s, sb_audit_call_info *ci,
                    sb_audit_made *m, struct sb_audit_rule *own);

/* Is an installed package's file, from its package on, one of the alternatives of `alts`
 * ("torch/amp/grad_scaler.py" is ".../site-packages/torch/amp/grad_scaler.py", never
 * ".../site-packages/mylib/torch/amp/grad_scaler.py")? */
int sb_fw_module_is(const char *alts, const char *path);

/* A row's checks (the built-in table's and a --rules file's; fw_file.c): NULL when it is whole,
 * else what is wrong ("no fix", "module not in its package", ...). */
const char *sb_fw_row_problem(const sb_fw_row *r);

/* A --rules FILE read into *rows (*n of them, every string owned; sb_fw_file_free releases
 * them): an INI file, a section [ID] per row, keys package, versions, module, function (func),
 * text, what and fix (required), caveat, where, scenario and removes (true/false, 1/0,
 * yes/no). 0, or -1 with one line in err: "FILE:LINE: [ID]: problem" (LINE that of the row's
 * header or of the key at fault), or "FILE: problem" for the file as a whole (cannot be opened,
 * not a regular file, no rows). */
int sb_fw_file_load(const char *path, sb_fw_row **rows, size_t *n, char *err, size_t errn);
void sb_fw_file_free(sb_fw_row *rows, size_t n);

#endif
