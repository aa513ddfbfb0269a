/* Tiled builds, part two: the plan folder (plan.json, the graph and its
 * inputs, one file of commands per stage, and the GNU parallel and Slurm
 * drivers), and reading plan.json back.
 *
 * Jobs read and write only inside the folder, so it can be a cluster's
 * shared folder: the graph's input files are copied in beside it. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plan-private.h"
#include "tgformats-private.h"

/* In TgStageKind's order. */
static const char *const kind_names[] = { "step", "reduce", "node", "export", "store" };

/* --- plan.json back ------------------------------------------------------------ */

int
tg__plan_info_read (const char *dir, TgPlanInfo *info, TgError *err)
{
  char path[4300], *text = NULL;
  size_t len;
  json_object *root = NULL, *v, *tiles, *world, *res;
  const char *sha, *name;
  int rc;

  memset (info, 0, sizeof *info);
  snprintf (path, sizeof path, "%s/%s", dir, TG__PLAN_FILE);
  if (access (path, F_OK) != 0)
    return tg_error_set (err, TG_EMISSING, "", TG_MSG_PLAN_NONE, dir, TG__PLAN_FILE);
  if ((rc = tg__read_file (path, &text, &len, err)) < 0)
    return rc;
  root = json_tokener_parse (text);
  free (text);
  if (!root || !json_object_object_get_ex (root, "format", &v)
      || strcmp (json_object_get_string (v), "tgraph-plan") != 0
      || !json_object_object_get_ex (root, "graph_sha256", &v)
      || !(sha = json_object_get_string (v)) || strlen (sha) != 64
      || !json_object_object_get_ex (root, "tiles", &tiles) || json_object_array_length (tiles) != 2
      || !json_object_object_get_ex (root, "world", &world)
      || !json_object_object_get_ex (world, "resolution", &res))
    {
      json_object_put (root);
      return tg_error_set (err, TG_EPARSE, "", TG_MSG_PLAN_NOT_PLAN, path);
    }
  info->nx = json_object_get_int (json_object_array_get_idx (tiles, 0));
  info->ny = json_object_get_int (json_object_array_get_idx (tiles, 1));
  info->resolution = json_object_get_int (res);
  memcpy (info->sha_hex, sha, 65);
  for (int i = 0; i < 32; i++)
    {
      unsigned b;
      if (sscanf (sha + 2 * i, "%2x", &b) != 1)
        b = 0;
      info->sha[i] = (uint8_t) b;
    }
  name = json_object_object_get_ex (root, "graph", &v) ? json_object_get_string (v) : NULL;
  snprintf (info->graph_name, sizeof info->graph_name, "%s", name ? name : "");
  json_object_put (root);
  return 0;
}

int
tg__plan_check_graph (const char *dir, const TgPlanInfo *info, TgError *err)
{
  char path[4300], hex[65];
  int rc;

  snprintf (path, sizeof path, "%s/%s", dir, TG__PLAN_GRAPH);
  if ((rc = tg_sha256_file (path, hex, err)) < 0)
    return rc;
  if (strcmp (hex, info->sha_hex) != 0)
    return tg_error_set (err, TG_EINVAL, "", TG_MSG_PLAN_CHANGED, path, hex, info->sha_hex);
  return 0;
}

/* --- the graph and its inputs -------------------------------------------------------- */

typedef struct
{
  char **src, **dst; /* absolute or graph-relative source; destination under graph/ */
  int n;
  const char *base;
  char prefix[32];   /* "in/NODE" */
  bool oom;
} Copies;

static const char *
base_name (const char *path)
{
  const char *slash = strrchr (path, '/');
  return slash ? slash + 1 : path;
}

static void
add_copy (void *user, const char *rel)
{
  Copies *c = user;
  char **s = realloc (c->src, sizeof (char *) * (size_t) (c->n + 1));
  char **d = s ? realloc (c->dst, sizeof (char *) * (size_t) (c->n + 1)) : NULL;
  size_t ns = strlen (c->base) + strlen (rel) + 2, nd = strlen (c->prefix) + strlen (rel) + 2;

  if (s)
    c->src = s;
  if (d)
    c->dst = d;
  if (!s || !d)
    {
      c->oom = true;
      return;
    }
  c->src[c->n] = malloc (ns);
  c->dst[c->n] = malloc (nd);
  if (!c->src[c->n] || !c->dst[c->n])
    {
      free (c->src[c->n]);
      free (c->dst[c->n]);
      c->oom = true;
      return;
    }
  if (rel[0] == '/')
    snprintf (c->src[c->n], ns, "%s", rel);
  else
    snprintf (c->src[c->n], ns, "%s/%s", c->base, rel);
  snprintf (c->dst[c->n], nd, "%s/%s", c->prefix, base_name (rel));
  c->n++;
}

