//===- ArtifactValidate.cpp - the CUDA artifact: validation ---------------===//
//
// What a parsed artifact (Artifact.cpp) must satisfy before anything runs:
// views inside their spaces, launches, GEMMs, copies, collectives and
// attention ops consistent with their operands, and the device's launch
// limits.
//
//===----------------------------------------------------------------------===//

#include "lpc/Runtime/CudaArtifact.h"

#include "PtxScan.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

namespace lpc {
namespace rt {
namespace cuda {

/// a * b, or nullopt on int64 overflow.
static std::optional<int64_t> mulChecked(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r))
    return std::nullopt;
  return r;
}

//===----------------------------------------------------------------------===//
// Validation
//===----------------------------------------------------------------------===//

namespace {

class Validator {
public:
  Validator(const ArtifactFunction &f, const std::string &source)
      : f_(f), source_(source) {}

  Error fail(const std::string &where, const std::string &what) const {
    return makeError(source_, "function '" + f_.name + "'" +
                                  (where.empty() ? "" : ", " + where) + ": " + what);
  }

  /// Bytes of the space a view reads; an error if its index is out of range.
  Expected<uint64_t> spaceBytes(const View &v, const std::string &where) const {
    size_t count = v.space == ViewSpace::Arg      ? f_.args.size()
                   : v.space == ViewSpace::Result ? f_.results.size()
                                                  : f_.buffers.size();
    if (v.index >= count)
      return fail(where, std::string(viewSpaceName(v.space)) + " " +
                             std::to_string(v.index) + " does not exist (" +
                             std::to_string(count) + " " + viewSpaceName(v.space) +
                             (count == 1 ? "" : "s") + ")");
    if (v.space == ViewSpace::Arg)
      return uint64_t(f_.args[v.index].byteSize());
    if (v.space == ViewSpace::Result)
      return uint64_t(f_.results[v.index].byteSize());
    return f_.buffers[v.index].bytes;
  }

  /// The index exists and the extreme elements lie inside the space.
  Error view(const View &v, const std::string &where) const {
    Expected<uint64_t> space = spaceBytes(v, where);
    if (!space)
      return space.takeError();
    if (v.sizes.size() != v.strides.size())
      return fail(where, "view has " + std::to_string(v.sizes.size()) + " sizes but " +
                             std::to_string(v.strides.size()) + " strides");
    if (v.numElements() < 0)
      return fail(where, "view sizes " + shapeString(v.sizes) + " overflow");
    if (v.numElements() == 0)
      return Error::success(); // touches nothing
    // The lowest and highest element offsets, in int64 (overflow = error).
    int64_t lo = v.offset, hi = v.offset;
    for (size_t d = 0; d < v.sizes.size(); ++d) {
      std::optional<int64_t> span = mulChecked(v.sizes[d] - 1, v.strides[d]);
      int64_t &end = span && *span < 0 ? lo : hi;
      if (!span || __builtin_add_overflow(end, *span, &end))
        return fail(where, "view extent overflows int64");
    }
    std::optional<int64_t> first = mulChecked(lo, v.elemBytes);
    std::optional<int64_t> last = mulChecked(hi, v.elemBytes);
    std::string what =
        std::string("view of ") + viewSpaceName(v.space) + " " + std::to_string(v.index);
    if (!first || !last || *last > INT64_MAX - int64_t(v.elemBytes))
      return fail(where, what + " overflows int64 bytes");
    if (*first < 0)
      return fail(where, what + " starts at byte " + std::to_string(*first));
    uint64_t end = uint64_t(*last) + v.elemBytes;
    if (end > *space)
      return fail(where, what + " reaches byte " + std::to_string(end) + " of " +
                             std::to_string(*space));
    return Error::success();
  }

