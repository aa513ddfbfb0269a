/* The graph model: world settings, nodes with ids and parameters, links.
 *
 * The graph owns its nodes and links.  Node indices are positions in the
 * node list (the order of the .tgraph file), and error paths use them:
 * "nodes[3].params.octaves".  Front ends keep data the engine does not
 * read (the node's "ui" block, keys the loader did not know) as opaque
 * JSON text on the node or the graph, so a load/save round trip keeps it.
 */
#ifndef TGRAPH_GRAPH_H
#define TGRAPH_GRAPH_H

#include <stdbool.h>

#include "error.h"
#include "node.h"
#include "param.h"
#include "region.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct TgGraph TgGraph;

typedef struct
{
  int from_node, from_port; /* output port index of from_node */
  int to_node, to_port;     /* input port index of to_node */
} TgLink;

TgGraph *tg_graph_new (void);
void tg_graph_free (TgGraph *g);
/* A deep copy (the GUI evaluates a snapshot while the user edits). */
TgGraph *tg_graph_copy (const TgGraph *g);

TgWorld *tg_graph_world (TgGraph *g);
const TgWorld *tg_graph_world_const (const TgGraph *g);
/* Checks the world settings; err->path is "world.FIELD". */
int tg_world_check (const TgWorld *w, TgError *err);

/* Folder that input paths are relative to (the .tgraph file's). */
void tg_graph_set_base_dir (TgGraph *g, const char *dir);
const char *tg_graph_base_dir (const TgGraph *g);

/* The longest node id, in characters (UTF-8 code points), and the bytes
 * one can take with its terminating NUL. */
#define TG_NODE_ID_MAX 64
#define TG_NODE_ID_BYTES (4 * TG_NODE_ID_MAX + 1)

/* The longest chain of links (nodes one after another) the engine
 * evaluates: it walks chains recursively, and deeper ones are refused
 * with an error instead of running out of stack.  A .tgraph file holds
 * at most as many nodes (TG_TGRAPH_MAX_NODES). */
#define TG_GRAPH_MAX_DEPTH 4096

/* Adds a node with default parameters; returns its index or a negative
 * TG_E* (unknown type, empty or duplicate id, id with a '.'). */
int tg_graph_add_node (TgGraph *g, const char *id, const char *type, TgError *err);
/* Inserts a node with default parameters at INDEX (0 .. n_nodes): the
 * nodes from INDEX on move up one, and the links keep naming the same
 * nodes.  Undo puts a deleted node back where it was, so that the file
 * saves in its old order.  Returns INDEX or a negative TG_E*, as
 * tg_graph_add_node (also for an INDEX out of range). */
int tg_graph_insert_node (TgGraph *g, int index, const char *id, const char *type,
                          TgError *err);
/* Inserts at INDEX a copy of node NODE of SRC, as it is there: id, type,
 * parameter values, bypass, ui and kept keys (not its links). */
int tg_graph_insert_node_copy (TgGraph *g, int index, const TgGraph *src, int node,
                               TgError *err);
/* Removes the node and every link touching it; later indices shift down. */
void tg_graph_remove_node (TgGraph *g, int node);
int tg_graph_n_nodes (const TgGraph *g);
int tg_graph_find_node (const TgGraph *g, const char *id);
const char *tg_graph_node_id (const TgGraph *g, int node);
int tg_graph_set_node_id (TgGraph *g, int node, const char *id, TgError *err);
const TgNodeDesc *tg_graph_node_desc (const TgGraph *g, int node);

/* Sets parameter NAME after checking it; err->path "params.NAME". */
int tg_graph_set_param (TgGraph *g, int node, const char *name, const TgParamValue *v,
                        TgError *err);
/* Sets parameter NAME to V as it is, unchecked (an unset file path, a
 * value out of range): for undo, which puts back what a node had, and
 * a node may be unfinished.  Fails only on an unknown NAME (or out of
 * memory).  tg_graph_validate still checks the graph. */
int tg_graph_restore_param (TgGraph *g, int node, const char *name, const TgParamValue *v,
                            TgError *err);
/* Parses TEXT as parameter NAME's type (tg_param_value_parse) and sets
 * it: for `tgraph eval --set` and tests. */
int tg_graph_set_param_text (TgGraph *g, int node, const char *name, const char *text,
                             TgError *err);
/* Borrowed; NULL when NAME is not a parameter of the node. */
const TgParamValue *tg_graph_get_param (const TgGraph *g, int node, const char *name);
const TgParamValue *tg_graph_get_param_at (const TgGraph *g, int node, int param_index);

