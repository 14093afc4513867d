/* space.c: the generic side of the search spaces: numbering points, their text, JSON and -D
 * defines, and the op table. Knows no operation by name. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op.h"

const pm__op *const pm__ops[] = {
#define OP_ENTRY(NAME, value, name) &pm__op_##name,
    PM_OPS(OP_ENTRY)
#undef OP_ENTRY
    NULL};

#define OP_ONE(NAME, value, name) +1
_Static_assert((0 PM_OPS(OP_ONE)) <= PM__MAX_OPS, "more ops than PM__MAX_OPS");

int pm_op_count(void) { return 0 PM_OPS(OP_ONE); }
#undef OP_ONE

const char *pm_op_name(int i) {
  return i >= 0 && i < pm_op_count() ? pm__ops[i]->name : NULL;
}

const pm__op *pm__op_find(const char *name) {
  if (name == NULL) return NULL;
  for (int i = 0; pm__ops[i] != NULL; i++)
    if (strcmp(pm__ops[i]->name, name) == 0) return pm__ops[i];
  return NULL;
}

const pm__template *pm__op_template(const pm__op *op) {
  return op->tpl != NULL ? op->tpl : pm__template_find(op->name);
}

const pm__op *pm__op_of(pm_op e) {
  for (int i = 0; pm__ops[i] != NULL; i++)
    if (pm__ops[i]->api == e) return pm__ops[i];
  return NULL;
}

static int config_parse(const pm__op *op, const char *text, int *v, char *why, size_t cap);

static pm__db_op db_ops[PM__MAX_OPS];
static const pm__db_op *db_op_list[PM__MAX_OPS + 1];
static pthread_once_t db_ops_once = PTHREAD_ONCE_INIT;

int pm__problem_of_db(const pm__op *op, const pm__db_problem *p, pm__problem *out) {
  int dtype = pm__dtype_find(p->dtype);
  memset(out, 0, sizeof *out);
  if (dtype < 0 || p->rows < 0 || p->cols < 0 || p->n < 0 || p->rows > UINT32_MAX ||
      p->cols > UINT32_MAX || p->n > UINT32_MAX)
    return 0;
  out->rows = (unsigned)p->rows, out->cols = (unsigned)p->cols, out->n = (unsigned)p->n;
  out->radius = p->radius;
  out->variant = pm__variant_index(op, p->variant ? p->variant : "");
  out->dtype = dtype;
  return 1;
}

static int default_config(const pm__db_op *self, const pm__db_problem *p, char *out, size_t cap) {
  const pm__op *op = self->owner;
  pm__problem pr;
  int v[PM__MAX_PARAMS] = {0};
  if (op == NULL || op->fallback == NULL || !pm__problem_of_db(op, p, &pr)) return 0;
  op->fallback(op, &pr, v);
  pm__config_text(op, v, out, cap);
  return 1;
}

/* Whether config is pm__config_text's text of v, exactly (what the tuner stores). */
static int canonical(const pm__op *op, const int *v, const char *config) {
  const char *p = config;
  for (int i = 0; i < op->nparams; i++) {
    size_t n = strlen(op->params[i].name);
    if ((i > 0 && *p++ != ' ') || strncmp(p, op->params[i].name, n) != 0 || p[n] != '=')
      return 0;
    p += n + 1;
    char digits[16];
    int k = 0;
    unsigned long long x = v[i] < 0 ? 0ull - (unsigned long long)v[i] : (unsigned long long)v[i];
    do digits[k++] = (char)('0' + x % 10); while ((x /= 10) != 0);
    if (v[i] < 0 && *p++ != '-') return 0;
    while (k > 0)
      if (*p++ != digits[--k]) return 0;
  }
  return *p == '\0';
}

/* pm__db_op's check_config for every op, built-in or made from a description: the text parsed
 * against the space (pm__config_parse's rules), in the space's order, and the op's constraints
 * (op->check) on the problem, under the limits of any GPU pmtune runs on (1024 threads and
 * 48 KiB of static shared memory a block) with the GPU's SMs; a nondeterministic point is
 * allowed (`pmtune tune --nondeterministic` measures them). */
