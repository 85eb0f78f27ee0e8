//===- PtxWarp.cpp - what a warp's global stores touch, from PTX ----------===//
//
// A small interpreter of PTX's integer instructions (PtxWarp.h says why).
// The kernel text is parsed once into instructions over numbered registers;
// each lane then runs from the top with its own registers, following
// branches whose predicates it knows, for at most kStepBudget
// instructions, and records the address of each global store the first
// time it runs it. What it cannot compute (loads from memory, floating
// point, instructions it does not know) is unknown, and unknown spreads to
// what is computed from it.
//
//===----------------------------------------------------------------------===//

#include "PtxWarp.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string>
#include <unordered_map>

namespace lpc {
namespace rt {
namespace cuda {
namespace ptx {

namespace {

constexpr unsigned kWarp = 32;
constexpr unsigned kSectorBytes = 32;
// Instructions one lane may run: loops over index ranges of a few hundred
// iterations fit; a store beyond the budget stays unresolved.
constexpr unsigned kStepBudget = 1u << 14;
// Sample warps spread over the launch (merged kernels branch on the thread
// index to their parts); sampling stops once every store is resolved.
constexpr unsigned kSamples = 16;
// Single threads spread over the launch, to count the threads that run
// each store.
constexpr unsigned kProbes = 64;

struct Val {
  uint64_t v = 0;
  bool known = false;
};

enum class Special : uint8_t { None, TidX, CtaidX, NtidX, NctaidX, Other };

struct Operand {
  enum Kind : uint8_t { None, Reg, Imm, Spec, Param, Mem, Label } kind = None;
  bool negate = false; // !%p
  int reg = -1;        // Reg, Mem (base), -1 for none
  int64_t imm = 0;     // Imm, Mem offset, Param offset
  Special spec = Special::None;
  int param = -1;  // Param: kernel parameter number
  size_t target = 0; // Label: instruction index (resolved after parsing)
  std::string label;
};

enum class Op : uint8_t {
  Mov, Cvt, Add, Sub, MulLo, MulHi, MulWide, MadLo, MadWide, Shl, Shr, And, Or, Xor, Not, Neg,
  Min, Max, Div, Rem, Bfe, Selp, Setp, LdParam, Ld, StGlobal, St, Bra, Ret, Other
};

struct Inst {
  Op op = Op::Other;
  size_t line = 0;
  int guard = -1; // predicate register, -1: none
  bool guardNeg = false;
  unsigned bits = 64;    // operation width
  bool isSigned = false; // .s types (and signed comparisons)
  bool isFloat = false;  // .f types: the result is unknown
  unsigned srcBits = 64; // cvt: source width
  bool srcSigned = false, srcFloat = false;
  std::string cmp;         // setp
  unsigned storeBytes = 0; // st.global: bytes per lane
  std::vector<Operand> dsts; // registers written (unknown unless computed)
  std::vector<Operand> srcs;
};

uint64_t mask(unsigned bits) { return bits >= 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1; }

int64_t sext(uint64_t v, unsigned bits) {
  if (bits >= 64)
    return int64_t(v);
  uint64_t m = uint64_t(1) << (bits - 1);
  v &= mask(bits);
  return int64_t((v ^ m) - m);
}

/// Width, signedness and float-ness of a type suffix ("s64", "b32", "f32").
bool parseType(std::string_view t, unsigned &bits, bool &isSigned, bool &isFloat) {
  if (t.size() < 2 || !std::isdigit(static_cast<unsigned char>(t[1])))
    return t == "pred" ? (bits = 1, isSigned = false, isFloat = false, true) : false;
  char k = t[0];
  if (k != 'u' && k != 's' && k != 'b' && k != 'f')
    return false;
  bits = unsigned(std::strtoul(std::string(t.substr(1)).c_str(), nullptr, 10));
  isSigned = k == 's';
  isFloat = k == 'f';
  return bits > 0 && bits <= 64;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
    s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
    s.remove_suffix(1);
  return s;
}

/// Operands split at top-level commas (not inside [] or {}).
std::vector<std::string_view> splitOperands(std::string_view s) {
  std::vector<std::string_view> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '[' || c == '{' || c == '(')
      ++depth;
    else if (c == ']' || c == '}' || c == ')')
      --depth;
    else if (c == ',' && depth == 0) {
      out.push_back(trim(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  if (start < s.size())
    out.push_back(trim(s.substr(start)));
  return out;
}

class Program {
public:
  std::vector<Inst> insts;
  int numRegs = 0;

  void parse(std::string_view body) {
    std::unordered_map<std::string, size_t> labels;
    size_t line = 0, start = 0;
    while (start <= body.size()) {
      size_t end = body.find('\n', start);
      if (end == std::string_view::npos)
        end = body.size();
      parseLine(trim(body.substr(start, end - start)), line, labels);
      ++line;
      start = end + 1;
    }
    for (Inst &in : insts)
      for (Operand &o : in.srcs)
        if (o.kind == Operand::Label) {
          auto it = labels.find(o.label);
          o.target = it == labels.end() ? insts.size() : it->second;
        }
  }

private:
  std::unordered_map<std::string, int> regs_;

  int reg(std::string_view name) {
    auto [it, inserted] = regs_.try_emplace(std::string(name), numRegs);
    if (inserted)
      ++numRegs;
    return it->second;
  }

  Operand operand(std::string_view s) {
    Operand o;
    s = trim(s);
    if (s.empty())
      return o;
    if (s[0] == '!') {
      o.negate = true;
      s.remove_prefix(1);
    }
    if (s[0] == '[') {
      std::string_view in = trim(s.substr(1, s.find(']') - 1));
      size_t plus = in.find('+');
      std::string_view base = trim(in.substr(0, plus));
      int64_t off = plus == std::string_view::npos
                        ? 0
                        : std::strtoll(std::string(trim(in.substr(plus + 1))).c_str(), nullptr, 10);
      if (size_t p = base.find("_param_"); p != std::string_view::npos) {
        o.kind = Operand::Param;
        o.param = std::atoi(std::string(base.substr(p + 7)).c_str());
        o.imm = off;
      } else if (!base.empty() && base[0] == '%') {
        o.kind = Operand::Mem;
        o.reg = reg(base);
        o.imm = off;
      } else {
        o.kind = Operand::Mem; // a named variable: unknown address
        o.imm = off;
      }
      return o;
    }
    if (s[0] == '%') {
      static const struct {
        const char *name;
        Special spec;
      } kSpecials[] = {{"%tid.x", Special::TidX},     {"%ctaid.x", Special::CtaidX},
                       {"%ntid.x", Special::NtidX},   {"%nctaid.x", Special::NctaidX}};
      for (const auto &k : kSpecials)
        if (s == k.name) {
          o.kind = Operand::Spec;
          o.spec = k.spec;
          return o;
        }
      if (s.find('.') != std::string_view::npos) { // %tid.y, %laneid.x, ...
        o.kind = Operand::Spec;
        o.spec = Special::Other;
        return o;
      }
      o.kind = Operand::Reg;
      o.reg = reg(s);
      return o;
    }
    if (s[0] == '$') {
      o.kind = Operand::Label;
      o.label = std::string(s);
      return o;
    }
    if (s.size() > 2 && s[0] == '0' && (s[1] == 'f' || s[1] == 'd' || s[1] == 'F' || s[1] == 'D'))
      return o; // a float literal: unknown
    if (std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '-') {
      o.kind = Operand::Imm;
      o.imm = int64_t(std::strtoull(std::string(s).c_str(), nullptr, 0));
      if (s[0] == '-')
        o.imm = std::strtoll(std::string(s).c_str(), nullptr, 0);
      return o;
    }
    return o; // anything else: unknown
  }

  void parseLine(std::string_view s, size_t line,
                 std::unordered_map<std::string, size_t> &labels) {
    if (s.empty() || s[0] == '.' || s[0] == '{' || s[0] == '}' || s.substr(0, 2) == "//")
      return;
    if (s.back() == ':') {
      labels[std::string(s.substr(0, s.size() - 1))] = insts.size();
      return;
    }
    if (s.back() == ';')
      s.remove_suffix(1);
    Inst in;
    in.line = line;
    if (s[0] == '@') {
      size_t sp = s.find_first_of(" \t");
      std::string_view g = s.substr(1, sp - 1);
      if (!g.empty() && g[0] == '!') {
        in.guardNeg = true;
        g.remove_prefix(1);
      }
      in.guard = reg(g);
      s = trim(s.substr(sp));
    }
    size_t sp = s.find_first_of(" \t");
    std::string_view opcode = s.substr(0, sp);
    std::string_view rest = sp == std::string_view::npos ? std::string_view() : trim(s.substr(sp));
    std::vector<std::string_view> parts;
    for (size_t b = 0, e; b <= opcode.size(); b = e + 1) {
      e = opcode.find('.', b);
      if (e == std::string_view::npos)
        e = opcode.size();
      parts.push_back(opcode.substr(b, e - b));
    }
    std::string_view base = parts[0];
    // The type: the last part that is one (cvt: destination, then source).
    std::vector<std::string_view> types;
    for (size_t i = 1; i < parts.size(); ++i) {
      unsigned bits;
      bool sg, fl;
      if (parseType(parts[i], bits, sg, fl))
        types.push_back(parts[i]);
    }
    if (!types.empty())
      parseType(types.back(), in.bits, in.isSigned, in.isFloat);
    auto hasPart = [&](std::string_view m) {
      return std::find(parts.begin() + 1, parts.end(), m) != parts.end();
    };
    std::vector<std::string_view> ops = splitOperands(rest);
    auto dstsFrom = [&](std::string_view d) {
      d = trim(d);
      if (!d.empty() && d[0] == '{') {
        for (std::string_view r : splitOperands(d.substr(1, d.size() - 2)))
          if (Operand o = operand(r); o.kind == Operand::Reg)
            in.dsts.push_back(o);
      } else if (size_t bar = d.find('|'); bar != std::string_view::npos) {
        in.dsts.push_back(operand(d.substr(0, bar)));
        in.dsts.push_back(operand(d.substr(bar + 1)));
      } else if (Operand o = operand(d); o.kind == Operand::Reg) {
        in.dsts.push_back(o);
      }
    };
    static const std::unordered_map<std::string_view, Op> kOps = {
        {"mov", Op::Mov},   {"cvta", Op::Mov},  {"cvt", Op::Cvt},   {"add", Op::Add},
        {"sub", Op::Sub},   {"shl", Op::Shl},   {"shr", Op::Shr},   {"and", Op::And},
        {"or", Op::Or},     {"xor", Op::Xor},   {"not", Op::Not},   {"neg", Op::Neg},
        {"min", Op::Min},   {"max", Op::Max},   {"div", Op::Div},   {"rem", Op::Rem},
        {"bfe", Op::Bfe},   {"selp", Op::Selp}, {"setp", Op::Setp}, {"bra", Op::Bra},
        {"ret", Op::Ret},   {"exit", Op::Ret}};
    if (auto it = kOps.find(base); it != kOps.end())
      in.op = it->second;
    else if (base == "mul")
      in.op = hasPart("wide") ? Op::MulWide
              : hasPart("lo") ? Op::MulLo
              : hasPart("hi") ? Op::MulHi
                              : Op::Other;
    else if (base == "mad")
      in.op = hasPart("wide") ? Op::MadWide : hasPart("lo") ? Op::MadLo : Op::Other;
    else if (base == "ld")
      in.op = parts.size() > 1 && parts[1] == "param" ? Op::LdParam : Op::Ld;
    else if (base == "st")
      in.op = parts.size() > 1 && parts[1] == "global" ? Op::StGlobal : Op::St;
    if (in.op == Op::Cvt && types.size() == 2) {
      parseType(types[0], in.bits, in.isSigned, in.isFloat);
      parseType(types[1], in.srcBits, in.srcSigned, in.srcFloat);
    }
    if (in.op == Op::Setp && parts.size() > 1)
      in.cmp = std::string(parts[1]);
    if (in.op == Op::Bra) {
      if (!ops.empty())
        in.srcs.push_back(operand(ops[0]));
    } else if (in.op == Op::StGlobal || in.op == Op::St) {
      unsigned count = 1;
      for (size_t i = 1; i < parts.size(); ++i)
        if (parts[i].size() == 2 && parts[i][0] == 'v')
          count = unsigned(parts[i][1] - '0');
      in.storeBytes = count * (in.bits / 8);
      if (!ops.empty())
        in.srcs.push_back(operand(ops[0]));
    } else if (in.op != Op::Ret) {
      if (!ops.empty())
        dstsFrom(ops[0]);
      for (size_t i = 1; i < ops.size(); ++i)
        in.srcs.push_back(operand(ops[i]));
    }
    insts.push_back(std::move(in));
  }
};

struct Lane {
  std::vector<Val> regs;
  uint64_t tid = 0, ctaid = 0, ntid = 0, nctaid = 0;
};

Val read(const Lane &l, const Operand &o) {
  switch (o.kind) {
  case Operand::Reg: {
    Val v = l.regs[size_t(o.reg)];
    if (o.negate && v.known)
      v.v = !v.v;
    return v;
  }
  case Operand::Imm:
    return {uint64_t(o.imm), true};
  case Operand::Spec:
    switch (o.spec) {
    case Special::TidX:
      return {l.tid, true};
    case Special::CtaidX:
      return {l.ctaid, true};
    case Special::NtidX:
      return {l.ntid, true};
    case Special::NctaidX:
      return {l.nctaid, true};
    case Special::Other:
      return {0, true}; // 1-D launches: the other dimensions are 0
    default:
      return {};
    }
  default:
    return {};
  }
}

bool compare(const std::string &cmp, uint64_t a, uint64_t b, unsigned bits, bool isSigned,
             bool &known) {
  known = true;
  int64_t sa = sext(a, bits), sb = sext(b, bits);
  a &= mask(bits);
  b &= mask(bits);
  if (cmp == "eq")
    return a == b;
  if (cmp == "ne")
    return a != b;
  if (cmp == "lt")
    return isSigned ? sa < sb : a < b;
  if (cmp == "le")
    return isSigned ? sa <= sb : a <= b;
  if (cmp == "gt")
    return isSigned ? sa > sb : a > b;
  if (cmp == "ge")
    return isSigned ? sa >= sb : a >= b;
  if (cmp == "lo")
    return a < b;
  if (cmp == "ls")
    return a <= b;
  if (cmp == "hi")
    return a > b;
  if (cmp == "hs")
    return a >= b;
  known = false;
  return false;
}

/// A store instruction as one lane ran it: how often, and the address of
/// its first execution (unknown if its address was).
struct Seen {
  unsigned runs = 0;
  Val addr;
};

/// Runs one lane, filling `seen` (indexed by instruction); false if it ran
/// out of steps.
bool run(const Program &p, const std::vector<uint64_t> &params, Lane &l,
         std::vector<Seen> &seen) {
  size_t pc = 0;
  for (unsigned step = 0; step < kStepBudget; ++step) {
    if (pc >= p.insts.size())
      return true;
    const Inst &in = p.insts[pc++];
    bool guarded = in.guard >= 0;
    Val g = guarded ? l.regs[size_t(in.guard)] : Val{1, true};
    if (guarded && g.known && in.guardNeg)
      g.v = !g.v;
    auto setUnknown = [&] {
      for (const Operand &d : in.dsts)
        l.regs[size_t(d.reg)] = {};
    };
    if (guarded && !g.known) {
      if (in.op == Op::Bra || in.op == Op::Ret)
        return true; // cannot follow: what it saw stands
      if (in.op == Op::StGlobal && seen[pc - 1].runs++ == 0)
        seen[pc - 1].addr = {};
      setUnknown(); // may or may not have run
      continue;
    }
    if (!g.v)
      continue;
    if (in.op == Op::Ret)
      return true;
    if (in.op == Op::Bra) {
      if (in.srcs.empty() || in.srcs[0].kind != Operand::Label)
        return true;
      pc = in.srcs[0].target;
      continue;
    }
    if (in.op == Op::StGlobal) {
      if (seen[pc - 1].runs++ == 0) {
        const Operand &a = in.srcs.empty() ? Operand() : in.srcs[0];
        Val addr = a.kind == Operand::Mem && a.reg >= 0 ? l.regs[size_t(a.reg)] : Val{};
        addr.v += uint64_t(a.kind == Operand::Mem ? a.imm : 0);
        seen[pc - 1].addr = addr;
      }
      continue;
    }
    if (in.dsts.empty())
      continue;
    Val r;
    auto src = [&](size_t i) { return i < in.srcs.size() ? read(l, in.srcs[i]) : Val{}; };
    unsigned w = in.bits;
    uint64_t m = mask(w);
    Val a = src(0), b = src(1), c = src(2);
    bool ab = a.known && b.known, abc = ab && c.known;
    switch (in.op) {
    case Op::Mov:
      r = a;
      break;
    case Op::Cvt:
      if (a.known && !in.isFloat && !in.srcFloat)
        r = {uint64_t(in.srcSigned ? uint64_t(sext(a.v, in.srcBits)) : (a.v & mask(in.srcBits))), true};
      break;
    case Op::LdParam:
      if (!in.srcs.empty() && in.srcs[0].kind == Operand::Param && in.srcs[0].imm == 0 &&
          in.srcs[0].param >= 0 && size_t(in.srcs[0].param) < params.size())
        r = {params[size_t(in.srcs[0].param)], true};
      break;
    case Op::Add:
      if (ab)
        r = {a.v + b.v, true};
      break;
    case Op::Sub:
      if (ab)
        r = {a.v - b.v, true};
      break;
    case Op::MulLo:
      if (ab)
        r = {a.v * b.v, true};
      break;
    case Op::MulWide:
    case Op::MadWide:
      if (ab && (in.op == Op::MulWide || c.known)) {
        uint64_t x = in.isSigned ? uint64_t(sext(a.v, w)) : a.v & m;
        uint64_t y = in.isSigned ? uint64_t(sext(b.v, w)) : b.v & m;
        r = {x * y + (in.op == Op::MadWide ? c.v : 0), true};
        w = std::min(2 * w, 64u);
        m = mask(w);
      }
      break;
    case Op::MulHi:
      // The high half of the full product (division by a constant).
      if (ab) {
        unsigned __int128 x, y;
        if (in.isSigned) {
          __int128 sx = sext(a.v, w), sy = sext(b.v, w);
          __int128 prod = sx * sy;
          r = {uint64_t(prod >> w), true};
        } else {
          x = a.v & m;
          y = b.v & m;
          r = {uint64_t((x * y) >> w), true};
        }
      }
      break;
    case Op::MadLo:
      if (abc)
        r = {a.v * b.v + c.v, true};
      break;
    case Op::Shl:
      if (ab)
        r = {(b.v & m) >= w ? 0 : a.v << (b.v & m), true};
      break;
    case Op::Shr:
      if (ab) {
        uint64_t s = b.v & 0xffffffff;
        int64_t x = sext(a.v, w);
        r = {s >= w ? (in.isSigned && x < 0 ? ~uint64_t(0) : 0)
                    : in.isSigned ? uint64_t(x >> s) : (a.v & m) >> s,
             true};
      }
      break;
    case Op::And:
      if (ab)
        r = {a.v & b.v, true};
      else if ((a.known && a.v == 0) || (b.known && b.v == 0))
        r = {0, true};
      break;
    case Op::Or:
      if (ab)
        r = {a.v | b.v, true};
      break;
    case Op::Xor:
      if (ab)
        r = {a.v ^ b.v, true};
      break;
    case Op::Not:
      if (a.known)
        r = {w == 1 ? uint64_t(!a.v) : ~a.v, true};
      break;
    case Op::Neg:
      if (a.known)
        r = {uint64_t(0) - a.v, true};
      break;
    case Op::Min:
    case Op::Max:
      if (ab) {
        bool less = in.isSigned ? sext(a.v, w) < sext(b.v, w) : (a.v & m) < (b.v & m);
        r = {(in.op == Op::Min) == less ? a.v : b.v, true};
      }
      break;
    case Op::Div:
    case Op::Rem:
      if (ab && (b.v & m) != 0) {
        if (in.isSigned) {
          int64_t x = sext(a.v, w), y = sext(b.v, w);
          if (!(y == -1 && x == INT64_MIN))
            r = {uint64_t(in.op == Op::Div ? x / y : x % y), true};
        } else {
          r = {in.op == Op::Div ? (a.v & m) / (b.v & m) : (a.v & m) % (b.v & m), true};
        }
      }
      break;
    case Op::Bfe:
      if (abc) {
        uint64_t pos = b.v & 0xff, len = c.v & 0xff;
        uint64_t x = pos >= w ? (in.isSigned && sext(a.v, w) < 0 ? ~uint64_t(0) : 0)
                              : uint64_t(in.isSigned ? uint64_t(sext(a.v, w) >> pos)
                                                     : (a.v & m) >> pos);
        if (len == 0)
          x = 0;
        else if (len < 64)
          x = in.isSigned ? uint64_t(sext(x, unsigned(len))) : x & mask(unsigned(len));
        r = {x, true};
      }
      break;
    case Op::Selp:
      if (c.known) {
        r = c.v ? a : b;
      }
      break;
    case Op::Setp: {
      if (w == 1 || in.isFloat || !ab)
        break; // float compare or unknown operands
      bool known;
      bool t = compare(in.cmp, a.v, b.v, w, in.isSigned, known);
      if (known) {
        l.regs[size_t(in.dsts[0].reg)] = {t, true};
        if (in.dsts.size() > 1)
          l.regs[size_t(in.dsts[1].reg)] = {!t, true};
        continue;
      }
      break;
    }
    default:
      break;
    }
    // Predicate logic (and.pred, or.pred, not.pred, xor.pred).
    if (w == 1 && (in.op == Op::And || in.op == Op::Or || in.op == Op::Xor)) {
      if (ab)
        r = {in.op == Op::And ? (a.v && b.v) : in.op == Op::Or ? (a.v || b.v) : (!a.v != !b.v),
             true};
      else
        r = {};
    }
    if (in.isFloat && in.op != Op::Mov && in.op != Op::Selp && in.op != Op::LdParam)
      r = {};
    if (r.known)
      r.v &= m;
    for (size_t i = 0; i < in.dsts.size(); ++i)
      l.regs[size_t(in.dsts[i].reg)] = i == 0 ? r : Val{};
  }
  return false;
}

} // namespace

std::map<size_t, WarpStore> warpStores(std::string_view body, const std::vector<uint64_t> &params,
                                       uint64_t blockX, uint64_t threads) {
  std::map<size_t, WarpStore> out;
  if (blockX == 0 || threads == 0)
    return out;
  Program p;
  p.parse(body);
  std::vector<size_t> stores;
  for (size_t i = 0; i < p.insts.size(); ++i)
    if (p.insts[i].op == Op::StGlobal)
      stores.push_back(i);
  if (stores.empty())
    return out;
  uint64_t warps = (threads + kWarp - 1) / kWarp;
  uint64_t blocks = (threads + blockX - 1) / blockX;
  auto runThread = [&](uint64_t gid, std::vector<Seen> &seen) {
    Lane l;
    l.regs.assign(size_t(p.numRegs), Val{});
    l.ntid = blockX;
    l.nctaid = blocks;
    l.ctaid = gid / blockX;
    l.tid = gid % blockX;
    seen.assign(p.insts.size(), Seen{});
    return run(p, params, l, seen);
  };
  // How many probes run each store.
  std::vector<unsigned> probed(p.insts.size());
  unsigned probes = unsigned(std::min<uint64_t>(kProbes, threads));
  for (unsigned j = 0; j < probes; ++j) {
    std::vector<Seen> seen;
    runThread(probes > 1 ? (threads - 1) * j / (probes - 1) : 0, seen);
    for (size_t i : stores)
      probed[i] += seen[i].runs > 0;
  }
  // Basic blocks: a label starts one, a branch or return ends one.
  std::map<size_t, std::vector<size_t>> byBlock;
  {
    std::vector<bool> starts(p.insts.size() + 1);
    for (const Inst &in : p.insts)
      for (const Operand &o : in.srcs)
        if (o.kind == Operand::Label && o.target < starts.size())
          starts[o.target] = true;
    size_t block = 0;
    for (size_t i = 0; i < p.insts.size(); ++i) {
      if (starts[i] || (i > 0 && (p.insts[i - 1].op == Op::Bra || p.insts[i - 1].op == Op::Ret)))
        ++block;
      if (p.insts[i].op == Op::StGlobal)
        byBlock[block].push_back(i);
    }
  }
  std::vector<bool> resolved(p.insts.size());
  size_t left = stores.size();
  uint64_t lastSample = ~uint64_t(0);
  for (unsigned s = 0; s < kSamples && left; ++s) {
    // Warps at s / (kSamples - 1) of the launch, the first and the last.
    uint64_t w = kSamples > 1 ? (warps - 1) * s / (kSamples - 1) : 0;
    if (w == lastSample)
      continue;
    lastSample = w;
    std::vector<std::vector<Seen>> seen(kWarp);
    unsigned lanes = 0;
    bool finished = true;
    for (unsigned k = 0; k < kWarp; ++k) {
      uint64_t gid = w * kWarp + k;
      if (gid >= threads)
        break;
      finished = runThread(gid, seen[k]) && finished;
      ++lanes;
    }
    // A block's stores together: a lane that fills a sector with two
    // 16-byte stores one after the other (a widened loop's 32 bytes) leaves
    // nothing partial; pieces of a sector written by different blocks, or
    // by the same block's different runs (loop steps), are partial.
    for (auto &[block, members] : byBlock) {
      if (resolved[members.front()])
        continue;
      unsigned ran = 0;
      uint64_t runs = 0;
      bool allKnown = true;
      std::map<uint64_t, uint32_t> bytes; // sector -> bytes written (bit mask)
      for (size_t i : members)
        for (unsigned k = 0; k < lanes && allKnown; ++k) {
          const Val &addr = seen[k][i].addr;
          if (!seen[k][i].runs)
            continue;
          if (i == members.front()) {
            ++ran;
            runs += seen[k][i].runs;
          }
          allKnown = addr.known && p.insts[i].storeBytes > 0;
          for (unsigned b = 0; allKnown && b < p.insts[i].storeBytes; ++b) {
            uint64_t at = addr.v + b;
            bytes[at / kSectorBytes] |= uint32_t(1) << (at % kSectorBytes);
          }
        }
      if (!ran || !allKnown)
        continue;
      // The block's sectors, counted at its first store (0 at the others).
      for (size_t i : members) {
        WarpStore ws;
        ws.lanes = ran;
        ws.runs = finished ? double(runs) / ran : 0;
        ws.threads = double(threads) * std::max(probed[members.front()], 1u) / probes;
        if (i == members.front()) {
          ws.sectors = unsigned(bytes.size());
          for (const auto &[sector, m] : bytes)
            ws.partial += m != 0xffffffffu;
        }
        out[p.insts[i].line] = ws;
        resolved[i] = true;
        --left;
      }
    }
  }
  return out;
}

} // namespace ptx
} // namespace cuda
} // namespace rt
} // namespace lpc
