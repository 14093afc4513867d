/* serve.c: what ties serving together: a call's hot path (the cache, read without a lock) and
 * its slow path (decide with the chain, ask for a background tuning where the rule says so, load
 * the kernel from the database's cubin or NVRTC, publish the choice), serving's state on a
 * context, the sizes recorded for `pmtune tune --seen`, and the decision as `pmtune explain` asks
 * for it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_file.h"
#include "runtime.h"

const pm__db_known *pm__known_get(pm_ctx *c, pm__known_set *set, pm__db *db, const pm__op *op,
                                  const char *said) {
  int i = pm__op_index(op);
  if (db == NULL || i < 0) return NULL;
  if (!set->loaded[i]) {
    set->loaded[i] = pm__op_known_load(db, &c->dev, op, &set->op[i]) == PM_OK ? 1 : 2;
    if (set->loaded[i] == 2) pm__notice(c, "%s: %s", pm_errmsg(c), said);
  }
  return set->loaded[i] == 1 ? &set->op[i] : NULL;
}

void pm__known_forget(pm__known_set *set) {
  for (int i = 0; i < PM__MAX_OPS; i++) {
    pm__db_known_free(&set->op[i]);
    set->loaded[i] = 0;
  }
}

/* ---- The databases (under the lock) --------------------------------------------------------- */

/* The read-only handle, opened on first need; NULL (said once with pm__notice) where there is no
 * usable database: then the defaults serve. */
static pm__db *read_db(pm_ctx *c) {
  pm__serve *s = c->serve;
  if (!s->db_tried) {
    s->db_tried = 1;
    if (pm__db_open(c, c->db_path, PM__DB_READONLY, pm__ops_db(), &s->db) != PM_OK)
      pm__notice(c, "%s: serving built-in defaults", pm_errmsg(c));
  }
  return s->db;
}

/* What the database knows of op for this GPU, read on op's first decision (after a tuning on
 * first use, again); NULL where there is no database, or it could not be read (said once). */
static const pm__db_known *known_of(pm_ctx *c, const pm__op *op) {
  return pm__known_get(c, &c->serve->known, read_db(c), op, "serving built-in defaults");
}

/* The same for a kernel of one's own. */
static const pm__db_known *kernel_known(pm_kernel *k) {
  pm__db *db = read_db(k->c);
  if (db == NULL) return NULL;
  if (!k->loaded) {
    k->loaded = pm__op_known_load(db, &k->c->dev, k->op, &k->known) == PM_OK ? 1 : 2;
    if (k->loaded == 2) pm__notice(k->c, "%s: serving %s's seed", pm_errmsg(k->c), k->op->name);
  }
  return k->loaded == 1 ? &k->known : NULL;
}

/* The read-write handle that cubins compiled here and the sizes served are stored with, opened on
 * first need, with this GPU recorded in it (the database lists every GPU that used it). Where
 * `wait` is 0 no statement waits for another process's write lock (a call must not stall behind
 * a tuning run): *locked then says the lock was held, and the caller tries again later. NULL
 * where the database cannot be written (said once with pm__notice) or, *locked set, is busy. */
static pm__db *write_db(pm_ctx *c, int wait, int *locked) {
  pm__serve *s = c->serve;
  *locked = 0;
  if (!s->rw_tried) {
    s->rw_tried = 1;
    if (pm__db_open(c, c->db_path, 0, pm__ops_db(), &s->rw) != PM_OK) goto cannot;
  }
  if (s->rw == NULL) return NULL;
  pm__db_set_wait(s->rw, wait);
  if (s->rw_gpu == 0) {
    int driver, runtime;
    pm__cuda_versions(&driver, &runtime);
    if (pm__db_gpu_put(s->rw, &c->dev, driver, runtime, &s->rw_gpu) != PM_OK) {
      s->rw_gpu = 0;
      if ((*locked = pm__db_locked_out(s->rw))) return NULL;
      goto cannot;
    }
  }
  return s->rw;
cannot:
  pm__notice(c, "%s: compiled kernels are not stored", pm_errmsg(c));
  pm__db_close(s->rw);
  s->rw = NULL;
  return NULL;
}

/* A cubin compiled here, waiting to be stored for the next process. */
struct pm__pending {
  struct pm__pending *next;
  const char *sha256; /* the template's (static) */
  char defines[PM__MAX_DEFINES * 26];
  int driver;
  pm__cubin bin;
};

