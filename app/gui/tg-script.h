/* A test driver: TERRANE_TEST_SCRIPT runs steps in a window after load. */
#pragma once

#include "tg-window.h"

G_BEGIN_DECLS

void tg_script_run (TgWindow *window, const char *script);

G_END_DECLS