static int check_config(const pm__db_op *self, const pm__db_problem *p, const char *config,
                        int sm_count, char *why, size_t cap) {
  const pm__op *op = self->owner;
  pm__problem pr;
  int v[PM__MAX_PARAMS] = {0};
  char text[PM__DB_CONFIG_MAX];
  if (op == NULL) return 1;
  if (config == NULL || strlen(config) >= sizeof text) {
    snprintf(why, cap, "configuration: none given, or longer than %d bytes", PM__DB_CONFIG_MAX - 1);
    return 0;
  }
  if (config_parse(op, config, v, why, cap) != 0) return 0;
  if (!canonical(op, v, config)) {
    pm__config_text(op, v, text, sizeof text);
    snprintf(why, cap, "configuration '%s': not in the order of %s's parameters ('%s')", config,
             op->name, text);
    return 0;
  }
  if (!pm__problem_of_db(op, p, &pr)) {
    snprintf(why, cap, "configuration '%s': the problem is not one of %s's", config, op->name);
    return 0;
  }
  pm__limits lim = pm__limits_default();
  lim.sm_count = sm_count > 0 ? sm_count : 1;
  lim.allow_nondeterministic = 1;
  const char *no = op->check(op, v, &pr, &lim);
  if (no != NULL) {
    snprintf(why, cap, "configuration '%s' cannot run this problem: %s", config, no);
    return 0;
  }
  return 1;
}

static pm__db_op db_op_of(const pm__op *op) {
  return (pm__db_op){op->name,        op->dims - 1, op->radius_min, op->radius_max, op->radius_name,
                     {op->variants[0], op->variants[1], op->variants[2]},
                     op->dtypes,      default_config, op, check_config};
}

static void db_ops_make(void) {
  for (int i = 0; pm__ops[i] != NULL && i < PM__MAX_OPS; i++) {
    db_ops[i] = db_op_of(pm__ops[i]);
    db_op_list[i] = &db_ops[i];
  }
}

const pm__db_op *const *pm__ops_db(void) {
  pthread_once(&db_ops_once, db_ops_make);
  return db_op_list;
}

const pm__db_op *const *pm__ops_db_with(const pm__op *op, pm__ops_db_plus *store) {
  const pm__db_op *const *all = pm__ops_db();
  int n = 0;
  for (; all[n] != NULL; n++) store->list[n] = all[n];
  store->op = db_op_of(op);
  store->list[n++] = &store->op;
  store->list[n] = NULL;
  return store->list;
}

int pm__op_known_load(pm__db *db, const pm__device_info *d, const pm__op *op, pm__db_known *out) {
  const char *names[] = {op->name, NULL}, *shas[] = {pm__op_template(op)->sha256, NULL};
  return pm__db_known_load(db, d, names, shas, out);
}

int pm__op_index(const pm__op *op) {
  for (int i = 0; pm__ops[i] != NULL; i++)
    if (pm__ops[i] == op) return i;
  return -1;
}

void pm__op_db_problem(const pm__op *op, const pm__problem *pr, pm__db_problem *out) {
  memset(out, 0, sizeof *out);
  out->op = op->name;
  out->dtype = pm_dtype_name((pm_dtype)pr->dtype);
  if (op->dims != 2) out->n = pr->n; /* the batch of three dims */
  if (op->dims != 1) {
    out->rows = pr->rows;
    out->cols = pr->cols;
  }
  out->radius = op->radius_max > 0 ? pr->radius : 0;
  out->variant = pm__variant_text(op, pr);
}

pm__limits pm__limits_default(void) {
  pm__limits l = {.max_threads = 1024, .max_smem = 48 * 1024, .sm_count = 108};
  return l;
}

pm__limits pm__limits_of(const pm__device_info *d) {
  pm__limits l = pm__limits_default();
  l.max_threads = d->max_threads_per_block;
  l.sm_count = d->sm_count;
  return l; /* static shared memory stays at 48 KiB: the templates do not opt in to more */
}

uint64_t pm__space_size(const pm__op *op) {
  uint64_t n = 1;
  for (int i = 0; i < op->nparams; i++) n *= (uint64_t)op->params[i].nvalues;
  return n;
}

void pm__space_point(const pm__op *op, uint64_t index, int *v) {
  for (int i = 0; i < op->nparams; i++) {
    const pm__param *p = &op->params[i];
    v[i] = p->values[index % (uint64_t)p->nvalues];
    index /= (uint64_t)p->nvalues;
  }
}

uint64_t pm__space_index(const pm__op *op, const int *v) {
  uint64_t idx = 0, scale = 1;
  for (int i = 0; i < op->nparams; i++) {
    const pm__param *p = &op->params[i];
    int k = 0;
    while (k < p->nvalues - 1 && p->values[k] != v[i]) k++;
    idx += (uint64_t)k * scale;
    scale *= (uint64_t)p->nvalues;
  }
  return idx;
}

