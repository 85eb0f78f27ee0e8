//===- PtxScan.h - kernel signatures from PTX text --------------*- C++ -*-===//
//
// Just enough of PTX to read a kernel's parameter list: the artifact
// validator checks launch parameters against it before anything runs (the
// driver cannot: cuLaunchKernel gets a bare void** and reads as many
// parameters as the kernel declares), and the fake driver checks launches
// with it. Header-only and dependency-free because the fake driver, a
// stand-alone library, includes it too. Internal to runtime/cuda.
//
//===----------------------------------------------------------------------===//

#ifndef LPC_RUNTIME_CUDA_PTXSCAN_H
#define LPC_RUNTIME_CUDA_PTXSCAN_H

#include <cctype>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lpc {
namespace rt {
namespace cuda {
namespace ptx {

inline bool isIdentChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' ||
         c == '.' || c == '%';
}

inline size_t skipSpace(std::string_view s, size_t i) {
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i])))
    ++i;
  return i;
}

/// Bytes of a PTX fundamental type (".u64" -> 8); 0 if `t` is not one.
inline unsigned typeBytes(std::string_view t) {
  static const struct {
    const char *name;
    unsigned bytes;
  } kTypes[] = {{".b8", 1},  {".u8", 1},  {".s8", 1},  {".b16", 2}, {".u16", 2},
                {".s16", 2}, {".f16", 2}, {".b32", 4}, {".u32", 4}, {".s32", 4},
                {".f32", 4}, {".b64", 8}, {".u64", 8}, {".s64", 8}, {".f64", 8}};
  for (const auto &k : kTypes)
    if (t == k.name)
      return k.bytes;
  return 0;
}

/// One `.param` declaration: ".param .u64 .ptr .align 1 k_param_0" or
/// ".param .align 8 .b8 k_param_1[16]". Its size in bytes; 0 if unreadable.
inline unsigned paramBytes(std::string_view decl) {
  unsigned elem = 0, count = 1;
  bool sawParam = false;
  size_t i = 0;
  while ((i = skipSpace(decl, i)) < decl.size()) {
    size_t start = i;
    while (i < decl.size() && !std::isspace(static_cast<unsigned char>(decl[i])))
      ++i;
    std::string_view tok = decl.substr(start, i - start);
    if (tok == ".param")
      sawParam = true;
    else if (unsigned b = typeBytes(tok))
      elem = b;
    else if (size_t open = tok.find('['); open != std::string_view::npos)
      count = unsigned(std::strtoul(std::string(tok.substr(open + 1)).c_str(), nullptr, 10));
  }
  return sawParam ? elem * count : 0;
}

/// The byte size of each parameter of kernel `name`, in order; nullopt when
/// the text has no `.entry name(` (or its list is unreadable: a size of 0).
inline std::optional<std::vector<unsigned>> entryParams(std::string_view text,
                                                        std::string_view name) {
  size_t at = 0;
  while ((at = text.find(".entry", at)) != std::string_view::npos) {
    size_t i = skipSpace(text, at + 6);
    at += 6;
    if (i == at || text.compare(i, name.size(), name) != 0)
      continue;
    i += name.size();
    if (i < text.size() && isIdentChar(text[i]))
      continue; // a longer name with this prefix
    i = skipSpace(text, i);
    if (i >= text.size() || text[i] != '(')
      continue;
    std::vector<unsigned> params;
    size_t declStart = ++i;
    for (; i < text.size(); ++i) {
      char c = text[i];
      if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
        i = text.find('\n', i);
        if (i == std::string_view::npos)
          return std::nullopt;
        continue;
      }
      if (c != ',' && c != ')')
        continue;
      std::string_view decl = text.substr(declStart, i - declStart);
      if (skipSpace(decl, 0) < decl.size()) {
        unsigned bytes = paramBytes(decl);
        if (!bytes)
          return std::nullopt;
        params.push_back(bytes);
      }
      declStart = i + 1;
      if (c == ')')
        return params;
    }
    return std::nullopt;
  }
  return std::nullopt;
}

/// Every kernel (`.entry NAME`) the text defines, in order.
inline std::vector<std::string> entryNames(std::string_view text) {
  std::vector<std::string> names;
  size_t at = 0;
  while ((at = text.find(".entry", at)) != std::string_view::npos) {
    size_t i = skipSpace(text, at + 6);
    size_t start = i;
    while (i < text.size() && isIdentChar(text[i]))
      ++i;
    if (i > start && start > at + 6)
      names.emplace_back(text.substr(start, i - start));
    at += 6;
  }
  return names;
}

} // namespace ptx
} // namespace cuda
} // namespace rt
} // namespace lpc

#endif // LPC_RUNTIME_CUDA_PTXSCAN_H
