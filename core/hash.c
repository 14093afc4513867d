/* hash.c: SHA-256 of a few pieces of text, as lowercase hex (the content hash of a kernel of a
 * user's own; the embedded templates' are computed by CMake at build time). Nettle computes it. */
#include <nettle/sha2.h>
#include <string.h>

#include "core.h"

void pm__sha256_hex(const char *const *parts, size_t n, char out[65]) {
  struct sha256_ctx h;
  uint8_t d[SHA256_DIGEST_SIZE];
  sha256_init(&h);
  for (size_t i = 0; i < n; i++) sha256_update(&h, strlen(parts[i]), (const uint8_t *)parts[i]);
  sha256_digest(&h, sizeof d, d);
  for (size_t i = 0; i < sizeof d; i++) {
    out[2 * i] = "0123456789abcdef"[d[i] >> 4];
    out[2 * i + 1] = "0123456789abcdef"[d[i] & 15];
  }
  out[64] = '\0';
}
