/* The record format's one table: every kind of line of proc-PID.jsonl and every field it may
 * hold. What a field means at length, and the rules between fields, is in
 * docs/record-format.md; what a reader requires is here, and only here. */
#include "record/schema.h"

#include <string.h>

#define REQ 1
#define OPT 0
#define F(name, type, req, meaning)                                                                \
    {                                                                                              \
        name, SB_FT_##type, req, meaning                                                           \
    }
#define KIND(k, t, meaning, fields) [k] = {k, t, meaning, fields, sizeof fields / sizeof fields[0]}

static const sb_rec_field proc_fields[] = {
    F("v", INT, OPT, "the format's version (1)"),
    F("pid", INT, REQ, "the process id"),
    F("ppid", INT, OPT, "its parent's id"),
    F("rank", INT, OPT, "RANK from the environment, -1 when unset"),
    F("local_rank", INT, OPT, "LOCAL_RANK from the environment, -1 when unset"),
    F("cmd", STR, OPT, "the process's command line"),
    F("clock_ns", INT, OPT, "now on CUPTI's clock"),
    F("mono_ns", INT, OPT, "the same moment on CLOCK_MONOTONIC"),
    F("mode", STR, OPT, "\"count\" (default) or \"trace\""),
    F("kernels", INT, OPT, "1: every kernel recorded; absent: 1"),
    F("launches", INT, OPT, "1: launch calls, event records and syncs recorded; absent: 0"),
    F("waits", INT, OPT, "1: hand-offs between threads recorded; absent: 0"),
    F("kinds", ARR, OPT, "the kinds of GPU activity recorded (names)"),
    F("off", ARR, OPT, "the kinds a developer's knob turned off (names)"),
    F("buffer_mb", INT, OPT, "the size of CUPTI's activity buffers"),
    F("flush_ms", INT, OPT, "CUPTI's flush period (0: none)"),
    F("zeroed", INT, OPT, "1: the buffers are handed over zeroed"),
    F("symsize", INT, OPT, "1: a stack frame's symbol covers its address"),
    F("window", STR, OPT, "the window of GPU activity, NAME[@DOMAIN]:FIRST-LAST; absent: none"),
    F("pyread", STR, OPT, "how Python stacks are read: offsets, table, writer or none"),
};

static const sb_rec_field call_fields[] = {
    F("api", STR, REQ, "the function's name"),
    F("dom", STR, OPT, "\"rt\" (runtime API) or \"drv\" (driver API)"),
    F("tid", INT, OPT, "the calling thread's id"),
    F("ctx", INT, OPT, "CUPTI's context id (0: none)"),
    F("corr", INT, OPT, "CUPTI's correlation id"),
    F("start", INT, REQ, "when the call began"),
    F("end", INT, REQ, "when it returned (not before start)"),
    F("oh", INT, OPT, "ns the library spent around it; absent: 0"),
    F("ranges", ARR, OPT, "the thread's open NVTX ranges, [ID, \"name\"], outermost first"),
    F("stack", INT, OPT, "a stack record's id, -1: none"),
    F("py", INT, OPT, "a pystack record's id, -1 or absent: none"),
    F("copy", STR, OPT, "memcpy calls: the direction the parameters give"),
    F("host", STR, OPT, "copies of host memory: pageable, pinned or device"),
    F("ptr", INT, OPT, "the device memory allocated or freed"),
};

static const sb_rec_field range_fields[] = {
    F("tid", INT, OPT, "the thread that pushed (or started) it"),
    F("id", INT, REQ, "the range instance's id"),
    F("name", STR, REQ, "its message, UTF-8"),
    F("start", INT, REQ, "when it was pushed"),
    F("end", INT, OPT, "when it was popped, -1: still open at the exit"),
    F("depth", INT, OPT, "0: the outermost"),
    F("dom", STR, OPT, "the NVTX domain's name; absent: the default domain"),
    F("kind", STR, OPT, "\"startend\": an nvtxRangeStart/End range"),
};

