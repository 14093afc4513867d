/* cache.c: the in-process cache of chosen kernels: a hash table of entries, one per size met, that
 * the hot path reads without a lock and that grows without bound (entries are published whole and
 * never freed until pm_close; a newer decision replaces an entry in the table, not in memory), the
 * choices entries share, and the loaded cubins choices share. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

#define FIRST_SLOTS 1024 /* the first table's slots; each table after has twice its predecessor's */

struct pm__table {
  size_t mask;              /* slots - 1, slots a power of two */
  struct pm__table *older;  /* the table this one replaced, freed at pm_close */
  _Atomic(pm__entry *) slot[];
};

struct pm__loaded {
  char defines[PM__MAX_DEFINES * 26]; /* canonical defines text, the cubin key's */
  const pm__op *op;
  pm__module k;
  struct pm__loaded *next;
};

void pm__cache_key_of(const pm__op *op, const pm__problem *pr, pm__cache_key *k) {
  memset(k, 0, sizeof *k); /* padding too: keys are compared bytewise */
  k->rows = pr->rows, k->cols = pr->cols, k->n = pr->n;
  k->op = (uint8_t)(op->api | pr->dtype << 4); /* both below 16 */
  k->variant = (uint8_t)pr->variant;
  k->align = (uint8_t)pr->caller_align;
  k->radius = (uint32_t)pr->radius;
}

/* FNV-1a over n bytes. */
static uint32_t fnv(const void *bytes, size_t n) {
  const unsigned char *p = bytes;
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 16777619u;
  return h;
}

/* A key's hash: its three 64-bit words mixed by multiplication (a few cycles where FNV-1a takes
 * one step a byte), the high bits kept. */
static uint32_t key_hash(const pm__cache_key *k) {
  uint64_t a, b, c;
  _Static_assert(sizeof *k == 24, "a cache key is three 64-bit words");
  memcpy(&a, k, 8);
  memcpy(&b, (const char *)k + 8, 8);
  memcpy(&c, (const char *)k + 16, 8);
  return (uint32_t)(((a ^ (b * 0x9e3779b97f4a7c15ull) ^ (c * 0x94d049bb133111ebull)) *
                     0xbf58476d1ce4e5b9ull) >> 32);
}

static int same_key(const pm__cache_key *a, const pm__cache_key *b) {
  return memcmp(a, b, sizeof *a) == 0;
}

/* Linear probing in a table at most half full: a lookup ends at its key or at an empty slot,
 * after about 1.5 probes on average whatever the table's size. */
pm__entry *pm__cache_lookup(pm__cache *t, const pm__cache_key *k) {
  struct pm__table *tab = atomic_load_explicit(&t->table, memory_order_acquire);
  if (tab == NULL) return NULL;
  for (size_t i = key_hash(k);; i++) {
    pm__entry *e = atomic_load_explicit(&tab->slot[i & tab->mask], memory_order_acquire);
    if (e == NULL || same_key(&e->k, k)) return e; /* slots never empty again */
  }
}

/* Stores e in tab under its key: over the entry of the same key, else in the first empty slot.
 * Returns 1 where the key is new to tab. */
static int place(struct pm__table *tab, pm__entry *e) {
  for (size_t i = key_hash(&e->k);; i++) {
    _Atomic(pm__entry *) *s = &tab->slot[i & tab->mask];
    pm__entry *old = atomic_load_explicit(s, memory_order_relaxed);
    if (old == NULL || same_key(&old->k, &e->k)) {
      atomic_store_explicit(s, e, memory_order_release); /* e's fields before the pointer */
      return old == NULL;
    }
  }
}

/* A table twice the size of the current one (FIRST_SLOTS at first) holding its entries, published
 * in its place; the old one is kept. PM_ENOMEM where there is no memory for it. */
static int grow(pm__cache *t) {
  struct pm__table *old = atomic_load_explicit(&t->table, memory_order_relaxed);
  size_t slots = old != NULL ? 2 * (old->mask + 1) : FIRST_SLOTS;
  struct pm__table *tab = pm__calloc(1, sizeof *tab + slots * sizeof tab->slot[0]);
  if (tab == NULL) return PM_ENOMEM;
  tab->mask = slots - 1;
  tab->older = old;
  for (size_t i = 0; old != NULL && i <= old->mask; i++) {
    pm__entry *e = atomic_load_explicit(&old->slot[i], memory_order_relaxed);
    if (e != NULL) place(tab, e);
  }
  atomic_store_explicit(&t->table, tab, memory_order_release); /* filled before it is seen */
  return PM_OK;
}

