/* cli.c: what the pmtune subcommands share: the option-table parser and --help printer, usage
 * errors, lookups. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "kernel_file.h"
#include "serve.h"

enum {
  MAX_OPTIONS = 32, /* options in one table */
  LONG_VAL = 256,   /* getopt_long returns LONG_VAL + i for the long form of option i */
  WIDTH = 100,      /* the help's lines are at most this long, but for a longer word */
  LEFT_MAX = 24     /* an option's name and value that take more start its help on a line below */
};


static int help_as_man; /* cli_help_as_man: --help prints the command's man page section */

const char *const cli_orders[] = {"row", "col", NULL};
const char *const cli_borders[] = {"clamp", "zero", NULL};

/* Writes msg to f with each quoted value ('...') longer than CLIP_QUOTED characters cut to its
 * start and "...": a one-line message echoing a 100,000-character argument stays readable.
 * A message of several lines (NVRTC's log) is written whole. */
enum { CLIP_QUOTED = 64, CLIP_UNCLOSED = 320 };
static void put_clipped(FILE *f, const char *msg) {
  if (strchr(msg, '\n') != NULL) {
    fputs(msg, f);
    return;
  }
  for (const char *p = msg; *p != '\0';) {
    const char *open = strchr(p, '\''), *close = open ? strchr(open + 1, '\'') : NULL;
    if (close == NULL) { /* a long quotation cut off (a message of a bounded buffer): clipped too;
                            an apostrophe ("pmtune's") leaves a sentence's rest as it is */
      size_t rest = open != NULL ? strlen(open + 1) : 0;
      if (rest <= CLIP_UNCLOSED) {
        fputs(p, f);
      } else {
        fwrite(p, 1, (size_t)(open + 1 - p) + CLIP_QUOTED - 3, f);
        fprintf(f, "... (%zu characters and more)", rest);
      }
      return;
    }
    size_t inside = (size_t)(close - open - 1);
    if (inside <= CLIP_QUOTED) {
      fwrite(p, 1, (size_t)(close + 1 - p), f);
    } else {
      fwrite(p, 1, (size_t)(open + 1 - p) + CLIP_QUOTED - 3, f);
      fprintf(f, "...' (%zu characters)", inside);
    }
    p = close + 1;
  }
}

/* The length of an internal tag at p, "pmdb.c:156: " (a source file of pmtune's and a line, as
 * the check macros write them: core/error.c, db/pmdb.c's pm__db_sqlite_error), or 0. */
static size_t source_tag(const char *p) {
  size_t n = 0;
  while (p[n] == '_' || (p[n] >= 'a' && p[n] <= 'z') || (p[n] >= '0' && p[n] <= '9')) n++;
  if (n == 0 || strncmp(p + n, ".c:", 3) != 0 || p[n + 3] < '0' || p[n + 3] > '9') return 0;
  for (n += 3; p[n] >= '0' && p[n] <= '9';) n++;
  return p[n] == ':' ? n + 1 + (p[n + 1] == ' ') : 0;
}

void cli_user_text(char *msg) {
  const char *debug = getenv("PMTUNE_DEBUG");
  if (debug != NULL && debug[0] != '\0' && strcmp(debug, "0") != 0) return;
  char *w = msg;
  for (const char *r = msg; *r != '\0';) {
    size_t tag;
    if (r[0] == ' ' && r[1] == '[' && source_tag(r + 2) > 0) { /* " [pmdb.c:156: SQL]": all */
      int depth = 0;
      const char *e = r + 1;
      for (; *e != '\0'; e++)
        if (*e == '[') depth++;
        else if (*e == ']' && --depth == 0) break;
      r = *e == ']' ? e + 1 : e;
    } else if ((r == msg || r[-1] == ' ' || r[-1] == '\n') && (tag = source_tag(r)) > 0) {
      r += tag; /* "nvrtc.c:18: nvrtcCompileProgram: ..." keeps the call and what it said */
    } else {
      *w++ = *r++;
    }
  }
  *w = '\0';
}

