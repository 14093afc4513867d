/* kernel_file.c: reading a kernel description (JSON, through SQLite's JSON functions) into an op
 * whose constraints and launch expressions SQLite evaluates (`SELECT (expr)` with :NAME bound);
 * see kernel_file.h. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_file.h"

#define MAX_CONSTRAINTS 32
#define MAX_ARGS 32
#define MAX_FILE ((size_t)16 << 20) /* bytes of a description or a source */
#define NAME_MAX_LEN 23 /* a parameter's name is its define: "NAME=VALUE" fits 24 bytes */

/* One expression of the description, compiled. */
typedef struct expr {
  char *text;        /* as written */
  char field[40];    /* where it is written: "grid[1]", "constraints[3]" */
  sqlite3_stmt *st;  /* SELECT (text) */
  int uses_dims;     /* it names a dimension: it needs a problem */
  int uses_params;   /* it names a parameter */
} expr;

struct pm__kernel_file {
  pm__op op; /* first: the op's callbacks find the rest through self */
  pm__param params[PM__MAX_PARAMS];
  char *param_names[PM__MAX_PARAMS];
  char *path, *name, *summary, *entry, *source_file, *source;
  const char *dims[2];
  int ndims;
  int nconstraints;
  expr constraints[MAX_CONSTRAINTS];
  char *reasons[MAX_CONSTRAINTS]; /* "constraints[2] (:BX * :BY <= 1024)" */
  int ngrid, nblock;
  expr grid[3], block[3], shared, bytes;
  double tolerance;
  sqlite3 *db;          /* an empty database in memory: the expressions' evaluator */
  pthread_mutex_t lock; /* the statements are one thread's at a time */
};

static const char *const top_fields[] = {"name", "summary", "source", "entry", "dims", "params",
                                         "constraints", "seed", "grid", "block", "shared",
                                         "args", "bytes", "tolerance", NULL};

/* ---- Reading the JSON ---------------------------------------------------------------------- */

typedef struct reader {
  pm_ctx *c;
  const char *path;
  sqlite3 *db;
  const char *json;
} reader;

