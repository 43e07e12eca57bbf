#include "base/fault.h"

#include <stdlib.h>

#include "base/textutil.h"

int sb_fault(const char *name)
{
    const char *list = getenv("SYNCBENCH_FAULT");
    return list && *list && sb_list_contains(list, name);
}
