#include "sinks/grid.h"

#include <stdlib.h>
#include <string.h>

/* Cells may hold text from files a user gave (compare's CSVs): a control character is written
 * as \n, \x1b, ... so that nothing reaches the terminal raw and a row stays one line; in
 * Markdown, |, <, > and & are escaped too, so a cell cannot break the table or inject HTML. */
static const char *escaped(unsigned char c, int markdown, char *buf)
{
    if (c == '\n')
        return "\\n";
    if (c < 0x20 || c == 0x7f) {
        snprintf(buf, 8, "\\x%02x", c);
        return buf;
    }
    if (markdown)
        return c == '|' ? "\\|" : c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '&' ? "&amp;" : NULL;
    return NULL;
}

static void put(FILE *f, const char *s, int markdown)
{
    char buf[8];
    for (; *s; s++) {
        const char *e = escaped((unsigned char)*s, markdown, buf);
        if (e)
            fputs(e, f);
        else
            fputc(*s, f);
    }
}

/* Display width of UTF-8 text as put() writes it ("µs" is two columns wide, three bytes). */
static int width(const char *s)
{
    char buf[8];
    int w = 0;
    for (; *s; s++) {
        const char *e = escaped((unsigned char)*s, 0, buf);
        w += e ? (int)strlen(e) : ((unsigned char)*s & 0xC0) != 0x80;
    }
    return w;
}

static void pad(FILE *f, const char *s, int w, int right)
{
    int n = w - width(s);
    if (right)
        fprintf(f, "%*s", n > 0 ? n : 0, "");
    put(f, s, 0);
    if (!right)
        fprintf(f, "%*s", n > 0 ? n : 0, "");
}

static void markdown_row(FILE *f, const sb_grid *g, const char *const *cells)
{
    for (int c = 0; c < g->cols; c++) {
        fputs("| ", f);
        put(f, cells[c], 1);
        fputc(' ', f);
    }
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