  Error launch(const LaunchOp &l, const std::string &where) const {
    if (l.module >= f_.modules.size())
      return fail(where, "module " + std::to_string(l.module) + " does not exist (" +
                             std::to_string(f_.modules.size()) + " modules)");
    if (!l.grid.x || !l.grid.y || !l.grid.z || !l.block.x || !l.block.y || !l.block.z)
      return fail(where, "empty grid or block (" + dims(l.grid) + " x " + dims(l.block) + ")");
    // CUDA's limits (every chip lpc targets): cuLaunchKernel would refuse.
    uint64_t threads = uint64_t(l.block.x) * l.block.y * l.block.z;
    if (l.grid.x > 0x7fffffffu || l.grid.y > 65535 || l.grid.z > 65535 || threads > 1024 ||
        l.block.z > 64)
      return fail(where, "launch shape " + dims(l.grid) + " x " + dims(l.block) +
                             " exceeds CUDA's limits (grid 2^31-1 x 65535 x 65535, blocks of "
                             "1024 threads, z <= 64)");
    std::vector<unsigned> passed;
    for (size_t i = 0; i < l.params.size(); ++i) {
      const LaunchParam &p = l.params[i];
      switch (p.kind) {
      case LaunchParam::Kind::View:
        if (Error e = view(p.view, where + ": param " + std::to_string(i)))
          return e;
        passed.insert(passed.end(), 3 + 2 * p.view.sizes.size(), 8);
        break;
      case LaunchParam::Kind::I32:
      case LaunchParam::Kind::F32:
        passed.push_back(4);
        break;
      default:
        passed.push_back(8);
      }
    }
    if (l.kernelParamBytes() > kMaxKernelParamBytes)
      return fail(where, "kernel parameters take " + std::to_string(l.kernelParamBytes()) +
                             " bytes; CUDA allows at most " +
                             std::to_string(kMaxKernelParamBytes));
    const ArtifactModule &m = f_.modules[l.module];
    std::optional<std::vector<unsigned>> declared = ptx::entryParams(m.ptx, l.kernel);
    std::string kernel = "kernel '" + l.kernel + "'";
    if (!declared)
      return fail(where, kernel + " is not in module " + std::to_string(l.module) + " ('" +
                             m.name + "'): its PTX has no readable '.entry " + l.kernel +
                             "('");
    if (declared->size() != passed.size())
      return fail(where, kernel + " declares " + std::to_string(declared->size()) +
                             " parameters; the launch passes " +
                             std::to_string(passed.size()) +
                             " (a view is 3 + 2 * rank)");
    for (size_t i = 0; i < passed.size(); ++i)
      if (passed[i] != (*declared)[i])
        return fail(where, kernel + " parameter " + std::to_string(i) + " is " +
                               std::to_string((*declared)[i]) +
                               " bytes in the PTX; the launch passes " +
                               std::to_string(passed[i]));
    return Error::success();
  }

