/* The glTF 2.0 binary container builder (see glb-builder.h).
 *
 * The document is kept as json-c arrays in insertion order and emitted in
 * one pass by our own compact emitter (stable key order, shortest
 * round-trip numbers), so the bytes depend only on the calls made.
 * Binary views are only referenced until the write, which streams them
 * (through their encoder, a block at a time, when they have one).
 */
#include <locale.h>
#include <stdlib.h>
#include <string.h>

#include "glb-builder.h"
#include "tgformats-private.h"

#define GLB_MAGIC 0x46546C67u      /* "glTF" */
#define GLB_CHUNK_JSON 0x4E4F534Au /* "JSON" */
#define GLB_CHUNK_BIN 0x004E4942u  /* "BIN\0" */
/* Bytes an encoded view is converted in at a time. */
#define GLB_ENCODE_BLOCK 65536

typedef struct
{
  const void *data;
  void *owned;
  size_t bytes;
  size_t offset;
  size_t unit;         /* encoded views: ENCODE converts whole units */
  size_t src_unit;     /* the bytes of a unit in DATA */
  TgGlbEncode encode;  /* NULL: written as is */
} GlbView;

struct TgGlb
{
  char *generator;
  GlbView *views;
  int n_views, cap_views;
  size_t bin_len;        /* end of the last view (unpadded) */
  json_object *nodes, *meshes, *materials, *accessors, *buffer_views;
  json_object *images, *samplers, *textures;
  json_object *ext_used, *ext_required;
  size_t fallback_len;   /* EXT_meshopt_compression: the placeholder buffer's views */
  int *parent;           /* per node: its parent, -1 for a root, or LOD_OF_ANOTHER */
  int cap_child;
  bool oom;
};

/* parent[] of a node that is a lower level of detail of another one
 * (MSFT_lod): in no scene and no other node's child. */
enum
{
  LOD_OF_ANOTHER = -2
};

static int
fail_oom (TgGlb *g)
{
  g->oom = true;
  return TG_ENOMEM;
}

TgGlb *
tg_glb_new (const char *generator)
{
  TgGlb *g = calloc (1, sizeof *g);

  if (!g)
    return NULL;
  g->generator = strdup (generator ? generator : "Terrane " TG_VERSION_STRING);
  g->nodes = json_object_new_array ();
  g->meshes = json_object_new_array ();
  g->materials = json_object_new_array ();
  g->accessors = json_object_new_array ();
  g->buffer_views = json_object_new_array ();
  g->images = json_object_new_array ();
  g->samplers = json_object_new_array ();
  g->textures = json_object_new_array ();
  g->ext_used = json_object_new_array ();
  g->ext_required = json_object_new_array ();
  if (!g->generator || !g->nodes || !g->meshes || !g->materials || !g->accessors
      || !g->buffer_views || !g->images || !g->samplers || !g->textures || !g->ext_used
      || !g->ext_required)
    {
      tg_glb_free (g);
      return NULL;
    }
  return g;
}

void
tg_glb_free (TgGlb *g)
{
  if (!g)
    return;
  for (int i = 0; i < g->n_views; i++)
    free (g->views[i].owned);
  free (g->views);
  free (g->parent);
  free (g->generator);
  json_object_put (g->nodes);
  json_object_put (g->meshes);
  json_object_put (g->materials);
  json_object_put (g->accessors);
  json_object_put (g->buffer_views);
  json_object_put (g->images);
  json_object_put (g->samplers);
  json_object_put (g->textures);
  json_object_put (g->ext_used);
  json_object_put (g->ext_required);
  free (g);
}

/* --- small json helpers ---------------------------------------------------- */

/* Adds KEY = VAL to O; VAL NULL (failed allocation) marks the builder. */
static bool
put (TgGlb *g, json_object *o, const char *key, json_object *val)
{
  if (!val || json_object_object_add (o, key, val) != 0)
    {
      json_object_put (val);
      g->oom = true;
      return false;
    }
  return true;
}

static bool
put_int (TgGlb *g, json_object *o, const char *key, int64_t v)
{
  return put (g, o, key, json_object_new_int64 (v));
}

/* Appends O to ARR and returns its index. */
static int
append (TgGlb *g, json_object *arr, json_object *o)
{
  if (!o || json_object_array_add (arr, o) != 0)
    {
      json_object_put (o);
      return fail_oom (g);
    }
  return (int) json_object_array_length (arr) - 1;
}