static void
copies_clear (Copies *c)
{
  for (int i = 0; i < c->n; i++)
    {
      free (c->src[i]);
      free (c->dst[i]);
    }
  free (c->src);
  free (c->dst);
}

/* A copy of G whose input paths point at copies under graph/in/NODE/, and
 * the list of files to copy there. */
static TgGraph *
graph_for_plan (const TgGraph *g, Copies *c, TgError *err)
{
  TgGraph *copy = tg_graph_copy (g);
  const char *base = tg_graph_base_dir (g);

  memset (c, 0, sizeof *c);
  c->base = base && base[0] ? base : ".";
  if (!copy)
    {
      tg_error_set (err, TG_ENOMEM, "", TG_MSG_OUT_OF_MEMORY);
      return NULL;
    }
  for (int node = 0; node < tg_graph_n_nodes (g); node++)
    {
      const TgNodeDesc *d = tg_graph_node_desc (g, node);
      snprintf (c->prefix, sizeof c->prefix, "in/%d", node);
      for (int k = 0; k < d->n_params; k++)
        {
          const TgParamValue *v = tg_graph_get_param_at (g, node, k);
          TgParamValue nv;
          if (d->params[k].type != TG_PARAM_INPUT_PATH || !v->s || !v->s[0])
            continue;
          add_copy (c, v->s);
          if (c->oom || tg_param_value_copy (&nv, v) < 0)
            {
              c->oom = true;
              break;
            }
          free (nv.s);
          nv.s = strdup (c->dst[c->n - 1]);
          if (!nv.s || tg_graph_set_param (copy, node, d->params[k].name, &nv, err) < 0)
            c->oom = c->oom || !nv.s;
          tg_param_value_clear (&nv);
        }
      if (d->input_files)
        {
          void *params = calloc (1, d->params_size ? d->params_size : 1);
          for (int k = 0; params && k < d->n_params; k++)
            tg_param_value_store (&d->params[k], tg_graph_get_param_at (g, node, k), params);
          if (params)
            d->input_files (params, add_copy, c);
          tg_params_struct_clear (d->params, d->n_params, params);
          free (params);
        }
    }
  if (c->oom)
    {
      tg_graph_free (copy);
      copies_clear (c);
      tg_error_set (err, TG_ENOMEM, "", TG_MSG_OUT_OF_MEMORY);
      return NULL;
    }
  return copy;
}

static int
copy_file (const char *src, const char *dst, TgError *err)
{
  char *data = NULL;
  size_t len = 0;
  int rc = tg__read_file (src, &data, &len, err);
  TgPart part = { data, len };

  if (rc < 0)
    return tg_error_set (err, rc, "", "cannot copy the input %s into the plan: %s", src,
                         err->message);
  rc = tg__write_parts_atomic (dst, &part, 1, err);
  free (data);
  return rc;
}

/* --- text of the folder ------------------------------------------------------------- */

static void
job_command (TgBuf *b, const TgPlan *p, int s, int j, const TgPlanWriteOptions *o)
{
  int ix, iy;

  tg_plan_job_tile (p, s, j, &ix, &iy);
  tg__buf_printf (b, "$TGRAPH eval %s -o . --tiles %d,%d --stage %d", TG__PLAN_GRAPH, p->nx, p->ny,
                  s);
  if (ix >= 0)
    tg__buf_printf (b, " --tile %d,%d", ix, iy);
  if (o->threads > 0)
    tg__buf_printf (b, " --threads %d", o->threads);
  tg__buf_puts (b, " --quiet");
}

