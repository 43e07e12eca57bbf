/* UTF-8: what is valid, and text made valid. No dependencies: the audit's injection library
 * (src/audit/inject/) compiles it in too. */
#ifndef SB_UTF8_H
#define SB_UTF8_H

/* The length of the valid UTF-8 sequence starting at s (1 for ASCII), or 0 when s starts an
 * invalid one (a stray continuation byte, an overlong form, a surrogate, a value above
 * U+10FFFF, a sequence cut by the end of the string). */
int sb_utf8_len(const char *s);
/* Replaces every byte that is not part of valid UTF-8 (a Latin-1 file name, a character cut
 * in half) with '?', in place, so that JSON encoders take the text. */
void sb_utf8_sanitize(char *s);
/* Drops a multi-byte character cut in half at the end of s (after a truncating snprintf). */
void sb_utf8_cut(char *s);

#endif
