/* The window of GPU activity (--gpu-activity-range, --gpu-activity-steps): the instances of one
 * NVTX range between which the injection library records kernels, copies and launches, outside
 * which it records what the default mode records. Its text, NAME[@DOMAIN][:FIRST[-LAST]], is what
 * the user writes, what the launcher hands the library (SB_AUDIT_ENV_WINDOW, canonical) and what
 * the "proc" record's "window" holds; the launcher, the library and the analyzer read it with
 * this one parser. Part of the record format: no allocation, no JSON library. */
#ifndef SB_RECORD_GPU_WINDOW_H
#define SB_RECORD_GPU_WINDOW_H

#include <stddef.h>

#include "record/records.h"

#define SB_GPU_WINDOW_MAX 1000000000L /* the last instance a window may name */

typedef struct {
    char name[SB_AUDIT_RANGE_NAME_MAX + 1];
    /* the NVTX domain's name: "" with any_domain 1 (NAME alone or NAME@*: any domain, as --range
     * counts) or 0 (NAME@: the default domain only) */
    char domain[SB_AUDIT_RANGE_NAME_MAX + 1];
    int any_domain;
    long first, last; /* instances, counted from 1 in the order they began: first <= last */
} sb_gpu_window;

/* NAME[@DOMAIN][:FIRST[-LAST]]: the text after the last ':' is the bounds when it is not empty
 * and holds only digits and '-' (else it belongs to the name: "a:b"), the text after the last '@'
 * the domain ("NAME@": the default domain; "NAME@*" or no '@': any domain). No bounds: the first
 * instance only; FIRST alone: that instance only. 0, or -1 with the fault, a phrase, in why. */
int sb_gpu_window_parse(const char *spec, sb_gpu_window *w, char *why, size_t n);
/* FIRST[-LAST] alone (--gpu-activity-steps), each from 1 to SB_GPU_WINDOW_MAX, first <= last. 0,
 * or -1 with the fault in why. */
int sb_gpu_window_bounds(const char *text, long *first, long *last, char *why, size_t n);
/* The canonical text of w, which sb_gpu_window_parse reads back as w: NAME[@DOMAIN]:FIRST-LAST
 * ("NAME@" the default domain; "@*" only where the name holds '@'); its length, as snprintf's. */
int sb_gpu_window_format(const sb_gpu_window *w, char *buf, size_t n);
/* Does a range named name in domain (NULL or "": the default domain) belong to the window? */
int sb_gpu_window_matches(const sb_gpu_window *w, const char *name, const char *domain);

#endif
