//===- gemm_bench.cpp - CPU GEMM back ends on lpc's train-step shapes -----===//
//
// Prints GFLOP/s (median over rounds) for the GEMMs of two train steps:
//   mlp: 784-1024-1024-10, batch 256 (fprop, dgrad, wgrad of every layer)
//   tfm: one transformer block, 2048 tokens (16 x 128), d 512, mlp 2048,
//        attention 16 x 8 heads of 128 x 128 x 64
// for these back ends:
//   dnnl-f32     oneDNN matmul primitive, f32, through LpcGemm's entry point
//   dnnl-bf16    oneDNN matmul primitive, bf16 x bf16 -> f32, through LpcGemm
//   f16-wide     LpcGemm's f16 entry point (widen to f32, then dnnl-f32)
//   dnnl_sgemm   oneDNN's BLAS-like dnnl_sgemm, f32, a loop over the batch
//   .../1t       the same LpcGemm call with setGemmThreads(1)
//   .../passive  dnnl-f32 and dnnl-bf16 in a child process started with
//                OMP_WAIT_POLICY=passive (libgomp reads it once, at load);
//                also dnnl:active, dnnl:spinN (GOMP_SPINCOUNT=N), dnnl:default
//   oblas:<core> OpenBLAS cblas_sgemm (dlopen'ed libopenblas.so.0) in a child
//                process per OPENBLAS_CORETYPE setting (the library reads it
//                once, when it loads): "-" = unset, "env" = as inherited
//   naive        textbook triple loop, f32, one thread (reference point)
// The machine is shared and noisy: each round runs every back end on every
// shape (in-process back ends interleaved per shape, in a rotating order;
// each child once per round), and the tables give the median and the best
// of the rounds.
//
//   lpc-gemm-bench [--rounds N] [--min-ms MS] [--filter SUBSTR] [--no-naive]
//                  [--children oblas:-,oblas:Haswell,...,dnnl:passive]
//   (--children "" runs no child processes)
//
//===----------------------------------------------------------------------===//

#include "lpc/Runtime/Gemm.h"

#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <dlfcn.h>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <sys/wait.h>
#include <tuple>
#include <unistd.h>
#include <vector>

using lpc::rt::MemRef;

namespace {

struct Shape {
  const char *model;
  const char *name;
  int64_t batch, M, N, K;
  bool tA, tB, bc;
  double gflop() const { return 2.0 * batch * M * N * K * 1e-9; }
};

// Weights are [in, out]; y = x W, dx = dy W^T (transB), dW = x^T dy (transA).
const Shape kShapes[] = {
    {"mlp", "L1 fprop", 1, 256, 1024, 784, false, false, false},
    {"mlp", "L1 dgrad", 1, 256, 784, 1024, false, true, false},
    {"mlp", "L1 wgrad", 1, 784, 1024, 256, true, false, false},
    {"mlp", "L2 fprop", 1, 256, 1024, 1024, false, false, false},
    {"mlp", "L2 dgrad", 1, 256, 1024, 1024, false, true, false},
    {"mlp", "L2 wgrad", 1, 1024, 1024, 256, true, false, false},
    {"mlp", "L3 fprop", 1, 256, 10, 1024, false, false, false},
    {"mlp", "L3 dgrad", 1, 256, 1024, 10, false, true, false},
    {"mlp", "L3 wgrad", 1, 1024, 10, 256, true, false, false},
    {"tfm", "proj fprop (x4)", 1, 2048, 512, 512, false, false, false},
    {"tfm", "proj dgrad (x4)", 1, 2048, 512, 512, false, true, false},
    {"tfm", "proj wgrad (x4)", 1, 512, 512, 2048, true, false, false},
    {"tfm", "up fprop", 1, 2048, 2048, 512, false, false, false},
    {"tfm", "up dgrad", 1, 2048, 512, 2048, false, true, false},
    {"tfm", "up wgrad", 1, 512, 2048, 2048, true, false, false},
    {"tfm", "down fprop", 1, 2048, 512, 2048, false, false, false},
    {"tfm", "down dgrad", 1, 2048, 2048, 512, false, true, false},
    {"tfm", "down wgrad", 1, 2048, 512, 2048, true, false, false},
    {"tfm", "QK^T (x2: +dP=dO V^T)", 128, 128, 128, 64, false, true, false},
    {"tfm", "PV (x2: +dQ=dS K)", 128, 128, 64, 128, false, false, false},
    {"tfm", "dV=P^T dO (x2: +dK)", 128, 128, 64, 128, true, false, false},
};
constexpr int kNumShapes = sizeof(kShapes) / sizeof(kShapes[0]);
// How often each shape occurs in its train step (for the per-step totals).
const int kCount[kNumShapes] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 4, 4,
                                4, 1, 1, 1, 1, 1, 1, 2, 2, 2};

