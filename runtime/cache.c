/* cache.c: the in-process cache of chosen kernels: a fixed hash table of entries that the hot
 * path reads without a lock (entries are published once and never changed or removed until
 * pm_close), and the list of loaded cubins that entries share. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

#define PROBES 8 /* slots tried from a key's hash before a lookup gives up */

struct pm__loaded {
  char defines[PM__MAX_DEFINES * 26]; /* canonical defines text, the cubin key's */
  const pm__op *op;
  pm__kernel k;
  struct pm__loaded *next;
};

void pm__cache_key_of(const pm__op *op, const pm__problem *pr, pm__cache_key *k) {
  memset(k, 0, sizeof *k); /* padding too: keys are compared bytewise */
  k->rows = pr->rows, k->cols = pr->cols, k->n = pr->n;
  k->op = (uint8_t)op->api;
  k->variant = (uint8_t)pr->variant;
  k->align = (uint8_t)pr->caller_align;
  k->radius = (uint8_t)pr->radius;
}

/* FNV-1a over the key's bytes. */
static uint32_t hash(const pm__cache_key *k) {
  const unsigned char *p = (const unsigned char *)k;
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < sizeof *k; i++) h = (h ^ p[i]) * 16777619u;
  return h;
}

static _Atomic(pm__entry *) *slot(pm__cache *t, uint32_t h, int probe) {
  return &t->slots[(h + (uint32_t)probe) & (PM__CACHE_SLOTS - 1)];
}

pm__entry *pm__cache_lookup(pm__cache *t, const pm__cache_key *k) {
  uint32_t h = hash(k);
  for (int i = 0; i < PROBES; i++) {
    pm__entry *e = atomic_load_explicit(slot(t, h, i), memory_order_acquire);
    if (e == NULL) return NULL; /* slots fill in probe order and never empty again */
    if (memcmp(&e->k, k, sizeof *k) == 0) return e;
  }
  return NULL;
}

int pm__cache_insert(pm__cache *t, pm__entry *e) {
  uint32_t h = hash(&e->k);
  for (int i = 0; i < PROBES; i++) {
    _Atomic(pm__entry *) *s = slot(t, h, i);
    if (atomic_load_explicit(s, memory_order_relaxed) == NULL) {
      atomic_store_explicit(s, e, memory_order_release); /* e's fields before the pointer */
      return 1;
    }
  }
  return 0;
}

const pm__kernel *pm__cache_kernel_find(const pm__cache *t, const pm__op *op, const char *defines) {
  for (const struct pm__loaded *l = t->kernels; l != NULL; l = l->next)
    if (l->op == op && strcmp(l->defines, defines) == 0) return &l->k;
  return NULL;
}

int pm__cache_kernel_load(pm_ctx *c, pm__cache *t, const pm__op *op, const char *defines,
                          const pm__cubin *cubin, const pm__kernel **out) {
  struct pm__loaded *l = calloc(1, sizeof *l);
  if (l == NULL) return pm__seterr(c, PM_ENOMEM, "out of memory");
  int rc = pm__kernel_load(c, cubin, op->entries, op->nentries, &l->k);
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
  for (int i = 0; i < PM__CACHE_SLOTS; i++) free(atomic_load(&t->slots[i]));
  for (struct pm__loaded *l = t->kernels, *next; l != NULL; l = next) {
    next = l->next;
    pm__kernel_unload(&l->k);
    free(l);
  }
  t->kernels = NULL;
}
