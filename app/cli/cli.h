/* Shared pieces of the `tgraph` command line: the subcommand table, exit
 * codes, option parsing and error printing that every subcommand uses the
 * same way, so messages and exit statuses are uniform for CI scripts.
 */
#ifndef TGRAPH_CLI_H
#define TGRAPH_CLI_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <tgformats/tgformats.h>
#include <tgraph/tgraph.h>

/* Exit statuses, part of the CLI's contract with CI pipelines. */
enum
{
  TG_CLI_EXIT_OK = 0,
  TG_CLI_EXIT_FAILED = 1, /* evaluation failed, or `fmt --check` found a difference */
  TG_CLI_EXIT_USAGE = 2,  /* bad command line, unreadable or invalid graph */
};

typedef struct
{
  const char *name;
  const char *args;    /* "FILE [-o DIR] ..." */
  const char *summary; /* one line for `tgraph help` */
  const char *help;    /* the rest of `tgraph help CMD` */
  int (*run) (int argc, char **argv); /* argv[0] is the command name */
} TgCliCommand;

int tg__cli_check (int argc, char **argv);
int tg__cli_compare (int argc, char **argv);
int tg__cli_diff (int argc, char **argv);
int tg__cli_eval (int argc, char **argv);
int tg__cli_info (int argc, char **argv);
int tg__cli_nodes (int argc, char **argv);
int tg__cli_schema (int argc, char **argv);
int tg__cli_fmt (int argc, char **argv);
int tg__cli_plan (int argc, char **argv);
int tg__cli_stitch (int argc, char **argv);

const TgCliCommand *tg__cli_find_command (const char *name);
/* Prints the full help of CMD to stdout. */
void tg__cli_print_command_help (const TgCliCommand *cmd);

/* Prints "tgraph CMD: MESSAGE" and a hint to stderr; returns TG_CLI_EXIT_USAGE. */
int tg__cli_usage_error (const char *cmd, const char *fmt, ...)
  __attribute__ ((format (printf, 2, 3)));

/* Whether ARG is "--help" or "-h" (every subcommand accepts them). */
bool tg__cli_is_help (const char *arg);

/* Matches argv[*I] against the option LONG_NAME ("--output") or SHORT_NAME
 * ("-o", may be NULL).  The value is taken from "--output=DIR" or from the
 * next argument.  Returns 1 when matched (*VALUE set, *I advanced past a
 * separate value), 0 when argv[*I] is another option, -1 when the value is
 * missing (an error naming the option has been printed for CMD). */
int tg__cli_option_value (const char *cmd, int argc, char **argv, int *i, const char *long_name,
                          const char *short_name, const char **value);

/* Parses TEXT as a whole decimal integer in MIN..MAX.  On failure prints
 * "tgraph CMD: OPTION: expected an integer in MIN..MAX, got "TEXT"" and
 * returns -1. */
int tg__cli_parse_int (const char *cmd, const char *option, const char *text, long min, long max,
                       int *out);

/* The index in CHOICES (NULL-terminated) of TEXT into *OUT; else prints
 * "tgraph CMD: OPTION: expected a, b or c, got "TEXT"" and returns -1. */
int tg__cli_parse_choice (const char *cmd, const char *option, const char *text,
                          const char *const *choices, int *out);

/* Prints an error about FILE the way compilers do, so editors can jump to
 * it: "FILE:LINE:COL: PATH: message", or "FILE: PATH: message" when the
 * position is unknown, or "FILE: message" when the error has no path. */
void tg__cli_print_file_error (const char *file, const TgError *err);

/* Loads FILE; on failure prints the error (tg__cli_print_file_error) and
 * returns NULL.  The caller frees the graph. */
TgGraph *tg__cli_load_graph (const char *file);
/* tg__cli_load_graph that also fills *INFO (the file's format version). */
TgGraph *tg__cli_load_graph_info (const char *file, TgTgraphLoadInfo *info);
/* Loads FILE with the loader's FLAGS, printing nothing: NULL and *ERR
 * filled on failure. */
TgGraph *tg__cli_load_graph_ex (const char *file, unsigned flags, TgTgraphLoadInfo *info,
                                TgError *err);

/* When INFO says FILE is an older format version, prints to stderr
 * "FILE: note: format version 1, upgraded to 2 on loading (...)". */
void tg__cli_print_upgrade_note (const char *file, const TgTgraphLoadInfo *info);
/* The text of that note into BUF, or false when FILE needs none. */
bool tg__cli_upgrade_note (const char *file, const TgTgraphLoadInfo *info, char *buf,
                           size_t size);

/* Reads the whole file into a NUL-terminated buffer (caller frees), or
 * NULL with errno set. */
char *tg__cli_read_file (const char *path, size_t *len);

/* "1.5 MiB"-style size into BUF; returns BUF. */
const char *tg__cli_format_bytes (unsigned long long bytes, char *buf, size_t size);

/* SIGINT, SIGTERM, SIGHUP and SIGQUIT request CANCEL from a thread of
 * their own (blocked everywhere else, so the engine's threads, started
 * after this, never take them); a second one exits at once. */
typedef struct
{
  sigset_t set;
  TgCancel *cancel;
  pthread_t thread;
  int signal; /* the first signal received, 0 if none */
} TgCliSignalWatch;

int tg__cli_signal_watch_start (TgCliSignalWatch *w, TgCancel *cancel);
/* Stops the watcher; returns the signal that arrived, or 0. */
int tg__cli_signal_watch_stop (TgCliSignalWatch *w);

/* `tgraph nodes`: a parameter's default as a .tgraph file writes it, and
 * its accepted values (a range, the enum choices, a list's item count and
 * fields), into BUF. */
void tg__cli_param_default (const TgParamDesc *d, char *buf, size_t size);
void tg__cli_param_range (const TgParamDesc *d, char *buf, size_t size);
/* The categories that hold a registered node type, in menu order, into
 * CATS; returns how many. */
int tg__cli_node_categories (TgCategory cats[TG_CATEGORY_COUNT]);
/* The node reference, from the registry: docs/nodes.md and tgraph-nodes(7). */
void tg__cli_nodes_markdown (FILE *out);
void tg__cli_nodes_man (FILE *out);

/* What `eval` and `plan` take from the command line. */
typedef struct
{
  const char *cmd;       /* "eval" or "plan", for messages */
  const char *file;
  const char *out_dir;
  const char **sets;     /* --set arguments in command-line order */
  int n_sets;
  int resolution;        /* 0: the file's */
  int threads;           /* 0: one per core */
  bool quiet;
  uint64_t memory_limit; /* --memory-limit; 0: the memory available */
  /* tiled builds */
  int nx, ny;            /* --tiles; 0 when not given */
  int ix, iy;            /* --tile; -1 when not given */
  int stage;             /* --stage; -1 when not given */
  const char *partition, *time, *mem; /* plan: Slurm defaults */
  const char *report;    /* eval --report FILE.html, or NULL */
} TgCliEvalOptions;

/* Fills O (O->cmd, O->out_dir and O->sets set by the caller) from the
 * command line; returns 0 or an exit status (the error was printed). */
int tg__cli_eval_parse (int argc, char **argv, TgCliEvalOptions *o);
/* Loads O->file, applies --resolution and --set, validates; NULL (error
 * printed) on failure. */
TgGraph *tg__cli_eval_prepare (const TgCliEvalOptions *o);

#endif
