//===- File.cpp - whole-file reads, gzip, atomic writes ---------------------===//

#include "lpc/Runtime/File.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef LPC_RUNTIME_HAVE_ZLIB
#include <zlib.h>
#endif

namespace lpc {
namespace rt {

static Error sysError(const std::string &path, const std::string &what, int err) {
  return makeError(path, what + ": " + std::strerror(err));
}

bool isRegularFile(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

Expected<std::vector<uint8_t>> readFile(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return sysError(path, "cannot open", errno);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return sysError(path, "cannot stat", err);
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    return makeError(path, "is a directory, not a file");
  }
  std::vector<uint8_t> data;
  if (S_ISREG(st.st_mode))
    data.reserve(static_cast<size_t>(st.st_size));
  uint8_t buf[1 << 16];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR)
        continue;
      int err = errno;
      ::close(fd);
      return sysError(path, "read failed", err);
    }
    if (n == 0)
      break;
    data.insert(data.end(), buf, buf + n);
  }
  ::close(fd);
  return data;
}

bool haveZlib() {
#ifdef LPC_RUNTIME_HAVE_ZLIB
  return true;
#else
  return false;
#endif
}

#ifdef LPC_RUNTIME_HAVE_ZLIB
static Expected<std::vector<uint8_t>> gunzip(const std::vector<uint8_t> &in,
                                             const std::string &path) {
  std::vector<uint8_t> out;
  out.reserve(in.size() * 4);
  z_stream zs;
  std::memset(&zs, 0, sizeof(zs));
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) // gzip wrapper only
    return makeError(path, "cannot initialize zlib");
  if (in.size() > 0xFFFFFFFFu) {
    inflateEnd(&zs);
    return makeError(path, "gzip file larger than 4 GiB is not supported");
  }
  zs.next_in = const_cast<Bytef *>(in.data());
  zs.avail_in = static_cast<uInt>(in.size());
  uint8_t buf[1 << 16];
  while (true) {
    zs.next_out = buf;
    zs.avail_out = sizeof(buf);
    int rc = inflate(&zs, Z_NO_FLUSH);
    out.insert(out.end(), buf, buf + (sizeof(buf) - zs.avail_out));
    if (rc == Z_STREAM_END) {
      // Another gzip member may follow (as `cat a.gz b.gz` makes).
      if (zs.avail_in == 0)
        break;
      if (zs.avail_in >= 2 && zs.next_in[0] == 0x1f && zs.next_in[1] == 0x8b) {
        inflateReset(&zs);
        continue;
      }
      std::string msg = "corrupt gzip file: " + std::to_string(zs.avail_in) +
                        " bytes of trailing garbage after the compressed data";
      inflateEnd(&zs);
      return makeError(path, msg);
    }
    if (rc == Z_OK)
      continue;
    if (rc == Z_BUF_ERROR && zs.avail_in == 0) {
      inflateEnd(&zs);
      return makeError(path, "truncated gzip file (the compressed stream ends early)");
    }
    std::string msg = "corrupt gzip file: ";
    msg += zs.msg ? std::string(zs.msg) : "zlib error " + std::to_string(rc);
    inflateEnd(&zs);
    return makeError(path, msg);
  }
  inflateEnd(&zs);
  return out;
}
#endif

Expected<std::vector<uint8_t>> readFileMaybeGzip(const std::string &path) {
  Expected<std::vector<uint8_t>> raw = readFile(path);
  if (!raw)
    return raw;
  if (raw->size() < 2 || (*raw)[0] != 0x1f || (*raw)[1] != 0x8b)
    return raw;
#ifdef LPC_RUNTIME_HAVE_ZLIB
  return gunzip(*raw, path);
#else
  return makeError(path, "is gzip-compressed, but this lpc runtime was built "
                         "without zlib (gunzip the file first)");
#endif
}

//===----------------------------------------------------------------------===//
// AtomicFileWriter
//===----------------------------------------------------------------------===//

namespace testing {
static WriteFault pendingFault = WriteFault::None;
void injectWriteFault(WriteFault fault) { pendingFault = fault; }
} // namespace testing

/// True (once) when the injected fault is `f`.
static bool faultAt(testing::WriteFault f) {
  if (testing::pendingFault != f)
    return false;
  testing::pendingFault = testing::WriteFault::None;
  return true;
}

static std::string directoryOf(const std::string &path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos)
    return ".";
  if (slash == 0)
    return "/";
  return path.substr(0, slash);
}

AtomicFileWriter::~AtomicFileWriter() { abort(); }

void AtomicFileWriter::abort() {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  if (!tempPath_.empty()) {
    ::unlink(tempPath_.c_str());
    tempPath_.clear();
  }
}

Error AtomicFileWriter::open(const std::string &path) {
  abort();
  path_ = path;
  tempPath_ = path + ".tmp." + std::to_string(::getpid());
  bool injected = faultAt(testing::WriteFault::Open);
  fd_ = injected ? -1
                 : ::open(tempPath_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    int err = injected ? EIO : errno;
    std::string temp = tempPath_;
    tempPath_.clear(); // nothing was created
    return sysError(path, "cannot create temporary file " + temp, err);
  }
  return Error::success();
}

Error AtomicFileWriter::write(const void *data, size_t size) {
  if (fd_ < 0)
    return makeError(path_, "write to a file that is not open");
  if (faultAt(testing::WriteFault::Write)) {
    std::string path = path_;
    abort();
    return sysError(path, "write failed", EIO);
  }
  const uint8_t *p = static_cast<const uint8_t *>(data);
  while (size > 0) {
    ssize_t n = ::write(fd_, p, size);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      int err = errno;
      std::string path = path_;
      abort();
      return sysError(path, "write failed", err);
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
  return Error::success();
}

Error AtomicFileWriter::commit() {
  if (fd_ < 0)
    return makeError(path_, "commit of a file that is not open");
  std::string path = path_;
  int err = 0;
  if (faultAt(testing::WriteFault::Fsync))
    err = EIO;
  else if (::fsync(fd_) != 0)
    err = errno;
  if (err) {
    abort();
    return sysError(path, "fsync failed", err);
  }
  if (::close(fd_) != 0) {
    err = errno;
    fd_ = -1;
    abort();
    return sysError(path, "close failed", err);
  }
  fd_ = -1;
  if (faultAt(testing::WriteFault::Rename))
    err = EIO;
  else if (::rename(tempPath_.c_str(), path.c_str()) != 0)
    err = errno;
  if (err) {
    std::string temp = tempPath_;
    abort();
    return sysError(path, "cannot rename " + temp + " to it", err);
  }
  tempPath_.clear();
  // Make the rename durable; failure here does not undo the (done) rename.
  int dfd = ::open(directoryOf(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return Error::success();
}

Error writeFileAtomic(const std::string &path, const void *data, size_t size) {
  AtomicFileWriter w;
  if (Error e = w.open(path))
    return e;
  if (Error e = w.write(data, size))
    return e;
  return w.commit();
}

} // namespace rt
} // namespace lpc
