/* The audit subcommand: `syncbench audit [options] -- CMD [ARGS...]` (cmd/audit.c). */
#ifndef SB_CMD_AUDIT_H
#define SB_CMD_AUDIT_H

int sb_cmd_audit(int argc, char **argv);

#endif
