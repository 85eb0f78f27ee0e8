//===- AttentionReference.h - attention on the host -------------*- C++ -*-===//
//
// Two host implementations of CudaAttention.h's semantics, internal to
// runtime/cuda:
//
//   - referenceAttentionForward / ...Backward: the oracle of the checks, in
//     double, one (batch, head) at a time on contiguous row-major arrays of
//     values already rounded to their formats (lpc-cuda-check's attention
//     self-test and the tests compare against it);
//   - HostAttention: the stand-in for cuDNN on the fake driver (whose
//     device pointers are host addresses), with the AttentionCallback
//     contract: reads the strided BF16/F16 views in place, computes in f32
//     (as cuDNN does: f32 scores, softmax and accumulation, P rounded to
//     the I/O type before the second GEMM), writes the rounded outputs.
//
// The two are written separately (layouts, precision, loop order) so that
// one checks the other.
//
//===----------------------------------------------------------------------===//

#ifndef LPC_RUNTIME_CUDA_ATTENTIONREFERENCE_H
#define LPC_RUNTIME_CUDA_ATTENTIONREFERENCE_H

#include "lpc/Runtime/CudaAttention.h"
#include "lpc/Runtime/CudaDriver.h"
#include "lpc/Runtime/HostFloat.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace lpc {
namespace rt {
namespace cuda {

/// Whether score (i, j) takes part (the bottom-right aligned causal mask).
inline bool attentionKeeps(const AttentionDesc &d, int64_t i, int64_t j) {
  return !d.causal || j <= i + (d.skv - d.sq);
}

/// One head, in double: q [Sq, D], k [Skv, D], v [Skv, Dv] row-major;
/// writes o [Sq, Dv] and lse [Sq].
inline void referenceAttentionForward(const AttentionDesc &d, const double *q, const double *k,
                                      const double *v, double *o, double *lse) {
  std::vector<double> s(size_t(d.skv));
  for (int64_t i = 0; i < d.sq; ++i) {
    double mx = -std::numeric_limits<double>::infinity();
    for (int64_t j = 0; j < d.skv; ++j) {
      if (!attentionKeeps(d, i, j)) {
        s[size_t(j)] = -std::numeric_limits<double>::infinity();
        continue;
      }
      double dot = 0;
      for (int64_t c = 0; c < d.d; ++c)
        dot += q[i * d.d + c] * k[j * d.d + c];
      s[size_t(j)] = double(d.scale) * dot;
      mx = std::max(mx, s[size_t(j)]);
    }
    double sum = 0;
    for (int64_t j = 0; j < d.skv; ++j)
      sum += attentionKeeps(d, i, j) ? std::exp(s[size_t(j)] - mx) : 0.0;
    lse[i] = mx + std::log(sum);
    for (int64_t c = 0; c < d.dv; ++c)
      o[i * d.dv + c] = 0;
    for (int64_t j = 0; j < d.skv; ++j) {
      if (!attentionKeeps(d, i, j))
        continue;
      double p = std::exp(s[size_t(j)] - lse[i]);
      for (int64_t c = 0; c < d.dv; ++c)
        o[i * d.dv + c] += p * v[j * d.dv + c];
    }
  }
}

/// One head, in double: given q, k, v, o [Sq, Dv], dO [Sq, Dv] and lse (the
/// op's inputs), writes dq [Sq, D], dk [Skv, D], dv [Skv, Dv].
inline void referenceAttentionBackward(const AttentionDesc &d, const double *q, const double *k,
                                       const double *v, const double *o, const double *dO,
                                       const double *lse, double *dq, double *dk, double *dv) {
  std::fill(dq, dq + d.sq * d.d, 0.0);
  std::fill(dk, dk + d.skv * d.d, 0.0);
  std::fill(dv, dv + d.skv * d.dv, 0.0);
  for (int64_t i = 0; i < d.sq; ++i) {
    double delta = 0;
    for (int64_t c = 0; c < d.dv; ++c)
      delta += dO[i * d.dv + c] * o[i * d.dv + c];
    for (int64_t j = 0; j < d.skv; ++j) {
      if (!attentionKeeps(d, i, j))
        continue;
      double dot = 0, dp = 0;
      for (int64_t c = 0; c < d.d; ++c)
        dot += q[i * d.d + c] * k[j * d.d + c];
      for (int64_t c = 0; c < d.dv; ++c)
        dp += dO[i * d.dv + c] * v[j * d.dv + c];
      double p = std::exp(double(d.scale) * dot - lse[i]);
      double ds = p * (dp - delta) * double(d.scale);
      for (int64_t c = 0; c < d.d; ++c) {
        dq[i * d.d + c] += ds * k[j * d.d + c];
        dk[j * d.d + c] += ds * q[i * d.d + c];
      }
      for (int64_t c = 0; c < d.dv; ++c)
        dv[j * d.dv + c] += p * dO[i * d.dv + c];
    }
  }
}

/// cuDNN's stand-in on the fake driver (see the top). `device`, when set,
/// is synchronized first: the work queued before must have run.
struct HostAttention {
  Device *device = nullptr;
  int calls = 0;

