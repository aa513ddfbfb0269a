/* Node parameters: described once, as a list.
 *
 * A node file declares a plain C struct for its parameters and one
 * TgParamDesc per field with the TG_PARAM_* macros below.  From that list
 * the engine fills the struct before eval, and the registry answers
 * validation, the JSON schema, `tgraph nodes` and the GUI inspector.  The
 * macros check at compile time that the field has the C type the parameter
 * kind needs.
 */
#ifndef TGRAPH_PARAM_H
#define TGRAPH_PARAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Marks a string for translation without translating it (the engine has
 * no gettext; the GUI translates descriptor strings when it shows them). */
#ifndef N_
#define N_(s) (s)
#endif

typedef enum
{
  TG_PARAM_FLOAT,       /* double */
  TG_PARAM_INT,         /* int */
  TG_PARAM_BOOL,        /* bool */
  TG_PARAM_ENUM,        /* int: index into choices */
  TG_PARAM_SEED,        /* int, 0..2^31-1; the GUI adds a dice button */
  TG_PARAM_STRING,      /* const char * */
  TG_PARAM_INPUT_PATH,  /* const char *, resolved against the .tgraph folder */
  TG_PARAM_OUTPUT_PATH, /* const char *, relative to the output folder, no "..", not absolute */
  TG_PARAM_VEC2,        /* double[2] */
  TG_PARAM_VEC3,        /* double[3] */
  TG_PARAM_COLOR,       /* double[4] RGBA in 0..1, "#rrggbb" or "#rrggbbaa" in files */
  TG_PARAM_CURVE,       /* TgCurve: [x, y] points, x strictly increasing, both in 0..1 */
  TG_PARAM_LIST,        /* TgList: an array of objects (palettes, layers, gradient stops) */
  TG_PARAM_TYPE_COUNT
} TgParamType;

const char *tg_param_type_name (TgParamType t);

typedef struct
{
  int n_points;
  const double *xy; /* x0, y0, x1, y1, ... */
} TgCurve;

/* A list parameter in a node's struct: N items, each a struct of the
 * node's item type filled from the item descriptors.  Valid during eval. */
typedef struct
{
  int n;
  const void *items;
} TgList;

typedef enum
{
  TG_PARAM_REQUIRED = 1 << 0, /* no default: the file must give it */
} TgParamFlags;

typedef struct TgParamDesc TgParamDesc;

struct TgParamDesc
{
  const char *name;  /* snake_case, unit suffix, min_/max_ bounds: docs/HACKING.md */
  const char *label; /* for people, marked N_() */
  const char *help;
  const char *unit;  /* "m", "deg", "%", or NULL */
  TgParamType type;
  size_t offset;     /* of the field in the node's parameter struct */
  unsigned flags;
  /* numbers: hard range (validation) and soft range (slider): both soft
   * limits 0 means none, read them with tg_param_soft_range */
  double def, min, max, soft_min, soft_max;
  const char *def_s;             /* strings, paths, enum choice name */
  const char *const *choices;    /* enum: NULL-terminated */
  double def_v[4];               /* vec2, vec3, color */
  const double *def_curve;       /* curve: n points x, y */
  int def_curve_n;
  /* list: the fields of one item (no nested lists), the item struct's
   * size; min/max bound the number of items; def_s is the default in the
   * text form tg_param_value_parse reads, e.g.
   * "name=grass|color=#40a040|tolerance=0.12; name=rock|color=#808080" */
  const TgParamDesc *item_params;
  int n_item_params;
  size_t item_size;
};

/* A parameter's value as the graph stores it (owned strings / arrays). */
typedef struct TgParamValue
{
  TgParamType type;
  double f;       /* float */
  int i;          /* int, seed, enum index, bool (0/1) */
  char *s;        /* string, paths, enum choice name */
  double v[4];    /* vec2, vec3, color */
  double *xy;     /* curve points, 2 * n_points */
  int n_points;
  struct TgParamValue *items; /* list: n_items * n_item_params values, item by item */
  int n_items, n_item_params;
} TgParamValue;

void tg_param_value_init_default (TgParamValue *v, const TgParamDesc *d);
int tg_param_value_copy (TgParamValue *dst, const TgParamValue *src);
void tg_param_value_clear (TgParamValue *v);
bool tg_param_value_equal (const TgParamValue *a, const TgParamValue *b);

/* --- The codec: the one place a parameter value is checked, read from
 * text and written as text.  The .tgraph loader only turns JSON into a
 * TgParamValue (type errors through tg_param_error_got) and leaves every
 * other check to tg_param_value_check, so a file and `--set` say the same
 * thing about the same bad value. */

