/* export.mesh: writes a mesh through the writer formats/ registered for
 * the chosen format ("glb", "obj", "ply").  The engine encodes nothing
 * itself; the file is staged and appears with the rest of the build. */
#include <tgraph/node.h>
#include <tgraph/param.h>

typedef struct
{
  const char *path;
  int format;
} MeshExportParams;

/* Also the writer names formats/ registers. */
static const char *const mesh_formats[] = { "glb", "obj", "ply", NULL };

static const TgParamDesc mesh_export_params[] = {
  TG_PARAM_OUTPUT_PATH (MeshExportParams, path, .label = N_("File"), .def_s = "terrain.glb",
                        .help = N_("Output file, relative to the output folder")),
  TG_PARAM_ENUM (MeshExportParams, format, .label = N_("Format"), .def_s = "glb",
                 .choices = mesh_formats,
                 .help = N_("glb: glTF 2.0 binary, one node per chunk; obj: "
                            "Wavefront OBJ text, one object per chunk; ply: "
                            "binary little-endian PLY, chunks concatenated")),
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

  if (p->format < 0 || p->format >= TG_N_ELEMENTS (mesh_formats) - 1)
    return tg_eval_fail (c, TG_EFORMAT, "params.format: unknown format %d", p->format);
  if (!p->path || !p->path[0])
    return tg_eval_fail (c, TG_EMISSING, "params.path: no output file given");
  if (!m)
    return tg_eval_fail (c, TG_EMISSING, "input 'mesh' has no mesh");
  /* The writer records its own message (naming the path) on failure. */
  return tg_eval_write_mesh (c, p->path, mesh_formats[p->format], m);
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
  .version = 1,
};
TG_NODE_REGISTER (export_mesh_desc);