  Error gemm(const GemmOp &g, const std::string &where) const {
    struct Operand {
      const char *name;
      const View &v;
      DType type;
    } operands[] = {{"a", g.a, g.aType}, {"b", g.b, g.bType}, {"c", g.c, g.cType}};
    for (const Operand &o : operands) {
      std::string here = where + ": " + o.name;
      if (Error e = view(o.v, here))
        return e;
      if (o.v.sizes.size() != 3)
        return fail(here, "GEMM views are rank 3 ([batch, rows, columns]), not rank " +
                              std::to_string(o.v.sizes.size()));
      if (!o.v.isContiguous())
        return fail(here, "GEMM views must be contiguous row-major (sizes " +
                              shapeString(o.v.sizes) + ", strides " +
                              shapeString(o.v.strides) + ")");
      if (o.v.elemBytes != dtypeSize(o.type))
        return fail(here, "elem_bytes " + std::to_string(o.v.elemBytes) + " but the type is " +
                              dtypeName(o.type));
    }
    GemmDesc d = g.desc();
    std::vector<int64_t> wantA = g.transA ? std::vector<int64_t>{d.batch, d.k, d.m}
                                          : std::vector<int64_t>{d.batch, d.m, d.k};
    int64_t batchB = g.broadcastB ? 1 : d.batch;
    std::vector<int64_t> wantB = g.transB ? std::vector<int64_t>{batchB, d.n, d.k}
                                          : std::vector<int64_t>{batchB, d.k, d.n};
    std::string dimsText = " (from C " + shapeString(g.c.sizes) + ": batch " +
                           std::to_string(d.batch) + ", M " + std::to_string(d.m) + ", N " +
                           std::to_string(d.n) + "; K " + std::to_string(d.k) + " from A" +
                           (g.transA ? ", trans_a" : "") + (g.transB ? ", trans_b" : "") +
                           (g.broadcastB ? ", broadcast_b" : "") + ")";
    if (g.a.sizes != wantA)
      return fail(where, "A is " + shapeString(g.a.sizes) + ", expected " +
                             shapeString(wantA) + dimsText);
    if (g.b.sizes != wantB)
      return fail(where, "B is " + shapeString(g.b.sizes) + ", expected " +
                             shapeString(wantB) + dimsText);
    // Types, dimensions and layouts cuBLASLt accepts, checked now rather
    // than at the first run.
    if (Error e = validateGemm(d))
      return fail(where, e.message());
    if (g.aScale.has_value() != g.bScale.has_value())
      return fail(where, "a_scale and b_scale come together");
    if (g.aScale && !d.isFP8())
      return fail(where, "scales apply to FP8 GEMMs only");
    for (auto [name, s] : {std::pair<const char *, const std::optional<View> *>{"a_scale", &g.aScale},
                           {"b_scale", &g.bScale}}) {
      if (!*s)
        continue;
      std::string here = where + ": " + name;
      if (Error e = view(**s, here))
        return e;
      if (!(*s)->sizes.empty() || (*s)->elemBytes != 4)
        return fail(here, "a scale is a rank-0 F32 view (sizes [], elem_bytes 4)");
    }
    if (g.bias) {
      std::string here = where + ": bias";
      if (Error e = view(*g.bias, here))
        return e;
      if (g.bias->sizes != std::vector<int64_t>{d.n} || !g.bias->isContiguous() ||
          g.bias->elemBytes != dtypeSize(gemmBiasType(d)))
        return fail(here, "the bias is a contiguous [" + std::to_string(d.n) + "] view of " +
                              dtypeName(gemmBiasType(d)) + " (one per column of C)");
    }
    return Error::success();
  }

  Error copy(const CopyOp &c, const std::string &where) const {
    for (auto [name, v] : {std::pair<const char *, const View *>{"src", &c.src}, {"dst", &c.dst}}) {
      std::string here = where + ": " + name;
      if (Error e = view(*v, here))
        return e;
      if (!v->isContiguous())
        return fail(here, "copy views must be contiguous row-major (sizes " +
                              shapeString(v->sizes) + ", strides " +
                              shapeString(v->strides) + ")");
    }
    uint64_t src = uint64_t(c.src.numElements()) * c.src.elemBytes;
    uint64_t dst = uint64_t(c.dst.numElements()) * c.dst.elemBytes;
    if (src != dst)
      return fail(where, "copies " + std::to_string(src) + " bytes into " +
                             std::to_string(dst));
    return Error::success();
  }

