/* The node catalogue.  Each node file puts a pointer to its descriptor in
 * the "tg_nodes" linker section (TG_NODE_REGISTER); the linker provides
 * the section's bounds, so no list of node types exists anywhere else.
 * The catalogue is sorted by type name once, on first use. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "tgraph/registry.h"

extern const TgNodeDesc *const __start_tg_nodes[] __attribute__ ((weak));
extern const TgNodeDesc *const __stop_tg_nodes[] __attribute__ ((weak));

static pthread_once_t registry_once = PTHREAD_ONCE_INIT;
static const TgNodeDesc **registry;
static int registry_n;

static int
compare_desc (const void *a, const void *b)
{
  const TgNodeDesc *const *x = a, *const *y = b;
  return strcmp ((*x)->type, (*y)->type);
}

static void
registry_build (void)
{
  int n = 0;

  if (__start_tg_nodes && __stop_tg_nodes)
    n = (int) (__stop_tg_nodes - __start_tg_nodes);
  registry = malloc (sizeof *registry * (size_t) (n > 0 ? n : 1));
  if (registry == NULL)
    return;
  for (int i = 0; i < n; i++)
    if (__start_tg_nodes[i])
      registry[registry_n++] = __start_tg_nodes[i];
  qsort (registry, (size_t) registry_n, sizeof *registry, compare_desc);
}

static void
registry_ensure (void)
{
  pthread_once (&registry_once, registry_build);
}

int
tg_registry_count (void)
{
  registry_ensure ();
  return registry_n;
}

const TgNodeDesc *
tg_registry_get (int index)
{
  registry_ensure ();
  if (index < 0 || index >= registry_n)
    return NULL;
  return registry[index];
}

const TgNodeDesc *
tg_registry_lookup (const char *type)
{
  int lo = 0, hi;

  registry_ensure ();
  if (type == NULL)
    return NULL;
  hi = registry_n - 1;
  while (lo <= hi)
    {
      int mid = (lo + hi) / 2;
      int c = strcmp (type, registry[mid]->type);
      if (c == 0)
        return registry[mid];
      if (c < 0)
        hi = mid - 1;
      else
        lo = mid + 1;
    }
  return NULL;
}

int
tg_node_desc_find_param (const TgNodeDesc *desc, const char *name)
{
  for (int i = 0; i < desc->n_params; i++)
    if (strcmp (desc->params[i].name, name) == 0)
      return i;
  return -1;
}

int
tg_node_desc_find_input (const TgNodeDesc *desc, const char *name)
{
  for (int i = 0; i < desc->n_inputs; i++)
    if (strcmp (desc->inputs[i].name, name) == 0)
      return i;
  return -1;
}

int
tg_node_desc_find_output (const TgNodeDesc *desc, const char *name)
{
  for (int i = 0; i < desc->n_outputs; i++)
    if (strcmp (desc->outputs[i].name, name) == 0)
      return i;
  return -1;
}

static const char *const category_names[TG_CATEGORY_COUNT] = {
  [TG_CATEGORY_OTHER] = N_("Other"),
  [TG_CATEGORY_INPUT] = N_("Input"),
  [TG_CATEGORY_GENERATORS] = N_("Generators"),
  [TG_CATEGORY_FILTERS] = N_("Filters"),
  [TG_CATEGORY_MATH] = N_("Math"),
  [TG_CATEGORY_SELECTORS] = N_("Selectors"),
  [TG_CATEGORY_EROSION] = N_("Erosion"),
  [TG_CATEGORY_TEXTURING] = N_("Texturing"),
  [TG_CATEGORY_SCATTER] = N_("Scatter"),
  [TG_CATEGORY_FIELDS] = N_("Fields"),
  [TG_CATEGORY_MESH] = N_("Mesh"),
  [TG_CATEGORY_OUTPUT] = N_("Output"),
};

const char *
tg_category_name (TgCategory c)
{
  return (unsigned) c < TG_CATEGORY_COUNT ? category_names[c] : category_names[0];
}

TgCategory
tg_category_at (int position)
{
  /* The enum is in menu order but for Other, which is 0 so that a
   * descriptor without a category falls into it, and comes last. */
  return (TgCategory) ((position + 1) % TG_CATEGORY_COUNT);
}

static const char *const locality_names[] = { "local", "apron", "global" };

const char *
tg_locality_name (TgLocality l)
{
  return (unsigned) l < 3 ? locality_names[l] : "?";
}

TgRegion
tg_node_apron_region (const TgNodeDesc *d, const void *params, const TgRegion *out)
{
  TgRegion in = tg_region_grow (out, d->apron && params ? d->apron (params, out->cell) : 0);

  return (d->flags & TG_NODE_APRON_IN_WORLD) ? tg_region_clip (&in) : in;
}