static const sb_rec_field stack_fields[] = {
    F("id", INT, REQ, "the stack's id"),
    F("frames", ARR, REQ, "[object, symbol, OFF, ABS], innermost first"),
};

static const sb_rec_field pystack_fields[] = {
    F("id", INT, REQ, "the stack's id"),
    F("frames", ARR, REQ, "[file, function, line], innermost first"),
};

/* kernel, copy and memset: GPU work */
#define GPU_WORK                                                                                   \
    F("dev", INT, OPT, "the device ordinal"), F("ctx", INT, OPT, "CUPTI's context id"),            \
        F("stream", INT, OPT, "CUPTI's stream id"),                                                \
        F("corr", INT, OPT, "the correlation id of the call that launched it"),                    \
        F("start", INT, REQ, "when it began on the GPU"),                                          \
        F("end", INT, REQ, "when it ended (not before start)")

static const sb_rec_field kernel_fields[] = {
    GPU_WORK,
    F("name", STR, OPT, "the kernel's name (trace mode only)"),
};

static const sb_rec_field copy_fields[] = {
    GPU_WORK,
    F("rcorr", INT, OPT, "the runtime's correlation id (0: a driver call)"),
    F("bytes", INT, OPT, "bytes copied"),
    F("kind", STR, OPT, "HtoD, DtoH, DtoD, HtoH, PtoP or other"),
    F("src", STR, OPT, "the source memory: pageable, pinned, device, managed or other"),
    F("dst", STR, OPT, "the destination memory, as src"),
};

static const sb_rec_field memset_fields[] = {
    GPU_WORK,
    F("bytes", INT, OPT, "bytes set"),
};

static const sb_rec_field api_fields[] = {
    F("api", STR, REQ, "the function's name"),
    F("dom", STR, OPT, "\"rt\" or \"drv\""),
    F("tid", INT, OPT, "the calling thread's id"),
    F("corr", INT, OPT, "the correlation id its GPU work carries"),
    F("start", INT, REQ, "when the call began"),
    F("end", INT, REQ, "when it returned (not before start)"),
};

static const sb_rec_field event_fields[] = {
    F("ctx", INT, OPT, "CUPTI's context id"),
    F("stream", INT, REQ, "the stream the event was recorded on"),
    F("corr", INT, OPT, "its cudaEventRecord's correlation id"),
    F("sync_id", INT, REQ, "this record of the event, which a sync refers to"),
};

static const sb_rec_field sync_fields[] = {
    F("type", STR, REQ, "event, wait, stream or context"),
    F("ctx", INT, OPT, "CUPTI's context id"),
    F("stream", INT, OPT, "the stream, -1: does not apply"),
    F("corr", INT, REQ, "its API call's correlation id"),
    F("sync_id", INT, OPT, "the event record waited for, -1: does not apply"),
    F("start", INT, OPT, "when it began"),
    F("end", INT, OPT, "when it ended"),
};

static const sb_rec_field gstream_fields[] = {
    F("ctx", INT, OPT, "CUPTI's context id"),
    F("stream", INT, REQ, "CUPTI's stream id"),
    F("flag", STR, REQ, "null, blocking or non-blocking"),
};

static const sb_rec_field pause_fields[] = {
    F("tid", INT, REQ, "the thread that switched the recording off"),
    F("start", INT, REQ, "when it was switched off"),
    F("end", INT, REQ, "when it was switched on again"),
};

static const sb_rec_field wake_fields[] = {
    F("tid", INT, REQ, "the thread that waited"),
    F("start", INT, REQ, "when its wait began"),
    F("end", INT, REQ, "when it ended"),
    F("by", INT, REQ, "the thread whose signal ended it"),
    F("at", INT, REQ, "when that signal came (start <= at <= end)"),
    F("obj", STR, OPT, "cond, sem or futex"),
    F("py", INT, OPT, "a pystack record's id: the waiter's Python stack; absent: none"),
};