/* Marks the stored nodes NODE reads, through nodes that are computed. */
static void
stored_inputs (const TgGraph *g, const TgPlan *p, int node, int stage, bool *mark, int depth)
{
  const TgNodeDesc *d = tg_graph_node_desc (g, node);

  if (depth > TG_GRAPH_MAX_DEPTH)
    return;
  for (int k = 0; k < d->n_inputs; k++)
    {
      int l = tg_graph_input_link (g, node, k), from;
      if (l < 0 || !tg_graph_node_reads_input (g, node, k))
        continue;
      from = tg_graph_link (g, l)->from_node;
      if (p->stored_after[from] >= 0 && p->stored_after[from] < stage)
        mark[from] = true;
      else
        stored_inputs (g, p, from, stage, mark, depth + 1);
    }
}

static json_object *
str_array_add (json_object *a, const char *fmt, int x, int y)
{
  char buf[128];
  snprintf (buf, sizeof buf, fmt, x, y);
  json_object_array_add (a, json_object_new_string (buf));
  return a;
}

static json_object *
job_json (const TgGraph *g, const TgPlan *p, int s, int j, const TgPlanWriteOptions *o,
          uint64_t mem)
{
  const TgStage *st = &p->stages[s];
  json_object *job = json_object_new_object (), *in = json_object_new_array ();
  json_object *out = json_object_new_array (), *tile = NULL;
  int n = tg_graph_n_nodes (g), ix, iy;
  bool *mark = calloc ((size_t) (n ? n : 1), sizeof *mark);
  TgBuf b;

  tg_plan_job_tile (p, s, j, &ix, &iy);
  if (ix >= 0)
    {
      tile = json_object_new_array ();
      json_object_array_add (tile, json_object_new_int (ix));
      json_object_array_add (tile, json_object_new_int (iy));
    }
  json_object_object_add (job, "tile", tile);
  tg__buf_init (&b);
  job_command (&b, p, s, j, o);
  json_object_object_add (job, "command", json_object_new_string (b.data ? b.data : ""));
  tg__buf_clear (&b);
  json_object_array_add (in, json_object_new_string (TG__PLAN_GRAPH));
  if (mark)
    {
      if (st->kind == TG_STAGE_EXPORT)
        {
          for (int node = 0; node < n; node++)
            if ((tg_graph_node_desc (g, node)->flags & TG_NODE_EXPORT))
              stored_inputs (g, p, node, s, mark, 0);
        }
      else if (st->kind != TG_STAGE_REDUCE)
        stored_inputs (g, p, st->node, s, mark, 0);
      for (int node = 0; node < n; node++)
        if (mark[node])
          str_array_add (in, "store/n%d/", node, 0);
    }
  switch (st->kind)
    {
    case TG_STAGE_STEP:
      if (st->step > 0)
        str_array_add (in, "store/n%d/b/", st->node, 0);
      if (ix >= 0)
        {
          char pat[64];
          snprintf (pat, sizeof pat, "store/n%d/b/%d_%d.*", st->node, ix, iy);
          json_object_array_add (out, json_object_new_string (pat));
          if (s == p->stored_after[st->node])
            {
              snprintf (pat, sizeof pat, "store/n%d/o*/%d_%d.grid", st->node, ix, iy);
              json_object_array_add (out, json_object_new_string (pat));
            }
        }
      break;
    case TG_STAGE_REDUCE:
      str_array_add (in, "store/n%d/b/", st->node, 0);
      str_array_add (out, "store/n%d/b/r.*", st->node, 0);
      break;
    case TG_STAGE_NODE:
      str_array_add (out, "store/n%d/o*/", st->node, 0);
      break;
    case TG_STAGE_STORE:
      {
        char pat[64];
        snprintf (pat, sizeof pat, "store/n%d/o*/%d_%d.grid", st->node, ix, iy);
        json_object_array_add (out, json_object_new_string (pat));
        break;
      }
    case TG_STAGE_EXPORT:
    default:
      if (ix >= 0)
        str_array_add (out, "tiles/%d_%d/", ix, iy);
      else
        json_object_array_add (out, json_object_new_string ("whole/"));
      break;
    }
  json_object_object_add (job, "inputs", in);
  json_object_object_add (job, "outputs", out);
  json_object_object_add (job, "memory_bytes", json_object_new_int64 ((int64_t) mem));
  free (mark);
  return job;
}

