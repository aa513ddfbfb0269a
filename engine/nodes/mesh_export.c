/* export.mesh: writes a mesh through the writer formats/ registered for
 * the chosen format ("glb", "obj", "ply").  The engine encodes nothing
 * itself; the file is staged and appears with the rest of the build.
 *
 * With a colour map on the optional `image` input the mesh is textured:
 * the glb embeds it (a PNG in its buffer, the material's
 * baseColorTexture); an OBJ gets NAME.mtl (map_Kd) and NAME_color.png
 * beside it and names the .mtl; a PLY gets the PNG and names it in a
 * `comment TextureFile` line (MeshLab's convention).  Every file is
 * staged like any export and listed in the manifest.  The map's alpha
 * is left out: the material is opaque. */
#include <stdlib.h>
#include <string.h>

#include <tgraph/node.h>
#include <tgraph/param.h>

#include "grid_util.h"

typedef struct
{
  const char *path;
  int format;
  int up;
  int lods;
  int compress;
} MeshExportParams;

/* Also the writer names formats/ registers. */
static const char *const mesh_formats[] = { "glb", "obj", "ply", NULL };
/* In the order of TgMeshUp. */
static const char *const mesh_up_axes[] = { "y", "z", NULL };
static const char *const mesh_lod_choices[] = { "all", "first", NULL };
/* In the order of TgMeshCompress. */
static const char *const mesh_compress_choices[] = { "none", "quantize", "meshopt", NULL };

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
                 .help = N_("One rule for every format: all (the default) writes every "
                            "level of detail of each tile, first only the full-resolution "
                            "level. glb keeps the levels apart with MSFT_lod; OBJ and PLY "
                            "have no levels, so there they overlap")),
  TG_PARAM_ENUM (MeshExportParams, compress, .label = N_("Compression"), .def_s = "none",
                 .choices = mesh_compress_choices,
                 .help = N_("glb only: none writes 32-bit floats; quantize writes "
                            "KHR_mesh_quantization (positions as 16-bit steps of one grid "
                            "over the whole mesh, normals 8-bit, UVs 16-bit); meshopt "
                            "compresses that with EXT_meshopt_compression, which the "
                            "reader must support (Blender 3.4 does not)")),
};

static const TgPortDesc mesh_export_inputs[] = {
  { .name = "mesh", .type = TG_TYPE_MESH, .label = N_("Mesh"), .help = N_("Mesh to write") },
  { .name = "image", .type = TG_TYPE_IMAGE, .label = N_("Colour map"), .optional = true,
    .help = N_("Colour map over the world for the mesh's material (PNG, 8 bits)") },
};

typedef struct
{
  const TgValue *in;
  const TgRegion *region;
  TgImage *img;
} TextureJob;

static void
texture_rows (void *user, int begin, int end)
{
  const TextureJob *job = user;
  size_t w = (size_t) job->region->width;

  for (int j = begin; j < end; j++)
    {
      const float *src = tg_value_row (job->in, job->region->row0 - job->in->region.row0 + j)
                         + (size_t) (job->region->col0 - job->in->region.col0) * 4;
      uint8_t *dst = (uint8_t *) job->img->data + (size_t) j * w * 3;
      for (size_t i = 0; i < w; i++)
        for (int k = 0; k < 3; k++)
          dst[3 * i + k] = (uint8_t) tg_quantise (src[4 * i + k], 255.0);
    }
}

/* The RGB of colour map IN over REGION as an 8-bit image (caller frees
 * its data), rows north first as the writers want, quantised as
 * export.image's png8 does; 0 or a TG_E* code. */
static int
texture_from (TgEvalCtx *c, const TgValue *in, const TgRegion *region, TgImage *img)
{
  TextureJob job = { in, region, img };
  int rc;

  if (!in->data || in->channels != 4)
    return tg_eval_fail (c, TG_ETYPE, "input 'image' has %d channels, expected 4", in->channels);
  if (!tg_region_contains (&in->region, region))
    return tg_eval_fail (c, TG_EINVAL, TG_MSG_INPUT_NOT_WORLD, "image");
  *img = (TgImage) { .width = region->width, .height = region->height, .channels = 3,
                     .bits = 8 };
  img->data = malloc ((size_t) region->width * (size_t) region->height * 3);
  if (!img->data)
    return tg_eval_fail (c, TG_ENOMEM, "out of memory for the %d x %d colour map",
                         region->width, region->height);
  rc = tg_eval_parallel (c, region->height, tg__grain_rows (region->width), texture_rows, &job);
  if (rc < 0)
    {
      free (img->data);
      img->data = NULL;
    }
  return rc;
}