static void vreport(const char *cmd, const char *fmt, va_list ap) {
  char small[1024], *msg = small;
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(small, sizeof small, fmt, ap);
  if (n >= (int)sizeof small && (msg = malloc((size_t)n + 1)) != NULL)
    vsnprintf(msg, (size_t)n + 1, fmt, ap2);
  va_end(ap2);
  cli_user_text(msg != NULL ? msg : small);
  fprintf(stderr, "pmtune%s%s: ", cmd ? " " : "", cmd ? cmd : "");
  put_clipped(stderr, msg != NULL ? msg : small); /* out of memory: the message's start */
  fputc('\n', stderr);
  if (msg != small) free(msg);
}

int cli_usage_error(const char *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vreport(cmd, fmt, ap);
  va_end(ap);
  return CLI_USAGE;
}

int cli_fail(const char *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vreport(cmd, fmt, ap);
  va_end(ap);
  return CLI_FAIL;
}

/* Reports a getopt_long failure as a usage error: ret is what it returned, ':' for a missing
 * value, '?' for an unknown option. */
static int bad_option(const char *cmd, char **argv, int ret) {
  const char *arg = argv[optind - 1];
  if (ret == ':')
    return cli_usage_error(cmd, "option '%s' needs a value (see 'pmtune %s --help')", arg, cmd);
  if (optopt > 0 && optopt < 128)
    return cli_usage_error(cmd, "unknown option '-%c' (see 'pmtune %s --help')", optopt, cmd);
  return cli_usage_error(cmd, "unknown option '%s' (see 'pmtune %s --help')", arg, cmd);
}

/* Parses an integer value of option opt in [lo, hi] into *out; otherwise prints a one-line
 * usage error naming the option ("--samples 'x': expected 1 to 64") and returns CLI_USAGE. */
static int int_arg(const char *cmd, const char *opt, const char *arg, long lo, long hi, long *out) {
  char *end;
  errno = 0;
  long v = strtol(arg, &end, 10);
  const char *d = arg + (arg[0] == '-'); /* digits, with a sign only for '-': no space or '+' */
  if (*d < '0' || *d > '9' || *end != '\0' || errno != 0 || v < lo || v > hi)
    return cli_usage_error(cmd, "%s '%s': expected %ld to %ld", opt, arg, lo, hi);
  *out = v;
  return CLI_OK;
}

int cli_dtype_option(const char *cmd, const cli_option *o, const char *arg) {
  unsigned mask = 0;
  char word[16];
  for (const char *p = arg;; p++) {
    size_t len = strcspn(p, ",");
    snprintf(word, sizeof word, "%.*s", (int)(len < sizeof word ? len : sizeof word - 1), p);
    int t = pm__dtype_find(word);
    if (strcmp(word, "all") == 0 && len == 3)
      mask |= PM__DTYPES_ALL;
    else if (t >= 0 && len < sizeof word)
      mask |= 1u << t;
    else
      return cli_usage_error(cmd, "--%s: '%.*s' is not a type (%s, all, or a list: f32,bf16)",
                             o->name, (int)len, p, PM__DTYPE_NAMES);
    p += len;
    if (*p == '\0') break;
  }
  *(unsigned *)o->value = mask;
  return CLI_OK;
}

int cli_dtype_check(const char *cmd, const pm__op *op, unsigned mask) {
  if (op == NULL || (mask & ~op->dtypes) == 0) return CLI_OK;
  char list[64];
  pm__dtype_list(op->dtypes, list, sizeof list);
  for (int t = 0; t < PM__NDTYPES; t++)
    if (mask & 1u << t & ~op->dtypes)
      return cli_usage_error(cmd, "--dtype %s: %s takes %s", pm_dtype_name((pm_dtype)t),
                             op->name, list);
  return CLI_OK;
}

int cli_dtype_one(const char *cmd, const pm__op *op, unsigned mask, int *out) {
  if (mask != 0 && (mask & (mask - 1)) != 0)
    return cli_usage_error(cmd, "--dtype: one type here (%s)", PM__DTYPE_NAMES);
  *out = PM_F32;
  while (mask > 1) mask >>= 1, ++*out;
  return cli_dtype_check(cmd, op, 1u << *out);
}

