/* file.c: every path pmtune reads or writes is opened here: reading only a regular file (a FIFO,
 * device or directory refused at once, never waited on), writing only a regular file or a new
 * one, never through a symbolic link. */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "core.h"

/* The error a file of mode m (not regular) is refused with. */
static int refusal(mode_t m) {
  return S_ISDIR(m)    ? EISDIR
         : S_ISFIFO(m) ? PM__EFIFO
         : S_ISLNK(m)  ? PM__ESYMLINK
         : S_ISSOCK(m) ? PM__ESOCKET
                       : PM__EDEVICE;
}

const char *pm__file_strerror(int err) {
  switch (err) {
    case EISDIR: return "is a directory, not a regular file";
    case PM__EFIFO: return "is a FIFO, not a regular file";
    case PM__EDEVICE: return "is a device, not a regular file";
    case PM__ESOCKET: return "is a socket, not a regular file";
    case PM__ESYMLINK: return "is a symbolic link, not a regular file (never written through)";
    default: return strerror(err);
  }
}

int pm__file_not_regular(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && !S_ISREG(st.st_mode) ? refusal(st.st_mode) : 0;
}

int pm__file_open_fd(const char *path) {
  /* O_NONBLOCK: opening a FIFO that no one writes to returns at once, to be refused below */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return -1;
  struct stat st;
  int err = fstat(fd, &st) != 0 ? errno : !S_ISREG(st.st_mode) ? refusal(st.st_mode) : 0;
  int fl = err == 0 ? fcntl(fd, F_GETFL) : -1;
  if (err == 0 && (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0)) err = errno;
  if (err != 0) {
    close(fd);
    errno = err;
    return -1;
  }
  return fd;
}

FILE *pm__file_open(const char *path) {
  int fd = pm__file_open_fd(path);
  FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
  if (f == NULL && fd >= 0) {
    int err = errno;
    close(fd);
    errno = err;
  }
  return f;
}

char *pm__read_stream(FILE *f, size_t max, size_t *len) {
  char *buf = NULL;
  size_t cap = 0, n = 0;
  int err = 0;
  for (;;) {
    if (n + 1 >= cap) {
      if (cap > max) {
        err = EFBIG;
        break;
      }
      char *p = pm__realloc(buf, cap = cap ? cap * 2 : 8192);
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

char *pm__read_file(const char *path, size_t max, size_t *len) {
  FILE *f = pm__file_open(path);
  if (f == NULL) return NULL;
  char *buf = pm__read_stream(f, max, len);
  int err = errno;
  fclose(f);
  errno = err;
  return buf;
}

int pm__file_create(pm__file_out *o, const char *path) {
  static atomic_uint serial; /* temporaries of several threads of one process apart */
  memset(o, 0, sizeof *o);
  if (path[0] == '\0') return errno = ENOENT, -1; /* not a temporary in the working folder */
  struct stat st;
  int exists = lstat(path, &st) == 0;
  if (!exists && errno != ENOENT) return -1;
  if (exists && !S_ISREG(st.st_mode)) return errno = refusal(st.st_mode), -1;
  if (exists && access(path, W_OK) != 0) return -1; /* read-only: not replaced either */
  size_t n = strlen(path) + 64;
  if ((o->path = pm__strdup(path)) == NULL || (o->tmp = pm__malloc(n)) == NULL) {
    pm__file_abort(o);
    return errno = ENOMEM, -1;
  }
  int fd = -1;
  for (int tries = 0; fd < 0 && tries < 100; tries++) {
    snprintf(o->tmp, n, "%s.tmp.%ld.%u", path, (long)getpid(), atomic_fetch_add(&serial, 1));
    fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0 || (exists && fchmod(fd, st.st_mode & 0777) != 0) ||
      (o->f = fdopen(fd, "wb")) == NULL) {
    int err = errno;
    if (fd >= 0) close(fd), unlink(o->tmp);
    free(o->tmp), o->tmp = NULL; /* not ours to remove */
    pm__file_abort(o);
    return errno = err, -1;
  }
  return 0;
}

static int commit(pm__file_out *o, int replace) {
  int bad = ferror(o->f) ? (errno ? errno : EIO) : 0;
  if (fclose(o->f) != 0 && bad == 0) bad = errno ? errno : EIO;
  o->f = NULL;
  struct stat st; /* a link, FIFO or directory put there meanwhile is not replaced either */
  if (bad == 0 && lstat(o->path, &st) == 0 && (!replace || !S_ISREG(st.st_mode)))
    bad = replace ? refusal(st.st_mode) : EEXIST;
  if (bad == 0 && (replace ? rename(o->tmp, o->path) : link(o->tmp, o->path)) != 0) bad = errno;
  if (bad == 0 && replace) free(o->tmp), o->tmp = NULL; /* linked: the temporary goes below */
  pm__file_abort(o);
  return bad == 0 ? 0 : (errno = bad, -1);
}

int pm__file_commit(pm__file_out *o) { return commit(o, 1); }

int pm__file_commit_new(pm__file_out *o) { return commit(o, 0); }

void pm__file_abort(pm__file_out *o) {
  if (o == NULL) return;
  int err = errno;
  if (o->f != NULL) fclose(o->f);
  if (o->tmp != NULL) unlink(o->tmp);
  free(o->tmp);
  free(o->path);
  memset(o, 0, sizeof *o);
  errno = err;
}

int pm__gunzip(char **buf, size_t *len, size_t max) {
  const unsigned char *in = (const unsigned char *)*buf;
  if (*len < 2 || in[0] != 0x1f || in[1] != 0x8b) return 0;
  z_stream z;
  memset(&z, 0, sizeof z);
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) return ENOMEM; /* 16: gzip's header, not zlib's */
  size_t cap = *len * 8 + 1, n = 0;
  char *out = NULL;
  int rc = Z_OK, err = 0;
  z.next_in = (unsigned char *)*buf;
  while (err == 0 && rc != Z_STREAM_END) {
    size_t left = *len - (size_t)((const char *)z.next_in - *buf);
    if (out == NULL || n + 1 >= cap) {
      if (out != NULL) cap *= 2;
      if (cap > max + 1) cap = max + 1;
      char *grown = out == NULL || n + 1 < cap ? pm__realloc(out, cap) : NULL;
      if (grown == NULL) {
        err = n + 1 >= max + 1 ? EFBIG : ENOMEM;
        break;
      }
      out = grown;
    }
    uInt room = cap - 1 - n > UINT32_MAX ? UINT32_MAX : (uInt)(cap - 1 - n);
    z.avail_in = left > UINT32_MAX ? UINT32_MAX : (uInt)left;
    z.next_out = (unsigned char *)out + n, z.avail_out = room;
    rc = inflate(&z, Z_NO_FLUSH);
    n += room - z.avail_out;
    if (rc == Z_BUF_ERROR && z.avail_out != 0) err = EILSEQ; /* input ended: cut short */
    else if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR)
      err = rc == Z_MEM_ERROR ? ENOMEM : EILSEQ;
  }
  inflateEnd(&z);
  if (err != 0) {
    free(out);
    return err;
  }
  out[n] = '\0';
  free(*buf);
  *buf = out, *len = n;
  return 0;
}
