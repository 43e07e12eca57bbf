/* The audit library's recording switch, for a syncbench process that `syncbench audit` runs
 * with --gpu-activity: syncbench_calibration_recording (inject/api.h) turns the recording
 * of this process off and on. Used by the calibration (cmd/launch_cost.c) and by the measurement
 * engine's recording turns (engine/measure.c), which time the same work with it off and on. */
#ifndef SB_BASE_RECORDING_SWITCH_H
#define SB_BASE_RECORDING_SWITCH_H

typedef int (*sb_recording_fn)(int on);

/* The switch of the library this process was given as CUDA_INJECTION64_PATH, once CUDA has
 * loaded it; NULL when there is none (not under the audit, or CUDA not started yet). */
sb_recording_fn sb_recording_switch(void);

#endif
