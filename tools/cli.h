/* cli.h: what the pmtune command's subcommands share: the command table, the option tables that
 * both parse a command's arguments and print its --help, and usage errors. */
#ifndef PM_CLI_H
#define PM_CLI_H

#include <stdio.h>

#include "op.h"

/* Exit statuses, and CLI_DONE, which is none: a command returns it where it has printed its
 * --help and has nothing more to do, and main() then exits with status 0. */
enum { CLI_OK = 0, CLI_FAIL = 1, CLI_USAGE = 2, CLI_DONE = 3 };

typedef struct cli_cmd {
  const char *name;
  int (*run)(int argc, char **argv); /* argv[0] is the subcommand's name; returns an exit
                                        status or CLI_DONE */
  const char *summary;               /* one line for `pmtune --help` */
} cli_cmd;

extern const cli_cmd cli_commands[];

/* ---- Option tables (git's parse_options is the model) ----
 *
 * A command describes each of its options once, in a table ended by CLI_END, built inside the
 * command's function so that the entries can point at its local variables:
 *
 *   const char *opname = NULL, *dbpath = NULL;
 *   int json = 0;
 *   const cli_option options[] = {
 *       CLI_STRING(0, "op", "OP", &opname, "only this operation"),
 *       CLI_FLAG(0, "json", &json, "one JSON object per line"),
 *       CLI_DB(&dbpath),
 *       CLI_END};
 *   int parsed = cli_parse(&help, options, argc, argv, NULL);
 *   if (parsed != CLI_OK) return parsed; // CLI_USAGE, or CLI_DONE after --help
 *
 * cli_parse() reads the arguments by that table and cli_print_help() prints the usage line and
 * the option list of `pmtune CMD --help` from it, so that the two cannot drift apart. */

typedef enum cli_kind {
  CLI_OPT_FLAG,     /* takes no value: *(int *)value = 1 */
  CLI_OPT_STRING,   /* *(const char **)value = the value */
  CLI_OPT_INT,      /* *(int *)value = the value, a decimal integer from lo to hi */
  CLI_OPT_CHOICE,   /* *(int *)value = the index of the value in choices */
  CLI_OPT_LIST,     /* the value is appended to *(cli_list *)value; repeatable */
  CLI_OPT_CALLBACK, /* cb checks the value and stores it through value */
} cli_kind;

/* An option's flags. CLI_REQUIRED only changes the usage line (no brackets): the command
 * checks that the option was given, with its own message. CLI_REPEAT: the option is meant to be
 * given more than once (each CLI_OPT_LIST is); the usage line shows "...". An option without it
 * given twice is a usage error ("--db given twice"), never a silent choice of one value.
 * CLI_OPTIONAL: the value may be left out, "--name" alone or "--name=VALUE" (never "--name
 * VALUE": the next argument stays an operand); only for a CLI_OPT_CALLBACK, whose cb then gets
 * arg NULL; help shows "--name[=VALUE]". */
enum { CLI_REQUIRED = 1, CLI_REPEAT = 2, CLI_OPTIONAL = 4 };

typedef struct cli_option cli_option;

/* Checks the value of option o and stores it through o->value; returns CLI_OK, or CLI_USAGE
 * after a one-line usage error (cli_usage_error) naming the option. */
typedef int cli_callback(const char *cmd, const cli_option *o, const char *arg);

struct cli_option {
  char short_name;            /* 'o' for -o, or 0 */
  const char *name;           /* "size" for --size; NULL ends the table */
  const char *arg;            /* the value's name in the help ("S"); NULL for a flag, and for a
                                 choice, whose choices are shown instead ("row|col") */
  cli_kind kind;
  void *value;                /* where the value goes (see cli_kind) */
  const char *help;           /* what the option does, in a sentence or two; --help wraps it */
  int flags;                  /* CLI_REQUIRED, CLI_REPEAT */
  long lo, hi;                /* CLI_OPT_INT: the range, within that of an int */
  const char *const *choices; /* CLI_OPT_CHOICE: the values, NULL-terminated */
  cli_callback *cb;           /* CLI_OPT_CALLBACK */
};

/* Where the values of a repeatable string option go: items[0 .. n-1], at most max of them. */
typedef struct cli_list {
  const char **items;
  int n, max;
} cli_list;

/* The hand-written part of a command's --help: the rest comes from its option table. */
typedef struct cli_help {
  const char *cmd;      /* the command's name ("export"), for the usage line and errors */
  const char *operands; /* what the usage line shows between the name and the options
                           ("FILE"); NULL where the command takes no operand */
  const char *about;    /* what the command does: paragraphs, each line ending in '\n' */
  const char *after;    /* paragraphs after the option list, or NULL */
  void (*more)(FILE *out); /* writes a paragraph made at run time before `after` (cli_wrap
                              wraps it), or NULL */
} cli_help;

