/* kernel_file.c: reading a kernel description (JSON, through SQLite's JSON functions) into an op
 * whose constraints and launch expressions SQLite evaluates (`SELECT (expr)` with :NAME bound,
 * each expression a statement of its own, bounded and read-only: evaluator_open, expr_make);
 * see kernel_file.h. */
#define _DEFAULT_SOURCE /* realpath */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "kernel_file.h"

#define MAX_CONSTRAINTS 32
#define MAX_ARGS 32
#define MAX_FILE ((size_t)16 << 20) /* bytes of a source */
#define MAX_DESC ((size_t)1 << 20)  /* bytes of a description: each field read parses it anew */
#define NAME_MAX_LEN 23 /* a parameter's name is its define: "NAME=VALUE" fits 24 bytes */

/* What bounds an expression (docs/kernels.md): its text, the strings and blobs it
 * may make on the way (SQLite's "string or blob too big" past it), how deep it nests, and the
 * VM instructions of one evaluation (a launch's expression takes tens; nothing allowed loops, so
 * this is a second line behind the authorizer). */
#define MAX_EXPR 2048
#define EXPR_BYTES 8192
#define EXPR_DEPTH 64
#define EXPR_TICK 1000 /* VM instructions between two calls of the progress handler */
#define EXPR_TICKS 10  /* its calls in one evaluation: so at most about 10,000 instructions */

/* One expression of the description, compiled. */
typedef struct expr {
  char *text;        /* as written, its control characters escaped (what messages show) */
  char field[40];    /* where it is written: "grid[1]", "constraints[3]" */
  sqlite3_stmt *st;  /* SELECT (text): its own statement, never pasted beside another */
  int uses_dims;     /* it names a dimension: it needs a problem */
  int uses_params;   /* it names a parameter */
  int nbinds;        /* st's :NAMEs, each a parameter (binds[i] >= 0, its index) or a */
  signed char binds[PM__MAX_PARAMS + 2]; /* dimension (-1 - its index) */
} expr;

/* What the evaluator's authorizer allows while an expression is prepared: one SELECT (the one
 * `SELECT (text)` makes) and the allowed functions; why it refused, for the message. */
typedef struct guard {
  int selects;
  int ticks; /* the progress handler's calls in this evaluation */
  char why[160];
} guard;

/* One argument of the kernel, in order. */
enum { SCALAR_I32, SCALAR_I64, SCALAR_F32, SCALAR_F64 };
typedef struct arg {
  char *name;
  int scalar; /* 1: a scalar (type SCALAR_*), passed by value; 0: a buffer (type a pm_dtype) */
  int type;
  int dir;    /* a buffer's PM__BUF_* */
  int buf;    /* a buffer's index in pm__data's bufs; a scalar's among the scalars */
  expr e;     /* a buffer's count (of the dimensions), a scalar's value (1 where none is given) */
  int has_value; /* a scalar whose description gives its value: a call may leave it out */
} arg;

typedef union value {
  int i32;
  long long i64;
  float f32;
  double f64;
} value;

/* What a launch of one point on one problem passes: evaluated once (SQLite takes microseconds),
 * kept for every later launch of that point and size in a table that grows without bound, as
 * serving's cache of sizes does. */
typedef struct launch_memo {
  int v[PM__MAX_PARAMS];
  pm__problem pr;
  dim3 grid, block;
  size_t shared;
  value values[MAX_ARGS];
  struct launch_memo *next; /* the next of its bucket */
} launch_memo;

struct pm__kernel_file {
  pm__op op; /* first: the op's callbacks find the rest through self */
  pm__template tpl; /* the source, named by the hash of the description and the source */
  char sha256[65];
  pm__param params[PM__MAX_PARAMS];
  char *param_names[PM__MAX_PARAMS];
  char *path, *name, *summary, *entry, *source_file, *source;
  char *reference; /* the reference kernel's entry, or NULL: the seed's outputs are the reference */
  const char *dims[3];
  int ndims;
  char *tuned;      /* the scalar whose value a call gives and the tuning depends on ("tuned":
                       true): part of the size, named by expressions as a dimension is; or NULL */
  int tuned_arg;    /* its index among the arguments, or -1 */
  int tuned_scalar; /* its index among the scalars, or -1 */
  int nconstraints;
  expr constraints[MAX_CONSTRAINTS];
  char *reasons[MAX_CONSTRAINTS]; /* "constraints[2] (:BX * :BY <= 1024)" */
  int ngrid, nblock;
  expr grid[3], block[3], shared, bytes;
  int nargs, nbufs, nscalars;
  arg args[MAX_ARGS];
  signed char buffer_arg[PM__MAX_BUFS], scalar_arg[MAX_ARGS]; /* buffer (scalar) i is
                                                                  args[buffer_arg[i]] */
  int needed;                       /* the first scalar with no value (a call must give it), or -1 */
  double tolerance;
  launch_memo **memo; /* buckets (a power of two of them), under lock */
  size_t nbuckets, nmemo;
  sqlite3 *db;          /* an empty database in memory, the expressions' evaluator: bounded
                           and read-only (evaluator_open) */
  guard guard;          /* its authorizer's */
  pthread_mutex_t lock; /* the statements are one thread's at a time */
};

static const char *const top_fields[] = {"name", "summary", "source", "entry", "reference",
                                         "dims", "params",
                                         "constraints", "seed", "grid", "block", "shared",
                                         "args", "bytes", "tolerance", NULL};

/* ---- Reading the JSON ---------------------------------------------------------------------- */

typedef struct reader {
  pm_ctx *c;
  const char *path; /* as messages show it: control characters escaped */
  sqlite3 *db;      /* the reader's own connection (JSON functions), not the evaluator */
  const char *json;
  char quoted[4][128]; /* quote()'s */
  int nquoted;
} reader;

/* s into out (cap bytes) on one line: each control character written as \n, \t, \r or \xNN;
 * where max is not 0, cut after about max bytes of s (at a character's start) with "...". */
static char *escape(char *out, size_t cap, const char *s, size_t max) {
  size_t at = 0, i = 0;
  for (; s[i] != '\0' && at + 8 < cap; i++) {
    unsigned char ch = (unsigned char)s[i];
    if (max != 0 && i >= max && (ch & 0xc0) != 0x80) break;
    if (ch == '\n') at += (size_t)snprintf(out + at, cap - at, "\\n");
    else if (ch == '\t') at += (size_t)snprintf(out + at, cap - at, "\\t");
    else if (ch == '\r') at += (size_t)snprintf(out + at, cap - at, "\\r");
    else if (ch < 0x20 || ch == 0x7f) at += (size_t)snprintf(out + at, cap - at, "\\x%02x", ch);
    else out[at++] = (char)ch;
  }
  if (s[i] != '\0' && at + 4 <= cap) memcpy(out + at, "...", 3), at += 3;
  out[at < cap ? at : cap - 1] = '\0';
  return out;
}

/* A value of the description, as a message quotes it: on one line, at most 80 bytes of it (four
 * at a time: r's buffers are reused in turn). */
static const char *quote(reader *r, const char *s) {
  char *out = r->quoted[r->nquoted++ % 4];
  return escape(out, sizeof r->quoted[0], s ? s : "(null)", 80);
}

static int fail(reader *r, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(reader *r, const char *field, const char *fmt, ...) {
  char what[768], line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  escape(line, sizeof line, what, 0); /* one line, whatever a value quoted whole held */
  return pm__seterr(r->c, PM_EINVAL, "%s: %s: %s", r->path, field, line);
}

/* The JSON type of the member at JSON path p ("null" where it is missing: json_type's NULL),
 * into type (at least 16 bytes); its text (an atom's, or an array's or object's JSON) into *text
 * (heap) where text is given. */
static int member(reader *r, const char *p, char *type, char **text) {
  sqlite3_stmt *st = NULL;
  int rc = PM_OK;
  if (sqlite3_prepare_v2(r->db, "SELECT json_type(?1, ?2), json_extract(?1, ?2)", -1, &st, NULL) !=
      SQLITE_OK)
    return pm__seterr(r->c, PM_ENOMEM, "%s: %s", r->path, sqlite3_errmsg(r->db));
  sqlite3_bind_text(st, 1, r->json, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 2, p, -1, SQLITE_STATIC);
  strcpy(type, "missing");
  if (text) *text = NULL;
  if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
    snprintf(type, 16, "%s", (const char *)sqlite3_column_text(st, 0));
    if (text && sqlite3_column_type(st, 1) != SQLITE_NULL &&
        (*text = pm__strdup((const char *)sqlite3_column_text(st, 1))) == NULL)
      rc = pm__seterr(r->c, PM_ENOMEM, "%s: out of memory", r->path);
  }
  sqlite3_finalize(st);
  return rc;
}

/* The member at p as a string (heap), required or not (*out NULL where it is missing). */
static int string_at(reader *r, const char *p, const char *field, int required, char **out) {
  char type[16];
  int rc = member(r, p, type, out);
  if (rc != PM_OK) return rc;
  if (strcmp(type, "missing") == 0 && !required) return PM_OK;
  if (strcmp(type, "text") != 0) {
    free(*out), *out = NULL;
    return strcmp(type, "missing") == 0 ? fail(r, field, "missing (a string)")
                                        : fail(r, field, "a string wanted, not %s", type);
  }
  return PM_OK;
}

/* The length of the array at p (-1 where it is missing), failing where it is something else. */
static int array_len(reader *r, const char *p, const char *field, long *n) {
  char type[16];
  int rc = member(r, p, type, NULL);
  if (rc != PM_OK) return rc;
  *n = -1;
  if (strcmp(type, "missing") == 0) return PM_OK;
  if (strcmp(type, "array") != 0) return fail(r, field, "an array wanted, not %s", type);
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(r->db, "SELECT json_array_length(?1, ?2)", -1, &st, NULL) != SQLITE_OK)
    return pm__seterr(r->c, PM_ENOMEM, "%s: %s", r->path, sqlite3_errmsg(r->db));
  sqlite3_bind_text(st, 1, r->json, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 2, p, -1, SQLITE_STATIC);
  if (sqlite3_step(st) == SQLITE_ROW) *n = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return PM_OK;
}

