/* `tgraph schema`: the JSON Schema of .tgraph files, generated from this
 * build's registry.  data/schema/tgraph.schema.json is this output checked
 * in (a CLI test keeps the two equal), for editors and validators.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tgformats/tgformats.h>

#include "cli.h"

int
tg__cli_schema (int argc, char **argv)
{
  if (argc > 1)
    return tg__cli_usage_error ("schema", "unexpected argument \"%s\"", argv[1]);

  char *text = tg_schema_generate ();
  if (!text)
    {
      fprintf (stderr, "tgraph schema: cannot generate the schema\n");
      return TG_CLI_EXIT_FAILED;
    }
  size_t n = strlen (text);
  fputs (text, stdout);
  if (n == 0 || text[n - 1] != '\n')
    fputc ('\n', stdout);
  free (text);
  if (fflush (stdout) != 0)
    {
      perror ("tgraph schema");
      return TG_CLI_EXIT_FAILED;
    }
  return TG_CLI_EXIT_OK;
}
