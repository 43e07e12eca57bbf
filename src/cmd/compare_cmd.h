/* `syncbench compare BASELINE.csv CURRENT.csv`: the subcommand's entry. The command line is
 * cli/compare_args.c's, the comparison compare/compare.c's. */
#ifndef SB_CMD_COMPARE_H
#define SB_CMD_COMPARE_H

/* argv[0] is "compare": parse, --help, run. Exit 0 no regression, 1 regression (or, with
 * --strict, an inconclusive row), 2 bad input. */
int sb_cmd_compare(int argc, char **argv);

#endif
