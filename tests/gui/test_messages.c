/* tg-messages: engine messages are found among the engine's formats and
 * put back with their arguments through a translated format, the
 * arguments translated too, positions honoured, the place before ": "
 * kept; unknown messages come back as they were.  A fake translation
 * stands for gettext, so no locale is needed. */
#include "tg-messages.h"

#include <string.h>
#include <tgraph/tgraph.h>

#include "tgtest.h"

static const char *
fake (const char *format, gpointer user)
{
  static const char *const table[][2] = {
    { TG_MSG_EXPECTED_GOT, "应为%s，实际为 %s" },
    { TG_MSG_AN_INTEGER_IN, "%s 到 %s 之间的整数" },
    { TG_MSG_CANNOT_READ, "无法读取“%s”：%s" },
    { TG_MSG_NEEDS_LINK, "节点“%1$s”（%2$s）的“%3$s”输入需要连接" },
    { TG_MSG_DID_YOU_MEAN, "%s（是否想输入“%s”？）" },
    { TG_MSG_ONE_OF, "以下之一：%s" },
  };

  for (gsize k = 0; k < G_N_ELEMENTS (table); k++)
    if (!strcmp (format, table[k][0]))
      return table[k][1];
  return format;
}

static void
expect (const char *message, const char *want)
{
  char *got = tg_message_translate_with (message, fake, NULL);
  if (strcmp (got, want))
    {
      fprintf (stderr, "FAIL: \"%s\"\n  got  \"%s\"\n  want \"%s\"\n", message, got, want);
      tgtest_failures++;
    }
  g_free (got);
}

static void
test_translate_engine_messages (void)
{
  int n = 0;
  const char *const *formats = tg_message_formats (&n);

  TG_CHECK (n > 10 && formats[0] != NULL);
  /* Nested: the phrase inside "expected %s, got %s" is a message too. */
  expect ("expected an integer in 1..16, got 40", "应为1 到 16 之间的整数，实际为 40");
  /* The place before the message stays as it is. */
  expect ("nodes[3] \"base\".params.octaves: expected an integer in 1..16, got 40",
          "nodes[3] \"base\".params.octaves: 应为1 到 16 之间的整数，实际为 40");
  expect ("cannot read \"height.png\": No such file or directory",
          "无法读取“height.png”：No such file or directory");
  /* Positional arguments. */
  expect ("node \"curve\" (curve) needs a link into its \"height\" input",
          "节点“curve”（curve）的“height”输入需要连接");
  /* The first ", got " ends the expectation; choices keep their quotes. */
  expect ("expected one of \"perlin\", \"simplex\", got \"perlni\" (did you mean \"perlin\"?)",
          "应为以下之一：\"perlin\", \"simplex\"，实际为 \"perlni\"（是否想输入“perlin”？）");
  /* Not from a known format, or untranslated: unchanged. */
  expect ("something else entirely", "something else entirely");
  expect ("the graph has a cycle", "the graph has a cycle");
}

int
main (void)
{
  TG_RUN (test_translate_engine_messages);
  return tgtest_result ();
}
