//===- OpenLibrary.h - dlopen of a CUDA library, with a clear error -*- C++ -*-===//
//
// INTERNAL to runtime/cuda: how cuBLASLt (Gemm.cpp) and cuDNN (Attention.cpp)
// are found. The user's environment variable names the only candidate when
// set; otherwise the loader's path, then the toolkit the runtime was built
// with (LPC_CUDA_TOOLKIT_LIBDIR, for machines where it is not on the path).
//
//===----------------------------------------------------------------------===//

#ifndef LPC_RUNTIME_CUDA_OPENLIBRARY_H
#define LPC_RUNTIME_CUDA_OPENLIBRARY_H

#include "lpc/Runtime/Error.h"

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <string>
#include <vector>

namespace lpc {
namespace rt {
namespace cuda {

struct OpenedLibrary {
  void *handle = nullptr;
  std::string path;
};

/// dlopen (RTLD_LAZY: a few functions of a large library are used) of the
/// first of: $envVar alone when set, else `names`, then `toolkitDir/names[0]`.
/// Fails with "<what> not found (tried ...)[: the loader's other error];
/// <advice>".
inline Expected<OpenedLibrary> openCudaLibrary(const char *envVar,
                                               std::vector<std::string> names,
                                               const std::string &toolkitDir,
                                               const std::string &what,
                                               const std::string &advice) {
  std::vector<std::string> candidates;
  const char *env = std::getenv(envVar);
  if (env && *env) {
    candidates.push_back(env); // the user's choice, and nothing else
  } else {
    candidates = names;
    if (!toolkitDir.empty() && !names.empty())
      candidates.push_back(toolkitDir + "/" + names.front());
  }
  std::string tried, otherError;
  for (const std::string &c : candidates) {
    if (void *handle = ::dlopen(c.c_str(), RTLD_LAZY | RTLD_LOCAL))
      return OpenedLibrary{handle, c};
    tried += (tried.empty() ? "" : ", ") + c;
    const char *err = ::dlerror();
    if (err && !std::strstr(err, "No such file") && otherError.empty())
      otherError = err;
  }
  return Error::make(what + " not found (tried " + tried + ")" +
                     (otherError.empty() ? "" : ": " + otherError) + "; " +
                     advice);
}

} // namespace cuda
} // namespace rt
} // namespace lpc

#endif // LPC_RUNTIME_CUDA_OPENLIBRARY_H