  /// The collectives (CudaNccl.h): contiguous views of the dtype whose
  /// element counts fit the kind and the rank count.
  Error collective(const CollectiveOp &c, const std::string &where) const {
    for (auto [name, v] : {std::pair<const char *, const View *>{"in", &c.in}, {"out", &c.out}}) {
      std::string here = where + ": " + name;
      if (Error e = view(*v, here))
        return e;
      if (!v->isContiguous())
        return fail(here, "collective views must be contiguous row-major (sizes " +
                              shapeString(v->sizes) + ", strides " +
                              shapeString(v->strides) + ")");
      if (v->elemBytes != dtypeSize(c.dtype))
        return fail(here, "elem_bytes " + std::to_string(v->elemBytes) + " but the dtype is " +
                              dtypeName(c.dtype));
    }
    if (c.kind != CollectiveKind::Shard && c.dtype != DType::F32 && c.dtype != DType::BF16 &&
        c.dtype != DType::F16 && c.dtype != DType::F8_E4M3 && c.dtype != DType::F8_E5M2)
      return fail(where, std::string("dtype ") + dtypeName(c.dtype) +
                             " (collectives move F32, BF16, F16 or FP8)");
    if (c.kind != CollectiveKind::AllReduce && c.ranks < 1)
      return fail(where, "ranks must be at least 1");
    int64_t in = c.in.numElements(), out = c.out.numElements();
    if (c.kind == CollectiveKind::AllToAll) {
      // Rank j's block r lands in rank r's block j: same sizes, whole
      // blocks, and out written while in is still being sent.
      if (in != out)
        return fail(where, "in has " + std::to_string(in) + " elements and out " +
                               std::to_string(out) + " (an all_to_all keeps the count)");
      if (in % c.ranks != 0)
        return fail(where, std::to_string(in) + " elements are not " + std::to_string(c.ranks) +
                               " equal blocks (one per rank)");
      if (in > 0 && overlaps(c.in, c.out))
        return fail(where, std::string("in and out share bytes of ") +
                               viewSpaceName(c.in.space) + " " + std::to_string(c.in.index) +
                               " (an all_to_all writes out while it sends in)");
      return Error::success();
    }
    // in = out, or one side holds `ranks` blocks of the other.
    int64_t blocks = c.kind == CollectiveKind::AllReduce ? 1 : c.ranks;
    bool gathers = c.kind == CollectiveKind::AllGather;
    int64_t small = gathers ? in : out, large = gathers ? out : in;
    if (large % blocks != 0 || large / blocks != small)
      return fail(where, std::string(gathers ? "out" : "in") + " has " + std::to_string(large) +
                             " elements; " + (gathers ? "in" : "out") + " has " +
                             std::to_string(small) + " and there are " + std::to_string(blocks) +
                             " block" + (blocks == 1 ? "" : "s"));
    return Error::success();
  }

