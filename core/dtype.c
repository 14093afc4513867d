/* dtype.c: the element types pmtune's calls take (pm_dtype): their names and sizes, and the
 * host's conversions between float and the 16-bit types, for the tuner's inputs and references. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core.h"

static const struct {
  const char *name;
  size_t size;
} dtypes[PM__NDTYPES] = {
#define DTYPE_ENTRY(NAME, value, name, bytes, ctype) [value] = {#name, bytes},
    PM_DTYPES(DTYPE_ENTRY)
#undef DTYPE_ENTRY
};

int pm_dtype_count(void) { return PM__NDTYPES; }

const char *pm_dtype_name(pm_dtype t) {
  return (unsigned)t < PM__NDTYPES ? dtypes[t].name : NULL;
}

size_t pm_dtype_size(pm_dtype t) { return (unsigned)t < PM__NDTYPES ? dtypes[t].size : 0; }

int pm__dtype_find(const char *name) {
  for (int i = 0; name != NULL && i < PM__NDTYPES; i++)
    if (strcmp(dtypes[i].name, name) == 0) return i;
  return -1;
}

void pm__dtype_list(unsigned mask, char *out, size_t cap) {
  size_t len = 0;
  out[0] = '\0';
  for (int t = 0; t < PM__NDTYPES && len < cap; t++)
    if (mask & 1u << t)
      len += (size_t)snprintf(out + len, cap - len, "%s%s", len ? ", " : "", dtypes[t].name);
}

static uint32_t bits_of(float x) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}

static float float_of(uint32_t u) {
  float x;
  memcpy(&x, &u, sizeof x);
  return x;
}

unsigned short pm__f32_to_bf16(float x) {
  uint32_t u = bits_of(x);
  if (isnan(x)) return (unsigned short)((u >> 16) | 0x40); /* quiet, sign kept */
  u += 0x7fff + ((u >> 16) & 1);                          /* to nearest, ties to even */
  return (unsigned short)(u >> 16);
}

float pm__bf16_to_f32(unsigned short h) { return float_of((uint32_t)h << 16); }

unsigned short pm__f32_to_f16(float x) {
  uint32_t u = bits_of(x), sign = (u >> 16) & 0x8000, a = u & 0x7fffffff;
  if (a > 0x7f800000) return (unsigned short)(sign | 0x7e00);   /* NaN */
  if (a >= 0x477ff000) return (unsigned short)(sign | 0x7c00);  /* rounds to or past 65520: inf */
  if (a < 0x38800000) {                                         /* below 2^-14: subnormal or 0 */
    /* the value in units of 2^-24, rounded to nearest even: a float's exact scaling by 2^24
     * leaves it a float whose rounding to an integer is the half's subnormal mantissa */
    float m = float_of(a) * 16777216.0f;
    return (unsigned short)(sign | (uint32_t)nearbyintf(m));
  }
  /* normal: rebias the exponent (127 -> 15), round the 23-bit mantissa to 10 */
  uint32_t r = a - 0x38000000;
  r += 0xfff + ((r >> 13) & 1);
  return (unsigned short)(sign | (r >> 13));
}

float pm__f16_to_f32(unsigned short h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff;
  if (e == 0) { /* zero or subnormal: m x 2^-24, exact in a float */
    float v = (float)m * (1.0f / 16777216.0f);
    return float_of(bits_of(v) | sign);
  }
  if (e == 31) return float_of(sign | 0x7f800000 | (m << 13)); /* inf, NaN */
  return float_of(sign | ((e + 112) << 23) | (m << 13));
}
