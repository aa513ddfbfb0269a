/* export.points: writes an instance list for a game engine or a DCC tool
 * through the instance-list writers formats/ registers: csv (one row per
 * instance, prototype by name), json, glb (one node per prototype with
 * EXT_mesh_gpu_instancing) and godot (a Godot 4 scene with a
 * MultiMeshInstance3D per prototype); the last two show a prototype mesh
 * read from a .glb, or else a marker cone, the same in both.  csv and
 * json are written in the frame and from the origin the parameters name
 * (TgPointsWriteOptions: Unity's, Unreal's, Houdini's or Blender's
 * axes and units; the world's centre or the corner an engine's terrain
 * starts at).  chunk_m > 0 groups the instances of every format by a
 * grid of chunk_m squares anchored at the world's north-west corner,
 * where the terrain mesh's chunks start (points.h).  The engine only
 * gathers the meshes; the bytes are the writer's.
 */
#include <stdlib.h>
#include <string.h>

#include <tgraph/mesh.h>
#include <tgraph/node.h>
#include <tgraph/param.h>
#include <tgraph/points.h>

/* Also the writer names formats/ registers. */
static const char *const format_choices[] = { "csv", "json", "glb", "godot", NULL };

/* In TgPointsFrame and TgPointsOrigin order. */
static const char *const frame_choices[] = { "unity", "unreal", "houdini", "blender", NULL };
static const char *const origin_choices[] = { "centre", "corner", NULL };

enum
{
  FMT_CSV,
  FMT_JSON,
  FMT_GLB,
  FMT_GODOT,
};

typedef struct
{
  const char *prototype;
  const char *path;
} MeshItem;

static const TgParamDesc mesh_item_params[] = {
  TG_PARAM_STRING (MeshItem, prototype, .label = N_("Prototype"), .def_s = "tree",
                   .help = N_("The prototype this mesh shows")),
  TG_PARAM_STRING (MeshItem, path, .label = N_("Mesh file"), .def_s = "",
                   .help = N_("A .glb file whose meshes make up the "
                              "prototype, relative to the graph file's folder")),
};

typedef struct
{
  const char *path;
  int format;
  int frame;
  int origin;
  double chunk_m;
  TgList meshes;
} ExportParams;

static const TgParamDesc export_params[] = {
  TG_PARAM_OUTPUT_PATH (ExportParams, path, .label = N_("File"), .def_s = "instances.csv",
                        .help = N_("Output file, relative to the output folder")),
  TG_PARAM_ENUM (ExportParams, format, .label = N_("Format"), .def_s = "csv",
                 .choices = format_choices,
                 .help = N_("csv: prototype,px,py,pz,qx,qy,qz,qw,sx,sy,sz rows; json: "
                            "the same as objects; glb: glTF with "
                            "EXT_mesh_gpu_instancing, one node per prototype; godot: a "
                            "Godot 4 .tscn with one MultiMeshInstance3D per prototype")),
  TG_PARAM_ENUM (ExportParams, frame, .label = N_("Coordinate frame"), .def_s = "unity",
                 .choices = frame_choices,
                 .help = N_("csv and json: the axes and units of the numbers (x is east in "
                            "all). unity: left-handed, +Y up, +Z north, metres (the world's); "
                            "unreal: left-handed, +Z up, +Y south, centimetres, csv rows "
                            "Name,Prototype,X,Y,Z,Pitch,Yaw,Roll,ScaleX,ScaleY,ScaleZ for a "
                            "DataTable; houdini: right-handed, +Y up, +Z south, metres; "
                            "blender: right-handed, +Z up, +Y north, metres")),
  TG_PARAM_ENUM (ExportParams, origin, .label = N_("Origin"), .def_s = "centre",
                 .choices = origin_choices,
                 .help = N_("csv and json: centre: the world's centre; corner: the corner "
                            "where the horizontal coordinates start at 0, where the engine's "
                            "terrain starts (south-west for unity and blender, north-west for "
                            "unreal and houdini)")),
  TG_PARAM_FLOAT (ExportParams, chunk_m, .label = N_("Chunk size"), .def = 0.0, .min = 0.0,
                  .max = 1e6, .soft_min = 0.0, .soft_max = 2048.0, .unit = "m",
                  .help = N_("0: one list.  Else the instances grouped by a grid of squares "
                             "this wide, anchored at the world's north-west corner like the "
                             "terrain mesh's chunks, named chunk_x<col>_z<row> (col from the "
                             "west, row from the north): a node per chunk holding a node per "
                             "prototype in glb and godot, a chunk column in csv, a chunk "
                             "table and field in json; rows chunk by chunk, list order "
                             "inside each")),
  TG_PARAM_LIST (ExportParams, meshes, MeshItem, mesh_item_params, .label = N_("Prototype meshes"),
                 .def_s = "", .min = 0, .max = 256,
                 .help = N_("glb and godot: meshes to show for prototypes (origin at "
                            "the base); the others get a marker cone standing on its base")),
};