  /// The attention ops (CudaAttention.h): what the runtime and cuDNN rely
  /// on, each rule naming the key it is about.
  Error attention(const AttentionOp &a, const std::string &where) const {
    if (a.dtype != DType::BF16 && a.dtype != DType::F16)
      return fail(where, std::string("dtype: ") + dtypeName(a.dtype) +
                             " (attention takes BF16 or F16)");
    struct Operand {
      const char *name;
      const View *v;
      bool output;
    };
    std::vector<Operand> ops4 = {{"q", &a.q, false}, {"k", &a.k, false}, {"v", &a.v, false},
                                 {"o", &a.o, !a.backward}};
    if (a.backward)
      ops4.insert(ops4.end(), {{"do", &a.dO, false},
                               {"dq", &a.dq, true},
                               {"dk", &a.dk, true},
                               {"dv", &a.dv, true}});
    for (const Operand &o : ops4) {
      std::string here = where + ": " + o.name;
      if (Error e = view(*o.v, here))
        return e;
      if (o.v->sizes.size() != 4)
        return fail(here, "attention views are rank 4 ([B, H, S, D]), not rank " +
                              std::to_string(o.v->sizes.size()));
      if (o.v->elemBytes != 2)
        return fail(here, "elem_bytes " + std::to_string(o.v->elemBytes) + " but the dtype is " +
                              dtypeName(a.dtype) + " (2 bytes)");
      if (o.v->strides[3] != 1)
        return fail(here, "the last stride must be 1 (strides " + shapeString(o.v->strides) +
                              "): cuDNN reads rows of D contiguous elements");
      for (int64_t n : o.v->sizes)
        if (n < 1)
          return fail(here, "sizes " + shapeString(o.v->sizes) + " has an empty dimension");
    }
    {
      std::string here = where + ": lse";
      if (Error e = view(a.lse, here))
        return e;
      if (a.lse.sizes.size() != 3 || a.lse.elemBytes != 4 || !a.lse.isContiguous())
        return fail(here, "lse is a contiguous [B, H, Sq] F32 view (elem_bytes 4); got sizes " +
                              shapeString(a.lse.sizes) + ", strides " +
                              shapeString(a.lse.strides) + ", elem_bytes " +
                              std::to_string(a.lse.elemBytes));
    }
    // Shapes: B, H, Sq, D from q; Skv from k; Dv from v.
    const std::vector<int64_t> &q = a.q.sizes;
    int64_t B = q[0], H = q[1], Sq = q[2], D = q[3], Skv = a.k.sizes[2], Dv = a.v.sizes[3];
    std::string dims = " (B " + std::to_string(B) + ", H " + std::to_string(H) + ", Sq " +
                       std::to_string(Sq) + ", D " + std::to_string(D) + " from q; Skv " +
                       std::to_string(Skv) + " from k; Dv " + std::to_string(Dv) + " from v)";
    std::vector<std::pair<Operand, std::vector<int64_t>>> shapes = {
        {ops4[1], {B, H, Skv, D}}, {ops4[2], {B, H, Skv, Dv}}, {ops4[3], {B, H, Sq, Dv}}};
    if (a.backward)
      shapes.insert(shapes.end(), {{ops4[4], {B, H, Sq, Dv}},
                                   {ops4[5], {B, H, Sq, D}},
                                   {ops4[6], {B, H, Skv, D}},
                                   {ops4[7], {B, H, Skv, Dv}}});
    for (const auto &[o, want] : shapes)
      if (o.v->sizes != want)
        return fail(where + ": " + o.name, "is " + shapeString(o.v->sizes) + ", expected " +
                                               shapeString(want) + dims);
    if (a.lse.sizes != std::vector<int64_t>{B, H, Sq})
      return fail(where + ": lse", "is " + shapeString(a.lse.sizes) + ", expected " +
                                       shapeString({B, H, Sq}) + dims);
    // cuDNN's limits (CudaAttention.h): head dims, alignment.
    for (auto [key, name, n] : {std::tuple<const char *, const char *, int64_t>{"q", "D", D},
                                {"v", "Dv", Dv}})
      if (n % kAttentionHeadDimMultiple || n > kAttentionMaxHeadDimSm90)
        return fail(where + ": " + key,
                    std::string("head dim ") + name + " = " + std::to_string(n) +
                        ": cuDNN's fused attention takes multiples of 8 up to 256 (128 before "
                        "sm_90)");
    for (const Operand &o : ops4) {
      bool aligned = o.v->offset % kAttentionHeadDimMultiple == 0;
      for (size_t d = 0; d < 3; ++d)
        aligned = aligned && o.v->strides[d] % kAttentionHeadDimMultiple == 0;
      if (!aligned)
        return fail(where + ": " + o.name,
                    "offset " + std::to_string(o.v->offset) + " and strides " +
                        shapeString(o.v->strides) +
                        " must be multiples of 8 elements (16 bytes: cuDNN's tensors are 16-byte "
                        "aligned)");
    }
    if (a.lse.offset % 4)
      return fail(where + ": lse", "offset " + std::to_string(a.lse.offset) +
                                       " must be a multiple of 4 elements (16 bytes)");
    if (a.causal && Sq > Skv)
      return fail(where + ": causal",
                  "Sq " + std::to_string(Sq) + " > Skv " + std::to_string(Skv) +
                      ": the bottom-right aligned causal mask leaves the first Sq - Skv rows "
                      "without a key (cuDNN refuses it)");
    if (!std::isfinite(a.scale) || float(a.scale) == 0.0f || !std::isfinite(float(a.scale)))
      return fail(where + ": scale", "must be a finite, non-zero f32 (got " +
                                         std::to_string(a.scale) + ")");
    // Outputs share no bytes with inputs (cuDNN reads while it writes).
    std::vector<Operand> reads, writes;
    for (const Operand &o : ops4)
      (o.output ? writes : reads).push_back(o);
    (a.backward ? reads : writes).push_back({"lse", &a.lse, !a.backward});
    for (const Operand &w : writes)
      for (const Operand &r : reads)
        if (overlaps(*w.v, *r.v))
          return fail(where + ": " + w.name, std::string("shares bytes of ") +
                                                 viewSpaceName(w.v->space) + " " +
                                                 std::to_string(w.v->index) + " with " + r.name +
                                                 " (an output must not overlap an input)");
    if (Error e = validateAttention(a.desc()))
      return fail(where, e.message());
    return Error::success();
  }