/* Fails naming the first member of the object at p whose key is not in known (at most 64), or
 * that is given twice (SQLite's JSON functions would read the first and ignore the other). */
static int only_known(reader *r, const char *p, const char *field, const char *const *known) {
  sqlite3_stmt *st = NULL;
  int rc = PM_OK;
  unsigned long long seen = 0;
  if (sqlite3_prepare_v2(r->db, "SELECT key FROM json_each(?1, ?2)", -1, &st, NULL) != SQLITE_OK)
    return pm__seterr(r->c, PM_ENOMEM, "%s: %s", r->path, sqlite3_errmsg(r->db));
  sqlite3_bind_text(st, 1, r->json, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 2, p, -1, SQLITE_STATIC);
  while (rc == PM_OK && sqlite3_step(st) == SQLITE_ROW) {
    const char *key = (const char *)sqlite3_column_text(st, 0);
    int found = -1;
    for (int i = 0; known[i] != NULL && i < 64 && found < 0; i++)
      if (key && strcmp(key, known[i]) == 0) found = i;
    if (found < 0) {
      char list[256] = "";
      size_t len = 0;
      for (int i = 0; known[i] != NULL && len < sizeof list; i++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", known[i]);
      rc = fail(r, field[0] ? field : "(top)", "unknown field '%s' (known: %s)",
                quote(r, key ? key : "?"), list);
    } else if (seen & (1ull << found)) {
      char twice[96];
      snprintf(twice, sizeof twice, "%s%s%s", field, field[0] ? "." : "", known[found]);
      rc = fail(r, twice, "given twice (a field is given once)");
    }
    seen |= 1ull << (found & 63);
  }
  sqlite3_finalize(st);
  return rc;
}

int pm__is_identifier(const char *s, size_t max) {
  if (s == NULL || !(isalpha((unsigned char)s[0]) || s[0] == '_')) return 0;
  size_t n = 0;
  for (; s[n] != '\0'; n++)
    if (!(isalnum((unsigned char)s[n]) || s[n] == '_')) return 0;
  return n <= max;
}

/* Where (a field as messages name it: "entry", "args[2].name", "params" for a key of params)
 * the first string of the valid JSON at w->p, a member's key or a value, holds the escape
 * \u0000: SQLite's JSON functions would cut the string there, silently. A walk over the text. */
typedef struct nul_walk {
  const char *p;
  char field[128];
} nul_walk;

static void walk_ws(nul_walk *w) {
  while (*w->p == ' ' || *w->p == '\t' || *w->p == '\n' || *w->p == '\r') w->p++;
}

/* Skips the string at w->p (its opening quote); 1 where it holds \u0000. */
static int walk_string(nul_walk *w) {
  int nul = 0;
  for (w->p++; *w->p != '"' && *w->p != '\0'; w->p++)
    if (*w->p == '\\' && w->p[1] != '\0') {
      nul |= w->p[1] == 'u' && strncmp(w->p + 2, "0000", 4) == 0;
      w->p++;
    }
  if (*w->p == '"') w->p++;
  return nul;
}

/* Walks the value at w->p, whose field is w->field[0..at); 1 (w->field the string's) where a
 * string in it holds \u0000. */
static int walk_value(nul_walk *w, size_t at) {
  size_t cap = sizeof w->field;
  walk_ws(w);
  if (*w->p == '"') return walk_string(w);
  if (*w->p == '{' || *w->p == '[') {
    char close = *w->p == '{' ? '}' : ']';
    long i = 0;
    for (w->p++, walk_ws(w); *w->p != close && *w->p != '\0'; i++) {
      size_t n = at;
      if (close == '}') {
        const char *key = w->p + 1;
        if (walk_string(w)) return w->field[at] = '\0', 1; /* a key: its object named */
        int len = (int)(w->p - key - 1);
        n += (size_t)snprintf(w->field + at, cap - at, "%s%.*s", at ? "." : "", len, key);
        walk_ws(w);
        if (*w->p == ':') w->p++;
      } else {
        n += (size_t)snprintf(w->field + at, cap - at, "[%ld]", i);
      }
      if (walk_value(w, n < cap ? n : cap - 1)) return 1;
      w->field[at] = '\0';
      walk_ws(w);
      if (*w->p == ',') w->p++, walk_ws(w);
    }
    if (*w->p == close) w->p++;
    return 0;
  }
  while (*w->p != '\0' && strchr(",]} \t\r\n", *w->p) == NULL) w->p++; /* a number, a literal */
  return 0;
}

/* ---- Expressions ---------------------------------------------------------------------------- */

static int param_index(const pm__kernel_file *k, const char *name) {
  for (int i = 0; i < k->op.nparams; i++)
    if (strcmp(k->params[i].name, name) == 0) return i;
  return -1;
}

static int dim_index(const pm__kernel_file *k, const char *name) {
  for (int i = 0; i < k->ndims; i++)
    if (strcmp(k->dims[i], name) == 0) return i;
  if (k->tuned != NULL && strcmp(k->tuned, name) == 0) return k->ndims;
  return -1;
}

/* Dimension d of pr as k names them: n; rows, cols; batch (pr->n), rows, cols; then the tuned
 * scalar's value (pr->radius). */
static long long dim_value(const pm__kernel_file *k, const pm__problem *pr, int d) {
  if (d == k->ndims) return pr->radius;
  if (k->ndims == 1) return pr->n;
  if (k->ndims == 3 && d-- == 0) return pr->n;
  return d == 0 ? pr->rows : pr->cols;
}

/* The functions an expression may call: integer (and a little real) launch arithmetic, nothing
 * that makes strings or blobs, reads anything or loops. docs/kernels.md lists them. */
static const char *const allowed_functions[] = {"abs",  "ceil", "coalesce", "floor", "ifnull",
                                                "iif",  "max",  "min",      "nullif", "round",
                                                NULL};

/* The evaluator's authorizer: what `SELECT (text)` may do while it is prepared. One SELECT (its
 * own: a second is a subquery, EXISTS, IN (SELECT ...), VALUES or a window), the allowed
 * functions, and nothing else: no table or schema read, no CTE, no write, ATTACH or PRAGMA. */
static int authorize(void *arg, int action, const char *a, const char *b, const char *db,
                     const char *trigger) {
  guard *g = arg;
  (void)a, (void)db, (void)trigger;
  if (action == SQLITE_SELECT && g->selects++ == 0) return SQLITE_OK;
  if (action == SQLITE_FUNCTION && b != NULL)
    for (int i = 0; allowed_functions[i] != NULL; i++)
      if (strcasecmp(b, allowed_functions[i]) == 0) return SQLITE_OK;
  if (g->why[0] == '\0') {
    if (action == SQLITE_SELECT)
      snprintf(g->why, sizeof g->why, "a query inside it (a subquery, EXISTS, IN (SELECT ...), "
                                      "VALUES or a window): an expression is one value");
    else if (action == SQLITE_FUNCTION) {
      size_t at = (size_t)snprintf(g->why, sizeof g->why, "the function %.40s() (allowed: ",
                                   b ? b : "?");
      for (int i = 0; allowed_functions[i] != NULL && at < sizeof g->why; i++)
        at += (size_t)snprintf(g->why + at, sizeof g->why - at, "%s%s", i ? ", " : "",
                               allowed_functions[i]);
      if (at < sizeof g->why) snprintf(g->why + at, sizeof g->why - at, ")");
    } else if (action == SQLITE_READ)
      snprintf(g->why, sizeof g->why, "a table read: an expression reads nothing");
    else if (action == SQLITE_RECURSIVE)
      snprintf(g->why, sizeof g->why, "a recursive query");
    else
      snprintf(g->why, sizeof g->why, "a statement's action (SQLite's authorizer code %d): an "
                                      "expression only computes", action);
  }
  return SQLITE_DENY;
}

/* Evaluation that runs past its budget of VM instructions stops (SQLITE_INTERRUPT). SQLite
 * calls this every EXPR_TICK instructions that a statement runs, counted over all its runs, not
 * from each run's start: a run is stopped at its EXPR_TICKS + 1st call, which comes after at
 * least EXPR_TICKS * EXPR_TICK of its own instructions. */
static int out_of_steps(void *arg) {
  guard *g = arg;
  return ++g->ticks > EXPR_TICKS;
}

/* k->db: an empty database in memory in which an expression can read nothing, write nothing,
 * call only the allowed functions, and make no string or blob, nesting or program past the
 * bounds above. */
static int evaluator_open(pm_ctx *c, pm__kernel_file *k, const char *shown_path) {
  if (sqlite3_open_v2(":memory:", &k->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_MEMORY, NULL) !=
      SQLITE_OK)
    return pm__seterr(c, PM_ENOMEM, "%s: no SQLite database in memory for the expressions",
                      shown_path);
  static const int limits[][2] = {
      {SQLITE_LIMIT_LENGTH, EXPR_BYTES},
      {SQLITE_LIMIT_SQL_LENGTH, MAX_EXPR + 16},
      {SQLITE_LIMIT_COLUMN, 8},
      {SQLITE_LIMIT_EXPR_DEPTH, EXPR_DEPTH},
      {SQLITE_LIMIT_VDBE_OP, 4 * MAX_EXPR},
      {SQLITE_LIMIT_FUNCTION_ARG, 16},
      {SQLITE_LIMIT_ATTACHED, 0},
      {SQLITE_LIMIT_LIKE_PATTERN_LENGTH, 64},
      {SQLITE_LIMIT_VARIABLE_NUMBER, PM__MAX_PARAMS + 2},
      {SQLITE_LIMIT_TRIGGER_DEPTH, 1},
      {SQLITE_LIMIT_WORKER_THREADS, 0},
  };
  for (size_t i = 0; i < sizeof limits / sizeof *limits; i++)
    sqlite3_limit(k->db, limits[i][0], limits[i][1]);
  sqlite3_db_config(k->db, SQLITE_DBCONFIG_DQS_DML, 0, (int *)NULL); /* "x" is no string */
  sqlite3_db_config(k->db, SQLITE_DBCONFIG_DQS_DDL, 0, (int *)NULL);
  sqlite3_db_config(k->db, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)NULL);
  sqlite3_db_config(k->db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, (int *)NULL);
  sqlite3_set_authorizer(k->db, authorize, &k->guard);
  sqlite3_progress_handler(k->db, EXPR_TICK, out_of_steps, &k->guard);
  return PM_OK;
}