  Error operator()(const AttentionDesc &d, const AttentionOperands &ops) {
    ++calls;
    if (Error e = validateAttention(d, ops))
      return e;
    if (device)
      if (Error e = device->synchronize())
        return e;
    const MiniFloat &fmt = d.dtype == DType::F16 ? kF16 : kBF16;
    auto at = [](CUdeviceptr base, const AttentionDesc::Strides &s, int64_t b, int64_t h,
                 int64_t i, int64_t c) {
      return reinterpret_cast<uint16_t *>(uintptr_t(base)) +
             (b * s[0] + h * s[1] + i * s[2] + c * s[3]);
    };
    auto load = [&](CUdeviceptr base, const AttentionDesc::Strides &s, int64_t b, int64_t h,
                    int64_t i, int64_t c) { return float(fmt.decode(*at(base, s, b, h, i, c))); };
    auto store = [&](CUdeviceptr base, const AttentionDesc::Strides &s, int64_t b, int64_t h,
                     int64_t i, int64_t c, float x) {
      *at(base, s, b, h, i, c) = uint16_t(fmt.encode(double(x)));
    };
    auto round = [&](float x) { return float(fmt.decode(fmt.encode(double(x)))); };
    float *lse = reinterpret_cast<float *>(uintptr_t(ops.lse));
    const float ninf = -std::numeric_limits<float>::infinity();
    std::vector<float> s(size_t(d.skv)), acc;
    for (int64_t b = 0; b < d.b; ++b)
      for (int64_t h = 0; h < d.h; ++h) {
        float *rowLse = lse + (b * d.h + h) * d.sq;
        if (!d.backward) {
          acc.assign(size_t(d.dv), 0.0f);
          for (int64_t i = 0; i < d.sq; ++i) {
            float mx = ninf;
            for (int64_t j = 0; j < d.skv; ++j) {
              float dot = 0;
              for (int64_t c = 0; c < d.d; ++c)
                dot += load(ops.q, d.q, b, h, i, c) * load(ops.k, d.k, b, h, j, c);
              s[size_t(j)] = attentionKeeps(d, i, j) ? d.scale * dot : ninf;
              mx = std::max(mx, s[size_t(j)]);
            }
            float sum = 0;
            for (int64_t j = 0; j < d.skv; ++j)
              sum += std::exp(s[size_t(j)] - mx);
            std::fill(acc.begin(), acc.end(), 0.0f);
            for (int64_t j = 0; j < d.skv; ++j) {
              float p = round(std::exp(s[size_t(j)] - mx) / sum);
              for (int64_t c = 0; c < d.dv; ++c)
                acc[size_t(c)] += p * load(ops.v, d.v, b, h, j, c);
            }
            for (int64_t c = 0; c < d.dv; ++c)
              store(ops.o, d.o, b, h, i, c, acc[size_t(c)]);
            rowLse[i] = mx + std::log(sum);
          }
          continue;
        }
        // Backward: dq, dk, dv accumulated in f32 per head.
        std::vector<float> dq(size_t(d.sq * d.d), 0.0f), dk(size_t(d.skv * d.d), 0.0f),
            dv(size_t(d.skv * d.dv), 0.0f);
        for (int64_t i = 0; i < d.sq; ++i) {
          float delta = 0;
          for (int64_t c = 0; c < d.dv; ++c)
            delta += load(ops.dO, d.dO, b, h, i, c) * load(ops.o, d.o, b, h, i, c);
          for (int64_t j = 0; j < d.skv; ++j) {
            if (!attentionKeeps(d, i, j))
              continue;
            float dot = 0, dp = 0;
            for (int64_t c = 0; c < d.d; ++c)
              dot += load(ops.q, d.q, b, h, i, c) * load(ops.k, d.k, b, h, j, c);
            for (int64_t c = 0; c < d.dv; ++c)
              dp += load(ops.dO, d.dO, b, h, i, c) * load(ops.v, d.v, b, h, j, c);
            float p = std::exp(d.scale * dot - rowLse[i]);
            float ds = p * (dp - delta) * d.scale;
            float pr = round(p), dsr = round(ds); // the GEMM operands cuDNN rounds
            for (int64_t c = 0; c < d.d; ++c) {
              dq[size_t(i * d.d + c)] += ds * load(ops.k, d.k, b, h, j, c);
              dk[size_t(j * d.d + c)] += dsr * load(ops.q, d.q, b, h, i, c);
            }
            for (int64_t c = 0; c < d.dv; ++c)
              dv[size_t(j * d.dv + c)] += pr * load(ops.dO, d.dO, b, h, i, c);
          }
        }
        for (int64_t i = 0; i < d.sq; ++i)
          for (int64_t c = 0; c < d.d; ++c)
            store(ops.dq, d.dq, b, h, i, c, dq[size_t(i * d.d + c)]);
        for (int64_t j = 0; j < d.skv; ++j) {
          for (int64_t c = 0; c < d.d; ++c)
            store(ops.dk, d.dk, b, h, j, c, dk[size_t(j * d.d + c)]);
          for (int64_t c = 0; c < d.dv; ++c)
            store(ops.dV, d.dV, b, h, j, c, dv[size_t(j * d.dv + c)]);
        }
      }
    return Error::success();
  }
};

} // namespace cuda
} // namespace rt
} // namespace lpc

#endif // LPC_RUNTIME_CUDA_ATTENTIONREFERENCE_H
