/* exchange.c: tuning results to and from JSON (pmtune export / import), so that one tuned
 * machine can serve a fleet of its GPU model. SQLite's JSON functions write and parse the
 * documents; this file checks every field of what it reads before anything is written. */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define FORMAT "pmtune-export"
#define FORMAT_VERSION 1
#define IMPORT_MAX_BYTES ((size_t)512 << 20)
#define IMPORT_MAX_GPUS 4096
#define ERROR_TEXT_MAX (1 << 20) /* bytes of a failed measurement's error */

/* ---- Export --------------------------------------------------------------------------------- */

/* The measurements exported: of the ops the handle knows (:ops, a JSON array of their names:
 * a kernel of one's own only where its description was given), every one (:all = 1), or what is
 * carried of each problem (pm__db_export in pmdb.h): CARRIED is a WITH clause naming their ids
 * (carried), SELECTED the condition on m. Equal medians are ranked by configuration, not by row
 * id, so that what is carried depends on the measurements alone: an export imported elsewhere and
 * exported again carries the same rows (shipped timings are rounded: results/compact.py). */
#define CARRIED                                                                                \
  "WITH ranked AS MATERIALIZED (SELECT m.id, m.gpu_id, m.op, m.dtype, m.variant,"              \
  " ifnull(m.radius, 0) AS r, m.radius, m.rows, m.cols, m.n, m.template_sha256 AS sha,"         \
  " m.config, m.is_seed, coalesce(m.rows * m.cols * ifnull(m.n, 1), m.n) AS elems,"            \
  " row_number() OVER (PARTITION BY m.gpu_id, m.op, m.dtype, m.problem, m.template_sha256"    \
  " ORDER BY m.median_ms, m.config) AS rank FROM current_measurement m"                        \
  " WHERE m.status = 'ok' AND m.verified = 1 AND m.op IN (SELECT value FROM json_each(:ops)))," \
  " best AS MATERIALIZED (SELECT gpu_id, op, dtype, variant, r, sha, config, elems FROM ranked" \
  " WHERE rank <= :top),"                                                                      \
  " carried AS (SELECT x.id FROM ranked x WHERE x.is_seed = 1"                                 \
  " OR x.config IS pm_default_config(x.op, x.dtype, x.variant, x.radius, x.rows, x.cols, x.n)" \
  " OR EXISTS (SELECT 1 FROM best b WHERE b.gpu_id = x.gpu_id AND b.op = x.op"                 \
  " AND b.dtype = x.dtype AND b.variant = x.variant AND b.r = x.r AND b.sha = x.sha"           \
  " AND b.config = x.config AND b.elems <= :within * x.elems AND x.elems <= :within * b.elems)) "
#define SELECTED                                                                             \
  "(m.op IN (SELECT value FROM json_each(:ops)) AND (:all OR m.id IN carried))"

static const char gpus_sql[] =
    CARRIED
    "SELECT json_object('uuid', g.uuid, 'name', g.name, 'cc_major', g.cc_major,"
    " 'cc_minor', g.cc_minor, 'arch', g.arch, 'sm_count', g.sm_count, 'mem_bytes', g.mem_bytes,"
    " 'driver_version', g.driver_version, 'runtime_version', g.runtime_version)"
    " FROM gpu g WHERE g.id IN (SELECT m.gpu_id FROM measurement m WHERE " SELECTED
    ")"
    " ORDER BY g.uuid";

static const char measurements_sql[] =
    CARRIED
    "SELECT json_object('gpu', g.uuid, 'op', m.op, 'dtype', m.dtype, 'rows', m.rows,"
    " 'cols', m.cols, 'n', m.n, 'radius', m.radius, 'variant', m.variant,"
    " 'template_sha256', m.template_sha256, 'config', m.config, 'params', json(m.params),"
    " 'is_seed', json(CASE m.is_seed WHEN 1 THEN 'true' ELSE 'false' END), 'status', m.status,"
    " 'error', m.error, 'median_ms', m.median_ms, 'min_ms', m.min_ms, 'max_ms', m.max_ms,"
    " 'samples', m.samples, 'gbps', m.gbps,"
    " 'verified', json(CASE m.verified WHEN 1 THEN 'true' ELSE 'false' END),"
    " 'max_error', m.max_error, 'measured_at', m.measured_at)"
    " FROM measurement m JOIN gpu g ON g.id = m.gpu_id WHERE " SELECTED
    " ORDER BY g.uuid, m.op, m.dtype, m.problem, m.template_sha256, m.config";

/* pm_default_config(op, dtype, variant, radius, rows, cols, n) in SQL: the op's default
 * configuration for that problem (pm__db_op's default_config), or NULL. */
static void default_config_sql(sqlite3_context *cx, int argc, sqlite3_value **argv) {
  pm__db *db = sqlite3_user_data(cx);
  const pm__db_op *op = pm__db_op_named(db, (const char *)sqlite3_value_text(argv[0]));
  char out[PM__DB_CONFIG_MAX];
  (void)argc;
  if (op == NULL || op->default_config == NULL) {
    sqlite3_result_null(cx);
    return;
  }
  pm__db_problem p = {op->name, (const char *)sqlite3_value_text(argv[1]),
                      sqlite3_value_int64(argv[4]), sqlite3_value_int64(argv[5]),
                      sqlite3_value_int64(argv[6]), sqlite3_value_int(argv[3]),
                      (const char *)sqlite3_value_text(argv[2])};
  if (p.dtype == NULL || p.variant == NULL || !op->default_config(op, &p, out, sizeof out))
    sqlite3_result_null(cx);
  else
    sqlite3_result_text(cx, out, -1, SQLITE_TRANSIENT);
}