double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// Calls fn once (warm-up: primitive creation, page faults), then repeatedly
/// until minSeconds have passed (at least twice); returns GFLOP/s.
double measure(const Shape &s, double minSeconds,
               const std::function<void()> &fn) {
  fn();
  int reps = 0;
  const double t0 = now();
  double t;
  do {
    fn();
    ++reps;
    t = now() - t0;
  } while (t < minSeconds || reps < 2);
  return s.gflop() * reps / t;
}

/// One shape's operands, physical layouts, f32 and bf16 copies.
struct Operands {
  std::vector<float> a, b, c;
  std::vector<uint16_t> a16, b16, ah;
  MemRef<float, 3> A, B, C;
  MemRef<uint16_t, 3> A16, B16, AH, BH;
  std::vector<uint16_t> bh;
  int64_t aRows, aCols, bRows, bCols, bBatch;
};

template <typename T>
MemRef<T, 3> desc(std::vector<T> &v, int64_t batch, int64_t rows,
                  int64_t cols) {
  return MemRef<T, 3>{v.data(), v.data(), 0, {batch, rows, cols},
                      {rows * cols, cols, 1}};
}

void makeOperands(const Shape &s, Operands &o) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  o.aRows = s.tA ? s.K : s.M, o.aCols = s.tA ? s.M : s.K;
  o.bRows = s.tB ? s.N : s.K, o.bCols = s.tB ? s.K : s.N;
  o.bBatch = s.bc ? 1 : s.batch;
  o.a.resize(s.batch * o.aRows * o.aCols);
  o.b.resize(o.bBatch * o.bRows * o.bCols);
  o.c.assign(s.batch * s.M * s.N, 0.0f);
  for (float &x : o.a)
    x = dist(rng);
  for (float &x : o.b)
    x = dist(rng);
  auto toBf16 = [](const std::vector<float> &v) {
    std::vector<uint16_t> r(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
      uint32_t bits;
      std::memcpy(&bits, &v[i], 4);
      r[i] = static_cast<uint16_t>(bits >> 16);
    }
    return r;
  };
  auto toF16 = [](const std::vector<float> &v) {
    std::vector<uint16_t> r(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
      _Float16 h = static_cast<_Float16>(v[i]);
      std::memcpy(&r[i], &h, 2);
    }
    return r;
  };
  o.a16 = toBf16(o.a), o.b16 = toBf16(o.b);
  o.ah = toF16(o.a), o.bh = toF16(o.b);
  o.A = desc(o.a, s.batch, o.aRows, o.aCols);
  o.B = desc(o.b, o.bBatch, o.bRows, o.bCols);
  o.C = desc(o.c, s.batch, s.M, s.N);
  o.A16 = desc(o.a16, s.batch, o.aRows, o.aCols);
  o.B16 = desc(o.b16, o.bBatch, o.bRows, o.bCols);
  o.AH = desc(o.ah, s.batch, o.aRows, o.aCols);
  o.BH = desc(o.bh, o.bBatch, o.bRows, o.bCols);
}

/// The textbook loops: i-k-j (unit-stride inner loop over B's rows), or the
/// i-j-k dot product when B is transposed (then B's rows are the columns).
void naive(const Shape &s, Operands &o) {
  for (int64_t b = 0; b < s.batch; ++b) {
    const float *A = o.a.data() + b * o.aRows * o.aCols;
    const float *B = o.b.data() + (s.bc ? 0 : b) * o.bRows * o.bCols;
    float *C = o.c.data() + b * s.M * s.N;
    for (int64_t i = 0; i < s.M; ++i) {
      float *c = C + i * s.N;
      if (s.tB) {
        for (int64_t j = 0; j < s.N; ++j) {
          float acc = 0;
          for (int64_t k = 0; k < s.K; ++k)
            acc += (s.tA ? A[k * s.M + i] : A[i * s.K + k]) * B[j * s.K + k];
          c[j] = acc;
        }
        continue;
      }
      std::fill_n(c, s.N, 0.0f);
      for (int64_t k = 0; k < s.K; ++k) {
        const float a = s.tA ? A[k * s.M + i] : A[i * s.K + k];
        const float *brow = B + k * s.N;
        for (int64_t j = 0; j < s.N; ++j)
          c[j] += a * brow[j];
      }
    }
  }
}