/* The shortest decimal that reads back as the float V, as a double, so
 * that authored values (0.8, 0.5) are written as such and not as the
 * float's exact expansion.  Accessor bounds do not use this: they must
 * be the stored floats exactly. */
static double
short_float (float v)
{
  locale_t c_locale = newlocale (LC_NUMERIC_MASK, "C", (locale_t) 0);
  locale_t old = c_locale ? uselocale (c_locale) : (locale_t) 0;
  double d = v;
  char buf[32];

  for (int prec = 1; c_locale && prec <= 9; prec++)
    {
      snprintf (buf, sizeof buf, "%.*g", prec, (double) v);
      if ((float) strtod (buf, NULL) == v)
        {
          d = strtod (buf, NULL);
          break;
        }
    }
  if (c_locale)
    {
      uselocale (old);
      freelocale (c_locale);
    }
  return d;
}

static json_object *
float_array (TgGlb *g, const float *v, int n)
{
  json_object *a = json_object_new_array ();

  for (int i = 0; a && i < n; i++)
    if (json_object_array_add (a, json_object_new_double (short_float (v[i]))) != 0)
      {
        json_object_put (a);
        a = NULL;
      }
  if (!a)
    g->oom = true;
  return a;
}

static bool
valid_index (json_object *arr, int i)
{
  return i >= 0 && (size_t) i < json_object_array_length (arr);
}

/* --- views and accessors ----------------------------------------------------- */

/* A view of DATA (OWNED: freed with the builder, also on failure);
 * STRIDE > 0 gives it a byteStride; MESHOPT (or NULL) makes DATA the
 * compressed bytes of a view of the placeholder buffer. */
static int
add_view (TgGlb *g, const void *data, void *owned, size_t bytes, int target, size_t unit,
          size_t src_unit, TgGlbEncode encode, size_t stride, const TgGlbMeshopt *meshopt)
{
  if (!data || bytes == 0
      || (target != TG_GLB_TARGET_NONE && target != TG_GLB_ARRAY_BUFFER
          && target != TG_GLB_ELEMENT_ARRAY_BUFFER))
    {
      free (owned);
      return TG_EINVAL;
    }
  if (g->n_views == g->cap_views)
    {
      int cap = g->cap_views ? 2 * g->cap_views : 16;
      GlbView *v = realloc (g->views, (size_t) cap * sizeof *v);

      if (!v)
        {
          free (owned);
          return fail_oom (g);
        }
      g->views = v;
      g->cap_views = cap;
    }

  size_t offset = (g->bin_len + 3) & ~(size_t) 3;
  json_object *o = json_object_new_object ();

  if (!o)
    {
      free (owned);
      return fail_oom (g);
    }
  if (meshopt)
    {
      /* The view proper lies in the placeholder buffer 1; the BIN chunk
       * holds its compressed bytes, which the extension points at. */
      json_object *ext = json_object_new_object (), *mo = json_object_new_object ();
      size_t fb = (g->fallback_len + 3) & ~(size_t) 3;

      put_int (g, o, "buffer", 1);
      put_int (g, o, "byteOffset", (int64_t) fb);
      put_int (g, o, "byteLength", (int64_t) (meshopt->count * meshopt->stride));
      if (meshopt->mode == TG_GLB_MESHOPT_ATTRIBUTES)
        put_int (g, o, "byteStride", (int64_t) meshopt->stride);
      if (mo && ext)
        {
          put_int (g, mo, "buffer", 0);
          put_int (g, mo, "byteOffset", (int64_t) offset);
          put_int (g, mo, "byteLength", (int64_t) bytes);
          put_int (g, mo, "byteStride", (int64_t) meshopt->stride);
          put_int (g, mo, "count", (int64_t) meshopt->count);
          put (g, mo, "mode", json_object_new_string (
                 meshopt->mode == TG_GLB_MESHOPT_ATTRIBUTES ? "ATTRIBUTES" : "TRIANGLES"));
          put (g, ext, "EXT_meshopt_compression", mo);
          mo = NULL;
        }
      else
        g->oom = true;
      json_object_put (mo);
      g->fallback_len = fb + meshopt->count * meshopt->stride;
      if (target != TG_GLB_TARGET_NONE)
        put_int (g, o, "target", target);
      put (g, o, "extensions", ext);
      tg_glb_use_extension (g, "EXT_meshopt_compression", true);
    }
  else
    {
      put_int (g, o, "buffer", 0);
      put_int (g, o, "byteOffset", (int64_t) offset);
      put_int (g, o, "byteLength", (int64_t) bytes);
      if (stride)
        put_int (g, o, "byteStride", (int64_t) stride);
      if (target != TG_GLB_TARGET_NONE)
        put_int (g, o, "target", target);
    }
  int idx = append (g, g->buffer_views, o);
  if (idx < 0)
    {
      free (owned);
      return idx;
    }
  g->views[g->n_views++] = (GlbView) { data, owned, bytes, offset, unit, src_unit, encode };
  g->bin_len = offset + bytes;
  return idx;
}

