/* context.c: making and freeing the context that every layer records its errors on. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core.h"

int pm__ctx_create(pm_ctx **out, int device, const char *db_path) {
  pm_ctx *c = pm__calloc(1, sizeof *c);
  *out = c;
  if (c == NULL) return PM_ENOMEM;
  pthread_mutex_init(&c->lock, NULL);
  c->device = PM_DEVICE_NONE;
  const char *log = getenv("PMTUNE_LOG");
  c->log = log != NULL && log[0] != '\0';
  if (db_path != NULL && (c->db_path = pm__strdup(db_path)) == NULL)
    return pm__seterr(c, PM_ENOMEM, "out of memory");

  if (device == PM_DEVICE_NONE) return PM_OK;
  if (device < 0) return pm__seterr(c, PM_EINVAL, "device %d: not a device ordinal", device);
  int n = 0, rc = pm__device_count(c, &n);
  if (rc != PM_OK) return rc;
  if (device >= n)
    return pm__seterr(c, PM_ENODEV, "device %d: this machine has %d CUDA device%s", device, n,
                      n == 1 ? "" : "s");
  if ((rc = pm__device_query(c, device, &c->dev)) != PM_OK) return rc;
  c->device = device;
  return PM_OK;
}

void pm__ctx_free(pm_ctx *c) {
  if (c == NULL) return;
  free(c->errmsg);
  free(c->db_path);
  free(c->notice);
  pthread_mutex_destroy(&c->lock);
  free(c);
}

void pm__notice(pm_ctx *c, const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  pthread_mutex_lock(&c->lock);
  int first = c->notice == NULL;
  if (first) c->notice = pm__strdup(buf);
  pthread_mutex_unlock(&c->lock);
  if (first && c->log) fprintf(stderr, "pmtune: %s\n", buf); /* asked for with PMTUNE_LOG */
}

void pm__copy_text(char *dst, size_t cap, const char *src) {
  size_t n = strnlen(src, cap - 1);
  memcpy(dst, src, n);
  dst[n] = '\0';
}

double pm__now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}
