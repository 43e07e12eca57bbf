/* A table of text cells, printed aligned for a terminal or as GitHub-flavoured Markdown: the
 * one renderer behind the results table and compare's table. */
#ifndef SB_GRID_H
#define SB_GRID_H

#include <stdio.h>

typedef struct sb_grid {
    int cols, rows;
    const char *const *heads; /* cols */
    const int *right;         /* cols: right-aligned (numbers) */
    const char *const *cells; /* rows * cols, row by row */
} sb_grid;

void sb_grid_print(FILE *f, const sb_grid *g, int markdown);

#endif
