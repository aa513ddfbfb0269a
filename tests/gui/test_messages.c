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
    { TG_MSG_A_NUMBER_IN, "%s 到 %s 之间的数" },
    { TG_MSG_INT_RANGE, "应为 %d 到 %d 之间的整数，实际为 %d" },
    { TG_MSG_MAX_BELOW_MIN, "最大值（%g）小于最小值（%g）" },
    { TG_MSG_NO_HEIGHTMAP_FILE, "未指定高度图文件" },
    { TG_MSG_INPUT_NO_DATA, "输入“%s”没有数据" },
    { TG_MSG_NODE_FAILED, "节点“%s”（%s）：%s" },
    { TG_MSG_UNKNOWN_PARAM_OF, "%s 的未知参数" },
    { TG_MSG_PARAM_V1_NAME, "%s 的未知参数（“%s”是它在格式版本 1 中的名称；版本 %d 中称为“%s”）" },
    { TG_MSG_BELOW_CELLS, "%1$s %2$s 米小于世界 %4$s 米网格的%3$s" },
    { TG_MSG_TWO_CELLS, "两个网格单元" },
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
  expect ("expected a number in 0..1, got 2", "应为0 到 1 之间的数，实际为 2");
  /* The place before the message stays as it is; of two formats that
   * match, the one with more of its own text wins ("expected an integer
   * in %d..%d, got %d" over "expected %s, got %s"). */
  expect ("nodes[3] \"base\".params.octaves: expected an integer in 1..16, got 40",
          "nodes[3] \"base\".params.octaves: 应为 1 到 16 之间的整数，实际为 40");
  expect ("cannot read \"height.png\": No such file or directory",
          "无法读取“height.png”：No such file or directory");
  /* Positional arguments. */
  expect ("node \"curve\" (curve) needs a link into its \"height\" input",
          "节点“curve”（curve）的“height”输入需要连接");
  /* The first ", got " ends the expectation; choices keep their quotes. */
  expect ("expected one of \"perlin\", \"simplex\", got \"perlni\" (did you mean \"perlin\"?)",
          "应为以下之一：\"perlin\", \"simplex\"，实际为 \"perlni\"（是否想输入“perlin”？）");
  /* One of each family: a node's check of its parameters, a file a node
   * needs, an input with nothing on it (inside the engine's "node: ..."
   * wrapper), the loader, a warning. */
  expect ("nodes[1] \"band\".params.max_height: maximum (0.2) is below minimum (0.8)",
          "nodes[1] \"band\".params.max_height: 最大值（0.2）小于最小值（0.8）");
  expect ("params.path: no heightmap file given", "params.path: 未指定高度图文件");
  expect ("node \"out\" (export.heightmap): input 'height' has no data",
          "节点“out”（export.heightmap）：输入“height”没有数据");
  expect ("nodes[1] \"base\".params.octavs: unknown parameter of noise.fbm (did you mean "
          "\"octaves\"?)",
          "nodes[1] \"base\".params.octavs: noise.fbm 的未知参数（是否想输入“octaves”？）");
  expect ("unknown parameter of noise.fbm (\"gain\" is its format version 1 name; version 2 "
          "calls it \"persistence\")",
          "noise.fbm 的未知参数（“gain”是它在格式版本 1 中的名称；版本 2 中称为“persistence”）");
  expect ("Scale 2 m is smaller than two cells of the world's 8 m grid: the detail is lost at "
          "this resolution (16 m or more shows it)",
          "Scale 2 米小于世界 8 米网格的两个网格单元");
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