static char *
plan_json_text (const TgGraph *g, const TgPlan *p, const char *sha_hex,
                const TgPlanWriteOptions *o, uint64_t *stage_mem)
{
  const TgWorld *w = tg_graph_world_const (g);
  json_object *root = json_object_new_object (), *world = json_object_new_object ();
  json_object *tiles = json_object_new_array (), *windows = json_object_new_array ();
  json_object *stages = json_object_new_array (), *size = json_object_new_array ();
  TgBuf b;

  json_object_object_add (root, "format", json_object_new_string ("tgraph-plan"));
  json_object_object_add (root, "version", json_object_new_int (1));
  json_object_object_add (root, "tgraph_version", json_object_new_string (TG_VERSION_STRING));
  json_object_object_add (root, "graph", json_object_new_string (o->graph_name ? o->graph_name : ""));
  json_object_object_add (root, "graph_sha256", json_object_new_string (sha_hex));
  json_object_array_add (size, json_object_new_double (w->size_x));
  json_object_array_add (size, json_object_new_double (w->size_z));
  json_object_object_add (world, "size_m", size);
  json_object_object_add (world, "height_m", json_object_new_double (w->height_m));
  json_object_object_add (world, "resolution", json_object_new_int (w->resolution));
  json_object_object_add (world, "samples", json_object_new_int (p->full.full_h));
  json_object_object_add (world, "seed", json_object_new_int64 (w->seed));
  json_object_object_add (root, "world", world);
  json_object_array_add (tiles, json_object_new_int (p->nx));
  json_object_array_add (tiles, json_object_new_int (p->ny));
  json_object_object_add (root, "tiles", tiles);
  for (int iy = 0; iy < p->ny; iy++)
    for (int ix = 0; ix < p->nx; ix++)
      {
        TgTiling t = { p->nx, p->ny, ix, iy };
        TgRegion r = tg_tiling_window (&t, &p->full, ix, iy);
        json_object *o2 = json_object_new_object (), *a = json_object_new_array ();
        json_object_array_add (a, json_object_new_int (ix));
        json_object_array_add (a, json_object_new_int (iy));
        json_object_object_add (o2, "tile", a);
        a = json_object_new_array ();
        json_object_array_add (a, json_object_new_int (r.col0));
        json_object_array_add (a, json_object_new_int (r.row0));
        json_object_object_add (o2, "first_sample", a);
        a = json_object_new_array ();
        json_object_array_add (a, json_object_new_int (r.width));
        json_object_array_add (a, json_object_new_int (r.height));
        json_object_object_add (o2, "samples", a);
        json_object_array_add (windows, o2);
      }
  json_object_object_add (root, "windows", windows);
  for (int s = 0; s < p->n_stages; s++)
    {
      const TgStage *st = &p->stages[s];
      json_object *so = json_object_new_object (), *jobs = json_object_new_array ();
      char file[32];
      snprintf (file, sizeof file, "stages/%02d.txt", s);
      json_object_object_add (so, "stage", json_object_new_int (s));
      json_object_object_add (so, "kind", json_object_new_string (kind_names[st->kind]));
      if (st->kind != TG_STAGE_EXPORT)
        {
          json_object_object_add (so, "node", json_object_new_string (tg_graph_node_id (g, st->node)));
          json_object_object_add (so, "type",
                                  json_object_new_string (tg_graph_node_desc (g, st->node)->type));
        }
      if (st->kind == TG_STAGE_STEP || st->kind == TG_STAGE_REDUCE)
        json_object_object_add (so, "step", json_object_new_int (st->step));
      json_object_object_add (so, "file", json_object_new_string (file));
      stage_mem[s] = 0;
      for (int j = 0; j < st->n_jobs; j++)
        {
          uint64_t m = tg_plan_job_memory (p, g, s, j);
          stage_mem[s] = m > stage_mem[s] ? m : stage_mem[s];
          json_object_array_add (jobs, job_json (g, p, s, j, o, m));
        }
      json_object_object_add (so, "memory_bytes", json_object_new_int64 ((int64_t) stage_mem[s]));
      json_object_object_add (so, "jobs", jobs);
      json_object_array_add (stages, so);
    }
  json_object_object_add (root, "stages", stages);
  json_object_object_add (root, "stitch", json_object_new_string ("tgraph stitch DIR [-o OUT]"));
  tg__buf_init (&b);
  tg__json_emit (&b, root, 0);
  tg__buf_putc (&b, '\n');
  json_object_put (root);
  return tg__buf_steal (&b);
}

