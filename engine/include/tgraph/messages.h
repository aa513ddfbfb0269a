/* The engine's messages that people read in the app, as one list.
 *
 * Each is a printf format marked N_(), so xgettext puts it into the app's
 * catalogue.  The engine stays free of gettext and formats them in English
 * (the CLI prints them so); the app finds which format a message came
 * from among tg_message_formats (), translates the format and puts the
 * arguments back (each argument translated the same way, so a phrase
 * such as "an integer in 1..16" inside "expected %s, got %s" is too).
 * Call sites use the macros: `tg_error_set (err, code, path, TG_MSG_NO_FILE)`.
 * Arguments are whole words or quoted text: a format whose conversion runs
 * into letters ("%sm") could not be found again.
 */
#ifndef TGRAPH_MESSAGES_H
#define TGRAPH_MESSAGES_H

#ifdef __cplusplus
extern "C" {
#endif

#ifndef N_
#define N_(s) (s)
#endif

/* Files a node reads. */
#define TG_MSG_NO_FILE N_ ("no file given")
#define TG_MSG_CANNOT_READ N_ ("cannot read \"%s\": %s")
/* Validation of a graph. */
#define TG_MSG_NEEDS_LINK N_ ("node \"%s\" (%s) needs a link into its \"%s\" input")
#define TG_MSG_CYCLE N_ ("the graph has a cycle: %s")
#define TG_MSG_CYCLE_PLAIN N_ ("the graph has a cycle")
#define TG_MSG_UNKNOWN_TYPE N_ ("unknown node type \"%s\"")
#define TG_MSG_UNKNOWN_PARAM N_ ("unknown parameter \"%s\" for %s")
#define TG_MSG_DID_YOU_MEAN N_ ("%s (did you mean \"%s\"?)")
/* Values of parameters: "expected <what>, got <value>". */
#define TG_MSG_EXPECTED_GOT N_ ("expected %s, got %s")
#define TG_MSG_A_NUMBER N_ ("a number")
#define TG_MSG_A_NUMBER_IN N_ ("a number in %s..%s")
#define TG_MSG_A_NUMBER_MIN N_ ("a number >= %s")
#define TG_MSG_A_NUMBER_MAX N_ ("a number <= %s")
#define TG_MSG_AN_INTEGER N_ ("an integer")
#define TG_MSG_AN_INTEGER_IN N_ ("an integer in %s..%s")
#define TG_MSG_AN_INTEGER_MIN N_ ("an integer >= %s")
#define TG_MSG_AN_INTEGER_MAX N_ ("an integer <= %s")
#define TG_MSG_TRUE_OR_FALSE N_ ("true or false")
#define TG_MSG_ONE_OF N_ ("one of %s")
#define TG_MSG_A_STRING N_ ("a string")
#define TG_MSG_A_PATH N_ ("a path string")
/* The world settings. */
#define TG_MSG_WORLD_WIDTH N_ ("expected a width in metres above 0 and up to 1e7, got %g")
#define TG_MSG_WORLD_DEPTH N_ ("expected a depth in metres above 0 and up to 1e7, got %g")
#define TG_MSG_WORLD_HEIGHT N_ ("expected a height in metres above 0 and up to 1e6, got %g")
#define TG_MSG_INT_RANGE N_ ("expected an integer in %d..%d, got %d")
/* Reading a .tgraph file (formats/). */
#define TG_MSG_SYNTAX N_ ("syntax error: %s%s")
#define TG_MSG_UNEXPECTED_EOF N_ ("unexpected end of file")
#define TG_MSG_NEWER_VERSION                                                        \
  N_ ("this file is format version %s, newer than this Terrane (%s) supports (up to " \
      "version %d); open it with a newer Terrane")

/* Memory, cancel and the world. */
#define TG_MSG_OUT_OF_MEMORY N_ ("out of memory")
#define TG_MSG_CANCELLED N_ ("cancelled")
#define TG_MSG_WORLD_NO_EXTENT N_ ("the world has no extent")
/* What a node finds on its inputs. */
#define TG_MSG_INPUT_NO_DATA N_ ("input '%s' has no data")
#define TG_MSG_INPUT_CHANNELS N_ ("input '%s' has %d channels, expected %d")
#define TG_MSG_INPUT_NOT_COVERED N_ ("input '%s' does not cover the region being computed")
#define TG_MSG_INPUT_NO_FIELD N_ ("input '%s' has no field")
#define TG_MSG_INPUT_NO_INSTANCES N_ ("input '%s' carries no instances")
#define TG_MSG_INPUT_NO_MESH N_ ("input '%s' has no mesh")
#define TG_MSG_INPUT_ONE_CHANNEL N_ ("input '%s' must be a one-channel grid")
#define TG_MSG_INPUT_RGBA N_ ("input '%s' must be an RGBA image (it has %d channels)")
#define TG_MSG_INPUTS_REGIONS_DIFFER N_ ("inputs '%s' and '%s' cover different regions")
#define TG_MSG_INPUT_NOT_WORLD N_ ("input '%s' does not cover the world")
#define TG_MSG_MASK_HEIGHT_ONE_CHANNEL N_ ("the mask and height inputs must be one-channel grids")
#define TG_MSG_SLOPE_NEEDS_HEIGHT N_ ("a slope limit needs the height input linked")
/* Files read and written (the place is the parameter: "params.path: ..."). */
#define TG_MSG_NO_OUTPUT_FILE N_ ("no output file given")
#define TG_MSG_NO_OUTPUT_PREFIX N_ ("no output file prefix given")
#define TG_MSG_NO_HEIGHTMAP_FILE N_ ("no heightmap file given")
#define TG_MSG_NO_IMAGE_FILE N_ ("no image file given")
#define TG_MSG_CANNOT_READ_PLAIN N_ ("cannot read \"%s\"")
#define TG_MSG_HEIGHTMAP_EMPTY N_ ("heightmap \"%s\" is empty or has %d channels")
#define TG_MSG_IMAGE_EMPTY N_ ("image \"%s\" is empty or has %d channels")
#define TG_MSG_HEIGHTMAP_BITS N_ ("heightmap \"%s\": %d-bit samples are not supported")
#define TG_MSG_IMAGE_BITS N_ ("image \"%s\": %d-bit samples are not supported")
#define TG_MSG_CANNOT_OPEN N_ ("cannot open %s: %s")
#define TG_MSG_CANNOT_READ_FILE N_ ("cannot read %s: %s")
#define TG_MSG_IS_FOLDER N_ ("it is a folder")
#define TG_MSG_IS_FIFO N_ ("it is a FIFO, not a regular file")
#define TG_MSG_NOT_REGULAR N_ ("not a regular file")
#define TG_MSG_TOO_LARGE_GRAPH N_ ("%s is too large to be a graph file")
#define TG_MSG_OOM_READING N_ ("out of memory reading %s")
#define TG_MSG_OOM_READING_Q N_ ("out of memory reading \"%s\"")
#define TG_MSG_SAVE_NOT_FILE_NAME N_ ("cannot save to %s: not a file name")
#define TG_MSG_CANNOT_SAVE N_ ("cannot save %s: %s")
#define TG_MSG_NOT_PNG N_ ("%s is not a PNG file")
#define TG_MSG_WRITING N_ ("writing \"%s\": %s")
#define TG_MSG_NO_READER N_ ("no reader for \"%s\" files (%s)")
#define TG_MSG_NO_MESH_READER N_ ("no mesh reader for \"%s\" files (%s)")
#define TG_MSG_CANNOT_OPEN_PLAIN N_ ("cannot open \"%s\"")
#define TG_MSG_NOT_TILE_IMAGE N_ ("\"%s\" is not a tile image")
#define TG_MSG_BAD_TILE_HEADER N_ ("\"%s\": bad tile image header")
#define TG_MSG_TILE_TRUNCATED N_ ("\"%s\": tile image truncated or too long")
#define TG_MSG_SLICE_SIZE N_ ("slice %d (\"%s\") is %dx%d, the first is %dx%d")
#define TG_MSG_EXPORT_PATH_TOO_LONG N_ ("export path too long")
#define TG_MSG_PATH_TOO_LONG N_ ("too long")
/* Building a graph: node ids, links, bypass, exports, depth. */
#define TG_MSG_WORLD_TOO_DEEP \
  N_ ("the world is too deep for its width: more than %d samples along Z")
#define TG_MSG_ID_NOT_UTF8 N_ ("a node id must be valid UTF-8 (byte %zu is 0x%02x)")
#define TG_MSG_ID_TOO_LONG N_ ("a node id is at most %d characters; this one has %zu")
#define TG_MSG_ID_INVALID \
  N_ ("a node id must be non-empty and may not contain '.', quotes or control " \
      "characters: \"%s\"")
#define TG_MSG_DUPLICATE_ID N_ ("duplicate node id \"%s\"")
#define TG_MSG_DUPLICATE_ID_AT N_ ("duplicate node id \"%s\" (already used by nodes[%d])")
#define TG_MSG_NO_NODE N_ ("no node \"%s\"")
#define TG_MSG_NO_OUTPUT_PORT N_ ("node \"%s\" (%s) has no output \"%s\"")
#define TG_MSG_NO_INPUT_PORT N_ ("node \"%s\" (%s) has no input \"%s\"")
#define TG_MSG_TYPES_MISMATCH N_ ("cannot connect %s.%s (%s) to %s.%s (%s): the types do not match")
#define TG_MSG_CANNOT_CONNECT N_ ("cannot connect %s.%s (%s) to %s.%s (%s)")
#define TG_MSG_ALREADY_LINKED N_ ("input %s.%s already has a link")
#define TG_MSG_ALREADY_FED N_ ("input \"%s.%s\" is already fed by links[%d]")
#define TG_MSG_WOULD_CYCLE N_ ("this link would close a cycle: %s")
#define TG_MSG_BYPASS_NEEDS_LINK \
  N_ ("node \"%s\" (%s) is bypassed and needs a link into its \"%s\" input to pass " \
      "through")
#define TG_MSG_BYPASS_NO_OUTPUT \
  N_ ("node \"%s\" (%s) cannot be bypassed: it has no output to pass an input through " \
      "to")
#define TG_MSG_BYPASS_NO_INPUT \
  N_ ("node \"%s\" (%s) cannot be bypassed: it has no %s input to pass through to its " \
      "\"%s\" output")
#define TG_MSG_BELOW_CELLS \
  N_ ("%s %s m is smaller than %s of the world's %s m grid: the detail is lost at this " \
      "resolution (%s m or more shows it)")
#define TG_MSG_ONE_CELL N_ ("one cell")
#define TG_MSG_TWO_CELLS N_ ("two cells")
#define TG_MSG_ALSO_WRITTEN N_ ("\"%s\" is also written by node \"%s\"")
#define TG_MSG_NEEDS_FOLDER N_ ("\"%s\" needs a folder \"%s\", which node \"%s\" writes as a file")
#define TG_MSG_WRITTEN_AS_FILE \
  N_ ("\"%s\" is written as a file, but node \"%s\" needs a folder of that name for " \
      "\"%s\"")
#define TG_MSG_CHAIN_TOO_DEEP N_ ("a chain of more than %d linked nodes is too deep to evaluate")
#define TG_MSG_NODE_FAILED N_ ("node \"%s\" (%s): %s")
#define TG_MSG_BYPASSED_NO_INPUT N_ ("is bypassed but has no input to pass through")
#define TG_MSG_PRODUCED_NO_OUTPUT N_ ("produced no \"%s\" output")
/* Parameter values (the codec). */
#define TG_MSG_NOT_UTF8 N_ ("the text is not valid UTF-8 (byte %zu is 0x%02x)")
#define TG_MSG_EXPECTED_TYPE_VALUE N_ ("expected a %s value")
#define TG_MSG_REQUIRED_MISSING N_ ("required parameter is missing")
#define TG_MSG_PATH_REQUIRED N_ ("a file path is required")
#define TG_MSG_OUTPUT_NAME_REQUIRED N_ ("an output file name is required")
#define TG_MSG_EXPORT_PATH_RELATIVE \
  N_ ("export path \"%s\" must be relative to the output folder (no absolute path, no " \
      "\"..\")")
#define TG_MSG_CURVE_TWO_POINTS N_ ("a curve needs at least 2 points, got %d")
#define TG_MSG_CURVE_X_INCREASE N_ ("curve x must increase from point to point: %s follows %s")
#define TG_MSG_ITEMS_COUNT N_ ("expected %s to %s items, got %d")
#define TG_MSG_ITEMS_FIELDS N_ ("items have %d fields, expected %d")
#define TG_MSG_FIELD_VALUE N_ ("expected field=value, got %s")
#define TG_MSG_UNKNOWN_FIELD N_ ("unknown field of a %s item")
/* Reading a .tgraph file (formats/). */
#define TG_MSG_NUL_IN_STRING N_ ("the string contains a NUL character")
#define TG_MSG_EXPECTED_PARAMS_OBJECT N_ ("expected an object of parameters, got %s")
#define TG_MSG_UNKNOWN_PARAM_OF N_ ("unknown parameter of %s")
#define TG_MSG_PARAM_V1_NAME \
  N_ ("unknown parameter of %s (\"%s\" is its format version 1 name; version %d calls " \
      "it \"%s\")")
#define TG_MSG_MISSING_REQUIRED_PARAM N_ ("missing required parameter of %s")
#define TG_MSG_EXPECTED_NODE_OBJECT N_ ("expected a node object, got %s")
#define TG_MSG_MISSING_NODE_ID N_ ("missing node id")
#define TG_MSG_EMPTY_NODE_ID N_ ("the node id is empty")
#define TG_MSG_MISSING_NODE_TYPE N_ ("missing node type")
#define TG_MSG_EXPECTED_NODE_PORT N_ ("expected \"node.port\", got %s")
#define TG_MSG_MISSING_FROM N_ ("missing \"from\"")
#define TG_MSG_MISSING_TO N_ ("missing \"to\"")
#define TG_MSG_EXPECTED_OBJECT N_ ("expected an object, got %s")
#define TG_MSG_MISSING_WORLD_SETTING N_ ("missing world setting")
#define TG_MSG_EXPECTED_XZ N_ ("expected [x, z] in metres, got %s")
#define TG_MSG_EXPECTED_SIZE N_ ("expected a size > 0 metres, got %s")
#define TG_MSG_EXPECTED_HEIGHT N_ ("expected a height > 0 metres, got %s")
#define TG_MSG_NO_UPGRADE N_ ("no upgrade from format version %d is known")
#define TG_MSG_NOT_TGRAPH N_ ("expected \"tgraph\", got %s (is this a .tgraph file?)")
#define TG_MSG_MISSING_VERSION N_ ("missing format version")
#define TG_MSG_EXPECTED_VERSION_INT N_ ("expected an integer format version, got %s")
#define TG_MSG_EXPECTED_VERSION_RANGE N_ ("expected a format version from %d to %d, got %s")
#define TG_MSG_EXPECTED_TOP_OBJECT N_ ("expected a JSON object at the top level, got %s")
#define TG_MSG_MISSING_WORLD N_ ("missing world settings")
#define TG_MSG_MISSING_NODES N_ ("missing node list")
#define TG_MSG_EXPECTED_NODES_ARRAY N_ ("expected an array of nodes, got %s")
#define TG_MSG_TOO_MANY_NODES N_ ("a graph may have at most %d nodes, this one has %zu")
#define TG_MSG_EXPECTED_LINKS_ARRAY N_ ("expected an array of links, got %s")
#define TG_MSG_NO_FILE_TO_LOAD N_ ("no file to load")
#define TG_MSG_GRAPH_TEXT_TOO_LARGE N_ ("the graph text is too large")
#define TG_MSG_NO_FILE_TO_SAVE N_ ("no file name to save to")
#define TG_MSG_UNKNOWN_WORLD_SETTING N_ ("unknown world setting")
#define TG_MSG_NO_OUTPUT_LISTED N_ ("node \"%s\" (%s) has no output \"%s\"%s; its outputs: %s")
#define TG_MSG_NO_INPUT_LISTED N_ ("node \"%s\" (%s) has no input \"%s\"%s; its inputs: %s")
/* A node's check of its parameters. */
#define TG_MSG_MAX_BELOW_MIN N_ ("maximum (%g) is below minimum (%g)")
#define TG_MSG_MAX_SLOPE_BELOW_MIN N_ ("maximum (%g deg) is below minimum (%g deg)")
#define TG_MSG_INPUT_HIGH_EQUALS_LOW N_ ("input high must differ from input low (both %g)")
#define TG_MSG_HIGHEST_BELOW_LOWEST N_ ("the highest terrain (%g m) is below the lowest (%g m)")
#define TG_MSG_YAW_RANGE N_ ("the yaw range ends (%g deg) before it starts (%g deg)")
#define TG_MSG_SCALE_RANGE N_ ("the scale range ends (%g) below where it starts (%g)")
#define TG_MSG_CURVE_NEEDS_POINT N_ ("the curve needs at least one point")
#define TG_MSG_CURVE_POINT_X N_ ("point %d: x must be greater than the previous point's")
#define TG_MSG_MUST_BE_ABOVE_0 N_ ("must be above 0, got %g")
#define TG_MSG_SIZES_ABOVE_0 N_ ("every size must be above 0 (smallest is %g)")
#define TG_MSG_ROUNDING_TOO_LARGE N_ ("rounding %g m is more than half the smallest size (%g m)")
#define TG_MSG_NORMAL_ZERO N_ ("the normal must not be 0")
#define TG_MSG_SCALE_AXIS_ZERO N_ ("scale along %s must not be 0 (got %g)")
#define TG_MSG_WIDTH_OVER_MAX N_ ("width %g m is over the maximum width %g m")
#define TG_MSG_WEATHERING_CONVERGE \
  N_ ("weathering %g m needs mode \"converge\": its fallen rock settles over the whole world")
#define TG_MSG_STEPS_TOO_MANY N_ ("expected at most 100000 steps (duration_yr / dt_yr), got %.6g")
#define TG_MSG_CELL_ABOVE_0 N_ ("cell size must be above 0, got %g")
#define TG_MSG_MAX_ABOVE_MIN_AXIS N_ ("max_m must be above min_m along %s (%g <= %g)")
#define TG_MSG_CELLS_ALONG N_ ("%.0f cells along %s, at most %d; raise cell_m")
#define TG_MSG_CELLS_IN_BOX \
  N_ ("%.3g cells in the box, at most %.3g; raise cell_m or shrink the box")
#define TG_MSG_LODS_RANGE N_ ("expected 1..%d levels, got %d")
#define TG_MSG_CHUNK_CELLS_RANGE N_ ("expected 0 (one mesh) or %d..%d cells, got %d")
#define TG_MSG_CHUNK_NOT_DIVISIBLE N_ ("chunk_cells %d is not divisible by 2^(lods - 1) = %d")
#define TG_MSG_CHUNKS_IN_BOX N_ ("%.0f chunks in the box, at most %d; raise chunk_cells or cell_m")
#define TG_MSG_TOO_MANY_VERTICES N_ ("the surface has more than 2^32 vertices; raise cell_m")
#define TG_MSG_MESH_TOO_SMALL N_ ("a mesh needs at least 2 x 2 samples, got %d x %d")
#define TG_MSG_CHUNKS_TOO_LARGE N_ ("chunks too large")
#define TG_MSG_PALETTE_EMPTY N_ ("the palette is empty")
#define TG_MSG_PALETTE_TOO_MANY N_ ("the palette has %d colours; at most %d")
#define TG_MSG_PALETTE_NO_PROTO N_ ("palette colour %d has no prototype name")
#define TG_MSG_PALETTE_BLACK \
  N_ ("black cannot be a palette colour when brightness is density relative to it (it " \
      "has no hue to match)")
#define TG_MSG_LAYER_NAME \
  N_ ("layer name \"%s\" must be non-empty and use only letters, digits, '_' and '-'")
#define TG_MSG_BASE_LAYER_NAME N_ ("\"%s\" is also the base layer's name")
#define TG_MSG_LAYER_NAME_TWICE N_ ("\"%s\" is also the name of layers[%d]")
#define TG_MSG_BELOW_MIN_FIELD N_ ("%g is below min_%s (%g)")
#define TG_MSG_DEFAULT_BIOME_NAME N_ ("\"%s\" is also the default biome's name")
#define TG_MSG_RULE_NAME_TWICE N_ ("\"%s\" is also the name of rules[%d]")
#define TG_MSG_STOPS_ORDER N_ ("%g is before the previous stop's position %g; stops go in order")
#define TG_MSG_RAMP_NEEDS_STOP N_ ("the ramp needs at least one stop")
#define TG_MSG_NO_LAYER_COLOR N_ ("no colour for layer \"%s\"")
#define TG_MSG_MESH_NO_PROTO N_ ("mesh %d names no prototype")
#define TG_MSG_PROTO_MESH_NO_FILE N_ ("the mesh for \"%s\" has no file")
#define TG_MSG_PROTO_TWO_MESHES N_ ("prototype \"%s\" has two meshes")

/* Tiled builds: tgraph plan and the plan folder. */
#define TG_MSG_PLAN_TILE_COUNTS N_ ("tiles: expected counts in 1..%d, got %d,%d")
#define TG_MSG_PLAN_TILES_TOO_SMALL \
  N_ ("tiles: %d,%d tiles for a %dx%d-sample world: a tile needs at least one sample " \
      "each way")
#define TG_MSG_PLAN_NOTHING N_ ("the graph exports nothing to build")
#define TG_MSG_PLAN_NOT_FOLDER N_ ("%s is not a folder")
#define TG_MSG_PLAN_NOT_EMPTY N_ ("%s is not empty and holds no plan: choose another folder")
#define TG_MSG_PLAN_OTHER_GRAPH \
  N_ ("%s holds the plan of another graph (sha256 %.12s, this one %.12s): choose " \
      "another folder or remove it")
#define TG_MSG_PLAN_OTHER_TILES \
  N_ ("%s holds a plan of this graph in %d,%d tiles, not %d,%d: choose another folder " \
      "or remove it")
#define TG_MSG_PLAN_NONE N_ ("%s has no %s: make one with `tgraph plan`")
#define TG_MSG_PLAN_NOT_PLAN N_ ("%s is not a tgraph plan")
#define TG_MSG_PLAN_CHANGED \
  N_ ("%s changed since the plan was made (sha256 %.12s, the plan says %.12s): plan " \
      "again")
#define TG_MSG_BYPASSED_NO_VALUE N_ ("is bypassed: its \"%s\" output has no value to give")
#define TG_MSG_LINK_MISSING_NODE N_ ("link %d names a missing node")
#define TG_MSG_OOM_STAGING N_ ("out of memory staging \"%s\"")

#define TG_MESSAGE_LIST(X)                                                                    \
  X (TG_MSG_NO_FILE) X (TG_MSG_CANNOT_READ) X (TG_MSG_NEEDS_LINK) X (TG_MSG_CYCLE)           \
  X (TG_MSG_CYCLE_PLAIN) X (TG_MSG_UNKNOWN_TYPE) X (TG_MSG_UNKNOWN_PARAM)                    \
  X (TG_MSG_DID_YOU_MEAN) X (TG_MSG_EXPECTED_GOT) X (TG_MSG_A_NUMBER) X (TG_MSG_A_NUMBER_IN) \
  X (TG_MSG_A_NUMBER_MIN) X (TG_MSG_A_NUMBER_MAX) X (TG_MSG_AN_INTEGER)                      \
  X (TG_MSG_AN_INTEGER_IN) X (TG_MSG_AN_INTEGER_MIN) X (TG_MSG_AN_INTEGER_MAX)               \
  X (TG_MSG_TRUE_OR_FALSE) X (TG_MSG_ONE_OF) X (TG_MSG_A_STRING) X (TG_MSG_A_PATH)           \
  X (TG_MSG_WORLD_WIDTH) X (TG_MSG_WORLD_DEPTH) X (TG_MSG_WORLD_HEIGHT) X (TG_MSG_INT_RANGE) \
  X (TG_MSG_SYNTAX) X (TG_MSG_UNEXPECTED_EOF) X (TG_MSG_NEWER_VERSION) \
  X (TG_MSG_OUT_OF_MEMORY) X (TG_MSG_CANCELLED) X (TG_MSG_WORLD_NO_EXTENT) \
  X (TG_MSG_INPUT_NO_DATA) X (TG_MSG_INPUT_CHANNELS) X (TG_MSG_INPUT_NOT_COVERED) \
  X (TG_MSG_INPUT_NO_FIELD) X (TG_MSG_INPUT_NO_INSTANCES) X (TG_MSG_INPUT_NO_MESH) \
  X (TG_MSG_INPUT_ONE_CHANNEL) X (TG_MSG_INPUT_RGBA) X (TG_MSG_INPUTS_REGIONS_DIFFER) \
  X (TG_MSG_INPUT_NOT_WORLD) X (TG_MSG_MASK_HEIGHT_ONE_CHANNEL) X (TG_MSG_SLOPE_NEEDS_HEIGHT) \
  X (TG_MSG_NO_OUTPUT_FILE) X (TG_MSG_NO_OUTPUT_PREFIX) X (TG_MSG_NO_HEIGHTMAP_FILE) \
  X (TG_MSG_NO_IMAGE_FILE) X (TG_MSG_CANNOT_READ_PLAIN) X (TG_MSG_HEIGHTMAP_EMPTY) \
  X (TG_MSG_IMAGE_EMPTY) X (TG_MSG_HEIGHTMAP_BITS) X (TG_MSG_IMAGE_BITS) \
  X (TG_MSG_CANNOT_OPEN) X (TG_MSG_CANNOT_READ_FILE) X (TG_MSG_IS_FOLDER) X (TG_MSG_IS_FIFO) \
  X (TG_MSG_NOT_REGULAR) X (TG_MSG_TOO_LARGE_GRAPH) X (TG_MSG_OOM_READING) \
  X (TG_MSG_OOM_READING_Q) X (TG_MSG_SAVE_NOT_FILE_NAME) X (TG_MSG_CANNOT_SAVE) \
  X (TG_MSG_NOT_PNG) X (TG_MSG_WRITING) X (TG_MSG_NO_READER) X (TG_MSG_NO_MESH_READER) \
  X (TG_MSG_CANNOT_OPEN_PLAIN) X (TG_MSG_NOT_TILE_IMAGE) X (TG_MSG_BAD_TILE_HEADER) \
  X (TG_MSG_TILE_TRUNCATED) X (TG_MSG_SLICE_SIZE) X (TG_MSG_EXPORT_PATH_TOO_LONG) \
  X (TG_MSG_PATH_TOO_LONG) X (TG_MSG_WORLD_TOO_DEEP) X (TG_MSG_ID_NOT_UTF8) \
  X (TG_MSG_ID_TOO_LONG) X (TG_MSG_ID_INVALID) X (TG_MSG_DUPLICATE_ID) \
  X (TG_MSG_DUPLICATE_ID_AT) X (TG_MSG_NO_NODE) X (TG_MSG_NO_OUTPUT_PORT) \
  X (TG_MSG_NO_INPUT_PORT) X (TG_MSG_TYPES_MISMATCH) X (TG_MSG_CANNOT_CONNECT) \
  X (TG_MSG_ALREADY_LINKED) X (TG_MSG_ALREADY_FED) X (TG_MSG_WOULD_CYCLE) \
  X (TG_MSG_BYPASS_NEEDS_LINK) X (TG_MSG_BYPASS_NO_OUTPUT) X (TG_MSG_BYPASS_NO_INPUT) \
  X (TG_MSG_BELOW_CELLS) X (TG_MSG_ONE_CELL) X (TG_MSG_TWO_CELLS) X (TG_MSG_ALSO_WRITTEN) \
  X (TG_MSG_NEEDS_FOLDER) X (TG_MSG_WRITTEN_AS_FILE) X (TG_MSG_CHAIN_TOO_DEEP) \
  X (TG_MSG_NODE_FAILED) X (TG_MSG_BYPASSED_NO_INPUT) X (TG_MSG_PRODUCED_NO_OUTPUT) \
  X (TG_MSG_NOT_UTF8) X (TG_MSG_EXPECTED_TYPE_VALUE) X (TG_MSG_REQUIRED_MISSING) \
  X (TG_MSG_PATH_REQUIRED) X (TG_MSG_OUTPUT_NAME_REQUIRED) X (TG_MSG_EXPORT_PATH_RELATIVE) \
  X (TG_MSG_CURVE_TWO_POINTS) X (TG_MSG_CURVE_X_INCREASE) X (TG_MSG_ITEMS_COUNT) \
  X (TG_MSG_ITEMS_FIELDS) X (TG_MSG_FIELD_VALUE) X (TG_MSG_UNKNOWN_FIELD) \
  X (TG_MSG_UNKNOWN_WORLD_SETTING) X (TG_MSG_NO_OUTPUT_LISTED) X (TG_MSG_NO_INPUT_LISTED) \
  X (TG_MSG_NUL_IN_STRING) X (TG_MSG_EXPECTED_PARAMS_OBJECT) X (TG_MSG_UNKNOWN_PARAM_OF) \
  X (TG_MSG_PARAM_V1_NAME) X (TG_MSG_MISSING_REQUIRED_PARAM) X (TG_MSG_EXPECTED_NODE_OBJECT) \
  X (TG_MSG_MISSING_NODE_ID) X (TG_MSG_EMPTY_NODE_ID) X (TG_MSG_MISSING_NODE_TYPE) \
  X (TG_MSG_EXPECTED_NODE_PORT) X (TG_MSG_MISSING_FROM) X (TG_MSG_MISSING_TO) \
  X (TG_MSG_EXPECTED_OBJECT) X (TG_MSG_MISSING_WORLD_SETTING) X (TG_MSG_EXPECTED_XZ) \
  X (TG_MSG_EXPECTED_SIZE) X (TG_MSG_EXPECTED_HEIGHT) X (TG_MSG_NO_UPGRADE) \
  X (TG_MSG_NOT_TGRAPH) X (TG_MSG_MISSING_VERSION) X (TG_MSG_EXPECTED_VERSION_INT) \
  X (TG_MSG_EXPECTED_VERSION_RANGE) X (TG_MSG_EXPECTED_TOP_OBJECT) X (TG_MSG_MISSING_WORLD) \
  X (TG_MSG_MISSING_NODES) X (TG_MSG_EXPECTED_NODES_ARRAY) X (TG_MSG_TOO_MANY_NODES) \
  X (TG_MSG_EXPECTED_LINKS_ARRAY) X (TG_MSG_NO_FILE_TO_LOAD) X (TG_MSG_GRAPH_TEXT_TOO_LARGE) \
  X (TG_MSG_NO_FILE_TO_SAVE) X (TG_MSG_MAX_BELOW_MIN) X (TG_MSG_MAX_SLOPE_BELOW_MIN) \
  X (TG_MSG_INPUT_HIGH_EQUALS_LOW) X (TG_MSG_HIGHEST_BELOW_LOWEST) X (TG_MSG_YAW_RANGE) \
  X (TG_MSG_SCALE_RANGE) X (TG_MSG_CURVE_NEEDS_POINT) X (TG_MSG_CURVE_POINT_X) \
  X (TG_MSG_MUST_BE_ABOVE_0) X (TG_MSG_SIZES_ABOVE_0) X (TG_MSG_ROUNDING_TOO_LARGE) \
  X (TG_MSG_NORMAL_ZERO) X (TG_MSG_SCALE_AXIS_ZERO) X (TG_MSG_WIDTH_OVER_MAX) \
  X (TG_MSG_WEATHERING_CONVERGE) \
  X (TG_MSG_STEPS_TOO_MANY) X (TG_MSG_CELL_ABOVE_0) X (TG_MSG_MAX_ABOVE_MIN_AXIS) \
  X (TG_MSG_CELLS_ALONG) X (TG_MSG_CELLS_IN_BOX) X (TG_MSG_LODS_RANGE) \
  X (TG_MSG_CHUNK_CELLS_RANGE) X (TG_MSG_CHUNK_NOT_DIVISIBLE) X (TG_MSG_CHUNKS_IN_BOX) \
  X (TG_MSG_TOO_MANY_VERTICES) X (TG_MSG_MESH_TOO_SMALL) X (TG_MSG_CHUNKS_TOO_LARGE) \
  X (TG_MSG_PALETTE_EMPTY) X (TG_MSG_PALETTE_TOO_MANY) X (TG_MSG_PALETTE_NO_PROTO) \
  X (TG_MSG_PALETTE_BLACK) X (TG_MSG_LAYER_NAME) X (TG_MSG_BASE_LAYER_NAME) \
  X (TG_MSG_LAYER_NAME_TWICE) X (TG_MSG_BELOW_MIN_FIELD) X (TG_MSG_DEFAULT_BIOME_NAME) \
  X (TG_MSG_RULE_NAME_TWICE) X (TG_MSG_STOPS_ORDER) X (TG_MSG_RAMP_NEEDS_STOP) \
  X (TG_MSG_NO_LAYER_COLOR) X (TG_MSG_MESH_NO_PROTO) X (TG_MSG_PROTO_MESH_NO_FILE) \
  X (TG_MSG_PROTO_TWO_MESHES) \
  X (TG_MSG_PLAN_TILE_COUNTS) X (TG_MSG_PLAN_TILES_TOO_SMALL) X (TG_MSG_PLAN_NOTHING) \
  X (TG_MSG_PLAN_NOT_FOLDER) X (TG_MSG_PLAN_NOT_EMPTY) X (TG_MSG_PLAN_OTHER_GRAPH) \
  X (TG_MSG_PLAN_OTHER_TILES) X (TG_MSG_PLAN_NONE) X (TG_MSG_PLAN_NOT_PLAN) \
  X (TG_MSG_PLAN_CHANGED) X (TG_MSG_BYPASSED_NO_VALUE) X (TG_MSG_LINK_MISSING_NODE) \
  X (TG_MSG_OOM_STAGING)

/* The formats above, in the order of the list; *N gets their number. */
const char *const *tg_message_formats (int *n);

#ifdef __cplusplus
}
#endif
#endif