/* Writes the rows of sql (one JSON object each) as the lines of a JSON array's body. */
static int write_rows(pm__db *db, FILE *out, const char *sql, int all, int *count) {
  int rc = PM_OK, r, n = 0;
  sqlite3 *h = pm__db_handle(db);
  sqlite3_stmt *st = NULL;
  char ops[PM__DB_OPS_JSON];
  pm__db_ops_json(db, ops, sizeof ops);
  PM__SQLITE(db, sqlite3_prepare_v2(h, sql, -1, &st, NULL));
  PM__SQLITE(db, sqlite3_bind_int(st, sqlite3_bind_parameter_index(st, ":all"), all));
  PM__SQLITE(db, sqlite3_bind_int(st, sqlite3_bind_parameter_index(st, ":top"), PM__DB_CARRY_TOP));
  PM__SQLITE(db, sqlite3_bind_int(st, sqlite3_bind_parameter_index(st, ":within"),
                                  PM__DB_CARRY_WITHIN));
  PM__SQLITE(db, sqlite3_bind_text(st, sqlite3_bind_parameter_index(st, ":ops"), ops, -1,
                                   SQLITE_TRANSIENT));
  while ((r = sqlite3_step(st)) == SQLITE_ROW) {
    const char *row;
    PM__SQLITE_TEXT(db, st, 0, row);
    fprintf(out, "%s\n  %s", n++ ? "," : "", row ? row : "null");
  }
  PM__SQLITE_ST(db, st, r);
  if (count) *count = n;
fail:
  pm__db_finalize(&st);
  return rc;
}

int pm__db_export(pm__db *db, FILE *out, int all, int *count) {
  int rc = PM_OK, n = 0;
  sqlite3 *h = pm__db_handle(db);
  sqlite3_stmt *st = NULL;
  if (count) *count = 0;
  if (out == NULL) return pm__seterr(pm__db_ctx(db), PM_EINVAL, "export: no output given");
  all = all != 0;
  PM__SQLITE(db, sqlite3_create_function_v2(h, "pm_default_config", 7,
                                            SQLITE_UTF8 | SQLITE_DETERMINISTIC, db,
                                            default_config_sql, NULL, NULL, NULL));
  /* One read transaction: a snapshot, whatever other processes write meanwhile. */
  PM__SQLITE(db, sqlite3_exec(h, "BEGIN", NULL, NULL, NULL));
  PM__SQLITE(
      db, sqlite3_prepare_v2(h,
                             "SELECT json_object('format', ?1, 'version', ?2, 'pmtune_version', ?3,"
                             " 'exported_at', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), 'all',"
                             " json(CASE ?4 WHEN 1 THEN 'true' ELSE 'false' END))",
                             -1, &st, NULL));
  PM__SQLITE(db, sqlite3_bind_text(st, 1, FORMAT, -1, SQLITE_STATIC));
  PM__SQLITE(db, sqlite3_bind_int(st, 2, FORMAT_VERSION));
  PM__SQLITE(db, sqlite3_bind_text(st, 3, pm_version(), -1, SQLITE_STATIC));
  PM__SQLITE(db, sqlite3_bind_int(st, 4, all));
  PM__SQLITE_ST(db, st, sqlite3_step(st));
  const char *head;
  PM__SQLITE_TEXT(db, st, 0, head);
  if (head == NULL) head = "{}";
  /* {"format":...,"all":false} -> {"format":...,"all":false,\n"gpus":[...],\n"measurements":[...]}
   */
  fprintf(out, "%.*s,\n\"gpus\": [", (int)strlen(head) - 1, head);
  pm__db_finalize(&st);
  if ((rc = write_rows(db, out, gpus_sql, all, NULL)) != PM_OK) goto fail;
  fputs("],\n\"measurements\": [", out);
  if ((rc = write_rows(db, out, measurements_sql, all, &n)) != PM_OK) goto fail;
  fputs("]}\n", out);
  PM__SQLITE(db, sqlite3_exec(h, "COMMIT", NULL, NULL, NULL));
  if (fflush(out) != 0 || ferror(out))
    return pm__seterr(pm__db_ctx(db), PM_EIO, "export: cannot write the document: %s",
                      strerror(errno));
  if (count) *count = n;
  return PM_OK;
fail:
  pm__db_finalize(&st);
  pm__db_rollback(db);
  return rc;
}

/* ---- Import: the text ----------------------------------------------------------------------- */

/* Whether s[0..len) is UTF-8 without overlong forms, surrogates or code points past U+10FFFF. */
static int valid_utf8(const unsigned char *s, size_t len) {
  for (size_t i = 0; i < len;) {
    uint64_t eight;
    if (i + 8 <= len && (memcpy(&eight, s + i, 8), (eight & 0x8080808080808080ull) == 0)) {
      i += 8; /* eight ASCII bytes at once: nearly all of a document */
      continue;
    }
    unsigned c = s[i];
    size_t n = c < 0x80             ? 0
               : (c & 0xe0) == 0xc0 ? 1
               : (c & 0xf0) == 0xe0 ? 2
               : (c & 0xf8) == 0xf0 ? 3
                                    : 9;
    if (n == 9 || i + n >= len) return 0;
    unsigned cp = n == 0 ? c : c & (0x3f >> n);
    for (size_t k = 1; k <= n; k++) {
      if ((s[i + k] & 0xc0) != 0x80) return 0;
      cp = (cp << 6) | (s[i + k] & 0x3f);
    }
    if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
        cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
      return 0;
    i += n + 1;
  }
  return 1;
}

