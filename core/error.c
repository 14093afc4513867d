/* error.c: the library's version and status codes as text, and the failure detail kept on the
 * context, readable from any thread while others fail. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"

const char *pm_version(void) { return PM_VERSION; }

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
  char *msg = n >= 0 ? pm__malloc((size_t)n + 1) : NULL;
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

/* pm_errmsg hands each thread a copy of the context's message, taken under the context's lock:
 * another thread's failure frees the context's own copy, never the one a caller is reading. A
 * thread keeps copies for its last few contexts; a copy lives until the same thread asks the
 * same context again (or its slot goes to another context), or the thread exits. */
#define COPIES 4

typedef struct copy {
  const pm_ctx *ctx;
  char *text;
  size_t cap;
} copy;

typedef struct copies {
  copy slot[COPIES];
  unsigned next; /* the slot to give to a context that has none */
} copies;

static pthread_key_t copies_key;
static pthread_once_t copies_once = PTHREAD_ONCE_INIT;

static void copies_free(void *p) {
  copies *t = p;
  for (int i = 0; i < COPIES; i++) free(t->slot[i].text);
  free(t);
}

static void copies_init(void) { pthread_key_create(&copies_key, copies_free); }

/* This thread's copy slot for c, or NULL where memory ran out. */
static copy *copy_for(const pm_ctx *c) {
  pthread_once(&copies_once, copies_init);
  copies *t = pthread_getspecific(copies_key);
  if (t == NULL) {
    if ((t = pm__calloc(1, sizeof *t)) == NULL || pthread_setspecific(copies_key, t) != 0) {
      free(t);
      return NULL;
    }
  }
  for (int i = 0; i < COPIES; i++)
    if (t->slot[i].ctx == c) return &t->slot[i];
  copy *s = &t->slot[t->next++ % COPIES];
  s->ctx = c;
  return s;
}

const char *pm_errmsg(const pm_ctx *c) {
  if (c == NULL) return "no context (pm_open failed for lack of memory, or was not called)";
  pm_ctx *m = (pm_ctx *)c; /* the lock is not part of what const promises */
  copy *s = copy_for(c);
  const char *out = NULL;
  pthread_mutex_lock(&m->lock);
  const char *text = c->errmsg != NULL ? c->errmsg : pm_strerror(c->status);
  size_t n = strlen(text) + 1;
  if (s != NULL && s->text != NULL && strcmp(s->text, text) == 0) {
    out = s->text; /* unchanged: the pointer handed out before stays valid */
  } else if (s != NULL) {
    if (n > s->cap) {
      char *grown = pm__malloc(n);
      if (grown != NULL) free(s->text), s->text = grown, s->cap = n;
    }
    if (n <= s->cap) out = memcpy(s->text, text, n);
  }
  int status = c->status;
  pthread_mutex_unlock(&m->lock);
  return out != NULL ? out : pm_strerror(status); /* memory ran out: the status's text */
}
