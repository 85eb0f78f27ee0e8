//===- File.h - whole-file reads, gzip, atomic writes -----------*- C++ -*-===//

#ifndef LPC_RUNTIME_FILE_H
#define LPC_RUNTIME_FILE_H

#include "lpc/Runtime/Error.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace lpc {
namespace rt {

/// The whole file. Errors name the path and strerror ("No such file or
/// directory", "Is a directory", ...).
Expected<std::vector<uint8_t>> readFile(const std::string &path);

/// The whole file, gunzipped when it starts with the gzip magic (1f 8b), as
/// is; concatenated gzip members are read as one stream. Errors: the readFile
/// ones plus corrupt or truncated gzip data. Without zlib (LPC_RUNTIME_ZLIB
/// off) a gzip file is an error that says so.
Expected<std::vector<uint8_t>> readFileMaybeGzip(const std::string &path);

/// True when the runtime was built with zlib.
bool haveZlib();

/// True if `path` names an existing regular file.
bool isRegularFile(const std::string &path);

/// Writes a file atomically: the data goes to `<path>.tmp.<pid>` in the same
/// directory, which is fsync'ed, renamed over `path`, and the directory is
/// fsync'ed. On any failure the temp file is removed and an existing file at
/// `path` is left untouched. Use as:
///
///   AtomicFileWriter w;
///   if (Error e = w.open(path)) return e;
///   if (Error e = w.write(p, n)) return e;   // as often as needed
///   return w.commit();                        // destructor aborts if not done
class AtomicFileWriter {
public:
  AtomicFileWriter() = default;
  AtomicFileWriter(const AtomicFileWriter &) = delete;
  AtomicFileWriter &operator=(const AtomicFileWriter &) = delete;
  ~AtomicFileWriter();

  Error open(const std::string &path);
  Error write(const void *data, size_t size);
  /// fsync, rename, fsync the directory. After a failure the temp file is gone.
  Error commit();
  /// Removes the temp file (no-op if nothing is open).
  void abort();

  const std::string &tempPath() const { return tempPath_; }

private:
  int fd_ = -1;
  std::string path_, tempPath_;
};

/// One-shot atomic write of `size` bytes.
Error writeFileAtomic(const std::string &path, const void *data, size_t size);

namespace testing {
/// Fault injection for tests of the atomic writer: the next AtomicFileWriter
/// step named here fails as if the system call had failed (EIO), once.
enum class WriteFault { None, Open, Write, Fsync, Rename };
void injectWriteFault(WriteFault fault);
} // namespace testing

} // namespace rt
} // namespace lpc

#endif // LPC_RUNTIME_FILE_H