  /// Whether two (validated, non-empty) views' byte ranges meet.
  static bool overlaps(const View &x, const View &y) {
    if (x.space != y.space || x.index != y.index)
      return false;
    auto range = [](const View &v) {
      int64_t lo = v.offset, hi = v.offset;
      for (size_t d = 0; d < v.sizes.size(); ++d)
        (v.strides[d] < 0 ? lo : hi) += (v.sizes[d] - 1) * v.strides[d];
      return std::make_pair(lo * int64_t(v.elemBytes), (hi + 1) * int64_t(v.elemBytes));
    };
    auto [xa, xb] = range(x);
    auto [ya, yb] = range(y);
    return xa < yb && ya < xb;
  }

  Error run() const {
    if (f_.name.empty())
      return makeError(source_, "a function has an empty name");
    for (auto [kind, slots] : {std::pair<const char *, const std::vector<ArtifactSlot> *>{
                                   "arg", &f_.args},
                               {"result", &f_.results}})
      for (size_t i = 0; i < slots->size(); ++i) {
        const ArtifactSlot &s = (*slots)[i];
        if (s.byteSize() == SIZE_MAX)
          return fail(std::string(kind) + " " + std::to_string(i) +
                          (s.name.empty() ? "" : " ('" + s.name + "')"),
                      "shape " + shapeString(s.shape) + " overflows");
      }
    for (size_t i = 0; i < f_.buffers.size(); ++i) {
      const ArtifactBuffer &b = f_.buffers[i];
      std::string where = "buffer " + std::to_string(i);
      if (b.offset % 256)
        return fail(where, "offset " + std::to_string(b.offset) +
                               " is not a multiple of 256");
      if (b.offset > f_.arenaBytes || b.bytes > f_.arenaBytes - b.offset)
        return fail(where, "bytes [" + std::to_string(b.offset) + ", " +
                               std::to_string(b.offset + b.bytes) +
                               ") leave the arena of " + std::to_string(f_.arenaBytes) +
                               " bytes");
    }
    for (size_t i = 0; i < f_.modules.size(); ++i)
      if (f_.modules[i].ptx.empty())
        return fail("module " + std::to_string(i), "empty PTX");
    for (size_t i = 0; i < f_.ops.size(); ++i) {
      const ArtifactOp &op = f_.ops[i];
      std::string where = "op " + std::to_string(i) + " (" + opLabel(op) + ")";
      Error e;
      if (const LaunchOp *l = std::get_if<LaunchOp>(&op))
        e = launch(*l, where);
      else if (const GemmOp *g = std::get_if<GemmOp>(&op))
        e = gemm(*g, where);
      else if (const AttentionOp *a = std::get_if<AttentionOp>(&op))
        e = attention(*a, where);
      else if (const CollectiveOp *c = std::get_if<CollectiveOp>(&op))
        e = collective(*c, where);
      else
        e = copy(*std::get_if<CopyOp>(&op), where);
      if (e)
        return e;
    }
    return Error::success();
  }

private:
  static std::string dims(const Dim3 &d) {
    return "[" + std::to_string(d.x) + ", " + std::to_string(d.y) + ", " +
           std::to_string(d.z) + "]";
  }