static int fail(reader *r, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(reader *r, const char *field, const char *fmt, ...) {
  char what[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  return pm__seterr(r->c, PM_EINVAL, "%s: %s: %s", r->path, field, what);
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

/* Fails naming the first member of the object at p whose key is not in known. */
static int only_known(reader *r, const char *p, const char *field, const char *const *known) {
  sqlite3_stmt *st = NULL;
  int rc = PM_OK;
  if (sqlite3_prepare_v2(r->db, "SELECT key FROM json_each(?1, ?2)", -1, &st, NULL) != SQLITE_OK)
    return pm__seterr(r->c, PM_ENOMEM, "%s: %s", r->path, sqlite3_errmsg(r->db));
  sqlite3_bind_text(st, 1, r->json, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 2, p, -1, SQLITE_STATIC);
  while (rc == PM_OK && sqlite3_step(st) == SQLITE_ROW) {
    const char *key = (const char *)sqlite3_column_text(st, 0);
    int found = 0;
    for (int i = 0; known[i] != NULL && !found; i++) found = key && strcmp(key, known[i]) == 0;
    if (!found) {
      char list[256] = "";
      size_t len = 0;
      for (int i = 0; known[i] != NULL && len < sizeof list; i++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", known[i]);
      rc = fail(r, field[0] ? field : "(top)", "unknown field '%s' (known: %s)", key ? key : "?",
                list);
    }
  }
  sqlite3_finalize(st);
  return rc;
}

static int is_identifier(const char *s, size_t max) {
  if (s == NULL || !(isalpha((unsigned char)s[0]) || s[0] == '_')) return 0;
  size_t n = 0;
  for (; s[n] != '\0'; n++)
    if (!(isalnum((unsigned char)s[n]) || s[n] == '_')) return 0;
  return n <= max;
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
  return -1;
}

/* Compiles text into e (SELECT (text)), checking that it is one expression naming only
 * :PARAMETERS and :DIMENSIONS (and no parameter where params_ok is 0). */
static int expr_make(reader *r, pm__kernel_file *k, const char *field, const char *text,
                     int params_ok, expr *e) {
  snprintf(e->field, sizeof e->field, "%s", field);
  if ((e->text = pm__strdup(text)) == NULL) return pm__seterr(r->c, PM_ENOMEM, "out of memory");
  size_t len = strlen(text) + 16;
  char *sql = pm__malloc(len);
  if (sql == NULL) return pm__seterr(r->c, PM_ENOMEM, "out of memory");
  snprintf(sql, len, "SELECT (%s)", text);
  const char *tail = NULL;
  int src = sqlite3_prepare_v2(k->db, sql, -1, &e->st, &tail);
  int more = src == SQLITE_OK && tail != NULL && tail[strspn(tail, " \t\r\n;")] != '\0';
  free(sql);
  if (src != SQLITE_OK || e->st == NULL || more)
    return fail(r, field, "'%s' is not one SQL expression%s%s", text, src != SQLITE_OK ? ": " : "",
                src != SQLITE_OK ? sqlite3_errmsg(k->db) : "");
  for (int i = 1; i <= sqlite3_bind_parameter_count(e->st); i++) {
    const char *name = sqlite3_bind_parameter_name(e->st, i);
    if (name == NULL || name[0] != ':')
      return fail(r, field, "'%s': parameters are written :NAME", text);
    if (param_index(k, name + 1) >= 0) {
      if (!params_ok)
        return fail(r, field, "'%s' names the parameter %s: it may name the dimensions alone (%s%s%s)",
                    text, name, k->dims[0], k->ndims > 1 ? ", " : "", k->ndims > 1 ? k->dims[1] : "");
      e->uses_params = 1;
    } else if (dim_index(k, name + 1) >= 0) {
      e->uses_dims = 1;
    } else {
      return fail(r, field, "'%s' names %s, which is neither a parameter nor a dimension", text,
                  name);
    }
  }
  return PM_OK;
}

static void expr_free(expr *e) {
  sqlite3_finalize(e->st);
  free(e->text);
  memset(e, 0, sizeof *e);
}

/* Evaluates e for point v (may be NULL where e names no parameter) and problem pr (may be NULL
 * where e names no dimension) into *out. 0 done; 1 the value is NULL, not a number, or out of
 * the 64-bit range (SQLite's `1/0` is NULL). Under k's lock. */
static int expr_eval(pm__kernel_file *k, const expr *e, const int *v, const pm__problem *pr,
                     long long *out) {
  sqlite3_stmt *st = e->st;
  sqlite3_reset(st);
  sqlite3_clear_bindings(st);
  for (int i = 1; i <= sqlite3_bind_parameter_count(st); i++) {
    const char *name = sqlite3_bind_parameter_name(st, i) + 1;
    int p = param_index(k, name), d = dim_index(k, name);
    if (p >= 0 && v != NULL) sqlite3_bind_int64(st, i, v[p]);
    if (d >= 0 && pr != NULL)
      sqlite3_bind_int64(st, i, k->ndims == 1 ? (long long)pr->n : d == 0 ? pr->rows : pr->cols);
  }
  int bad = 1;
  if (sqlite3_step(st) == SQLITE_ROW) {
    int t = sqlite3_column_type(st, 0);
    if (t == SQLITE_INTEGER) {
      *out = sqlite3_column_int64(st, 0);
      bad = 0;
    } else if (t == SQLITE_FLOAT) {
      double x = sqlite3_column_double(st, 0);
      if (x >= -9.2e18 && x <= 9.2e18) *out = (long long)x, bad = 0;
    }
  }
  sqlite3_reset(st);
  return bad;
}

/* ---- The op's callbacks --------------------------------------------------------------------- */

static const char *check(const pm__op *self, const int *v, const pm__problem *pr,
                         const pm__limits *lim) {
  pm__kernel_file *k = (pm__kernel_file *)self;
  const char *why = NULL;
  long long x, threads = 1;
  pthread_mutex_lock(&k->lock);
  for (int i = 0; i < k->nconstraints && why == NULL; i++) {
    const expr *e = &k->constraints[i];
    if (e->uses_dims && pr == NULL) continue;
    if (expr_eval(k, e, v, pr, &x)) why = "a constraint does not evaluate to a number";
    else if (x == 0) why = k->reasons[i];
  }
  int block_known = 1;
  for (int i = 0; i < k->nblock && why == NULL; i++) {
    if (k->block[i].uses_dims && pr == NULL) {
      block_known = 0;
      continue;
    }
    if (expr_eval(k, &k->block[i], v, pr, &x) || x < 1 || x > 1024) why = "a block dimension out of range";
    else threads *= x;
  }
  if (why == NULL && block_known && threads > lim->max_threads)
    why = "threads per block out of range";
  if (why == NULL && !(k->shared.uses_dims && pr == NULL) &&
      (expr_eval(k, &k->shared, v, pr, &x) || x < 0 || (size_t)x > lim->max_smem))
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
    snprintf(field, sizeof field, "params.%s", name ? name : "?");
    if (k->op.nparams == PM__MAX_PARAMS) {
      rc = fail(r, "params", "more than %d parameters", PM__MAX_PARAMS);
      break;
    }
    if (!is_identifier(name, NAME_MAX_LEN)) {
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
                  (const char *)sqlite3_column_text(vs, 1));
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
    rc = expr_make(r, k, field, text, params_ok, &es[i]);
    free(text);
    if (rc != PM_OK) return rc;
    *n = (int)i + 1;
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

static int read_dims(reader *r, pm__kernel_file *k) {
  long n;
  char *a = NULL, *b = NULL;
  int rc = array_len(r, "$.dims", "dims", &n);
  if (rc != PM_OK) return rc;
  if (n == 1 && (rc = string_at(r, "$.dims[0]", "dims[0]", 1, &a)) == PM_OK && strcmp(a, "n") == 0) {
    k->dims[0] = "n", k->ndims = 1;
  } else if (n == 2 && (rc = string_at(r, "$.dims[0]", "dims[0]", 1, &a)) == PM_OK &&
             (rc = string_at(r, "$.dims[1]", "dims[1]", 1, &b)) == PM_OK && strcmp(a, "rows") == 0 &&
             strcmp(b, "cols") == 0) {
    k->dims[0] = "rows", k->dims[1] = "cols", k->ndims = 2;
  } else if (rc == PM_OK) {
    rc = fail(r, "dims", "[\"n\"] (a vector) or [\"rows\", \"cols\"] (a matrix) wanted");
  }
  free(a), free(b);
  if (rc == PM_OK)
    for (int i = 0; i < k->op.nparams && rc == PM_OK; i++)
      if (dim_index(k, k->params[i].name) >= 0)
        rc = fail(r, "params", "'%s' is also a dimension's name", k->params[i].name);
  return rc;
}

static int read_args(reader *r, pm__kernel_file *k) {
  static const char *const buffer_fields[] = {"name", "type", "count", "dir", NULL};
  static const char *const scalar_fields[] = {"name", "scalar", "value", NULL};
  long n;
  int rc = array_len(r, "$.args", "args", &n);
  if (rc != PM_OK) return rc;
  if (n < 1 || n > MAX_ARGS)
    return fail(r, "args", n < 0 ? "missing (the kernel's arguments in order)"
                                 : "1 to %d arguments wanted", MAX_ARGS);
  for (long i = 0; i < n && rc == PM_OK; i++) {
    char p[64], field[48], type[16], *name = NULL, *s = NULL, *t = NULL, *dir = NULL;
    expr e = {0};
    snprintf(p, sizeof p, "$.args[%ld]", i);
    snprintf(field, sizeof field, "args[%ld]", i);
    if ((rc = member(r, p, type, NULL)) != PM_OK) break;
    if (strcmp(type, "object") != 0) {
      rc = fail(r, field, "an object wanted, not %s", type);
      break;
    }
    snprintf(p, sizeof p, "$.args[%ld].scalar", i);
    if ((rc = member(r, p, type, NULL)) != PM_OK) break;
    int scalar = strcmp(type, "missing") != 0;
    snprintf(p, sizeof p, "$.args[%ld]", i);
    if ((rc = only_known(r, p, field, scalar ? scalar_fields : buffer_fields)) != PM_OK) break;
    char f2[64];
    snprintf(p, sizeof p, "$.args[%ld].name", i), snprintf(f2, sizeof f2, "%s.name", field);
    if ((rc = string_at(r, p, f2, 1, &name)) == PM_OK && !is_identifier(name, 63))
      rc = fail(r, f2, "'%s' is not a C identifier", name);
    if (rc == PM_OK && scalar) {
      snprintf(p, sizeof p, "$.args[%ld].scalar", i), snprintf(f2, sizeof f2, "%s.scalar", field);
      if ((rc = string_at(r, p, f2, 1, &s)) == PM_OK && strcmp(s, "i32") != 0 &&
          strcmp(s, "i64") != 0 && strcmp(s, "f32") != 0 && strcmp(s, "f64") != 0)
        rc = fail(r, f2, "'%s': i32, i64, f32 or f64 wanted", s);
      if (rc == PM_OK) {
        snprintf(p, sizeof p, "args[%ld].value", i);
        rc = read_one_expr(r, k, p, NULL, 1, &e);
      }
    } else if (rc == PM_OK) {
      snprintf(p, sizeof p, "$.args[%ld].type", i), snprintf(f2, sizeof f2, "%s.type", field);
      if ((rc = string_at(r, p, f2, 1, &t)) == PM_OK && pm__dtype_find(t) < 0)
        rc = fail(r, f2, "'%s': one of %s wanted", t, PM__DTYPE_NAMES);
      snprintf(p, sizeof p, "$.args[%ld].dir", i), snprintf(f2, sizeof f2, "%s.dir", field);
      if (rc == PM_OK && (rc = string_at(r, p, f2, 1, &dir)) == PM_OK && strcmp(dir, "in") != 0 &&
          strcmp(dir, "out") != 0 && strcmp(dir, "inout") != 0)
        rc = fail(r, f2, "'%s': in, out or inout wanted", dir);
      if (rc == PM_OK) {
        snprintf(p, sizeof p, "args[%ld].count", i);
        rc = read_one_expr(r, k, p, NULL, 0, &e);
      }
    }
    expr_free(&e); /* checked; evaluated when the op runs (not yet) */
    free(name), free(s), free(t), free(dir);
  }
  return rc;
}

/* Every expression evaluates at the seed for a sample problem (n = 2^20, or 1024 x 1024):
 * an expression SQLite cannot give a number for is found here, not while tuning. */
static int evaluate_at_seed(reader *r, pm__kernel_file *k) {
  pm__problem sample = {.rows = 1024, .cols = 1024, .n = 1u << 20};
  expr *all[MAX_CONSTRAINTS + 8];
  int n = 0;
  long long x;
  for (int i = 0; i < k->nconstraints; i++) all[n++] = &k->constraints[i];
  for (int i = 0; i < k->ngrid; i++) all[n++] = &k->grid[i];
  for (int i = 0; i < k->nblock; i++) all[n++] = &k->block[i];
  all[n++] = &k->shared;
  all[n++] = &k->bytes;
  for (int i = 0; i < n; i++)
    if (expr_eval(k, all[i], k->op.seed, &sample, &x))
      return fail(r, all[i]->field, "'%s' does not evaluate to a number (at the seed, for %s)",
                  all[i]->text, k->ndims == 1 ? "n = 1048576" : "1024 x 1024");
  return PM_OK;
}

void pm__kernel_file_free(pm__kernel_file *k) {
  if (k == NULL) return;
  for (int i = 0; i < k->nconstraints; i++) expr_free(&k->constraints[i]), free(k->reasons[i]);
  for (int i = 0; i < 3; i++) expr_free(&k->grid[i]), expr_free(&k->block[i]);
  expr_free(&k->shared);
  expr_free(&k->bytes);
  for (int i = 0; i < PM__MAX_PARAMS; i++) free(k->param_names[i]);
  free(k->path), free(k->name), free(k->summary), free(k->entry), free(k->source_file);
  free(k->source);
  sqlite3_close(k->db);
  pthread_mutex_destroy(&k->lock);
  free(k);
}

const pm__op *pm__kernel_file_op(const pm__kernel_file *k) { return &k->op; }

const char *pm__kernel_file_source(const pm__kernel_file *k, const char **file) {
  if (file != NULL) *file = k->source_file;
  return k->source;
}

int pm__kernel_file_load(pm_ctx *c, const char *path, pm__kernel_file **out) {
  *out = NULL;
  if (strlen(path) > 1024) /* its messages name it: a line of a path is enough */
    return pm__seterr(c, PM_EINVAL, "kernel file: the path is too long (%zu bytes)", strlen(path));
  pm__kernel_file *k = pm__calloc(1, sizeof *k);
  if (k == NULL) return pm__seterr(c, PM_ENOMEM, "out of memory");
  pthread_mutex_init(&k->lock, NULL);
  reader r = {c, path, NULL, NULL};
  char *json = NULL, *summary = NULL, type[16];
  int rc = PM_OK;
  if ((k->path = pm__strdup(path)) == NULL) {
    rc = pm__seterr(c, PM_ENOMEM, "out of memory");
    goto done;
  }
  if ((json = pm__read_file(path, MAX_FILE, NULL)) == NULL) {
    rc = pm__seterr(c, errno == ENOMEM ? PM_ENOMEM : PM_EIO, "%s: %s", path, strerror(errno));
    goto done;
  }
  if (sqlite3_open_v2(":memory:", &k->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_MEMORY, NULL) !=
      SQLITE_OK) {
    rc = pm__seterr(c, PM_ENOMEM, "%s: no SQLite database in memory for the expressions", path);
    goto done;
  }
  r.db = k->db, r.json = json;
  if ((rc = member(&r, "$", type, NULL)) != PM_OK) goto done;
  {
    sqlite3_stmt *st = NULL;
    int valid = 0;
    if (sqlite3_prepare_v2(k->db, "SELECT json_valid(?1)", -1, &st, NULL) == SQLITE_OK) {
      sqlite3_bind_text(st, 1, json, -1, SQLITE_STATIC);
      valid = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0) == 1;
    }
    sqlite3_finalize(st);
    if (!valid || strcmp(type, "object") != 0) {
      rc = fail(&r, "(top)", valid ? "a JSON object wanted" : "not valid JSON");
      goto done;
    }
  }
  if ((rc = only_known(&r, "$", "", top_fields)) != PM_OK) goto done;
  if ((rc = string_at(&r, "$.name", "name", 1, &k->name)) != PM_OK) goto done;
  if (!is_identifier(k->name, 31) || pm__op_find(k->name) != NULL) {
    rc = fail(&r, "name", "'%s': a C identifier of at most 31 characters, not a built-in "
                          "operation's name", k->name);
    goto done;
  }
  if ((rc = string_at(&r, "$.summary", "summary", 0, &summary)) != PM_OK) goto done;
  if ((rc = string_at(&r, "$.entry", "entry", 1, &k->entry)) != PM_OK) goto done;
  if (!is_identifier(k->entry, 255)) {
    rc = fail(&r, "entry", "'%s' is not a C identifier", k->entry);
    goto done;
  }
  if ((rc = string_at(&r, "$.source", "source", 1, &k->source_file)) != PM_OK) goto done;
  { /* the source, relative to the description's folder */
    const char *slash = strrchr(path, '/');
    size_t dir = k->source_file[0] == '/' || slash == NULL ? 0 : (size_t)(slash - path + 1);
    size_t len = dir + strlen(k->source_file) + 1;
    char *full = pm__malloc(len);
    if (full == NULL) {
      rc = pm__seterr(c, PM_ENOMEM, "out of memory");
      goto done;
    }
    snprintf(full, len, "%.*s%s", (int)dir, path, k->source_file);
    k->source = pm__read_file(full, MAX_FILE, NULL);
    if (k->source == NULL) rc = fail(&r, "source", "%s: %s", full, strerror(errno));
    free(full);
    if (rc != PM_OK) goto done;
  }
  { /* the entry is defined in the source: its name followed by '(' */
    int found = 0;
    size_t len = strlen(k->entry);
    for (const char *p = k->source; !found && (p = strstr(p, k->entry)) != NULL; p += len) {
      const char *after = p + len + strspn(p + len, " \t\r\n");
      found = (p == k->source || !(isalnum((unsigned char)p[-1]) || p[-1] == '_')) && *after == '(';
    }
    if (!found) {
      rc = fail(&r, "entry", "'%s' is not a function of %s", k->entry, k->source_file);
      goto done;
    }
  }
  if ((rc = read_params(&r, k)) != PM_OK || (rc = read_dims(&r, k)) != PM_OK ||
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
  k->op.variants[0] = "", k->op.variant_names[0] = "";
  k->op.dtypes = 1u << PM_F32; /* each argument has its own type; the problem's is f32 */
  k->op.entries[0] = k->entry;
  k->op.nentries = 1;
  k->op.params = k->params;
  k->op.check = check;
  k->op.bytes = bytes;
  k->op.layout = layout;
  k->op.fallback = fallback;

done:
  free(json);
  free(summary);
  if (rc != PM_OK) {
    pm__kernel_file_free(k);
    return rc;
  }
  *out = k;
  return PM_OK;
}
