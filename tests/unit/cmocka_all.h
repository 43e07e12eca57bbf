/* cmocka needs these headers before its own. */
#ifndef SB_CMOCKA_ALL_H
#define SB_CMOCKA_ALL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#endif