void dnnlSgemm(const Shape &s, Operands &o) {
  for (int64_t b = 0; b < s.batch; ++b) {
    const float *A = o.a.data() + b * o.aRows * o.aCols;
    const float *B = o.b.data() + (s.bc ? 0 : b) * o.bRows * o.bCols;
    float *C = o.c.data() + b * s.M * s.N;
    if (dnnl_sgemm(s.tA ? 'T' : 'N', s.tB ? 'T' : 'N', s.M, s.N, s.K, 1.0f, A,
                   o.aCols, B, o.bCols, 0.0f, C, s.N) != dnnl_success) {
      std::fprintf(stderr, "dnnl_sgemm failed\n");
      std::exit(1);
    }
  }
}

int threadCount() {
  int n = 0;
  if (DIR *d = opendir("/proc/self/task")) {
    while (dirent *e = readdir(d))
      n += e->d_name[0] != '.';
    closedir(d);
  }
  return n;
}

const char *isaName(dnnl_cpu_isa_t isa) {
  switch (isa) {
  case dnnl_cpu_isa_sse41: return "sse41";
  case dnnl_cpu_isa_avx: return "avx";
  case dnnl_cpu_isa_avx2: return "avx2";
  case dnnl_cpu_isa_avx2_vnni: return "avx2_vnni";
  case dnnl_cpu_isa_avx512_core: return "avx512_core";
  case dnnl_cpu_isa_avx512_core_vnni: return "avx512_core_vnni";
  case dnnl_cpu_isa_avx512_core_bf16: return "avx512_core_bf16";
  case dnnl_cpu_isa_avx512_core_amx: return "avx512_core_amx";
  default: return "other";
  }
}

bool selected(const Shape &s, const std::string &filter) {
  return filter.empty() ||
         (std::string(s.model) + " " + s.name).find(filter) != std::string::npos;
}

//===----------------------------------------------------------------------===//
// Child processes: a library setting read once, at load time, needs a process
// of its own. A child runs every selected shape once and prints
// "info KEY VALUE" and "result COLUMN SHAPE GFLOPS" lines.
//===----------------------------------------------------------------------===//

int openblasChild(const std::string &label, double minSeconds,
                  const std::string &filter) {
  void *lib = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    std::printf("info error %s\n", dlerror());
    return 1;
  }
  using Sgemm = void (*)(int, int, int, int, int, int, float, const float *,
                         int, const float *, int, float, float *, int);
  auto sgemm = reinterpret_cast<Sgemm>(dlsym(lib, "cblas_sgemm"));
  auto corename =
      reinterpret_cast<char *(*)()>(dlsym(lib, "openblas_get_corename"));
  auto nthreads =
      reinterpret_cast<int (*)()>(dlsym(lib, "openblas_get_num_threads"));
  if (!sgemm) {
    std::printf("info error no cblas_sgemm\n");
    return 1;
  }
  std::printf("info core %s\ninfo threads %d\n", corename ? corename() : "?",
              nthreads ? nthreads() : -1);
  enum { RowMajor = 101, NoTrans = 111, Trans = 112 };
  for (int i = 0; i < kNumShapes; ++i) {
    const Shape &s = kShapes[i];
    if (!selected(s, filter))
      continue;
    Operands o;
    makeOperands(s, o);
    double g = measure(s, minSeconds, [&] {
      for (int64_t b = 0; b < s.batch; ++b)
        sgemm(RowMajor, s.tA ? Trans : NoTrans, s.tB ? Trans : NoTrans, s.M,
              s.N, s.K, 1.0f, o.a.data() + b * o.aRows * o.aCols, o.aCols,
              o.b.data() + (s.bc ? 0 : b) * o.bRows * o.bCols, o.bCols, 0.0f,
              o.c.data() + b * s.M * s.N, s.N);
    });
    std::printf("result oblas:%s %d %.3f\n", label.c_str(), i, g);
    std::fflush(stdout);
  }
  return 0;
}

int dnnlChild(const std::string &label, double minSeconds,
              const std::string &filter) {
  std::printf("info threads %d\n", lpc::rt::gemmThreads());
  for (int i = 0; i < kNumShapes; ++i) {
    const Shape &s = kShapes[i];
    if (!selected(s, filter))
      continue;
    Operands o;
    makeOperands(s, o);
    for (int rep = 0; rep < 2; ++rep) {
      const int which = (rep + i) % 2;
      double g = measure(s, minSeconds, [&] {
        if (which == 0)
          _mlir_ciface_lpc_rt_gemm_f32(&o.A, &o.B, &o.C, s.tA, s.tB, s.bc);
        else
          _mlir_ciface_lpc_rt_gemm_bf16(&o.A16, &o.B16, &o.C, s.tA, s.tB,
                                        s.bc);
      });
      std::printf("result dnnl-%s/%s %d %.3f\n", which ? "bf16" : "f32",
                  label.c_str(), i, g);
    }
    std::fflush(stdout);
  }
  return 0;
}