int cli_db_option(const char *cmd, const cli_option *o, const char *arg) {
  if (arg[0] == '\0') return cli_usage_error(cmd, "--%s: empty path", o->name);
  int kind = pm__file_not_regular(arg); /* before SQLite opens it (and leaves files beside it) */
  if (kind != 0)
    return cli_fail(cmd, "--%s '%s': %s (a tuning database is an SQLite file)", o->name, arg,
                    pm__file_strerror(kind));
  *(const char **)o->value = arg;
  return CLI_OK;
}

/* Stores the value arg of option o as its kind says; returns CLI_OK or CLI_USAGE. */
static int store(const char *cmd, const cli_option *o, const char *arg) {
  char name[48];
  long v = 0;
  snprintf(name, sizeof name, "--%s", o->name);
  switch (o->kind) {
    case CLI_OPT_FLAG: *(int *)o->value = 1; return CLI_OK;
    case CLI_OPT_STRING: *(const char **)o->value = arg; return CLI_OK;
    case CLI_OPT_INT:
      if (int_arg(cmd, name, arg, o->lo, o->hi, &v) != CLI_OK) return CLI_USAGE;
      *(int *)o->value = (int)v;
      return CLI_OK;
    case CLI_OPT_CHOICE: {
      char list[256];
      size_t len = 0;
      int k = 0;
      for (; o->choices[k] != NULL; k++)
        if (strcmp(arg, o->choices[k]) == 0) {
          *(int *)o->value = k;
          return CLI_OK;
        }
      list[0] = '\0'; /* "a, b or c" */
      for (int i = 0; i < k && len < sizeof list; i++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s",
                                i == 0 ? "" : i == k - 1 ? " or " : ", ", o->choices[i]);
      return cli_usage_error(cmd, "%s '%s': expected %s", name, arg, list);
    }
    case CLI_OPT_LIST: {
      cli_list *l = o->value;
      if (l->n >= l->max) return cli_usage_error(cmd, "at most %d %s", l->max, name);
      l->items[l->n++] = arg;
      return CLI_OK;
    }
    case CLI_OPT_CALLBACK: return o->cb(cmd, o, arg);
  }
  return cli_usage_error(cmd, "internal: %s has no kind", name);
}

int cli_parse(const cli_help *help, const cli_option *opts, int argc, char **argv, int *rest) {
  struct option longs[MAX_OPTIONS + 1];
  char shorts[2 + 3 * MAX_OPTIONS] = ":"; /* ':' first: a missing value is told from a bad option */
  int seen[MAX_OPTIONS] = {0}, n = 0, ns = 1, ch;
  for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      if (help_as_man)
        cli_print_man(stdout, help, opts);
      else
        cli_print_help(stdout, help, opts);
      return CLI_DONE;
    }
  for (; opts[n].name != NULL; n++) {
    if (n == MAX_OPTIONS)
      return cli_usage_error(help->cmd, "internal: over %d options", MAX_OPTIONS);
    int has_arg = opts[n].kind != CLI_OPT_FLAG, optional = opts[n].flags & CLI_OPTIONAL;
    if (optional && opts[n].kind != CLI_OPT_CALLBACK)
      return cli_usage_error(help->cmd, "internal: --%s: an optional value needs a callback",
                             opts[n].name);
    longs[n] = (struct option){opts[n].name,
                               optional  ? optional_argument
                               : has_arg ? required_argument
                                         : no_argument,
                               NULL, LONG_VAL + n};
    if (opts[n].short_name != 0) {
      shorts[ns++] = opts[n].short_name;
      if (has_arg) shorts[ns++] = ':';
      if (optional) shorts[ns++] = ':';
    }
  }
  longs[n] = (struct option){NULL, 0, NULL, 0};
  shorts[ns] = '\0';
  optind = 1;
  opterr = 0;
  while ((ch = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
    int i = ch >= LONG_VAL ? ch - LONG_VAL : -1;
    for (int k = 0; i < 0 && k < n && ch != '?' && ch != ':'; k++)
      if (opts[k].short_name == ch) i = k;
    if (i < 0) return bad_option(help->cmd, argv, ch);
    if (++seen[i] > 1 && !(opts[i].flags & CLI_REPEAT)) /* one value, never the last silently */
      return cli_usage_error(help->cmd, "--%s given twice", opts[i].name);
    int stored = store(help->cmd, &opts[i], optarg); /* CLI_FAIL: --db names a FIFO, say */
    if (stored != CLI_OK) return stored == CLI_FAIL ? CLI_FAIL : CLI_USAGE;
  }
  if (help->operands == NULL && optind < argc)
    return cli_usage_error(help->cmd, "unexpected argument '%s'", argv[optind]);
  if (rest != NULL) *rest = optind;
  return CLI_OK;
}

