/* cubin.c: reading a cubin's ELF symbol table, with no CUDA call: whether a cubin defines a
 * symbol (pm_waits_prior, the launch contract) is answered without asking the driver for a
 * global that may not exist, a failing call that compute-sanitizer reports as an error. */
#include <elf.h>
#include <stdint.h>
#include <string.h>

#include "core.h"

/* Copies section header i of the ELF image to *out (the image need not be aligned); 0 where
 * it lies outside the image, or its contents do. */
static int section(const unsigned char *p, size_t size, const Elf64_Ehdr *eh, unsigned i,
                   Elf64_Shdr *out) {
  if (i >= eh->e_shnum || eh->e_shentsize < sizeof(Elf64_Shdr) || eh->e_shoff > size) return 0;
  uint64_t off = eh->e_shoff + (uint64_t)i * eh->e_shentsize;
  if (off > size || size - off < sizeof(Elf64_Shdr)) return 0;
  memcpy(out, p + off, sizeof *out);
  return out->sh_offset <= size && out->sh_size <= size - out->sh_offset;
}

int pm__cubin_has_symbol(const pm__cubin *b, const char *name) {
  const unsigned char *p = b ? b->data : NULL;
  size_t size = b ? b->size : 0, len = strlen(name);
  if (p == NULL || size < sizeof(Elf64_Ehdr) || memcmp(p, ELFMAG, SELFMAG) != 0 ||
      p[EI_CLASS] != ELFCLASS64 || p[EI_DATA] != ELFDATA2LSB)
    return 0;
  Elf64_Ehdr eh;
  memcpy(&eh, p, sizeof eh);
  for (unsigned i = 0; i < eh.e_shnum; i++) {
    Elf64_Shdr sh, strs;
    if (!section(p, size, &eh, i, &sh)) return 0;
    if (sh.sh_type != SHT_SYMTAB || sh.sh_entsize < sizeof(Elf64_Sym)) continue;
    if (!section(p, size, &eh, sh.sh_link, &strs)) return 0;
    uint64_t count = sh.sh_size / sh.sh_entsize; /* entsize >= sizeof(Elf64_Sym) > 0 */
    for (uint64_t k = 0; k < count; k++) { /* k * entsize + sizeof(sym) <= sh_size */
      Elf64_Sym sym;
      memcpy(&sym, p + sh.sh_offset + k * sh.sh_entsize, sizeof sym);
      if (sym.st_shndx == SHN_UNDEF || sym.st_name >= strs.sh_size ||
          strs.sh_size - sym.st_name <= len)
        continue;
      const char *s = (const char *)p + strs.sh_offset + sym.st_name;
      if (memcmp(s, name, len) == 0 && s[len] == '\0') return 1;
    }
  }
  return 0;
}
