#include "sinks/grid.h"

#include "base/error.h"
#include "base/utf8.h"

#include <stdlib.h>
#include <string.h>

/* Cells may hold text from files a user gave (compare's CSVs): every piece a terminal would
 * obey is escaped (base/utf8.h's sb_escape_piece) so that nothing reaches the terminal raw and
 * a row stays one line; in Markdown, |, <, > and & are escaped too, so a cell cannot break the
 * table or inject HTML. */
/* markdown 2: prose or a code span, where a backtick is ' too */
static const char *markdown_escape(const char *s, int markdown, int *used)
{
    *used = 1;
    char c = *s;
    if (markdown == 2 && c == '`')
        return "'";
    return c == '|' ? "\\|" : c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '&' ? "&amp;" : NULL;
}

static void put(FILE *f, const char *s, int markdown)
{
    sb_fputs_escaped_sub(f, s, markdown ? markdown_escape : NULL, markdown);
}

/* Display width of UTF-8 text as put() writes it ("µs" is two columns wide, three bytes). */
static int width(const char *s)
{
    char piece[SB_ESC_PIECE];
    int w = 0, esc;
    while (*s) {
        s += sb_escape_piece(s, piece, &esc);
        w += esc ? (int)strlen(piece) : 1;
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

void sb_md_text(FILE *f, const char *s)
{
    put(f, s, 2);
}

void sb_md_code_block(FILE *f, const char *tag, const char *text)
{
    int longest = 0, run = 0;
    for (const char *p = text; *p; p++) {
        run = *p == '`' ? run + 1 : 0;
        if (run > longest)
            longest = run;
    }
    int fence = longest < 3 ? 3 : longest + 1;
    size_t n = strlen(text);
    for (int i = 0; i < fence; i++)
        fputc('`', f);
    fprintf(f, "%s\n%s%s", tag, text, n && text[n - 1] != '\n' ? "\n" : "");
    for (int i = 0; i < fence; i++)
        fputc('`', f);
    fputc('\n', f);
}
