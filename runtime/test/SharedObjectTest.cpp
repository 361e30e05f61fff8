//===- SharedObjectTest.cpp - checkSharedObject before dlopen -------------===//

#include "TestUtil.h"

#include "tprt/loader.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

#include <dlfcn.h>
#include <elf.h>
#include <sys/stat.h>
#include <unistd.h>

namespace {

using namespace tprt::test;

/// The bytes of libtprt.so, a real shared object for this machine.
std::string runtimeLibrary() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void *>(&tprt_init), &info) || !info.dli_fname)
    return "";
  std::ifstream file(info.dli_fname, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(file), {});
}

/// Checks `bytes` written to a file; the message (empty when accepted).
std::string check(const std::string &path, const std::string &bytes) {
  writeBytes(path, bytes);
  tprt::Status status = tprt::checkSharedObject(path);
  return status.message();
}

Elf64_Ehdr headerOf(const std::string &bytes) {
  Elf64_Ehdr header;
  std::memcpy(&header, bytes.data(), sizeof(header));
  return header;
}

/// The file range of the last PT_LOAD segment.
std::pair<uint64_t, uint64_t> lastLoad(const std::string &bytes) {
  Elf64_Ehdr header = headerOf(bytes);
  std::pair<uint64_t, uint64_t> range{0, 0};
  for (unsigned i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr segment;
    std::memcpy(&segment, bytes.data() + header.e_phoff + i * sizeof(segment),
                sizeof(segment));
    if (segment.p_type == PT_LOAD && segment.p_filesz > 0)
      range = {segment.p_offset, segment.p_offset + segment.p_filesz};
  }
  return range;
}

TEST(SharedObject, AcceptsTheRuntimeLibrary) {
  std::string bytes = runtimeLibrary();
  ASSERT_GT(bytes.size(), sizeof(Elf64_Ehdr));
  EXPECT_EQ(check(tempPath("whole.so"), bytes), "");
}

TEST(SharedObject, RejectsATruncatedObject) {
  std::string bytes = runtimeLibrary();
  ASSERT_GT(bytes.size(), sizeof(Elf64_Ehdr));
  Elf64_Ehdr header = headerOf(bytes);
  std::string path = tempPath("truncated.so");

  // Inside the last loaded segment: what made dlopen die of SIGBUS.
  auto [begin, end] = lastLoad(bytes);
  ASSERT_LT(begin + 1, end);
  std::string message = check(path, bytes.substr(0, (begin + end) / 2));
  EXPECT_NE(message.find("'" + path + "': truncated: PT_LOAD segment "),
            std::string::npos)
      << message;

  // After the segments: the section header table is cut.
  ASSERT_GT(header.e_shoff, end);
  message = check(path, bytes.substr(0, header.e_shoff + 10));
  EXPECT_NE(message.find("truncated: the section header table ends at byte"),
            std::string::npos)
      << message;

  message = check(path, bytes.substr(0, header.e_phoff + 8));
  EXPECT_NE(message.find("truncated: the program header table ends at byte"),
            std::string::npos)
      << message;

  message = check(path, bytes.substr(0, 20));
  EXPECT_EQ(message, "'" + path +
                         "': truncated: the ELF header ends at byte 64, the "
                         "file has 20 bytes");
}

TEST(SharedObject, RejectsOtherFiles) {
  std::string bytes = runtimeLibrary();
  ASSERT_GT(bytes.size(), sizeof(Elf64_Ehdr));
  std::string path = tempPath("other.so");
  std::string notElf =
      "'" + path + "': not an ELF file (it does not begin with \\x7fELF)";
  EXPECT_EQ(check(path, "{\"not\": \"elf\"}"), notElf);
  EXPECT_EQ(check(path, ""), notElf);

  std::string changed = bytes;
  changed[EI_CLASS] = ELFCLASS32;
  EXPECT_EQ(check(path, changed),
            "'" + path + "': not a 64-bit ELF file (EI_CLASS 1)");
  changed = bytes;
  changed[EI_DATA] = ELFDATA2MSB;
  EXPECT_EQ(check(path, changed),
            "'" + path + "': not a little-endian ELF file (EI_DATA 2)");

  auto withHeader = [&](auto edit) {
    Elf64_Ehdr header = headerOf(bytes);
    edit(header);
    std::string edited = bytes;
    std::memcpy(edited.data(), &header, sizeof(header));
    return edited;
  };
  EXPECT_EQ(check(path, withHeader([](Elf64_Ehdr &h) { h.e_type = ET_EXEC; })),
            "'" + path +
                "': is an executable (ET_EXEC), not a shared object (ET_DYN)");
  EXPECT_EQ(check(path, withHeader([](Elf64_Ehdr &h) { h.e_type = ET_REL; })),
            "'" + path +
                "': is a relocatable object (ET_REL), not a shared object "
                "(ET_DYN)");
#if defined(__x86_64__)
  EXPECT_EQ(
      check(path, withHeader([](Elf64_Ehdr &h) { h.e_machine = EM_AARCH64; })),
      "'" + path + "': built for ELF machine 183, this machine is 62");
#endif
  EXPECT_EQ(check(path, withHeader([](Elf64_Ehdr &h) { h.e_phoff = ~0ull; })),
            "'" + path +
                "': truncated: the program header table ends at byte " +
                std::to_string(UINT64_MAX) + ", the file has " +
                std::to_string(bytes.size()) + " bytes");
  EXPECT_EQ(check(path, withHeader([](Elf64_Ehdr &h) { h.e_phnum = 0; })),
            "'" + path + "': has no program headers");
  EXPECT_EQ(check(path, withHeader([](Elf64_Ehdr &h) { h.e_shnum = 60000; })),
            "'" + path +
                "': truncated: the section header table ends at byte " +
                std::to_string(headerOf(bytes).e_shoff + 60000ull * 64) +
                ", the file has " + std::to_string(bytes.size()) + " bytes");
}

TEST(SharedObject, RefusesAFifoAtOnce) {
  std::string fifo = tempPath("model.so");
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  EXPECT_EQ(tprt::checkSharedObject(fifo).message(),
            "'" + fifo + "': is a FIFO, not a regular file");
  ::unlink(fifo.c_str());
}

} // namespace