/* Stores the cubins compiled here that are not stored yet, oldest first; where `wait` is 0 and
 * another process holds the write lock, they are kept for the next try (the next compile, or
 * pm_close, which waits). Where the database cannot be written they are dropped. */
static void store_pending(pm_ctx *c, int wait) {
  pm__serve *s = c->serve;
  while (s->pending != NULL) {
    struct pm__pending *p = s->pending, **last = &s->pending;
    while (p->next != NULL) last = &p->next, p = p->next;
    int locked;
    pm__db *rw = write_db(c, wait, &locked);
    if (locked) return;
    if (rw != NULL) {
      pm__db_cubin_key key = {p->sha256, p->defines, c->dev.arch, pm__nvrtc_version(), p->driver};
      if (pm__db_cubin_put(rw, &key, &p->bin) != PM_OK) {
        if (pm__db_locked_out(rw)) return;
        pm__notice(c, "%s: the compiled kernel is not stored", pm_errmsg(c));
      }
    }
    *last = NULL;
    pm__cubin_free(&p->bin);
    free(p);
  }
}

/* Takes bin (compiled here for key) to be stored, now if the database is free. */
static void store_cubin(pm_ctx *c, const pm__db_cubin_key *key, pm__cubin *bin) {
  pm__serve *s = c->serve;
  struct pm__pending *p = pm__calloc(1, sizeof *p);
  if (p == NULL) {
    pm__notice(c, "out of memory: the compiled kernel is not stored");
    return;
  }
  p->sha256 = key->template_sha256;
  snprintf(p->defines, sizeof p->defines, "%s", key->defines);
  p->driver = key->driver_version;
  p->bin = *bin;
  *bin = (pm__cubin){0};
  p->next = s->pending;
  s->pending = p;
  store_pending(c, 0);
}

void pm__serve_refresh(pm_ctx *c) {
  pm__serve *s = c->serve;
  pthread_mutex_lock(&s->lock);
  pm__known_forget(&s->known);
  for (pm_kernel *k = s->kernels; k != NULL; k = k->next) {
    pm__db_known_free(&k->known);
    k->loaded = 0;
  }
  pm__db_close(s->db); /* a file made since is opened then */
  s->db = NULL;
  s->db_tried = 0;
  atomic_fetch_add_explicit(&s->epoch, 1, memory_order_release);
  pthread_mutex_unlock(&s->lock);
}

int pm__serve_decide(pm_ctx *c, const pm__op *op, const pm__problem *pr, pm__decision *out) {
  pthread_mutex_lock(&c->serve->lock);
  pm__decide(c, known_of(c, op), pm__shipped_known(c, op), op, pr, out);
  pthread_mutex_unlock(&c->serve->lock);
  return PM_OK;
}

int pm__serve_decide_kernel(pm_kernel *k, const pm__problem *pr, pm__decision *out) {
  pm_ctx *c = k->c;
  pthread_mutex_lock(&c->serve->lock);
  pm__decide(c, kernel_known(k), pm__shipped_kernel_known(k), k->op, pr, out);
  pthread_mutex_unlock(&c->serve->lock);
  return PM_OK;
}

/* ---- The sizes served without an exact winner (pm_options.record) -------------------------- */

/* The entries of user (a pm_kernel's id; 0: the built-in ops) called and not decided exact, as
 * problems and their calls (*ps, *calls, *n: freed by the caller); PM_ENOMEM where they cannot be
 * held. */
static int counted(pm__serve *s, uint32_t user, pm__db_problem **ps, int64_t **calls, size_t *n) {
  size_t cap = 0;
  *ps = NULL, *calls = NULL, *n = 0;
  for (pm__entry *e = s->cache.entries; e != NULL; e = e->next) {
    uint64_t k = atomic_load_explicit(&e->calls, memory_order_relaxed);
    if (k == 0 || e->source == PM__FROM_EXACT || e->source == PM__FROM_TUNED || e->k.user != user)
      continue;
    if (*n == cap) {
      cap = cap ? 2 * cap : 256;
      pm__db_problem *p2 = pm__realloc(*ps, cap * sizeof **ps);
      int64_t *c2 = p2 != NULL ? pm__realloc(*calls, cap * sizeof **calls) : NULL;
      if (p2 != NULL) *ps = p2;
      if (c2 == NULL) return PM_ENOMEM;
      *calls = c2;
    }
    pm__problem pr = {.rows = e->k.rows, .cols = e->k.cols, .n = e->k.n, .variant = e->k.variant,
                      .radius = (int)e->k.radius, .dtype = e->choice->dtype};
    pm__op_db_problem(e->choice->op, &pr, &(*ps)[*n]);
    (*calls)[(*n)++] = (int64_t)k;
  }
  return PM_OK;
}

