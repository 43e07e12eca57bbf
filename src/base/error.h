/* One error message and one exit code for the whole program: the first failure wins, so the
 * line printed names the root cause, not what failed because of it. */
#ifndef SB_ERROR_H
#define SB_ERROR_H

#include <stddef.h>
#include <stdio.h>

enum sb_exit {
    SB_EXIT_OK = 0,
    SB_EXIT_FAIL = 1,  /* a measurement or validation failed; compare found a regression */
    SB_EXIT_USAGE = 2, /* bad usage or bad input */
    SB_EXIT_NODEV = 3, /* no usable CUDA device or driver */
    SB_EXIT_INTERRUPT = 130
};

/* Record an error (only the first one is kept) and return its code, so callers can write
 * `return sb_fail(SB_EXIT_USAGE, "...")`. */
int sb_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int sb_error_code(void);
/* `in` as a terminal may show it (base/utf8.h's sb_escape_piece: C0, DEL, C1 and bytes that
 * are not UTF-8 escaped), for one-line, terminal-safe text; cut on a piece boundary. */
size_t sb_escape(const char *in, char *out, size_t n); /* returns the bytes of `in` shown */
/* The same, written to f. */
void sb_fputs_escaped(FILE *f, const char *s);
/* The same with a format's own forms first (Markdown's, XML's, GitHub's workflow commands'):
 * sub(s, mode, &used) gives the text for the piece at s and the bytes it stands for, or NULL
 * for the escaper's form. sub NULL: sb_fputs_escaped. */
typedef const char *(*sb_escape_sub)(const char *s, int mode, int *used);
void sb_fputs_escaped_sub(FILE *f, const char *s, sb_escape_sub sub, int mode);
/* The message of the error kept: valid until the next sb_fail or sb_error_clear (a long one is
 * on the heap). */
const char *sb_error_message(void);
void sb_error_clear(void);

/* Context appended to CUDA errors ("small-gemm/async m=512"), set by the engine. */
void sb_error_set_context(const char *ctx);
const char *sb_error_context(void);

/* Text from outside (range, file, site and library names, source lines, warn messages, argv)
 * as the table and the gate's message show it: terminal-safe (base/error.h's sb_escape). */
#define SB_AUDIT_ESC(s) sb_audit_esc((char[1536]){0}, 1536, (s))
const char *sb_audit_esc(char *buf, size_t n, const char *s);

#endif
