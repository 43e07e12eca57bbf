/* The record file of one audited process (records.h): DIR/proc-<pid>.jsonl, written through a
 * buffer under one lock (API callbacks come from the program's threads, activity records from
 * CUPTI's). Whole lines only reach the file, so a reader never sees half a record unless the
 * process is killed in the middle of a write(2). */
#ifndef SBA_OUT_H
#define SBA_OUT_H

#include <stddef.h>

#include "record/json_text.h"

/* Creates the file; 0, or -1 (then every write is dropped). */
int sba_out_open(const char *dir);
/* Nonzero once the record file is open (the library was injected by syncbench audit). */
int sba_out_recording(void);
/* Appends one line (the newline is added). */
void sba_out_line(const char *line, size_t len);
/* printf into a line. Lines longer than 64 KiB are cut. */
void sba_out_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Writes the buffer to the file. From a signal handler: try_only = 1 (skips when the lock is
 * held). */
void sba_out_flush(int try_only);
/* A thread that writes the buffer out every quarter second. */
void sba_out_start_flusher(void);
/* fn runs on that thread each quarter second, before the buffer is written (the hand-offs
 * between threads, kept by the waits library, become lines: handoffs.c). One; NULL: none. */
void sba_out_on_flush(void (*fn)(void));
/* fork: the child drops the buffer it inherited and writes nothing (a forked CUDA process
 * cannot use CUDA; an exec gives it its own library). */
void sba_out_atfork(void);

/* From a signal handler: one write(2) of a whole line, past the buffer and its lock (O_APPEND
 * keeps it whole). */
void sba_out_write_raw(const char *line, size_t len);

/* Lines lost so far: not written (the disk refused them) or never written (no file). */
long long sba_out_lost(void);
/* Why sba_out_open failed (errno), 0 when it did not. */
int sba_out_open_errno(void);
/* A JSON string's contents: valid UTF-8, escaped, cut on a character boundary. */
#define sba_json_escape sb_audit_json_escape

#endif