/* The entries of an option table, one macro per kind; s is the short name or 0. The pointers'
 * types are checked: a mismatch is a compiler warning. */
#define CLI__INT_P(p) (1 ? (p) : (int *)0)
#define CLI__STR_P(p) (1 ? (p) : (const char **)0)
#define CLI__LIST_P(p) (1 ? (p) : (cli_list *)0)
#define CLI_FLAG(s, l, var, h) \
  {.short_name = (s), .name = (l), .kind = CLI_OPT_FLAG, .value = CLI__INT_P(var), .help = (h)}
#define CLI_STRING_F(s, l, a, var, f, h)                                                       \
  {.short_name = (s), .name = (l), .arg = (a), .kind = CLI_OPT_STRING, .value = CLI__STR_P(var), \
   .help = (h), .flags = (f)}
#define CLI_STRING(s, l, a, var, h) CLI_STRING_F(s, l, a, var, 0, h)
#define CLI_INT(s, l, a, var, low, high, h)                                                 \
  {.short_name = (s), .name = (l), .arg = (a), .kind = CLI_OPT_INT, .value = CLI__INT_P(var), \
   .help = (h), .lo = (low), .hi = (high)}
#define CLI_CHOICE(s, l, var, list, h)                                                  \
  {.short_name = (s), .name = (l), .kind = CLI_OPT_CHOICE, .value = CLI__INT_P(var), \
   .help = (h), .choices = (list)}
#define CLI_LIST(s, l, a, var, h)                                                             \
  {.short_name = (s), .name = (l), .arg = (a), .kind = CLI_OPT_LIST, .value = CLI__LIST_P(var), \
   .help = (h), .flags = CLI_REPEAT}
#define CLI_CALLBACK(s, l, a, var, fn, h)                                                    \
  {.short_name = (s), .name = (l), .arg = (a), .kind = CLI_OPT_CALLBACK, .value = (var), \
   .help = (h), .cb = (fn)}
#define CLI_CALLBACK_OPTIONAL(s, l, a, var, fn, h)                                         \
  {.short_name = (s), .name = (l), .arg = (a), .kind = CLI_OPT_CALLBACK, .value = (var), \
   .help = (h), .cb = (fn), .flags = CLI_OPTIONAL}
#define CLI_END {.name = NULL}

/* The options that more than one command takes, with one meaning everywhere. --db PATH sets a
 * const char * (an empty path is refused: "--db: empty path"; a directory, FIFO or device at
 * once, status 1: "--db 'x': is a FIFO, not a regular file"); --radius R (1 to
 * PM__MAX_RADIUS) sets a pm__problem's radius; --order row|col and --border clamp|zero are
 * noted in a cli_variants, and cli_apply_variants then sets the problem's variant from them
 * once the operation is known. */
#define CLI_DB(var)                                        \
  CLI_CALLBACK(0, "db", "PATH", CLI__STR_P(var), cli_db_option, \
               "the tuning database (default: see 'pmtune db --help')")
#define CLI_RADIUS(pr, h) CLI_INT(0, "radius", "R", &(pr)->radius, 1, PM__MAX_RADIUS, h)
#define CLI_ORDER(cv, h) CLI_CHOICE(0, "order", &(cv)->given[CLI_VARIANT_ORDER], cli_orders, h)
#define CLI_BORDER(cv, h) CLI_CHOICE(0, "border", &(cv)->given[CLI_VARIANT_BORDER], cli_borders, h)
extern const char *const cli_orders[];  /* "row", "col" */
extern const char *const cli_borders[]; /* "clamp", "zero" */

/* The variant options given: the index of each one's value in its choices, or -1 where it was
 * not given (initialise with CLI_VARIANTS_NONE). */
enum { CLI_VARIANT_ORDER, CLI_VARIANT_BORDER, CLI_VARIANT_KEYS };
typedef struct cli_variants {
  int given[CLI_VARIANT_KEYS];
} cli_variants;
#define CLI_VARIANTS_NONE {{-1, -1}}

/* Sets pr->variant from the variant options given for op ("--order col": op's variant
 * "order=col"); refuses, as a usage error, an option that op has no variant for ("--border does
 * not apply to matadd") or one given with op NULL (all operations). The radius too: the
 * command leaves pr->radius 0 until --radius gives one; a radius given for an op without one is
 * refused ("--radius does not apply to matadd"), and none given becomes 1 where op has a radius
 * (or op is NULL). */
int cli_apply_variants(const char *cmd, const pm__op *op, const cli_variants *cv, pm__problem *pr);

