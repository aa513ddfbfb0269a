/* `tgraph`: the headless front end of Terrane.
 *
 * CI pipelines use it to check, evaluate and export .tgraph files with no
 * display.  This file holds the command table, the top-level help and the
 * dispatch; each subcommand lives in its own cmd_*.c file.
 */
#include <ctype.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdio.h>
#include <string.h>

#include <tgformats/tgformats.h>

#include "cli.h"

static const TgCliCommand commands[] = {
  { "check", "FILE...", "validate graphs; print each error with its place",
    "Loads and validates each FILE (syntax, node types, parameters and their ranges,\n"
    "links, cycles, export paths) and prints every problem as\n"
    "  FILE:LINE:COL: PATH: message\n"
    "(or FILE: PATH: message where the position is unknown).  A file in an older\n"
    "format version is valid: it is upgraded as it loads, and a note says so\n"
    "('tgraph fmt' rewrites it in the current version).\n"
    "Exit status: 0 when every file is valid, 2 otherwise.\n"
    "\n"
    "Options:\n"
    "  -q, --quiet          print nothing for valid files\n"
    "  --format text|json|github\n"
    "                       text (the default): the lines above, on stderr;\n"
    "                       json: JSON Lines on stdout, one object a message with\n"
    "                       file, line, column, path, node_id, message and severity\n"
    "                       (\"error\" or \"note\"; unknown places are null), as\n"
    "                       data/schema/check-message.schema.json describes;\n"
    "                       github: GitHub Actions workflow commands on stdout\n"
    "                       (::error file=F,line=L,col=C,title=tgraph check::message),\n"
    "                       so a workflow annotates the line\n",
    tg__cli_check },
  { "diff", "OLD NEW [--format text|json|markdown] [--no-ui]",
    "show what changed between two graphs, by meaning rather than text",
    "Compares two graphs as Terrane reads them, not their text: world settings,\n"
    "nodes removed, added, renamed (a new id with the same type and parameters as\n"
    "a removed one, matching no other) or given another type, parameters with\n"
    "their old and new values and units, links removed and added, and apart from\n"
    "these, nodes moved in the editor (their \"ui\" block).  A file in an older\n"
    "format version is upgraded before comparing, so only real changes show.\n"
    "Graphs that would not yet evaluate (an unlinked required input) compare too.\n"
    "The order is fixed: world, nodes, parameters, links, moves.\n"
    "\n"
    "Options:\n"
    "  --format text|json|markdown\n"
    "                       text (the default): one change a line, nothing when\n"
    "                       equal; markdown: a list to post on a merge request;\n"
    "                       json: one object {old, new, equal, changes: [...]}, as\n"
    "                       data/schema/diff.schema.json describes\n"
    "  --no-ui              leave out moves, which then do not count as changes\n"
    "\n"
    "With git: a diff driver (.gitattributes: *.tgraph diff=tgraph) or a difftool\n"
    "entry; the README's \"Version control\" section has both.\n"
    "Exit status: 0 when the graphs are equal, 1 when they differ, 2 when a file\n"
    "cannot be loaded or on a usage error.\n",
    tg__cli_diff },
  { "compare", "OLD_DIR NEW_DIR [-o DIR] [--tolerance T] [--format text|json|markdown]",
    "show what changed between two output folders of eval",
    "Reads the manifest.json of both folders and tells each exported file same,\n"
    "changed, added or removed by its SHA-256.  A changed heightmap, mask or image\n"
    "(png16, png8, raw16, r32, exr) is read back: the samples that differ, the\n"
    "largest and the RMS difference (in metres for heightmaps, from the manifest's\n"
    "units; else as a fraction of the format's range); a changed mesh (glb, obj,\n"
    "ply) gives its vertex and triangle counts and bounds; a changed instance list\n"
    "(csv, json, or a glb that instances its meshes) its counts per prototype and\n"
    "how many instances moved (the k-th of a prototype against the k-th).  Other\n"
    "formats compare by their hash.\n"
    "\n"
    "Options:\n"
    "  -o, --output DIR     write pictures into DIR (created when missing): for each\n"
    "                       changed grid NAME.diff.png (blue lower, red higher, white\n"
    "                       equal) and NAME.sides.png (old, new, difference)\n"
    "  --tolerance T        metres: a heightmap whose samples all moved by at most T,\n"
    "                       a mesh whose counts are equal and bounds within T, and an\n"
    "                       instance list whose counts are equal and no instance\n"
    "                       moved further than T count as equal (default 0)\n"
    "  --format text|json|markdown\n"
    "                       text (the default): one line a file not the same;\n"
    "                       json: one object, as data/schema/compare.schema.json\n"
    "                       describes; markdown: a summary to post on a merge request\n"
    "                       (also written as DIR/summary.md, the pictures linked\n"
    "                       relative to it)\n"
    "\n"
    "Exit status: 0 when the outputs are equal (or within the tolerance), 1 when\n"
    "they differ, 2 on a usage error, a missing or malformed manifest or a listed\n"
    "file that cannot be read.\n",
    tg__cli_compare },
  { "eval", "FILE [-o DIR] [--resolution N] [--threads N] [--set ID.PARAM=VALUE]... "
            "[--memory-limit SIZE] [--report FILE.html] [--quiet]",
    "evaluate a graph and write its exports plus manifest.json",
    "Evaluates every export node of FILE and writes the exported files and\n"
    "manifest.json (sizes and SHA-256 of every file) into DIR.  The files appear\n"
    "together or not at all: a failure or Ctrl+C leaves no partial output.\n"
    "\n"
    "Options:\n"
    "  -o, --output DIR     output folder (default: out), created when missing\n"
    "  -r, --resolution N   samples along X, overriding world.resolution (2..16385)\n"
    "  -j, --threads N      worker threads (default 0: one per core); the output\n"
    "                       bytes are the same for any thread count\n"
    "  -s, --set ID.PARAM=VALUE\n"
    "                       override a parameter of node ID before evaluation\n"
    "                       (a name from an older format version is accepted);\n"
    "                       VALUE as in the file: 3.5, true, perlin, 1,2 (vectors),\n"
    "                       #rrggbb (colours), 0:0,0.5:0.3,1:1 (curves)\n"
    "  --memory-limit SIZE  refuse, before anything runs, a build whose estimated\n"
    "                       peak memory is over SIZE (512M, 20G, bytes; default:\n"
    "                       the memory available, MemAvailable or a cgroup's\n"
    "                       memory.max); the message names the node\n"
    "  -q, --quiet          print nothing but errors\n"
    "  --report FILE.html   also write a build report: one self-contained page (no\n"
    "                       network, pictures embedded) with the graph drawn, each\n"
    "                       node's thumbnail, state, time and the memory of its\n"
    "                       results, the exports with thumbnails and sizes, and the\n"
    "                       manifest; written atomically once the build is done (when\n"
    "                       a node failed: which one and why, and no exports), and\n"
    "                       not a file of the build (the exports and manifest are the\n"
    "                       same bytes with and without it)\n"
    "  --tiles NX,NY --tile IX,IY\n"
    "                       only that tile's heightmaps, masks and images: the window\n"
    "                       of the whole build (meshes and instances are left out)\n"
    "  --tiles NX,NY --stage N [--tile IX,IY]\n"
    "                       run one job of a plan (see plan); -o names the plan folder\n"
    "\n"
    "Progress goes to stderr: a progress bar on a terminal, log lines otherwise.\n"
    "Exit status: 0 on success, 1 when evaluation failed (the message names the\n"
    "node) or the report could not be written, 2 on a usage error, an invalid\n"
    "graph or a build over the memory limit (nothing is written), 128+N when\n"
    "stopped by signal N.\n",
    tg__cli_eval },
  { "plan", "FILE --tiles NX,NY [-o DIR] [--resolution N] [--set ID.PARAM=VALUE]... [--threads N]",
    "split a build into tiles and stages for GNU parallel or Slurm",
    "Cuts the world of FILE into NX x NY tiles (any counts up to the samples) and\n"
    "writes a plan folder DIR (default: plan): plan.json (graph hash, world, tile\n"
    "windows, stages, every job's command, inputs, outputs and memory estimate),\n"
    "the graph and its input files, stages/NN.txt (one job command a line),\n"
    "run-parallel.sh (GNU parallel; --sshloginfile or PARALLEL_SSHLOGINFILE for many\n"
    "machines; a rerun runs only the jobs that failed) and submit-slurm.sh (one job\n"
    "array per stage chained with afterok).  Jobs read and write only in DIR.\n"
    "`tgraph stitch DIR` then writes the same files as `tgraph eval` would.\n"
    "\n"
    "Options:\n"
    "  --tiles NX,NY        tiles along x (west to east) and z (north to south)\n"
    "  -o, --output DIR     plan folder; one that holds another graph's plan is refused\n"
    "  -r, --resolution N, -s, --set ID.PARAM=VALUE\n"
    "                       as for eval, baked into the plan's graph\n"
    "  -j, --threads N      --threads of every job (and Slurm's --cpus-per-task)\n"
    "  --partition P, --time T, --mem M\n"
    "                       Slurm defaults for submit-slurm.sh (also TG_SLURM_PARTITION,\n"
    "                       TG_SLURM_TIME, TG_SLURM_MEM); --mem defaults to each\n"
    "                       stage's estimate\n"
    "\n"
    "A job is `tgraph eval DIR/graph/graph.tgraph -o DIR --tiles NX,NY --stage N\n"
    "[--tile IX,IY]`.  Exit status: 0, or 2 on a bad command line, graph or folder.\n",
    tg__cli_plan },
  { "stitch", "DIR [-o OUT] [--tile-files unreal|unity [--tile-size S]]", "join a tiled build's results into the whole world's files",
    "Checks every export job of the plan in DIR (all present, made from the plan's\n"
    "graph, every file's SHA-256 as its job.json lists) and writes the whole\n"
    "world's exports and manifest.json into OUT (default: out): the same bytes as\n"
    "`tgraph eval` of the whole world.  A missing or stale tile is named and\n"
    "nothing is written.\n"
    "\n"
    "Options:\n"
    "  -o, --output DIR     output folder\n"
    "  --tile-files unreal|unity\n"
    "                       per-tile files instead of whole images, sharing their\n"
    "                       border samples: unreal: NAME_x0_y0.png (x east, y south),\n"
    "                       World Partition sizes (127 ... 8129); unity: NAME_x0_z0\n"
    "                       (z north), 2^n+1 samples, heightmaps as RAW16 south first\n"
    "  --tile-size S        samples a side (default: the largest allowed size that\n"
    "                       tiles the world exactly)\n"
    "  -q, --quiet          print nothing but errors\n"
    "\n"
    "Exit status: 0, 1 when writing failed, 2 when a part of the plan is missing or\n"
    "stale, 128+N when stopped by signal N.\n",
    tg__cli_stitch },
  { "info", "FILE [--resolution N]", "print the world, the nodes and the files a graph exports",
    "Prints the world settings (size, height, resolution, seed), the nodes with\n"
    "their types, the number of links, the files each export node writes, and\n"
    "the memory `tgraph eval` estimates its build needs at the peak (the node\n"
    "running then) beside the memory available.\n"
    "\n"
    "Options:\n"
    "  -r, --resolution N   as for eval\n"
    "\n"
    "Exit status: 0, or 2 when FILE cannot be loaded.\n",
    tg__cli_info },
  { "nodes", "[--json|--markdown|--man]", "list the node types this build knows",
    "Prints the node catalogue, grouped by category: each type with its label,\n"
    "ports and parameters (defaults, ranges, units).\n"
    "\n"
    "Options:\n"
    "  --json               print the catalogue as JSON instead\n"
    "  --markdown           print the node reference as Markdown (docs/nodes.md)\n"
    "  --man                print the node reference as the manual page tgraph-nodes(7)\n",
    tg__cli_nodes },
  { "schema", "", "print the JSON Schema of the .tgraph format",
    "Prints the JSON Schema (draft 2020-12) of .tgraph files, generated from the\n"
    "node registry of this build.\n",
    tg__cli_schema },
  { "fmt", "FILE... [--check]", "rewrite graphs in canonical form",
    "Rewrites each FILE in the canonical form (stable key order, every parameter,\n"
    "2-space indent), atomically, so diffs in version control stay small.  A file\n"
    "in an older format version is written in the current one.\n"
    "\n"
    "Options:\n"
    "  --check              change nothing; exit 1 when a file is not canonical\n"
    "\n"
    "Exit status: 0, 1 (--check found a difference), 2 when a file cannot be loaded.\n",
    tg__cli_fmt },
};