static const sb_rec_field gwindow_fields[] = {
    F("range", STR, REQ, "the range whose instances bound the window"),
    F("dom", STR, OPT, "its NVTX domain's name; absent: any domain (\"\": the default)"),
    F("first", INT, REQ, "the instance that opened it (counted from 1)"),
    F("last", INT, REQ, "the instance that closes it"),
    F("start", INT, REQ, "when GPU activity was switched on, -1: the window never opened"),
    F("end", INT, REQ, "when it was switched off, -1: still on at the exit"),
    F("tid", INT, OPT, "the thread that opened it"),
};

static const sb_rec_field unwatched_fields[] = {
    F("why", STR, OPT, "why nothing of the process could be recorded"),
};

static const sb_rec_field warn_fields[] = {
    F("msg", STR, OPT, "what could not be recorded, and why"),
};

static const sb_rec_field end_fields[] = {
    F("clock_ns", INT, OPT, "now on CUPTI's clock"),
    F("mono_ns", INT, OPT, "the same moment on CLOCK_MONOTONIC"),
    F("why", STR, OPT, "\"exit\" or \"signal N\""),
    F("dropped", INT, OPT, "GPU activity records lost"),
    F("wakes_lost", INT, OPT, "wake records lost; absent: 0"),
};

const sb_rec_def sb_rec_defs[SB_REC_NKINDS] = {
    KIND(SB_REC_PROC, "proc", "the process (first line)", proc_fields),
    KIND(SB_REC_CALL, "call", "a host API call that can block", call_fields),
    KIND(SB_REC_RANGE, "range", "an NVTX range instance", range_fields),
    KIND(SB_REC_PYSTACK, "pystack", "a Python stack", pystack_fields),
    KIND(SB_REC_STACK, "stack", "a native call stack", stack_fields),
    KIND(SB_REC_KERNEL, "kernel", "a kernel on the GPU", kernel_fields),
    KIND(SB_REC_COPY, "copy", "a copy on the GPU", copy_fields),
    KIND(SB_REC_MEMSET, "memset", "a memset on the GPU", memset_fields),
    KIND(SB_REC_API, "api", "a runtime or driver API call", api_fields),
    KIND(SB_REC_EVENT, "event", "an event record", event_fields),
    KIND(SB_REC_SYNC, "sync", "a synchronization CUPTI saw", sync_fields),
    KIND(SB_REC_GSTREAM, "gstream", "a stream created", gstream_fields),
    KIND(SB_REC_PAUSE, "pause", "a stretch not recorded", pause_fields),
    KIND(SB_REC_WAKE, "wake", "a hand-off between threads", wake_fields),
    KIND(SB_REC_GWINDOW, "gwindow", "the window of GPU activity", gwindow_fields),
    KIND(SB_REC_UNWATCHED, "unwatched", "nothing of this process was recorded", unwatched_fields),
    KIND(SB_REC_WARN, "warn", "something not recorded", warn_fields),
    KIND(SB_REC_END, "end", "the process ended (last line)", end_fields),
};

const sb_rec_def *sb_rec_find(const char *t)
{
    for (size_t i = 0; t && i < SB_REC_NKINDS; i++)
        if (!strcmp(sb_rec_defs[i].t, t))
            return &sb_rec_defs[i];
    return NULL;
}

const sb_rec_field *sb_rec_field_find(const sb_rec_def *def, const char *name)
{
    for (size_t i = 0; i < def->nfields; i++)
        if (!strcmp(def->fields[i].name, name))
            return &def->fields[i];
    return NULL;
}

const char *sb_rec_ftype_name(sb_rec_ftype type)
{
    return type == SB_FT_INT ? "integer" : type == SB_FT_STR ? "string" : "array";
}