/// A child variant, "oblas:CORE" (OPENBLAS_CORETYPE=CORE; "-" unset, "env"
/// inherited) or "dnnl:POLICY" (OMP_WAIT_POLICY=POLICY: passive or active),
/// "dnnl:spinN" (GOMP_SPINCOUNT=N), "dnnl:default" (the inherited setting).
struct Child {
  std::string kind, label;
  std::vector<std::string> columns() const {
    if (kind == "oblas")
      return {"oblas:" + label};
    return {"dnnl-f32/" + label, "dnnl-bf16/" + label};
  }
};

struct ChildResult {
  std::map<std::string, std::string> info;
  std::vector<std::tuple<std::string, int, double>> results;
  std::string error;
};

ChildResult runChild(const Child &child, double minSeconds,
                     const std::string &filter) {
  ChildResult r;
  int fd[2];
  if (pipe(fd) != 0) {
    r.error = "pipe";
    return r;
  }
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fd[1], 1);
    close(fd[0]);
    if (child.kind == "oblas") {
      if (child.label == "-")
        unsetenv("OPENBLAS_CORETYPE");
      else if (child.label != "env")
        setenv("OPENBLAS_CORETYPE", child.label.c_str(), 1);
    } else if (child.label.rfind("spin", 0) == 0) {
      setenv("GOMP_SPINCOUNT", child.label.c_str() + 4, 1);
    } else if (child.label != "default") {
      setenv("OMP_WAIT_POLICY", child.label.c_str(), 1);
    }
    std::string ms = std::to_string(minSeconds * 1e3);
    execl("/proc/self/exe", "lpc-gemm-bench", "--child", child.kind.c_str(),
          child.label.c_str(), "--min-ms", ms.c_str(), "--filter",
          filter.c_str(), (char *)nullptr);
    _exit(127);
  }
  close(fd[1]);
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd[0], buf, sizeof buf)) > 0)
    out.append(buf, static_cast<size_t>(n));
  close(fd[0]);
  int status;
  waitpid(pid, &status, 0);
  size_t pos = 0;
  while (pos < out.size()) {
    size_t end = out.find('\n', pos);
    if (end == std::string::npos)
      end = out.size();
    std::string line = out.substr(pos, end - pos);
    pos = end + 1;
    char col[128];
    int idx;
    double g;
    if (line.rfind("info ", 0) == 0) {
      size_t sp = line.find(' ', 5);
      r.info[line.substr(5, sp - 5)] =
          sp == std::string::npos ? "" : line.substr(sp + 1);
    } else if (std::sscanf(line.c_str(), "result %127s %d %lf", col, &idx,
                           &g) == 3) {
      r.results.emplace_back(col, idx, g);
    }
  }
  if (r.info.count("error"))
    r.error = r.info["error"];
  else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    r.error = "child failed";
  return r;
}

