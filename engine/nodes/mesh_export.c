/* export.mesh: writes a mesh through the writer formats/ registered for
 * the chosen format ("glb", "obj", "ply").  The engine encodes nothing
 * itself; the file is staged and appears with the rest of the build. */
#include <tgraph/node.h>
#include <tgraph/param.h>

typedef struct
{
  const char *path;
  int format;
  int up;
  int lods;
} MeshExportParams;

/* Also the writer names formats/ registers. */
static const char *const mesh_formats[] = { "glb", "obj", "ply", NULL };
/* In the order of TgMeshUp. */
static const char *const mesh_up_axes[] = { "y", "z", NULL };
static const char *const mesh_lod_choices[] = { "all", "first", NULL };

static const TgParamDesc mesh_export_params[] = {
  TG_PARAM_OUTPUT_PATH (MeshExportParams, path, .label = N_("File"), .def_s = "terrain.glb",
                        .help = N_("Output file, relative to the output folder")),
  TG_PARAM_ENUM (MeshExportParams, format, .label = N_("Format"), .def_s = "glb",
                 .choices = mesh_formats,
                 .help = N_("glb: glTF 2.0 binary, one node per chunk; obj: "
                            "Wavefront OBJ text, one object per chunk; ply: "
                            "binary little-endian PLY, chunks concatenated")),
  TG_PARAM_ENUM (MeshExportParams, up, .label = N_("Up axis"), .def_s = "y",
                 .choices = mesh_up_axes,
                 .help = N_("OBJ and PLY: y writes right-handed +Y up (north -Z), the "
                            "default of most importers; z writes right-handed +Z up "
                            "(north +Y) for Blender's PLY importer, which has no axis "
                            "option. glb is always +Y up, as glTF requires")),
  TG_PARAM_ENUM (MeshExportParams, lods, .label = N_("Levels of detail"), .def_s = "all",
                 .choices = mesh_lod_choices,
                 .help = N_("OBJ and PLY: all writes every level of detail of each tile "
                            "(they overlap); first writes only the full-resolution level. "
                            "glb keeps every level apart with MSFT_lod")),
};

static const TgPortDesc mesh_export_inputs[] = {
  { .name = "mesh", .type = TG_TYPE_MESH, .label = N_("Mesh"), .help = N_("Mesh to write") },
};

static int
mesh_export_eval (TgEvalCtx *c)
{
  const MeshExportParams *p = tg_eval_params (c);
  const TgValue *in = tg_eval_input (c, 0);
  const TgMesh *m = in ? tg_value_mesh (in) : NULL;
  TgMeshWriteOptions opt = { .up = p->up == 1 ? TG_MESH_UP_Z : TG_MESH_UP_Y,
                             .first_lod_only = p->lods == 1 };

  if (p->format < 0 || p->format >= TG_N_ELEMENTS (mesh_formats) - 1)
    return tg_eval_fail (c, TG_EFORMAT, "params.format: unknown format %d", p->format);
  if (!p->path || !p->path[0])
    return tg_eval_fail (c, TG_EMISSING, "params.path: no output file given");
  if (!m)
    return tg_eval_fail (c, TG_EMISSING, "input 'mesh' has no mesh");
  /* The writer records its own message (naming the path) on failure. */
  return tg_eval_write_mesh (c, p->path, mesh_formats[p->format], m, &opt);
}

static const TgNodeDesc export_mesh_desc = {
  .type = "export.mesh",
  .category = TG_CATEGORY_OUTPUT,
  .label = N_("Export mesh"),
  .help = N_("Writes a mesh as glTF binary (.glb), OBJ or PLY"),
  TG_INPUTS (mesh_export_inputs),
  TG_PARAMS (MeshExportParams, mesh_export_params),
  .locality = TG_LOCALITY_GLOBAL,
  .eval = mesh_export_eval,
  .flags = TG_NODE_EXPORT,
  .version = 2,
};
TG_NODE_REGISTER (export_mesh_desc);
