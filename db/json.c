/* json.c: JSON's syntax (RFC 8259), checked before SQLite's JSON functions see a text. */
#include "internal.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

/* ---- JSON's syntax (RFC 8259), checked before SQLite's JSON functions see a text ------------ */

typedef struct json_in {
  const char *p, *end;
} json_in;

static void json_ws(json_in *in) {
  while (in->p < in->end && (*in->p == ' ' || *in->p == '\t' || *in->p == '\n' || *in->p == '\r'))
    in->p++;
}

static int json_lit(json_in *in, const char *word) {
  size_t n = strlen(word);
  if ((size_t)(in->end - in->p) < n || memcmp(in->p, word, n) != 0) return 0;
  in->p += n;
  return 1;
}

static int json_string(json_in *in) {
  if (in->p >= in->end || *in->p != '"') return 0;
  for (in->p++; in->p < in->end; in->p++) {
    unsigned char ch = (unsigned char)*in->p;
    if (ch == '"') return in->p++, 1;
    if (ch < 0x20) return 0;
    if (ch != '\\') continue;
    if (++in->p >= in->end) return 0;
    if (*in->p == 'u') {
      for (int i = 0; i < 4; i++)
        if (++in->p >= in->end || !isxdigit((unsigned char)*in->p)) return 0;
    } else if (strchr("\"\\/bfnrt", *in->p) == NULL || *in->p == '\0') {
      return 0;
    }
  }
  return 0;
}

static int json_digits(json_in *in) {
  const char *start = in->p;
  while (in->p < in->end && isdigit((unsigned char)*in->p)) in->p++;
  return in->p > start;
}

static int json_number(json_in *in) {
  if (in->p < in->end && *in->p == '-') in->p++;
  if (in->p < in->end && *in->p == '0') in->p++;
  else if (!json_digits(in)) return 0;
  if (in->p < in->end && *in->p == '.' && (in->p++, !json_digits(in))) return 0;
  if (in->p < in->end && (*in->p == 'e' || *in->p == 'E')) {
    in->p++;
    if (in->p < in->end && (*in->p == '+' || *in->p == '-')) in->p++;
    if (!json_digits(in)) return 0;
  }
  return 1;
}

/* One value and the white space after it; depth: how deep it may still nest. */
static int json_value(json_in *in, int depth) {
  json_ws(in);
  if (in->p >= in->end) return 0;
  char open = *in->p;
  if (open == '{' || open == '[') {
    if (depth == 0) return 0;
    in->p++;
    json_ws(in);
    char close = open == '{' ? '}' : ']';
    if (in->p < in->end && *in->p == close) return in->p++, json_ws(in), 1;
    for (;;) {
      if (open == '{') {
        json_ws(in);
        if (!json_string(in)) return 0;
        json_ws(in);
        if (in->p >= in->end || *in->p++ != ':') return 0;
      }
      if (!json_value(in, depth - 1)) return 0;
      if (in->p >= in->end) return 0;
      if (*in->p == close) return in->p++, json_ws(in), 1;
      if (*in->p++ != ',') return 0;
    }
  }
  int ok = open == '"' ? json_string(in)
           : open == 't' ? json_lit(in, "true")
           : open == 'f' ? json_lit(in, "false")
           : open == 'n' ? json_lit(in, "null")
                         : json_number(in);
  json_ws(in);
  return ok;
}

int pm__json_syntax(const char *text, int len) {
  json_in in = {text, text + (len < 0 ? strlen(text) : (size_t)len)};
  return json_value(&in, 2000) && in.p == in.end; /* SQLite 3.40 reads 2000 deep */
}

int pm__db_json_check(sqlite3 *h, const char *text, int len) {
  if (!pm__json_syntax(text, len)) return 0;
  if (h == NULL) return 1; /* the syntax alone: no SQLite JSON function will read it */
  sqlite3_stmt *st = NULL; /* and SQLite's own limits (its depth of nesting) */
  int valid = -1;
  if (sqlite3_prepare_v2(h, "SELECT json_valid(?1)", -1, &st, NULL) == SQLITE_OK) {
    sqlite3_bind_text(st, 1, text, len, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW) valid = sqlite3_column_int(st, 0) == 1;
  }
  sqlite3_finalize(st);
  return valid;
}
