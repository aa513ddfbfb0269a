/* Engine internals shared between core files. */
#ifndef TG_INTERNAL_H
#define TG_INTERNAL_H

#include "tgraph/value.h"

/* A grid over WIN from V, whose samples outside V's region take the
 * nearest sample of V (clamp to edge).  Caller owns the result. */
TgValue *tg__value_window_clamped (const TgValue *v, const TgRegion *win);

#endif
