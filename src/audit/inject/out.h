/* The record file of one audited process (records.h): DIR/proc-<pid>.jsonl, written through a
 * buffer under one lock (API callbacks come from the program's threads, activity records from
 * CUPTI's). Whole lines only reach the file, so a reader never sees half a record unless the
 * process is killed in the middle of a write(2). */
#ifndef SBA_OUT_H
#define SBA_OUT_H

#include <stddef.h>

/* Creates the file; 0, or -1 (then every write is dropped). */
int sba_out_open(const char *dir);
/* Appends one line (the newline is added). */
void sba_out_line(const char *line, size_t len);
/* printf into a line. Lines longer than 64 KiB are cut. */
void sba_out_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Writes the buffer to the file. From a signal handler: try_only = 1 (skips when the lock is
 * held). */
void sba_out_flush(int try_only);
/* fork: the child drops the buffer it inherited and writes nothing (a forked CUDA process
 * cannot use CUDA; an exec gives it its own library). */
void sba_out_atfork(void);

/* A JSON string's contents (no quotes) into dst, cut to fit; returns dst. */
char *sba_json_escape(char *dst, size_t n, const char *s);

#endif