void pm__config_text(const pm__op *op, const int *v, char *out, size_t len) {
  size_t n = 0;
  out[0] = '\0';
  for (int i = 0; i < op->nparams && n < len; i++)
    n += (size_t)snprintf(out + n, len - n, "%s%s=%d", i ? " " : "", op->params[i].name, v[i]);
}

void pm__config_json(const pm__op *op, const int *v, char *out, size_t len) {
  size_t n = (size_t)snprintf(out, len, "{");
  for (int i = 0; i < op->nparams && n < len; i++)
    n += (size_t)snprintf(out + n, len - n, "%s\"%s\":%d", i ? "," : "", op->params[i].name, v[i]);
  if (n < len) snprintf(out + n, len - n, "}");
}

/* pm__config_parse's work: 0, or -1 with why (cap bytes) saying what is wrong. */
static int config_parse(const pm__op *op, const char *text, int *v, char *why, size_t cap) {
  int seen[PM__MAX_PARAMS] = {0};
  const char *p = text;
  while (p != NULL && *p != '\0') {
    while (*p == ' ') p++;
    if (*p == '\0') break;
    const char *eq = strchr(p, '=');
    if (eq == NULL) {
      snprintf(why, cap, "configuration '%s': expected name=value", text);
      return -1;
    }
    int i = 0;
    for (; i < op->nparams; i++)
      if (strlen(op->params[i].name) == (size_t)(eq - p) &&
          strncmp(op->params[i].name, p, (size_t)(eq - p)) == 0)
        break;
    if (i == op->nparams) {
      snprintf(why, cap, "configuration '%s': %s has no parameter '%.*s'", text, op->name,
               (int)(eq - p), p);
      return -1;
    }
    char *end;
    errno = 0;
    long val = strtol(eq + 1, &end, 10);
    if (end == eq + 1 || (*end != ' ' && *end != '\0')) {
      snprintf(why, cap, "configuration '%s': %s needs an integer", text, op->params[i].name);
      return -1;
    }
    int ok = 0;
    for (int k = 0; k < op->params[i].nvalues; k++)
      ok |= errno == 0 && op->params[i].values[k] == val;
    if (!ok) {
      snprintf(why, cap, "configuration '%s': %.*s is not a value of %s", text,
               (int)(end - (eq + 1)), eq + 1, op->params[i].name);
      return -1;
    }
    if (seen[i]++) {
      snprintf(why, cap, "configuration '%s': %s given twice", text, op->params[i].name);
      return -1;
    }
    v[i] = (int)val;
    p = end;
  }
  for (int i = 0; i < op->nparams; i++)
    if (!seen[i]) {
      snprintf(why, cap, "configuration '%s': %s is missing", text, op->params[i].name);
      return -1;
    }
  return 0;
}

int pm__config_parse(pm_ctx *c, const pm__op *op, const char *text, int *v) {
  char why[1024];
  if (config_parse(op, text, v, why, sizeof why) != 0)
    return pm__seterr(c, PM_EINVAL, "%s", why);
  return PM_OK;
}

unsigned pm__problem_esize(const pm__problem *pr) {
  return (unsigned)pm_dtype_size(pr ? (pm_dtype)pr->dtype : PM_F32);
}

int pm__widest_vec(const pm__problem *pr) {
  unsigned a = pr->caller_align && pr->caller_align < 16 ? pr->caller_align : 16;
  int v = (int)(a / pm__problem_esize(pr));
  return v < 1 ? 1 : v;
}

int pm__config_defines(const pm__op *op, const int *v, const pm__problem *pr, char out[][24]) {
  int n = 0;
  for (int i = 0; i < op->nparams; i++)
    if (op->params[i].define != NULL)
      snprintf(out[n++], 24, "%s=%d", op->params[i].define, v[i]);
  if (op->problem_defines != NULL && pr != NULL) n += op->problem_defines(op, pr, out + n);
  /* the element type, where it is not float: its pm_dtype value, which the templates compare
   * with the names every compile is given (PM_F16, ...: core/nvrtc.c; pm_common.cuh's elem_t) */
  if (pr != NULL && pr->dtype != PM_F32) snprintf(out[n++], 24, "PM_DTYPE=%d", pr->dtype);
  return n;
}

static int parse_dim(const char *s, char **end, unsigned long max, unsigned *out) {
  if (*s < '0' || *s > '9') return -1;
  errno = 0;
  unsigned long v = strtoul(s, end, 10);
  if (errno != 0 || v == 0 || v > max) return -1;
  *out = (unsigned)v;
  return 0;
}

