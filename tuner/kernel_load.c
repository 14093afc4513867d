/* kernel_load.c: reading a kernel description (JSON, through SQLite's JSON functions) and its
 * source into a kernel whose op the tuner and serving take as a built-in one's. */
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

static const char *const top_fields[] = {"name", "summary", "source", "entry", "reference",
                                         "dims", "params",
                                         "constraints", "seed", "grid", "block", "shared",
                                         "args", "bytes", "tolerance", NULL};


/* ---- Reading the JSON ---------------------------------------------------------------------- */


/* s into out (cap bytes) on one line: each control character written as \n, \t, \r or \xNN;
 * where max is not 0, cut after about max bytes of s (at a character's start) with "...". */
char *pm__kf_escape(char *out, size_t cap, const char *s, size_t max) {
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
const char *pm__kf_quote(reader *r, const char *s) {
  char *out = r->quoted[r->nquoted++ % 4];
  return pm__kf_escape(out, sizeof r->quoted[0], s ? s : "(null)", 80);
}

int pm__kf_fail(reader *r, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int pm__kf_fail(reader *r, const char *field, const char *fmt, ...) {
  char what[768], line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  pm__kf_escape(line, sizeof line, what, 0); /* one line, whatever a value quoted whole held */
  return pm__seterr(r->c, PM_EINVAL, "%s: %s: %s", r->path, field, line);
}

/* Whether SQLite reads json (which has passed pm__json_syntax) as valid, within its own limits
 * (its depth of nesting): 1 yes, 0 no, -1 it could not tell (out of memory). */
static int json_valid(reader *r, const char *json) {
  sqlite3_stmt *st = NULL;
  int valid = -1;
  if (sqlite3_prepare_v2(r->db, "SELECT json_valid(?1)", -1, &st, NULL) == SQLITE_OK &&
      sqlite3_bind_text(st, 1, json, -1, SQLITE_STATIC) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW)
    valid = sqlite3_column_int(st, 0) == 1;
  sqlite3_finalize(st);
  return valid;
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
    return strcmp(type, "missing") == 0 ? pm__kf_fail(r, field, "missing (a string)")
                                        : pm__kf_fail(r, field, "a string wanted, not %s", type);
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
  if (strcmp(type, "array") != 0) return pm__kf_fail(r, field, "an array wanted, not %s", type);
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
      rc = pm__kf_fail(r, field[0] ? field : "(top)", "unknown field '%s' (known: %s)",
                pm__kf_quote(r, key ? key : "?"), list);
    } else if (seen & (1ull << found)) {
      char twice[96];
      snprintf(twice, sizeof twice, "%s%s%s", field, field[0] ? "." : "", known[found]);
      rc = pm__kf_fail(r, twice, "given twice (a field is given once)");
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

/* ---- Loading -------------------------------------------------------------------------------- */

static int read_params(reader *r, pm__kernel_desc *k) {
  sqlite3_stmt *st = NULL;
  char type[16];
  int rc = member(r, "$.params", type, NULL);
  if (rc != PM_OK) return rc;
  if (strcmp(type, "object") != 0)
    return pm__kf_fail(r, "params", strcmp(type, "missing") == 0
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
    snprintf(field, sizeof field, "params.%s", pm__kf_quote(r, name ? name : "?"));
    if (k->op.nparams == PM__MAX_PARAMS) {
      rc = pm__kf_fail(r, "params", "more than %d parameters", PM__MAX_PARAMS);
      break;
    }
    if (!pm__is_identifier(name, NAME_MAX_LEN)) {
      rc = pm__kf_fail(r, field, "a parameter's name is its -D define: a C identifier of at most %d "
                          "characters", NAME_MAX_LEN);
      break;
    }
    if (pm__kf_param_index(k, name) >= 0) {
      rc = pm__kf_fail(r, field, "given twice");
      break;
    }
    if (t == NULL || strcmp(t, "array") != 0) {
      rc = pm__kf_fail(r, field, "an array of integers wanted, not %s", t ? t : "?");
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
        rc = pm__kf_fail(r, field, "values are integers (of C's int); got %s %s", vt ? vt : "?",
                  pm__kf_quote(r, (const char *)sqlite3_column_text(vs, 1)));
      else if (p->nvalues == PM__MAX_VALUES)
        rc = pm__kf_fail(r, field, "more than %d values", PM__MAX_VALUES);
      else {
        for (int j = 0; j < p->nvalues && rc == PM_OK; j++)
          if (p->values[j] == (int)x) rc = pm__kf_fail(r, field, "the value %lld twice", x);
        if (rc == PM_OK) p->values[p->nvalues++] = (int)x;
      }
    }
    sqlite3_finalize(vs);
    if (rc == PM_OK && p->nvalues == 0) rc = pm__kf_fail(r, field, "no values");
    if (rc == PM_OK) k->op.nparams++;
  }
  sqlite3_finalize(st);
  if (rc == PM_OK && k->op.nparams == 0) rc = pm__kf_fail(r, "params", "no parameters");
  return rc;
}

static int read_seed(reader *r, pm__kernel_desc *k) {
  char type[16], p[96];
  int rc = member(r, "$.seed", type, NULL);
  if (rc != PM_OK) return rc;
  if (strcmp(type, "object") != 0)
    return pm__kf_fail(r, "seed", strcmp(type, "missing") == 0
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
      return pm__kf_fail(r, field, strcmp(type, "missing") == 0 ? "missing: the seed gives every parameter"
                                                         : "an integer wanted, not %s", type);
    int found = 0;
    for (int j = 0; j < a->nvalues && !found; j++) found = a->values[j] == x;
    if (!found) return pm__kf_fail(r, field, "%lld is not one of the parameter's values", x);
    k->op.seed[i] = (int)x;
  }
  return PM_OK;
}

/* Reads the array of expressions at p (at most max; at least min) into es. */
static int read_exprs(reader *r, pm__kernel_desc *k, const char *name, int min, int max,
                      int params_ok, expr *es, int *n) {
  char p[64], field[48], type[16];
  long len;
  snprintf(p, sizeof p, "$.%s", name);
  int rc = array_len(r, p, name, &len);
  if (rc != PM_OK) return rc;
  if (len < 0 && min == 0) return *n = 0, PM_OK;
  if (len < min || len > max)
    return pm__kf_fail(r, name, len < 0 ? "missing (an array of %d to %d expressions)"
                                 : "an array of %d to %d expressions wanted", min, max);
  for (long i = 0; i < len; i++) {
    char *text = NULL;
    snprintf(p, sizeof p, "$.%s[%ld]", name, i);
    snprintf(field, sizeof field, "%s[%ld]", name, i);
    if ((rc = member(r, p, type, &text)) != PM_OK) return rc;
    if (strcmp(type, "text") != 0) {
      free(text);
      return pm__kf_fail(r, field, "an expression (a string) wanted, not %s", type);
    }
    *n = (int)i + 1; /* es[i] is k's to free from here, made or not (its text is taken first) */
    rc = pm__kf_expr_make(r, k, field, text, params_ok, &es[i]);
    free(text);
    if (rc != PM_OK) return rc;
  }
  return PM_OK;
}

static int read_one_expr(reader *r, pm__kernel_desc *k, const char *name, const char *dflt,
                         int params_ok, expr *e) {
  char p[80], *text = NULL;
  snprintf(p, sizeof p, "$.%s", name);
  int rc = string_at(r, p, name, dflt == NULL, &text);
  if (rc != PM_OK) return rc;
  rc = pm__kf_expr_make(r, k, name, text ? text : dflt, params_ok, e);
  free(text);
  return rc;
}

/* The name of the scalar argument marked "tuned": true, if one is (k->tuned; its place among
 * the arguments k->tuned_arg), read before the expressions, which may name it as they name a
 * dimension; read_args checks the rest of it. */
static int read_tuned(reader *r, pm__kernel_desc *k) {
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
      rc = pm__kf_fail(r, field, "true or false wanted, not %s", type);
    } else if (k->tuned != NULL) {
      rc = pm__kf_fail(r, field, "a second tuned scalar (%s is one): at most one", pm__kf_quote(r, k->tuned));
    } else {
      snprintf(p, sizeof p, "$.args[%ld].name", i);
      snprintf(field, sizeof field, "args[%ld].name", i);
      k->tuned_arg = (int)i;
      if ((rc = string_at(r, p, field, 1, &k->tuned)) == PM_OK && strlen(k->tuned) > 23)
        rc = pm__kf_fail(r, field, "a tuned scalar's name is at most 23 characters (it is part of the "
                            "size's text)");
    }
  }
  return rc;
}

static int read_dims(reader *r, pm__kernel_desc *k) {
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
    rc = pm__kf_fail(r, "dims", "[\"n\"] (a vector), [\"rows\", \"cols\"] (a matrix) or [\"batch\", "
                         "\"rows\", \"cols\"] (a batch of matrices, or a volume) wanted");
  }
  free(a), free(b), free(c);
  if (rc == PM_OK)
    for (int i = 0; i < k->op.nparams && rc == PM_OK; i++)
      if (pm__kf_dim_index(k, k->params[i].name) >= 0)
        rc = pm__kf_fail(r, "params", "'%s' is also a dimension's name", k->params[i].name);
  for (int i = 0; rc == PM_OK && k->tuned != NULL && i < k->ndims; i++)
    if (strcmp(k->dims[i], k->tuned) == 0)
      rc = pm__kf_fail(r, "args", "the tuned scalar '%s' is also a dimension's name", pm__kf_quote(r, k->tuned));
  return rc;
}