/* PATH without its extension (the last '.' of its last component), then
 * SUFFIX, into OUT; *BASE points at its last component.  TG_EPATH when
 * it does not fit. */
static int
beside (char *out, size_t size, const char *path, const char *suffix, const char **base)
{
  const char *slash = strrchr (path, '/'), *dot = strrchr (path, '.');
  size_t stem = dot && dot > (slash ? slash : path) ? (size_t) (dot - path) : strlen (path);

  if (stem + strlen (suffix) + 1 > size)
    return TG_EPATH;
  memcpy (out, path, stem);
  strcpy (out + stem, suffix);
  slash = strrchr (out, '/');
  *base = slash ? slash + 1 : out;
  return 0;
}

/* OBJ and PLY: the colour map and (OBJ) its .mtl as files beside PATH,
 * named in PNG and MTL (1024 bytes each), which OPT's names point into. */
static int
write_side_files (TgEvalCtx *c, const char *path, const TgMesh *m, TgMeshWriteOptions *opt,
                  bool obj, char *png, char *mtl)
{
  int rc;

  if (beside (png, 1024, path, "_color.png", &opt->texture_file) < 0
      || beside (mtl, 1024, path, ".mtl", &opt->material_file) < 0)
    return tg_eval_fail (c, TG_EPATH, "params.path: too long for the files beside it");
  if ((rc = tg_eval_write_image (c, png, "png8", opt->texture)) < 0)
    return rc;
  if (!obj)
    {
      opt->material_file = NULL;
      return 0;
    }
  return tg_eval_write_mesh (c, mtl, "mtl", m, opt);
}

static int
mesh_export_eval (TgEvalCtx *c)
{
  const MeshExportParams *p = tg_eval_params (c);
  const TgValue *in = tg_eval_input (c, 0);
  const TgMesh *m = in ? tg_value_mesh (in) : NULL;
  const TgValue *color = tg_eval_input (c, 1);
  TgMeshWriteOptions opt = { .up = p->up == 1 ? TG_MESH_UP_Z : TG_MESH_UP_Y,
                             .first_lod_only = p->lods == 1,
                             .compress = (TgMeshCompress) p->compress };
  TgImage texture = { 0 };
  char png[1024], mtl[1024];
  int rc = 0;

  if (p->format < 0 || p->format >= TG_N_ELEMENTS (mesh_formats) - 1)
    return tg_eval_fail (c, TG_EFORMAT, "params.format: unknown format %d", p->format);
  if (!p->path || !p->path[0])
    return tg_eval_fail (c, TG_EMISSING, "params.path: %s", TG_MSG_NO_OUTPUT_FILE);
  if (!m)
    return tg_eval_fail (c, TG_EMISSING, TG_MSG_INPUT_NO_MESH, "mesh");
  if (color)
    {
      if ((rc = texture_from (c, color, tg_eval_region (c), &texture)) < 0)
        return rc;
      opt.texture = &texture;
      if (p->format != 0)
        rc = write_side_files (c, p->path, m, &opt, p->format == 1, png, mtl);
    }
  /* The writer records its own message (naming the path) on failure. */
  if (rc == 0)
    rc = tg_eval_write_mesh (c, p->path, mesh_formats[p->format], m, &opt);
  free (texture.data);
  return rc;
}

static const TgNodeDesc export_mesh_desc = {
  .type = "export.mesh",
  .category = TG_CATEGORY_OUTPUT,
  .label = N_("Export mesh"),
  .help = N_("Writes a mesh as glTF binary (.glb), OBJ or PLY, textured with a colour map "
             "when one is linked"),
  TG_INPUTS (mesh_export_inputs),
  TG_PARAMS (MeshExportParams, mesh_export_params),
  .locality = TG_LOCALITY_GLOBAL,
  .eval = mesh_export_eval,
  .flags = TG_NODE_EXPORT,
  /* 3: lods = first leaves the coarser levels out of a glb too.  4: its
   * texture PNG deflated in strips side by side (new bytes, same pixels). */
  .version = 4,
};
TG_NODE_REGISTER (export_mesh_desc);