/* Writes the calls counted in every entry not decided exact to the database (pm_close), in one
 * transaction for the built-in ops and one for each kernel of one's own (on a handle that knows
 * it); a database that cannot be written is said with pm__notice, and nothing else is lost.
 * Entries replaced by a newer decision of the same size are summed by the database. */
static void write_seen(pm_ctx *c) {
  pm__serve *s = c->serve;
  pm__db_problem *ps = NULL;
  int64_t *calls = NULL;
  size_t n = 0;
  int locked;
  if (counted(s, 0, &ps, &calls, &n) != PM_OK) {
    pm__notice(c, "out of memory: the sizes served are not recorded");
  } else if (n > 0) {
    pm__db *db = write_db(c, 1, &locked);
    if (db != NULL && pm__db_seen_add(db, s->rw_gpu, ps, calls, n) != PM_OK)
      pm__notice(c, "%s: the sizes served are not recorded", pm_errmsg(c));
  }
  for (pm_kernel *k = s->kernels; k != NULL; k = k->next) {
    free(ps);
    free(calls);
    if (counted(s, k->id, &ps, &calls, &n) != PM_OK) {
      pm__notice(c, "out of memory: the sizes %s served are not recorded", k->op->name);
      break;
    }
    if (n == 0) continue;
    pm__ops_db_plus plus;
    pm__db *db = NULL;
    int64_t gpu = 0;
    int driver, runtime;
    pm__cuda_versions(&driver, &runtime);
    if (pm__db_open(c, c->db_path, 0, pm__ops_db_with(k->op, &plus), &db) != PM_OK ||
        pm__db_gpu_put(db, &c->dev, driver, runtime, &gpu) != PM_OK ||
        pm__db_seen_add(db, gpu, ps, calls, n) != PM_OK)
      pm__notice(c, "%s: the sizes %s served are not recorded", pm_errmsg(c), k->op->name);
    pm__db_close(db);
  }
  free(ps);
  free(calls);
}

/* ---- The slow path (under the lock) --------------------------------------------------------- */

/* The loaded kernel of point v on pr: already loaded, else its cubin from the database, else
 * compiled now (and stored for the next process, without waiting for the write lock). Loads with
 * the thread's capture mode relaxed (kernel_for_relaxed): loading a module while a graph is
 * captured would invalidate it. */
static int kernel_for(pm_ctx *c, const pm__op *op, const int *v, const pm__problem *pr,
                      const pm__module **out) {
  pm__serve *s = c->serve;
  char defs[PM__MAX_DEFINES][24], dtext[PM__MAX_DEFINES * 26];
  const char *dp[PM__MAX_DEFINES];
  int nd = pm__config_defines(op, v, pr, defs), rc, driver;
  const pm__template *t = pm__op_template(op);
  pm__db_cubin_key key;
  pm__cuda_versions(&driver, NULL);
  rc = pm__cubin_key(c, t->sha256, (const char(*)[24])defs, nd, driver, dtext, sizeof dtext, &key);
  if (rc != PM_OK) return rc;
  if ((*out = pm__cache_kernel_find(&s->cache, op, dtext)) != NULL) return PM_OK;
  for (int i = 0; i < nd; i++) dp[i] = defs[i];
  pm__cubin bin = {0};
  pm__db *db = read_db(c);
  int compiled = 0;
  if (db == NULL || pm__db_cubin_get(db, &key, &bin) != PM_OK) {
    if ((rc = pm__compile(c, t->file, t->source, c->dev.arch, dp, (size_t)nd, &bin)) != PM_OK)
      return rc;
    compiled = 1;
  }
  rc = pm__cache_kernel_load(c, &s->cache, op, dtext, &bin, out);
  if (rc == PM_OK && compiled) store_cubin(c, &key, &bin); /* takes bin */
  pm__cubin_free(&bin);
  return rc;
}

