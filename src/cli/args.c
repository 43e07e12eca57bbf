#include "cli/args.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/textutil.h"

#define MAX_OPTS 64

typedef struct {
    struct option longs[MAX_OPTS + 1];
    const sb_optdef *def[MAX_OPTS];
    const sb_argtable *table[MAX_OPTS];
    int index[MAX_OPTS]; /* in its table */
    const char *names[MAX_OPTS + 1];
    char shorts[2 * MAX_OPTS + 3];
    int n;
} option_set;

static void collect(option_set *s, const sb_argtable *tables, int ntables, int in_order)
{
    memset(s, 0, sizeof *s);
    char *sp = s->shorts;
    if (in_order)
        *sp++ = '+'; /* stop at the first operand: what follows is a command's own argv */
    *sp++ = ':';
    for (int t = 0; t < ntables; t++)
        for (int i = 0; tables[t].defs[i].name && s->n < MAX_OPTS; i++) {
            const sb_optdef *d = &tables[t].defs[i];
            int k = s->n++;
            s->def[k] = d;
            s->table[k] = &tables[t];
            s->index[k] = i;
            s->names[k] = d->name;
            s->longs[k] = (struct option){
                d->name, d->type == SB_OPT_FLAG ? no_argument : required_argument, NULL, 256 + k};
            if (d->short_name) {
                *sp++ = d->short_name;
                if (d->type != SB_OPT_FLAG)
                    *sp++ = ':';
            }
        }
    *sp = '\0';
}

static int find_short(const option_set *s, int c)
{
    for (int k = 0; k < s->n; k++)
        if (s->def[k]->short_name == c)
            return k;
    return -1;
}

/* An unknown letter: "unknown option '-v' (--variant is spelled out; --version is -V)", every
 * long option that begins with the letter and how it is spelled, so a guess (-v for verbose or
 * version) is answered; "(see --help)" when none does. The list is built whole, on the heap. */
static int unknown_letter(const char *prefix, const option_set *s, int c)
{
    sb_memtext m;
    FILE *f = sb_memtext_open(&m);
    for (int k = 0; f && k < s->n; k++) {
        const sb_optdef *d = s->def[k];
        if (d->name[0] != c)
            continue;
        fprintf(f, "%s--%s is ", ftell(f) ? "; " : "", d->name);
        if (d->short_name)
            fprintf(f, "-%c", d->short_name);
        else
            fputs("spelled out", f);
    }
    char *hint = f ? sb_memtext_close(&m) : NULL;
    int rc = sb_fail(SB_EXIT_USAGE, "%sunknown option '-%c' (%s)", prefix, c,
                     hint && *hint ? hint : "see --help");
    free(hint);
    return rc;
}

/* "--x: ambiguous (--xa, --xb, ...)": every option the abbreviation begins, the list whole. */
static int ambiguous(const char *prefix, const option_set *s, const char *name)
{
    sb_memtext m;
    FILE *f = sb_memtext_open(&m);
    for (int k = 0; f && k < s->n; k++)
        if (!strncmp(s->names[k], name, strlen(name)))
            fprintf(f, "%s--%s", ftell(f) ? ", " : "", s->names[k]);
    char *list = f ? sb_memtext_close(&m) : NULL;
    int rc = sb_fail(SB_EXIT_USAGE, "%s--%s: ambiguous (%s)", prefix, name, list ? list : "");
    free(list);
    return rc;
}

/* Why getopt_long refused `arg`: a value given to a flag, an ambiguous abbreviation, or a
 * name it does not know. */
static int refused(const char *prefix, const option_set *s, const char *arg)
{
    if (arg[0] == '-' && arg[1] != '-')
        return unknown_letter(prefix, s, (unsigned char)arg[1]);
    char name[128];
    snprintf(name, sizeof name, "%s", arg + 2);
    char *eq = strchr(name, '=');
    if (eq)
        *eq = '\0';
    size_t len = strlen(name);
    int nmatch = 0, exact = 0;
    for (int k = 0; k < s->n && !exact; k++) {
        if (!strcmp(s->names[k], name)) {
            if (eq && s->def[k]->type == SB_OPT_FLAG)
                return sb_fail(SB_EXIT_USAGE, "%s--%s takes no value", prefix, name);
            exact = 1;
        } else if (len && !strncmp(s->names[k], name, len)) {
            nmatch++;
        }
    }
    if (!exact && nmatch > 1)
        return ambiguous(prefix, s, name);
    nmatch = exact ? 1 : nmatch;
    if (nmatch == 1 && eq) /* a unique abbreviation of a flag, with a value */
        return sb_fail(SB_EXIT_USAGE, "%s--%s takes no value", prefix, name);
    const char *hint = sb_suggest(name, s->names, sizeof s->names[0]);
    if (hint)
        return sb_fail(SB_EXIT_USAGE, "%sunknown option '--%s'; did you mean '--%s'?", prefix, name,
                       hint);
    return sb_fail(SB_EXIT_USAGE, "%sunknown option '--%s' (see --help)", prefix, name);
}

