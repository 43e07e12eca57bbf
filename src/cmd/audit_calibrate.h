/* What recording the launches adds to each one, measured before a --gpu-activity run: the
 * hidden `syncbench __launch-cost`, five times plain and five times under the audit's library
 * (its records apart), in turns; the medians go to DIR/calibration.json, and the replay takes
 * the difference out before each recorded kernel launch (audit/replay.h). About 3 s. */
#ifndef SB_CMD_AUDIT_CALIBRATE_H
#define SB_CMD_AUDIT_CALIBRATE_H

/* Call with the audit's environment set. A failure leaves no file and warns on stderr: the
 * replay then takes nothing out per launch. */
void sb_audit_calibrate(const char *dir);

#endif
