/* error.c: status codes as text, and the failure detail kept on the context. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pm_internal.h"

const char *pm_strerror(int status) {
  if (status == PM_OK) return "success";
#define PM__ERROR_TEXT(name, value, text) \
  if (status == value) return text;
  PM_ERRORS(PM__ERROR_TEXT)
#undef PM__ERROR_TEXT
  return "unknown status";
}

const char *pm_errname(int status) {
  if (status == PM_OK) return "PM_OK";
#define PM__ERROR_NAME(name, value, text) \
  if (status == value) return "PM_" #name;
  PM_ERRORS(PM__ERROR_NAME)
#undef PM__ERROR_NAME
  return "PM_UNKNOWN";
}

int pm__vseterr(pm_ctx *c, int status, const char *fmt, va_list ap) {
  if (c == NULL) return status;
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  char *msg = n >= 0 ? malloc((size_t)n + 1) : NULL;
  if (msg != NULL) vsnprintf(msg, (size_t)n + 1, fmt, ap);
  pthread_mutex_lock(&c->lock);
  free(c->errmsg);
  c->errmsg = msg; /* NULL if memory ran out: pm_errmsg falls back to pm_strerror */
  c->status = status;
  pthread_mutex_unlock(&c->lock);
  return status;
}

int pm__seterr(pm_ctx *c, int status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  pm__vseterr(c, status, fmt, ap);
  va_end(ap);
  return status;
}

int pm__cuda_error(pm_ctx *c, int status, cudaError_t e, const char *call, const char *file,
                   int line) {
  const char *base = strrchr(file, '/');
  return pm__seterr(c, status, "%s:%d: %s: %s: %s", base ? base + 1 : file, line, call,
                    cudaGetErrorName(e), cudaGetErrorString(e));
}

const char *pm_errmsg(const pm_ctx *c) {
  if (c == NULL) return "no context (pm_open failed for lack of memory, or was not called)";
  if (c->errmsg != NULL) return c->errmsg;
  return pm_strerror(c->status);
}