/* Writes len bytes of word to out at column *col: after a space, or at the start of a new line
 * indented by indent spaces where the word would end past WIDTH (a word longer than that
 * stands alone); with no space where *col is indent, the start of a line. */
static void put_word(FILE *out, int *col, int indent, const char *word, size_t len) {
  if (*col > indent && *col + 1 + (int)len > WIDTH) {
    fprintf(out, "\n%*s", indent, "");
    *col = indent;
  } else if (*col != indent) {
    fputc(' ', out);
    (*col)++;
  }
  fwrite(word, 1, len, out);
  *col += (int)len;
}

void cli_wrap(FILE *out, const char *text, int col, int indent) {
  for (const char *p = text; *p != '\0';) {
    size_t len = strcspn(p, " ");
    if (len > 0) put_word(out, &col, indent, p, len);
    p += len;
    p += *p == ' ';
  }
  fputc('\n', out);
}

/* How help writes option o's name (name: "--size", "-D") and value: "--size S", "--seen[=N]",
 * "--json"; returns the length snprintf gave. */
static int name_and_value(char *out, size_t cap, const char *name, const cli_option *o,
                          const char *v) {
  if (*v == '\0') return snprintf(out, cap, "%s", name);
  if (o->flags & CLI_OPTIONAL) return snprintf(out, cap, "%s[=%s]", name, v);
  return snprintf(out, cap, "%s %s", name, v);
}

/* The value's name of option o as help shows it: its arg, or its choices joined by '|'; "" for
 * a flag. */
static const char *value_name(const cli_option *o, char *buf, size_t cap) {
  if (o->kind == CLI_OPT_FLAG) return "";
  if (o->kind != CLI_OPT_CHOICE) return o->arg;
  size_t len = 0;
  buf[0] = '\0';
  for (int k = 0; o->choices[k] != NULL && len < cap; k++)
    len += (size_t)snprintf(buf + len, cap - len, "%s%s", k ? "|" : "", o->choices[k]);
  return buf;
}

