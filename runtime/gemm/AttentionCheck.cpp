//===- AttentionCheck.cpp - the CPU attention calls' descriptor checks -===//
//
// The entry points of include/lpc/Runtime/Attention.h check every
// descriptor against the header's contract before touching memory; a
// fault aborts with the entry's name and every argument's sizes.
//
//===----------------------------------------------------------------------===//

#include "AttentionInternal.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace lpc {
namespace rt {
namespace attention {

/// Aborts with the entry's name, the message and every argument's sizes.
[[noreturn]] static void fail(const Call &c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void fail(const Call &c, const char *fmt, ...) {
  std::fprintf(stderr, "lpc runtime: %s: invalid call (a bug in the caller): ",
               c.entry);
  va_list args;
  va_start(args, fmt);
  std::vfprintf(stderr, fmt, args);
  va_end(args);
  std::fprintf(stderr, " (");
  for (int i = 0; i < c.n; ++i) {
    const Arg &a = c.args[i];
    std::fprintf(stderr, "%s=", a.name);
    if (a.null) {
      std::fprintf(stderr, "null ");
      continue;
    }
    for (int d = 0; d < a.rank; ++d)
      std::fprintf(stderr, "%s%" PRId64, d ? "x" : "[", a.sizes[d]);
    std::fprintf(stderr, "] ");
  }
  std::fprintf(stderr, "causal=%" PRId64 " scale=%g)\n", c.causal, c.scale);
  std::fflush(stderr);
  std::abort();
}

/// Whether no two elements of `a` share an address: sorted by |stride|,
/// each dimension's stride must step over everything the smaller ones span
/// (true of every dense layout, its transposes, slices and interleavings).
static bool elementsDisjoint(const Arg &a) {
  if (a.elements() == 0)
    return true;
  int64_t order[4];
  int n = 0;
  for (int d = 0; d < a.rank; ++d)
    if (a.sizes[d] > 1)
      order[n++] = d;
  std::sort(order, order + n, [&](int64_t x, int64_t y) {
    return std::llabs(a.strides[x]) < std::llabs(a.strides[y]);
  });
  int64_t span = 1; // elements covered by the dimensions so far
  for (int i = 0; i < n; ++i) {
    const int64_t s = std::llabs(a.strides[order[i]]);
    if (s < span)
      return false;
    span += s * (a.sizes[order[i]] - 1);
  }
  return true;
}

static void printSizes(char *buf, size_t len, const int64_t *sizes, int rank) {
  size_t used = 0;
  for (int d = 0; d < rank && used < len; ++d)
    used += std::snprintf(buf + used, len - used, "%s%" PRId64, d ? ", " : "[",
                          sizes[d]);
  if (used < len)
    std::snprintf(buf + used, len - used, "]");
}

void validate(const Call &c) {
  for (int i = 0; i < c.n; ++i)
    if (c.args[i].null)
      fail(c, "the descriptor of %s is null", c.args[i].name);
  for (int i = 0; i < c.n; ++i)
    for (int d = 0; d < c.args[i].rank; ++d)
      if (c.args[i].sizes[d] < 0)
        fail(c, "%s has a negative size (dimension %d: %" PRId64 ")",
             c.args[i].name, d, c.args[i].sizes[d]);
  const Arg &q = *c.find("q"), &k = *c.find("k"), &v = *c.find("v");
  const int64_t B = q.sizes[0], H = q.sizes[1], Sq = q.sizes[2],
                D = q.sizes[3], Skv = k.sizes[2], Dv = v.sizes[3];
  struct Want {
    const char *name, *dims;
    int64_t sizes[4];
  } wants[] = {{"k", "[B, H, Skv, D]", {B, H, Skv, D}},
               {"v", "[B, H, Skv, Dv]", {B, H, Skv, Dv}},
               {"o", "[B, H, Sq, Dv]", {B, H, Sq, Dv}},
               {"dout", "[B, H, Sq, Dv]", {B, H, Sq, Dv}},
               {"lse", "[B, H, Sq]", {B, H, Sq, 0}},
               {"mask", "[Sq, Skv]", {Sq, Skv, 0, 0}},
               {"dq", "[B, H, Sq, D]", {B, H, Sq, D}},
               {"dk", "[B, H, Skv, D]", {B, H, Skv, D}},
               {"dv", "[B, H, Skv, Dv]", {B, H, Skv, Dv}}};
  for (const Want &w : wants) {
    const Arg *a = c.find(w.name);
    if (!a)
      continue;
    if (std::memcmp(a->sizes, w.sizes, sizeof(int64_t) * a->rank) != 0) {
      char want[96], got[96];
      printSizes(want, sizeof want, w.sizes, a->rank);
      printSizes(got, sizeof got, a->sizes, a->rank);
      fail(c, "shape mismatch: %s is %s, expected %s = %s", w.name, got,
           w.dims, want);
    }
  }
  for (int i = 0; i < c.n; ++i)
    if (!c.args[i].data && c.args[i].elements() > 0)
      fail(c, "%s has a null data pointer", c.args[i].name);
  if (c.causal != 0 && c.causal != 1)
    fail(c, "causal must be 0 or 1, got %" PRId64, c.causal);
  if (!std::isfinite(c.scale))
    fail(c, "scale is not finite");
  for (int i = 0; i < c.n; ++i) {
    const Arg &a = c.args[i];
    if (a.output && !elementsDisjoint(a)) {
      char sizes[96], strides[96];
      printSizes(sizes, sizeof sizes, a.sizes, a.rank);
      printSizes(strides, sizeof strides, a.strides, a.rank);
      fail(c, "output %s has overlapping elements (sizes %s, strides %s)",
           a.name, sizes, strides);
    }
  }
}


} // namespace attention
} // namespace rt
} // namespace lpc
