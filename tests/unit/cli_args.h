/* Runs the command-line parser, as main() does, on "syncbench" + lead + args (NULL-terminated
 * lists; lead may be NULL), after clearing any earlier error. */
#ifndef SB_TEST_CLI_ARGS_H
#define SB_TEST_CLI_ARGS_H

#include "cli/cli.h"
#include "base/error.h"

static inline int parse_args(sb_options *o, const char *const *lead, const char *const *args)
{
    char *argv[64];
    int argc = 0;
    argv[argc++] = "syncbench";
    /* getopt_long permutes the pointers but never writes to the strings */
    for (int i = 0; lead && lead[i] && argc < 62; i++)
        argv[argc++] = (char *)lead[i];
    for (int i = 0; args && args[i] && argc < 62; i++)
        argv[argc++] = (char *)args[i];
    argv[argc] = NULL;
    sb_error_clear();
    sb_options_defaults(o);
    return sb_cli_parse(argc, argv, o);
}

#endif
