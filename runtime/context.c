/* context.c: opening and closing a pmtune context on a CUDA device. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pm_internal.h"

const char *pm_version(void) { return PM_VERSION; }

int pm_open(pm_ctx **out, const pm_options *opts) {
  static const pm_options defaults = {0};
  if (out == NULL) return PM_EINVAL;
  *out = NULL;
  if (opts == NULL) opts = &defaults;

  pm_ctx *c = calloc(1, sizeof *c);
  if (c == NULL) return PM_ENOMEM;
  pthread_mutex_init(&c->lock, NULL);
  c->device = PM_DEVICE_NONE;
  *out = c;
  const char *env = getenv("PMTUNE_AUTOTUNE");
  c->autotune = opts->autotune || (env != NULL && strcmp(env, "1") == 0);
  c->autotune_budget = opts->autotune_budget > 0 ? opts->autotune_budget : 40;
  c->log = getenv("PMTUNE_LOG") != NULL && getenv("PMTUNE_LOG")[0] != '\0';
  if (opts->db_path != NULL && (c->db_path = strdup(opts->db_path)) == NULL)
    return pm__seterr(c, PM_ENOMEM, "out of memory");

  if (opts->device == PM_DEVICE_NONE) return PM_OK;
  if (opts->device < 0)
    return pm__seterr(c, PM_EINVAL, "device %d: not a device ordinal", opts->device);
  int n = 0, rc = pm__device_count(c, &n);
  if (rc != PM_OK) return rc;
  if (opts->device >= n)
    return pm__seterr(c, PM_ENODEV, "device %d: this machine has %d CUDA device%s", opts->device,
                      n, n == 1 ? "" : "s");
  rc = pm__device_query(c, opts->device, &c->dev);
  if (rc != PM_OK) return rc;
  c->device = opts->device;
  return pm__serve_init(c);
}

void pm_close(pm_ctx *c) {
  if (c == NULL) return;
  pm__serve_free(c);
  pm__kernel_unload(&c->util);
  if (c->util_result != NULL) cudaFree(c->util_result);
  free(c->errmsg);
  free(c->db_path);
  free(c->notice);
  pthread_mutex_destroy(&c->lock);
  free(c);
}

const char *pm_notice(const pm_ctx *c) { return c ? c->notice : NULL; }

void pm__notice(pm_ctx *c, const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  pthread_mutex_lock(&c->lock);
  int first = c->notice == NULL;
  if (first) c->notice = strdup(buf);
  pthread_mutex_unlock(&c->lock);
  if (first && c->log) fprintf(stderr, "pmtune: %s\n", buf); /* asked for with PMTUNE_LOG */
}

double pm__now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}