/* A kernel of one's own's tuned scalar's value after a size, ":NAME=V" at end (V 1 to 2^31 - 1),
 * into pr->radius; nothing to read where the op has no tuned scalar (the caller has seen the size
 * end there). */
static int tuned_suffix(pm_ctx *c, const pm__op *op, const char *size, const char *end,
                        pm__problem *pr) {
  if (op->radius_name == NULL) return PM_OK;
  unsigned v;
  size_t len = strlen(op->radius_name);
  char *after = NULL;
  if (*end != ':' || strncmp(end + 1, op->radius_name, len) != 0 || end[1 + len] != '=' ||
      parse_dim(end + 2 + len, &after, 0x7fffffffUL, &v) != 0 || *after != '\0')
    return pm__seterr(c, PM_EINVAL, "size '%s': %s wants its tuned scalar's value after the size, "
                      ":%s=V (V from 1 to 2147483647)", size, op->name, op->radius_name);
  pr->radius = (int)v;
  return PM_OK;
}

int pm__problem_parse(pm_ctx *c, const pm__op *op, const char *size, pm__problem *pr) {
  char *end = NULL;
  if (size == NULL) return pm__seterr(c, PM_EINVAL, "no size given");
  if (op->dims == 1) { /* N, or n=N as pm__problem_text writes it */
    const char *digits = strncmp(size, "n=", 2) == 0 ? size + 2 : size;
    if (parse_dim(digits, &end, 0x7fffffffUL, &pr->n) != 0 ||
        (*end != '\0' && (op->radius_name == NULL || *end != ':')))
      return pm__seterr(c, PM_EINVAL, "size '%s': %s wants N (or n=N), from 1 to 2147483647%s",
                        size, op->name, op->radius_name ? ", then :NAME=V" : "");
    return tuned_suffix(c, op, size, end, pr);
  }
  if (op->dims == 3) { /* BATCHxROWSxCOLS */
    if (parse_dim(size, &end, 0x7fffffffUL, &pr->n) != 0 || *end != 'x' ||
        parse_dim(end + 1, &end, 0x7fffffffUL, &pr->rows) != 0 || *end != 'x' ||
        parse_dim(end + 1, &end, 0x7fffffffUL, &pr->cols) != 0 ||
        (*end != '\0' && (op->radius_name == NULL || *end != ':')))
      return pm__seterr(c, PM_EINVAL, "size '%s': %s wants BATCHxROWSxCOLS, such as 8x1000x768%s",
                        size, op->name, op->radius_name ? ", then :NAME=V" : "");
    if ((double)pr->n * pr->rows * pr->cols > 0x1p32)
      return pm__seterr(c, PM_EINVAL, "size '%s': more than 2^32 elements", size);
    return tuned_suffix(c, op, size, end, pr);
  }
  if (parse_dim(size, &end, 0x7fffffffUL, &pr->rows) != 0 || *end != 'x' ||
      parse_dim(end + 1, &end, 0x7fffffffUL, &pr->cols) != 0 ||
      (*end != '\0' && (op->radius_max == 0 || *end != ':')))
    return pm__seterr(c, PM_EINVAL, "size '%s': %s wants ROWSxCOLS, such as 4097x3001%s", size,
                      op->name,
                      op->radius_name   ? ", then :NAME=V"
                      : op->radius_max > 0 ? ", or ROWSxCOLS:rR for radius R"
                                           : "");
  if ((unsigned long long)pr->rows * pr->cols > (1ull << 32))
    return pm__seterr(c, PM_EINVAL, "size '%s': more than 2^32 elements", size);
  if (op->radius_name != NULL) return tuned_suffix(c, op, size, end, pr);
  unsigned r;
  if (*end == ':') { /* the size's own radius: 8192x8192:r2 */
    if (end[1] != 'r' || parse_dim(end + 2, &end, (unsigned long)op->radius_max, &r) != 0 ||
        *end != '\0' || (int)r < op->radius_min)
      return pm__seterr(c, PM_EINVAL, "size '%s': a radius is written :rR, R from %d to %d", size,
                        op->radius_min, op->radius_max);
    pr->radius = (int)r;
  }
  return PM_OK;
}

