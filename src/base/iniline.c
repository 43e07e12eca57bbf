/* One physical line of a strict INI file (iniline.h). */
#include "base/iniline.h"

#include <string.h>

int sb_ini_line(FILE *f, char *buf, int num, int *line, char *why, size_t whyn, int *why_line)
{
    int len = 0, ch = EOF;
    while (len < num - 1 && (ch = getc(f)) != EOF && ch != '\n') {
        if (ch == '\0' || (ch == '\r' && (ch = getc(f)) != '\n' && ch != EOF)) {
            snprintf(why, whyn, "%s", ch ? "carriage return inside a line" : "NUL byte");
            *why_line = *line + 1;
            return -1;
        }
        if (ch == '\n' || ch == EOF)
            break; /* CRLF, or a CR that ends the file */
        buf[len++] = (char)ch;
    }
    if (len == 0 && ch == EOF)
        return 0;
    buf[len] = '\0';
    ++*line;
    if (len == num - 1 && ch != '\n' && ch != EOF && (ch = getc(f)) != '\n' && ch != EOF &&
        !(ch == '\r' && ((ch = getc(f)) == '\n' || ch == EOF))) {
        snprintf(why, whyn, "line longer than %d bytes", num - 1);
        *why_line = *line;
        return -1;
    }
    char *p = buf;
    if (*line == 1 && !strncmp(p, "\xEF\xBB\xBF", 3))
        p += 3;
    p += strspn(p, " \t");
    memmove(buf, p, strlen(p) + 1);
    return 1;
}