static const char run_parallel_sh[] =
  "#!/bin/sh\n"
  "# Runs the plan's stages in order with GNU parallel, on this machine or,\n"
  "# with --sshloginfile FILE (or PARALLEL_SSHLOGINFILE), on many; the plan\n"
  "# folder must then be shared at the same path.  Each stage keeps a\n"
  "# --joblog in logs/; run this again after a failure and only the jobs\n"
  "# that failed or never ran run again (--resume-failed).  Options go to\n"
  "# parallel (e.g. -j 4).  TGRAPH names the tgraph to run.\n"
  "set -eu\n"
  "cd \"$(dirname \"$0\")\"\n"
  ": \"${TGRAPH:=%s}\"\n"
  "export TGRAPH\n"
  "remote=\"\"\n"
  "if [ -n \"${PARALLEL_SSHLOGINFILE:-}\" ]; then\n"
  "  remote=\"--sshloginfile $PARALLEL_SSHLOGINFILE\"\n"
  "fi\n"
  "case \" $* \" in\n"
  "  *\" --sshloginfile \"* | *\" --slf \"* | *\" -S \"* | *\" --sshlogin \"*) remote=\"${remote:- }\" ;;\n"
  "esac\n"
  "mkdir -p logs\n"
  "for stage in stages/*.txt; do\n"
  "  name=$(basename \"$stage\" .txt)\n"
  "  echo \"stage $name: $(wc -l < \"$stage\") jobs\" >&2\n"
  "  # shellcheck disable=SC2086 # $remote holds options\n"
  "  parallel --halt soon,fail=1 --joblog \"logs/$name.joblog\" --resume-failed \\\n"
  "    ${remote:+--env TGRAPH --workdir \"$PWD\"} $remote \"$@\" < \"$stage\"\n"
  "done\n"
  "echo \"all stages done: now $TGRAPH stitch $PWD\" >&2\n";

static const char run_job_sh[] =
  "#!/bin/sh\n"
  "# Runs one line of a stage file: line N (1-based) or, in a Slurm array\n"
  "# task, line SLURM_ARRAY_TASK_ID + 1.  Usage: run-job.sh stages/NN.txt [N]\n"
  "set -eu\n"
  "[ -n \"${SLURM_JOB_ID:-}\" ] || cd \"$(dirname \"$0\")\"\n"
  ": \"${TGRAPH:=%s}\"\n"
  "export TGRAPH\n"
  "n=${2:-$((${SLURM_ARRAY_TASK_ID:-0} + 1))}\n"
  "line=$(sed -n \"${n}p\" \"$1\")\n"
  "if [ -z \"$line\" ]; then\n"
  "  echo \"run-job.sh: $1 has no line $n\" >&2\n"
  "  exit 2\n"
  "fi\n"
  "eval \"exec $line\"\n";