  const ArtifactFunction &f_;
  const std::string &source_;
};

} // namespace

Error ArtifactFunction::validate(const std::string &source) const {
  return Validator(*this, source).run();
}

LaunchLimits launchLimits(const DeviceInfo &info, int driverVersion) {
  LaunchLimits l;
  l.paramBytes = driverVersion >= 12010 && info.ccMajor >= 7 ? kMaxKernelParamBytes : 4096;
  l.sharedPerBlock = size_t(std::max(info.sharedPerBlock, 0));
  l.sharedPerBlockOptin = std::max(l.sharedPerBlock, size_t(std::max(info.sharedPerBlockOptin, 0)));
  return l;
}

Error checkLaunchLimits(const ArtifactFunction &f, const LaunchLimits &limits,
                        const std::function<size_t(size_t op)> &staticShared,
                        const std::string &source) {
  for (size_t i = 0; i < f.ops.size(); ++i) {
    const LaunchOp *l = std::get_if<LaunchOp>(&f.ops[i]);
    if (!l)
      continue;
    auto fail = [&](const std::string &what) {
      return makeError(source, "function '" + f.name + "', op " + std::to_string(i) + " (" +
                                   opLabel(f.ops[i]) + "): " + what);
    };
    size_t params = l->kernelParamBytes();
    if (params > limits.paramBytes)
      return fail("kernel parameters take " + std::to_string(params) +
                  " bytes; this device and driver allow " + std::to_string(limits.paramBytes) +
                  (limits.paramBytes < kMaxKernelParamBytes
                       ? " (32764 need a CUDA 12.1 driver and a Volta or newer GPU)"
                       : ""));
    size_t fixed = staticShared(i), dynamic = l->sharedBytes;
    if (fixed > limits.sharedPerBlock)
      return fail("the kernel's static shared memory is " + std::to_string(fixed) +
                  " bytes; a block may have " + std::to_string(limits.sharedPerBlock));
    if (fixed + dynamic > limits.sharedPerBlockOptin)
      return fail(std::to_string(fixed) + " bytes of static and " + std::to_string(dynamic) +
                  " of dynamic shared memory exceed the device's " +
                  std::to_string(limits.sharedPerBlockOptin) + " per block");
  }
  return Error::success();
}

Error Artifact::validate() const {
  if (chip.empty())
    return makeError(source, "no chip");
  std::set<std::string> names;
  for (const ArtifactFunction &f : functions) {
    if (!names.insert(f.name).second)
      return makeError(source, "two functions are named '" + f.name + "'");
    if (Error e = f.validate(source))
      return e;
  }
  // cuDNN's head-dim limit before Hopper (CudaAttention.h): the chip says
  // which GPUs the artifact is for.
  int chipNumber = chip.rfind("sm_", 0) == 0 ? std::atoi(chip.c_str() + 3) : 0;
  int64_t maxHeadDim = attentionMaxHeadDim(chipNumber / 10);
  for (const ArtifactFunction &f : functions)
    for (size_t i = 0; i < f.ops.size(); ++i)
      if (const AttentionOp *a = std::get_if<AttentionOp>(&f.ops[i])) {
        AttentionDesc d = a->desc();
        if (d.d > maxHeadDim || d.dv > maxHeadDim)
          return makeError(source, "function '" + f.name + "', op " + std::to_string(i) + " (" +
                                       opLabel(f.ops[i]) + "): " + (d.d > maxHeadDim ? "q" : "v") +
                                       ": head dim " + (d.d > maxHeadDim ? "D = " + std::to_string(d.d)
                                                                         : "Dv = " + std::to_string(d.dv)) +
                                       " is above " + std::to_string(maxHeadDim) +
                                       ", cuDNN's limit for " + chip + " (256 from sm_90)");
      }
  return Error::success();
}

} // namespace cuda
} // namespace rt
} // namespace lpc
