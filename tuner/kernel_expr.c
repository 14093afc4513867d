/* kernel_expr.c: a kernel description's expressions, each `SELECT (expr)` with :NAME bound in
 * an evaluator of its own (an empty database in memory, bounded and read-only). */
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

#include "kernel_file_internal.h"

/* ---- Expressions ---------------------------------------------------------------------------- */

int pm__kf_param_index(const pm__kernel_desc *k, const char *name) {
  for (int i = 0; i < k->op.nparams; i++)
    if (strcmp(k->params[i].name, name) == 0) return i;
  return -1;
}

int pm__kf_dim_index(const pm__kernel_desc *k, const char *name) {
  for (int i = 0; i < k->ndims; i++)
    if (strcmp(k->dims[i], name) == 0) return i;
  if (k->tuned != NULL && strcmp(k->tuned, name) == 0) return k->ndims;
  return -1;
}

/* Dimension d of pr as k names them: n; rows, cols; batch (pr->n), rows, cols; then the tuned
 * scalar's value (pr->radius). */
static long long dim_value(const pm__kernel_desc *k, const pm__problem *pr, int d) {
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
int pm__kf_evaluator_open(pm_ctx *c, pm__kernel_desc *k, const char *shown_path) {
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
int pm__kf_expr_make(reader *r, pm__kernel_desc *k, const char *field, const char *text,
                     int params_ok, expr *e) {
  char shown[4 * MAX_EXPR + 16];
  snprintf(e->field, sizeof e->field, "%s", field);
  pm__kf_escape(shown, sizeof shown, text, 0);
  if ((e->text = pm__strdup(shown)) == NULL) return pm__seterr(r->c, PM_ENOMEM, "out of memory");
  const char *why = expr_shape(text);
  if (why != NULL)
    return pm__kf_fail(r, field, "'%s' is not one SQL expression: %s", pm__kf_quote(r, text), why);
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
    return pm__kf_fail(r, field, "'%s' is not one SQL expression: %s", pm__kf_quote(r, text), why);
  e->nbinds = sqlite3_bind_parameter_count(e->st);
  for (int i = 1; i <= e->nbinds; i++) {
    const char *name = sqlite3_bind_parameter_name(e->st, i);
    int p = name && name[0] == ':' ? pm__kf_param_index(k, name + 1) : -1;
    int d = name && name[0] == ':' ? pm__kf_dim_index(k, name + 1) : -1;
    if (name == NULL || name[0] != ':')
      return pm__kf_fail(r, field, "'%s': parameters are written :NAME", pm__kf_quote(r, text));
    if (p >= 0) {
      if (!params_ok)
        return pm__kf_fail(r, field, "'%s' names the parameter %s: it may name the dimensions alone (%s%s%s%s%s)",
                    pm__kf_quote(r, text), pm__kf_quote(r, name), k->dims[0], k->ndims > 1 ? ", " : "",
                    k->ndims > 1 ? k->dims[1] : "", k->ndims > 2 ? ", " : "",
                    k->ndims > 2 ? k->dims[2] : "");
      e->uses_params = 1;
      e->binds[i - 1] = (signed char)p;
    } else if (d >= 0) {
      e->uses_dims = 1;
      e->binds[i - 1] = (signed char)(-1 - d);
    } else {
      return pm__kf_fail(r, field, "'%s' names %s, which is neither a parameter nor a dimension",
                  pm__kf_quote(r, text), pm__kf_quote(r, name));
    }
  }
  return PM_OK;
}

void pm__kf_expr_free(expr *e) {
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
int pm__kf_expr_value(pm__kernel_desc *k, const expr *e, const int *v, const pm__problem *pr,
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

int pm__kf_expr_eval(pm__kernel_desc *k, const expr *e, const int *v, const pm__problem *pr,
                     long long *out) {
  return pm__kf_expr_value(k, e, v, pr, out, NULL);
}