int
tg_glb_add_view (TgGlb *g, const void *data, size_t bytes, int target)
{
  return add_view (g, data, NULL, bytes, target, 0, 0, NULL, 0, NULL);
}

int
tg_glb_add_view_copy (TgGlb *g, const void *data, size_t bytes, int target)
{
  if (!data || bytes == 0)
    return TG_EINVAL;
  void *copy = malloc (bytes);
  if (!copy)
    return fail_oom (g);
  memcpy (copy, data, bytes);
  return add_view (g, copy, copy, bytes, target, 0, 0, NULL, 0, NULL);
}

int
tg_glb_add_view_owned (TgGlb *g, void *data, size_t bytes, int target, size_t stride)
{
  if (stride && (stride % 4 != 0 || stride > 252))
    {
      free (data);
      return TG_EINVAL;
    }
  return add_view (g, data, data, bytes, target, 0, 0, NULL, stride, NULL);
}

int
tg_glb_add_view_meshopt (TgGlb *g, void *compressed, size_t bytes, int target,
                         const TgGlbMeshopt *meshopt)
{
  if (!meshopt || meshopt->count == 0
      || (meshopt->mode == TG_GLB_MESHOPT_ATTRIBUTES
          ? meshopt->stride % 4 != 0 || meshopt->stride > 252
          : (meshopt->stride != 2 && meshopt->stride != 4) || meshopt->count % 3 != 0))
    {
      free (compressed);
      return TG_EINVAL;
    }
  return add_view (g, compressed, compressed, bytes, target, 0, 0, NULL, 0, meshopt);
}

int
tg_glb_add_view_encoded (TgGlb *g, const void *data, size_t bytes, int target, size_t unit,
                         TgGlbEncode encode)
{
  return tg_glb_add_view_converted (g, data, bytes, target, unit, unit, encode);
}

int
tg_glb_add_view_converted (TgGlb *g, const void *data, size_t bytes, int target, size_t unit,
                           size_t src_unit, TgGlbEncode encode)
{
  if (!encode || unit == 0 || unit > GLB_ENCODE_BLOCK || bytes % unit != 0 || src_unit == 0)
    return TG_EINVAL;
  return add_view (g, data, NULL, bytes, target, unit, src_unit, encode, 0, NULL);
}

static int
type_components (const char *type)
{
  static const struct
  {
    const char *name;
    int n;
  } types[] = {
    { "SCALAR", 1 }, { "VEC2", 2 }, { "VEC3", 3 }, { "VEC4", 4 },
    { "MAT2", 4 },   { "MAT3", 9 }, { "MAT4", 16 },
  };
  for (size_t i = 0; type && i < sizeof types / sizeof types[0]; i++)
    if (strcmp (type, types[i].name) == 0)
      return types[i].n;
  return 0;
}

static json_object *
double_array (TgGlb *g, const double *v, int n)
{
  json_object *a = json_object_new_array ();

  for (int i = 0; a && i < n; i++)
    if (json_object_array_add (a, json_object_new_double (v[i])) != 0)
      {
        json_object_put (a);
        a = NULL;
      }
  if (!a)
    g->oom = true;
  return a;
}

int
tg_glb_add_accessor (TgGlb *g, int view, size_t byte_offset, int component_type,
                     const char *type, int64_t count, bool normalized, const double *min,
                     const double *max)
{
  int n = type_components (type);

  if (!valid_index (g->buffer_views, view) || n == 0 || count < 1)
    return TG_EINVAL;
  switch (component_type)
    {
    case TG_GLB_BYTE: case TG_GLB_UNSIGNED_BYTE: case TG_GLB_SHORT:
    case TG_GLB_UNSIGNED_SHORT: case TG_GLB_UNSIGNED_INT: case TG_GLB_FLOAT:
      break;
    default:
      return TG_EINVAL;
    }

  json_object *o = json_object_new_object ();
  if (!o)
    return fail_oom (g);
  put_int (g, o, "bufferView", view);
  if (byte_offset)
    put_int (g, o, "byteOffset", (int64_t) byte_offset);
  put_int (g, o, "componentType", component_type);
  if (normalized)
    put (g, o, "normalized", json_object_new_boolean (1));
  put_int (g, o, "count", count);
  put (g, o, "type", json_object_new_string (type));
  if (min)
    put (g, o, "min", double_array (g, min, n));
  if (max)
    put (g, o, "max", double_array (g, max, n));
  return append (g, g->accessors, o);
}