const TgCliCommand *
tg__cli_find_command (const char *name)
{
  for (int i = 0; i < TG_N_ELEMENTS (commands); i++)
    if (strcmp (commands[i].name, name) == 0)
      return &commands[i];
  return NULL;
}

void
tg__cli_print_command_help (const TgCliCommand *cmd)
{
  /* The summary is a lower-case line in the command list; here it is a sentence. */
  printf ("Usage: tgraph %s%s%s\n\n%c%s.\n\n%s", cmd->name, cmd->args[0] ? " " : "", cmd->args,
          toupper ((unsigned char) cmd->summary[0]), cmd->summary + 1, cmd->help);
}

static void
print_usage (FILE *f)
{
  fprintf (f,
           "Usage: tgraph COMMAND [ARGS]\n"
           "\n"
           "Terrane's headless terrain graph tool.\n"
           "\n"
           "Commands:\n");
  for (int i = 0; i < TG_N_ELEMENTS (commands); i++)
    fprintf (f, "  %-8s %s\n", commands[i].name, commands[i].summary);
  fprintf (f,
           "  help     show help for a command: tgraph help COMMAND\n"
           "\n"
           "Options:\n"
           "  --version  print the version\n"
           "  --help     print this help\n");
}

static int
run_help (int argc, char **argv)
{
  if (argc < 2)
    {
      print_usage (stdout);
      return TG_CLI_EXIT_OK;
    }
  if (argc > 2)
    return tg__cli_usage_error ("help", "expected one command name, got %d arguments", argc - 1);
  const TgCliCommand *cmd = tg__cli_find_command (argv[1]);
  if (!cmd)
    {
      if (strcmp (argv[1], "help") == 0)
        {
          print_usage (stdout);
          return TG_CLI_EXIT_OK;
        }
      return tg__cli_usage_error ("help", "unknown command \"%s\"", argv[1]);
    }
  tg__cli_print_command_help (cmd);
  return TG_CLI_EXIT_OK;
}

