/* cmd_devices.c: `pmtune devices`, the CUDA devices of this machine and what pmtune sees of each. */
#include "cli.h"

static const char about[] =
    "Lists the CUDA devices of this machine: index, name, compute capability, SM count,\n"
    "memory, memory bus width and clock, and the bandwidth these give (2 x clock x width).\n"
    "Exits with status 1 and says why where there is no CUDA device or driver.\n";

static const cli_help help = {.cmd = "devices", .about = about};

int cmd_devices(int argc, char **argv) {
  const cli_option options[] = {CLI_END};
  int parsed = cli_parse(&help, options, argc, argv, NULL);
  if (parsed != CLI_OK) return parsed;

  pm_ctx *c = NULL;
  pm_options opts = {.device = PM_DEVICE_NONE};
  int n = 0, status = CLI_OK;
  if (pm_open(&c, &opts) != PM_OK) {
    status = cli_fail("devices", "%s", pm_errmsg(c));
    goto done;
  }
  if (pm__device_count(c, &n) != PM_OK) {
    status = cli_fail("devices", "%s", pm_errmsg(c));
    goto done;
  }
  printf("%-5s  %-28s  %-5s  %4s  %10s  %9s  %9s  %9s\n", "index", "name", "cc", "SMs", "memory",
         "bus", "mem clock", "peak GB/s");
  for (int i = 0; i < n; i++) {
    pm__device_info d;
    if (pm__device_query(c, i, &d) != PM_OK) {
      status = cli_fail("devices", "device %d: %s", i, pm_errmsg(c));
      continue;
    }
    printf("%-5d  %-28s  %d.%-3d  %4d  %6.1f GiB  %5d-bit  %5d MHz  %9.0f\n", d.index, d.name,
           d.cc_major, d.cc_minor, d.sm_count, d.mem_bytes / 1073741824.0, d.bus_width_bits,
           d.mem_clock_khz / 1000, d.peak_gbps);
  }
done:
  pm_close(c);
  return status;
}
