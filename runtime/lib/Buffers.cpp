//===- Buffers.cpp - aligned buffers and read-only file mappings ----------===//

#include "tprt/loader.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>
#include <sstream>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tprt {

//===----------------------------------------------------------------------===//
// AlignedBuffer
//===----------------------------------------------------------------------===//

/// Transparent huge pages' size on x86-64 and aarch64 with 4 KiB pages.
constexpr size_t kHugePage = size_t(2) << 20;

AlignedBuffer::AlignedBuffer(size_t bytes, bool zero) : size_(bytes) {
  // aligned_alloc wants a multiple of the alignment.
  size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  if (rounded == 0)
    rounded = kAlignment;
  if (rounded < kHugePage) {
    data_ = std::aligned_alloc(kAlignment, rounded);
    if (!data_)
      throw std::bad_alloc();
    if (zero)
      std::memset(data_, 0, rounded);
    return;
  }
  // A weight or a cache that a decode step streams: on huge pages where the
  // kernel allows them on request (transparent huge pages `madvise`, the
  // Debian default), since with 4 KiB pages the TLB misses of one stream
  // cost up to half the read bandwidth in a VM (bench/cpu/read_bw.c). Mapped
  // afresh, starting on a huge page boundary: memory malloc hands back may
  // have been touched already (a freed temporary), and pages that exist stay
  // small whatever madvise says later. The size is not rounded up to a huge
  // page, so the tail stays on small pages and no memory is added. Fresh
  // anonymous pages read as zeros.
  size_t page = size_t(sysconf(_SC_PAGESIZE));
  mapped_ = (rounded + page - 1) / page * page;
  void *raw = mmap(nullptr, mapped_ + kHugePage, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED)
    throw std::bad_alloc();
  uintptr_t first = reinterpret_cast<uintptr_t>(raw);
  uintptr_t start = (first + kHugePage - 1) / kHugePage * kHugePage;
  if (start > first)
    munmap(raw, start - first);
  if (size_t tail = first + mapped_ + kHugePage - (start + mapped_))
    munmap(reinterpret_cast<void *>(start + mapped_), tail);
  data_ = reinterpret_cast<void *>(start);
  madvise(data_, mapped_ / kHugePage * kHugePage, MADV_HUGEPAGE);
}

void AlignedBuffer::release() {
  if (mapped_)
    munmap(data_, mapped_);
  else
    std::free(data_);
  data_ = nullptr;
  size_ = mapped_ = 0;
}

AlignedBuffer::~AlignedBuffer() { release(); }

AlignedBuffer::AlignedBuffer(AlignedBuffer &&other) noexcept
    : data_(other.data_), size_(other.size_), mapped_(other.mapped_) {
  other.data_ = nullptr;
  other.size_ = other.mapped_ = 0;
}

AlignedBuffer &AlignedBuffer::operator=(AlignedBuffer &&other) noexcept {
  if (this != &other) {
    release();
    data_ = other.data_;
    size_ = other.size_;
    mapped_ = other.mapped_;
    other.data_ = nullptr;
    other.size_ = other.mapped_ = 0;
  }
  return *this;
}

//===----------------------------------------------------------------------===//
// MappedFile
//===----------------------------------------------------------------------===//

/// What a file that is not regular is, for messages.
static const char *fileKind(mode_t mode) {
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISSOCK(mode))
    return "a socket";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  return "a special file";
}

Expected<MappedFile> MappedFile::open(const std::string &path) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer
  // (forever, on every rank) before fstat can refuse it. A regular file
  // ignores the flag.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return Status(TPRT_ERR_IO,
                  "'" + path + "': cannot open: " + std::strerror(errno));
  struct stat info;
  if (::fstat(fd, &info) != 0) {
    int error = errno;
    ::close(fd);
    return Status(TPRT_ERR_IO,
                  "'" + path + "': cannot stat: " + std::strerror(error));
  }
  if (!S_ISREG(info.st_mode)) {
    ::close(fd);
    return Status(TPRT_ERR_IO, "'" + path + "': is " + fileKind(info.st_mode) +
                                   ", not a regular file");
  }
  MappedFile file;
  file.path_ = path;
  file.size_ = static_cast<size_t>(info.st_size);
  if (file.size_ > 0) {
    void *address = ::mmap(nullptr, file.size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (address == MAP_FAILED) {
      int error = errno;
      ::close(fd);
      return Status(TPRT_ERR_IO,
                    "'" + path + "': cannot map: " + std::strerror(error));
    }
    file.data_ = static_cast<const uint8_t *>(address);
  }
  // The mapping stays valid after the descriptor is closed.
  ::close(fd);
  return file;
}

MappedFile::~MappedFile() {
  if (data_)
    ::munmap(const_cast<uint8_t *>(data_), size_);
}

MappedFile::MappedFile(MappedFile &&other) noexcept
    : data_(other.data_), size_(other.size_), path_(std::move(other.path_)) {
  other.data_ = nullptr;
  other.size_ = 0;
}

MappedFile &MappedFile::operator=(MappedFile &&other) noexcept {
  if (this != &other) {
    if (data_)
      ::munmap(const_cast<uint8_t *>(data_), size_);
    data_ = other.data_;
    size_ = other.size_;
    path_ = std::move(other.path_);
    other.data_ = nullptr;
    other.size_ = 0;
  }
  return *this;
}

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

std::string formatShape(const std::vector<int64_t> &shape) {
  std::ostringstream os;
  os << '[';
  for (size_t i = 0; i < shape.size(); ++i)
    os << (i ? ", " : "") << shape[i];
  os << ']';
  return os.str();
}

int64_t numElements(const std::vector<int64_t> &shape) {
  int64_t count = 1;
  for (int64_t size : shape)
    count *= size;
  return count;
}

} // namespace tprt