void cli_print_help(FILE *out, const cli_help *help, const cli_option *opts) {
  char vbuf[128], item[192];
  /* The usage line, broken between options: "[--op OP]", or "[-D NAME]" for one with a short
   * name; required ones unbracketed, repeatable ones followed by "...". */
  int col = fprintf(out, "usage: pmtune %s", help->cmd), indent = col + 1;
  if (help->operands != NULL) put_word(out, &col, indent, help->operands, strlen(help->operands));
  for (const cli_option *o = opts; o->name != NULL; o++) {
    const char *v = value_name(o, vbuf, sizeof vbuf), *br = o->flags & CLI_REQUIRED ? "" : "[";
    char name[48], nv[160];
    if (o->short_name != 0 && !(o->flags & CLI_OPTIONAL))
      snprintf(name, sizeof name, "-%c", o->short_name);
    else
      snprintf(name, sizeof name, "--%s", o->name);
    name_and_value(nv, sizeof nv, name, o, v);
    int len = snprintf(item, sizeof item, "%s%s%s%s", br, nv, *br ? "]" : "",
                       o->flags & CLI_REPEAT ? "..." : "");
    put_word(out, &col, indent, item, (size_t)len < sizeof item ? (size_t)len : sizeof item - 1);
  }
  fputc('\n', out);
  if (help->about != NULL) fprintf(out, "\n%s", help->about);
  /* The option list, "  -o, --output FILE  help", the help in one column after the widest
   * name and value that fit LEFT_MAX; a wider one has its help start on the next line. */
  int width = 0;
  for (const cli_option *o = opts; o->name != NULL; o++) {
    const char *v = value_name(o, vbuf, sizeof vbuf);
    char nv[160];
    int w = name_and_value(nv, sizeof nv, o->name, o, v) + 2 + (o->short_name ? 4 : 0);
    if (w <= LEFT_MAX && w > width) width = w;
  }
  if (opts[0].name != NULL) fputc('\n', out);
  for (const cli_option *o = opts; o->name != NULL; o++) {
    const char *v = value_name(o, vbuf, sizeof vbuf);
    char sh[8] = "", nv[160];
    if (o->short_name != 0) snprintf(sh, sizeof sh, "-%c, ", o->short_name);
    name_and_value(nv, sizeof nv, o->name, o, v);
    int w = snprintf(item, sizeof item, "%s--%s", sh, nv);
    fprintf(out, "  %s", item);
    if (w > width)
      fprintf(out, "\n%*s", width + 4, "");
    else
      fprintf(out, "%*s", width - w + 2, "");
    cli_wrap(out, o->help, width + 4, width + 4);
  }
  if (help->more != NULL || help->after != NULL) fputc('\n', out);
  if (help->more != NULL) help->more(out);
  if (help->after != NULL) fputs(help->after, out);
}

void cli_help_as_man(int on) { help_as_man = on; }

void cli_man_escape(FILE *out, const char *s, size_t len, int line_start) {
  if (len > 0 && line_start && (s[0] == '.' || s[0] == '\''))
    fputs("\\&", out);
  for (size_t i = 0; i < len; i++) {
    int inside = i > 0 && isalnum((unsigned char)s[i - 1]) && i + 1 < len &&
                 isalnum((unsigned char)s[i + 1]); /* memory-bound: a hyphen */
    if (s[i] == '\\') fputs("\\e", out);
    else if (s[i] == '-' && !inside) fputs("\\-", out);
    else fputc(s[i], out);
  }
}

void cli_man_text(FILE *out, const char *text) {
  int in_paragraph = 0, in_item = 0;
  for (const char *line = text; *line != '\0';) {
    size_t len = strcspn(line, "\n"), lead = strspn(line, " ");
    if (lead > len) lead = len;
    if (lead == len) { /* a blank line ends the paragraph */
      in_paragraph = in_item = 0;
    } else if (lead == 2) { /* "  path        print which file is in use": a tagged item */
      const char *tag = line + 2, *end = line + len, *gap = tag;
      while (gap + 1 < end && !(gap[0] == ' ' && gap[1] == ' ')) gap++;
      if (gap + 1 >= end) gap = end;
      fputs(".TP\n", out);
      cli_man_escape(out, tag, (size_t)(gap - tag), 1);
      fputc('\n', out);
      while (gap < end && *gap == ' ') gap++;
      if (gap < end) {
        cli_man_escape(out, gap, (size_t)(end - gap), 1);
        fputc('\n', out);
      }
      in_paragraph = in_item = 1;
    } else { /* prose, or an item's text continued (indented further) */
      int continued = lead > 2 && in_item;
      if (!continued && (!in_paragraph || in_item)) {
        fputs(".PP\n", out);
        in_item = 0;
      }
      in_paragraph = 1;
      cli_man_escape(out, line + lead, len - lead, 1);
      fputc('\n', out);
    }
    line += len + (line[len] == '\n');
  }
}

/* Writes option o's name and value as roff: "\fB\-\-size\fR\ \fIS\fR", "\fB\-\-seen\fR[=\fIN\fR]";
 * name is "-X" or "--name"; between them, sep (a space that breaks, or "\\ " that does not). */
static void man_name_and_value(FILE *out, const char *name, const cli_option *o, const char *v,
                               const char *sep) {
  fputs("\\fB", out);
  cli_man_escape(out, name, strlen(name), 0);
  fputs("\\fR", out);
  if (*v == '\0') return;
  fputs(o->flags & CLI_OPTIONAL ? "[=" : sep, out);
  fputs("\\fI", out);
  cli_man_escape(out, v, strlen(v), 0);
  fputs(o->flags & CLI_OPTIONAL ? "\\fR]" : "\\fR", out);
}

