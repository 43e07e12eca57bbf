/* One physical line of a strict INI file, for inih's ini_parse_stream readers (the framework
 * table's --rules file, the sync baseline). */
#ifndef SB_INILINE_H
#define SB_INILINE_H

#include <stddef.h>
#include <stdio.h>

/* Reads one line of f into buf (num bytes, as inih gives): one too long for inih's buffer, a NUL
 * byte or a carriage return that does not end the line is refused (inih would split, cut or join
 * lines); a UTF-8 byte order mark on line 1 and leading blanks are dropped (inih would take an
 * indented line for the continuation of the key above it). *line counts the lines read.
 * 1: a line; 0: the end of the file; -1: refused, why[] says so of line *why_line. */
int sb_ini_line(FILE *f, char *buf, int num, int *line, char *why, size_t whyn, int *why_line);

#endif
