/* The hidden `syncbench __man`: the man page, syncbench.1, on stdout. Its option lists are
 * printed from the option tables --help prints from (cli/args.c), so the two cannot drift;
 * `make man` writes it, `make install` installs it. */
#ifndef SB_MAN_H
#define SB_MAN_H

#define SB_MAN_CMD "__man"

int sb_cmd_man(int argc, char **argv);

#endif