static int read_args(reader *r, pm__kernel_desc *k) {
  static const char *const buffer_fields[] = {"name", "type", "count", "dir", NULL};
  static const char *const scalar_fields[] = {"name", "scalar", "value", "tuned", NULL};
  static const char *const scalars[] = {"i32", "i64", "f32", "f64", NULL}; /* SCALAR_* order */
  static const char *const dirs[] = {"in", "out", "inout", NULL};          /* PM__BUF_* order */
  long n;
  int rc = array_len(r, "$.args", "args", &n);
  if (rc != PM_OK) return rc;
  if (n < 1 || n > MAX_ARGS)
    return pm__kf_fail(r, "args", n < 0 ? "missing (the kernel's arguments in order)"
                                 : "1 to %d arguments wanted", MAX_ARGS);
  for (long i = 0; i < n && rc == PM_OK; i++) {
    char p[64], field[48], f2[64], type[16], *s = NULL, *t = NULL, *dir = NULL;
    arg *a = &k->args[i];
    snprintf(p, sizeof p, "$.args[%ld]", i);
    snprintf(field, sizeof field, "args[%ld]", i);
    if ((rc = member(r, p, type, NULL)) != PM_OK) break;
    if (strcmp(type, "object") != 0) {
      rc = pm__kf_fail(r, field, "an object wanted, not %s", type);
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
      rc = pm__kf_fail(r, f2, "'%s' is not a C identifier", pm__kf_quote(r, a->name));
    if (rc == PM_OK && a->scalar) {
      snprintf(p, sizeof p, "$.args[%ld].scalar", i), snprintf(f2, sizeof f2, "%s.scalar", field);
      if ((rc = string_at(r, p, f2, 1, &s)) == PM_OK) {
        for (a->type = 0; scalars[a->type] != NULL && strcmp(scalars[a->type], s) != 0; a->type++)
          ;
        if (scalars[a->type] == NULL) rc = pm__kf_fail(r, f2, "'%s': i32, i64, f32 or f64 wanted", pm__kf_quote(r, s));
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
            rc = pm__kf_fail(r, f2, "a tuned scalar is an integer (i32 or i64), not %s", scalars[a->type]);
          else if (a->has_value)
            rc = pm__kf_fail(r, f2, "a tuned scalar has no \"value\": each call gives it");
          k->tuned_scalar = a->buf;
          snprintf(me, sizeof me, ":%s", k->tuned);
        }
        snprintf(p, sizeof p, "args[%ld].value", i);
        if (rc == PM_OK) rc = read_one_expr(r, k, p, me, 1, &a->e);
      }
    } else if (rc == PM_OK) {
      snprintf(p, sizeof p, "$.args[%ld].type", i), snprintf(f2, sizeof f2, "%s.type", field);
      if ((rc = string_at(r, p, f2, 1, &t)) == PM_OK && (a->type = pm__dtype_find(t)) < 0)
        rc = pm__kf_fail(r, f2, "'%s': one of %s wanted", pm__kf_quote(r, t), PM__DTYPE_NAMES);
      snprintf(p, sizeof p, "$.args[%ld].dir", i), snprintf(f2, sizeof f2, "%s.dir", field);
      if (rc == PM_OK && (rc = string_at(r, p, f2, 1, &dir)) == PM_OK) {
        for (a->dir = 0; dirs[a->dir] != NULL && strcmp(dirs[a->dir], dir) != 0; a->dir++)
          ;
        if (dirs[a->dir] == NULL) rc = pm__kf_fail(r, f2, "'%s': in, out or inout wanted", pm__kf_quote(r, dir));
      }
      if (rc == PM_OK && k->nbufs == PM__MAX_BUFS)
        rc = pm__kf_fail(r, field, "more than %d buffers", PM__MAX_BUFS);
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
      rc = pm__kf_fail(r, "args", "no buffer is \"out\" or \"inout\": nothing to check a run by");
  }
  return rc;
}

/* Every expression evaluates at the seed for a sample problem (n = 2^20, 1024 x 1024, or
 * 16 x 256 x 256):
 * an expression SQLite cannot give a number for is found here, not while tuning. */
static int evaluate_at_seed(reader *r, pm__kernel_desc *k) {
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
    if (pm__kf_expr_eval(k, all[i], k->op.seed, &sample, &x)) {
      int err = sqlite3_errcode(k->db); /* the step's, which the reset returned */
      return pm__kf_fail(r, all[i]->field, "'%s' does not evaluate to a number (at the seed, for %s)%s%s",
                  pm__kf_quote(r, all[i]->text),
                  k->ndims == 1 ? "n = 1048576" : k->ndims == 2 ? "1024 x 1024" : "16 x 256 x 256",
                  err == SQLITE_INTERRUPT ? ": it runs past its bound of VM steps"
                  : err != SQLITE_OK      ? ": "
                                          : "",
                  err != SQLITE_OK && err != SQLITE_INTERRUPT ? sqlite3_errmsg(k->db) : "");
    }
  return PM_OK;
}

void pm__kernel_desc_free(pm__kernel_desc *k) {
  if (k == NULL) return;
  for (int i = 0; i < k->nconstraints; i++) pm__kf_expr_free(&k->constraints[i]), free(k->reasons[i]);
  for (int i = 0; i < 3; i++) pm__kf_expr_free(&k->grid[i]), pm__kf_expr_free(&k->block[i]);
  pm__kf_expr_free(&k->shared);
  pm__kf_expr_free(&k->bytes);
  for (int i = 0; i < k->nargs; i++) pm__kf_expr_free(&k->args[i].e), free(k->args[i].name);
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

const pm__op *pm__kernel_desc_op(const pm__kernel_desc *k) { return &k->op; }

const char *pm__kernel_desc_dim_name(const pm__kernel_desc *k, int i) {
  return i >= 0 && i < k->ndims ? k->dims[i] : NULL;
}

int pm__kernel_desc_buffers(const pm__kernel_desc *k) { return k->nbufs; }

int pm__kernel_desc_scalars(const pm__kernel_desc *k) { return k->nscalars; }

int pm__kernel_desc_scalar_needed(const pm__kernel_desc *k) { return k->needed; }

int pm__kernel_desc_tuned(const pm__kernel_desc *k, int *is_i64) {
  if (is_i64 != NULL && k->tuned_scalar >= 0)
    *is_i64 = k->args[k->scalar_arg[k->tuned_scalar]].type == SCALAR_I64;
  return k->tuned_scalar;
}

const char *pm__kernel_desc_scalar(const pm__kernel_desc *k, int i, const char **type,
                                   int *has_value) {
  static const char *const names[] = {"i32", "i64", "f32", "f64"}; /* SCALAR_* order */
  if (i < 0 || i >= k->nscalars) return NULL;
  const arg *a = &k->args[k->scalar_arg[i]];
  if (type != NULL) *type = names[a->type];
  if (has_value != NULL) *has_value = a->has_value;
  return a->name;
}

const char *pm__kernel_desc_buffer(const pm__kernel_desc *k, int i, int *dtype) {
  if (i < 0 || i >= k->nbufs) return NULL;
  const arg *a = &k->args[k->buffer_arg[i]];
  if (dtype != NULL) *dtype = a->type;
  return a->name;
}

/* The source file that k->source_file names, into k->source: a path relative to the folder of
 * the description at path, which must stay inside that folder (symbolic links followed: their
 * real paths compared), a regular file of at most MAX_FILE bytes. */
static int read_source(reader *r, pm__kernel_desc *k, const char *path) {
  const char *slash = strrchr(path, '/');
  char *dir = NULL, *full = NULL, *real_dir = NULL, *real = NULL;
  int rc = PM_OK;
  if (k->source_file[0] == '\0' || k->source_file[0] == '/')
    return pm__kf_fail(r, "source", "'%s': a path relative to the description's folder wanted",
                pm__kf_quote(r, k->source_file));
  int depth = 0; /* as written first: a way out by .. is refused whether or not it leads to a file */
  for (const char *p = k->source_file; *p != '\0' && depth >= 0;) {
    size_t n = strcspn(p, "/");
    depth += n == 2 && strncmp(p, "..", 2) == 0 ? -1 : n == 0 || (n == 1 && *p == '.') ? 0 : 1;
    p += n + (p[n] == '/');
  }
  if (depth < 0)
    return pm__kf_fail(r, "source", "'%s' is outside the description's folder (a path inside it wanted; "
                             "symbolic links are followed)", pm__kf_quote(r, k->source_file));
  size_t dlen = slash == NULL ? 1 : (size_t)(slash - path) + (slash == path);
  size_t len = dlen + strlen(k->source_file) + 2;
  if ((dir = pm__malloc(dlen + 1)) == NULL || (full = pm__malloc(len)) == NULL) {
    rc = pm__seterr(r->c, PM_ENOMEM, "out of memory");
    goto done;
  }
  snprintf(dir, dlen + 1, "%s", slash == NULL ? "." : path);
  snprintf(full, len, "%s/%s", dir, k->source_file);
  if ((real_dir = realpath(dir, NULL)) == NULL) {
    rc = pm__kf_fail(r, "source", "the description's folder: %s", strerror(errno));
    goto done;
  }
  if ((real = realpath(full, NULL)) == NULL) {
    rc = errno == ENOMEM ? pm__seterr(r->c, PM_ENOMEM, "out of memory")
                         : pm__kf_fail(r, "source", "%s: %s", pm__kf_quote(r, full), strerror(errno));
    goto done;
  }
  size_t n = strlen(real_dir);
  if (!(strncmp(real, real_dir, n) == 0 && (real[n] == '/' || (n == 1 && real_dir[0] == '/')))) {
    rc = pm__kf_fail(r, "source", "'%s' is outside the description's folder (a path inside it wanted; "
                           "symbolic links are followed)", pm__kf_quote(r, k->source_file));
    goto done;
  }
  /* pm__read_file: a FIFO, device or folder refused at once, never waited on */
  if ((k->source = pm__read_file(real, MAX_FILE, NULL)) == NULL)
    rc = errno == EFBIG  ? pm__kf_fail(r, "source", "%s: larger than %zu MiB, the most a source may be",
                                pm__kf_quote(r, full), MAX_FILE >> 20)
         : errno == ENOMEM ? pm__seterr(r->c, PM_ENOMEM, "%s: out of memory", r->path)
                           : pm__kf_fail(r, "source", "%s: %s", pm__kf_quote(r, full),
                                  pm__file_strerror(errno));
done:
  free(dir), free(full), free(real_dir), free(real);
  return rc;
}

int pm__kernel_desc_load(pm_ctx *c, const char *path, pm__kernel_desc **out) {
  *out = NULL;
  if (strlen(path) > 1024) /* its messages name it: a line of a path is enough */
    return pm__seterr(c, PM_EINVAL, "kernel file: the path is too long (%zu bytes)", strlen(path));
  pm__kernel_desc *k = pm__calloc(1, sizeof *k);
  if (k == NULL) return pm__seterr(c, PM_ENOMEM, "out of memory");
  pthread_mutex_init(&k->lock, NULL);
  k->tuned_arg = k->tuned_scalar = -1;
  char shown[4200]; /* the path in messages: on one line */
  pm__kf_escape(shown, sizeof shown, path, 0);
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
  if ((rc = pm__kf_evaluator_open(c, k, shown)) != PM_OK) goto done;
  if (sqlite3_open_v2(":memory:", &r.db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_MEMORY, NULL) !=
      SQLITE_OK) {
    rc = pm__seterr(c, PM_ENOMEM, "%s: no SQLite database in memory to read it", shown);
    goto done;
  }
  r.json = json;
  if (strlen(json) != json_len) {
    rc = pm__kf_fail(&r, "(top)", "not valid JSON: a NUL byte at byte %zu", strlen(json));
    goto done;
  }
  { /* valid first: no other JSON function sees a malformed document (pm__json_syntax) */
    int valid = pm__json_syntax(json, -1) ? json_valid(&r, json) : 0;
    if (valid < 0) {
      rc = pm__seterr(c, PM_ENOMEM, "%s: out of memory", shown);
      goto done;
    }
    if (valid && (rc = member(&r, "$", type, NULL)) != PM_OK) goto done;
    if (!valid || strcmp(type, "object") != 0) {
      rc = pm__kf_fail(&r, "(top)", valid ? "a JSON object wanted" : "not valid JSON");
      goto done;
    }
  }
  { /* a string that SQLite would cut at its \u0000: refused, naming its field */
    nul_walk w = {json, ""};
    if (walk_value(&w, 0)) {
      rc = pm__kf_fail(&r, w.field[0] ? w.field : "(top)", "a string holds \\u0000 (a NUL character): "
                                                    "refused, not cut short there");
      goto done;
    }
  }
  if ((rc = only_known(&r, "$", "", top_fields)) != PM_OK) goto done;
  if ((rc = string_at(&r, "$.name", "name", 1, &k->name)) != PM_OK) goto done;
  if (!pm__is_identifier(k->name, 31) || pm__op_find(k->name) != NULL) {
    rc = pm__kf_fail(&r, "name", "'%s': a C identifier of at most 31 characters, not a built-in "
                          "operation's name", pm__kf_quote(&r, k->name));
    goto done;
  }
  if ((rc = string_at(&r, "$.summary", "summary", 0, &summary)) != PM_OK) goto done;
  if ((rc = string_at(&r, "$.entry", "entry", 1, &k->entry)) != PM_OK) goto done;
  if (!pm__is_identifier(k->entry, 255)) {
    rc = pm__kf_fail(&r, "entry", "'%s' is not a C identifier", pm__kf_quote(&r, k->entry));
    goto done;
  }
  if ((rc = string_at(&r, "$.source", "source", 1, &k->source_file)) != PM_OK) goto done;
  if ((rc = read_source(&r, k, path)) != PM_OK) goto done;
  if ((rc = string_at(&r, "$.reference", "reference", 0, &k->reference)) != PM_OK) goto done;
  if (k->reference != NULL && (!pm__is_identifier(k->reference, 255) ||
                               strcmp(k->reference, k->entry) == 0)) {
    rc = pm__kf_fail(&r, "reference", "'%s': another kernel of the source (a C identifier) wanted",
              pm__kf_quote(&r, k->reference));
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
      rc = pm__kf_fail(&r, e == 0 ? "entry" : "reference", "'%s' is not a function of %s", pm__kf_quote(&r, name),
                pm__kf_quote(&r, k->source_file));
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
      rc = pm__kf_fail(&r, "tolerance", "a number of at least 0 wanted");
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
  k->op.check = pm__kf_check;
  k->op.bytes = pm__kf_bytes;
  k->op.layout = pm__kf_layout;
  k->op.fallback = pm__kf_fallback;
  k->op.prepare = pm__kf_prepare;
  k->op.launch = pm__kf_launch;
  k->op.verify = pm__kf_verify;
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
    pm__kernel_desc_free(k);
    return rc;
  }
  *out = k;
  return PM_OK;
}
