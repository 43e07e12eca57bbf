#include "cmd/compare_cmd.h"

#include <stdio.h>

#include "cli/compare_args.h"
#include "compare/compare.h"

int sb_cmd_compare(int argc, char **argv)
{
    sb_compare_request req;
    int rc = sb_compare_parse_args(argc, argv, &req);
    if (rc)
        return rc;
    if (req.help) {
        sb_compare_usage(stdout);
        return 0;
    }
    return sb_compare_run(&req);
}
