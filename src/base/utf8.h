/* UTF-8: what is valid, and text made valid. No dependencies: the audit's injection library
 * (inject/) compiles it in too. */
#ifndef SB_UTF8_H
#define SB_UTF8_H

#include <stddef.h>

/* The length of the valid UTF-8 sequence starting at s (1 for ASCII), or 0 when s starts an
 * invalid one (a stray continuation byte, an overlong form, a surrogate, a value above
 * U+10FFFF, a sequence cut by the end of the string). */
int sb_utf8_len(const char *s);
/* Replaces every byte that is not part of valid UTF-8 (a Latin-1 file name, a character cut
 * in half) with '?', in place, so that JSON encoders take the text. */
void sb_utf8_sanitize(char *s);
/* Drops a multi-byte character cut in half at the end of s (after a truncating snprintf). */
void sb_utf8_cut(char *s);

/* The terminal-safe form of text that came from outside (file names, CSV fields, NVTX names,
 * argv): the one escaper every message, table and report uses. Piece by piece: C0 controls and
 * DEL as \n, \t, \r or \xNN; C1 controls (U+0080..U+009F, which terminals obey as CSI and OSC)
 * as \xc2\xNN; every byte that is not part of valid UTF-8 as \xNN; the rest as it is.
 * Consumes the next piece of s (s must not be at its end): returns the bytes consumed, writes
 * its form into out (at most SB_ESC_PIECE bytes with the NUL) and sets *escaped when that form
 * is an escape (each of its bytes a column) rather than the character itself (one column). */
#define SB_ESC_PIECE 12
int sb_escape_piece(const char *s, char *out, int *escaped);

/* snprintf whose result is valid UTF-8 (the JSON reports take only that): cut on a character
 * boundary when it does not fit, every other invalid byte (addr2line's output, a Latin-1 name)
 * replaced with '?'. */
__attribute__((format(printf, 3, 4))) void sb_audit_fmt(char *buf, size_t n, const char *fmt, ...);

#endif
