/* What the analysis finds of one recorded call, and the rules and call sites that name it: the
 * types analyze.c, rules.c, callsites.c and the reports share, in a header of their own so that
 * the files that fill them need not take anything of analyze.c (analyze.h includes it). */
#ifndef SB_CALL_INFO_H
#define SB_CALL_INFO_H

#include "model/model.h"
#include "record/classes.h"

typedef struct sb_audit_rule {
    const char *op;       /* "scalar read: .item()" */
    const char *fix;      /* the guides' sync-free alternative */
    const char *scenario; /* the syncbench scenario that prices the fix; NULL: none */
    /* what must hold, each a list of alternatives "a|b"; NULL: any */
    const char *api;    /* the API's base name (cudaStreamSynchronize), a substring */
    const char *native; /* a native frame's symbol, a substring (mangled C++ names hold the
                           identifiers): of a frame of `object`, which it needs */
    const char *object; /* the library a native frame lies in: its file name begins with it
                           ("libtorch_cuda", "xla_cuda_plugin"); alone, any frame of it */
    const char *pyfile; /* a Python frame's file, whole path components from its package on
                           ("torch/_tensor_str.py", "jax/_src/array.py"): its package named */
    const char *pyfunc; /* that frame's function, whole ("__float__"); needs pyfile */
    const char *source; /* the text of the lines that made the call (".item("): the innermost
                           frame's, and the library's frame's, else the user's line */
    const char *copy;   /* the copy's direction (HtoD, DtoH) */
    /* the file of the frame that made the call, from its installed package on, begins with it
     * ("transformers/generation/"): the library's frame, else the innermost frame. A rule with
     * `lib` names a sync of that library's own code: its op says "inside <library>", its fix
     * what in the user's call leads there */
    const char *lib;
} sb_audit_rule;

/* What made a blocking call and its fix, in the user's terms (analyze/: pysite.c, rules.c). A
 * sync made inside a library is seen at two Python lines: the user's (the site) and the
 * innermost frame, the line inside the library that made the call (`via`). */
typedef struct sb_audit_made {
    const sb_audit_pyframe *via; /* the innermost Python frame when it is not the site's
                                           frame; NULL: the site made the call itself */
    const char *via_site;        /* its "file:line in func", "" when no via */
    const char *via_source;      /* its line's text, "" when no via or unknown */
    const sb_audit_pyframe *lib; /* the innermost frame, inside the user's code, of an
                                           installed package other than torch; NULL: none */
    const char *lib_source;      /* its line's text, "" */
    const char *library;         /* that package's name ("transformers"), "" */
    const char *op;              /* what made it (the rule's, or the library's); NULL: unknown */
    const char *fix; /* the rule's fix, or the library's ("inside transformers (...): ..."); "" */
    int compile;     /* made while torch.compile compiled, autotuned or benchmarked, or by one of
                        its workers (analyze/compile_group.c): apart from the gate and the replay */
    /* analyze/frameworks.c: the framework table's row that names this sync of a library's own
     * code (op and fix are then the row's); NULL: none */
    const struct sb_fw_row *fw;
    /* a row whose module and function the frame that made the call matches, but not its line's
     * text (the library changed since the row was checked): op and fix say it is not known */
    const struct sb_fw_row *fw_changed;
    /* where the fix goes: the line of the user's code holding the row's `where` call
     * ("train.py:31"), "" when not found on the stack's files or the row names none */
    const char *fix_at;
} sb_audit_made;

/* What the analysis found of one recorded call: an->procs[i].calls[j] is
 * run->procs[i]->calls[j]'s (the small fields side by side: millions of calls, no padding
 * between). site, native, pyframe, source, rule and made are set for the calls that are not
 * SB_AUDIT_NONE only, the same for every call of one call site (callsites.c). */
typedef struct sb_audit_call_info {
    sb_audit_class cls;
    /* waiter_site.c: 1 + the index in p->wakes of the hand-off that woke the Python thread that
     * waited for this call, made on a thread without Python (its site is that thread's line:
     * sb_audit_call_py, sb_audit_call_waiter); 0: none */
    int32_t wake;
    int64_t bubble_ns;
    const char *range;  /* innermost range, "" when none */
    const char *site;   /* the Python line ("train.py:42 in step") when there is one, else the
                           native site; "?" when none */
    const char *native; /* the native site */
    const sb_audit_pyframe *pyframe;  /* the frame `site` names; NULL: none */
    const char *source;               /* that frame's source line, "" when unknown */
    const struct sb_audit_rule *rule; /* what made it; NULL: no rule knows */
    /* the line inside a library that made it, the operation, the fix: one for every call of one
     * site (callsites.c) */
    const sb_audit_made *made;
} sb_audit_call_info;

/* The Python stack ("pystack" id) call c of p is named by: its waiter's when it has one
 * (ci->wake), else its own (-1: none). */
static inline int64_t sb_audit_call_py(const sb_audit_proc *p, const sb_audit_call *c,
                                       const sb_audit_call_info *ci)
{
    return ci->wake ? p->wakes[ci->wake - 1].py : c->py;
}

/* The thread id of the Python thread that waited for the call (ci->wake), 0 when none. */
static inline int sb_audit_call_waiter(const sb_audit_proc *p, const sb_audit_call_info *ci)
{
    return ci->wake ? (int)p->wakes[ci->wake - 1].tid : 0;
}

typedef struct sb_audit_callsite_set sb_audit_callsite_set; /* callsites.c */

/* What attributing a call found, shared by every call with the same site: its process, native
 * stack, Python stack, class, API and copy direction (what attribution reads of a call). */
typedef struct sb_audit_callsite {
    const sb_audit_proc *proc;
    int64_t stack, py;
    sb_audit_class cls;
    const char *api, *copy;
    const char *native, *site, *source;
    const sb_audit_pyframe *pyframe;
    const sb_audit_rule *rule;
    sb_audit_made made;    /* the calls' `made` points here */
    sb_audit_rule fw_rule; /* frameworks.c: a framework row's rule (rule points here) */
} sb_audit_callsite;

#endif