static char *
submit_slurm_text (const TgPlan *p, const uint64_t *stage_mem, const TgPlanWriteOptions *o)
{
  TgBuf b;

  tg__buf_init (&b);
  tg__buf_puts (&b,
    "#!/bin/sh\n"
    "# Submits the plan to Slurm: one job array per stage, each waiting for\n"
    "# the one before with --dependency=afterok, each task running its line\n"
    "# of the stage file (run-job.sh).  The folder must be shared by the\n"
    "# nodes at the same path.  Settings, from the environment or the plan:\n"
    "#   TG_SLURM_PARTITION, TG_SLURM_TIME, TG_SLURM_MEM (instead of each\n"
    "#   stage's estimate), TG_SLURM_CPUS, TG_SLURM_ARGS (more sbatch options).\n"
    "# Prints the last stage's job id.\n"
    "set -eu\n"
    "cd \"$(dirname \"$0\")\"\n");
  tg__buf_printf (&b, ": \"${TGRAPH:=%s}\"\nexport TGRAPH\n", o->tgraph ? o->tgraph : "tgraph");
  tg__buf_printf (&b, "partition=${TG_SLURM_PARTITION:-%s}\n", o->partition ? o->partition : "");
  tg__buf_printf (&b, "time=${TG_SLURM_TIME:-%s}\n", o->time ? o->time : "");
  tg__buf_printf (&b, "cpus=${TG_SLURM_CPUS:-%d}\n", o->threads > 0 ? o->threads : 1);
  tg__buf_puts (&b,
    "mkdir -p logs\n"
    "dep=\"\"\n"
    "submit () { # STAGE TASKS MEMORY_MB\n"
    "  mem=${TG_SLURM_MEM:-$3}\n");
  if (o->mem)
    tg__buf_printf (&b, "  mem=${TG_SLURM_MEM:-%s}\n", o->mem);
  tg__buf_puts (&b,
    "  # shellcheck disable=SC2086 # TG_SLURM_ARGS holds options\n"
    "  id=$(sbatch --parsable --chdir=\"$PWD\" --job-name=\"tgraph-$1\" --array=0-$(($2 - 1)) \\\n"
    "    --output=\"logs/slurm-$1-%a.out\" --mem=\"$mem\" --cpus-per-task=\"$cpus\" --export=ALL \\\n"
    "    ${partition:+--partition=\"$partition\"} ${time:+--time=\"$time\"} \\\n"
    "    ${dep:+--dependency=afterok:$dep} ${TG_SLURM_ARGS:-} run-job.sh \"stages/$1.txt\")\n"
    "  dep=${id%%;*}\n"
    "  echo \"stage $1: job $dep ($2 tasks, --mem=$mem)\" >&2\n"
    "}\n");
  for (int s = 0; s < p->n_stages; s++)
    tg__buf_printf (&b, "submit %02d %d %lluM\n", s, p->stages[s].n_jobs,
                    (unsigned long long) ((stage_mem[s] + (1u << 20) - 1) >> 20));
  tg__buf_puts (&b, "echo \"$dep\"\n");
  return tg__buf_steal (&b);
}

static int
write_text (const char *dir, const char *rel, const char *text, bool exec, TgError *err)
{
  char path[4300];
  TgPart part = { text, strlen (text) };
  int rc;

  snprintf (path, sizeof path, "%s/%s", dir, rel);
  rc = tg__write_parts_atomic (path, &part, 1, err);
  if (rc == 0 && exec && chmod (path, 0755) != 0)
    rc = tg_error_set (err, TG_EIO, "", "cannot make %s executable: %s", path, strerror (errno));
  return rc;
}

static bool
dir_is_empty (const char *dir)
{
  DIR *d = opendir (dir);
  struct dirent *e;
  bool empty = true;

  if (!d)
    return false;
  while (empty && (e = readdir (d)) != NULL)
    empty = strcmp (e->d_name, ".") == 0 || strcmp (e->d_name, "..") == 0;
  closedir (d);
  return empty;
}

/* Refuses a DIR that is not empty and holds no plan of this graph. */
static int
check_dir (const char *dir, const char *sha_hex, const TgPlan *p, TgError *err)
{
  TgPlanInfo info;
  TgError e2 = { 0 };
  char path[4300];
  struct stat st;

  if (stat (dir, &st) != 0)
    return 0;
  if (!S_ISDIR (st.st_mode))
    return tg_error_set (err, TG_EPATH, "", TG_MSG_PLAN_NOT_FOLDER, dir);
  snprintf (path, sizeof path, "%s/%s", dir, TG__PLAN_FILE);
  if (access (path, F_OK) != 0)
    {
      if (!dir_is_empty (dir))
        return tg_error_set (err, TG_EPATH, "", TG_MSG_PLAN_NOT_EMPTY, dir);
      return 0;
    }
  if (tg__plan_info_read (dir, &info, &e2) < 0)
    return tg_error_set (err, TG_EPARSE, "", "%s", e2.message);
  if (strcmp (info.sha_hex, sha_hex) != 0)
    return tg_error_set (err, TG_EINVAL, "", TG_MSG_PLAN_OTHER_GRAPH, dir, info.sha_hex, sha_hex);
  if (info.nx != p->nx || info.ny != p->ny)
    return tg_error_set (err, TG_EINVAL, "", TG_MSG_PLAN_OTHER_TILES, dir, info.nx, info.ny, p->nx,
                         p->ny);
  return 0;
}

