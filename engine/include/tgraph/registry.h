/* The catalogue of node types, built from the registered descriptors. */
#ifndef TGRAPH_REGISTRY_H
#define TGRAPH_REGISTRY_H

#include "node.h"

#ifdef __cplusplus
extern "C" {
#endif

/* NULL when TYPE is not a known node type. */
const TgNodeDesc *tg_registry_lookup (const char *type);

/* All node types, sorted by type name. */
int tg_registry_count (void);
const TgNodeDesc *tg_registry_get (int index);

/* Index of the named parameter / port in DESC, or -1. */
int tg_node_desc_find_param (const TgNodeDesc *desc, const char *name);
int tg_node_desc_find_input (const TgNodeDesc *desc, const char *name);
int tg_node_desc_find_output (const TgNodeDesc *desc, const char *name);

#ifdef __cplusplus
}
#endif
#endif