static int kernel_for_relaxed(pm_ctx *c, const pm__op *op, const int *v, const pm__problem *pr,
                              const pm__module **out) {
  int mode, rc;
  pm__capture_relax(&mode);
  rc = kernel_for(c, op, v, pr, out);
  pm__capture_restore(mode);
  return rc;
}

/* The choice of point v for pr: made already (no defines, hash or database: the first call of a
 * size whose point some other size has is cheap), else made now with its kernel. */
static int choice_for(pm_ctx *c, const pm__op *op, const int *v, const pm__problem *pr,
                      const pm__choice **out) {
  pm__cache *t = &c->serve->cache;
  const pm__module *k;
  int rc;
  if ((*out = pm__cache_choice_find(t, op, v, pr)) != NULL) return PM_OK;
  if ((rc = kernel_for_relaxed(c, op, v, pr, &k)) != PM_OK) return rc;
  if ((*out = pm__cache_choice_add(t, op, v, pr, k)) == NULL)
    return pm__seterr(c, PM_ENOMEM, "out of memory");
  return PM_OK;
}

/* Says (once per context) that nothing tuned serves op on pr. */
static void say_default(pm_ctx *c, const pm__op *op, const pm__problem *pr, const pm__decision *d) {
  char ptext[96];
  if (c->serve->said_default) return;
  c->serve->said_default = 1;
  pm__problem_text(op, pr, ptext, sizeof ptext);
  pm__notice(c, "%s %s: nothing tuned for it on %s; the default %s serves it", op->name, ptext,
             c->dev.name, d->config);
}

/* Decides, loads and caches the choice for k; *out is the entry. Where the rule says so (and
 * autotune is on), the size is handed to the background tuner and served meanwhile by this
 * decision, which a later epoch replaces. Where the entry cannot be kept (no memory), `spare` is
 * filled for this call alone and the next call decides again. */
static int slow_path(pm_ctx *c, const pm__op *op, pm_kernel *user, const pm__problem *pr,
                     const pm__cache_key *k, pm__entry *spare, pm__entry **out) {
  pm__serve *s = c->serve;
  pm__decision d;
  pm__entry *e;
  int rc = PM_OK;
  pthread_mutex_lock(&s->lock);
  uint32_t epoch = atomic_load_explicit(&s->epoch, memory_order_relaxed);
  if ((*out = pm__cache_lookup(&s->cache, k)) != NULL && (*out)->epoch == epoch)
    goto done; /* another thread was first */
  /* a kernel of one's own: the user's database and the results folder's documents that name
   * it, else its seed */
  pm__source from = user != NULL ? pm__decide_quiet(c, kernel_known(user),
                                                    pm__shipped_kernel_known(user), op, pr, &d)
                                 : pm__decide_quiet(c, known_of(c, op), pm__shipped_known(c, op),
                                                    op, pr, &d);
  if (from != PM__FROM_EXACT && s->autotune && pm__autotune_wanted(&d))
    pm__autotune_request(c, op, pr);
  if (d.source == PM__FROM_DEFAULT) say_default(c, op, pr, &d);
  memset(spare, 0, sizeof *spare);
  spare->k = *k;
  spare->epoch = epoch;
  spare->source = (uint8_t)d.source;
  spare->work = op->work_bytes ? op->work_bytes(op, d.v, pr, c->dev.sm_count) : 0;
  if ((rc = choice_for(c, op, d.v, pr, &spare->choice)) != PM_OK) goto done;
  *out = spare;
  if ((e = pm__malloc(sizeof *e)) != NULL) {
    memcpy(e, spare, sizeof *e);
    if (pm__cache_put(&s->cache, e) == PM_OK) *out = e;
  }
done:
  pthread_mutex_unlock(&s->lock);
  return rc;
}

/* ---- The hot path --------------------------------------------------------------------------- */

