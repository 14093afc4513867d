/* fault.c: the fault hook that tests install to make chosen CUDA, NVRTC and SQLite calls and
 * allocations fail. */
#include <stddef.h>

#include "fault.h"

pm__fault_fn pm__fault_hook;
void *pm__fault_arg;

void pm__fault_set(pm__fault_fn fn, void *arg) {
  pm__fault_arg = arg;
  pm__fault_hook = fn;
}