void cli_print_man(FILE *out, const cli_help *help, const cli_option *opts) {
  char vbuf[128], name[48];
  /* The usage line: filled, each option with its value kept on one line ("\ ") */
  fprintf(out, ".PP\n\\fBpmtune %s\\fR", help->cmd);
  if (help->operands != NULL) {
    fputc(' ', out);
    cli_man_escape(out, help->operands, strlen(help->operands), 0);
  }
  for (const cli_option *o = opts; o->name != NULL; o++) {
    const char *v = value_name(o, vbuf, sizeof vbuf), *br = o->flags & CLI_REQUIRED ? "" : "[";
    if (o->short_name != 0 && !(o->flags & CLI_OPTIONAL))
      snprintf(name, sizeof name, "-%c", o->short_name);
    else
      snprintf(name, sizeof name, "--%s", o->name);
    fprintf(out, "\n%s", br);
    man_name_and_value(out, name, o, v, "\\ ");
    fprintf(out, "%s%s", *br ? "]" : "", o->flags & CLI_REPEAT ? "..." : "");
  }
  fputc('\n', out);
  if (help->about != NULL) cli_man_text(out, help->about);
  /* The options, a tagged paragraph each: "-o, --output FILE", then its help */
  for (const cli_option *o = opts; o->name != NULL; o++) {
    const char *v = value_name(o, vbuf, sizeof vbuf);
    fputs(".TP\n", out);
    if (o->short_name != 0) fprintf(out, "\\fB\\-%c\\fR, ", o->short_name);
    snprintf(name, sizeof name, "--%s", o->name);
    man_name_and_value(out, name, o, v, " ");
    fputc('\n', out);
    cli_man_escape(out, o->help, strlen(o->help), 1);
    fputc('\n', out);
  }
  if (help->more != NULL) { /* its paragraph as the help has it, then as roff */
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (f != NULL) {
      help->more(f);
      if (fclose(f) == 0) cli_man_text(out, text);
      free(text);
    }
  }
  if (help->after != NULL) cli_man_text(out, help->after);
}

const cli_cmd *cli_find(const char *name) {
  for (const cli_cmd *c = cli_commands; c->name != NULL; c++)
    if (strcmp(c->name, name) == 0) return c;
  return NULL;
}

int cli_op_arg(const char *cmd, const char *name, int all_ok, const pm__op **out) {
  *out = NULL;
  if (all_ok && strcmp(name, "all") == 0) return CLI_OK;
  if ((*out = pm__op_find(name)) != NULL) return CLI_OK;
  return cli_usage_error(cmd, "unknown --op '%s' (one of: %s%s)", name, cli_op_names(),
                         all_ok ? ", all" : "");
}

int cli_apply_variants(const char *cmd, const pm__op *op, const cli_variants *cv,
                       pm__problem *pr) {
  static const char *const keys[CLI_VARIANT_KEYS] = {"order", "border"};
  static const char *const *const values[CLI_VARIANT_KEYS] = {cli_orders, cli_borders};
  for (int k = 0; k < CLI_VARIANT_KEYS; k++) {
    if (cv->given[k] < 0) continue;
    if (op == NULL) return cli_usage_error(cmd, "--%s needs one --op", keys[k]);
    int i = pm__variant_find(op, keys[k], values[k][cv->given[k]]);
    if (i < 0) return cli_usage_error(cmd, "--%s does not apply to %s", keys[k], op->name);
    pr->variant = i;
  }
  if (pr->radius != 0 && op != NULL && op->radius_max == 0) /* --radius given (1 to 3) */
    return cli_usage_error(cmd, "--radius does not apply to %s", op->name);
  if (pr->radius == 0 && (op == NULL || op->radius_max > 0)) pr->radius = 1; /* the default */
  return CLI_OK;
}

