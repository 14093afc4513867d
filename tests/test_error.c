/* test_error.c: status codes, their text, and contexts opened without a device. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "gpu.h"

static const int all_codes[] = {
#define CODE(name, value, text) PM_##name,
    PM_ERRORS(CODE)
#undef CODE
};

Test(error, every_code_has_its_own_text_and_name) {
  size_t n = sizeof all_codes / sizeof all_codes[0];
  for (size_t i = 0; i < n; i++) {
    cr_assert_neq(all_codes[i], PM_OK);
    cr_assert_str_neq(pm_strerror(all_codes[i]), "unknown status");
    cr_assert_eq(strncmp(pm_errname(all_codes[i]), "PM_E", 4), 0, "%s", pm_errname(all_codes[i]));
    for (size_t j = 0; j < i; j++) {
      cr_assert_neq(all_codes[i], all_codes[j]);
      cr_assert_str_neq(pm_strerror(all_codes[i]), pm_strerror(all_codes[j]));
    }
  }
  cr_assert_str_eq(pm_errname(PM_ENODEV), "PM_ENODEV");
  cr_assert_str_eq(pm_strerror(PM_OK), "success");
  cr_assert_str_eq(pm_strerror(12345), "unknown status");
  cr_assert_str_eq(pm_errname(12345), "PM_UNKNOWN");
}

Test(error, close_null_and_errmsg_null_are_harmless) {
  pm_close(NULL);
  cr_assert_not_null(pm_errmsg(NULL));
}

Test(error, open_rejects_null_and_bad_ordinals) {
  cr_assert_eq(pm_open(NULL, NULL), PM_EINVAL);
  pm_ctx *c = NULL;
  pm_options o = {.device = -7};
  cr_assert_eq(pm_open(&c, &o), PM_EINVAL);
  cr_assert_not_null(c, "a failed open still returns a context for pm_errmsg");
  cr_assert_not_null(strstr(pm_errmsg(c), "-7"), "%s", pm_errmsg(c));
  pm_close(c);
}

Test(error, open_without_device_needs_no_gpu) {
  pm_ctx *c = NULL;
  pm_options o = {.device = PM_DEVICE_NONE};
  cr_assert_eq(pm_open(&c, &o), PM_OK);
  cr_assert_str_eq(pm_errmsg(c), "success");
  /* a device operation on such a context fails cleanly */
  int prev;
  cr_assert_eq(pm__device_enter(c, &prev), PM_ENODEV);
  cr_assert_not_null(strstr(pm_errmsg(c), "without a device"), "%s", pm_errmsg(c));
  pm_close(c);
}

Test(error, messages_of_any_length_are_kept_whole) {
  pm_ctx *c = NULL;
  pm_options o = {.device = PM_DEVICE_NONE};
  cr_assert_eq(pm_open(&c, &o), PM_OK);
  char big[10000];
  memset(big, 'x', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  cr_assert_eq(pm__seterr(c, PM_EIO, "start %s end", big), PM_EIO);
  cr_assert_eq(strlen(pm_errmsg(c)), strlen(big) + 10);
  cr_assert_eq(strncmp(pm_errmsg(c) + strlen(big) + 7, "end", 3), 0);
  pm_close(c);
}

Test(error, version_is_dotted) {
  int a, b, d;
  cr_assert_eq(sscanf(pm_version(), "%d.%d.%d", &a, &b, &d), 3, "%s", pm_version());
}
