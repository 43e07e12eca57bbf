/* The window of GPU activity (--gpu-activity-range, --gpu-activity-steps): the launcher names an
 * NVTX range and its instances (SB_AUDIT_ENV_WINDOW, record/gpu_window.h); the GPU's activity
 * (activity.c: kernels, copies, memsets, launches, event records, synchronizations) is switched
 * on when the first of them begins and off when the last ends, so that outside it the program
 * runs at the default mode's cost. Its bounds go into the "gwindow" record (records.h): when it
 * closes, or at the exit. Instances are counted in the order they begin, over every thread. */
#ifndef SBA_WINDOW_H
#define SBA_WINDOW_H

#include <stddef.h>

/* Reads the window from the environment, when the GPU's activity is recorded at all (gpu
 * nonzero); with one, shuts the activity until it opens. 1 when there is one, 0 when not (a
 * value the parser refuses: the whole run is recorded, and sba_window_warn says so). Call once,
 * before the NVTX callbacks and sba_activity_start. */
int sba_window_init(int gpu);
/* The "warn" record of a value sba_window_init refused (after the "proc" record). */
void sba_window_warn(void);
/* The "proc" record's field: ,"window":"NAME[@DOMAIN]:FIRST-LAST"; "" with no window. */
void sba_window_proc_field(char *buf, size_t n);
/* Is a range so named the window's (any domain), before the window closed? The cheap test. */
int sba_window_named(const char *name);
/* Does a range so named, in the domain so named (NULL: the default domain), count towards the
 * window? 0 once it has closed. */
int sba_window_wants(const char *name, const char *domain);
/* A range it wants began: counted; the window opens at its first instance. 1 when this one is
 * its last instance (its end closes the window: sba_window_leave). */
int sba_window_enter(void);
/* The last instance ended: the activity goes off and the "gwindow" record is written. */
void sba_window_leave(void);
/* At the exit: the "gwindow" record of a window still open (end -1) or never opened (start
 * -1). */
void sba_window_finish(void);
/* From a fatal signal's handler: that record of a window still open, in one write(2). */
void sba_window_fatal(void);

#endif