void pm__problem_text(const pm__op *op, const pm__problem *pr, char *out, size_t len) {
  /* the type, where it is not float: "n=1000 bf16" */
  const char *t = pr->dtype != PM_F32 ? pm_dtype_name((pm_dtype)pr->dtype) : NULL;
  int n;
  if (op->radius_name != NULL) /* a kernel of one's own's size, and its tuned scalar's value */
    n = op->dims == 1   ? snprintf(out, len, "n=%u %s=%d", pr->n, op->radius_name, pr->radius)
        : op->dims == 3 ? snprintf(out, len, "%ux%ux%u %s=%d", pr->n, pr->rows, pr->cols,
                                   op->radius_name, pr->radius)
                        : snprintf(out, len, "%ux%u %s=%d", pr->rows, pr->cols, op->radius_name,
                                   pr->radius);
  else if (op->dims == 1)
    n = snprintf(out, len, "n=%u", pr->n);
  else if (op->dims == 3)
    n = snprintf(out, len, "%ux%ux%u", pr->n, pr->rows, pr->cols);
  else if (op->radius_max > 0)
    n = snprintf(out, len, "%ux%u r=%d %s", pr->rows, pr->cols, pr->radius,
                 pm__variant_name(op, pr));
  else
    n = snprintf(out, len, "%ux%u%s%s", pr->rows, pr->cols,
                 pm__variant_name(op, pr)[0] ? " " : "", pm__variant_name(op, pr));
  if (t != NULL && n >= 0 && (size_t)n < len) snprintf(out + n, len - (size_t)n, " %s", t);
}

/* The variant of pr, or the default where pr's is out of range. */
static int variant_of(const pm__op *op, const pm__problem *pr) {
  int n = 0;
  while (n < 3 && op->variants[n] != NULL) n++;
  return pr->variant >= 0 && pr->variant < n ? pr->variant : 0;
}

const char *pm__variant_text(const pm__op *op, const pm__problem *pr) {
  return op->variants[variant_of(op, pr)];
}

const char *pm__variant_name(const pm__op *op, const pm__problem *pr) {
  return op->variant_names[variant_of(op, pr)];
}

int pm__variant_index(const pm__op *op, const char *text) {
  for (int i = 0; i < 3 && op->variants[i] != NULL; i++)
    if (strcmp(op->variants[i], text) == 0) return i;
  return 0;
}

int pm__variant_find(const pm__op *op, const char *key, const char *value) {
  size_t klen = strlen(key);
  int has_key = 0;
  for (int i = 0; i < 3 && op->variants[i] != NULL; i++) {
    const char *v = op->variants[i];
    if (strncmp(v, key, klen) != 0 || v[klen] != '=') continue;
    has_key = 1;
    if (strcmp(v + klen + 1, value) == 0) return i;
  }
  return has_key ? -2 : -1;
}

uint64_t pm__kernel_index(const pm__op *op, const int *v) {
  uint64_t idx = 0, scale = 1;
  for (int i = 0; i < op->nparams; i++) {
    const pm__param *p = &op->params[i];
    if (p->define == NULL) continue;
    int k = 0;
    while (k < p->nvalues - 1 && p->values[k] != v[i]) k++;
    idx += (uint64_t)k * scale;
    scale *= (uint64_t)p->nvalues;
  }
  return idx;
}

uint64_t pm__kernel_slots(const pm__op *op) {
  uint64_t n = 1;
  for (int i = 0; i < op->nparams; i++)
    if (op->params[i].define != NULL) n *= (uint64_t)op->params[i].nvalues;
  return n;
}

int pm__same_launch(const pm__op *op, const int *v, const pm__problem *pr, const pm__limits *lim) {
  int twin[PM__MAX_PARAMS];
  if (op->same_launch == NULL || pr == NULL || pm__is_seed(op, v) || pm__is_default(op, v, pr) ||
      !op->same_launch(op, v, pr, lim, twin))
    return 0;
  return op->check(op, twin, pr, lim) == NULL; /* the twin is measured in v's place */
}

int pm__is_seed(const pm__op *op, const int *v) {
  for (int i = 0; i < op->nparams; i++)
    if (v[i] != op->seed[i]) return 0;
  return 1;
}

/* Appends pr in each of op's radii (its variant as given) to out[*n..max). */
static void grid_add_variant(const pm__op *op, pm__problem pr, pm__problem *out, int *n, int max) {
  for (int r = op->radius_max > 0 ? op->radius_min : 0; r <= op->radius_max; r++) {
    if (*n == max) return;
    pr.radius = r;
    out[(*n)++] = pr;
  }
}