/* Parses --size's value `size` for op into *pr (its dimensions and, written as ":rR", its own
 * radius), which holds what the options gave (cli_apply_variants); `radius_given`: --radius was
 * given, and a size's own radius that differs from it is refused rather than either one passed
 * over. CLI_OK, or CLI_USAGE with the message written (c: a context for the parser's error). */
int cli_parse_size(const char *cmd, pm_ctx *c, const pm__op *op, const char *size,
                   int radius_given, pm__problem *pr);

/* --dtype T: the element types to work on, a bit per pm_dtype in an unsigned (0 where the
 * option is not given: the command's default). T is f32, f16, bf16, f64, all, or a comma list. */
#define CLI_DTYPE(var, h) CLI_CALLBACK(0, "dtype", (PM__DTYPE_BARS "|all") + 1, (1 ? (var) : (unsigned *)0), cli_dtype_option, h)
int cli_dtype_option(const char *cmd, const cli_option *o, const char *arg);
/* CLI_OK where op (NULL: every op, each taking the types it takes) takes every type of mask;
 * else CLI_USAGE after "--dtype bf16: reduce takes f32". */
int cli_dtype_check(const char *cmd, const pm__op *op, unsigned mask);
/* The one type of mask (0: f32) in *out, where op takes it; else CLI_USAGE with the message
 * written ("--dtype: one type here", or cli_dtype_check's). */
int cli_dtype_one(const char *cmd, const pm__op *op, unsigned mask, int *out);
/* The callback of --db: stores arg through o->value (a const char **), refusing an empty one
 * (CLI_USAGE) and one that names a directory, FIFO, device or socket (CLI_FAIL). A callback's
 * CLI_FAIL is cli_parse's; any other failure is CLI_USAGE. */
int cli_db_option(const char *cmd, const cli_option *o, const char *arg);

/* Parses argv[1 .. argc-1] (argv[0] is the command's name) by the table opts. Where --help or -h
 * comes before any "--", prints the help (cli_print_help) to stdout, parses nothing and returns
 * CLI_DONE. Otherwise stores each option's value as its kind says; a single-value option given
 * twice is a usage error ("--db given twice"). Long options may be abbreviated and written
 * --name=VALUE, short ones -XVALUE (getopt_long's rules); operands may come between options.
 * Returns CLI_OK with *rest (where rest is not NULL) the index in argv of the first operand
 * (argv is permuted to put the operands last), or CLI_USAGE after a one-line error: "unknown
 * option '--x' (see ...)", "option '--x' needs a value (see ...)", a bad value as the option's
 * kind words it, or "unexpected argument 'x'" where help->operands is NULL and an operand was
 * given; or CLI_FAIL where a callback failed so (cli_db_option: a FIFO as --db). */
int cli_parse(const cli_help *help, const cli_option *opts, int argc, char **argv, int *rest);

/* Writes the words of text (separated by spaces) to out, then a newline: from column col, lines
 * at most 100 columns but for a longer word, further lines indented by indent. */
void cli_wrap(FILE *out, const char *text, int col, int indent);

/* Prints `pmtune CMD --help`: the usage line (operands, then each option, bracketed unless
 * CLI_REQUIRED, "..." after a repeatable one), help->about, the option list, help->more's
 * paragraph, help->after. */
void cli_print_help(FILE *out, const cli_help *help, const cli_option *opts);

/* ---- The man page (`pmtune help --man`, pmtune.1) ----
 *
 * Made from the same tables as the help: main.c writes the page's head and its list of commands
 * from cli_commands, then runs each command's --help with cli_help_as_man on, so that cli_parse
 * prints that command's section (cli_print_man) from its option table instead of its help. */

/* What --help prints from now on: the help (on 0, the default) or the command's man page section
 * (on 1). */
void cli_help_as_man(int on);

/* Writes a command's section of the man page as roff: the usage line (its operands and each
 * option, as cli_print_help has them), help->about, each option as a tagged paragraph (.TP),
 * help->more's paragraph, help->after (all through cli_man_text). */
void cli_print_man(FILE *out, const cli_help *help, const cli_option *opts);

/* Writes text, paragraphs as the help holds them (lines, a blank line between paragraphs), as
 * roff: a paragraph (.PP) of filled lines, each escaped (cli_man_escape); a line indented two
 * spaces, "  path        print which file is in use", a tagged paragraph (.TP) whose tag is what
 * comes before its first two spaces, continued by the lines indented further that follow it. */
void cli_man_text(FILE *out, const char *text);

/* Writes len bytes of s as roff text: '\' as \e, a '-' that is not a hyphen within a word (an
 * option's: --size, -D) as \-, and \& before a '.' or '\'' where line_start says s starts a
 * line (where roff would read a request). */