/* A call of op (of user, a kernel of one's own, where not NULL) on pr with d's buffers. */
static int serve(pm_ctx *c, const pm__op *op, pm_kernel *user, const pm__problem *pr, pm__data *d,
                 struct CUstream_st *stream) {
  pm__serve *s = c->serve;
  pm__cache_key k;
  pm__cache_key_of(op, pr, &k);
  if (user != NULL) k.user = user->id;
  pm__entry spare, *e = pm__cache_lookup(&s->cache, &k);
  int rc = PM_OK;
  d->pr = *pr;
  if (e != NULL && e->epoch != atomic_load_explicit(&s->epoch, memory_order_relaxed)) e = NULL;
  d->work = e != NULL && e->work > 0 ? pm__scratch_find(&s->scratch, stream, e->work) : NULL;
  if (e == NULL || (e->work > 0 && d->work == NULL)) { /* the slow path, capture-safe */
    if (e == NULL) rc = slow_path(c, op, user, pr, &k, &spare, &e); /* relaxes where it loads */
    if (rc == PM_OK && e->work > 0 &&
        (d->work = pm__scratch_get(c, &s->scratch, stream, e->work)) == NULL) /* relaxes too */
      rc = pm__seterr(c, PM_ECUDA, "%s: no scratch for the reduction: %s", op->name,
                      pm_errmsg(c));
    if (rc != PM_OK) return rc;
  }
  if (s->record && e->source != PM__FROM_EXACT)
    atomic_fetch_add_explicit(&e->calls, 1, memory_order_relaxed);
  return op->launch(op, c, e->choice->kernel, e->choice->v, d, stream);
}

int pm__serve_call(pm_ctx *c, const pm__op *op, const pm__problem *pr, pm__data *d,
                   struct CUstream_st *stream) {
  return serve(c, op, NULL, pr, d, stream);
}

int pm__serve_kernel(pm_kernel *k, const pm__problem *pr, pm__data *d, struct CUstream_st *stream) {
  return serve(k->c, k->op, k, pr, d, stream);
}

int pm__serve_kernel_open(pm_ctx *c, const char *path, pm_kernel **out) {
  pm__serve *s = c->serve;
  pm__kernel_desc *kf = NULL;
  pm_kernel *k;
  *out = NULL;
  int rc = pm__kernel_desc_load(c, path, &kf); /* outside the lock: it reads files */
  if (rc != PM_OK) return rc;
  const pm__op *op = pm__kernel_desc_op(kf);
  pthread_mutex_lock(&s->lock);
  for (k = s->kernels; k != NULL; k = k->next)
    if (strcmp(pm__op_template(k->op)->sha256, pm__op_template(op)->sha256) == 0) break;
  if (k == NULL && (k = pm__calloc(1, sizeof *k)) == NULL) {
    rc = pm__seterr(c, PM_ENOMEM, "pm_kernel_open: out of memory");
  } else if (k->op == NULL) { /* new */
    *k = (pm_kernel){.c = c, .kf = kf, .op = op, .id = ++s->nkernels, .next = s->kernels};
    s->kernels = k;
    kf = NULL;
  }
  if (rc == PM_OK) *out = k;
  pthread_mutex_unlock(&s->lock);
  pm__kernel_desc_free(kf); /* the one already open serves */
  return rc;
}

/* ---- Serving's life on a context ------------------------------------------------------------ */

int pm__serve_init(pm_ctx *c, const pm_options *o) {
  pm__serve *s = pm__calloc(1, sizeof *s);
  if (s == NULL) return pm__seterr(c, PM_ENOMEM, "out of memory");
  pthread_mutex_init(&s->lock, NULL);
  pm__scratch_init(&s->scratch);
  const char *env = getenv("PMTUNE_AUTOTUNE"), *rec = getenv("PMTUNE_RECORD");
  s->autotune = o->autotune || (env != NULL && strcmp(env, "1") == 0);
  s->record = o->record || (rec != NULL && strcmp(rec, "1") == 0);
  s->autotune_budget = o->autotune_budget > 0 ? o->autotune_budget : 40;
  c->serve = s;
  return PM_OK;
}

void pm__serve_free(pm_ctx *c) {
  pm__serve *s = c->serve;
  if (s == NULL) return;
  pm__autotune_stop(c);
  store_pending(c, 1);
  if (s->record) write_seen(c);
  pm__cache_free(&s->cache);
  pm__scratch_free(&s->scratch);
  pm__known_forget(&s->known);
  while (s->kernels != NULL) { /* after store_pending: a cubin waiting held its template's hash */
    pm_kernel *k = s->kernels;
    s->kernels = k->next;
    pm__db_known_free(&k->known);
    pm__shipped_kernel_free(k);
    pm__kernel_desc_free(k->kf);
    free(k);
  }
  pm__shipped_free(s);
  pm__db_close(s->db);
  pm__db_close(s->rw);
  pthread_mutex_destroy(&s->lock);
  free(s);
  c->serve = NULL;
}

