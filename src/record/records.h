/* The audit's record stream: what the injection library (inject/, loaded into the
 * audited program through CUDA_INJECTION64_PATH) writes and what the analyzer reads (src/model/,
 * in `syncbench audit`). One file per audited process, DIR/proc-<pid>.jsonl, one JSON
 * object per line, the first "proc", the last "end". Times are integers in nanoseconds of
 * CUPTI's clock (cuptiGetTimestamp); "proc" gives the offset to CLOCK_MONOTONIC so processes
 * share one time axis.
 *
 * Every kind of record ("t") and every field it may hold, with its JSON type and whether the
 * reader requires it, is in ONE table: sb_rec_defs of record/schema.c. The analyzer dispatches
 * on it (model/load.c), the writers' lines are tested against it, and docs/record-format.md
 * holds it as `syncbench __record-schema` prints it, with what each kind and field means at
 * length. A new field or kind goes into that table first.
 *
 * Unknown "t" values and unknown fields are ignored by the reader (newer writers). This header
 * keeps the format's other constants: its version, the calibration file, the launcher's
 * environment and status socket. */
#ifndef SB_AUDIT_RECORDS_H
#define SB_AUDIT_RECORDS_H

#define SB_AUDIT_FORMAT_VERSION 1
/* In the records folder of a --gpu-activity run, calibration.json: "X_plain_ns" and
 * "X_recorded_ns" for X in launch (a kernel launch), call (a watched call: an idle stream's
 * sync), trip (a launch, then a sync that waits for it), alloc (a cudaMalloc of 1 MiB and its
 * cudaFree) and copy (a launch, a 4-byte readback into pinned memory, a sync): the host time of
 * each without and with the recording, timed in one process in turns; and "call_oh_ns",
 * "alloc_oh_ns" (the cudaMalloc's and the cudaFree's together), "copy_oh_ns" (the readback's
 * cudaMemcpyAsync): the median time the library timed itself around those calls
 * (cmd/audit_calibrate.c). Only the pairs and the "oh"s measured are written; a file from an
 * earlier syncbench may hold only the launch pair: audit/calibration.c uses the figures whose
 * inputs are all there. */
#define SB_AUDIT_CALIBRATION_FILE "calibration.json"
/* Its keys (audit/calibration.c names them): the five pairs in `syncbench __launch-cost`'s
 * order, then the three "oh"s. */
enum {
    SB_CAL_LAUNCH_PLAIN,
    SB_CAL_LAUNCH_RECORDED,
    SB_CAL_CALL_PLAIN,
    SB_CAL_CALL_RECORDED,
    SB_CAL_TRIP_PLAIN,
    SB_CAL_TRIP_RECORDED,
    SB_CAL_ALLOC_PLAIN,
    SB_CAL_ALLOC_RECORDED,
    SB_CAL_COPY_PLAIN,
    SB_CAL_COPY_RECORDED,
    SB_CAL_CALL_OH,
    SB_CAL_ALLOC_OH,
    SB_CAL_COPY_OH,
    SB_CAL_NKEYS,
    SB_CAL_NPAIRS = SB_CAL_CALL_OH /* the timed figures: off and on for each of five */
};
/* NVTX range names are recorded up to this many bytes. */
#define SB_AUDIT_RANGE_NAME_MAX 511

/* Environment the launcher gives the injection library. */
#define SB_AUDIT_ENV_DIR "SYNCBENCH_AUDIT_DIR"     /* where proc-<pid>.jsonl goes */
#define SB_AUDIT_ENV_MODE "SYNCBENCH_AUDIT_MODE"   /* "count" (default) or "trace" */
#define SB_AUDIT_ENV_DEPTH "SYNCBENCH_AUDIT_DEPTH" /* native frames kept per stack (16) */
/* GPU activity: "0" none (default), "1" copies and memsets, "2" kernels too, "3" the launches,
 * event records and synchronizations too (--gpu-activity) */
#define SB_AUDIT_ENV_GPU "SYNCBENCH_AUDIT_GPU"
/* The window of GPU activity (--gpu-activity-range, --gpu-activity-steps; record/gpu_window.h):
 * NAME[@DOMAIN]:FIRST-LAST; unset: the level's activity over the whole run */
#define SB_AUDIT_ENV_WINDOW "SYNCBENCH_AUDIT_WINDOW"
/* Python frames: "1" (default) records the Python stack of each blocking call, "0" none */
#define SB_AUDIT_ENV_PYTHON "SYNCBENCH_AUDIT_PYTHON"
/* The launcher's status socket: an abstract-namespace AF_UNIX datagram socket (this name with
 * a leading NUL byte). Each CUDA process tells it, without touching the disk, that it started
 * and whether its record file could be created, and how many lines the disk refused:
 *   "start PID OK ERRNO"    at InitializeInjection; OK 1 when proc-PID.jsonl was created
 *   "end PID LOST"          after the end record was written (LOST: lines not written)
 * A process the launcher heard start whose records are missing, cut short or partly lost
 * makes the report say so and the gate fail: a gate never passes on records it lost. */
#define SB_AUDIT_ENV_SOCK "SYNCBENCH_AUDIT_SOCK"
#define SB_AUDIT_STATUS_MAX 96 /* bytes in one status datagram */

#endif
