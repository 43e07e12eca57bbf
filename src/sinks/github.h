/* GitHub Actions, where a person reads a verdict besides the log: workflow commands on stdout
 * (`::error file=F,line=N,title=T::MESSAGE`, shown on that line of the pull request's diff) and
 * Markdown appended to the file $GITHUB_STEP_SUMMARY names (shown on the run's page). The one
 * GitHub writer (sb_gh_write) reads the verdict list the audit's gate and compare fill
 * (sinks/verdicts.h): one escaper, one annotation layout, one summary rule. */
#ifndef SB_GITHUB_H
#define SB_GITHUB_H

#include <stddef.h>
#include <stdio.h>

#include "sinks/verdicts.h"

/* --ci MODE: "github" or "none"; NULL (not given): github under GitHub Actions
 * (GITHUB_ACTIONS=true), none elsewhere. 1: annotations and the step summary, 0: neither. */
int sb_ci_github(const char *mode);
/* The option's value checked: 0, or exit 2 with one line ("PREFIX--ci foo: expected github or
 * none"). */
int sb_ci_check(const char *prefix, const char *mode);

/* Text as a workflow command carries it (GitHub's documented escaping): in the message, `%`,
 * `\r` and `\n` as %25, %0D and %0A (GitHub shows them as the characters); in a property's value
 * (property = 1), `:` and `,` as %3A and %2C too. Every other control character (C0, DEL, C1)
 * and every byte that is not UTF-8 in the one escaper's form (base/utf8.h: \x1b), so that none
 * reaches the log raw. */
void sb_gh_escape(FILE *f, const char *s, int property);

/* One annotation line: `::LEVEL file=FILE,line=LINE,title=TITLE::MESSAGE`. level: "error" or
 * "warning"; file NULL: neither file nor line (shown on the run's page only); line <= 0: no line;
 * title NULL: none. */
void sb_gh_annotate(FILE *f, const char *level, const char *file, int line, const char *title,
                    const char *message);

/* A stream that writes to `to`, every line that would begin with `::` indented by two spaces:
 * what syncbench prints under --ci github besides its own workflow commands (the compare table,
 * a report on stdout) goes through it, so that no text from outside (a scenario named
 * `::stop-commands::tok`) begins a line that GitHub would run as a command. fclose flushes it
 * and leaves `to` open. NULL out of memory. */
FILE *sb_gh_guard(FILE *to);

/* `file` as GitHub names it in a diff: relative to the repository's root ($GITHUB_WORKSPACE,
 * else the current folder; a relative `file` is taken from the current folder). NULL when it
 * lies outside the root. */
const char *sb_gh_repo_path(const char *file, char *buf, size_t n);

/* GitHub keeps at most 1 MiB of summary per step. */
#define SB_GH_SUMMARY_MAX (1024 * 1024)
/* md[0..n) appended to $GITHUB_STEP_SUMMARY: appended, never truncated (other commands of the
 * step write there too), and cut at a line with a note where the file would pass
 * SB_GH_SUMMARY_MAX. Unset or empty: nothing. A file that cannot be written is a warning on
 * stderr, never a failure: the verdict is the exit code's. */
void sb_gh_summary(const char *md, size_t n);

/* The verdicts under GitHub Actions: an annotation on `to` per entry of the list with
 * SB_CI_ANNOTATION (a failure `::error`, else `::warning`; its message the entry's message and,
 * on the next line, its reason), then md[0..n) appended to the step summary (sb_gh_summary;
 * md NULL: none). 0, or exit 1 when `to` could not be written. */
int sb_gh_write(FILE *to, const sb_ci_verdicts *l, const char *md, size_t n);

#endif