static int hexval(const char *p) {
  int v = 0;
  for (int i = 0; i < 4; i++) {
    char c = p[i];
    int d = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                   : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

/* SQLite cuts a string at \u0000 and passes lone surrogates through: refuse both. Returns 0 if
 * the strings of the document have neither (it need not be valid JSON otherwise). */
static int bad_escape(const char *s, size_t len) {
  int in = 0;
  const char *bs = memchr(s, '\\', len); /* the next backslash at or after i, or NULL */
  if (bs == NULL) return 0;                /* no escape at all */
  for (size_t i = 0; i < len; i++) {
    if (bs != NULL && bs < s + i) bs = memchr(s + i, '\\', len - i);
    if (!in) { /* to the next quote */
      const char *q = memchr(s + i, '"', len - i);
      if (q == NULL) return 0;
      i = (size_t)(q - s);
      in = 1;
      continue;
    }
    if (s[i] != '"' && s[i] != '\\') { /* to the next quote or backslash in the string */
      const char *q = memchr(s + i, '"', (bs ? (size_t)(bs - s) : len) - i);
      i = q ? (size_t)(q - s) : bs ? (size_t)(bs - s) : len;
      if (i >= len) return 0;
    }
    if (s[i] == '"') {
      in = 0;
    } else if (s[i] == '\\' && i + 1 < len) {
      i++;
      if (s[i] != 'u') continue;
      int v = i + 4 < len ? hexval(s + i + 1) : -1;
      if (v <= 0) return v == 0 ? 1 : 0; /* \u0000; a malformed escape is json_valid's to find */
      if (v >= 0xdc00 && v <= 0xdfff) return 1;
      if (v >= 0xd800 && v <= 0xdbff) {
        int lo = i + 10 < len && s[i + 5] == '\\' && s[i + 6] == 'u' ? hexval(s + i + 7) : -1;
        if (lo < 0xdc00 || lo > 0xdfff) return 1;
        i += 6;
      }
      i += 4;
    }
  }
  return 0;
}

/* ---- Import: objects and fields ------------------------------------------------------------- */

typedef enum ftype { F_TEXT, F_INT, F_NUMBER, F_BOOL, F_OBJECT, F_ARRAY } ftype;

typedef struct field {
  const char *name;
  ftype type;
  int required, nullable;
} field;

typedef struct value {
  int present, null;
  char *text;      /* F_TEXT, F_OBJECT: heap */
  const char *raw; /* F_ARRAY: where it starts in the document read (which it lives in) */
  int64_t i;  /* F_INT, F_BOOL */
  double d;   /* F_NUMBER */
} value;

static const char *const type_names[] = {"a string",      "an integer", "a number",
                                         "true or false", "an object",  "an array"};

static void free_values(value *v, size_t n) {
  for (size_t i = 0; i < n; i++) free(v[i].text);
  memset(v, 0, n * sizeof *v);
}

/* ---- Import: reading the document ----------------------------------------------------------
 * The document has passed pm__db_json_check (RFC 8259's syntax) and SQLite's json_valid, and
 * bad_escape: what follows reads it as the valid JSON it is, in one pass, without checking its
 * syntax again. (Reading each measurement through SQLite's json_each parsed each one again and
 * copied each field through SQL: most of an import's time.) Types are named as SQLite's JSON
 * functions name them: text, integer, real, true, false, null, object, array. */

static const char *skip_ws(const char *p) {
  while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
  return p;
}

/* Past the string whose opening quote is at p. */
static const char *string_end(const char *p) {
  for (p++; *p != '"'; p++)
    if (*p == '\\') p++;
  return p + 1;
}

/* Past the value that starts at p. */
static const char *value_end(const char *p) {
  if (*p == '"') return string_end(p);
  if (*p == '{' || *p == '[') {
    int depth = 0;
    do {
      if (*p == '"') {
        p = string_end(p);
        continue;
      }
      depth += *p == '{' || *p == '[';
      depth -= *p == '}' || *p == ']';
      p++;
    } while (depth > 0);
    return p;
  }
  for (;; p++) /* a number, true, false or null: to the character that ends it */
    switch (*p) {
      case '\0': case ',': case ']': case '}': case ' ': case '\t': case '\n': case '\r':
        return p;
      default: break;
    }
}

/* The type of the value at p. */
static const char *kind_of(const char *p) {
  switch (*p) {
    case '"': return "text";
    case '{': return "object";
    case '[': return "array";
    case 't': return "true";
    case 'f': return "false";
    case 'n': return "null";
    default: break;
  }
  for (;; p++) /* a number: to the character that ends it */
    switch (*p) {
      case '.': case 'e': case 'E': return "real";
      case '\0': case ',': case ']': case '}': case ' ': case '\t': case '\n': case '\r':
        return "integer";
      default: break;
    }
}

/* The text of the string from p (its opening quote) to end (past its closing one), unescaped,
 * into out (at least end - p bytes: it is never longer). */
static void string_text(const char *p, const char *end, char *out) {
  for (p++; p < end - 1; p++) {
    if (*p != '\\') {
      *out++ = *p;
      continue;
    }
    switch (*++p) {
      case 'b': *out++ = '\b'; break;
      case 'f': *out++ = '\f'; break;
      case 'n': *out++ = '\n'; break;
      case 'r': *out++ = '\r'; break;
      case 't': *out++ = '\t'; break;
      case 'u': {
        unsigned cp = (unsigned)hexval(p + 1);
        p += 4;
        if (cp >= 0xd800 && cp <= 0xdbff) { /* a pair (bad_escape refused a lone one) */
          cp = 0x10000 + ((cp - 0xd800) << 10) + ((unsigned)hexval(p + 3) - 0xdc00);
          p += 6;
        }
        if (cp < 0x80) {
          *out++ = (char)cp;
        } else if (cp < 0x800) {
          *out++ = (char)(0xc0 | cp >> 6);
          *out++ = (char)(0x80 | (cp & 0x3f));
        } else if (cp < 0x10000) {
          *out++ = (char)(0xe0 | cp >> 12);
          *out++ = (char)(0x80 | ((cp >> 6) & 0x3f));
          *out++ = (char)(0x80 | (cp & 0x3f));
        } else {
          *out++ = (char)(0xf0 | cp >> 18);
          *out++ = (char)(0x80 | ((cp >> 12) & 0x3f));
          *out++ = (char)(0x80 | ((cp >> 6) & 0x3f));
          *out++ = (char)(0x80 | (cp & 0x3f));
        }
        break;
      }
      default: *out++ = *p; /* " \ / */
    }
  }
  *out = '\0';
}

/* Reads the JSON object at json into v[] along fields[]: each field at most once, of its type,
 * none unknown, the required ones present. where names the object in messages. *after (may be
 * NULL) receives where the object ends, once read whole. */
static int read_object(pm__db *db, const char *json, const field *fields, size_t nfields, value *v,
                       const char *where, const char **after) {
  pm_ctx *c = pm__db_ctx(db);
  const char *p = skip_ws(json);
  char key[48];
  size_t next = 0;
  memset(v, 0, nfields * sizeof *v);
  if (*p != '{') return pm__seterr(c, PM_EINVAL, "%s: expected an object, got %s", where, kind_of(p));
  for (p = skip_ws(p + 1); *p != '}';) {
    const char *kend = string_end(p);
    if (kend - p > (ptrdiff_t)sizeof key) { /* longer than every field's name */
      char *k = pm__malloc((size_t)(kend - p));
      if (k == NULL) return pm__seterr(c, PM_ENOMEM, "%s: out of memory", where);
      string_text(p, kend, k);
      int rc = pm__seterr(c, PM_EINVAL, "%s: unknown field '%.40s'", where, k);
      free(k);
      return rc;
    }
    string_text(p, kend, key);
    const char *at = skip_ws(skip_ws(kend) + 1), *end = value_end(at); /* past the ':' */
    p = skip_ws(end);
    if (*p == ',') p = skip_ws(p + 1);
    /* the field after the last one first: an export writes them in order */
    size_t k = next < nfields && strcmp(fields[next].name, key) == 0 ? next : 0;
    while (k < nfields && strcmp(fields[k].name, key) != 0) k++;
    if (k == nfields) return pm__seterr(c, PM_EINVAL, "%s: unknown field '%.40s'", where, key);
    next = k + 1;
    const field *f = &fields[k];
    if (v[k].present) return pm__seterr(c, PM_EINVAL, "%s.%s: given twice", where, f->name);
    v[k].present = 1;
    if (*at == 'n') {
      if (!f->nullable)
        return pm__seterr(c, PM_EINVAL, "%s.%s: expected %s, got null", where, f->name,
                          type_names[f->type]);
      v[k].null = 1;
      continue;
    }
    const char *type = kind_of(at);
    int ok = 0;
    switch (f->type) {
      case F_TEXT: ok = *at == '"'; break;
      case F_INT: ok = strcmp(type, "integer") == 0; break;
      case F_NUMBER: ok = strcmp(type, "integer") == 0 || strcmp(type, "real") == 0; break;
      case F_BOOL: ok = *at == 't' || *at == 'f'; break;
      case F_OBJECT: ok = *at == '{'; break;
      case F_ARRAY: ok = *at == '['; break;
    }
    if (!ok)
      return pm__seterr(c, PM_EINVAL, "%s.%s: expected %s, got %s", where, f->name,
                        type_names[f->type], type);
    if (f->type == F_INT) {
      char *e;
      errno = 0;
      v[k].i = strtoll(at, &e, 10);
      if (errno == ERANGE || e != end)
        return pm__seterr(c, PM_EINVAL, "%s.%s: integer out of range", where, f->name);
    } else if (f->type == F_NUMBER) {
      if (!isfinite(v[k].d = strtod(at, NULL)))
        return pm__seterr(c, PM_EINVAL, "%s.%s: number out of range", where, f->name);
    } else if (f->type == F_BOOL) {
      v[k].i = *at == 't';
    } else if (f->type == F_ARRAY) { /* each_element reads it where it is */
      v[k].raw = at;
    } else { /* a string's text; an object's JSON as it is written */
      if ((v[k].text = pm__malloc((size_t)(end - at) + 1)) == NULL)
        return pm__seterr(c, PM_ENOMEM, "%s.%s: out of memory", where, f->name);
      if (f->type == F_TEXT) {
        string_text(at, end, v[k].text);
      } else {
        memcpy(v[k].text, at, (size_t)(end - at));
        v[k].text[end - at] = '\0';
      }
    }
  }
  for (size_t k = 0; k < nfields; k++)
    if (fields[k].required && !v[k].present)
      return pm__seterr(c, PM_EINVAL, "%s: no field '%s'", where, fields[k].name);
  if (after) *after = p + 1;
  return PM_OK;
}

/* A text field of 1..max bytes, printable (newlines and tabs too where multiline). */
static int check_text(pm_ctx *c, const value *v, const char *where, const char *name, size_t max,
                      int multiline) {
  if (!v->present || v->null) return PM_OK;
  size_t n = strlen(v->text);
  if (n == 0 || n > max)
    return pm__seterr(c, PM_EINVAL, "%s.%s: expected 1 to %zu bytes, got %zu", where, name, max, n);
  for (size_t i = 0; i < n; i++) {
    unsigned char ch = (unsigned char)v->text[i];
    if ((ch < 0x20 && !(multiline && (ch == '\n' || ch == '\t' || ch == '\r'))) || ch == 0x7f)
      return pm__seterr(c, PM_EINVAL, "%s.%s: control character 0x%02x", where, name, ch);
  }
  return PM_OK;
}

static int check_int(pm_ctx *c, const value *v, const char *where, const char *name, int64_t lo,
                     int64_t hi) {
  if (!v->present || v->null || (v->i >= lo && v->i <= hi)) return PM_OK;
  return pm__seterr(c, PM_EINVAL, "%s.%s: %lld is not in %lld..%lld", where, name, (long long)v->i,
                    (long long)lo, (long long)hi);
}

/* 'YYYY-MM-DDTHH:MM:SS.SSSZ', as the database writes times. */
static int valid_time(const char *s) {
  static const char pattern[] = "dddd-dd-ddTdd:dd:dd.dddZ";
  if (strlen(s) != sizeof pattern - 1) return 0;
  for (size_t i = 0; pattern[i] != '\0'; i++)
    if (pattern[i] == 'd' ? !(s[i] >= '0' && s[i] <= '9') : s[i] != pattern[i]) return 0;
  int month = (s[5] - '0') * 10 + (s[6] - '0'), day = (s[8] - '0') * 10 + (s[9] - '0');
  int hour = (s[11] - '0') * 10 + (s[12] - '0'), min = (s[14] - '0') * 10 + (s[15] - '0');
  int sec = (s[17] - '0') * 10 + (s[18] - '0');
  return month >= 1 && month <= 12 && day >= 1 && day <= 31 && hour < 24 && min < 60 && sec < 61;
}

/* ---- Import: the document ------------------------------------------------------------------- */

enum { T_FORMAT, T_VERSION, T_PMTUNE, T_EXPORTED, T_ALL, T_GPUS, T_MEASUREMENTS, T_N };
static const field top_fields[T_N] = {
    {"format", F_TEXT, 1, 0},       {"version", F_INT, 1, 0}, {"pmtune_version", F_TEXT, 0, 0},
    {"exported_at", F_TEXT, 0, 0},  {"all", F_BOOL, 0, 0},    {"gpus", F_ARRAY, 1, 0},
    {"measurements", F_ARRAY, 1, 0}};

enum { G_UUID, G_NAME, G_CC_MAJOR, G_CC_MINOR, G_ARCH, G_SMS, G_MEM, G_DRIVER, G_RUNTIME, G_N };
static const field gpu_fields[G_N] = {
    {"uuid", F_TEXT, 1, 0},     {"name", F_TEXT, 1, 0},          {"cc_major", F_INT, 1, 0},
    {"cc_minor", F_INT, 1, 0},  {"arch", F_TEXT, 1, 0},          {"sm_count", F_INT, 1, 0},
    {"mem_bytes", F_INT, 1, 0}, {"driver_version", F_INT, 1, 0}, {"runtime_version", F_INT, 1, 0}};

enum {
  M_GPU,
  M_OP,
  M_DTYPE,
  M_ROWS,
  M_COLS,
  M_N,
  M_RADIUS,
  M_VARIANT,
  M_SHA,
  M_CONFIG,
  M_PARAMS,
  M_SEED,
  M_STATUS,
  M_ERROR,
  M_MEDIAN,
  M_MIN,
  M_MAX,
  M_SAMPLES,
  M_GBPS,
  M_VERIFIED,
  M_MAXERR,
  M_AT,
  M_N_
};
static const field measurement_fields[M_N_] = {
    {"gpu", F_TEXT, 1, 0},        {"op", F_TEXT, 1, 0},       {"dtype", F_TEXT, 1, 0},
    {"rows", F_INT, 0, 1},        {"cols", F_INT, 0, 1},      {"n", F_INT, 0, 1},
    {"radius", F_INT, 0, 1},      {"variant", F_TEXT, 0, 0},  {"template_sha256", F_TEXT, 1, 0},
    {"config", F_TEXT, 1, 0},     {"params", F_OBJECT, 1, 0}, {"is_seed", F_BOOL, 1, 0},
    {"status", F_TEXT, 1, 0},     {"error", F_TEXT, 0, 1},    {"median_ms", F_NUMBER, 0, 1},
    {"min_ms", F_NUMBER, 0, 1},   {"max_ms", F_NUMBER, 0, 1}, {"samples", F_INT, 0, 1},
    {"gbps", F_NUMBER, 0, 1},     {"verified", F_BOOL, 1, 0}, {"max_error", F_NUMBER, 0, 1},
    {"measured_at", F_TEXT, 1, 0}};

typedef struct known_gpu {
  char uuid[48];
  int64_t id;
  int sm_count;
} known_gpu;

static int import_gpu(pm__db *db, const char *json, int index, known_gpu *known, int nknown,
                      pm__db_import_stats *st, const char **end) {
  pm_ctx *c = pm__db_ctx(db);
  value v[G_N];
  char where[48];
  int rc, added = 0;
  snprintf(where, sizeof where, "gpus[%d]", index);
  if ((rc = read_object(db, json, gpu_fields, G_N, v, where, end)) != PM_OK) goto done;
  if ((rc = check_text(c, &v[G_UUID], where, "uuid", 47, 0)) != PM_OK ||
      (rc = check_text(c, &v[G_NAME], where, "name", 255, 0)) != PM_OK ||
      (rc = check_text(c, &v[G_ARCH], where, "arch", 15, 0)) != PM_OK ||
      (rc = check_int(c, &v[G_CC_MAJOR], where, "cc_major", 1, 99)) != PM_OK ||
      (rc = check_int(c, &v[G_CC_MINOR], where, "cc_minor", 0, 9)) != PM_OK ||
      (rc = check_int(c, &v[G_SMS], where, "sm_count", 1, 1 << 20)) != PM_OK ||
      (rc = check_int(c, &v[G_MEM], where, "mem_bytes", 1, (int64_t)1 << 50)) != PM_OK ||
      (rc = check_int(c, &v[G_DRIVER], where, "driver_version", 0, 1 << 30)) != PM_OK ||
      (rc = check_int(c, &v[G_RUNTIME], where, "runtime_version", 0, 1 << 30)) != PM_OK)
    goto done;
  for (int i = 0; i < nknown; i++)
    if (strcmp(known[i].uuid, v[G_UUID].text) == 0) {
      rc = pm__seterr(c, PM_EINVAL, "%s.uuid: '%s' is given twice", where, v[G_UUID].text);
      goto done;
    }
  pm__device_info d;
  memset(&d, 0, sizeof d);
  snprintf(d.uuid, sizeof d.uuid, "%s", v[G_UUID].text);
  snprintf(d.name, sizeof d.name, "%s", v[G_NAME].text);
  snprintf(d.arch, sizeof d.arch, "%s", v[G_ARCH].text);
  d.cc_major = (int)v[G_CC_MAJOR].i;
  d.cc_minor = (int)v[G_CC_MINOR].i;
  d.sm_count = (int)v[G_SMS].i;
  d.mem_bytes = (size_t)v[G_MEM].i;
  snprintf(known[nknown].uuid, sizeof known[nknown].uuid, "%s", d.uuid);
  known[nknown].sm_count = d.sm_count;
  rc = pm__db_gpu_write(db, &d, (int)v[G_DRIVER].i, (int)v[G_RUNTIME].i, 1, &known[nknown].id,
                        &added);
  if (rc == PM_EINVAL) {
    char msg[512];
    snprintf(msg, sizeof msg, "%s", pm_errmsg(c));
    rc = pm__seterr(c, PM_EINVAL, "%s: %s", where, msg);
  }
  if (rc == PM_OK) st->gpus_added += added;
done:
  free_values(v, G_N);
  return rc;
}

static int import_measurement(pm__db *db, const char *json, int index, const known_gpu *known,
                              int nknown, int known_ops, pm__db_import_stats *st,
                              const char **end) {
  static const char *const statuses[] = {"ok", "compile_error", "launch_error", "wrong_result"};
  pm_ctx *c = pm__db_ctx(db);
  value v[M_N_];
  char where[48];
  int rc, what = 0;
  /* "measurements[index]", without snprintf (each row's) */
  char digits[16];
  int nd = 0;
  for (unsigned x = (unsigned)index; nd == 0 || x != 0; x /= 10) digits[nd++] = (char)('0' + x % 10);
  memcpy(where, "measurements[", 13);
  for (int k = 0; k < nd; k++) where[13 + k] = digits[nd - 1 - k];
  where[13 + nd] = ']', where[14 + nd] = '\0';
  if ((rc = read_object(db, json, measurement_fields, M_N_, v, where, end)) != PM_OK) goto done;
  if ((rc = check_text(c, &v[M_GPU], where, "gpu", 47, 0)) != PM_OK ||
      (rc = check_text(c, &v[M_OP], where, "op", 31, 0)) != PM_OK ||
      (rc = check_text(c, &v[M_DTYPE], where, "dtype", 16, 0)) != PM_OK ||
      (rc = check_text(c, &v[M_SHA], where, "template_sha256", 64, 0)) != PM_OK ||
      (rc = check_text(c, &v[M_CONFIG], where, "config", PM__DB_CONFIG_MAX - 1, 0)) != PM_OK ||
      (rc = check_text(c, &v[M_STATUS], where, "status", 16, 0)) != PM_OK ||
      (rc = check_text(c, &v[M_ERROR], where, "error", ERROR_TEXT_MAX, 1)) != PM_OK ||
      (rc = check_text(c, &v[M_AT], where, "measured_at", 24, 0)) != PM_OK ||
      (rc = check_int(c, &v[M_ROWS], where, "rows", 1, INT64_MAX)) != PM_OK ||
      (rc = check_int(c, &v[M_COLS], where, "cols", 1, INT64_MAX)) != PM_OK ||
      (rc = check_int(c, &v[M_N], where, "n", 1, INT64_MAX)) != PM_OK ||
      /* a radius (filter's 1 to 3, a kernel's tuned scalar): its op's range is checked below */
      (rc = check_int(c, &v[M_RADIUS], where, "radius", 1, INT32_MAX)) != PM_OK ||
      (rc = check_int(c, &v[M_SAMPLES], where, "samples", 1, 1 << 30)) != PM_OK)
    goto done;
  if (known_ops && pm__db_op_named(db, v[M_OP].text) == NULL) { /* checked, not written */
    st->passed_over++;
    goto done;
  }
  if (v[M_VARIANT].present && strlen(v[M_VARIANT].text) > 32) {
    rc = pm__seterr(c, PM_EINVAL, "%s.variant: longer than 32 bytes", where);
    goto done;
  }
  if (!valid_time(v[M_AT].text)) {
    rc = pm__seterr(c, PM_EINVAL, "%s.measured_at: '%s' is not YYYY-MM-DDTHH:MM:SS.SSSZ", where,
                    v[M_AT].text);
    goto done;
  }
  pm__db_measurement m;
  memset(&m, 0, sizeof m);
  int sm_count = 0;
  for (int i = 0; i < nknown && m.gpu_id == 0; i++)
    if (strcmp(known[i].uuid, v[M_GPU].text) == 0) m.gpu_id = known[i].id, sm_count = known[i].sm_count;
  if (m.gpu_id == 0) {
    rc = pm__seterr(c, PM_EINVAL, "%s.gpu: '%s' is not one of the document's gpus", where,
                    v[M_GPU].text);
    goto done;
  }
  int outcome = -1;
  for (int i = 0; i < 4; i++)
    if (strcmp(statuses[i], v[M_STATUS].text) == 0) outcome = i;
  if (outcome < 0) {
    rc = pm__seterr(c, PM_EINVAL,
                    "%s.status: '%.40s' is not ok, compile_error, launch_error or "
                    "wrong_result",
                    where, v[M_STATUS].text);
    goto done;
  }
  /* An ok row has every timing (a null would be stored as 0: bandwidth 0, or no time), and no
   * error; a failed row has no timing (the database keeps none of it). */
  static const int timings[] = {M_MEDIAN, M_MIN, M_MAX, M_SAMPLES, M_GBPS};
  for (size_t i = 0; i < sizeof timings / sizeof *timings; i++) {
    const value *t = &v[timings[i]];
    if (outcome == PM__DB_MEASURED && (!t->present || t->null)) {
      rc = pm__seterr(c, PM_EINVAL, "%s.%s: %s on an ok row, which needs it", where,
                      measurement_fields[timings[i]].name, t->present ? "null" : "missing");
      goto done;
    }
    if (outcome != PM__DB_MEASURED && t->present && !t->null) {
      rc = pm__seterr(c, PM_EINVAL, "%s.%s: given on a row of status %s, which has no timings",
                      where, measurement_fields[timings[i]].name, v[M_STATUS].text);
      goto done;
    }
  }
  if (outcome == PM__DB_MEASURED && v[M_ERROR].present && !v[M_ERROR].null) {
    rc = pm__seterr(c, PM_EINVAL, "%s.error: given on an ok row, which has none", where);
    goto done;
  }
  m.problem.op = v[M_OP].text;
  m.problem.dtype = v[M_DTYPE].text;
  m.problem.rows = v[M_ROWS].null ? 0 : v[M_ROWS].i;
  m.problem.cols = v[M_COLS].null ? 0 : v[M_COLS].i;
  m.problem.n = v[M_N].null ? 0 : v[M_N].i;
  m.problem.radius = v[M_RADIUS].null ? 0 : (int)v[M_RADIUS].i;
  m.problem.variant = v[M_VARIANT].present ? v[M_VARIANT].text : "";
  m.template_sha256 = v[M_SHA].text;
  m.params = v[M_PARAMS].text;
  m.config = v[M_CONFIG].text;
  m.is_seed = (int)v[M_SEED].i;
  m.outcome = (pm__db_outcome)outcome;
  m.error = v[M_ERROR].null ? NULL : v[M_ERROR].text;
  m.median_ms = v[M_MEDIAN].d;
  m.min_ms = v[M_MIN].d;
  m.max_ms = v[M_MAX].d;
  m.samples = v[M_SAMPLES].null ? 0 : (int)v[M_SAMPLES].i;
  m.gbps = v[M_GBPS].d;
  m.verified = (int)v[M_VERIFIED].i;
  m.max_error = v[M_MAXERR].d;
  if (m.verified && (!v[M_MAXERR].present || v[M_MAXERR].null)) {
    rc = pm__seterr(c, PM_EINVAL, "%s.max_error: verified, so it is required", where);
    goto done;
  }
  rc = pm__db_measurement_write(db, &m, v[M_AT].text, 1, &what);
  if (rc == PM_EINVAL) {
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", pm_errmsg(c));
    rc = pm__seterr(c, PM_EINVAL, "%s: %s", where, msg);
  }
  /* The configuration against its op's space and constraints, as the tuner made it: checked
   * once the write has found the problem sound (a refusal rolls the whole import back). */
  const pm__db_op *op = rc == PM_OK ? pm__db_op_named(db, m.problem.op) : NULL;
  char problem[PM__DB_PROBLEM_MAX], why[512];
  if (op != NULL && op->check_config != NULL &&
      !op->check_config(op, &m.problem, m.config, sm_count, why, sizeof why)) {
    if (pm__db_problem_text(db, &m.problem, problem) != PM_OK) problem[0] = '\0';
    rc = pm__seterr(c, PM_EINVAL, "%s.config: %s (%s %s)", where, why, m.problem.op, problem);
  }
  if (rc == PM_OK) {
    st->added += what == 0;
    st->updated += what == 1;
    st->kept += what == 2;
  }
done:
  free_values(v, M_N_);
  return rc;
}

/* Runs fn on each element of the array text json (the document's member `name`), each an
 * object handed as its JSON text (read_object reads it to its end); any other element is
 * PM_EINVAL naming it. */
static int each_element(pm__db *db, const char *json, const char *name,
                        int (*fn)(pm__db *, const char *, int, void *, const char **), void *arg) {
  int rc, i = 0;
  for (const char *p = skip_ws(skip_ws(json) + 1); *p != ']'; i++) {
    const char *end = NULL;
    /* Only an object is read further: a number (1e999 among them, which SQLite reads as
     * infinity), a string or an array is the document's fault. */
    if (*p != '{')
      return pm__seterr(pm__db_ctx(db), PM_EINVAL, "%s[%d]: expected an object, got %s", name, i,
                        kind_of(p));
    if ((rc = fn(db, p, i, arg, &end)) != PM_OK) return rc;
    p = skip_ws(end);
    if (*p == ',') p = skip_ws(p + 1);
  }
  return PM_OK;
}

/* The connection as an import sets it and as pm__db_open leaves it (SQLite's default cache of
 * 2,000 KiB, temporary files where SQLite puts them, CHECK constraints and foreign keys on). */
#define IMPORT_PRAGMAS \
  "PRAGMA cache_size = -262144; PRAGMA temp_store = MEMORY; PRAGMA foreign_keys = OFF"
#define OPEN_PRAGMAS                                                                  \
  "PRAGMA cache_size = -2000; PRAGMA temp_store = DEFAULT;"                           \
  " PRAGMA ignore_check_constraints = OFF; PRAGMA foreign_keys = ON"

/* Sets the connection up for one large transaction: a page cache of 256 MiB (with
 * SQLite's default of 2 MiB, a large import wrote its pages to the WAL in the middle, and again
 * at commit); its temporary files in memory (each row's upsert wrote its statement journal to a
 * file in /var/tmp). And, once pm__db_sound has passed the file (pm__db_import), the schema's
 * CHECK constraints are not evaluated by SQLite, because every one of those on what an import
 * writes is checked in C before the row is written:
 *   template.sha256 64 lowercase hex digits, current 0 or 1 (valid_sha, template_known's 0);
 *   measurement.params a JSON object (config_from_params), is_seed and verified 0 or 1,
 *   an ok row's 0 < min <= median <= max, samples >= 1, gbps >= 0, a failed row's error
 *   (check_timing), status one of the four (outcome_names);
 * evaluating them cost a quarter of an import: SQLite builds a b-tree in memory for the list of
 * statuses on every row. Foreign keys off, too (outside the transaction, where SQLite takes the
 * setting): a row's GPU is one the import wrote or found (pm__db_measurement_write asks), its
 * template one template_known wrote or found, and it has no run; with them on, every row's
 * statement kept a journal to undo itself with, a sixth of the time. `pmtune db check` still
 * verifies both (the fuzzer, fuzz_import, checks every database an import leaves with it).
 * import_pragmas_reset sets the connection back as pm__db_open leaves it. (Literals: pragmas take
 * no bound values, and no SQL is built from strings.) */
static int import_pragmas_set(pm__db *db) {
  int rc = PM_OK;
  PM__SQLITE(db, sqlite3_exec(pm__db_handle(db), IMPORT_PRAGMAS, NULL, NULL, NULL));
fail:
  return rc;
}

static void import_pragmas_reset(pm__db *db) {
  sqlite3_exec(pm__db_handle(db), OPEN_PRAGMAS, NULL, NULL, NULL);
}

typedef struct import_state {
  known_gpu *gpus;
  int ngpus;
  int known_ops; /* pm__db_import_known: measurements of other ops passed over */
  pm__db_import_stats st;
} import_state;

static int gpu_cb(pm__db *db, const char *json, int i, void *arg, const char **end) {
  import_state *s = arg;
  if (s->ngpus == IMPORT_MAX_GPUS)
    return pm__seterr(pm__db_ctx(db), PM_EINVAL, "gpus: more than %d", IMPORT_MAX_GPUS);
  int rc = import_gpu(db, json, i, s->gpus, s->ngpus, &s->st, end);
  if (rc == PM_OK) s->ngpus++;
  return rc;
}

static int measurement_cb(pm__db *db, const char *json, int i, void *arg, const char **end) {
  import_state *s = arg;
  return import_measurement(db, json, i, s->gpus, s->ngpus, s->known_ops, &s->st, end);
}

static int import(pm__db *db, const char *json, size_t len, int known_ops,
                  pm__db_import_stats *stats) {
  pm_ctx *c = pm__db_ctx(db);
  int rc = PM_OK;
  value v[T_N];
  import_state s = {.known_ops = known_ops};
  int pragmas_set = 0;
  memset(v, 0, sizeof v);
  if (stats) memset(stats, 0, sizeof *stats);
  if (json == NULL) return pm__seterr(c, PM_EINVAL, "import: no document given");
  if (len > IMPORT_MAX_BYTES)
    return pm__seterr(c, PM_EINVAL, "import: the document has %zu bytes, at most %zu", len,
                      IMPORT_MAX_BYTES);
  if (memchr(json, '\0', len) != NULL)
    return pm__seterr(c, PM_EINVAL, "import: the document contains a NUL byte");
  if (!valid_utf8((const unsigned char *)json, len))
    return pm__seterr(c, PM_EINVAL, "import: the document is not UTF-8");
  if (bad_escape(json, len))
    return pm__seterr(c, PM_EINVAL, "import: a string holds \\u0000 or a lone surrogate escape");

  /* json may lack a NUL at len: it is read from a copy that has one. */
  char *doc = pm__malloc(len + 1);
  if (doc == NULL) return pm__seterr(c, PM_ENOMEM, "import: out of memory");
  memcpy(doc, json, len);
  doc[len] = '\0';
  /* Its syntax, as RFC 8259 writes it: read_object and each_element read it as valid JSON.
   * (SQLite's json_valid over the whole document was a tenth of an import's time; no SQLite
   * JSON function reads the whole document now.) */
  int valid = pm__db_json_check(NULL, doc, (int)len);
  rc = valid == 1   ? read_object(db, doc, top_fields, T_N, v, "document", NULL)
       : valid == 0 ? pm__seterr(c, PM_EINVAL,
                                 "import: not valid JSON (or nested deeper than SQLite reads)")
                    : pm__seterr(c, PM_ENOMEM, "import: out of memory checking the document");
  if (rc != PM_OK) goto fail; /* doc lives to the end: the arrays are read where they are */
  if (strcmp(v[T_FORMAT].text, FORMAT) != 0) {
    rc = pm__seterr(c, PM_EINVAL, "document.format: '%.40s', not '%s'", v[T_FORMAT].text, FORMAT);
    goto fail;
  }
  if (v[T_VERSION].i != FORMAT_VERSION) {
    rc = pm__seterr(c, PM_EINVAL, "document.version: %lld, but this pmtune reads version %d",
                    (long long)v[T_VERSION].i, FORMAT_VERSION);
    goto fail;
  }
  if ((rc = check_text(c, &v[T_PMTUNE], "document", "pmtune_version", 64, 0)) != PM_OK ||
      (rc = check_text(c, &v[T_EXPORTED], "document", "exported_at", 64, 0)) != PM_OK)
    goto fail;
  if ((s.gpus = pm__calloc(IMPORT_MAX_GPUS, sizeof *s.gpus)) == NULL) {
    rc = pm__seterr(c, PM_ENOMEM, "import: out of memory");
    goto fail;
  }
  /* All or nothing: one transaction, rolled back at the first fault; its pages stay in memory
   * until it commits (import_pragmas_set). */
  pragmas_set = 1; /* (set back even where setting them failed half way) */
  if ((rc = import_pragmas_set(db)) != PM_OK) goto fail;
  if ((rc = pm__db_begin(db)) != PM_OK) goto fail;
  /* The file's check first (its CHECK constraints included; not of a database in memory, which
   * pm__db_open made and only this handle wrote: the shipped results import two documents into
   * one, and checking 112,176 rows before the second cost a quarter of a context's first
   * decision), then the rows, whose CHECK constraints are checked in C (import_pragmas_set). */
  if ((!db->memory && (rc = pm__db_sound(db)) != PM_OK) ||
      (rc = sqlite3_exec(pm__db_handle(db), "PRAGMA ignore_check_constraints = ON", NULL, NULL,
                         NULL) == SQLITE_OK
                ? PM_OK
                : pm__db_sqlite_error(db, sqlite3_errcode(pm__db_handle(db)),
                                      "PRAGMA ignore_check_constraints", __FILE__, __LINE__)) !=
          PM_OK ||
      (rc = each_element(db, v[T_GPUS].raw, "gpus", gpu_cb, &s)) != PM_OK ||
      (rc = each_element(db, v[T_MEASUREMENTS].raw, "measurements", measurement_cb, &s)) !=
          PM_OK) {
    pm__db_rollback(db);
    goto fail;
  }
  if ((rc = pm__db_commit(db)) != PM_OK) goto fail;
  if (stats) *stats = s.st;
fail:
  if (pragmas_set) import_pragmas_reset(db);
  free_values(v, T_N);
  free(s.gpus);
  free(doc);
  return rc;
}

int pm__db_import(pm__db *db, const char *json, size_t len, pm__db_import_stats *st) {
  return import(db, json, len, 0, st);
}

int pm__db_import_known(pm__db *db, const char *json, size_t len, pm__db_import_stats *st) {
  return import(db, json, len, 1, st);
}
