#include "sinks/grid.h"

#include <stdlib.h>

/* Display width of UTF-8 text ("µs" is two columns wide, three bytes long). */
static int width(const char *s)
{
    int w = 0;
    for (; *s; s++)
        w += ((unsigned char)*s & 0xC0) != 0x80;
    return w;
}

static void pad(FILE *f, const char *s, int w, int right)
{
    int n = w - width(s);
    if (right)
        fprintf(f, "%*s%s", n > 0 ? n : 0, "", s);
    else
        fprintf(f, "%s%*s", s, n > 0 ? n : 0, "");
}

static void markdown_row(FILE *f, const sb_grid *g, const char *const *cells)
{
    for (int c = 0; c < g->cols; c++)
        fprintf(f, "| %s ", cells[c]);
    fputs("|\n", f);
}

static void text_row(FILE *f, const sb_grid *g, const char *const *cells, const int *w)
{
    for (int c = 0; c < g->cols; c++) {
        pad(f, cells[c], w[c], g->right[c]);
        fputs(c + 1 < g->cols ? "  " : "\n", f);
    }
}

void sb_grid_print(FILE *f, const sb_grid *g, int markdown)
{
    if (markdown) {
        markdown_row(f, g, g->heads);
        for (int c = 0; c < g->cols; c++)
            fputs(g->right[c] ? "| ---: " : "| --- ", f);
        fputs("|\n", f);
        for (int r = 0; r < g->rows; r++)
            markdown_row(f, g, g->cells + (size_t)r * g->cols);
        return;
    }
    int *w = calloc((size_t)g->cols, sizeof *w);
    if (!w)
        return;
    for (int c = 0; c < g->cols; c++)
        w[c] = width(g->heads[c]);
    for (int r = 0; r < g->rows; r++)
        for (int c = 0; c < g->cols; c++) {
            int cw = width(g->cells[(size_t)r * g->cols + c]);
            if (cw > w[c])
                w[c] = cw;
        }
    text_row(f, g, g->heads, w);
    for (int r = 0; r < g->rows; r++)
        text_row(f, g, g->cells + (size_t)r * g->cols, w);
    free(w);
}
