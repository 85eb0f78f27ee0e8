//===- TensorData.cpp - examples as tensors; weights in and out -----------===//

#include "lpc/Runtime/TensorData.h"

#include "Position.h"
#include "lpc/Runtime/HostFloat.h"

#include <algorithm>
#include <set>
#include <cstring>
#include <limits>

namespace lpc {
namespace rt {

namespace {

using detail::fnv1a;
using detail::hex64;

bool isFloat(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16;
}

/// `t` converted to `to` (an exact widening for floats; integers checked to
/// fit I32). Returns "" or what is wrong.
std::string convert(const Tensor &t, DType to, Tensor &out) {
  out = Tensor(to, t.shape);
  int64_t n = t.numElements();
  if (t.dtype == to) {
    out.bytes = t.bytes;
    return "";
  }
  if (to == DType::F32 && (t.dtype == DType::F16 || t.dtype == DType::BF16)) {
    std::vector<double> v = decodeAs(t.dtype, t.bytes.data(), size_t(n));
    float *o = out.data<float>();
    for (int64_t i = 0; i < n; ++i)
      o[i] = float(v[i]);
    return "";
  }
  if (to == DType::I32 && t.dtype == DType::I64) {
    const int64_t *in = t.data<int64_t>();
    int32_t *o = out.data<int32_t>();
    for (int64_t i = 0; i < n; ++i) {
      if (in[i] < std::numeric_limits<int32_t>::min() ||
          in[i] > std::numeric_limits<int32_t>::max())
        return "element " + std::to_string(i) + " (" + std::to_string(in[i]) +
               ") does not fit the input's i32";
      o[i] = int32_t(in[i]);
    }
    return "";
  }
  return std::string("is ") + dtypeName(t.dtype) + ", the model wants " +
         dtypeName(to) +
         (isFloat(to) ? " (F32, BF16 or F16 are read)" : " (I32 or I64 are read)");
}

std::string listProblems(const std::string &path, const std::vector<std::string> &problems) {
  std::string msg = path + ":";
  for (const std::string &p : problems)
    msg += "\n  " + p;
  return msg;
}

/// `t` (the file's entry for the model's `what` `name`) converted to
/// `dtype`, or a problem listed: another shape, a dtype that does not
/// convert.
bool readAs(const Tensor &t, const std::string &name, const char *what,
            const std::vector<int64_t> &shape, DType dtype, Tensor &out,
            std::vector<std::string> &problems) {
  if (t.shape != shape) {
    problems.push_back("'" + name + "' is " + shapeString(t.shape) + ", the model's " + what +
                       " is " + shapeString(shape));
    return false;
  }
  if (std::string why = convert(t, dtype, out); !why.empty()) {
    problems.push_back("'" + name + "' " + why);
    return false;
  }
  return true;
}

} // namespace

void TensorDataset::gather(int64_t first, int64_t rows,
                           std::map<std::string, std::vector<uint8_t>> &out) const {
  for (const auto &[name, t] : columns) {
    size_t row = t.bytes.size() / size_t(numExamples);
    std::memcpy(out[name].data(), t.bytes.data() + size_t(first) * row,
                size_t(rows) * row);
  }
}

Expected<TensorDataset> loadTensorDataset(const std::string &path,
                                          const std::vector<InputSpec> &inputs) {
  Expected<SafetensorsFile> file = readSafetensors(path);
  if (!file)
    return file.takeError();
  TensorDataset ds;
  ds.path = path;
  std::vector<std::string> problems;
  int64_t n = -1;
  std::string firstName;
  for (const InputSpec &in : inputs) {
    auto it = file->tensors.find(in.name);
    std::vector<int64_t> rest(in.shape.begin() + 1, in.shape.end());
    std::string want = rest.empty() ? "[N]" : "[N, " + shapeString(rest).substr(1);
    if (it == file->tensors.end()) {
      problems.push_back("no tensor '" + in.name + "' for the model's input '" +
                         in.name + "' (" + dtypeName(in.dtype) + " " + want +
                         ")");
      continue;
    }
    const Tensor &t = it->second;
    bool shapeOk = t.shape.size() == in.shape.size() && !t.shape.empty();
    for (size_t d = 1; shapeOk && d < in.shape.size(); ++d)
      shapeOk = t.shape[d] == in.shape[d];
    if (!shapeOk) {
      problems.push_back("'" + in.name + "' is " + shapeString(t.shape) +
                         ", the model's input wants " + want);
      continue;
    }
    Tensor col;
    if (std::string why = convert(t, in.dtype, col); !why.empty()) {
      problems.push_back("'" + in.name + "' " + why);
      continue;
    }
    if (in.idBound > 0 && in.dtype == DType::I32) {
      // The first id outside the table's rows, by example and position.
      const int32_t *v = col.data<int32_t>();
      int64_t per = col.numElements() / std::max<int64_t>(t.shape[0], 1);
      for (int64_t i = 0; i < col.numElements(); ++i)
        if (v[i] < 0 || v[i] >= in.idBound) {
          problems.push_back("'" + in.name + "' example " + std::to_string(i / per) +
                             " holds id " + std::to_string(v[i]) +
                             ", outside the model's embedding of " +
                             std::to_string(in.idBound) + " rows [0, " +
                             std::to_string(in.idBound) + ")");
          break;
        }
    }
    if (n >= 0 && t.shape[0] != n) {
      problems.push_back("'" + in.name + "' has " + std::to_string(t.shape[0]) +
                         " examples, '" + firstName + "' " + std::to_string(n));
      continue;
    }
    if (n < 0) {
      n = t.shape[0];
      firstName = in.name;
    }
    ds.columns[in.name] = std::move(col);
  }
  for (const auto &[name, t] : file->tensors) {
    bool known = false;
    for (const InputSpec &in : inputs)
      known |= in.name == name;
    if (!known) {
      std::string names;
      for (const InputSpec &in : inputs)
        names += (names.empty() ? "" : ", ") + in.name;
      problems.push_back("tensor '" + name + "' is not an input of the model (its inputs: " +
                         names + ")");
    }
  }
  int64_t batch = inputs.empty() ? 0 : inputs.front().shape.front();
  if (problems.empty() && n < batch)
    problems.push_back(std::to_string(n) + " examples, fewer than one batch of " +
                       std::to_string(batch));
  if (!problems.empty())
    return Error::make(listProblems(path, problems));
  ds.numExamples = n;
  uint64_t h = detail::kFnv1aOffset;
  for (const auto &[name, t] : ds.columns) {
    h = fnv1a(h, reinterpret_cast<const uint8_t *>(name.data()), name.size());
    h = fnv1a(h, t.bytes.data(), t.bytes.size());
  }
  ds.fingerprint = h;
  return ds;
}

void TensorBatches::next(std::map<std::string, std::vector<uint8_t>> &inputs) {
  int64_t k = step_ % batchesPerEpoch();
  data_->gather(k * batch_, batch_, inputs);
  ++step_;
}

std::string TensorBatches::position() const {
  return "tensors-v1;examples=" + std::to_string(data_->numExamples) +
         ";fnv1a=" + hex64(data_->fingerprint) + ";batch=" + std::to_string(batch_) +
         ";step=" + std::to_string(step_);
}

Error TensorBatches::restore(const std::string &position) {
  static const char *const keys[] = {"examples", "fnv1a", "batch", "step"};
  const std::string what = "data position";
  Expected<std::map<std::string, std::string>> kv =
      detail::parsePosition(position, "tensors-v1", keys, 4, what);
  if (!kv)
    return kv.takeError();
  uint64_t v[4] = {0, 0, 0, 0};
  for (int i : {0, 2, 3}) {
    Expected<uint64_t> x = detail::positionU64(*kv, keys[i], what);
    if (!x)
      return x.takeError();
    v[i] = *x;
  }
  if (v[0] != uint64_t(data_->numExamples) || (*kv)["fnv1a"] != hex64(data_->fingerprint))
    return makeError(what, "was taken on other data (" + (*kv)["examples"] +
                               " examples, FNV-1a " + (*kv)["fnv1a"] + "; " + data_->path +
                               " has " + std::to_string(data_->numExamples) +
                               " examples, FNV-1a " + hex64(data_->fingerprint) + ")");
  if (v[2] != uint64_t(batch_))
    return makeError(what, "was taken with batch size " + (*kv)["batch"] +
                               ", this run has " + std::to_string(batch_));
  step_ = int64_t(v[3]);
  return Error::success();
}

Expected<InitWeights> loadInitWeights(const std::string &path,
                                      const std::vector<ParamSpec> &params,
                                      const std::vector<BufferSpec> &buffers) {
  Expected<SafetensorsFile> file = readSafetensors(path);
  if (!file)
    return file.takeError();
  InitWeights w;
  w.metadata = file->metadata;
  // A checkpoint of lpc-run (any precision policy) holds the parameters as
  // "param/NAME" next to optimizer and precision state.
  w.fromCheckpoint = w.metadata.count("model") && w.metadata.count("step") &&
                     w.metadata.count("mixed_precision");
  const std::string prefix = w.fromCheckpoint ? "param/" : "";
  std::vector<std::string> problems;
  for (const ParamSpec &p : params) {
    auto it = file->tensors.find(prefix + p.name);
    if (it == file->tensors.end()) {
      problems.push_back("no tensor for parameter '" + p.name + "' " + shapeString(p.shape) +
                         (w.fromCheckpoint ? " (an lpc-run checkpoint: '" + prefix + p.name + "')"
                                           : std::string()));
      continue;
    }
    Tensor f;
    if (!readAs(it->second, p.name, "parameter", p.shape, DType::F32, f, problems))
      continue;
    const float *v = f.data<float>();
    w.params[p.name].assign(v, v + f.numElements());
  }
  // Buffers: a checkpoint holds them as "buffer/NAME".
  const std::string bufPrefix = w.fromCheckpoint ? "buffer/" : "";
  for (const BufferSpec &b : buffers) {
    auto it = file->tensors.find(bufPrefix + b.name);
    if (it == file->tensors.end())
      continue;
    Tensor c;
    if (!readAs(it->second, b.name, "buffer", b.shape, b.dtype, c, problems))
      continue;
    w.buffers.emplace(b.name, std::move(c));
    w.bufferFileDTypes[b.name] = it->second.dtype;
  }
  if (!problems.empty())
    return Error::make(listProblems(path, problems));
  if (!w.fromCheckpoint)
    for (auto &[name, t] : file->tensors)
      if (!w.params.count(name) && !w.buffers.count(name))
        w.extra.emplace(name, std::move(t));
  // An alias must name a parameter or a buffer (a frozen parameter), or
  // its entry would be written stale.
  for (const auto &[key, target] : w.metadata)
    if (key.rfind(kAliasPrefix, 0) == 0 && !w.params.count(target) &&
        !w.buffers.count(target))
      problems.push_back("metadata '" + key + "' names '" + target +
                         "', which is not a parameter or buffer of the model");
  if (!problems.empty())
    return Error::make(listProblems(path, problems));
  return w;
}

Error saveWeights(const std::string &path,
                  const std::map<std::string, std::pair<ParamSpec, const float *>> &params,
                  const InitWeights *init, const std::vector<TensorView> &buffers) {
  std::vector<TensorView> views;
  for (const auto &[name, p] : params) {
    size_t n = size_t(*numElementsOf(p.first.shape));
    views.push_back({name, DType::F32, p.first.shape, p.second, n * sizeof(float)});
  }
  std::set<std::string> kept;
  std::vector<std::vector<int64_t>> widened; // I64 copies views point into
  widened.reserve(buffers.size());
  for (const TensorView &b : buffers) {
    kept.insert(b.name);
    bool wasI64 = init && init->bufferFileDTypes.count(b.name) &&
                  init->bufferFileDTypes.at(b.name) == DType::I64;
    if (wasI64 && b.dtype == DType::I32) {
      const int32_t *v = static_cast<const int32_t *>(b.data);
      widened.emplace_back(v, v + b.size / sizeof(int32_t));
      views.push_back({b.name, DType::I64, b.shape, widened.back().data(),
                       widened.back().size() * sizeof(int64_t)});
      continue;
    }
    views.push_back(b);
  }
  Metadata md{{"format", "pt"}};
  if (init) {
    for (const auto &[name, t] : init->extra) {
      if (kept.count(name))
        continue;
      auto alias = init->metadata.find(kAliasPrefix + name);
      if (alias != init->metadata.end()) {
        if (auto target = params.find(alias->second); target != params.end()) {
          const ParamSpec &spec = target->second.first;
          views.push_back({name, DType::F32, spec.shape, target->second.second,
                           size_t(*numElementsOf(spec.shape)) * sizeof(float)});
          continue;
        }
        auto buf = std::find_if(buffers.begin(), buffers.end(), [&](const TensorView &b) {
          return b.name == alias->second;
        });
        if (buf != buffers.end()) {
          TensorView copy = *buf;
          copy.name = name;
          views.push_back(copy);
          continue;
        }
      }
      views.push_back({name, t.dtype, t.shape, t.bytes.data(), t.bytes.size()});
    }
    for (const auto &[key, value] : init->metadata)
      if (key.rfind(kAliasPrefix, 0) == 0)
        md[key] = value;
  }
  return writeSafetensors(path, views, withChecksums(views, md));
}

} // namespace rt
} // namespace lpc