double median(std::vector<double> v) {
  if (v.empty())
    return NAN;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::vector<std::string> split(const std::string &s, char sep) {
  std::vector<std::string> r;
  if (s.empty())
    return r;
  size_t pos = 0;
  while (true) {
    size_t end = s.find(sep, pos);
    r.push_back(s.substr(pos, end - pos));
    if (end == std::string::npos)
      break;
    pos = end + 1;
  }
  return r;
}

//===----------------------------------------------------------------------===//
// --gemm LABEL: the GEMMs of a profile. lpc-jit --profile and lpc-run
// --profile-ops label each GEMM call with its operands, e.g.
//   call lpc_rt_gemm_bf16 1x2048x512xbf16^T * 1x2048x2048xbf16 -> 1x512x2048xf32 @ backward
// (^T: the call's transA/transB flag transposes that operand). Given such
// labels (the whole line's label, or just the part from A to C), the bench
// times each one's own entry point on its own shape, and sums the step's GEMMs
// at the rates measured: what the library gives a step, shape by shape.
//===----------------------------------------------------------------------===//

enum class Entry { F32, BF16, BF16ToBF16, F16 };

struct LabelledGemm {
  std::string label; // normalised: "A * B -> C"
  Shape shape;
  Entry entry;
  int count = 0;
};

struct LabelOperand {
  int64_t dims[3];
  std::string type;
  bool trans = false;
};

/// Parses "BxRxCxTYPE" with an optional "^T"; on error returns the reason.
std::string parseLabelOperand(std::string text, LabelOperand &op) {
  if (text.size() > 2 && text.compare(text.size() - 2, 2, "^T") == 0) {
    op.trans = true;
    text.resize(text.size() - 2);
  }
  std::vector<std::string> parts = split(text, 'x');
  if (parts.size() != 4)
    return "'" + text + "' is not BATCHxROWSxCOLSxTYPE";
  for (int d = 0; d < 3; ++d) {
    const std::string &v = parts[d];
    if (v == "?")
      return "'" + text + "' has a dynamic size; give the sizes it runs with";
    if (v.empty() || v.size() > 12 ||
        v.find_first_not_of("0123456789") != std::string::npos)
      return "'" + text + "': '" + v + "' is not a size";
    op.dims[d] = std::stoll(v);
    if (op.dims[d] <= 0)
      return "'" + text + "': a size is 0";
  }
  op.type = parts[3];
  return "";
}

/// Reads one profile label into g; on error returns the reason.
std::string parseGemmLabel(std::string text, LabelledGemm &g) {
  if (size_t at = text.find(" @ "); at != std::string::npos)
    text.resize(at);
  std::string callee;
  if (text.rfind("call ", 0) == 0) {
    size_t sp = text.find(' ', 5);
    callee = text.substr(5, sp == std::string::npos ? sp : sp - 5);
    text = sp == std::string::npos ? "" : text.substr(sp + 1);
    if (callee.find("bias") != std::string::npos ||
        callee.find("scaled") != std::string::npos ||
        callee.find("f8") != std::string::npos)
      return "'" + callee + "' is not a plain GEMM entry point (the bench "
             "times lpc_rt_gemm_f32, _bf16, _bf16_bf16 and _f16)";
  }
  while (!text.empty() && text.back() == ' ')
    text.pop_back();
  size_t star = text.find(" * "), arrow = text.find(" -> ");
  if (star == std::string::npos || arrow == std::string::npos || arrow < star)
    return "expected 'A * B -> C', as lpc's profiles label a GEMM call";
  LabelOperand a, b, c;
  for (auto [part, op] :
       {std::pair{text.substr(0, star), &a},
        std::pair{text.substr(star + 3, arrow - star - 3), &b},
        std::pair{text.substr(arrow + 4), &c}})
    if (std::string err = parseLabelOperand(part, *op); !err.empty())
      return err;
  if (c.trans)
    return "C cannot be transposed";
  if (a.type != b.type)
    return "A is " + a.type + " but B is " + b.type;
  if (a.type == "f32" && c.type == "f32")
    g.entry = Entry::F32;
  else if (a.type == "bf16" && c.type == "f32")
    g.entry = Entry::BF16;
  else if (a.type == "bf16" && c.type == "bf16")
    g.entry = Entry::BF16ToBF16;
  else if (a.type == "f16" && c.type == "f32")
    g.entry = Entry::F16;
  else
    return "no entry point takes " + a.type + " operands to a " + c.type +
           " C";
  Shape &s = g.shape;
  s.model = "gemm";
  s.name = "";
  s.batch = c.dims[0];
  s.tA = a.trans, s.tB = b.trans;
  s.M = a.trans ? a.dims[2] : a.dims[1];
  s.K = a.trans ? a.dims[1] : a.dims[2];
  const int64_t bk = b.trans ? b.dims[2] : b.dims[1];
  s.N = b.trans ? b.dims[1] : b.dims[2];
  s.bc = b.dims[0] == 1 && s.batch != 1;
  if (a.dims[0] != s.batch || (b.dims[0] != s.batch && !s.bc))
    return "the batch sizes of A, B and C differ";
  if (bk != s.K)
    return "A's K (" + std::to_string(s.K) + ") is not B's (" +
           std::to_string(bk) + ")";
  if (c.dims[1] != s.M || c.dims[2] != s.N)
    return "C is not " + std::to_string(s.M) + "x" + std::to_string(s.N);
  g.label = text;
  return "";
}

/// The library, ISA and thread settings the figures were taken with.
void printHeader() {
  const dnnl_version_t *v = dnnl_version();
  const char *envCore = std::getenv("OPENBLAS_CORETYPE");
  const char *envOmp = std::getenv("OMP_NUM_THREADS");
  const char *envWait = std::getenv("OMP_WAIT_POLICY");
  std::printf("lpc-gemm-bench: oneDNN %d.%d.%d (cpu runtime %s), ISA %s; "
              "OMP_NUM_THREADS=%s, OMP_WAIT_POLICY=%s, OPENBLAS_CORETYPE=%s, "
              "%ld CPUs online, LpcGemm threads %d\n",
              v->major, v->minor, v->patch,
              v->cpu_runtime == DNNL_RUNTIME_OMP ? "OpenMP" : "other",
              isaName(dnnl_get_effective_cpu_isa()), envOmp ? envOmp : "(unset)",
              envWait ? envWait : "(unset)", envCore ? envCore : "(unset)",
              sysconf(_SC_NPROCESSORS_ONLN), lpc::rt::gemmThreads());
}

/// Times each distinct label's entry point, `rounds` times (in a rotating
/// order), and prints the rates and the step's GEMM total at them.
int runLabelled(std::vector<LabelledGemm> &gemms, int rounds,
                double minSeconds) {
  std::vector<Operands> ops(gemms.size());
  std::vector<std::vector<uint16_t>> c16(gemms.size());
  std::vector<MemRef<uint16_t, 3>> C16(gemms.size());
  for (size_t i = 0; i < gemms.size(); ++i) {
    const Shape &s = gemms[i].shape;
    makeOperands(s, ops[i]);
    c16[i].assign(s.batch * s.M * s.N, 0);
    C16[i] = desc(c16[i], s.batch, s.M, s.N);
  }
  auto run = [&](size_t i) {
    const Shape &s = gemms[i].shape;
    Operands &o = ops[i];
    switch (gemms[i].entry) {
    case Entry::F32:
      _mlir_ciface_lpc_rt_gemm_f32(&o.A, &o.B, &o.C, s.tA, s.tB, s.bc);
      break;
    case Entry::BF16:
      _mlir_ciface_lpc_rt_gemm_bf16(&o.A16, &o.B16, &o.C, s.tA, s.tB, s.bc);
      break;
    case Entry::BF16ToBF16:
      _mlir_ciface_lpc_rt_gemm_bf16_bf16(&o.A16, &o.B16, &C16[i], s.tA, s.tB,
                                         s.bc);
      break;
    case Entry::F16:
      _mlir_ciface_lpc_rt_gemm_f16(&o.AH, &o.BH, &o.C, s.tA, s.tB, s.bc);
      break;
    }
  };
  std::vector<std::vector<double>> rates(gemms.size());
  for (int r = 0; r < rounds; ++r) {
    std::printf("round %d/%d...\n", r + 1, rounds);
    std::fflush(stdout);
    for (size_t j = 0; j < gemms.size(); ++j) {
      const size_t i = (j + r) % gemms.size();
      rates[i].push_back(measure(gemms[i].shape, minSeconds, [&] { run(i); }));
    }
  }
  std::printf("\nGFLOP/s (median and best of the rounds); ms: count x the "
              "time at the best rate\n%5s %5s %5s %5s %5s %-2s %9s %9s %9s  "
              "%s\n",
              "count", "batch", "M", "N", "K", "op", "median", "best", "ms",
              "GEMM");
  double msBest = 0, msMedian = 0, gflop = 0;
  int total = 0;
  for (size_t i = 0; i < gemms.size(); ++i) {
    const Shape &s = gemms[i].shape;
    const int n = gemms[i].count;
    const double best = *std::max_element(rates[i].begin(), rates[i].end());
    const double med = median(rates[i]);
    char op[3] = {s.tA ? 'T' : 'N', s.tB ? 'T' : 'N', 0};
    std::printf("%5d %5lld %5lld %5lld %5lld %-2s %9.1f %9.1f %9.3f  %s\n", n,
                (long long)s.batch, (long long)s.M, (long long)s.N,
                (long long)s.K, op, med, best, n * s.gflop() / best * 1e3,
                gemms[i].label.c_str());
    msBest += n * s.gflop() / best * 1e3;
    msMedian += n * s.gflop() / med * 1e3;
    gflop += n * s.gflop();
    total += n;
  }
  std::printf("total: %d GEMMs (%zu shapes), %.4f GFLOP: %.3f ms at each "
              "shape's best rate (%.1f GFLOP/s), %.3f ms at its median\n",
              total, gemms.size(), gflop, msBest, gflop / msBest * 1e3,
              msMedian);
  return 0;
}
} // namespace

