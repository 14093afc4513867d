/* faulttest.h: the fault injector the fault tests share (test_fault, test_gpu_fault): a hook for
 * core/fault.h that fails the Nth call of one kind (or of one call site), counting every call of
 * that kind and the distinct sites that asked. Thread-safe: compiles run on a pool of threads. */
#ifndef PM_FAULTTEST_H
#define PM_FAULTTEST_H

#include <pthread.h>
#include <string.h>

#include "core.h"

#define FAULTTEST_SQLITE_SITE "sqlite3 (its own allocator)" /* SQLite's allocations, routed */
#define FAULTTEST_MAX_SITES 512

typedef struct injector {
  pm__fault_kind kind;
  int fail_at;           /* 0: never */
  const char *fail_site; /* NULL: the fail_at-th call of the kind; else of this site */
  int own_only;          /* SQLite's own allocations are neither counted nor failed */
  int calls;             /* of that kind so far */
  int sqlite;            /* of them, SQLite's own allocations */
  int at_site;           /* calls of fail_site so far */
  int fired;
  const char *site;      /* of the call failed */
  const char *sites[FAULTTEST_MAX_SITES];
  int nsites;
} injector;

static const char *const faulttest_kind_names[PM__FAULT_KINDS] = {"cuda", "nvrtc", "sqlite",
                                                                   "malloc"};
static pthread_mutex_t faulttest_lock = PTHREAD_MUTEX_INITIALIZER;

static int faulttest_inject(void *arg, pm__fault_kind kind, const char *site) {
  injector *in = arg;
  int fail = 0;
  if (kind != in->kind) return 0;
  if (strcmp(site, FAULTTEST_SQLITE_SITE) == 0 && in->own_only) return 0;
  pthread_mutex_lock(&faulttest_lock);
  in->sqlite += strcmp(site, FAULTTEST_SQLITE_SITE) == 0;
  int known = 0;
  for (int i = 0; i < in->nsites && !known; i++) known = strcmp(in->sites[i], site) == 0;
  if (!known && in->nsites < FAULTTEST_MAX_SITES) in->sites[in->nsites++] = site;
  in->calls++;
  if (in->fail_site == NULL)
    fail = in->calls == in->fail_at;
  else if (strcmp(site, in->fail_site) == 0)
    fail = ++in->at_site == in->fail_at;
  if (fail) in->fired = 1, in->site = site;
  pthread_mutex_unlock(&faulttest_lock);
  return fail;
}

/* Installs in, failing call n of kind (of site, where not NULL). */
static void arm_at(injector *in, pm__fault_kind kind, const char *site, int n, int own_only) {
  *in = (injector){.kind = kind, .fail_at = n, .fail_site = site, .own_only = own_only};
  pm__fault_set(faulttest_inject, in);
}

static void disarm(void) { pm__fault_set(NULL, NULL); }

#endif /* PM_FAULTTEST_H */