int
tg_plan_write (const TgGraph *g, const TgPlan *p, const char *dir, const TgPlanWriteOptions *o,
               TgError *err)
{
  Copies copies;
  TgGraph *pg = graph_for_plan (g, &copies, err);
  char *graph_text = NULL, *plan_text = NULL, *slurm = NULL, sha_hex[65], path[4300];
  uint64_t *stage_mem = NULL;
  uint8_t sha[32];
  TgSha256 h;
  TgBuf b;
  int rc = 0;

  if (!pg)
    return err->code ? err->code : TG_ENOMEM;
  if ((rc = tg_graph_name_check (o->graph_name, err)) < 0)
    goto out;
  graph_text = tg_tgraph_save_string (pg, err);
  if (!graph_text)
    {
      rc = err->code ? err->code : TG_ENOMEM;
      goto out;
    }
  tg_sha256_init (&h);
  tg_sha256_update (&h, graph_text, strlen (graph_text));
  tg_sha256_final (&h, sha);
  for (int i = 0; i < 32; i++)
    snprintf (sha_hex + 2 * i, 3, "%02x", sha[i]);
  if ((rc = check_dir (dir, sha_hex, p, err)) < 0)
    goto out;
  /* Every input must be readable before anything is written. */
  for (int i = 0; i < copies.n; i++)
    if (access (copies.src[i], R_OK) != 0)
      {
        rc = tg_error_set (err, TG_EIO, "", "cannot read the input %s: %s", copies.src[i],
                           strerror (errno));
        goto out;
      }
  stage_mem = calloc ((size_t) p->n_stages + 1, sizeof *stage_mem);
  if (!stage_mem)
    {
      rc = tg_error_set (err, TG_ENOMEM, "", TG_MSG_OUT_OF_MEMORY);
      goto out;
    }
  plan_text = plan_json_text (g, p, sha_hex, o, stage_mem);
  slurm = plan_text ? submit_slurm_text (p, stage_mem, o) : NULL;
  if (!plan_text || !slurm)
    {
      rc = tg_error_set (err, TG_ENOMEM, "", TG_MSG_OUT_OF_MEMORY);
      goto out;
    }
  if ((rc = tg__mkdir_p (dir, err)) < 0)
    goto out;
  for (int i = 0; i < copies.n && rc == 0; i++)
    {
      snprintf (path, sizeof path, "%s/graph/%s", dir, copies.dst[i]);
      rc = copy_file (copies.src[i], path, err);
    }
  if (rc == 0)
    rc = write_text (dir, TG__PLAN_GRAPH, graph_text, false, err);
  for (int s = 0; s < p->n_stages && rc == 0; s++)
    {
      char rel[32];
      tg__buf_init (&b);
      for (int j = 0; j < p->stages[s].n_jobs; j++)
        {
          job_command (&b, p, s, j, o);
          tg__buf_putc (&b, '\n');
        }
      snprintf (rel, sizeof rel, "stages/%02d.txt", s);
      rc = b.oom ? tg_error_set (err, TG_ENOMEM, "", TG_MSG_OUT_OF_MEMORY)
                 : write_text (dir, rel, b.data ? b.data : "", false, err);
      tg__buf_clear (&b);
    }
  tg__buf_init (&b);
  tg__buf_printf (&b, run_parallel_sh, o->tgraph ? o->tgraph : "tgraph");
  if (rc == 0)
    rc = write_text (dir, "run-parallel.sh", b.data, true, err);
  tg__buf_clear (&b);
  tg__buf_init (&b);
  tg__buf_printf (&b, run_job_sh, o->tgraph ? o->tgraph : "tgraph");
  if (rc == 0)
    rc = write_text (dir, "run-job.sh", b.data, true, err);
  tg__buf_clear (&b);
  if (rc == 0)
    rc = write_text (dir, "submit-slurm.sh", slurm, true, err);
  if (rc == 0)
    {
      snprintf (path, sizeof path, "%s/logs", dir);
      rc = tg__mkdir_p (path, err);
    }
  /* Last: a folder with plan.json is a whole plan. */
  if (rc == 0)
    rc = write_text (dir, TG__PLAN_FILE, plan_text, false, err);
out:
  tg_graph_free (pg);
  copies_clear (&copies);
  free (graph_text);
  free (plan_text);
  free (slurm);
  free (stage_mem);
  return rc;
}
