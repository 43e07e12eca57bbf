/* Test hooks: SYNCBENCH_FAULT=name[,name...] makes a scenario damage its own result just
 * before it is checked, to prove that the check catches it (tests/gpu). */
#ifndef SB_FAULT_H
#define SB_FAULT_H

/* Whether the fault `name` is asked for. */
int sb_fault(const char *name);

#endif