/* Links output FROM_PORT of FROM_NODE to input TO_PORT of TO_NODE, by
 * name.  Fails on a missing node or port, incompatible types, a link into
 * an input that already has one, or a link that would close a cycle.
 * Returns the new link's index (>= 0) or a negative TG_E*. */
int tg_graph_add_link (TgGraph *g, const char *from_node, const char *from_port,
                       const char *to_node, const char *to_port, TgError *err);
/* Inserts LINK (node and port indices) at position INDEX (0 .. n_links)
 * of the link list, the links from INDEX on moving up one; checked as
 * tg_graph_add_link checks (and the indices in range).  Returns INDEX or
 * a negative TG_E*.  With tg_graph_insert_node, undo restores a deleted
 * node's links in their order. */
int tg_graph_insert_link (TgGraph *g, int index, const TgLink *link, TgError *err);
void tg_graph_remove_link (TgGraph *g, int link);
int tg_graph_n_links (const TgGraph *g);
const TgLink *tg_graph_link (const TgGraph *g, int link);
/* The link feeding input TO_PORT of NODE, or -1. */
int tg_graph_input_link (const TgGraph *g, int node, int to_port);

/* Bypass, as Blender's mute or Houdini's bypass flag: a bypassed node
 * does not run; its first output ("main") is its main input passed
 * through unchanged, and its other outputs are zero grids.  The main input
 * is the first input whose type is the first output's.  A node with no
 * such input (a generator, an export) cannot be bypassed: validation
 * refuses it ("nodes[N].ui.bypass").  The .tgraph file keeps the flag in
 * the node's "ui" block ("bypass": true); the loader sets it here, so the
 * CLI and the app evaluate a file the same way. */
void tg_graph_set_node_bypass (TgGraph *g, int node, bool bypass);
bool tg_graph_node_bypass (const TgGraph *g, int node);
/* The input a bypassed node of type D passes through, or -1. */
int tg_node_desc_bypass_input (const TgNodeDesc *d);
/* How NODE evaluates: a bypassed node is local, whatever its type. */
TgLocality tg_graph_node_locality (const TgGraph *g, int node);
/* Whether evaluating NODE reads its input INPUT (a bypassed node reads
 * only the input it passes through). */
bool tg_graph_node_reads_input (const TgGraph *g, int node, int input);

/* Opaque JSON text kept for front ends (NULL to unset; copied). */
void tg_graph_set_node_ui (TgGraph *g, int node, const char *json);
const char *tg_graph_node_ui (const TgGraph *g, int node);
void tg_graph_set_node_extra (TgGraph *g, int node, const char *json);
const char *tg_graph_node_extra (const TgGraph *g, int node);
void tg_graph_set_extra (TgGraph *g, const char *json);
const char *tg_graph_extra (const TgGraph *g);

/* Full check before evaluation: world settings, every node as
 * tg_graph_check_node checks it, no cycle (the message names the nodes
 * on it), export paths not written twice.  Done once per change: a graph
 * that passed and has not been edited since (tg_graph_generation, the
 * world's fields) passes again without checking. */
int tg_graph_validate (const TgGraph *g, TgError *err);

/* What evaluating NODE needs: every parameter (tg_param_value_check),
 * the node's cross-parameter check, its required inputs linked.  PARAMS:
 * the node's parameter struct when the caller has filled one, else NULL.
 * Errors name the node: "nodes[N].params.NAME" and its id. */
int tg_graph_check_node (const TgGraph *g, int node, const void *params, TgError *err);

/* The cell size, in metres, of the world at its build resolution. */
double tg_world_cell_m (const TgWorld *w);

/* NODE's warning, from its descriptor's warn hook at the world's build
 * cell size: 1 with WARN filled (path "nodes[N].params.NAME", the node's
 * id), or 0.  A bypassed node, which does not run, has none. */
int tg_graph_node_warning (const TgGraph *g, int node, TgError *warn);

/* Whether tg_graph_validate passed on the graph as it is now. */
bool tg_graph_is_validated (const TgGraph *g);

/* A count that every edit of nodes, parameters or links raises (world
 * fields are edited in place and are not counted). */
unsigned long tg_graph_generation (const TgGraph *g);

/* Nodes in an order where every node follows its inputs.  ORDER has room
 * for n_nodes.  Fails with TG_ECYCLE naming the nodes on a cycle. */
int tg_graph_topo_order (const TgGraph *g, int *order, TgError *err);

#ifdef __cplusplus
}
#endif
#endif
