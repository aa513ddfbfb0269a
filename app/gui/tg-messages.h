/* Engine messages in the user's language.
 *
 * The engine writes its messages in English from the formats in
 * <tgraph/messages.h>; these find the format a message was made from,
 * translate it with gettext and put the arguments back (each argument
 * translated the same way).  A message from no known format, or with no
 * translation, comes back as it was.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* MESSAGE in the user's language; free with g_free. */
char *tg_message_translate (const char *message);

/* The same with TRANSLATE for gettext (for tests): it returns the
 * translation of a format, or the format itself. */
typedef const char *(*TgTranslateFunc) (const char *format, gpointer user);
char *tg_message_translate_with (const char *message, TgTranslateFunc translate, gpointer user);

G_END_DECLS