/* Appends pr in each of op's variants (and radii) to out[*n..max). */
static void grid_add(const pm__op *op, pm__problem pr, pm__problem *out, int *n, int max) {
  for (int var = 0; var < 3 && op->variants[var] != NULL; var++) {
    pr.variant = var;
    grid_add_variant(op, pr, out, n, max);
  }
}

unsigned pm__grid_odd(int k) { return (unsigned)ldexp(sqrt(2.0), k) | 1u; }

unsigned pm__grid_even(int k) { return ((unsigned)ldexp(sqrt(2.0), k) | 2u) & ~1u; }

/* The grid's kinds of matrix: 2^r x 2^c, its unround twin pm__grid_odd(r) x pm__grid_odd(c),
 * and (an op with an order) its even twin, the contiguous side pm__grid_even and the other odd. */
enum { GRID_ROUND, GRID_ODD, GRID_EVEN };

/* Appends the matrix of that kind made from 2^r x 2^c, in each variant of op (an even twin's
 * sides are the variant's), where its buffer fits PM__GRID_MAX_BYTES. */
static void grid_matrix(const pm__op *op, int r, int c, int kind, int t, pm__problem *out, int *n,
                        int max) {
  int by_cols = pm__variant_find(op, "order", "col");
  for (int var = 0; var < 3 && op->variants[var] != NULL; var++) {
    int even_rows = kind == GRID_EVEN && var == by_cols, even_cols = kind == GRID_EVEN && !even_rows;
    pm__problem pr = {.rows = kind == GRID_ROUND ? 1u << r
                              : even_rows        ? pm__grid_even(r)
                                                 : pm__grid_odd(r),
                      .cols = kind == GRID_ROUND ? 1u << c
                              : even_cols        ? pm__grid_even(c)
                                                 : pm__grid_odd(c),
                      .dtype = t, .variant = var};
    if ((double)pr.rows * pr.cols * pm_dtype_size((pm_dtype)t) <= PM__GRID_MAX_BYTES)
      grid_add_variant(op, pr, out, n, max);
  }
}

int pm__op_grid(const pm__op *op, unsigned dtypes, pm__problem *out, int max) {
  static const int thin[] = {1, 2, 3}; /* a side 2^a times the square's, the other 2^a times less */
  int n = 0;
  for (int t = 0; t < PM__NDTYPES; t++) {
    if (!(dtypes & op->dtypes & 1u << t)) continue;
    double esize = pm_dtype_size((pm_dtype)t);
    if (op->dims == 1) {
      for (int k = 0; k <= PM__GRID_LOG2_N; k++) {
        if (ldexp(esize, k) > PM__GRID_MAX_BYTES) break;
        grid_add(op, (pm__problem){.n = 1u << k, .dtype = t}, out, &n, max);
      }
      for (int k = 1; k < PM__GRID_LOG2_N; k++) { /* the odd ones: 3, 5, 11, 23, 45, 91, ... */
        unsigned odd = pm__grid_odd(k);
        if (esize * odd > PM__GRID_MAX_BYTES) break;
        grid_add(op, (pm__problem){.n = odd, .dtype = t}, out, &n, max);
      }
      continue;
    }
    /* the round sizes, then their unround twins, then (an op with an order) their even twins */
    int kinds = pm__variant_find(op, "order", "col") >= 0 ? GRID_EVEN + 1 : GRID_ODD + 1;
    for (int kind = GRID_ROUND; kind < kinds; kind++)
      for (int k = PM__GRID_LOG2_SIDE_MIN; k <= PM__GRID_LOG2_SIDE_MAX; k++) {
        if (ldexp(esize, 2 * k) > PM__GRID_MAX_BYTES) break;
        grid_matrix(op, k, k, kind, t, out, &n, max);
        for (int i = 0; k < PM__GRID_LOG2_SIDE_MAX && i < (int)(sizeof thin / sizeof *thin); i++) {
          if (k - thin[i] < PM__GRID_LOG2_SIDE_LEAST) continue;
          grid_matrix(op, k - thin[i], k + thin[i], kind, t, out, &n, max);
          grid_matrix(op, k + thin[i], k - thin[i], kind, t, out, &n, max);
        }
      }
  }
  return n;
}

int pm__is_default(const pm__op *op, const int *v, const pm__problem *pr) {
  int d[PM__MAX_PARAMS] = {0};
  if (pr == NULL) return 0;
  op->fallback(op, pr, d);
  for (int i = 0; i < op->nparams; i++)
    if (v[i] != d[i]) return 0;
  return 1;
}

size_t pm__pitch(size_t bytes, size_t align) {
  return align ? (bytes + align - 1) / align * align : bytes;
}
