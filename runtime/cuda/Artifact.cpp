//===- Artifact.cpp - the CUDA artifact: parsing -------------------------===//
//
// The JSON artifact (docs/cuda-artifact.md) read into the structs of
// CudaArtifact.h; ArtifactValidate.cpp checks what they describe.
//

#include "lpc/Runtime/CudaArtifact.h"
#include "lpc/Runtime/File.h"
#include "lpc/Runtime/Json.h"

#include <cstring>

namespace lpc {
namespace rt {
namespace cuda {

//===----------------------------------------------------------------------===//
// The structs
//===----------------------------------------------------------------------===//

const char *viewSpaceName(ViewSpace space) {
  switch (space) {
  case ViewSpace::Arg:
    return "arg";
  case ViewSpace::Result:
    return "result";
  case ViewSpace::Buffer:
    return "buffer";
  }
  return "?";
}

int64_t View::numElements() const {
  std::optional<int64_t> n = numElementsOf(sizes);
  return n ? *n : -1;
}

bool View::isContiguous() const {
  int64_t expected = 1;
  for (size_t d = sizes.size(); d-- > 0;) {
    if (sizes[d] == 0)
      return true; // no elements: nothing to be out of place
    if (sizes[d] != 1 && strides[d] != expected)
      return false;
    expected *= sizes[d];
  }
  return true;
}

size_t LaunchOp::kernelParamCount() const {
  size_t n = 0;
  for (const LaunchParam &p : params)
    n += p.kind == LaunchParam::Kind::View ? 3 + 2 * p.view.sizes.size() : 1;
  return n;
}

size_t LaunchOp::kernelParamBytes() const {
  size_t bytes = 0;
  auto add = [&](size_t size) { bytes = (bytes + size - 1) / size * size + size; };
  for (const LaunchParam &p : params) {
    if (p.kind == LaunchParam::Kind::View)
      for (size_t i = 0; i < 3 + 2 * p.view.sizes.size(); ++i)
        add(8);
    else
      add(p.kind == LaunchParam::Kind::I32 || p.kind == LaunchParam::Kind::F32 ? 4 : 8);
  }
  return bytes;
}

GemmDesc GemmOp::desc() const {
  GemmDesc d;
  if (c.sizes.size() == 3 && a.sizes.size() == 3) {
    d.batch = c.sizes[0];
    d.m = c.sizes[1];
    d.n = c.sizes[2];
    d.k = transA ? a.sizes[1] : a.sizes[2];
  }
  d.transA = transA;
  d.transB = transB;
  d.broadcastB = broadcastB;
  d.a = aType;
  d.b = bType;
  d.c = cType;
  d.tf32 = tf32;
  d.fastAccum = fastAccum;
  if (bias)
    d.epilogue = GemmEpilogue::Bias;
  return d;
}

AttentionDesc AttentionOp::desc() const {
  AttentionDesc d;
  d.backward = backward;
  d.dtype = dtype;
  d.causal = causal;
  d.scale = float(scale);
  auto strides4 = [](const View &v) {
    AttentionDesc::Strides s{};
    for (size_t i = 0; i < 4 && i < v.strides.size(); ++i)
      s[i] = v.strides[i];
    return s;
  };
  if (q.sizes.size() == 4 && k.sizes.size() == 4 && v.sizes.size() == 4) {
    d.b = q.sizes[0];
    d.h = q.sizes[1];
    d.sq = q.sizes[2];
    d.d = q.sizes[3];
    d.skv = k.sizes[2];
    d.dv = v.sizes[3];
  }
  d.q = strides4(q), d.k = strides4(k), d.v = strides4(v), d.o = strides4(o);
  if (backward)
    d.dO = strides4(dO), d.dq = strides4(dq), d.dk = strides4(dk), d.dV = strides4(dv);
  return d;
}

CollectiveDesc CollectiveOp::desc() const {
  CollectiveDesc d;
  d.kind = kind;
  d.reduce = reduce;
  d.dtype = dtype;
  d.ranks = ranks;
  d.count = kind == CollectiveKind::AllGather ? in.numElements() : out.numElements();
  return d;
}

std::string opLabel(const ArtifactOp &op) {
  if (const LaunchOp *l = std::get_if<LaunchOp>(&op))
    return "launch " + l->kernel;
  if (const CollectiveOp *c = std::get_if<CollectiveOp>(&op)) {
    bool reduces = c->kind == CollectiveKind::AllReduce ||
                   c->kind == CollectiveKind::ReduceScatter;
    return std::string(collectiveKindName(c->kind)) +
           (reduces ? std::string(" ") + collectiveReduceName(c->reduce) : "");
  }
  if (const AttentionOp *a = std::get_if<AttentionOp>(&op))
    return a->backward ? "attention_backward" : "attention";
  return std::holds_alternative<GemmOp>(op) ? "gemm" : "copy";
}

const ArtifactFunction *Artifact::find(std::string_view name) const {
  for (const ArtifactFunction &f : functions)
    if (f.name == name)
      return &f;
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Parsing
//===----------------------------------------------------------------------===//

namespace {

/// Reads JSON into the structs; every error names where it is ("<source>:
/// function 'f', op 3 (gemm): a: missing 'sizes'").
class Parser {
public:
  explicit Parser(const std::string &source) : source_(source) {}

  Error fail(const std::string &where, const std::string &what) const {
    return makeError(source_, where.empty() ? what : where + ": " + what);
  }

  Expected<const JsonValue *> member(const JsonValue &obj, const char *key,
                                     const std::string &where) const {
    if (const JsonValue *v = obj.find(key))
      return v;
    return fail(where, std::string("missing '") + key + "'");
  }

  Error wrongKind(const JsonValue &v, const char *key, const char *want,
                  const std::string &where) const {
    return fail(where, std::string("'") + key + "' is a JSON " + v.kindName() +
                           ", not " + want);
  }

  Error string(const JsonValue &obj, const char *key, const std::string &where,
               std::string &out, bool optional = false) const {
    const JsonValue *v = obj.find(key);
    if (!v) {
      if (optional)
        return Error::success();
      return fail(where, std::string("missing '") + key + "'");
    }
    if (!v->isString())
      return wrongKind(*v, key, "a string", where);
    out = v->text;
    return Error::success();
  }

  Error boolean(const JsonValue &obj, const char *key, const std::string &where,
                bool &out) const {
    const JsonValue *v = obj.find(key);
    if (!v)
      return Error::success(); // absent: false
    if (!v->isBool())
      return wrongKind(*v, key, "true or false", where);
    out = v->boolean;
    return Error::success();
  }

  Error unsignedValue(const JsonValue &v, const char *key, const std::string &where,
                      uint64_t &out) const {
    std::optional<uint64_t> n = v.isNumber() ? v.asUInt64() : std::nullopt;
    if (!n)
      return fail(where, std::string("'") + key + "' is not a non-negative integer" +
                             (v.isNumber() ? " (" + v.text + ")" : ""));
    out = *n;
    return Error::success();
  }

  Error uint(const JsonValue &obj, const char *key, const std::string &where,
             uint64_t &out, bool optional = false) const {
    const JsonValue *v = obj.find(key);
    if (!v) {
      if (optional)
        return Error::success();
      return fail(where, std::string("missing '") + key + "'");
    }
    return unsignedValue(*v, key, where, out);
  }

  Error signedValue(const JsonValue &v, const char *key, const std::string &where,
                    int64_t &out) const {
    std::optional<int64_t> n = v.isNumber() ? parseInt64(v.text) : std::nullopt;
    if (!n)
      return fail(where, std::string("'") + key + "' is not a 64-bit integer" +
                             (v.isNumber() ? " (" + v.text + ")" : ""));
    out = *n;
    return Error::success();
  }

  Error dtype(const JsonValue &obj, const char *key, const std::string &where,
              DType &out) const {
    std::string name;
    if (Error e = string(obj, key, where, name))
      return e;
    std::optional<DType> t = parseDType(name);
    if (!t)
      return fail(where, "unknown dtype '" + name +
                             "' (F32 F16 BF16 F8_E4M3 F8_E5M2 I32 I64 BOOL)");
    out = *t;
    return Error::success();
  }

  Expected<const JsonValue *> array(const JsonValue &obj, const char *key,
                                    const std::string &where) const {
    Expected<const JsonValue *> v = member(obj, key, where);
    if (!v)
      return v;
    if (!(*v)->isArray())
      return wrongKind(**v, key, "an array", where);
    return v;
  }

  Error object(const JsonValue &v, const std::string &where) const {
    if (!v.isObject())
      return fail(where, std::string("a JSON ") + v.kindName() + ", not an object");
    return Error::success();
  }

  /// A non-negative size list ("shape", "sizes").
  Error sizes(const JsonValue &obj, const char *key, const std::string &where,
              std::vector<int64_t> &out) const {
    Expected<const JsonValue *> arr = array(obj, key, where);
    if (!arr)
      return arr.takeError();
    for (const JsonValue &e : (*arr)->elements) {
      uint64_t n = 0;
      if (Error err = unsignedValue(e, key, where, n))
        return err;
      if (n > uint64_t(INT64_MAX))
        return fail(where, std::string("'") + key + "' has an entry above 2^63");
      out.push_back(int64_t(n));
    }
    return Error::success();
  }

  Error dim3(const JsonValue &obj, const char *key, const std::string &where,
             Dim3 &out) const {
    Expected<const JsonValue *> arr = array(obj, key, where);
    if (!arr)
      return arr.takeError();
    if ((*arr)->elements.size() != 3)
      return fail(where, std::string("'") + key + "' has " +
                             std::to_string((*arr)->elements.size()) +
                             " entries, not 3 (x, y, z)");
    unsigned *dims[] = {&out.x, &out.y, &out.z};
    for (size_t i = 0; i < 3; ++i) {
      uint64_t n = 0;
      if (Error e = unsignedValue((*arr)->elements[i], key, where, n))
        return e;
      if (n > UINT32_MAX)
        return fail(where, std::string("'") + key + "' has an entry above 2^32");
      *dims[i] = unsigned(n);
    }
    return Error::success();
  }

  /// A number; `out` is left as it is when the key is absent.
  Error number(const JsonValue &obj, const char *key, const std::string &where,
               double &out) const {
    const JsonValue *v = obj.find(key);
    if (!v)
      return Error::success();
    if (!v->isNumber())
      return wrongKind(*v, key, "a number", where);
    out = v->asDouble();
    return Error::success();
  }

  /// A non-negative integer that fits in int64_t.
  Error count(const JsonValue &obj, const char *key, const std::string &where,
              int64_t &out) const {
    uint64_t n = 0;
    if (Error e = uint(obj, key, where, n))
      return e;
    if (n > uint64_t(INT64_MAX))
      return fail(where, std::string("'") + key + "' is above 2^63");
    out = int64_t(n);
    return Error::success();
  }

  /// The "train" section (docs/cuda-artifact.md).
  Error training(const JsonValue &v, ArtifactTraining &t) const {
    const std::string where = "train";
    if (Error e = object(v, where))
      return e;
    ModelInfo &m = t.model;
    TrainOptions &o = t.options;
    if (Error e = string(v, "model", where, m.name))
      return e;
    if (Error e = count(v, "batch", where, m.batch))
      return e;
    if (Error e = boolean(v, "text_model", where, m.textModel))
      return e;
    if (Error e = string(v, "label_input", where, m.labelName))
      return e;
    const char *input = m.textModel ? "token_input" : "feature_input";
    if (Error e = string(v, input, where, m.textModel ? m.tokenName : m.featName))
      return e;
    if (Error e = count(v, m.textModel ? "seq_len" : "features", where,
                        m.textModel ? m.seqLen : m.features))
      return e;
    if (Error e = count(v, "classes", where, m.classes))
      return e;
    if (Error e = count(v, "total_steps", where, t.totalSteps))
      return e;
    for (auto [key, field] : {std::pair<const char *, std::string *>{"mixed_precision",
                                                                    &o.mixedPrecision},
                              {"pipeline", &o.pipeline},
                              {"lr_schedule", &o.lrSchedule}})
      if (Error e = string(v, key, where, *field))
        return e;
    if (Error e = count(v, "warmup_steps", where, o.warmupSteps))
      return e;
    if (Error e = number(v, "lr", where, o.lr))
      return e;
    if (Error e = number(v, "min_lr", where, o.minLr))
      return e;
    if (m.batch == 0 || (m.textModel ? m.seqLen == 0 : m.features == 0))
      return fail(where, "the model's inputs are empty");
    const JsonValue *params = v.find("params");
    if (!params || !params->isObject())
      return fail(where, "'params' must be an object of initializers");
    for (const auto &[name, p] : params->members) {
      std::string here = where + ": params: '" + name + "'";
      if (Error e = object(p, here))
        return e;
      InitSpec spec;
      std::string kind;
      if (Error e = string(p, "init", here, kind))
        return e;
      std::optional<InitKind> k = parseInitKind(kind);
      if (!k)
        return fail(here, "unknown initializer '" + kind + "'");
      spec.kind = *k;
      for (auto [key, field] : {std::pair<const char *, double *>{"std", &spec.std},
                                {"mean", &spec.mean},
                                {"low", &spec.low},
                                {"high", &spec.high},
                                {"value", &spec.value},
                                {"gain", &spec.gain}})
        if (Error e = number(p, key, here, *field))
          return e;
      m.params[name] = spec;
    }
    return Error::success();
  }

  Error slot(const JsonValue &v, const std::string &where, ArtifactSlot &s) const {
    if (Error e = object(v, where))
      return e;
    if (Error e = dtype(v, "dtype", where, s.dtype))
      return e;
    if (Error e = sizes(v, "shape", where, s.shape))
      return e;
    for (auto [key, field] : {std::pair<const char *, std::string *>{"state", &s.state},
                              {"name", &s.name},
                              {"input", &s.input},
                              {"metric", &s.metric}})
      if (Error e = string(v, key, where, *field, /*optional=*/true))
        return e;
    if (const JsonValue *init = v.find("init")) {
      if (!init->isNumber())
        return wrongKind(*init, "init", "a number", where);
      s.init = init->asDouble();
    }
    if (v.find("id_bound")) {
      if (Error e = count(v, "id_bound", where, s.idBound))
        return e;
      if (s.input.empty() || s.dtype != DType::I32)
        return fail(where, "'id_bound' belongs to an integer data input");
    }
    return Error::success();
  }

  Error view(const JsonValue &v, const std::string &where, View &out) const {
    if (Error e = object(v, where))
      return e;
    std::string space;
    if (Error e = string(v, "space", where, space))
      return e;
    if (space == "arg")
      out.space = ViewSpace::Arg;
    else if (space == "result")
      out.space = ViewSpace::Result;
    else if (space == "buffer")
      out.space = ViewSpace::Buffer;
    else
      return fail(where, "unknown space '" + space + "' (arg, result or buffer)");
    if (Error e = uint(v, "index", where, out.index))
      return e;
    Expected<const JsonValue *> offset = member(v, "offset", where);
    if (!offset)
      return offset.takeError();
    if (Error e = signedValue(**offset, "offset", where, out.offset))
      return e;
    if (Error e = sizes(v, "sizes", where, out.sizes))
      return e;
    Expected<const JsonValue *> strides = array(v, "strides", where);
    if (!strides)
      return strides.takeError();
    for (const JsonValue &s : (*strides)->elements) {
      int64_t n = 0;
      if (Error e = signedValue(s, "strides", where, n))
        return e;
      out.strides.push_back(n);
    }
    if (out.strides.size() != out.sizes.size())
      return fail(where, std::to_string(out.sizes.size()) + " sizes but " +
                             std::to_string(out.strides.size()) + " strides");
    uint64_t elem = 0;
    if (Error e = uint(v, "elem_bytes", where, elem))
      return e;
    if (elem != 1 && elem != 2 && elem != 4 && elem != 8)
      return fail(where, "elem_bytes is " + std::to_string(elem) + ", not 1, 2, 4 or 8");
    out.elemBytes = uint32_t(elem);
    return Error::success();
  }

  Error viewMember(const JsonValue &obj, const char *key, const std::string &where,
                   View &out) const {
    Expected<const JsonValue *> v = member(obj, key, where);
    if (!v)
      return v.takeError();
    return view(**v, where + ": " + key, out);
  }

  Error param(const JsonValue &v, const std::string &where, LaunchParam &p) const {
    if (Error e = object(v, where))
      return e;
    if (v.members.size() != 1)
      return fail(where, "a parameter is an object with one member (view, i64, i32, "
                         "f32 or f64)");
    const std::string &key = v.members[0].first;
    const JsonValue &value = v.members[0].second;
    if (key == "view") {
      p.kind = LaunchParam::Kind::View;
      return view(value, where, p.view);
    }
    if (key == "i64" || key == "i32") {
      p.kind = key == "i64" ? LaunchParam::Kind::I64 : LaunchParam::Kind::I32;
      if (Error e = signedValue(value, key.c_str(), where, p.i))
        return e;
      if (p.kind == LaunchParam::Kind::I32 && (p.i < INT32_MIN || p.i > UINT32_MAX))
        return fail(where, "i32 value " + value.text + " does not fit in 32 bits");
      return Error::success();
    }
    if (key == "f32" || key == "f64") {
      p.kind = key == "f32" ? LaunchParam::Kind::F32 : LaunchParam::Kind::F64;
      if (!value.isNumber())
        return wrongKind(value, key.c_str(), "a number", where);
      p.f = value.asDouble();
      return Error::success();
    }
    return fail(where, "unknown parameter kind '" + key + "' (view, i64, i32, f32, f64)");
  }

  Error op(const JsonValue &v, const std::string &where, ArtifactOp &out) const {
    if (Error e = object(v, where))
      return e;
    std::string kind;
    if (Error e = string(v, "op", where, kind))
      return e;
    if (kind == "launch") {
      LaunchOp l;
      if (Error e = string(v, "kernel", where, l.kernel))
        return e;
      std::string here = where + " (launch " + l.kernel + ")";
      if (Error e = uint(v, "module", here, l.module))
        return e;
      if (Error e = dim3(v, "grid", here, l.grid))
        return e;
      if (Error e = dim3(v, "block", here, l.block))
        return e;
      uint64_t shared = 0;
      if (Error e = uint(v, "shared_bytes", here, shared, /*optional=*/true))
        return e;
      if (shared > UINT32_MAX)
        return fail(here, "shared_bytes is above 2^32");
      l.sharedBytes = unsigned(shared);
      Expected<const JsonValue *> params = array(v, "params", here);
      if (!params)
        return params.takeError();
      for (const JsonValue &p : (*params)->elements) {
        l.params.emplace_back();
        if (Error e = param(p, here + ": param " + std::to_string(l.params.size() - 1),
                            l.params.back()))
          return e;
      }
      // Optional (the cost model's): one of "", "r", "w", "rw" per param.
      if (const JsonValue *access = v.find("access")) {
        if (!access->isArray())
          return wrongKind(*access, "access", "an array", here);
        if (access->elements.size() != l.params.size())
          return fail(here, "'access' has " + std::to_string(access->elements.size()) +
                                " entries for " + std::to_string(l.params.size()) +
                                " params");
        for (size_t i = 0; i < l.params.size(); ++i) {
          const JsonValue &a = access->elements[i];
          static const char *const kNames[] = {"", "r", "w", "rw"};
          int flags = -1;
          for (int k = 0; k < 4 && a.isString(); ++k)
            if (a.text == kNames[k])
              flags = k;
          if (flags < 0)
            return fail(here, "access " + std::to_string(i) +
                                  " is not one of \"\", \"r\", \"w\", \"rw\"");
          if (flags && l.params[i].kind != LaunchParam::Kind::View)
            return fail(here, "access " + std::to_string(i) + " is \"" + a.text +
                                  "\" for a scalar param");
          l.access.push_back(uint8_t(flags));
        }
      }
      if (v.find("serial_iters")) {
        uint64_t n = 0;
        if (Error e = uint(v, "serial_iters", here, n))
          return e;
        if (n > uint64_t(INT64_MAX))
          return fail(here, "serial_iters is above 2^63");
        l.serialIters = int64_t(n);
      }
      out = std::move(l);
      return Error::success();
    }
    if (kind == "gemm") {
      GemmOp g;
      std::string here = where + " (gemm)";
      for (auto [key, view] : {std::pair<const char *, View *>{"a", &g.a}, {"b", &g.b}, {"c", &g.c}})
        if (Error e = viewMember(v, key, here, *view))
          return e;
      for (auto [key, view] : {std::pair<const char *, std::optional<View> *>{"a_scale", &g.aScale},
                               {"b_scale", &g.bScale},
                               {"bias", &g.bias}})
        if (v.find(key)) {
          view->emplace();
          if (Error e = viewMember(v, key, here, **view))
            return e;
        }
      for (auto [key, type] : {std::pair<const char *, DType *>{"a_type", &g.aType},
                               {"b_type", &g.bType},
                               {"c_type", &g.cType}})
        if (Error e = dtype(v, key, here, *type))
          return e;
      for (auto [key, flag] : {std::pair<const char *, bool *>{"trans_a", &g.transA},
                               {"trans_b", &g.transB},
                               {"broadcast_b", &g.broadcastB},
                               {"tf32", &g.tf32},
                               {"fast_accum", &g.fastAccum}})
        if (Error e = boolean(v, key, here, *flag))
          return e;
      out = std::move(g);
      return Error::success();
    }
    if (kind == "copy") {
      CopyOp c;
      std::string here = where + " (copy)";
      if (Error e = viewMember(v, "src", here, c.src))
        return e;
      if (Error e = viewMember(v, "dst", here, c.dst))
        return e;
      out = std::move(c);
      return Error::success();
    }
    if (kind == "attention" || kind == "attention_backward") {
      AttentionOp a;
      a.backward = kind == "attention_backward";
      std::string here = where + " (" + kind + ")";
      if (Error e = dtype(v, "dtype", here, a.dtype))
        return e;
      const JsonValue *causal = v.find("causal");
      if (!causal)
        return fail(here, "missing 'causal'");
      if (Error e = boolean(v, "causal", here, a.causal))
        return e;
      Expected<const JsonValue *> scale = member(v, "scale", here);
      if (!scale)
        return scale.takeError();
      if (!(*scale)->isNumber())
        return wrongKind(**scale, "scale", "a number", here);
      a.scale = (*scale)->asDouble();
      std::vector<std::pair<const char *, View *>> views = {
          {"q", &a.q}, {"k", &a.k}, {"v", &a.v}, {"o", &a.o}, {"lse", &a.lse}};
      if (a.backward)
        views.insert(views.end(), {{"do", &a.dO}, {"dq", &a.dq}, {"dk", &a.dk}, {"dv", &a.dv}});
      for (auto [key, view] : views)
        if (Error e = viewMember(v, key, here, *view))
          return e;
      out = std::move(a);
      return Error::success();
    }
    for (CollectiveKind k : {CollectiveKind::AllReduce, CollectiveKind::ReduceScatter,
                             CollectiveKind::AllGather, CollectiveKind::AllToAll,
                             CollectiveKind::Shard}) {
      if (kind != collectiveKindName(k))
        continue;
      CollectiveOp c;
      c.kind = k;
      std::string here = where + " (" + kind + ")";
      if (k == CollectiveKind::AllReduce || k == CollectiveKind::ReduceScatter) {
        std::string reduce;
        if (Error e = string(v, "reduce", here, reduce))
          return e;
        bool known = false;
        for (CollectiveReduce r :
             {CollectiveReduce::Sum, CollectiveReduce::Mean, CollectiveReduce::Max})
          if (reduce == collectiveReduceName(r))
            c.reduce = r, known = true;
        if (!known)
          return fail(here, "reduce '" + reduce + "' is not sum, mean or max");
      }
      if (Error e = dtype(v, "dtype", here, c.dtype))
        return e;
      uint64_t ranks = 0;
      if (Error e = uint(v, "ranks", here, ranks, /*optional=*/k == CollectiveKind::AllReduce))
        return e;
      if (ranks > 65536)
        return fail(here, "ranks " + std::to_string(ranks) + " is above 65536");
      c.ranks = int64_t(ranks);
      if (Error e = viewMember(v, "in", here, c.in))
        return e;
      if (Error e = viewMember(v, "out", here, c.out))
        return e;
      out = std::move(c);
      return Error::success();
    }
    return fail(where, "unknown op '" + kind +
                           "' (launch, gemm, copy, attention, attention_backward, "
                           "all_reduce, reduce_scatter, all_gather, all_to_all or shard)");
  }

  Error function(const JsonValue &v, const std::string &where, ArtifactFunction &f) const {
    if (Error e = object(v, where))
      return e;
    if (Error e = string(v, "name", where, f.name))
      return e;
    std::string here = "function '" + f.name + "'";
    for (auto [key, slots] : {std::pair<const char *, std::vector<ArtifactSlot> *>{
                                  "args", &f.args},
                              {"results", &f.results}}) {
      Expected<const JsonValue *> arr = array(v, key, here);
      if (!arr)
        return arr.takeError();
      for (const JsonValue &s : (*arr)->elements) {
        slots->emplace_back();
        std::string slotWhere = here + ", " + std::string(key).substr(0, std::strlen(key) - 1) +
                                " " + std::to_string(slots->size() - 1);
        if (Error e = slot(s, slotWhere, slots->back()))
          return e;
      }
    }
    if (Error e = uint(v, "arena_bytes", here, f.arenaBytes))
      return e;
    Expected<const JsonValue *> buffers = array(v, "buffers", here);
    if (!buffers)
      return buffers.takeError();
    for (const JsonValue &b : (*buffers)->elements) {
      std::string bw = here + ", buffer " + std::to_string(f.buffers.size());
      f.buffers.emplace_back();
      if (Error e = object(b, bw))
        return e;
      if (Error e = uint(b, "offset", bw, f.buffers.back().offset))
        return e;
      if (Error e = uint(b, "bytes", bw, f.buffers.back().bytes))
        return e;
    }
    Expected<const JsonValue *> modules = array(v, "modules", here);
    if (!modules)
      return modules.takeError();
    for (const JsonValue &m : (*modules)->elements) {
      std::string mw = here + ", module " + std::to_string(f.modules.size());
      f.modules.emplace_back();
      if (Error e = object(m, mw))
        return e;
      if (Error e = string(m, "name", mw, f.modules.back().name))
        return e;
      if (Error e = string(m, "ptx", mw, f.modules.back().ptx))
        return e;
    }
    Expected<const JsonValue *> ops = array(v, "ops", here);
    if (!ops)
      return ops.takeError();
    for (const JsonValue &o : (*ops)->elements) {
      std::string ow = here + ", op " + std::to_string(f.ops.size());
      f.ops.emplace_back();
      if (Error e = op(o, ow, f.ops.back()))
        return e;
    }
    return Error::success();
  }

private:
  const std::string &source_;
};

} // namespace

Expected<Artifact> parseArtifact(std::string_view json, const std::string &source) {
  Expected<JsonValue> parsed = parseJson(json);
  if (!parsed)
    return makeError(source, "not valid JSON: " + parsed.error().message());
  const JsonValue &root = *parsed;
  Parser p(source);
  if (!root.isObject())
    return p.fail("", std::string("the artifact is a JSON ") + root.kindName() +
                          ", not an object");
  Artifact art;
  art.source = source;
  std::string format;
  if (Error e = p.string(root, "format", "", format))
    return e;
  if (format != "lpc-cuda-artifact")
    return p.fail("", "format is '" + format + "', not 'lpc-cuda-artifact'");
  uint64_t version = 0;
  if (Error e = p.uint(root, "version", "", version))
    return e;
  if (version != uint64_t(kArtifactVersion))
    return p.fail("", "format version " + std::to_string(version) +
                          "; this runtime reads version " +
                          std::to_string(kArtifactVersion));
  if (Error e = p.string(root, "chip", "", art.chip))
    return e;
  if (Error e = p.string(root, "producer", "", art.producer, /*optional=*/true))
    return e;
  Expected<const JsonValue *> functions = p.array(root, "functions", "");
  if (!functions)
    return functions.takeError();
  for (const JsonValue &f : (*functions)->elements) {
    art.functions.emplace_back();
    if (Error e = p.function(f, "function " + std::to_string(art.functions.size() - 1),
                             art.functions.back()))
      return e;
  }
  if (const JsonValue *train = root.find("train")) {
    art.train.emplace();
    if (Error e = p.training(*train, *art.train))
      return e;
  }
  return art;
}

Expected<Artifact> loadArtifact(const std::string &path) {
  Expected<std::vector<uint8_t>> bytes = readFile(path);
  if (!bytes)
    return bytes.takeError();
  Expected<Artifact> art = parseArtifact(
      std::string_view(reinterpret_cast<const char *>(bytes->data()), bytes->size()), path);
  if (!art)
    return art;
  if (Error e = art->validate())
    return e;
  return art;
}

} // namespace cuda
} // namespace rt
} // namespace lpc