int
tg_glb_add_floats (TgGlb *g, const float *data, int64_t count, int n_components, int target,
                   bool with_bounds)
{
  const char *type = n_components == 1 ? "SCALAR"
                     : n_components == 2 ? "VEC2"
                     : n_components == 3 ? "VEC3"
                     : n_components == 4 ? "VEC4"
                     : n_components == 16 ? "MAT4"
                                          : NULL;
  if (!type || count < 1 || !data)
    return TG_EINVAL;

  double lo[16], hi[16];
  if (with_bounds)
    {
      /* Bounds in float, then widened: exactly the stored values. */
      float flo[16], fhi[16];
      for (int c = 0; c < n_components; c++)
        flo[c] = fhi[c] = data[c];
      for (int64_t i = 1; i < count; i++)
        for (int c = 0; c < n_components; c++)
          {
            float v = data[i * n_components + c];
            if (v < flo[c])
              flo[c] = v;
            if (v > fhi[c])
              fhi[c] = v;
          }
      for (int c = 0; c < n_components; c++)
        {
          lo[c] = flo[c];
          hi[c] = fhi[c];
        }
    }

  int view = tg_glb_add_view (g, data, (size_t) count * n_components * sizeof (float), target);
  if (view < 0)
    return view;
  return tg_glb_add_accessor (g, view, 0, TG_GLB_FLOAT, type, count, false,
                              with_bounds ? lo : NULL, with_bounds ? hi : NULL);
}

int
tg_glb_add_indices (TgGlb *g, const uint32_t *data, int64_t count)
{
  if (!data || count < 1)
    return TG_EINVAL;
  int view = tg_glb_add_view (g, data, (size_t) count * sizeof (uint32_t),
                              TG_GLB_ELEMENT_ARRAY_BUFFER);
  if (view < 0)
    return view;
  return tg_glb_add_accessor (g, view, 0, TG_GLB_UNSIGNED_INT, "SCALAR", count, false, NULL,
                              NULL);
}

/* --- materials, meshes, nodes ---------------------------------------------------- */

int
tg_glb_add_material (TgGlb *g, const char *name, const float base_color[4], float metallic,
                     float roughness, bool double_sided)
{
  static const float white[4] = { 1, 1, 1, 1 };
  json_object *o = json_object_new_object ();
  json_object *pbr = json_object_new_object ();

  if (!o || !pbr)
    {
      json_object_put (o);
      json_object_put (pbr);
      return fail_oom (g);
    }
  if (name)
    put (g, o, "name", json_object_new_string (name));
  put (g, pbr, "baseColorFactor", float_array (g, base_color ? base_color : white, 4));
  put (g, pbr, "metallicFactor", json_object_new_double (short_float (metallic)));
  put (g, pbr, "roughnessFactor", json_object_new_double (short_float (roughness)));
  put (g, o, "pbrMetallicRoughness", pbr);
  if (double_sided)
    put (g, o, "doubleSided", json_object_new_boolean (1));
  return append (g, g->materials, o);
}

int
tg_glb_add_image (TgGlb *g, int view, const char *mime_type)
{
  json_object *o;

  if (!valid_index (g->buffer_views, view) || !mime_type)
    return TG_EINVAL;
  if (!(o = json_object_new_object ()))
    return fail_oom (g);
  put_int (g, o, "bufferView", view);
  put (g, o, "mimeType", json_object_new_string (mime_type));
  return append (g, g->images, o);
}

int
tg_glb_add_sampler (TgGlb *g, int mag_filter, int min_filter, int wrap_s, int wrap_t)
{
  json_object *o = json_object_new_object ();

  if (!o)
    return fail_oom (g);
  put_int (g, o, "magFilter", mag_filter);
  put_int (g, o, "minFilter", min_filter);
  put_int (g, o, "wrapS", wrap_s);
  put_int (g, o, "wrapT", wrap_t);
  return append (g, g->samplers, o);
}