int pm__cache_put(pm__cache *t, pm__entry *e) {
  e->next = t->entries; /* owned from here on */
  t->entries = e;
  struct pm__table *tab = atomic_load_explicit(&t->table, memory_order_relaxed);
  if ((tab == NULL || 2 * (t->used + 1) > tab->mask + 1) && pm__cache_lookup(t, &e->k) == NULL) {
    if (grow(t) != PM_OK) return PM_ENOMEM;
    tab = atomic_load_explicit(&t->table, memory_order_relaxed);
  }
  t->used += (size_t)place(tab, e);
  return PM_OK;
}

/* ---- Choices -------------------------------------------------------------------------------- */

static size_t choice_bucket(const pm__op *op, const int *v, const pm__problem *pr) {
  int key[PM__MAX_PARAMS + 4];
  memcpy(key, v, PM__MAX_PARAMS * sizeof *v);
  key[PM__MAX_PARAMS] = op->api, key[PM__MAX_PARAMS + 1] = pr->variant;
  key[PM__MAX_PARAMS + 2] = pr->radius, key[PM__MAX_PARAMS + 3] = pr->dtype;
  return fnv(key, sizeof key) % (sizeof ((pm__cache *)0)->choices / sizeof(pm__choice *));
}

const pm__choice *pm__cache_choice_find(const pm__cache *t, const pm__op *op, const int *v,
                                        const pm__problem *pr) {
  for (const pm__choice *h = t->choices[choice_bucket(op, v, pr)]; h != NULL; h = h->next)
    if (h->op == op && h->variant == pr->variant && h->radius == pr->radius &&
        h->dtype == pr->dtype &&
        memcmp(h->v, v, sizeof h->v) == 0)
      return h;
  return NULL;
}

const pm__choice *pm__cache_choice_add(pm__cache *t, const pm__op *op, const int *v,
                                       const pm__problem *pr, const pm__module *kernel) {
  pm__choice *h = pm__calloc(1, sizeof *h);
  if (h == NULL) return NULL;
  size_t b = choice_bucket(op, v, pr);
  h->op = op;
  memcpy(h->v, v, sizeof h->v);
  h->variant = pr->variant, h->radius = pr->radius, h->dtype = pr->dtype;
  h->kernel = kernel;
  h->next = t->choices[b];
  t->choices[b] = h;
  return h;
}

/* ---- Loaded cubins -------------------------------------------------------------------------- */

const pm__module *pm__cache_kernel_find(const pm__cache *t, const pm__op *op, const char *defines) {
  for (const struct pm__loaded *l = t->kernels; l != NULL; l = l->next)
    if (l->op == op && strcmp(l->defines, defines) == 0) return &l->k;
  return NULL;
}

int pm__cache_kernel_load(pm_ctx *c, pm__cache *t, const pm__op *op, const char *defines,
                          const pm__cubin *cubin, const pm__module **out) {
  struct pm__loaded *l = pm__calloc(1, sizeof *l);
  if (l == NULL) return pm__seterr(c, PM_ENOMEM, "out of memory");
  int rc = pm__module_load(c, cubin, op->entries, op->nentries, &l->k);
  if (rc != PM_OK) {
    free(l);
    return rc;
  }
  snprintf(l->defines, sizeof l->defines, "%s", defines);
  l->op = op;
  l->next = t->kernels;
  t->kernels = l;
  *out = &l->k;
  return PM_OK;
}

void pm__cache_free(pm__cache *t) {
  for (pm__entry *e = t->entries, *next; e != NULL; e = next) next = e->next, free(e);
  for (struct pm__table *tab = atomic_load(&t->table), *older; tab != NULL; tab = older)
    older = tab->older, free(tab);
  for (size_t b = 0; b < sizeof t->choices / sizeof t->choices[0]; b++)
    for (pm__choice *h = t->choices[b], *next; h != NULL; h = next) next = h->next, free(h);
  for (struct pm__loaded *l = t->kernels, *next; l != NULL; l = next) {
    next = l->next;
    pm__module_unload(&l->k);
    free(l);
  }
  memset(t, 0, sizeof *t);
}
