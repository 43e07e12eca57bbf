/* syncbench-floor: each primitive the scenarios time, in the simplest loop ("plain") and in the
 * scenario's own loop ("as the scenario"), with nothing of the harness: the CUDA runtime, the
 * kernels of kernels/ and clock_gettime. make validate runs it beside the scenarios
 * (tests/validate/floor_checks.py; docs/scenarios.md, "The floor"). What the command line
 * (floor.c) and the loops (floor_loops.c) share. */
#ifndef SB_FLOOR_H
#define SB_FLOOR_H

#include <stddef.h>

#include <cuda_runtime.h>

#define FLOOR_PROG "syncbench-floor"
#define FLOOR_MAX_METRICS 2

/* exit codes, as syncbench's (docs/exit-codes.md) */
enum { FLOOR_EXIT_FAIL = 1, FLOOR_EXIT_USAGE = 2, FLOOR_EXIT_NO_DEVICE = 3 };

enum { FLOOR_PLAIN, FLOOR_AS_SCENARIO };

typedef struct floor_gpu floor_gpu;

/* One repetition of a loop in its mode: `iters` iterations, out[k] what it records of metric k.
 * A plain loop's repetition is one iteration, timed alone; a loop as the scenario records what
 * the scenario records of a repetition (a mean over its iterations). 0, or an exit code after
 * one line on stderr. */
typedef int (*floor_rep_fn)(floor_gpu *g, int mode, int iters, double *out);

typedef struct floor_loop {
    const char *name; /* plain: the row's name ("launch"); else "scenario/variant" */
    int way;          /* FLOOR_PLAIN or FLOOR_AS_SCENARIO */
    /* as the scenario: its metrics, each a row "scenario/variant/metric"; plain: one row, the
     * loop's name ({NULL}) */
    const char *metrics[FLOOR_MAX_METRICS];
    const char *unit; /* "us" or "GB/s" (higher is better) */
    int iters;        /* iterations a repetition: the scenario's (the suite's iters); plain: 1 */
    int reps;         /* measured repetitions */
    floor_rep_fn rep;
    int mode;     /* what the loop does, in its function's terms */
    int ref_mode; /* >= 0: repetitions alternate with rep(ref_mode)'s, which are dropped, as the
                     engine pairs a variant with its reference; -1: none */
    const char *definition;
} floor_loop;

/* Every loop, terminated by a NULL name. */
extern const floor_loop floor_loops[];

/* The loop's k-th row name into buf: "launch", "readback/idle-pinned/readback_us". */
const char *floor_row_name(const floor_loop *l, int k, char *buf, size_t n);
int floor_row_count(const floor_loop *l);

/* CLOCK_MONOTONIC in microseconds. */
double floor_now_us(void);

/* Opens device `device` (checked against the GPUs there), creates its context and everything
 * the loops use. 0, or an exit code after one line on stderr. */
int floor_gpu_open(floor_gpu **out, int device, char *gpu_name, size_t n);
/* After the loops: 0 when every value read back, mark and counter held, else FLOOR_EXIT_FAIL
 * after one line on stderr. */
int floor_gpu_check(floor_gpu *g);
void floor_gpu_close(floor_gpu *g);

/* One line on stderr naming the call and where it is; returns FLOOR_EXIT_FAIL. */
int floor_cuda_failed(const char *call, cudaError_t e, const char *file, int line);

#define FLOOR_CK(call)                                                                             \
    do {                                                                                           \
        cudaError_t floor_err_ = (call);                                                           \
        if (floor_err_ != cudaSuccess)                                                             \
            return floor_cuda_failed(#call, floor_err_, __FILE__, __LINE__);                       \
    } while (0)

#endif