int
tg_glb_add_texture (TgGlb *g, int sampler, int image)
{
  json_object *o;

  if ((sampler != -1 && !valid_index (g->samplers, sampler)) || !valid_index (g->images, image))
    return TG_EINVAL;
  if (!(o = json_object_new_object ()))
    return fail_oom (g);
  if (sampler >= 0)
    put_int (g, o, "sampler", sampler);
  put_int (g, o, "source", image);
  return append (g, g->textures, o);
}

int
tg_glb_material_set_base_color_texture (TgGlb *g, int material, int texture)
{
  json_object *pbr = NULL, *info;

  if (!valid_index (g->materials, material) || !valid_index (g->textures, texture)
      || !json_object_object_get_ex (json_object_array_get_idx (g->materials, material),
                                     "pbrMetallicRoughness", &pbr))
    return TG_EINVAL;
  if (!(info = json_object_new_object ()))
    return fail_oom (g);
  put_int (g, info, "index", texture);
  return put (g, pbr, "baseColorTexture", info) ? 0 : TG_ENOMEM;
}

int
tg_glb_add_mesh (TgGlb *g, const char *name)
{
  json_object *o = json_object_new_object ();

  if (!o)
    return fail_oom (g);
  if (name)
    put (g, o, "name", json_object_new_string (name));
  put (g, o, "primitives", json_object_new_array ());
  return append (g, g->meshes, o);
}

int
tg_glb_add_primitive (TgGlb *g, int mesh, const TgGlbAttribute *attributes, int n_attributes,
                      int indices, int material, int mode)
{
  if (!valid_index (g->meshes, mesh) || n_attributes < 1 || !attributes
      || (indices != -1 && !valid_index (g->accessors, indices))
      || (material != -1 && !valid_index (g->materials, material)) || mode < 0 || mode > 6)
    return TG_EINVAL;
  for (int i = 0; i < n_attributes; i++)
    if (!attributes[i].name || !valid_index (g->accessors, attributes[i].accessor))
      return TG_EINVAL;

  json_object *prims = NULL;
  json_object_object_get_ex (json_object_array_get_idx (g->meshes, mesh), "primitives", &prims);
  json_object *p = json_object_new_object ();
  json_object *attrs = json_object_new_object ();
  if (!prims || !p || !attrs)
    {
      json_object_put (p);
      json_object_put (attrs);
      return fail_oom (g);
    }
  for (int i = 0; i < n_attributes; i++)
    put_int (g, attrs, attributes[i].name, attributes[i].accessor);
  put (g, p, "attributes", attrs);
  if (indices >= 0)
    put_int (g, p, "indices", indices);
  if (material >= 0)
    put_int (g, p, "material", material);
  if (mode != TG_GLB_TRIANGLES)
    put_int (g, p, "mode", mode);
  return append (g, prims, p);
}

int
tg_glb_add_node (TgGlb *g, const char *name, int mesh)
{
  if (mesh != -1 && !valid_index (g->meshes, mesh))
    return TG_EINVAL;

  int n = (int) json_object_array_length (g->nodes);
  if (n >= g->cap_child)
    {
      int cap = g->cap_child ? 2 * g->cap_child : 16;
      int *c = realloc (g->parent, (size_t) cap * sizeof *c);
      if (!c)
        return fail_oom (g);
      g->parent = c;
      g->cap_child = cap;
    }

  json_object *o = json_object_new_object ();
  if (!o)
    return fail_oom (g);
  if (name)
    put (g, o, "name", json_object_new_string (name));
  if (mesh >= 0)
    put_int (g, o, "mesh", mesh);
  int idx = append (g, g->nodes, o);
  if (idx >= 0)
    g->parent[idx] = -1;
  return idx;
}

int
tg_glb_node_set_trs (TgGlb *g, int node, const float translation[3], const float rotation[4],
                     const float scale[3])
{
  json_object *o = json_object_array_get_idx (g->nodes, node);

  if (!valid_index (g->nodes, node))
    return TG_EINVAL;
  if (translation)
    put (g, o, "translation", float_array (g, translation, 3));
  if (rotation)
    put (g, o, "rotation", float_array (g, rotation, 4));
  if (scale)
    put (g, o, "scale", float_array (g, scale, 3));
  return g->oom ? TG_ENOMEM : 0;
}