static const TgPortDesc export_inputs[] = {
  { .name = "points", .type = TG_TYPE_POINTS, .label = N_("Instances"),
    .help = N_("Instances to write") },
};

static int
export_check (const void *params, TgError *err)
{
  const ExportParams *p = params;
  const MeshItem *items = p->meshes.items;

  for (int i = 0; i < p->meshes.n; i++)
    {
      char path[64];
      if (!items[i].prototype || !items[i].prototype[0])
        {
          snprintf (path, sizeof path, "params.meshes[%d].prototype", i);
          return tg_error_set (err, TG_EMISSING, path, TG_MSG_MESH_NO_PROTO, i);
        }
      if (!items[i].path || !items[i].path[0])
        {
          snprintf (path, sizeof path, "params.meshes[%d].path", i);
          return tg_error_set (err, TG_EMISSING, path, TG_MSG_PROTO_MESH_NO_FILE,
                               items[i].prototype);
        }
      for (int j = 0; j < i; j++)
        if (strcmp (items[j].prototype, items[i].prototype) == 0)
          {
            snprintf (path, sizeof path, "params.meshes[%d].prototype", i);
            return tg_error_set (err, TG_EINVAL, path, TG_MSG_PROTO_TWO_MESHES, items[i].prototype);
          }
    }
  return 0;
}

static int
export_eval (TgEvalCtx *c)
{
  const ExportParams *p = tg_eval_params (c);
  const TgPoints *pts = tg_value_points (tg_eval_input (c, 0));
  const MeshItem *items = p->meshes.items;
  const TgWorld *world = tg_eval_world (c);
  const TgMesh **meshes = NULL;
  TgPointsWriteOptions opt = { .frame = (TgPointsFrame) p->frame,
                               .origin = (TgPointsOrigin) p->origin,
                               .size_x = world->size_x, .size_z = world->size_z,
                               .chunk_m = p->chunk_m };
  int rc;

  if (p->format < 0 || p->format >= TG_N_ELEMENTS (format_choices) - 1)
    return tg_eval_fail (c, TG_EFORMAT, "params.format: unknown format %d", p->format);
  if (!p->path || !p->path[0])
    return tg_eval_fail (c, TG_EMISSING, "params.path: %s", TG_MSG_NO_OUTPUT_FILE);
  if (!pts)
    return tg_eval_fail (c, TG_ETYPE, TG_MSG_INPUT_NO_INSTANCES, "points");

  /* The glb and godot writers draw meshes; csv and json only list instances. */
  if ((p->format == FMT_GLB || p->format == FMT_GODOT) && p->meshes.n > 0)
    {
      meshes = calloc ((size_t) (pts->n_protos ? pts->n_protos : 1), sizeof (TgMesh *));
      if (!meshes)
        return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
      for (int i = 0; i < p->meshes.n; i++)
        {
          int k = 0;
          while (k < pts->n_protos && strcmp (pts->proto_names[k], items[i].prototype) != 0)
            k++;
          if (k == pts->n_protos)
            {
              char have[256] = "";
              size_t used = 0;
              for (int q = 0; q < pts->n_protos && used < sizeof have; q++)
                {
                  int w = snprintf (have + used, sizeof have - used, "%s%s", q ? ", " : "",
                                    pts->proto_names[q]);
                  used += w > 0 ? (size_t) w : 0;
                }
              free (meshes);
              return tg_eval_fail (c, TG_EUNKNOWN,
                                   "params.meshes[%d].prototype: no prototype \"%s\" in the "
                                   "instances (they have: %s)",
                                   i, items[i].prototype, pts->n_protos ? have : "none");
            }
          /* The loader records its own message naming the file. */
          if ((rc = tg_eval_load_mesh (c, items[i].path, &meshes[k])) < 0)
            {
              free (meshes);
              return rc;
            }
        }
    }
  rc = tg_eval_write_points (c, p->path, format_choices[p->format], pts,
                             (const TgMesh *const *) meshes, &opt);
  free (meshes);
  return rc;
}

static const TgNodeDesc export_points_desc = {
  .type = "export.points",
  .category = TG_CATEGORY_OUTPUT,
  .label = N_("Export instances"),
  .help = N_("Writes instances as CSV, JSON, glTF (GPU instancing) or a Godot 4 scene"),
  TG_INPUTS (export_inputs),
  TG_PARAMS (ExportParams, export_params),
  .locality = TG_LOCALITY_GLOBAL,
  .check = export_check,
  .eval = export_eval,
  .flags = TG_NODE_EXPORT,
  .version = 2,
};
TG_NODE_REGISTER (export_points_desc);
