/* --list: every scenario with its variants, parameters (type, default, help) and metrics. */
#ifndef SB_LIST_H
#define SB_LIST_H

#include <stdio.h>

void sb_print_list(FILE *f);
/* `syncbench list` (and --list): the list on stdout. */
int sb_cmd_list(int argc, char **argv);

#endif
