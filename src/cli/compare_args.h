/* `syncbench compare` command line -> sb_compare_request (compare/compare.h), and its --help. */
#ifndef SB_COMPARE_ARGS_H
#define SB_COMPARE_ARGS_H

#include <stdio.h>

#include "base/optdef.h"
#include "compare/compare.h"

/* argv[0] is "compare". Fills *req (defaults first); 0, or SB_EXIT_USAGE with a one-line
 * "compare: ..." error. req->help is set for -h/--help. */
int sb_compare_parse_args(int argc, char **argv, sb_compare_request *req);
void sb_compare_usage(FILE *f);
/* compare's option table (--help and the man page print it). */
const sb_optdef *sb_compare_optdefs(void);

#endif
