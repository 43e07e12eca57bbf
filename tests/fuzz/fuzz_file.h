/* Helpers shared by the fuzz targets: an input as a file the loaders open by name (a memfd,
 * named /proc/self/fd/N, so no file is left behind), an input as a C string, and a check that
 * aborts with a message (libFuzzer then saves the input). */
#ifndef SB_FUZZ_FILE_H
#define SB_FUZZ_FILE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

typedef struct fuzz_file {
    int fd; /* -1 until first use */
    char path[32];
} fuzz_file;

#define FUZZ_FILE_INIT                                                                             \
    {                                                                                              \
        -1, ""                                                                                     \
    }

/* Replaces the file's content with data[0..size). */
static inline const char *fuzz_file_set(fuzz_file *f, const uint8_t *data, size_t size)
{
    if (f->fd < 0) {
        f->fd = memfd_create("syncbench-fuzz", 0);
        if (f->fd < 0) {
            perror("memfd_create");
            abort();
        }
        snprintf(f->path, sizeof f->path, "/proc/self/fd/%d", f->fd);
    }
    if (ftruncate(f->fd, 0) != 0 || (size && pwrite(f->fd, data, size, 0) != (ssize_t)size)) {
        perror("fuzz input file");
        abort();
    }
    return f->path;
}

/* data[0..size) up to its first NUL, as a string in a buffer of exactly that size (so that
 * AddressSanitizer sees a read past its end). Free it. */
static inline char *fuzz_string(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, 0, size);
    size_t len = nul ? (size_t)(nul - data) : size;
    char *s = malloc(len + 1);
    if (!s)
        abort();
    memcpy(s, data, len);
    s[len] = '\0';
    return s;
}

#define FUZZ_CHECK(cond)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);               \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* An error message must be one line of printable text (base/error.c escapes what it quotes). */
static inline void fuzz_check_message(const char *m)
{
    FUZZ_CHECK(m[0] != '\0');
    for (const unsigned char *p = (const unsigned char *)m; *p; p++)
        FUZZ_CHECK(*p >= 0x20 && *p != 0x7f);
}

#endif
