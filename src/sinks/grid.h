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

/* Text from outside in Markdown prose or a code span: escaped as a cell is (nothing a terminal
 * obeys; |, <, >, & escaped), and a backtick, which would end the span, as '. */
void sb_md_text(FILE *f, const char *s);
/* `text` as a fenced code block (tagged `tag`): the fence is longer than any run of backticks
 * inside, so nothing in it can close the block. text is written as it is: escape it first. */
void sb_md_code_block(FILE *f, const char *tag, const char *text);

#endif