int
main (int argc, char **argv)
{
  /* No setlocale(): numbers must print with a '.' whatever the user's locale. */
#ifdef __GLIBC__
  /* Maps of 1 MiB and more go back to the system when freed.  Without this
   * glibc raises its mmap threshold to the largest block freed (up to 32 MiB
   * on 64 bits) and keeps freed 16 MiB maps in its heap, so a build peaks
   * above what it holds and above the memory estimate --memory-limit uses. */
  mallopt (M_MMAP_THRESHOLD, 1 << 20);
#endif
  if (argc < 2)
    {
      print_usage (stderr);
      return TG_CLI_EXIT_USAGE;
    }

  const char *name = argv[1];
  if (strcmp (name, "--version") == 0 || strcmp (name, "-V") == 0)
    {
      printf ("tgraph %s (.tgraph format %d)\n", TG_VERSION_STRING, TG_FORMAT_VERSION);
      return TG_CLI_EXIT_OK;
    }
  if (tg__cli_is_help (name))
    {
      print_usage (stdout);
      return TG_CLI_EXIT_OK;
    }
  if (strcmp (name, "help") == 0)
    return run_help (argc - 1, argv + 1);

  const TgCliCommand *cmd = tg__cli_find_command (name);
  if (!cmd)
    {
      fprintf (stderr, "tgraph: unknown command \"%s\"\nRun 'tgraph help' for the list.\n",
               name);
      return TG_CLI_EXIT_USAGE;
    }
  for (int i = 2; i < argc; i++)
    {
      if (strcmp (argv[i], "--") == 0)
        break;
      if (tg__cli_is_help (argv[i]))
        {
          tg__cli_print_command_help (cmd);
          return TG_CLI_EXIT_OK;
        }
    }

  int rc = tg_formats_init ();
  if (rc < 0)
    {
      fprintf (stderr, "tgraph: cannot register file formats: %s\n", tg_strerror (rc));
      return TG_CLI_EXIT_FAILED;
    }
  return cmd->run (argc - 1, argv + 1);
}