/* Checks V against D (type, range, enum choice, path rules, curve order).
 * On error, err->path is "params.NAME", or deeper for an element
 * ("params.NAME[1]", "params.NAME[2].FIELD"); callers prefix the node.
 * Messages read "expected <what D accepts>, got <the value>". */
int tg_param_value_check (const TgParamDesc *d, const TgParamValue *v, TgError *err);

/* Parses TEXT as D's type: numbers, true/false (or 1/0), enum names,
 * strings, "x,y[,z]" vectors, "#rrggbb" colours, "x:y,x:y,..." curves,
 * "field=value|field=value; ..." lists.  For `tgraph eval --set` and the
 * GUI's text entries.  The value is checked too. */
int tg_param_value_parse (const TgParamDesc *d, const char *text, TgParamValue *out, TgError *err);

/* What D (or, with a WHERE such as "[1]" or "[1][0]", an element of it)
 * accepts, as messages say it after "expected ": "an integer in 1..16",
 * "one of \"perlin\", \"simplex\"", "a colour \"#rrggbb\" or
 * \"#rrggbbaa\"".  Into BUF; returns BUF. */
const char *tg_param_expected (const TgParamDesc *d, const char *where, char *buf, size_t size);

/* Sets "expected <tg_param_expected>, got GOT" with CODE (TG_ETYPE for a
 * value of the wrong kind, TG_ERANGE for one out of range) at
 * "params.NAME" + WHERE, and returns CODE.  GOT as tg_describe_* write it. */
int tg_param_error_got (const TgParamDesc *d, int code, const char *where, const char *got,
                        TgError *err);

/* The index of list D's item field KEY; else TG_EUNKNOWN with err->path
 * "params.NAME[ITEM].KEY" and a suggestion. */
int tg_param_item_field (const TgParamDesc *d, int item, const char *key, TgError *err);

/* How a value reads after "got " in messages: a string quoted as JSON
 * writes it (cut short after 44 characters), a number as
 * tg_format_double writes it.  Into BUF; return BUF. */
const char *tg_describe_string (const char *s, char *buf, size_t size);
const char *tg_describe_number (double v, char *buf, size_t size);

/* The length (1 to 4) of the well-formed UTF-8 character at S, of at
 * most N bytes, or 0 when S does not start one (a stray continuation
 * byte, an overlong form, a surrogate, past U+10FFFF, cut short). */
int tg_utf8_char_len (const char *s, size_t n);
/* The offset of the first byte of S[0..N) that is not part of
 * well-formed UTF-8, or N when all of it is. */
size_t tg_utf8_check (const char *s, size_t n);

/* How character C is written inside a quoted string, as JSON writes it
 * (a backslash escape such as \n or \u001f, built in U when it must
 * be), or NULL when C stands as it is.
 * For messages here and for the .tgraph writer. */
const char *tg_string_escape (unsigned char c, char u[7]);

/* The value 0..15 of hex digit CH (either case), or -1. */
int tg_hex_digit (int ch);

/* "#rrggbb" or "#rrggbbaa" (either case) into RGBA in 0..1 (alpha 1 when
 * not given): 0, or TG_ETYPE.  The one colour parser. */
int tg_color_parse (const char *text, double rgba[4]);
/* RGBA, each clamped to 0..1 and rounded to a byte, as "#rrggbb", or
 * "#rrggbbaa" when alpha is below 1.  Into OUT; returns OUT. */
const char *tg_color_format (const double rgba[4], char out[10]);

/* The shortest of %.15g, %.16g, %.17g that parses back to V, always with
 * '.' as the decimal point whatever the locale; integers have no ".0".
 * -0.0 is written "-0.0" so that it reads back as a double; NaN and the
 * infinities "null" (JSON has neither).  OUT holds 32. */
void tg_format_double (double v, char out[32]);
/* strtod in the C locale. */
double tg_strtod (const char *s, char **end);

/* Index of CHOICE in D's choices, or -1. */
int tg_param_enum_index (const TgParamDesc *d, const char *choice);

/* Copies V into the parameter struct field described by D (strings and
 * curve arrays are borrowed, not copied; a list's item array is
 * allocated: release it with tg_params_struct_clear).  0 or TG_ENOMEM. */
int tg_param_value_store (const TgParamDesc *d, const TgParamValue *v, void *params_struct);
/* Frees what tg_param_value_store allocated in a struct filled from the
 * N descriptors PARAMS (list item arrays). */
void tg_params_struct_clear (const TgParamDesc *params, int n, void *params_struct);

/* List items: value of field K of item I (borrowed), and a new item with
 * default fields appended (returns its index or TG_ENOMEM). */
const TgParamValue *tg_param_list_field (const TgParamValue *list, int item, int k);
TgParamValue *tg_param_list_field_mut (TgParamValue *list, int item, int k);
int tg_param_list_append_default (TgParamValue *list, const TgParamDesc *d);
void tg_param_list_remove (TgParamValue *list, int item);