int
tg_glb_node_add_child (TgGlb *g, int parent, int child)
{
  if (!valid_index (g->nodes, parent) || !valid_index (g->nodes, child) || g->parent[child] != -1)
    return TG_EINVAL;
  /* glTF node hierarchies are trees: CHILD may not be PARENT or above it. */
  for (int a = parent; a >= 0; a = g->parent[a])
    if (a == child)
      return TG_EINVAL;

  json_object *p = json_object_array_get_idx (g->nodes, parent);
  json_object *children = NULL;
  if (!json_object_object_get_ex (p, "children", &children))
    {
      children = json_object_new_array ();
      if (!put (g, p, "children", children))
        return TG_ENOMEM;
    }
  if (json_object_array_add (children, json_object_new_int64 (child)) != 0)
    return fail_oom (g);
  g->parent[child] = parent;
  return 0;
}

/* --- extensions ------------------------------------------------------------------ */

static int
add_name_once (TgGlb *g, json_object *arr, const char *name)
{
  size_t n = json_object_array_length (arr);

  for (size_t i = 0; i < n; i++)
    if (strcmp (json_object_get_string (json_object_array_get_idx (arr, i)), name) == 0)
      return 0;
  return append (g, arr, json_object_new_string (name)) < 0 ? TG_ENOMEM : 0;
}

int
tg_glb_use_extension (TgGlb *g, const char *name, bool required)
{
  int rc;

  if (!name || !*name)
    return TG_EINVAL;
  rc = add_name_once (g, g->ext_used, name);
  if (rc == 0 && required)
    rc = add_name_once (g, g->ext_required, name);
  return rc;
}

int
tg_glb_node_add_extension (TgGlb *g, int node, const char *name, json_object *value)
{
  if (!valid_index (g->nodes, node) || !name || !*name || !value)
    {
      json_object_put (value);
      return TG_EINVAL;
    }

  json_object *o = json_object_array_get_idx (g->nodes, node);
  json_object *ext = NULL;
  if (!json_object_object_get_ex (o, "extensions", &ext))
    {
      ext = json_object_new_object ();
      if (!put (g, o, "extensions", ext))
        {
          json_object_put (value);
          return TG_ENOMEM;
        }
    }
  if (!put (g, ext, name, value))
    return TG_ENOMEM;
  return tg_glb_use_extension (g, name, false);
}

int
tg_glb_node_set_lods (TgGlb *g, int node, const int *lods, int n_lods, const float *coverage)
{
  json_object *ids, *lod, *extras, *cov, *o;

  if (!valid_index (g->nodes, node) || g->parent[node] == LOD_OF_ANOTHER || n_lods < 1 || !lods
      || !coverage)
    return TG_EINVAL;
  for (int k = 0; k < n_lods; k++)
    {
      json_object *ext = NULL;
      if (!valid_index (g->nodes, lods[k]) || lods[k] == node || g->parent[lods[k]] != -1)
        return TG_EINVAL;
      if (json_object_object_get_ex (json_object_array_get_idx (g->nodes, lods[k]), "extensions",
                                     &ext)
          && json_object_object_get_ex (ext, "MSFT_lod", NULL))
        return TG_EINVAL;
      for (int l = 0; l < k; l++)
        if (lods[l] == lods[k])
          return TG_EINVAL;
    }

  ids = json_object_new_array ();
  lod = json_object_new_object ();
  if (!ids || !lod)
    {
      json_object_put (ids);
      json_object_put (lod);
      return fail_oom (g);
    }
  for (int k = 0; k < n_lods; k++)
    if (json_object_array_add (ids, json_object_new_int (lods[k])) != 0)
      g->oom = true;
  if (!put (g, lod, "ids", ids))
    {
      json_object_put (lod);
      return TG_ENOMEM;
    }
  if (tg_glb_node_add_extension (g, node, "MSFT_lod", lod) < 0)
    return TG_ENOMEM;

  o = json_object_array_get_idx (g->nodes, node);
  if (!json_object_object_get_ex (o, "extras", &extras))
    {
      extras = json_object_new_object ();
      if (!put (g, o, "extras", extras))
        return TG_ENOMEM;
    }
  cov = float_array (g, coverage, n_lods + 1);
  if (!put (g, extras, "MSFT_screencoverage", cov))
    return TG_ENOMEM;
  for (int k = 0; k < n_lods; k++)
    g->parent[lods[k]] = LOD_OF_ANOTHER;
  return g->oom ? TG_ENOMEM : 0;
}

