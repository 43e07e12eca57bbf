#include "base/fault.h"

#include <stdlib.h>

#include "base/envvars.h"
#include "base/textutil.h"

int sb_fault(const char *name)
{
    const char *list = sb_env_str(SB_ENV_FAULT);
    return list && sb_list_contains(list, name);
}
