/* What recording adds to the host's timeline, measured before a --gpu-activity run: the hidden
 * `syncbench __launch-cost` run once under the audit's library (its records apart), which times
 * a kernel launch and a watched call with the recording off and on in turns (cmd/launch_cost.h).
 * The figures and the median time the library itself timed around those calls ("oh") go to
 * DIR/calibration.json (records.h); the replay takes out, per launch, what recording added to
 * it, and per watched call what it added beside its own "oh" (replay/replay.h). About 1 s. */
#ifndef SB_CMD_AUDIT_CALIBRATE_H
#define SB_CMD_AUDIT_CALIBRATE_H

/* Call with the audit's environment set. A failure leaves no file and warns on stderr: the
 * replay then takes nothing out beside each call's own "oh". */
void sb_audit_calibrate(const char *dir);

#endif