int
tg_glb_node_set_instancing (TgGlb *g, int node, int translation, int rotation, int scale)
{
  const char *names[3] = { "TRANSLATION", "ROTATION", "SCALE" };
  int acc[3] = { translation, rotation, scale };
  json_object *o = json_object_array_get_idx (g->nodes, node);

  if (!valid_index (g->nodes, node) || !json_object_object_get_ex (o, "mesh", NULL))
    return TG_EINVAL;
  for (int i = 0; i < 3; i++)
    if (acc[i] != -1 && !valid_index (g->accessors, acc[i]))
      return TG_EINVAL;
  if (translation < 0 && rotation < 0 && scale < 0)
    return TG_EINVAL;

  json_object *ext = json_object_new_object ();
  json_object *attrs = json_object_new_object ();
  if (!ext || !attrs)
    {
      json_object_put (ext);
      json_object_put (attrs);
      return fail_oom (g);
    }
  for (int i = 0; i < 3; i++)
    if (acc[i] >= 0)
      put_int (g, attrs, names[i], acc[i]);
  put (g, ext, "attributes", attrs);
  return tg_glb_node_add_extension (g, node, "EXT_mesh_gpu_instancing", ext);
}

json_object *
tg_glb_object (TgGlb *g, const char *kind, int index)
{
  json_object *arr = NULL;

  if (!kind)
    return NULL;
  if (strcmp (kind, "nodes") == 0)
    arr = g->nodes;
  else if (strcmp (kind, "meshes") == 0)
    arr = g->meshes;
  else if (strcmp (kind, "materials") == 0)
    arr = g->materials;
  else if (strcmp (kind, "accessors") == 0)
    arr = g->accessors;
  else if (strcmp (kind, "bufferViews") == 0)
    arr = g->buffer_views;
  return arr && valid_index (arr, index) ? json_object_array_get_idx (arr, index) : NULL;
}

/* --- output ------------------------------------------------------------------------ */

/* Adds ARR to ROOT under KEY when it has items (a new reference). */
static void
put_nonempty (TgGlb *g, json_object *root, const char *key, json_object *arr)
{
  if (json_object_array_length (arr) > 0)
    put (g, root, key, json_object_get (arr));
}

static char *
document_text (TgGlb *g)
{
  json_object *root = json_object_new_object ();
  json_object *asset = json_object_new_object ();

  if (!root || !asset)
    {
      json_object_put (root);
      json_object_put (asset);
      g->oom = true;
      return NULL;
    }
  put (g, asset, "generator", json_object_new_string (g->generator));
  put (g, asset, "version", json_object_new_string ("2.0"));
  put (g, root, "asset", asset);
  put_nonempty (g, root, "extensionsUsed", g->ext_used);
  put_nonempty (g, root, "extensionsRequired", g->ext_required);

  int n_nodes = (int) json_object_array_length (g->nodes);
  if (n_nodes > 0)
    {
      json_object *scenes = json_object_new_array ();
      json_object *scene = json_object_new_object ();
      json_object *roots = json_object_new_array ();
      if (scenes && scene && roots)
        {
          for (int i = 0; i < n_nodes; i++)
            if (g->parent[i] == -1 && json_object_array_add (roots, json_object_new_int (i)) != 0)
              g->oom = true;
          put (g, scene, "nodes", roots);
          roots = NULL;
          json_object_array_add (scenes, scene);
          scene = NULL;
          put_int (g, root, "scene", 0);
          put (g, root, "scenes", scenes);
          scenes = NULL;
        }
      else
        g->oom = true;
      json_object_put (scenes);
      json_object_put (scene);
      json_object_put (roots);
    }
  put_nonempty (g, root, "nodes", g->nodes);
  put_nonempty (g, root, "materials", g->materials);
  put_nonempty (g, root, "textures", g->textures);
  put_nonempty (g, root, "images", g->images);
  put_nonempty (g, root, "samplers", g->samplers);
  put_nonempty (g, root, "meshes", g->meshes);
  put_nonempty (g, root, "accessors", g->accessors);
  put_nonempty (g, root, "bufferViews", g->buffer_views);
  if (g->n_views > 0)
    {
      json_object *buffers = json_object_new_array ();
      json_object *buf = json_object_new_object ();
      if (buffers && buf)
        {
          put_int (g, buf, "byteLength", (int64_t) ((g->bin_len + 3) & ~(size_t) 3));
          json_object_array_add (buffers, buf);
          buf = NULL;
          if (g->fallback_len > 0)
            {
              /* EXT_meshopt_compression's placeholder: no data at all. */
              json_object *fb = json_object_new_object (), *ext = json_object_new_object ();
              json_object *mo = json_object_new_object ();
              if (fb && ext && mo)
                {
                  put_int (g, fb, "byteLength",
                           (int64_t) ((g->fallback_len + 3) & ~(size_t) 3));
                  put (g, mo, "fallback", json_object_new_boolean (1));
                  put (g, ext, "EXT_meshopt_compression", mo);
                  put (g, fb, "extensions", ext);
                  json_object_array_add (buffers, fb);
                }
              else
                {
                  g->oom = true;
                  json_object_put (fb);
                  json_object_put (ext);
                  json_object_put (mo);
                }
            }
          put (g, root, "buffers", buffers);
          buffers = NULL;
        }
      else
        g->oom = true;
      json_object_put (buffers);
      json_object_put (buf);
    }

  char *text = g->oom ? NULL : tg__json_to_text (root);
  json_object_put (root);
  if (!text)
    g->oom = true;
  return text;
}

