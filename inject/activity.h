/* CUPTI activity records (GPU-side timestamps): kernels, copies and memsets in every mode, so
 * the analyzer knows when the GPU was busy and whose copy touched pageable memory; every runtime
 * and driver API call in trace mode. Buffers are handed to CUPTI, filled on the GPU's time, and
 * turned into records here when CUPTI returns them (its own thread, or a flush). */
#ifndef SBA_ACTIVITY_H
#define SBA_ACTIVITY_H

#include <stddef.h>
#include <stdint.h>

/* The kinds of record GPU activity is made of, one bit each, named in the "proc" record's
 * "kinds" and "off" (records.h) and in SYNCBENCH_ACTIVITY_OFF. */
enum {
    SBA_KIND_KERNELS = 1u << 0,      /* every kernel (a cost per launch) */
    SBA_KIND_MEMCPY = 1u << 1,       /* copies */
    SBA_KIND_MEMSET = 1u << 2,       /* memsets */
    SBA_KIND_RT_LAUNCHES = 1u << 3,  /* the runtime's launch calls (trace: every runtime call) */
    SBA_KIND_DRV_LAUNCHES = 1u << 4, /* the driver's launch calls (trace: every driver call) */
    SBA_KIND_EVENTS = 1u << 5,       /* event records */
    SBA_KIND_SYNCS = 1u << 6,        /* synchronizations */
    SBA_KIND_STREAMS = 1u << 7,      /* the streams created */
    SBA_KIND_WAITS = 1u << 8,        /* the hand-offs between threads (handoffs.c) */
    SBA_NKINDS = 9
};

/* What GPU activity a process records: the kinds of its level, less those a developer turned
 * off, with CUPTI's buffer size and flush period. The developer knobs (docs/dev/testing.md),
 * for measuring what each part costs: SYNCBENCH_ACTIVITY_OFF (kinds by name, comma-separated,
 * or "all"), SYNCBENCH_ACTIVITY_BUFFER_MB (1 to 1024, default 8) and SYNCBENCH_ACTIVITY_FLUSH_MS
 * (0, none, to 60000; default 500) and SYNCBENCH_ACTIVITY_ZEROED (1: buffers handed to CUPTI
 * zeroed; default 0). A bad value is a "warn" record, never a failure. */
#define SBA_WARN_MAX 6
typedef struct {
    unsigned kinds;      /* recorded */
    unsigned off;        /* the level's kinds SYNCBENCH_ACTIVITY_OFF turned off */
    size_t buffer_bytes; /* each buffer handed to CUPTI */
    unsigned flush_ms;   /* CUPTI's flush period; 0: none (buffers go out when full) */
    int zeroed;          /* buffers handed over zeroed (calloc), so that CUPTI does not zero them
                            on the program's thread (CUPTI_ACTIVITY_ATTR_ZEROED_OUT_...) */
    int trace;           /* kernel names and every API call */
    int nwarn;
    char warn[SBA_WARN_MAX][320]; /* the bad values, for "warn" records (sba_activity_warn) */
} sba_activity_plan;

/* The plan of GPU activity level gpu (SB_AUDIT_ENV_GPU: 0 none, 1 copies and memsets, 2 kernels
 * too, 3 the launches, event records, synchronizations and streams too) or of trace mode (level
 * 3, every API call), the hand-offs in every mode, with the knobs read from the environment (the
 * buffers' only with GPU activity). */
void sba_activity_plan_make(sba_activity_plan *p, int gpu, int trace);
/* The "proc" record's fields of the plan: ,"kinds":[...] (what is recorded), ,"off":[...] when
 * a knob turned some off, and with GPU activity ,"buffer_mb":N,"flush_ms":N (,"zeroed":1 when
 * so). */
void sba_activity_proc_fields(const sba_activity_plan *p, char *buf, size_t n);
/* A "warn" record for each bad value of a knob the plan read. */
void sba_activity_warn(const sba_activity_plan *p);
/* Starts recording the plan's kinds of GPU activity (not the hand-offs: handoffs.c). 0, or -1
 * with a "warn" record written. */
int sba_activity_start(const sba_activity_plan *p);
/* Stops (1) or restarts (0) every kind of record sba_activity_start enabled: the calibration
 * times the same calls recorded and not, in one process (api.c). */
void sba_activity_pause(int paused);
/* The window of GPU activity (window.c) opened (1) or shut (0): every kind but the streams is
 * recorded only while it is open (and the recording is not paused). Shut before
 * sba_activity_start, the kinds it enables go off at once, to come on when it opens; the
 * launches' API records go off only once CUDA has a context (sba_activity_context_made): shut
 * again at each instance before the window, to switch them then. */
void sba_activity_window(int open);
/* CUDA made a context (inject.c's resource callback; takes no lock): from the next switch on,
 * the launches go off by function outside the GPU window. */
void sba_activity_context_made(void);
/* The window's bounds on CUPTI's clock (window.c): a launch's API record that starts outside
 * [from, to] is dropped (the launches are recorded until a context exists, activity.c says why);
 * not opened yet: UINT64_MAX, UINT64_MAX; open: its start, UINT64_MAX. */
void sba_activity_window_bounds(uint64_t from, uint64_t to);
/* Delivers every buffer CUPTI holds (completed records only unless forced). */
void sba_activity_flush(int forced);
/* Records CUPTI dropped (full buffers) so far. */
uint64_t sba_activity_dropped(void);

#endif
