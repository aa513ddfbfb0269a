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

#define TG_MESSAGE_LIST(X)                                                                    \
  X (TG_MSG_NO_FILE) X (TG_MSG_CANNOT_READ) X (TG_MSG_NEEDS_LINK) X (TG_MSG_CYCLE)           \
  X (TG_MSG_CYCLE_PLAIN) X (TG_MSG_UNKNOWN_TYPE) X (TG_MSG_UNKNOWN_PARAM)                    \
  X (TG_MSG_DID_YOU_MEAN) X (TG_MSG_EXPECTED_GOT) X (TG_MSG_A_NUMBER) X (TG_MSG_A_NUMBER_IN) \
  X (TG_MSG_A_NUMBER_MIN) X (TG_MSG_A_NUMBER_MAX) X (TG_MSG_AN_INTEGER)                      \
  X (TG_MSG_AN_INTEGER_IN) X (TG_MSG_AN_INTEGER_MIN) X (TG_MSG_AN_INTEGER_MAX)               \
  X (TG_MSG_TRUE_OR_FALSE) X (TG_MSG_ONE_OF) X (TG_MSG_A_STRING) X (TG_MSG_A_PATH)           \
  X (TG_MSG_WORLD_WIDTH) X (TG_MSG_WORLD_DEPTH) X (TG_MSG_WORLD_HEIGHT) X (TG_MSG_INT_RANGE) \
  X (TG_MSG_SYNTAX) X (TG_MSG_UNEXPECTED_EOF) X (TG_MSG_NEWER_VERSION)

/* The formats above, in the order of the list; *N gets their number. */
const char *const *tg_message_formats (int *n);

#ifdef __cplusplus
}
#endif
#endif