static void
le32 (uint8_t *p, uint32_t v)
{
  p[0] = (uint8_t) v;
  p[1] = (uint8_t) (v >> 8);
  p[2] = (uint8_t) (v >> 16);
  p[3] = (uint8_t) (v >> 24);
}

/* Writes view V through its encoder, a block of whole units at a time. */
static bool
write_encoded (const GlbView *v, FILE *f, uint8_t *scratch)
{
  size_t block = GLB_ENCODE_BLOCK / v->unit * v->unit;

  for (size_t off = 0; off < v->bytes; off += block)
    {
      size_t n = v->bytes - off < block ? v->bytes - off : block;

      v->encode (scratch, (const uint8_t *) v->data + off / v->unit * v->src_unit, n);
      if (fwrite (scratch, 1, n, f) != n)
        return false;
    }
  return true;
}

int
tg_glb_write (TgGlb *g, FILE *f, TgError *err)
{
  static const uint8_t zeros[4] = { 0 };
  char *json;
  size_t json_len, json_pad, bin_pad;
  uint64_t total;
  uint8_t head[20];
  uint8_t *scratch = NULL;
  bool ok;

  if (g->oom || !(json = document_text (g)))
    return tg_error_set (err, TG_ENOMEM, "", "glb: out of memory building the document");

  json_len = strlen (json);
  json_pad = (4 - json_len % 4) % 4;
  bin_pad = (4 - g->bin_len % 4) % 4;
  total = 12 + 8 + (uint64_t) json_len + json_pad;
  if (g->n_views > 0)
    total += 8 + (uint64_t) g->bin_len + bin_pad;
  if (total > UINT32_MAX)
    {
      free (json);
      return tg_error_set (err, TG_ERANGE, "",
                           "glb: %llu bytes exceed the 4 GiB a .glb file can hold",
                           (unsigned long long) total);
    }

  /* Room to convert encoded views in, taken before anything is written. */
  for (int i = 0; i < g->n_views && !scratch; i++)
    if (g->views[i].encode && !(scratch = malloc (GLB_ENCODE_BLOCK)))
      {
        free (json);
        return tg_error_set (err, TG_ENOMEM, "", "glb: out of memory");
      }

  le32 (head, GLB_MAGIC);
  le32 (head + 4, 2);
  le32 (head + 8, (uint32_t) total);
  le32 (head + 12, (uint32_t) (json_len + json_pad));
  le32 (head + 16, GLB_CHUNK_JSON);
  ok = fwrite (head, 1, 20, f) == 20 && fwrite (json, 1, json_len, f) == json_len
       && fwrite ("   ", 1, json_pad, f) == json_pad;
  free (json);

  if (ok && g->n_views > 0)
    {
      size_t pos = 0;
      le32 (head, (uint32_t) (g->bin_len + bin_pad));
      le32 (head + 4, GLB_CHUNK_BIN);
      ok = fwrite (head, 1, 8, f) == 8;
      for (int i = 0; ok && i < g->n_views; i++)
        {
          const GlbView *v = &g->views[i];
          size_t gap = v->offset - pos;
          ok = fwrite (zeros, 1, gap, f) == gap;
          if (ok && v->encode)
            ok = write_encoded (v, f, scratch);
          else if (ok)
            ok = fwrite (v->data, 1, v->bytes, f) == v->bytes;
          pos = v->offset + v->bytes;
        }
      ok = ok && fwrite (zeros, 1, bin_pad, f) == bin_pad;
    }
  free (scratch);
  if (!ok || ferror (f))
    return tg_error_set (err, TG_EIO, "", "glb: write failed");
  return 0;
}