/* Why text cannot be what `SELECT (text)` makes one expression of, or NULL. Its parentheses
 * (outside quotes) balance without ever closing the one that SELECT (text) opens, so that the
 * whole text is inside it; it holds no comment (which could swallow that closing parenthesis),
 * no ';' and no parameter but :NAME. The authorizer and the parse (one column, nothing after)
 * check the rest. */
static const char *expr_shape(const char *text) {
  int depth = 0;
  if (strlen(text) > MAX_EXPR) return "longer than 2048 characters";
  if (text[strspn(text, " \t\r\n")] == '\0') return "empty";
  for (const char *p = text; *p != '\0'; p++) {
    switch (*p) {
    case '\'': case '"': case '`': { /* quoted to the next lone quote ('' is one inside) */
      char q = *p;
      for (p++; *p != '\0' && !(*p == q && p[1] != q); p += *p == q ? 2 : 1)
        ;
      if (*p == '\0') return "a quote left open";
      break;
    }
    case '[':
      if ((p = strchr(p, ']')) == NULL) return "a '[' left open";
      break;
    case '(': depth++; break;
    case ')':
      if (--depth < 0) return "a ')' that closes what it did not open";
      break;
    case ';': return "a ';': one expression, not statements";
    case '-':
      if (p[1] == '-') return "a comment (--)";
      break;
    case '/':
      if (p[1] == '*') return "a comment (/*)";
      break;
    case '?': case '$': case '@': case '#': return "parameters are written :NAME";
    default: break;
    }
  }
  return depth != 0 ? "a '(' left open" : NULL;
}

/* Compiles text into e (SELECT (text), a statement of its own), checking that it is one
 * expression, a single value that SQLite parsed whole (expr_shape, one column, nothing left
 * after it), that the authorizer allowed, naming only :PARAMETERS and :DIMENSIONS (and no
 * parameter where params_ok is 0). */
static int expr_make(reader *r, pm__kernel_file *k, const char *field, const char *text,
                     int params_ok, expr *e) {
  char shown[4 * MAX_EXPR + 16];
  snprintf(e->field, sizeof e->field, "%s", field);
  escape(shown, sizeof shown, text, 0);
  if ((e->text = pm__strdup(shown)) == NULL) return pm__seterr(r->c, PM_ENOMEM, "out of memory");
  const char *why = expr_shape(text);
  if (why != NULL)
    return fail(r, field, "'%s' is not one SQL expression: %s", quote(r, text), why);
  size_t len = strlen(text) + 16;
  char *sql = pm__malloc(len);
  if (sql == NULL) return pm__seterr(r->c, PM_ENOMEM, "out of memory");
  snprintf(sql, len, "SELECT (%s\n)", text); /* a newline would end any comment */
  const char *tail = NULL;
  k->guard.selects = 0, k->guard.why[0] = '\0';
  int src = sqlite3_prepare_v2(k->db, sql, -1, &e->st, &tail);
  int more = src == SQLITE_OK && (tail == NULL || tail[strspn(tail, " \t\r\n")] != '\0');
  free(sql);
  if (src == SQLITE_OK && e->st == NULL)
    why = "nothing";
  else if (src != SQLITE_OK)
    why = k->guard.why[0] ? k->guard.why : sqlite3_errmsg(k->db);
  else if (more)
    why = "more than one statement";
  else if (sqlite3_column_count(e->st) != 1)
    why = "more than one value";
  else if (!sqlite3_stmt_readonly(e->st))
    why = "it writes";
  if (why != NULL)
    return fail(r, field, "'%s' is not one SQL expression: %s", quote(r, text), why);
  e->nbinds = sqlite3_bind_parameter_count(e->st);
  for (int i = 1; i <= e->nbinds; i++) {
    const char *name = sqlite3_bind_parameter_name(e->st, i);
    int p = name && name[0] == ':' ? param_index(k, name + 1) : -1;
    int d = name && name[0] == ':' ? dim_index(k, name + 1) : -1;
    if (name == NULL || name[0] != ':')
      return fail(r, field, "'%s': parameters are written :NAME", quote(r, text));
    if (p >= 0) {
      if (!params_ok)
        return fail(r, field, "'%s' names the parameter %s: it may name the dimensions alone (%s%s%s%s%s)",
                    quote(r, text), quote(r, name), k->dims[0], k->ndims > 1 ? ", " : "",
                    k->ndims > 1 ? k->dims[1] : "", k->ndims > 2 ? ", " : "",
                    k->ndims > 2 ? k->dims[2] : "");
      e->uses_params = 1;
      e->binds[i - 1] = (signed char)p;
    } else if (d >= 0) {
      e->uses_dims = 1;
      e->binds[i - 1] = (signed char)(-1 - d);
    } else {
      return fail(r, field, "'%s' names %s, which is neither a parameter nor a dimension",
                  quote(r, text), quote(r, name));
    }
  }
  return PM_OK;
}

static void expr_free(expr *e) {
  sqlite3_finalize(e->st);
  free(e->text);
  memset(e, 0, sizeof *e);
}

/* Column col of st's row as a number: 0 done; 1 NULL, not a number, or past 64 bits. */
static int column_value(sqlite3_stmt *st, int col, long long *out, double *real) {
  int t = sqlite3_column_type(st, col);
  if (t == SQLITE_INTEGER) {
    *out = sqlite3_column_int64(st, col);
    if (real) *real = (double)*out;
    return 0;
  }
  if (t != SQLITE_FLOAT) return 1;
  double x = sqlite3_column_double(st, col);
  if (real) *real = x;
  if (!(x >= -9.2e18 && x <= 9.2e18)) return 1;
  *out = (long long)x;
  return 0;
}

/* Evaluates e for point v (may be NULL where e names no parameter) and problem pr (may be NULL
 * where e names no dimension; what is not given is NULL) into *out (and *real, where given).
 * 0 done; 1 the value is NULL, not a number, out of the 64-bit range (SQLite's `1/0` is NULL),
 * or the evaluation failed (past its bounds). Under k's lock. */
static int expr_value(pm__kernel_file *k, const expr *e, const int *v, const pm__problem *pr,
                      long long *out, double *real) {
  sqlite3_stmt *st = e->st;
  for (int i = 0; i < e->nbinds; i++) {
    int s = e->binds[i];
    if (s >= 0 && v != NULL)
      sqlite3_bind_int64(st, i + 1, v[s]);
    else if (s < 0 && pr != NULL)
      sqlite3_bind_int64(st, i + 1, dim_value(k, pr, -1 - s));
    else
      sqlite3_bind_null(st, i + 1);
  }
  k->guard.selects = 0; /* were SQLite ever to prepare it again, its one SELECT is allowed */
  k->guard.ticks = 0;
  int bad = sqlite3_step(st) != SQLITE_ROW || column_value(st, 0, out, real);
  sqlite3_reset(st);
  return bad;
}

static int expr_eval(pm__kernel_file *k, const expr *e, const int *v, const pm__problem *pr,
                     long long *out) {
  return expr_value(k, e, v, pr, out, NULL);
}

/* ---- The op's callbacks --------------------------------------------------------------------- */

/* Each expression is a statement of its own, evaluated in the order the reasons are given (the
 * constraints, the block, the grid, the shared memory) and no further than the first reason:
 * a point pruned by its first constraint costs one step. Without a size, what names a dimension
 * is left out (the grid always is: as far as it counts, it names one). */
static const char *check(const pm__op *self, const int *v, const pm__problem *pr,
                         const pm__limits *lim) {
  pm__kernel_file *k = (pm__kernel_file *)self;
  const char *why = NULL;
  long long x = 0, threads = 1;
  int block_known = 1;
  pthread_mutex_lock(&k->lock);
  for (int i = 0; i < k->nconstraints && why == NULL; i++)
    if (pr != NULL || !k->constraints[i].uses_dims)
      why = expr_eval(k, &k->constraints[i], v, pr, &x) ? "a constraint does not evaluate to a number"
            : x == 0                                     ? k->reasons[i]
                                                         : NULL;
  for (int i = 0; i < k->nblock && why == NULL; i++) {
    if (pr == NULL && k->block[i].uses_dims) block_known = 0;
    else if (expr_eval(k, &k->block[i], v, pr, &x) || x < 1 || x > 1024)
      why = "a block dimension out of range";
    else threads *= x;
  }
  if (why == NULL && block_known && threads > lim->max_threads)
    why = "threads per block out of range";
  for (int i = 0; i < k->ngrid && why == NULL && pr != NULL; i++)
    if (expr_eval(k, &k->grid[i], v, pr, &x) || x < 1 || x > (i == 0 ? INT_MAX : 65535))
      why = "a grid dimension out of range";
  if (why == NULL && (pr != NULL || !k->shared.uses_dims) &&
      (expr_eval(k, &k->shared, v, pr, &x) || x < 0 || (unsigned long long)x > lim->max_smem))
    why = "the shared memory is more than a block has";
  pthread_mutex_unlock(&k->lock);
  return why;
}

static double bytes(const pm__op *self, const pm__problem *pr) {
  pm__kernel_file *k = (pm__kernel_file *)self;
  long long x = 0;
  pthread_mutex_lock(&k->lock);
  int bad = expr_eval(k, &k->bytes, NULL, pr, &x);
  pthread_mutex_unlock(&k->lock);
  return bad || x < 0 ? 0 : (double)x;
}

