/* libtgraph: the Terrane engine.  One include for all of it. */
#ifndef TGRAPH_TGRAPH_H
#define TGRAPH_TGRAPH_H

#define TG_VERSION_STRING "0.1.0"
/* The .tgraph format version this engine writes and the newest it reads. */
#define TG_FORMAT_VERSION 2

#include "engine.h"
#include "error.h"
#include "graph.h"
#include "hash.h"
#include "field.h"
#include "io.h"
#include "memory.h"
#include "messages.h"
#include "mesh.h"
#include "node.h"
#include "param.h"
#include "points.h"
#include "region.h"
#include "registry.h"
#include "tiled.h"
#include "value.h"

#endif