int cli_parse_size(const char *cmd, pm_ctx *c, const pm__op *op, const char *size,
                   int radius_given, pm__problem *pr) {
  int radius = pr->radius;
  if (pm__problem_parse(c, op, size, pr) != PM_OK) return cli_usage_error(cmd, "%s", pm_errmsg(c));
  if (radius_given && pr->radius != radius)
    return cli_usage_error(cmd, "--size %s has radius %d, --radius says %d: give one", size,
                           pr->radius, radius);
  return CLI_OK;
}

void cli_json_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s != '\0'; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\') fprintf(f, "\\%c", ch);
    else if (ch < 0x20) fprintf(f, "\\u%04x", ch);
    else fputc(ch, f);
  }
  fputc('"', f);
}

int cli_same_file(const char *a, const char *b) {
  struct stat sa, sb;
  return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

const char *cli_op_names(void) {
  static char buf[256];
  return cli_op_help(buf, sizeof buf, "", ", ", "");
}

const char *cli_op_help(char *out, size_t cap, const char *before, const char *last,
                        const char *after) {
  size_t len = (size_t)snprintf(out, cap, "%s", before);
  for (int i = 0; pm__ops[i] != NULL && len < cap; i++)
    len += (size_t)snprintf(out + len, cap - len, "%s%s",
                            i == 0 ? "" : pm__ops[i + 1] == NULL ? last : ", ", pm__ops[i]->name);
  if (len < cap) snprintf(out + len, cap - len, "%s", after);
  return out;
}

const char *cli_size_help(char *out, size_t cap, const char *after) {
  size_t len = 0;
  for (int dims = 2; dims >= 1 && len < cap; dims--) {
    len += (size_t)snprintf(out + len, cap - len, "%s (", dims == 2 ? "ROWSxCOLS" : " or N");
    for (int i = 0, k = 0; pm__ops[i] != NULL && len < cap; i++)
      if (pm__ops[i]->dims == dims)
        len += (size_t)snprintf(out + len, cap - len, "%s%s", k++ ? ", " : "", pm__ops[i]->name);
    if (len < cap) len += (size_t)snprintf(out + len, cap - len, ")");
  }
  if (len < cap) snprintf(out + len, cap - len, "%s", after);
  return out;
}

int cli_known_load(pm__db *db, const pm__device_info *d, const pm__op *only, pm__db_known *out) {
  if (only != NULL && pm__op_find(only->name) != only) /* a kernel of one's own */
    return pm__op_known_load(db, d, only, out);
  const char *names[PM__MAX_OPS + 1] = {NULL}, *shas[PM__MAX_OPS + 1] = {NULL};
  for (int i = 0, n = 0; pm__ops[i] != NULL && i < PM__MAX_OPS; i++)
    if (only == NULL || only == pm__ops[i]) {
      names[n] = pm__ops[i]->name;
      shas[n++] = pm__template_find(pm__ops[i]->name)->sha256;
    }
  return pm__db_known_load(db, d, names, shas, out);
}

int cli_kernel_load(const char *cmd, pm_ctx *c, const char *kfile, pm__kernel_desc **kf,
                    pm__ops_db_plus *plus, const pm__db_op *const **ops) {
  *kf = NULL;
  if (ops != NULL) *ops = pm__ops_db();
  if (kfile == NULL) return CLI_OK;
  if (pm__kernel_desc_load(c, kfile, kf) != PM_OK) return cli_fail(cmd, "%s", pm_errmsg(c));
  if (ops != NULL) *ops = pm__ops_db_with(pm__kernel_desc_op(*kf), plus);
  return CLI_OK;
}

void cli_kernel_decide(pm_ctx *c, const char *kfile, const pm__op *op, const pm__problem *pr,
                       pm__decision *out) {
  pm_kernel *k = NULL;
  if (pm_kernel_open(c, kfile, &k) == PM_OK) {
    pm__serve_decide_kernel(k, pr, out);
    return;
  }
  char why[512];
  snprintf(why, sizeof why, "%s", pm_errmsg(c));
  cli_user_text(why);
  pm__decide(c, NULL, NULL, op, pr, out);
  snprintf(out->why, sizeof out->why, "%s", why);
}