int main(int argc, char **argv) {
  int rounds = 5;
  double minSeconds = 0.1;
  std::string filter;
  bool runNaive = true;
  std::string childSpec =
      "dnnl:passive,oblas:-,oblas:Haswell,oblas:SkylakeX,oblas:Zen";
  std::string childKind, childLabel;
  std::vector<LabelledGemm> labelled;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--rounds")
      rounds = std::atoi(next().c_str());
    else if (a == "--min-ms")
      minSeconds = std::atof(next().c_str()) * 1e-3;
    else if (a == "--filter")
      filter = next();
    else if (a == "--no-naive")
      runNaive = false;
    else if (a == "--children")
      childSpec = next();
    else if (a == "--gemm") {
      LabelledGemm g;
      std::string text = next();
      if (std::string err = parseGemmLabel(text, g); !err.empty()) {
        std::fprintf(stderr, "lpc-gemm-bench: --gemm '%s': %s\n",
                     text.c_str(), err.c_str());
        return 2;
      }
      auto same = std::find_if(labelled.begin(), labelled.end(),
                               [&](const LabelledGemm &h) {
                                 return h.label == g.label;
                               });
      if (same == labelled.end())
        same = labelled.insert(labelled.end(), g);
      ++same->count;
    } else if (a == "--child") {
      childKind = next();
      childLabel = next();
    } else {
      std::fprintf(stderr,
                   "usage: lpc-gemm-bench [--rounds N] [--min-ms MS] "
                   "[--filter SUBSTR] [--no-naive] [--children "
                   "dnnl:passive,oblas:-,oblas:Haswell,oblas:SkylakeX,"
                   "oblas:Zen]\n"
                   "       lpc-gemm-bench [--rounds N] [--min-ms MS] "
                   "--gemm 'A * B -> C' [--gemm ...]   (labels from "
                   "lpc-jit --profile)\n");
      return 2;
    }
  }
  if (rounds < 1 || !(minSeconds >= 0)) {
    std::fprintf(stderr, "lpc-gemm-bench: --rounds must be at least 1 and "
                         "--min-ms not negative\n");
    return 2;
  }
  if (!labelled.empty()) {
    printHeader();
    return runLabelled(labelled, rounds, minSeconds);
  }
  if (childKind == "oblas")
    return openblasChild(childLabel, minSeconds, filter);
  if (childKind == "dnnl")
    return dnnlChild(childLabel, minSeconds, filter);

  struct Backend {
    std::string name;
    std::function<void(const Shape &, Operands &)> run;
    int threads = 0; // LpcGemm's setGemmThreads; 0: the default
  };
  std::vector<Backend> inproc = {
      {"dnnl-f32",
       [](const Shape &s, Operands &o) {
         _mlir_ciface_lpc_rt_gemm_f32(&o.A, &o.B, &o.C, s.tA, s.tB, s.bc);
       }},
      {"dnnl-bf16",
       [](const Shape &s, Operands &o) {
         _mlir_ciface_lpc_rt_gemm_bf16(&o.A16, &o.B16, &o.C, s.tA, s.tB, s.bc);
       }},
      {"f16-wide",
       [](const Shape &s, Operands &o) {
         _mlir_ciface_lpc_rt_gemm_f16(&o.AH, &o.BH, &o.C, s.tA, s.tB, s.bc);
       }},
      {"dnnl_sgemm", dnnlSgemm},
      {"dnnl-f32/1t",
       [](const Shape &s, Operands &o) {
         _mlir_ciface_lpc_rt_gemm_f32(&o.A, &o.B, &o.C, s.tA, s.tB, s.bc);
       },
       1},
      {"dnnl-bf16/1t",
       [](const Shape &s, Operands &o) {
         _mlir_ciface_lpc_rt_gemm_bf16(&o.A16, &o.B16, &o.C, s.tA, s.tB, s.bc);
       },
       1},
  };
  std::vector<Child> children;
  for (const std::string &spec : split(childSpec, ',')) {
    size_t colon = spec.find(':');
    Child c{spec.substr(0, colon),
            colon == std::string::npos ? "" : spec.substr(colon + 1)};
    if ((c.kind != "oblas" && c.kind != "dnnl") || c.label.empty()) {
      std::fprintf(stderr, "bad child spec '%s'\n", spec.c_str());
      return 2;
    }
    children.push_back(c);
  }
  std::vector<std::string> columns;
  for (auto &b : inproc)
    columns.push_back(b.name);
  for (auto &c : children)
    for (auto &col : c.columns())
      columns.push_back(col);
  if (runNaive)
    columns.push_back("naive");
  const int nCols = static_cast<int>(columns.size());
  auto columnIndex = [&](const std::string &name) {
    for (int c = 0; c < nCols; ++c)
      if (columns[c] == name)
        return c;
    return -1;
  };

  printHeader();
  std::printf("%d rounds, >= %.0f ms per measurement\n", rounds,
              minSeconds * 1e3);
  std::fflush(stdout);

  // results[shape][column] = one value per round
  std::vector<std::vector<std::vector<double>>> results(
      kNumShapes, std::vector<std::vector<double>>(nCols));
  std::map<std::string, std::string> childInfo; // column -> description
  int dnnlThreads = 0;
  std::vector<Operands> ops(kNumShapes);
  for (int i = 0; i < kNumShapes; ++i)
    if (selected(kShapes[i], filter))
      makeOperands(kShapes[i], ops[i]);

  for (int r = 0; r < rounds; ++r) {
    std::printf("round %d/%d...\n", r + 1, rounds);
    std::fflush(stdout);
    for (int i = 0; i < kNumShapes; ++i) {
      const Shape &s = kShapes[i];
      if (!selected(s, filter))
        continue;
      const int n = static_cast<int>(inproc.size());
      for (int j = 0; j < n; ++j) {
        const int b = (j + r + i) % n; // rotate the order
        lpc::rt::setGemmThreads(inproc[b].threads);
        results[i][b].push_back(measure(
            s, minSeconds, [&] { inproc[b].run(s, ops[i]); }));
        lpc::rt::setGemmThreads(0);
      }
      if (!dnnlThreads)
        dnnlThreads = threadCount();
      if (runNaive)
        results[i][nCols - 1].push_back(
            measure(s, 0.0, [&] { naive(s, ops[i]); }));
    }
    for (size_t k = 0; k < children.size(); ++k) {
      const Child &c = children[(k + r) % children.size()];
      ChildResult cr = runChild(c, minSeconds, filter);
      if (!cr.error.empty()) {
        std::printf("  child %s:%s: %s\n", c.kind.c_str(), c.label.c_str(),
                    cr.error.c_str());
        continue;
      }
      std::string desc;
      for (auto &[key, value] : cr.info)
        desc += (desc.empty() ? "" : ", ") + key + " " + value;
      for (auto &col : c.columns())
        childInfo[col] = desc;
      for (auto &[col, idx, g] : cr.results)
        if (int ci = columnIndex(col); ci >= 0)
          results[idx][ci].push_back(g);
    }
  }

  std::printf("\nthreads in this process after oneDNN ran: %d (main + "
              "OpenMP workers)\n",
              dnnlThreads);
  for (auto &[col, desc] : childInfo)
    std::printf("%s (child process): %s\n", col.c_str(), desc.c_str());
  auto table = [&](const char *title, bool best) {
    std::printf("\n%s\n%-4s %-24s %5s %5s %5s %5s %-3s", title, "", "shape",
                "batch", "M", "N", "K", "op");
    for (auto &c : columns)
      std::printf(" %12s", c.c_str());
    std::printf("\n");
    std::vector<std::map<std::string, double>> stepMs(nCols);
    for (int i = 0; i < kNumShapes; ++i) {
      const Shape &s = kShapes[i];
      if (!selected(s, filter))
        continue;
      char op[4] = {s.tA ? 'T' : 'N', s.tB ? 'T' : 'N', s.bc ? 'b' : ' ', 0};
      std::printf("%-4s %-24s %5lld %5lld %5lld %5lld %-3s", s.model, s.name,
                  (long long)s.batch, (long long)s.M, (long long)s.N,
                  (long long)s.K, op);
      for (int c = 0; c < nCols; ++c) {
        const std::vector<double> &v = results[i][c];
        double m = best ? (v.empty() ? NAN : *std::max_element(v.begin(), v.end()))
                        : median(v);
        std::printf(" %12.1f", m);
        stepMs[c][s.model] += kCount[i] * s.gflop() / m * 1e3;
      }
      std::printf("\n");
    }
    for (const char *model : {"mlp", "tfm"}) {
      std::printf("%-4s %-52s", model, "GEMM ms per train step");
      for (int c = 0; c < nCols; ++c)
        std::printf(" %12.2f", stepMs[c][model]);
      std::printf("\n");
    }
  };
  table("GFLOP/s, median over rounds:", false);
  table("GFLOP/s, best round (the machine when quiet):", true);

  // Per-call overhead of the entry point (descriptor checks, primitive
  // lookup, memory objects, execute) on a 1x1x1 problem.
  {
    float a = 1, b = 2, c = 0;
    MemRef<float, 3> A{&a, &a, 0, {1, 1, 1}, {1, 1, 1}};
    MemRef<float, 3> B{&b, &b, 0, {1, 1, 1}, {1, 1, 1}};
    MemRef<float, 3> C{&c, &c, 0, {1, 1, 1}, {1, 1, 1}};
    std::vector<double> us;
    for (int r = 0; r < 5; ++r) {
      _mlir_ciface_lpc_rt_gemm_f32(&A, &B, &C, 0, 0, 0);
      const int reps = 20000;
      double t0 = now();
      for (int k = 0; k < reps; ++k)
        _mlir_ciface_lpc_rt_gemm_f32(&A, &B, &C, 0, 0, 0);
      us.push_back((now() - t0) / reps * 1e6);
    }
    std::printf("\nper-call overhead (1x1x1 f32 through LpcGemm): %.2f us "
                "(median of 5)\n",
                median(us));
  }
  return 0;
}