static int parse(const char *prefix, const sb_argtable *tables, int ntables, int argc, char **argv,
                 int *first_operand, int in_order)
{
    option_set s;
    collect(&s, tables, ntables, in_order);
    unsigned long long seen = 0;
    opterr = 0;
    optind = 0; /* glibc: a full reset, the ordering mode (in order or permuted) read again */
    for (;;) {
        int c = getopt_long(argc, argv, s.shorts, s.longs, NULL);
        if (c == -1)
            break;
        /* the option just read: getopt permutes argv as it goes, so after operands (compare's
         * `a.csv b.csv --bogus`) it is not where optind was before the call; no value follows
         * it when it is refused */
        const char *arg = argv[optind - 1];
        if (c == ':')
            return sb_fail(SB_EXIT_USAGE, "%soption '%s' needs a value", prefix, arg);
        int k = c >= 256 ? c - 256 : find_short(&s, c);
        if (c == '?' && optopt > 0 && optopt < 256) /* an unknown letter, maybe in a cluster */
            return unknown_letter(prefix, &s, optopt);
        if (c == '?' || k < 0)
            return refused(prefix, &s, arg);
        const sb_optdef *d = s.def[k];
        if (seen >> k & 1 && d->type != SB_OPT_FLAG && d->type != SB_OPT_CUSTOM)
            return sb_fail(SB_EXIT_USAGE, "%s--%s given twice", prefix, d->name);
        seen |= 1ull << k;
        char err[256];
        const char *text = d->type == SB_OPT_FLAG ? "" : optarg;
        if (sb_optdef_set(d, text, s.table[k]->base, err, sizeof err) != 0)
            return sb_fail(SB_EXIT_USAGE, "%s--%s %s: %s", prefix, d->name, text, err);
        if (s.table[k]->given)
            *s.table[k]->given |= 1ull << s.index[k];
    }
    *first_operand = optind;
    return 0;
}

int sb_args_parse(const char *prefix, const sb_argtable *tables, int ntables, int argc, char **argv,
                  int *first_operand)
{
    return parse(prefix, tables, ntables, argc, argv, first_operand, 0);
}

int sb_args_parse_in_order(const char *prefix, const sb_argtable *tables, int ntables, int argc,
                           char **argv, int *first_operand)
{
    return parse(prefix, tables, ntables, argc, argv, first_operand, 1);
}

void sb_args_usage(FILE *f, const sb_argtable *tables, int ntables)
{
    for (int t = 0; t < ntables; t++)
        for (int i = 0; tables[t].defs[i].name; i++) {
            const sb_optdef *d = &tables[t].defs[i];
            if (d->group)
                fprintf(f, "\n%s\n", d->group);
            char head[64];
            snprintf(head, sizeof head, "%s%c%s--%s%s%s", d->short_name ? "-" : "",
                     d->short_name ? d->short_name : ' ', d->short_name ? ", " : "  ", d->name,
                     d->arg ? " " : "", d->arg ? d->arg : "");
            /* help lines after the name, or below it when the name is long */
            const char *h = d->help;
            int col = fprintf(f, "  %s", head);
            int first = 1;
            while (h && *h) {
                const char *nl = strchr(h, '\n');
                int len = nl ? (int)(nl - h) : (int)strlen(h);
                if (!first || col > 25)
                    fprintf(f, "\n%26s", "");
                else
                    fprintf(f, "%*s", 26 - col, "");
                fprintf(f, "%.*s", len, h);
                first = 0;
                h = nl ? nl + 1 : h + len;
            }
            fputc('\n', f);
        }
}

void sb_args_help(FILE *f, const char *head, const sb_argtable *tables, int ntables,
                  const char *tail)
{
    fputs(head, f);
    sb_args_usage(f, tables, ntables);
    fputs(tail, f);
}

/* Text as roff prints it: a backslash doubled, a leading '.' or '\'' guarded, '-' as the
 * option minus \- (so a man page search finds --csv). */
static void roff_text(FILE *f, const char *s, size_t n)
{
    for (size_t i = 0; i < n && s[i]; i++) {
        if (i == 0 && (s[i] == '.' || s[i] == '\''))
            fputs("\\&", f);
        if (s[i] == '\\')
            fputs("\\e", f);
        else if (s[i] == '-')
            fputs("\\-", f);
        else
            fputc(s[i], f);
    }
}

void sb_args_man(FILE *f, const char *title, const sb_argtable *tables, int ntables)
{
    fprintf(f, ".SH %s\n", title);
    for (int t = 0; t < ntables; t++)
        for (int i = 0; tables[t].defs[i].name; i++) {
            const sb_optdef *d = &tables[t].defs[i];
            if (d->group) {
                fputs(".SS ", f);
                roff_text(f, d->group, strcspn(d->group, ":"));
                fputc('\n', f);
            }
            fputs(".TP\n", f);
            if (d->short_name)
                fprintf(f, "\\fB\\-%c\\fR, ", d->short_name);
            fputs("\\fB\\-\\-", f);
            roff_text(f, d->name, strlen(d->name));
            fputs("\\fR", f);
            if (d->arg) {
                fputs(" \\fI", f);
                roff_text(f, d->arg, strlen(d->arg));
                fputs("\\fR", f);
            }
            fputc('\n', f);
            for (const char *h = d->help; h && *h;) { /* help lines joined: roff fills them */
                size_t len = strcspn(h, "\n");
                roff_text(f, h, len);
                fputc('\n', f);
                h += len + (h[len] == '\n');
            }
        }
}
