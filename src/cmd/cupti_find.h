/* The CUPTI that `syncbench audit`'s injection library needs, found where the user has it. */
#ifndef SB_CMD_CUPTI_FIND_H
#define SB_CMD_CUPTI_FIND_H

/* For the injection library at lib: the libcupti.so.N it needs (read from its dynamic section),
 * found at $SYNCBENCH_CUPTI (a file: only that one), else in base/cudalib.h's folders
 * (LD_LIBRARY_PATH, the toolkit, the wheels of a Python environment), else where the loader
 * finds it by itself (lib's runpath, ld.so.cache; not with SYNCBENCH_NO_TOOLKIT=1). It is loaded
 * here, so that lib's own dlopen takes this copy, and handed on to CMD (and the calibration):
 * its folder put first in LD_LIBRARY_PATH, unless the loader finds it there first already.
 * 0; or exit 3 with one line naming where it looked, before CMD starts. A library that needs no
 * libcupti: 0, nothing done. */
int sb_cupti_prepare(const char *lib);

#endif
