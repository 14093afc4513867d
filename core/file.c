/* file.c: reading a whole file into memory (a kernel description, a CUDA source). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "core.h"

char *pm__read_file(const char *path, size_t max, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  char *buf = NULL;
  size_t cap = 0, n = 0;
  int err = 0;
  for (;;) {
    if (n + 1 >= cap) {
      if (cap > max) {
        err = EFBIG;
        break;
      }
      char *p = realloc(buf, cap = cap ? cap * 2 : 8192);
      if (p == NULL) {
        err = ENOMEM;
        break;
      }
      buf = p;
    }
    size_t got = fread(buf + n, 1, cap - n - 1, f);
    n += got;
    if (got == 0) break;
  }
  if (err == 0 && ferror(f)) err = errno ? errno : EIO;
  fclose(f);
  if (err == 0 && n > max) err = EFBIG;
  if (err != 0) {
    free(buf);
    errno = err;
    return NULL;
  }
  buf[n] = '\0';
  if (len != NULL) *len = n;
  return buf;
}