void cli_man_escape(FILE *out, const char *s, size_t len, int line_start);

/* ---- Errors and lookups ---- */

/* Prints "pmtune CMD: message" on one line to stderr and returns CLI_USAGE. A quoted value
 * ('...') of over 64 characters in a one-line message is cut short, its length said. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prints "pmtune CMD: message" to stderr and returns CLI_FAIL. Both take the internal tags out
 * of the message first (cli_user_text). */
int cli_fail(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Takes out of msg, in place, the internal tags that name pmtune's source (" [pmdb.c:156: SQL]",
 * "nvrtc.c:18: "), as cli_fail and cli_usage_error do before they print: a user reads what
 * failed, not where in pmtune. Where $PMTUNE_DEBUG is set (and not "0") msg is left whole. */
void cli_user_text(char *msg);

/* The command of that name, or NULL. */
const cli_cmd *cli_find(const char *name);

/* The operation --op names: *out is it, or NULL for "all" where all_ok. Otherwise prints
 * "unknown --op 'x' (one of: ...)" and returns CLI_USAGE. */
int cli_op_arg(const char *cmd, const char *name, int all_ok, const pm__op **out);

/* Writes s to f as a JSON string: quoted, with '"', '\\' and control characters escaped. */
void cli_json_string(FILE *f, const char *s);

/* Whether paths a and b both exist and are one file (one device and inode: through a link or
 * another spelling too), such as an output file that is the tuning database. */
int cli_same_file(const char *a, const char *b);

/* The comma-separated names of the operations, for messages. */
const char *cli_op_names(void);
/* The names of the operations in a help text, into out[cap]: before, the names separated by
 * ", " with `last` before the last one (", " or " or "), after; returns out. One list, so that
 * the help texts follow the ops: cli_op_help(buf, sizeof buf, "(", ", ", ")") is "(matadd,
 * reduce, filter, add)". */
const char *cli_op_help(char *out, size_t cap, const char *before, const char *last,
                        const char *after);

/* --size's help, into out[cap]: "ROWSxCOLS (matadd, filter) or N (reduce, add)", the ops named
 * by their dims (op->dims), then `after`; returns out. */
const char *cli_size_help(char *out, size_t cap, const char *after);

/* What db knows for device d of op only (NULL: of every op), for the templates built into this
 * pmtune: the snapshot that serving decides from, so that "has an exact winner"
 * (pm__db_known_get_if) means here what it means to a library call. */
int cli_known_load(pm__db *db, const pm__device_info *d, const pm__op *only, pm__db_known *out);

/* --kernel FILE, the one way each command reads it: where kfile is given, loads its description
 * into *kf, and where ops is given makes *ops the database's op list with the kernel's op (in
 * *plus); else *kf is NULL and *ops pm__ops_db(). CLI_OK, or CLI_FAIL (said, naming cmd). */
struct pm__kernel_desc;
int cli_kernel_load(const char *cmd, pm_ctx *c, const char *kfile, struct pm__kernel_desc **kf,
                    pm__ops_db_plus *plus, const pm__db_op *const **ops);

/* What the kernel of one's own that kfile describes (op, loaded from it) runs on pr on c's
 * device, as pm_kernel_launch decides it: from c's database and the results folder's documents
 * that name it (exact, between, nearest), else its seed; out->why says why where the seed
 * serves. */
struct pm__decision;
void cli_kernel_decide(pm_ctx *c, const char *kfile, const pm__op *op, const pm__problem *pr,
                       struct pm__decision *out);

/* The subcommands, one file each (cmd_NAME.c, whose cmd_NAME parses its options with
 * cli_parse, which also prints its --help). */
#define CLI_COMMANDS(X)                                                 \
  X(devices, "list the CUDA devices of this machine")                  \
  X(compile, "compile a kernel template with NVRTC (no GPU needed)")  \
  X(space, "show an operation's search space and how many points are valid") \
  X(tune, "tune the kernels on this machine's GPUs and store the winners")   \
  X(show, "list the tuned winners stored in the database")                   \
  X(explain, "say which configuration a call would run for a size, and why")  \
  X(bench, "time tuned vs seed vs the copy ceiling vs the peers, in one run") \
  X(report, "draw the tuned results as SVG: bars per op, heat maps per size")  \
  X(db, "the tuning database: which file, create it, check it")       \
  X(export, "write the tuning results to a JSON file for other machines") \
  X(import, "merge tuning results that another machine exported")                \
  X(kernel, "write a kernel of your own to start from: a .cu file and its description")

#define CLI_DECLARE(name, summary) int cmd_##name(int argc, char **argv);
CLI_COMMANDS(CLI_DECLARE)
#undef CLI_DECLARE
#endif /* PM_CLI_H */
