//===- SharedObject.cpp - is a file a whole ELF shared object? ------------===//
//
// dlopen maps a shared object's segments as the program headers say and
// touches them; a segment beyond the end of a truncated file is a SIGBUS in
// the loader (exit 135, no message), not a dlerror. So a launcher checks the
// file first against what dlopen will read: the ELF header, the program
// header table, every PT_LOAD segment's bytes in the file, and the section
// header table, which the linker writes last (a file cut anywhere after its
// segments loses it).
//
//===----------------------------------------------------------------------===//

#include "tprt/loader.h"

#include <cstring>

#include <elf.h>

namespace tprt {

namespace {

#if defined(__x86_64__)
constexpr unsigned kMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr unsigned kMachine = EM_AARCH64;
#else
constexpr unsigned kMachine = EM_NONE; // not checked
#endif

std::string byteRange(uint64_t begin, uint64_t end) {
  return "[" + std::to_string(begin) + ", " + std::to_string(end) + ")";
}

/// `offset + count * size`, or none when it overflows.
std::optional<uint64_t> tableEnd(uint64_t offset, uint64_t count,
                                 uint64_t size) {
  uint64_t bytes, end;
  if (__builtin_mul_overflow(count, size, &bytes) ||
      __builtin_add_overflow(offset, bytes, &end))
    return std::nullopt;
  return end;
}

const char *typeName(unsigned type) {
  switch (type) {
  case ET_REL:
    return "a relocatable object (ET_REL)";
  case ET_EXEC:
    return "an executable (ET_EXEC)";
  case ET_CORE:
    return "a core file (ET_CORE)";
  default:
    return "not a shared object";
  }
}

} // namespace

Status checkSharedObject(const std::string &path) {
  Expected<MappedFile> mapped = MappedFile::open(path);
  if (!mapped)
    return mapped.status();
  const uint8_t *bytes = mapped->data();
  uint64_t size = mapped->size();
  auto error = [&](const std::string &what) {
    return Status(TPRT_ERR_IO, "'" + path + "': " + what);
  };
  auto truncated = [&](const std::string &what, uint64_t end) {
    return error("truncated: " + what + " ends at byte " + std::to_string(end) +
                 ", the file has " + std::to_string(size) + " bytes");
  };

  if (size < SELFMAG || std::memcmp(bytes, ELFMAG, SELFMAG) != 0)
    return error("not an ELF file (it does not begin with \\x7fELF)");
  if (size < EI_NIDENT || bytes[EI_CLASS] != ELFCLASS64)
    return error("not a 64-bit ELF file (EI_CLASS " +
                 std::to_string(size < EI_NIDENT ? 0 : bytes[EI_CLASS]) + ")");
  if (bytes[EI_DATA] != ELFDATA2LSB)
    return error("not a little-endian ELF file (EI_DATA " +
                 std::to_string(bytes[EI_DATA]) + ")");
  Elf64_Ehdr header;
  if (size < sizeof(header))
    return truncated("the ELF header", sizeof(header));
  std::memcpy(&header, bytes, sizeof(header));
  if (header.e_type != ET_DYN)
    return error(std::string("is ") + typeName(header.e_type) +
                 ", not a shared object (ET_DYN)");
  if (kMachine != EM_NONE && header.e_machine != kMachine)
    return error("built for ELF machine " + std::to_string(header.e_machine) +
                 ", this machine is " + std::to_string(kMachine));

  if (header.e_phnum == 0)
    return error("has no program headers");
  if (header.e_phentsize != sizeof(Elf64_Phdr))
    return error("program header size " + std::to_string(header.e_phentsize) +
                 " is not " + std::to_string(sizeof(Elf64_Phdr)));
  std::optional<uint64_t> phEnd =
      tableEnd(header.e_phoff, header.e_phnum, sizeof(Elf64_Phdr));
  if (!phEnd || *phEnd > size)
    return truncated("the program header table", phEnd.value_or(UINT64_MAX));
  for (unsigned i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr segment;
    std::memcpy(&segment, bytes + header.e_phoff + i * sizeof(segment),
                sizeof(segment));
    if (segment.p_type != PT_LOAD)
      continue;
    std::optional<uint64_t> end =
        tableEnd(segment.p_offset, 1, segment.p_filesz);
    if (!end || *end > size)
      return truncated(
          "PT_LOAD segment " + std::to_string(i) + " (file bytes " +
              byteRange(segment.p_offset, end.value_or(UINT64_MAX)) + ")",
          end.value_or(UINT64_MAX));
  }

  if (header.e_shoff != 0) {
    if (header.e_shentsize != sizeof(Elf64_Shdr))
      return error("section header size " + std::to_string(header.e_shentsize) +
                   " is not " + std::to_string(sizeof(Elf64_Shdr)));
    // With SHN_LORESERVE or more sections, e_shnum is 0 and section 0's
    // sh_size holds the count.
    uint64_t count = header.e_shnum;
    std::optional<uint64_t> first =
        tableEnd(header.e_shoff, 1, sizeof(Elf64_Shdr));
    if (!first || *first > size)
      return truncated("the section header table", first.value_or(UINT64_MAX));
    if (count == 0) {
      Elf64_Shdr zero;
      std::memcpy(&zero, bytes + header.e_shoff, sizeof(zero));
      count = zero.sh_size;
    }
    std::optional<uint64_t> shEnd =
        tableEnd(header.e_shoff, count, sizeof(Elf64_Shdr));
    if (!shEnd || *shEnd > size)
      return truncated("the section header table", shEnd.value_or(UINT64_MAX));
  }
  return Status::success();
}

} // namespace tprt