/* Compile-time check that S.F has type T; adds 0 to the offset. */
#define TG__FIELD(S, F, T) \
  (offsetof (S, F) + 0 * sizeof (char[_Generic (((S *) 0)->F, T: 1, default: -1)]))

/* One parameter: field F of struct S, of the C type its kind needs, and
 * the rest as designated initialisers of TgParamDesc, e.g.
 *
 *   TG_PARAM_FLOAT (ShapeParams, radius_m, .label = N_("Radius"), .def = 1500.0,
 *                   .min = 0.0, .max = 1e7, .soft_min = 0.0, .soft_max = 10000.0,
 *                   .unit = "m", .help = N_("Outer radius, where the shape reaches 0")),
 *
 * Every parameter has a .label and a .help.  Numbers give .def, .min and
 * .max; .soft_min and .soft_max (both or neither) narrow the slider, which
 * otherwise spans .min..max (tg_param_soft_range).  Enums give .choices
 * and .def_s; strings and output paths .def_s; vectors and colours
 * .def_v.  What a kind fixes (a seed's range, a bool's 0..1, an input
 * path being required) the macro sets, and giving it again is an error
 * (-Woverride-init). */
#define TG__PARAM(S, F, KIND, T, ...) \
  { .name = #F, .type = (KIND), .offset = TG__FIELD (S, F, T), __VA_ARGS__ }

#define TG_PARAM_FLOAT(S, F, ...) TG__PARAM (S, F, TG_PARAM_FLOAT, double, __VA_ARGS__)
#define TG_PARAM_INT(S, F, ...) TG__PARAM (S, F, TG_PARAM_INT, int, __VA_ARGS__)
#define TG_PARAM_SEED(S, F, ...) \
  TG__PARAM (S, F, TG_PARAM_SEED, int, .def = 0, .min = 0, .max = 2147483647.0, __VA_ARGS__)
#define TG_PARAM_BOOL(S, F, ...) \
  TG__PARAM (S, F, TG_PARAM_BOOL, bool, .min = 0, .max = 1, __VA_ARGS__)
#define TG_PARAM_ENUM(S, F, ...) TG__PARAM (S, F, TG_PARAM_ENUM, int, __VA_ARGS__)
#define TG_PARAM_STRING(S, F, ...) TG__PARAM (S, F, TG_PARAM_STRING, const char *, __VA_ARGS__)
#define TG_PARAM_INPUT_PATH(S, F, ...) \
  TG__PARAM (S, F, TG_PARAM_INPUT_PATH, const char *, .flags = TG_PARAM_REQUIRED, __VA_ARGS__)
#define TG_PARAM_OUTPUT_PATH(S, F, ...) \
  TG__PARAM (S, F, TG_PARAM_OUTPUT_PATH, const char *, __VA_ARGS__)
#define TG_PARAM_VEC2(S, F, ...) \
  TG__PARAM (S, F, TG_PARAM_VEC2, double *, .min = -1e9, .max = 1e9, __VA_ARGS__)
#define TG_PARAM_VEC3(S, F, ...) \
  TG__PARAM (S, F, TG_PARAM_VEC3, double *, .min = -1e9, .max = 1e9, __VA_ARGS__)
#define TG_PARAM_COLOR(S, F, ...) \
  TG__PARAM (S, F, TG_PARAM_COLOR, double *, .min = 0, .max = 1, __VA_ARGS__)
/* ITEMS: a static TgParamDesc array describing struct ITEM_S (declared
 * with these same macros on ITEM_S).  .min and .max bound the number of
 * items; .def_s is the default in tg_param_value_parse's text form. */
#define TG_PARAM_LIST(S, F, ITEM_S, ITEMS, ...)                                                  \
  TG__PARAM (S, F, TG_PARAM_LIST, TgList, .item_params = (ITEMS),                               \
             .n_item_params = (int) (sizeof (ITEMS) / sizeof ((ITEMS)[0])),                     \
             .item_size = sizeof (ITEM_S), __VA_ARGS__)
/* DEF_XY: a static const double array of points, x0, y0, x1, y1, ... */
#define TG_PARAM_CURVE(S, F, DEF_XY, ...)                                                        \
  TG__PARAM (S, F, TG_PARAM_CURVE, TgCurve, .def_curve = (DEF_XY),                              \
             .def_curve_n = (int) (sizeof (DEF_XY) / (2 * sizeof ((DEF_XY)[0]))), .min = 0,     \
             .max = 1, __VA_ARGS__)

/* The slider range of numeric parameter D: its soft range when the
 * descriptor gives one, else its hard range. */
void tg_param_soft_range (const TgParamDesc *d, double *lo, double *hi);

#ifdef __cplusplus
}
#endif
#endif