static size_t layout(const pm__op *self, const int *v) {
  (void)self, (void)v;
  return 0;
}

static void fallback(const pm__op *self, const pm__problem *pr, int *v) {
  (void)pr;
  memcpy(v, self->seed, sizeof self->seed);
}

/* Of the point, its parameters alone count: a caller's array may hold anything past them. */
static uint64_t memo_hash(const int *v, int nparams, const pm__problem *pr) {
  uint64_t h = 1469598103934665603ull;
  const unsigned char *p = (const unsigned char *)v;
  for (size_t i = 0; i < sizeof(int) * (size_t)nparams; i++) h = (h ^ p[i]) * 1099511628211ull;
  uint64_t dims[4] = {pr->rows, pr->cols, pr->n, (uint64_t)pr->radius};
  p = (const unsigned char *)dims;
  for (size_t i = 0; i < sizeof dims; i++) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

static int memo_same(const launch_memo *m, const int *v, int nparams, const pm__problem *pr) {
  return memcmp(m->v, v, sizeof(int) * (size_t)nparams) == 0 && m->pr.rows == pr->rows &&
         m->pr.cols == pr->cols && m->pr.n == pr->n && m->pr.radius == pr->radius;
}

/* What a launch of v on pr passes: from k's table, else evaluated now and added. NULL where an
 * expression gives no number (check() prunes such points: cannot be for a valid one) or memory
 * ran out (*nomem set). Under k's lock. */
static const launch_memo *memo_get(pm__kernel_file *k, const int *v, const pm__problem *pr,
                                   int *nomem) {
  uint64_t h = memo_hash(v, k->op.nparams, pr);
  *nomem = 0;
  if (k->nbuckets > 0)
    for (launch_memo *m = k->memo[h & (k->nbuckets - 1)]; m != NULL; m = m->next)
      if (memo_same(m, v, k->op.nparams, pr)) return m;
  long long x = 0, dims[2][3] = {{1, 1, 1}, {1, 1, 1}};
  const expr *es[2] = {k->grid, k->block};
  int ns[2] = {k->ngrid, k->nblock}, bad = 0;
  launch_memo m = {0};
  for (int g = 0; g < 2 && !bad; g++)
    for (int i = 0; i < ns[g] && !bad; i++)
      bad = expr_eval(k, &es[g][i], v, pr, &dims[g][i]) || dims[g][i] < 1 || dims[g][i] > INT_MAX;
  if (!bad) bad = expr_eval(k, &k->shared, v, pr, &x) || x < 0;
  m.shared = (size_t)x;
  for (int i = 0; i < k->nargs && !bad; i++) {
    const arg *a = &k->args[i];
    double real = 0;
    if (!a->scalar) continue;
    if ((bad = expr_value(k, &a->e, v, pr, &x, &real)) != 0) break;
    switch (a->type) {
    case SCALAR_I32: m.values[i].i32 = (int)x; break;
    case SCALAR_I64: m.values[i].i64 = x; break;
    case SCALAR_F32: m.values[i].f32 = (float)real; break;
    default: m.values[i].f64 = real; break;
    }
  }
  if (bad) return NULL;
  m.grid = (dim3){(unsigned)dims[0][0], (unsigned)dims[0][1], (unsigned)dims[0][2]};
  m.block = (dim3){(unsigned)dims[1][0], (unsigned)dims[1][1], (unsigned)dims[1][2]};
  memcpy(m.v, v, sizeof(int) * (size_t)k->op.nparams);
  m.pr = *pr;
  if (k->nmemo >= k->nbuckets) { /* at most one entry a bucket on average: twice the buckets */
    size_t n = k->nbuckets ? 2 * k->nbuckets : 64;
    launch_memo **grown = pm__calloc(n, sizeof *grown);
    if (grown == NULL) return *nomem = 1, NULL;
    for (size_t b = 0; b < k->nbuckets; b++)
      for (launch_memo *e = k->memo[b], *next; e != NULL; e = next) {
        next = e->next;
        size_t to = memo_hash(e->v, k->op.nparams, &e->pr) & (n - 1);
        e->next = grown[to];
        grown[to] = e;
      }
    free(k->memo);
    k->memo = grown, k->nbuckets = n;
  }
  launch_memo *e = pm__malloc(sizeof *e);
  if (e == NULL) return *nomem = 1, NULL;
  *e = m;
  e->next = k->memo[h & (k->nbuckets - 1)];
  k->memo[h & (k->nbuckets - 1)] = e;
  k->nmemo++;
  return e;
}

/* Launches entry `which` of kern (0: the kernel; 1: the reference) as point v on d. */
static int launch_entry(pm__kernel_file *k, pm_ctx *c, const pm__kernel *kern, int which,
                        const int *v, pm__data *d, cudaStream_t stream) {
  value values[MAX_ARGS];
  void *args[MAX_ARGS];
  dim3 grid, block;
  size_t shared;
  int nomem;
  pthread_mutex_lock(&k->lock);
  const launch_memo *m = memo_get(k, v, &d->pr, &nomem);
  if (m != NULL) { /* copied: the entry is the table's, read under the lock */
    grid = m->grid, block = m->block, shared = m->shared;
    memcpy(values, m->values, sizeof values);
  }
  pthread_mutex_unlock(&k->lock);
  if (m == NULL)
    return nomem ? pm__seterr(c, PM_ENOMEM, "%s: out of memory", k->path)
                 : pm__seterr(c, PM_EINVAL, "%s: the launch's grid, block, shared memory or a "
                                            "scalar gives no number for this point and size",
                              k->path);
  for (int i = 0; i < k->nargs; i++) {
    const arg *a = &k->args[i];
    const void *given = a->scalar && d->scalars != NULL ? d->scalars[a->buf] : NULL;
    if (given != NULL) /* the call's value, in its type */
      memcpy(&values[i], given, a->type == SCALAR_I32 || a->type == SCALAR_F32 ? 4 : 8);
    args[i] = a->scalar ? (void *)&values[i] : (void *)&d->bufs[a->buf].dev;
  }
  return pm__kernel_launch(c, kern, which, grid, block, shared, stream, args);
}

static int launch(const pm__op *self, pm_ctx *c, const pm__kernel *kern, const int *v, pm__data *d,
                  cudaStream_t stream) {
  return launch_entry((pm__kernel_file *)self, c, kern, 0, v, d, stream);
}

/* The elements of buffer argument a on pr: its count, checked (at least 1; at most 2^40 bytes,
 * so that sizes stay exact and allocations sane). */
static int buffer_count(pm_ctx *c, pm__kernel_file *k, const arg *a, const pm__problem *pr,
                        size_t *count) {
  long long x = 0;
  pthread_mutex_lock(&k->lock);
  int bad = expr_eval(k, &a->e, NULL, pr, &x);
  pthread_mutex_unlock(&k->lock);
  size_t es = pm_dtype_size((pm_dtype)a->type);
  if (bad || x < 1 || (unsigned long long)x > ((unsigned long long)1 << 40) / es)
    return pm__seterr(c, PM_EINVAL, "%s: args[%d].count: '%.100s' gives %s for this size: 1 to "
                                    "2^40 bytes wanted",
                      k->path, (int)(a - k->args), a->e.text, bad ? "no number" : "a count out of range");
  *count = (size_t)x;
  return PM_OK;
}

/* Runs the reference once on d (placed) and keeps each output there as the reference that every
 * point's must match: the seed configuration, or the description's reference kernel (compiled
 * and launched as the seed is), whose outputs the seed's must then match too. */
static int run_seed(pm__kernel_file *k, pm_ctx *c, pm__data *d) {
  char defs[PM__MAX_DEFINES][24];
  const char *dp[PM__MAX_DEFINES];
  int n = pm__config_defines(&k->op, k->op.seed, &d->pr, defs);
  for (int i = 0; i < n; i++) dp[i] = defs[i];
  pm__cubin bin = {0};
  pm__kernel kern = {0};
  int rc = pm__compile(c, k->tpl.file, k->tpl.source, c->dev.arch, dp, (size_t)n, &bin);
  if (rc != PM_OK) return rc;
  const char *entries[2] = {k->entry, k->reference};
  rc = pm__kernel_load(c, &bin, entries, k->reference ? 2 : 1, &kern);
  pm__cubin_free(&bin);
  if (rc != PM_OK) return rc;
  if ((rc = launch_entry(k, c, &kern, k->reference ? 1 : 0, k->op.seed, d, pm__tune_stream())) !=
      PM_OK)
    goto fail;
  PM__CUDA(c, cudaStreamSynchronize(pm__tune_stream()));
  for (int i = 0; i < d->nbufs; i++) {
    pm__buf *b = &d->bufs[i];
    if (b->dir == PM__BUF_IN) continue;
    PM__CUDA(c, cudaMalloc(&b->ref, b->bytes));
    PM__CUDA(c, pm__tune_copy(b->ref, b->dev, b->bytes, cudaMemcpyDeviceToDevice));
  }
fail:
  pm__kernel_unload(&kern);
  return rc;
}

int pm__kernel_file_check_size(pm_ctx *c, pm__kernel_file *k, const pm__problem *pr) {
  size_t count;
  for (int i = 0; i < k->nargs; i++) {
    int rc = k->args[i].scalar ? PM_OK : buffer_count(c, k, &k->args[i], pr, &count);
    if (rc != PM_OK) return rc;
  }
  return PM_OK;
}

int pm__kernel_file_compile_seed(pm_ctx *c, pm__kernel_file *k, const char *arch) {
  char defs[PM__MAX_DEFINES][24];
  const char *dp[PM__MAX_DEFINES];
  int n = pm__config_defines(&k->op, k->op.seed, NULL, defs);
  for (int i = 0; i < n; i++) dp[i] = defs[i];
  pm__cubin bin = {0};
  int rc = pm__compile(c, k->tpl.file, k->tpl.source, arch, dp, (size_t)n, &bin);
  if (rc == PM_ECOMPILE) {
    char log[2048];
    snprintf(log, sizeof log, "%s", pm_errmsg(c));
    for (char *p = log; *p; p++) /* one line */
      if (*p == '\n') *p = ' ';
    return pm__seterr(c, PM_ECOMPILE, "%s: source: the seed does not compile for %s: %s", k->path,
                      arch, log);
  }
  if (rc != PM_OK) return rc;
  rc = pm__kernel_file_check_cubin(c, k, &bin);
  pm__cubin_free(&bin);
  return rc;
}

int pm__kernel_file_check_cubin(pm_ctx *c, const pm__kernel_file *k, const pm__cubin *bin) {
  const char *names[2] = {k->entry, k->reference};
  for (int e = 0; e < 2; e++)
    if (names[e] != NULL && !pm__cubin_has_symbol(bin, names[e]))
      return pm__seterr(c, PM_EINVAL, "%s: %s: '%s' is not a kernel of the compiled %s (declare "
                                      "it extern \"C\" __global__)",
                        k->path, e == 0 ? "entry" : "reference", names[e], k->source_file);
  return PM_OK;
}

static int prepare(const pm__op *self, pm_ctx *c, const pm__problem *pr, uint64_t seed,
                   pm__data *d) {
  pm__kernel_file *k = (pm__kernel_file *)self;
  int rc = PM_OK;
  d->pr = *pr;
  d->nbufs = k->nbufs;
  for (int i = 0; i < k->nargs && rc == PM_OK; i++) {
    const arg *a = &k->args[i];
    size_t count = 0;
    if (a->scalar || (rc = buffer_count(c, k, a, pr, &count)) != PM_OK) continue;
    pm__buf *b = &d->bufs[a->buf];
    b->dir = a->dir;
    b->bytes = count * pm_dtype_size((pm_dtype)a->type);
    if (a->dir != PM__BUF_OUT &&
        (b->host = pm__random_fill_typed(a->type, count, seed + 7919 * (uint64_t)(i + 1))) == NULL)
      rc = pm__seterr(c, PM_ENOMEM, "%s: out of memory for args[%d] (%zu bytes)", k->path, i,
                      b->bytes);
  }
  if (rc == PM_OK) rc = pm__data_place(c, d, 0);
  if (rc == PM_OK) rc = run_seed(k, c, d);
  return rc;
}

/* Compares buffer b (argument a) with its reference: bit for bit where the file's tolerance is
 * 0, else |got - want| <= tolerance * max(1, |want|), NaN never passing. */
static int verify_buffer(pm__kernel_file *k, pm_ctx *c, const arg *a, const pm__buf *b,
                         double *err) {
  size_t es = pm_dtype_size((pm_dtype)a->type), count = b->bytes / es;
  unsigned long long bad = 0, first = 0;
  double worst = 0;
  int rc = PM_OK;
  unsigned char *got = NULL, *want = NULL;
  if (k->tolerance == 0) {
    for (size_t at = 0; at < count && bad == 0 && rc == PM_OK;) {
      unsigned chunk = count - at > (1u << 30) ? 1u << 30 : (unsigned)(count - at);
      rc = pm__compare_2d(c, (const char *)b->dev + at * es, (size_t)chunk * es,
                          (const char *)b->ref + at * es, 1, chunk, (unsigned)es, &bad, &first);
      if (bad) first += at; /* the count is the first differing chunk's */
      at += chunk;
    }
    if (rc != PM_OK) return rc;
    *err = (double)bad / (double)count;
    if (bad == 0) return PM_OK;
    unsigned char g[8], w[8];
    memset(g, 0xff, sizeof g), memset(w, 0xff, sizeof w);
    pm__tune_copy(g, (const char *)b->dev + first * es, es, cudaMemcpyDeviceToHost);
    pm__tune_copy(w, (const char *)b->ref + first * es, es, cudaMemcpyDeviceToHost);
    return pm__seterr(c, PM_EVERIFY, "%s: %llu of %zu elements differ from the %s's; the first "
                                     "at [%llu]: %a, want %a",
                      a->name, bad, count, k->reference ? "reference" : "seed", first,
                      pm__elem_value(a->type, g), pm__elem_value(a->type, w));
  }
  if ((got = pm__malloc(b->bytes)) == NULL || (want = pm__malloc(b->bytes)) == NULL) {
    rc = pm__seterr(c, PM_ENOMEM, "%s: out of memory comparing %s", k->path, a->name);
    goto done;
  }
  PM__CUDA(c, pm__tune_copy(got, b->dev, b->bytes, cudaMemcpyDeviceToHost));
  PM__CUDA(c, pm__tune_copy(want, b->ref, b->bytes, cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < count; i++) {
    double x = pm__elem_value(a->type, got + i * es), y = pm__elem_value(a->type, want + i * es);
    double d = fabs(x - y) / fmax(1.0, fabs(y));
    if (!(d <= k->tolerance) && !(isnan(y) && isnan(x))) {
      if (bad++ == 0) first = i;
      if (isnan(d)) d = INFINITY;
    }
    if (d > worst) worst = d;
  }
  *err = worst;
  if (bad != 0) {
    double x = pm__elem_value(a->type, got + first * es), y = pm__elem_value(a->type, want + first * es);
    rc = pm__seterr(c, PM_EVERIFY, "%s: %llu of %zu elements differ from the %s's by more than "
                                   "the tolerance %g; the first at [%llu]: %a, want %a",
                    a->name, bad, count, k->reference ? "reference" : "seed", k->tolerance, first,
                    x, y);
  }
fail:
done:
  free(got), free(want);
  return rc;
}

static int verify(const pm__op *self, pm_ctx *c, const int *v, pm__data *d, double *err) {
  pm__kernel_file *k = (pm__kernel_file *)self;
  (void)v;
  *err = 0;
  for (int i = 0; i < k->nargs; i++) {
    const arg *a = &k->args[i];
    double e = 0;
    if (a->scalar || a->dir == PM__BUF_IN) continue;
    int rc = verify_buffer(k, c, a, &d->bufs[a->buf], &e);
    if (e > *err) *err = e;
    if (rc != PM_OK) return rc;
  }
  return PM_OK;
}

/* ---- Loading -------------------------------------------------------------------------------- */

static int read_params(reader *r, pm__kernel_file *k) {
  sqlite3_stmt *st = NULL;
  char type[16];
  int rc = member(r, "$.params", type, NULL);
  if (rc != PM_OK) return rc;
  if (strcmp(type, "object") != 0)
    return fail(r, "params", strcmp(type, "missing") == 0
                                 ? "missing (an object: each parameter's name and its values)"
                                 : "an object wanted, not %s", type);
  if (sqlite3_prepare_v2(r->db, "SELECT key, type, value FROM json_each(?1, '$.params')", -1, &st,
                         NULL) != SQLITE_OK)
    return pm__seterr(r->c, PM_ENOMEM, "%s: %s", r->path, sqlite3_errmsg(r->db));
  sqlite3_bind_text(st, 1, r->json, -1, SQLITE_STATIC);
  while (rc == PM_OK && sqlite3_step(st) == SQLITE_ROW) {
    const char *name = (const char *)sqlite3_column_text(st, 0);
    const char *t = (const char *)sqlite3_column_text(st, 1);
    char field[64];
    snprintf(field, sizeof field, "params.%s", quote(r, name ? name : "?"));
    if (k->op.nparams == PM__MAX_PARAMS) {
      rc = fail(r, "params", "more than %d parameters", PM__MAX_PARAMS);
      break;
    }
    if (!pm__is_identifier(name, NAME_MAX_LEN)) {
      rc = fail(r, field, "a parameter's name is its -D define: a C identifier of at most %d "
                          "characters", NAME_MAX_LEN);
      break;
    }
    if (param_index(k, name) >= 0) {
      rc = fail(r, field, "given twice");
      break;
    }
    if (t == NULL || strcmp(t, "array") != 0) {
      rc = fail(r, field, "an array of integers wanted, not %s", t ? t : "?");
      break;
    }
    int i = k->op.nparams;
    pm__param *p = &k->params[i];
    if ((k->param_names[i] = pm__strdup(name)) == NULL) {
      rc = pm__seterr(r->c, PM_ENOMEM, "out of memory");
      break;
    }
    p->name = p->define = k->param_names[i];
    p->doc = "";
    sqlite3_stmt *vs = NULL;
    if (sqlite3_prepare_v2(r->db, "SELECT type, value FROM json_each(?1)", -1, &vs, NULL) !=
        SQLITE_OK) {
      rc = pm__seterr(r->c, PM_ENOMEM, "%s: %s", r->path, sqlite3_errmsg(r->db));
      break;
    }
    sqlite3_bind_text(vs, 1, (const char *)sqlite3_column_text(st, 2), -1, SQLITE_TRANSIENT);
    while (rc == PM_OK && sqlite3_step(vs) == SQLITE_ROW) {
      const char *vt = (const char *)sqlite3_column_text(vs, 0);
      long long x = sqlite3_column_int64(vs, 1);
      if (vt == NULL || strcmp(vt, "integer") != 0 || x < INT_MIN || x > INT_MAX)
        rc = fail(r, field, "values are integers (of C's int); got %s %s", vt ? vt : "?",
                  quote(r, (const char *)sqlite3_column_text(vs, 1)));
      else if (p->nvalues == PM__MAX_VALUES)
        rc = fail(r, field, "more than %d values", PM__MAX_VALUES);
      else {
        for (int j = 0; j < p->nvalues && rc == PM_OK; j++)
          if (p->values[j] == (int)x) rc = fail(r, field, "the value %lld twice", x);
        if (rc == PM_OK) p->values[p->nvalues++] = (int)x;
      }
    }
    sqlite3_finalize(vs);
    if (rc == PM_OK && p->nvalues == 0) rc = fail(r, field, "no values");
    if (rc == PM_OK) k->op.nparams++;
  }
  sqlite3_finalize(st);
  if (rc == PM_OK && k->op.nparams == 0) rc = fail(r, "params", "no parameters");
  return rc;
}

static int read_seed(reader *r, pm__kernel_file *k) {
  char type[16], p[96];
  int rc = member(r, "$.seed", type, NULL);
  if (rc != PM_OK) return rc;
  if (strcmp(type, "object") != 0)
    return fail(r, "seed", strcmp(type, "missing") == 0
                               ? "missing (an object: a value of each parameter)"
                               : "an object wanted, not %s", type);
  const char *known[PM__MAX_PARAMS + 1] = {0};
  for (int i = 0; i < k->op.nparams; i++) known[i] = k->params[i].name;
  if ((rc = only_known(r, "$.seed", "seed", known)) != PM_OK) return rc;
  for (int i = 0; i < k->op.nparams; i++) {
    const pm__param *a = &k->params[i];
    char *text = NULL, field[64];
    snprintf(p, sizeof p, "$.seed.\"%s\"", a->name);
    snprintf(field, sizeof field, "seed.%s", a->name);
    if ((rc = member(r, p, type, &text)) != PM_OK) return rc;
    long long x = text ? strtoll(text, NULL, 10) : 0;
    free(text);
    if (strcmp(type, "integer") != 0)
      return fail(r, field, strcmp(type, "missing") == 0 ? "missing: the seed gives every parameter"
                                                         : "an integer wanted, not %s", type);
    int found = 0;
    for (int j = 0; j < a->nvalues && !found; j++) found = a->values[j] == x;
    if (!found) return fail(r, field, "%lld is not one of the parameter's values", x);
    k->op.seed[i] = (int)x;
  }
  return PM_OK;
}

/* Reads the array of expressions at p (at most max; at least min) into es. */
static int read_exprs(reader *r, pm__kernel_file *k, const char *name, int min, int max,
                      int params_ok, expr *es, int *n) {
  char p[64], field[48], type[16];
  long len;
  snprintf(p, sizeof p, "$.%s", name);
  int rc = array_len(r, p, name, &len);
  if (rc != PM_OK) return rc;
  if (len < 0 && min == 0) return *n = 0, PM_OK;
  if (len < min || len > max)
    return fail(r, name, len < 0 ? "missing (an array of %d to %d expressions)"
                                 : "an array of %d to %d expressions wanted", min, max);
  for (long i = 0; i < len; i++) {
    char *text = NULL;
    snprintf(p, sizeof p, "$.%s[%ld]", name, i);
    snprintf(field, sizeof field, "%s[%ld]", name, i);
    if ((rc = member(r, p, type, &text)) != PM_OK) return rc;
    if (strcmp(type, "text") != 0) {
      free(text);
      return fail(r, field, "an expression (a string) wanted, not %s", type);
    }
    *n = (int)i + 1; /* es[i] is k's to free from here, made or not (its text is taken first) */
    rc = expr_make(r, k, field, text, params_ok, &es[i]);
    free(text);
    if (rc != PM_OK) return rc;
  }
  return PM_OK;
}

static int read_one_expr(reader *r, pm__kernel_file *k, const char *name, const char *dflt,
                         int params_ok, expr *e) {
  char p[80], *text = NULL;
  snprintf(p, sizeof p, "$.%s", name);
  int rc = string_at(r, p, name, dflt == NULL, &text);
  if (rc != PM_OK) return rc;
  rc = expr_make(r, k, name, text ? text : dflt, params_ok, e);
  free(text);
  return rc;
}

/* The name of the scalar argument marked "tuned": true, if one is (k->tuned; its place among
 * the arguments k->tuned_arg), read before the expressions, which may name it as they name a
 * dimension; read_args checks the rest of it. */
static int read_tuned(reader *r, pm__kernel_file *k) {
  char type[16], p[64], field[48];
  long n;
  int rc = member(r, "$.args", type, NULL);
  if (rc != PM_OK || strcmp(type, "array") != 0) return rc; /* read_args says what is wrong */
  if ((rc = array_len(r, "$.args", "args", &n)) != PM_OK) return rc;
  for (long i = 0; i < n && i < MAX_ARGS && rc == PM_OK; i++) {
    snprintf(p, sizeof p, "$.args[%ld].tuned", i);
    snprintf(field, sizeof field, "args[%ld].tuned", i);
    if ((rc = member(r, p, type, NULL)) != PM_OK) break;
    if (strcmp(type, "missing") == 0 || strcmp(type, "false") == 0) continue;
    if (strcmp(type, "true") != 0) {
      rc = fail(r, field, "true or false wanted, not %s", type);
    } else if (k->tuned != NULL) {
      rc = fail(r, field, "a second tuned scalar (%s is one): at most one", quote(r, k->tuned));
    } else {
      snprintf(p, sizeof p, "$.args[%ld].name", i);
      snprintf(field, sizeof field, "args[%ld].name", i);
      k->tuned_arg = (int)i;
      if ((rc = string_at(r, p, field, 1, &k->tuned)) == PM_OK && strlen(k->tuned) > 23)
        rc = fail(r, field, "a tuned scalar's name is at most 23 characters (it is part of the "
                            "size's text)");
    }
  }
  return rc;
}

static int read_dims(reader *r, pm__kernel_file *k) {
  long n;
  char *a = NULL, *b = NULL, *c = NULL;
  int rc = array_len(r, "$.dims", "dims", &n);
  if (rc != PM_OK) return rc;
  if (n == 1 && (rc = string_at(r, "$.dims[0]", "dims[0]", 1, &a)) == PM_OK && strcmp(a, "n") == 0) {
    k->dims[0] = "n", k->ndims = 1;
  } else if (n == 2 && (rc = string_at(r, "$.dims[0]", "dims[0]", 1, &a)) == PM_OK &&
             (rc = string_at(r, "$.dims[1]", "dims[1]", 1, &b)) == PM_OK && strcmp(a, "rows") == 0 &&
             strcmp(b, "cols") == 0) {
    k->dims[0] = "rows", k->dims[1] = "cols", k->ndims = 2;
  } else if (n == 3 && (rc = string_at(r, "$.dims[0]", "dims[0]", 1, &a)) == PM_OK &&
             (rc = string_at(r, "$.dims[1]", "dims[1]", 1, &b)) == PM_OK &&
             (rc = string_at(r, "$.dims[2]", "dims[2]", 1, &c)) == PM_OK &&
             strcmp(a, "batch") == 0 && strcmp(b, "rows") == 0 && strcmp(c, "cols") == 0) {
    k->dims[0] = "batch", k->dims[1] = "rows", k->dims[2] = "cols", k->ndims = 3;
  } else if (rc == PM_OK) {
    rc = fail(r, "dims", "[\"n\"] (a vector), [\"rows\", \"cols\"] (a matrix) or [\"batch\", "
                         "\"rows\", \"cols\"] (a batch of matrices, or a volume) wanted");
  }
  free(a), free(b), free(c);
  if (rc == PM_OK)
    for (int i = 0; i < k->op.nparams && rc == PM_OK; i++)
      if (dim_index(k, k->params[i].name) >= 0)
        rc = fail(r, "params", "'%s' is also a dimension's name", k->params[i].name);
  for (int i = 0; rc == PM_OK && k->tuned != NULL && i < k->ndims; i++)
    if (strcmp(k->dims[i], k->tuned) == 0)
      rc = fail(r, "args", "the tuned scalar '%s' is also a dimension's name", quote(r, k->tuned));
  return rc;
}

static int read_args(reader *r, pm__kernel_file *k) {
  static const char *const buffer_fields[] = {"name", "type", "count", "dir", NULL};
  static const char *const scalar_fields[] = {"name", "scalar", "value", "tuned", NULL};
  static const char *const scalars[] = {"i32", "i64", "f32", "f64", NULL}; /* SCALAR_* order */
  static const char *const dirs[] = {"in", "out", "inout", NULL};          /* PM__BUF_* order */
  long n;
  int rc = array_len(r, "$.args", "args", &n);
  if (rc != PM_OK) return rc;
  if (n < 1 || n > MAX_ARGS)
    return fail(r, "args", n < 0 ? "missing (the kernel's arguments in order)"
                                 : "1 to %d arguments wanted", MAX_ARGS);
  for (long i = 0; i < n && rc == PM_OK; i++) {
    char p[64], field[48], f2[64], type[16], *s = NULL, *t = NULL, *dir = NULL;
    arg *a = &k->args[i];
    snprintf(p, sizeof p, "$.args[%ld]", i);
    snprintf(field, sizeof field, "args[%ld]", i);
    if ((rc = member(r, p, type, NULL)) != PM_OK) break;
    if (strcmp(type, "object") != 0) {
      rc = fail(r, field, "an object wanted, not %s", type);
      break;
    }
    k->nargs = (int)i + 1; /* from here a's strings and expression are k's to free */
    snprintf(p, sizeof p, "$.args[%ld].scalar", i);
    if ((rc = member(r, p, type, NULL)) != PM_OK) break;
    a->scalar = strcmp(type, "missing") != 0;
    snprintf(p, sizeof p, "$.args[%ld]", i);
    if ((rc = only_known(r, p, field, a->scalar ? scalar_fields : buffer_fields)) != PM_OK) break;
    snprintf(p, sizeof p, "$.args[%ld].name", i), snprintf(f2, sizeof f2, "%s.name", field);
    if ((rc = string_at(r, p, f2, 1, &a->name)) == PM_OK && !pm__is_identifier(a->name, 63))
      rc = fail(r, f2, "'%s' is not a C identifier", quote(r, a->name));
    if (rc == PM_OK && a->scalar) {
      snprintf(p, sizeof p, "$.args[%ld].scalar", i), snprintf(f2, sizeof f2, "%s.scalar", field);
      if ((rc = string_at(r, p, f2, 1, &s)) == PM_OK) {
        for (a->type = 0; scalars[a->type] != NULL && strcmp(scalars[a->type], s) != 0; a->type++)
          ;
        if (scalars[a->type] == NULL) rc = fail(r, f2, "'%s': i32, i64, f32 or f64 wanted", quote(r, s));
      }
      snprintf(p, sizeof p, "$.args[%ld].value", i);
      if (rc == PM_OK && (rc = member(r, p, type, NULL)) == PM_OK) {
        a->has_value = strcmp(type, "missing") != 0; /* else each call gives it; tuning runs 1 */
        k->scalar_arg[k->nscalars] = (signed char)i;
        a->buf = k->nscalars++;
        /* the tuned scalar: what read_tuned found; an integer each call gives, tuned at the
         * value its size says */
        char me[80] = "1";
        snprintf(f2, sizeof f2, "%s.tuned", field);
        if (i == k->tuned_arg) {
          if (a->type != SCALAR_I32 && a->type != SCALAR_I64)
            rc = fail(r, f2, "a tuned scalar is an integer (i32 or i64), not %s", scalars[a->type]);
          else if (a->has_value)
            rc = fail(r, f2, "a tuned scalar has no \"value\": each call gives it");
          k->tuned_scalar = a->buf;
          snprintf(me, sizeof me, ":%s", k->tuned);
        }
        snprintf(p, sizeof p, "args[%ld].value", i);
        if (rc == PM_OK) rc = read_one_expr(r, k, p, me, 1, &a->e);
      }
    } else if (rc == PM_OK) {
      snprintf(p, sizeof p, "$.args[%ld].type", i), snprintf(f2, sizeof f2, "%s.type", field);
      if ((rc = string_at(r, p, f2, 1, &t)) == PM_OK && (a->type = pm__dtype_find(t)) < 0)
        rc = fail(r, f2, "'%s': one of %s wanted", quote(r, t), PM__DTYPE_NAMES);
      snprintf(p, sizeof p, "$.args[%ld].dir", i), snprintf(f2, sizeof f2, "%s.dir", field);
      if (rc == PM_OK && (rc = string_at(r, p, f2, 1, &dir)) == PM_OK) {
        for (a->dir = 0; dirs[a->dir] != NULL && strcmp(dirs[a->dir], dir) != 0; a->dir++)
          ;
        if (dirs[a->dir] == NULL) rc = fail(r, f2, "'%s': in, out or inout wanted", quote(r, dir));
      }
      if (rc == PM_OK && k->nbufs == PM__MAX_BUFS)
        rc = fail(r, field, "more than %d buffers", PM__MAX_BUFS);
      if (rc == PM_OK) {
        k->buffer_arg[k->nbufs] = (signed char)i;
        a->buf = k->nbufs++;
        snprintf(p, sizeof p, "args[%ld].count", i);
        rc = read_one_expr(r, k, p, NULL, 0, &a->e);
      }
    }
    free(s), free(t), free(dir);
  }
  k->needed = -1;
  for (int i = k->nscalars - 1; i >= 0; i--)
    if (!k->args[k->scalar_arg[i]].has_value) k->needed = i;
  if (rc == PM_OK) {
    int outputs = 0;
    for (int i = 0; i < k->nargs; i++) outputs += !k->args[i].scalar && k->args[i].dir != PM__BUF_IN;
    if (outputs == 0)
      rc = fail(r, "args", "no buffer is \"out\" or \"inout\": nothing to check a run by");
  }
  return rc;
}

/* Every expression evaluates at the seed for a sample problem (n = 2^20, 1024 x 1024, or
 * 16 x 256 x 256):
 * an expression SQLite cannot give a number for is found here, not while tuning. */
static int evaluate_at_seed(reader *r, pm__kernel_file *k) {
  pm__problem sample = k->ndims == 3 ? (pm__problem){.n = 16, .rows = 256, .cols = 256}
                                     : (pm__problem){.rows = 1024, .cols = 1024, .n = 1u << 20};
  sample.radius = 1; /* a tuned scalar's least value */
  expr *all[MAX_CONSTRAINTS + MAX_ARGS + 8];
  int n = 0;
  long long x;
  for (int i = 0; i < k->nconstraints; i++) all[n++] = &k->constraints[i];
  for (int i = 0; i < k->ngrid; i++) all[n++] = &k->grid[i];
  for (int i = 0; i < k->nblock; i++) all[n++] = &k->block[i];
  all[n++] = &k->shared;
  all[n++] = &k->bytes;
  for (int i = 0; i < k->nargs; i++) all[n++] = &k->args[i].e;
  for (int i = 0; i < n; i++)
    if (expr_eval(k, all[i], k->op.seed, &sample, &x)) {
      int err = sqlite3_errcode(k->db); /* the step's, which the reset returned */
      return fail(r, all[i]->field, "'%s' does not evaluate to a number (at the seed, for %s)%s%s",
                  quote(r, all[i]->text),
                  k->ndims == 1 ? "n = 1048576" : k->ndims == 2 ? "1024 x 1024" : "16 x 256 x 256",
                  err == SQLITE_INTERRUPT ? ": it runs past its bound of VM steps"
                  : err != SQLITE_OK      ? ": "
                                          : "",
                  err != SQLITE_OK && err != SQLITE_INTERRUPT ? sqlite3_errmsg(k->db) : "");
    }
  return PM_OK;
}

void pm__kernel_file_free(pm__kernel_file *k) {
  if (k == NULL) return;
  for (int i = 0; i < k->nconstraints; i++) expr_free(&k->constraints[i]), free(k->reasons[i]);
  for (int i = 0; i < 3; i++) expr_free(&k->grid[i]), expr_free(&k->block[i]);
  expr_free(&k->shared);
  expr_free(&k->bytes);
  for (int i = 0; i < k->nargs; i++) expr_free(&k->args[i].e), free(k->args[i].name);
  for (size_t b = 0; b < k->nbuckets; b++)
    for (launch_memo *e = k->memo[b], *next; e != NULL; e = next) next = e->next, free(e);
  free(k->memo);
  for (int i = 0; i < PM__MAX_PARAMS; i++) free(k->param_names[i]);
  free(k->path), free(k->name), free(k->summary), free(k->entry), free(k->source_file);
  free(k->reference), free(k->tuned);
  free(k->source);
  sqlite3_close(k->db);
  pthread_mutex_destroy(&k->lock);
  free(k);
}

const pm__op *pm__kernel_file_op(const pm__kernel_file *k) { return &k->op; }

const char *pm__kernel_file_dim_name(const pm__kernel_file *k, int i) {
  return i >= 0 && i < k->ndims ? k->dims[i] : NULL;
}

int pm__kernel_file_buffers(const pm__kernel_file *k) { return k->nbufs; }

int pm__kernel_file_scalars(const pm__kernel_file *k) { return k->nscalars; }

int pm__kernel_file_scalar_needed(const pm__kernel_file *k) { return k->needed; }

int pm__kernel_file_tuned(const pm__kernel_file *k, int *is_i64) {
  if (is_i64 != NULL && k->tuned_scalar >= 0)
    *is_i64 = k->args[k->scalar_arg[k->tuned_scalar]].type == SCALAR_I64;
  return k->tuned_scalar;
}

const char *pm__kernel_file_scalar(const pm__kernel_file *k, int i, const char **type,
                                   int *has_value) {
  static const char *const names[] = {"i32", "i64", "f32", "f64"}; /* SCALAR_* order */
  if (i < 0 || i >= k->nscalars) return NULL;
  const arg *a = &k->args[k->scalar_arg[i]];
  if (type != NULL) *type = names[a->type];
  if (has_value != NULL) *has_value = a->has_value;
  return a->name;
}

const char *pm__kernel_file_buffer(const pm__kernel_file *k, int i, int *dtype) {
  if (i < 0 || i >= k->nbufs) return NULL;
  const arg *a = &k->args[k->buffer_arg[i]];
  if (dtype != NULL) *dtype = a->type;
  return a->name;
}

/* The source file that k->source_file names, into k->source: a path relative to the folder of
 * the description at path, which must stay inside that folder (symbolic links followed: their
 * real paths compared), a regular file of at most MAX_FILE bytes. */
static int read_source(reader *r, pm__kernel_file *k, const char *path) {
  const char *slash = strrchr(path, '/');
  char *dir = NULL, *full = NULL, *real_dir = NULL, *real = NULL;
  int rc = PM_OK;
  if (k->source_file[0] == '\0' || k->source_file[0] == '/')
    return fail(r, "source", "'%s': a path relative to the description's folder wanted",
                quote(r, k->source_file));
  int depth = 0; /* as written first: a way out by .. is refused whether or not it leads to a file */
  for (const char *p = k->source_file; *p != '\0' && depth >= 0;) {
    size_t n = strcspn(p, "/");
    depth += n == 2 && strncmp(p, "..", 2) == 0 ? -1 : n == 0 || (n == 1 && *p == '.') ? 0 : 1;
    p += n + (p[n] == '/');
  }
  if (depth < 0)
    return fail(r, "source", "'%s' is outside the description's folder (a path inside it wanted; "
                             "symbolic links are followed)", quote(r, k->source_file));
  size_t dlen = slash == NULL ? 1 : (size_t)(slash - path) + (slash == path);
  size_t len = dlen + strlen(k->source_file) + 2;
  if ((dir = pm__malloc(dlen + 1)) == NULL || (full = pm__malloc(len)) == NULL) {
    rc = pm__seterr(r->c, PM_ENOMEM, "out of memory");
    goto done;
  }
  snprintf(dir, dlen + 1, "%s", slash == NULL ? "." : path);
  snprintf(full, len, "%s/%s", dir, k->source_file);
  if ((real_dir = realpath(dir, NULL)) == NULL) {
    rc = fail(r, "source", "the description's folder: %s", strerror(errno));
    goto done;
  }
  if ((real = realpath(full, NULL)) == NULL) {
    rc = errno == ENOMEM ? pm__seterr(r->c, PM_ENOMEM, "out of memory")
                         : fail(r, "source", "%s: %s", quote(r, full), strerror(errno));
    goto done;
  }
  size_t n = strlen(real_dir);
  if (!(strncmp(real, real_dir, n) == 0 && (real[n] == '/' || (n == 1 && real_dir[0] == '/')))) {
    rc = fail(r, "source", "'%s' is outside the description's folder (a path inside it wanted; "
                           "symbolic links are followed)", quote(r, k->source_file));
    goto done;
  }
  /* pm__read_file: a FIFO, device or folder refused at once, never waited on */
  if ((k->source = pm__read_file(real, MAX_FILE, NULL)) == NULL)
    rc = errno == EFBIG  ? fail(r, "source", "%s: larger than %zu MiB, the most a source may be",
                                quote(r, full), MAX_FILE >> 20)
         : errno == ENOMEM ? pm__seterr(r->c, PM_ENOMEM, "%s: out of memory", r->path)
                           : fail(r, "source", "%s: %s", quote(r, full),
                                  pm__file_strerror(errno));
done:
  free(dir), free(full), free(real_dir), free(real);
  return rc;
}

int pm__kernel_file_load(pm_ctx *c, const char *path, pm__kernel_file **out) {
  *out = NULL;
  if (strlen(path) > 1024) /* its messages name it: a line of a path is enough */
    return pm__seterr(c, PM_EINVAL, "kernel file: the path is too long (%zu bytes)", strlen(path));
  pm__kernel_file *k = pm__calloc(1, sizeof *k);
  if (k == NULL) return pm__seterr(c, PM_ENOMEM, "out of memory");
  pthread_mutex_init(&k->lock, NULL);
  k->tuned_arg = k->tuned_scalar = -1;
  char shown[4200]; /* the path in messages: on one line */
  escape(shown, sizeof shown, path, 0);
  reader r = {c, shown, NULL, NULL, {{0}}, 0};
  char *json = NULL, *summary = NULL, type[16];
  size_t json_len = 0;
  int rc = PM_OK;
  if ((k->path = pm__strdup(shown)) == NULL) {
    rc = pm__seterr(c, PM_ENOMEM, "out of memory");
    goto done;
  }
  if ((json = pm__read_file(path, MAX_DESC, &json_len)) == NULL) {
    if (errno == EFBIG)
      rc = pm__seterr(c, PM_EINVAL, "%s: larger than %zu MiB, the most a kernel description may be",
                      shown, MAX_DESC >> 20);
    else
      rc = pm__seterr(c, errno == ENOMEM ? PM_ENOMEM : PM_EIO, "%s: %s", shown,
                      pm__file_strerror(errno));
    goto done;
  }
  if ((rc = evaluator_open(c, k, shown)) != PM_OK) goto done;
  if (sqlite3_open_v2(":memory:", &r.db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_MEMORY, NULL) !=
      SQLITE_OK) {
    rc = pm__seterr(c, PM_ENOMEM, "%s: no SQLite database in memory to read it", shown);
    goto done;
  }
  r.json = json;
  if (strlen(json) != json_len) {
    rc = fail(&r, "(top)", "not valid JSON: a NUL byte at byte %zu", strlen(json));
    goto done;
  }
  { /* valid first: no other JSON function sees a malformed document (pm__db_json_check) */
    int valid = pm__db_json_check(r.db, json, -1);
    if (valid < 0) {
      rc = pm__seterr(c, PM_ENOMEM, "%s: out of memory", shown);
      goto done;
    }
    if (valid && (rc = member(&r, "$", type, NULL)) != PM_OK) goto done;
    if (!valid || strcmp(type, "object") != 0) {
      rc = fail(&r, "(top)", valid ? "a JSON object wanted" : "not valid JSON");
      goto done;
    }
  }
  { /* a string that SQLite would cut at its \u0000: refused, naming its field */
    nul_walk w = {json, ""};
    if (walk_value(&w, 0)) {
      rc = fail(&r, w.field[0] ? w.field : "(top)", "a string holds \\u0000 (a NUL character): "
                                                    "refused, not cut short there");
      goto done;
    }
  }
  if ((rc = only_known(&r, "$", "", top_fields)) != PM_OK) goto done;
  if ((rc = string_at(&r, "$.name", "name", 1, &k->name)) != PM_OK) goto done;
  if (!pm__is_identifier(k->name, 31) || pm__op_find(k->name) != NULL) {
    rc = fail(&r, "name", "'%s': a C identifier of at most 31 characters, not a built-in "
                          "operation's name", quote(&r, k->name));
    goto done;
  }
  if ((rc = string_at(&r, "$.summary", "summary", 0, &summary)) != PM_OK) goto done;
  if ((rc = string_at(&r, "$.entry", "entry", 1, &k->entry)) != PM_OK) goto done;
  if (!pm__is_identifier(k->entry, 255)) {
    rc = fail(&r, "entry", "'%s' is not a C identifier", quote(&r, k->entry));
    goto done;
  }
  if ((rc = string_at(&r, "$.source", "source", 1, &k->source_file)) != PM_OK) goto done;
  if ((rc = read_source(&r, k, path)) != PM_OK) goto done;
  if ((rc = string_at(&r, "$.reference", "reference", 0, &k->reference)) != PM_OK) goto done;
  if (k->reference != NULL && (!pm__is_identifier(k->reference, 255) ||
                               strcmp(k->reference, k->entry) == 0)) {
    rc = fail(&r, "reference", "'%s': another kernel of the source (a C identifier) wanted",
              quote(&r, k->reference));
    goto done;
  }
  for (int e = 0; e < 2; e++) { /* the entry (and reference) defined in the source: a name, '(' */
    const char *name = e == 0 ? k->entry : k->reference;
    int found = 0;
    size_t len = name ? strlen(name) : 0;
    for (const char *p = k->source; name && !found && (p = strstr(p, name)) != NULL; p += len) {
      const char *after = p + len + strspn(p + len, " \t\r\n");
      found = (p == k->source || !(isalnum((unsigned char)p[-1]) || p[-1] == '_')) && *after == '(';
    }
    if (name != NULL && !found) {
      rc = fail(&r, e == 0 ? "entry" : "reference", "'%s' is not a function of %s", quote(&r, name),
                quote(&r, k->source_file));
      goto done;
    }
  }
  if ((rc = read_params(&r, k)) != PM_OK || (rc = read_tuned(&r, k)) != PM_OK ||
      (rc = read_dims(&r, k)) != PM_OK ||
      (rc = read_seed(&r, k)) != PM_OK)
    goto done;
  if ((rc = read_exprs(&r, k, "constraints", 0, MAX_CONSTRAINTS, 1, k->constraints,
                       &k->nconstraints)) != PM_OK ||
      (rc = read_exprs(&r, k, "grid", 1, 3, 1, k->grid, &k->ngrid)) != PM_OK ||
      (rc = read_exprs(&r, k, "block", 1, 3, 1, k->block, &k->nblock)) != PM_OK ||
      (rc = read_one_expr(&r, k, "shared", "0", 1, &k->shared)) != PM_OK ||
      (rc = read_one_expr(&r, k, "bytes", NULL, 0, &k->bytes)) != PM_OK ||
      (rc = read_args(&r, k)) != PM_OK)
    goto done;
  for (int i = 0; i < k->nconstraints; i++) {
    size_t len = strlen(k->constraints[i].text) + 40;
    if ((k->reasons[i] = pm__malloc(len)) == NULL) {
      rc = pm__seterr(c, PM_ENOMEM, "out of memory");
      goto done;
    }
    snprintf(k->reasons[i], len, "%s: %s", k->constraints[i].field, k->constraints[i].text);
  }
  {
    char t[16], *text = NULL;
    if ((rc = member(&r, "$.tolerance", t, &text)) != PM_OK) goto done;
    k->tolerance = text ? strtod(text, NULL) : 0;
    free(text);
    if (strcmp(t, "missing") != 0 &&
        ((strcmp(t, "integer") != 0 && strcmp(t, "real") != 0) || !(k->tolerance >= 0))) {
      rc = fail(&r, "tolerance", "a number of at least 0 wanted");
      goto done;
    }
  }
  if ((rc = evaluate_at_seed(&r, k)) != PM_OK) goto done;
  {
    size_t len = strlen(path) + 64;
    if ((k->summary = pm__malloc(len)) == NULL) {
      rc = pm__seterr(c, PM_ENOMEM, "out of memory");
      goto done;
    }
    if (summary) snprintf(k->summary, len, "%s", summary);
    else snprintf(k->summary, len, "a kernel of its own (%s)", path);
  }
  k->op.name = k->name;
  k->op.summary = k->summary;
  k->op.api = (pm_op)-1; /* no library call serves it (yet) */
  k->op.dims = k->ndims;
  if (k->tuned != NULL) /* the tuned scalar's value: part of the size, where a radius is */
    k->op.radius_min = 1, k->op.radius_max = INT_MAX, k->op.radius_name = k->tuned;
  k->op.variants[0] = "", k->op.variant_names[0] = "";
  k->op.dtypes = 1u << PM_F32; /* each argument has its own type; the problem's is f32 */
  k->op.entries[0] = k->entry;
  k->op.nentries = 1;
  k->op.params = k->params;
  k->op.check = check;
  k->op.bytes = bytes;
  k->op.layout = layout;
  k->op.fallback = fallback;
  k->op.prepare = prepare;
  k->op.launch = launch;
  k->op.verify = verify;
  { /* named by its content: the description, the source, and the shared header where it is
       included; measurements and cubins follow a change to any of them */
    const pm__template *common = pm__template_find(PM__TEMPLATE_COMMON);
    const char *parts[] = {"pmtune kernel description\n", json, "\n", k->source,
                           strstr(k->source, PM__TEMPLATE_COMMON_FILE) && common ? common->source : ""};
    pm__sha256_hex(parts, 5, k->sha256);
    k->tpl = (pm__template){k->name, k->source_file, k->source, strlen(k->source), k->sha256};
    k->op.tpl = &k->tpl;
  }

done:
  sqlite3_close(r.db);
  free(json);
  free(summary);
  if (rc != PM_OK) {
    pm__kernel_file_free(k);
    return rc;
  }
  *out = k;
  return PM_OK;
}
