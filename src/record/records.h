/* The audit's record stream: what the injection library (inject/, loaded into the
 * audited program through CUDA_INJECTION64_PATH) writes and what the analyzer reads (src/model/,
 * in `syncbench audit`). One file per audited process, DIR/proc-<pid>.jsonl, one JSON
 * object per line. Times are integers in nanoseconds of CUPTI's clock (cuptiGetTimestamp);
 * "proc" gives the offset to CLOCK_MONOTONIC so processes share one time axis.
 *
 *   {"t":"proc","v":1,"pid":P,"ppid":Q,"rank":R,"local_rank":L,"cmd":"python3 train.py",
 *    "clock_ns":C,"mono_ns":M,"mode":"count"|"trace","kernels":0|1,"launches":0|1,"waits":0|1,
 *    "kinds":["kernels",...],"off":["events",...],"buffer_mb":8,"flush_ms":500,"symsize":1}
 *        first line. rank/local_rank: RANK/LOCAL_RANK, -1 when unset. mono_ns - clock_ns is
 *        the offset from CUPTI's clock to CLOCK_MONOTONIC. kernels: 1 when every kernel is
 *        recorded (the GPU's busy timeline is complete); absent = 1. launches: 1 when the
 *        launch calls, event records and synchronizations are recorded too ("api" records of
 *        the launch functions, "event", "sync": what the replay needs); absent = 0. waits: 1
 *        when the hand-offs between threads are recorded ("wake", below); absent = 0.
 *        symsize: 1 when a "stack" frame's symbol covers its address (below); absent: an
 *        older writer, whose names the analyzer checks against the object (dropped where it
 *        cannot). kinds: the kinds of GPU activity recorded, of "kernels", "memcpy", "memset",
 *        "rt-launches", "drv-launches", "events", "syncs", "streams", "waits" (["waits"] alone
 *        without GPU activity); off: those of the mode that a developer's knob turned off
 *        (SYNCBENCH_ACTIVITY_OFF, docs/dev/testing.md), absent when none: the GPU figures are
 *        then incomplete; buffer_mb, flush_ms (and "zeroed":1): CUPTI's activity buffers and
 *        flush period, with GPU activity. All absent: an older writer.
 *   {"t":"call","api":"cudaStreamSynchronize","dom":"rt"|"drv","tid":T,"ctx":X,"corr":K,
 *    "start":S,"end":E,"oh":O,"ranges":[[ID,"name"],...],"stack":N,"copy":"DtoH","host":"pageable"}
 *        one host API call that can block (the list is in inject/watch.c), timed on the
 *        calling thread. oh: the ns the library spent around it (stacks, lookups), outside
 *        [start, end]: the replay takes it out of the host's timeline; absent = 0. ranges: the
 * thread's open NVTX push/pop ranges, outermost first (ID: the range instance, see "range"); stack:
 * a "stack" id, -1 when none; copy: for memcpy calls, the direction the call's parameters give
 * ("HtoD", "DtoH", "DtoD", "HtoH", "default"), absent otherwise; host: for copies whose parameters
 * name host memory, what the driver says it is ("pageable", "pinned", "device"), asked after the
 * call, absent otherwise. ptr: the device memory cudaMalloc/cuMemAlloc returned or
 * cudaFree/cuMemFree freed, absent otherwise (the replay pairs them). ctx: CUPTI context id, 0
 * when none.
 *   {"t":"range","tid":T,"id":ID,"name":"train_step","start":S,"end":E,"depth":D}
 *        an NVTX push/pop range instance, written when it is popped (end = -1: still open
 *        when the process ended). depth 0 = outermost. Optional: "dom":"NCCL", the NVTX
 *        domain's name (absent: the default domain); "kind":"startend", an nvtxRangeStart/End
 *        range (process-wide: tid is the thread that started it, it may end on another, and
 *        it counts the blocking calls of every thread inside it). Names are UTF-8: ASCII and
 *        UTF-8 messages as given, wide ones converted, registered strings resolved.
 *   {"t":"pystack","id":N,"frames":[["/abs/train.py","train_step",42],...]}
 *        a Python stack (file, function, line), innermost first, written once before the
 *        first call that uses it; a "call" names it with "py":N.
 *   {"t":"stack","id":N,"frames":[["/usr/lib/libtorch_cuda.so","symbol",OFF,ABS],...]}
 *        a native call stack, innermost first, written once before the first call that uses
 *        it. OFF: address minus the object's load base; ABS: the absolute address (for
 *        executables that are not position-independent); symbol: dladdr's, only when its ELF
 *        symbol's size is known and covers the address (a stripped library's nearest exported
 *        symbol is often another function), else "" (the analyzer names it from the object's
 *        symbol table where a function covers it, else library+0xOFF).
 *   {"t":"kernel","dev":D,"ctx":X,"stream":S,"corr":K,"start":S,"end":E,"name":"..."}
 *        name only in trace mode.
 *   {"t":"copy","dev":D,"ctx":X,"stream":S,"corr":K,"rcorr":R,"start":S,"end":E,
 *    "bytes":B,"kind":"HtoD"|"DtoH"|"DtoD"|"HtoH"|"PtoP"|"other",
 *    "src":"pageable"|"pinned"|"device"|"managed"|"other","dst":...}
 *        corr: the driver correlation id, rcorr: the runtime's (0 when launched by the
 *        driver API). A runtime "call" matches a copy by rcorr, a driver "call" by corr.
 *   {"t":"memset","dev":D,"ctx":X,"stream":S,"corr":K,"start":S,"end":E,"bytes":B}
 *   {"t":"api","api":"cudaLaunchKernel","dom":"rt"|"drv","tid":T,"corr":K,"start":S,"end":E}
 *        a runtime or driver API call (CUPTI activity records): every one in trace mode, the
 *        launch functions (inject/launches.c) with "launches":1. The GPU work it launched has
 *        the same corr.
 *   {"t":"event","ctx":X,"stream":S,"corr":K,"sync_id":Y}
 *        a cudaEventRecord on stream S (corr: its API call); sync_id names this record of the
 *        event, which a "sync" of type event or wait refers to.
 *   {"t":"sync","type":"event"|"wait"|"stream"|"context","ctx":X,"stream":S,"corr":K,
 *    "sync_id":Y,"start":S,"end":E}
 *        a synchronization CUPTI saw: cudaEventSynchronize (event), cudaStreamWaitEvent
 *        (wait: stream S waits for the event record Y), cudaStreamSynchronize (stream),
 *        cudaDeviceSynchronize (context). corr: its API call; stream and sync_id -1 when they
 *        do not apply.
 *   {"t":"gstream","ctx":X,"stream":S,"flag":"null"|"blocking"|"non-blocking"}
 *        a stream CUPTI saw created: the legacy default stream (null), a stream that orders
 *        with it (blocking: cudaStreamDefault) or one that does not (non-blocking).
 *   {"t":"pause","tid":T,"start":S,"end":E}
 *        the recording was switched off from S to E by thread T (the calibration, recording
 *        turns: syncbench_calibration_recording): what the process did then is not recorded;
 *        one still open at the exit ends there. The replay holds every thread of the process
 *        for the stretch, begun once the GPU has run the work recorded before it as far as it
 *        had at S.
 *   {"t":"wake","tid":W,"start":S,"end":E,"by":T,"at":A,"obj":"cond"|"sem"|"futex","py":P}
 *        a hand-off between threads: thread W slept in a wait from S to E (a condition
 *        variable: pthread_cond_wait/timedwait/clockwait; a semaphore: sem_wait/timedwait/
 *        clockwait that found it taken; a futex: FUTEX_WAIT/_WAIT_BITSET through syscall()),
 *        and the signal, broadcast, post or futex wake that ended the wait was thread T's, at A
 *        (S <= A <= E); P: W's Python stack when it woke (a "pystack" id; absent: none).
 *        Written by libsyncbench_waits.so (waits/), which the launcher preloads (not with
 *        --no-python alone). Not recorded: waits that timed out or were woken by no recorded
 *        signal, and the Python interpreter's own condition variable (the GIL: mutual
 *        exclusion, not a hand-off). The replay moves W's work after the wait with T's
 *        (docs/replay.md); the analyzer names a call of a thread without Python at the line of
 *        the Python thread it woke.
 *   {"t":"unwatched","why":"..."}
 *        CUPTI refused the subscription (another subscriber holds it) or no callback could be
 *        enabled: no blocking call of this process is recorded; the gate fails on it.
 *   {"t":"warn","msg":"..."}
 *        something else the library could not record (GPU activity, NVTX, Python frames).
 *   {"t":"end","clock_ns":C,"mono_ns":M,"why":"exit"|"signal N","dropped":N,"wakes_lost":L}
 *        last line; absent when the process was killed with SIGKILL. dropped: CUPTI
 *        activity records lost to full buffers; wakes_lost: "wake" records lost to a full
 *        buffer (absent = 0).
 *
 * Unknown "t" values and unknown fields are ignored by the reader (newer writers). */
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
