/* context.c: the public pm_open and pm_close: a core context, and serving on its device. */
#include <stdlib.h>
#include <string.h>

#include "serve.h"

int pm_open(pm_ctx **out, const pm_options *opts) {
  static const pm_options defaults = {0};
  if (out == NULL) return PM_EINVAL;
  *out = NULL;
  if (opts == NULL) opts = &defaults;
  /* Options that cannot be meant are refused, on a context of no device that says why. */
  const char *bad = opts->db_path != NULL && opts->db_path[0] == '\0' ? "db_path is empty"
                    : opts->autotune_budget < 0                          ? "autotune_budget < 0"
                                                                         : NULL;
  if (bad != NULL) {
    if (pm__ctx_create(out, PM_DEVICE_NONE, NULL) != PM_OK) return PM_ENOMEM;
    return pm__seterr(*out, PM_EINVAL, "pm_open: %s", bad);
  }
  int rc = pm__ctx_create(out, opts->device, opts->db_path);
  if (rc != PM_OK || (*out)->device == PM_DEVICE_NONE) return rc;
  return pm__serve_init(*out, opts);
}

void pm_close(pm_ctx *c) {
  if (c == NULL) return;
  pm__serve_free(c);
  pm__util_free(c);
  pm__ctx_free(c);
}

/* Read under the context's lock: another thread's first fallback sets it (pm__notice). Once set
 * it is never changed or freed until pm_close, so the pointer stays valid after the unlock. */
const char *pm_notice(const pm_ctx *c) {
  if (c == NULL) return NULL;
  pm_ctx *m = (pm_ctx *)c; /* the lock is not part of what const promises */
  pthread_mutex_lock(&m->lock);
  const char *notice = c->notice;
  pthread_mutex_unlock(&m->lock);
  return notice;
}

int pm_reload(pm_ctx *c) {
  if (c == NULL) return PM_EINVAL;
  if (c->serve == NULL) return pm__seterr(c, PM_ENODEV, "pm_reload: this context has no device");
  pm__serve_refresh(c);
  return PM_OK;
}
