//===- Safetensors.cpp - safetensors writer and validating reader ----------===//

#include "lpc/Runtime/Safetensors.h"

#include "lpc/Runtime/File.h"
#include "lpc/Runtime/Json.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <set>
#include <sys/stat.h>
#include <unistd.h>
#ifdef LPC_RUNTIME_HAVE_ZLIB
#include <zlib.h>
#endif

namespace lpc {
namespace rt {

namespace {
/// The reference implementation refuses headers above this size.
constexpr uint64_t kMaxHeaderSize = 100000000;

/// Order of the reference's Dtype enum ("increasing alignment"); the writer
/// lays tensors out by decreasing rank, then by name, as the reference does.
int alignmentRank(DType d) {
  switch (d) {
  case DType::BOOL:
    return 0;
  case DType::F8_E5M2:
    return 3;
  case DType::F8_E4M3:
    return 4;
  case DType::F16:
    return 7;
  case DType::BF16:
    return 8;
  case DType::I32:
    return 9;
  case DType::F32:
    return 11;
  case DType::I64:
    return 13;
  }
  return 0;
}

/// safetensors dtypes that lpc does not use.
bool isOtherSafetensorsDType(const std::string &name) {
  static const char *const names[] = {"F64",     "U8",      "I8",     "I16",
                                      "U16",     "U32",     "U64",    "F8_E8M0",
                                      "F4",      "F6_E2M3", "F6_E3M2", "C64"};
  for (const char *n : names)
    if (name == n)
      return true;
  return false;
}

std::string supportedDTypes() {
  std::string s;
  for (DType d : kAllDTypes) {
    if (!s.empty())
      s += ", ";
    s += dtypeName(d);
  }
  return s;
}

std::string quoted(const std::string &name) { return "'" + name + "'"; }

std::string specString(DType dtype, const std::vector<int64_t> &shape) {
  return std::string(dtypeName(dtype)) + " " + shapeString(shape);
}

struct Prepared {
  std::string header; // padded JSON
  std::vector<const TensorView *> order;
  uint64_t bufferSize = 0;
};

Expected<Prepared> prepare(const std::vector<TensorView> &tensors, const Metadata &metadata,
                           const std::string &source) {
  Prepared p;
  std::set<std::string> names;
  for (const TensorView &t : tensors) {
    if (t.name.empty())
      return makeError(source, "a tensor has an empty name");
    if (t.name == "__metadata__")
      return makeError(source, "the tensor name '__metadata__' is reserved");
    if (!isValidUtf8(t.name))
      return makeError(source, "tensor name " + jsonQuote(t.name) + " is not valid UTF-8");
    if (!names.insert(t.name).second)
      return makeError(source, "two tensors are named " + quoted(t.name));
    std::optional<int64_t> n = numElementsOf(t.shape);
    if (!n)
      return makeError(source, "tensor " + quoted(t.name) + " has an invalid shape " +
                                   shapeString(t.shape));
    uint64_t expected = static_cast<uint64_t>(*n) * dtypeSize(t.dtype);
    if (static_cast<uint64_t>(*n) > UINT64_MAX / dtypeSize(t.dtype) || t.size != expected)
      return makeError(source, "tensor " + quoted(t.name) + " (" +
                                   specString(t.dtype, t.shape) + ") has " +
                                   std::to_string(t.size) + " bytes, expected " +
                                   std::to_string(expected));
    if (t.size > 0 && !t.data)
      return makeError(source, "tensor " + quoted(t.name) + " has no data");
    p.order.push_back(&t);
  }
  for (const auto &kv : metadata)
    if (!isValidUtf8(kv.first) || !isValidUtf8(kv.second))
      return makeError(source, "metadata entry " + jsonQuote(kv.first) + " is not valid UTF-8");

  std::sort(p.order.begin(), p.order.end(), [](const TensorView *a, const TensorView *b) {
    int ra = alignmentRank(a->dtype), rb = alignmentRank(b->dtype);
    if (ra != rb)
      return ra > rb;
    return a->name < b->name;
  });

  // Compact JSON as serde_json writes it: __metadata__ first, then the
  // tensors in buffer order.
  std::string &h = p.header;
  h = "{";
  bool first = true;
  if (!metadata.empty()) {
    h += "\"__metadata__\":{";
    bool firstKey = true;
    for (const auto &kv : metadata) {
      if (!firstKey)
        h += ",";
      firstKey = false;
      h += jsonQuote(kv.first) + ":" + jsonQuote(kv.second);
    }
    h += "}";
    first = false;
  }
  uint64_t offset = 0;
  for (const TensorView *t : p.order) {
    if (!first)
      h += ",";
    first = false;
    h += jsonQuote(t->name) + ":{\"dtype\":\"" + dtypeName(t->dtype) + "\",\"shape\":[";
    for (size_t i = 0; i < t->shape.size(); ++i) {
      if (i)
        h += ",";
      h += std::to_string(t->shape[i]);
    }
    h += "],\"data_offsets\":[" + std::to_string(offset) + "," +
         std::to_string(offset + t->size) + "]}";
    offset += t->size;
  }
  h += "}";
  h.append((8 - h.size() % 8) % 8, ' ');
  p.bufferSize = offset;
  return p;
}

void appendU64(std::string &out, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    out += static_cast<char>((v >> (8 * i)) & 0xFF);
}

uint64_t readU64LE(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i)
    v = (v << 8) | p[i];
  return v;
}

std::vector<TensorView> viewsOf(const std::map<std::string, Tensor> &tensors) {
  std::vector<TensorView> views;
  views.reserve(tensors.size());
  for (const auto &kv : tensors) {
    TensorView v;
    v.name = kv.first;
    v.dtype = kv.second.dtype;
    v.shape = kv.second.shape;
    v.data = kv.second.bytes.data();
    v.size = kv.second.bytes.size();
    views.push_back(std::move(v));
  }
  return views;
}
} // namespace

const SafetensorsEntry *SafetensorsHeader::find(const std::string &name) const {
  for (const SafetensorsEntry &e : entries)
    if (e.name == name)
      return &e;
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Checksums
//===----------------------------------------------------------------------===//

uint32_t crc32Of(const void *data, size_t size) {
  const auto *p = static_cast<const uint8_t *>(data);
#ifdef LPC_RUNTIME_HAVE_ZLIB
  uLong crc = ::crc32(0L, Z_NULL, 0);
  while (size > 0) { // zlib takes 32-bit lengths
    uInt n = static_cast<uInt>(std::min<size_t>(size, 1u << 30));
    crc = ::crc32(crc, p, n);
    p += n;
    size -= n;
  }
  return static_cast<uint32_t>(crc);
#else
  // A runtime built without zlib computes the same CRC-32 (reflected
  // polynomial 0xEDB88320), so its files verify everywhere.
  static const auto table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k)
        c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < size; ++i)
    c = table[(c ^ p[i]) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
#endif
}

namespace {
std::string hex8(uint32_t v) {
  char buf[9];
  std::snprintf(buf, sizeof buf, "%08x", v);
  return buf;
}

/// The recorded checksum of `name` (if any) against its bytes.
Error verifyTensor(const SafetensorsHeader &header, const std::string &name,
                   const uint8_t *bytes, size_t size, const std::string &source,
                   size_t &verified) {
  auto it = header.crc32.find(name);
  if (it == header.crc32.end())
    return Error::success();
  uint32_t got = crc32Of(bytes, size);
  if (got != it->second)
    return makeError(source, "tensor " + quoted(name) +
                                 " is damaged: its bytes have crc32 " + hex8(got) +
                                 ", the header records " + hex8(it->second) +
                                 " (the file changed after it was written)");
  ++verified;
  return Error::success();
}
} // namespace

Metadata withChecksums(const std::vector<TensorView> &tensors, Metadata metadata) {
  for (const TensorView &t : tensors)
    metadata[kCrc32Prefix + t.name] = hex8(crc32Of(t.data, t.size));
  return metadata;
}

//===----------------------------------------------------------------------===//
// Writer
//===----------------------------------------------------------------------===//

Expected<std::vector<uint8_t>> encodeSafetensors(const std::vector<TensorView> &tensors,
                                                 const Metadata &metadata,
                                                 const std::string &source) {
  Expected<Prepared> p = prepare(tensors, metadata, source);
  if (!p)
    return p.takeError();
  std::string prefix;
  appendU64(prefix, p->header.size());
  std::vector<uint8_t> out(prefix.begin(), prefix.end());
  out.insert(out.end(), p->header.begin(), p->header.end());
  for (const TensorView *t : p->order) {
    const uint8_t *d = static_cast<const uint8_t *>(t->data);
    out.insert(out.end(), d, d + t->size);
  }
  return out;
}

Error writeSafetensors(const std::string &path, const std::vector<TensorView> &tensors,
                       const Metadata &metadata) {
  Expected<Prepared> p = prepare(tensors, metadata, path);
  if (!p)
    return p.takeError();
  std::string prefix;
  appendU64(prefix, p->header.size());
  AtomicFileWriter w;
  if (Error e = w.open(path))
    return e;
  if (Error e = w.write(prefix.data(), prefix.size()))
    return e;
  if (Error e = w.write(p->header.data(), p->header.size()))
    return e;
  for (const TensorView *t : p->order)
    if (Error e = w.write(t->data, t->size))
      return e;
  return w.commit();
}

Error writeSafetensors(const std::string &path, const std::map<std::string, Tensor> &tensors,
                       const Metadata &metadata) {
  return writeSafetensors(path, viewsOf(tensors), metadata);
}

//===----------------------------------------------------------------------===//
// Reader
//===----------------------------------------------------------------------===//

Expected<SafetensorsHeader> parseSafetensorsHeader(const std::string &json, uint64_t bufferSize,
                                                   const std::string &source) {
  if (!isValidUtf8(json))
    return makeError(source, "the header is not valid UTF-8");
  Expected<JsonValue> parsed = parseJson(json);
  if (!parsed)
    return makeError(source, "the header is not valid JSON: " + parsed.error().message());
  const JsonValue &root = *parsed;
  if (!root.isObject())
    return makeError(source, std::string("the header is a JSON ") + root.kindName() +
                                 ", not an object");

  SafetensorsHeader header;
  header.headerSize = json.size();
  header.bufferSize = bufferSize;
  std::set<std::string> seen;
  bool haveMetadata = false;
  for (const auto &member : root.members) {
    const std::string &name = member.first;
    const JsonValue &v = member.second;
    if (name == "__metadata__") {
      if (haveMetadata)
        return makeError(source, "the header has two '__metadata__' entries");
      haveMetadata = true;
      if (!v.isObject())
        return makeError(source, std::string("'__metadata__' is a JSON ") + v.kindName() +
                                     ", not an object of strings");
      for (const auto &kv : v.members) {
        if (!kv.second.isString())
          return makeError(source, "metadata entry " + quoted(kv.first) + " is a JSON " +
                                       kv.second.kindName() + "; metadata values must be strings");
        if (!header.metadata.emplace(kv.first, kv.second.text).second)
          return makeError(source, "metadata key " + quoted(kv.first) + " appears twice");
      }
      continue;
    }
    const std::string what = "tensor " + quoted(name);
    if (!seen.insert(name).second)
      return makeError(source, "the header names " + what + " twice");
    if (!v.isObject())
      return makeError(source, what + " is described by a JSON " + v.kindName() +
                                   ", not an object");
    SafetensorsEntry e;
    e.name = name;
    const JsonValue *dtype = v.find("dtype");
    const JsonValue *shape = v.find("shape");
    const JsonValue *offsets = v.find("data_offsets");
    if (!dtype || !shape || !offsets)
      return makeError(source, what + " lacks '" +
                                   (!dtype ? "dtype" : !shape ? "shape" : "data_offsets") + "'");
    if (!dtype->isString())
      return makeError(source, what + ": 'dtype' is a JSON " + dtype->kindName() +
                                   ", not a string");
    std::optional<DType> dt = parseDType(dtype->text);
    if (!dt) {
      if (isOtherSafetensorsDType(dtype->text))
        return makeError(source, what + " has dtype " + quoted(dtype->text) +
                                     ", which lpc does not support (supported: " +
                                     supportedDTypes() + ")");
      return makeError(source, what + " has unknown dtype " + jsonQuote(dtype->text));
    }
    e.dtype = *dt;
    if (!shape->isArray())
      return makeError(source, what + ": 'shape' is a JSON " + shape->kindName() +
                                   ", not an array");
    for (const JsonValue &d : shape->elements) {
      std::optional<uint64_t> u = d.asUInt64();
      if (!u || *u > static_cast<uint64_t>(INT64_MAX))
        return makeError(source, what + ": shape entries must be non-negative integers, found " +
                                     (d.isNumber() ? d.text : std::string("a JSON ") +
                                                                  d.kindName()));
      e.shape.push_back(static_cast<int64_t>(*u));
    }
    if (!offsets->isArray() || offsets->elements.size() != 2)
      return makeError(source, what + ": 'data_offsets' must be an array [begin, end]");
    std::optional<uint64_t> b = offsets->elements[0].asUInt64();
    std::optional<uint64_t> en = offsets->elements[1].asUInt64();
    if (!b || !en)
      return makeError(source, what + ": 'data_offsets' entries must be non-negative integers");
    e.begin = *b;
    e.end = *en;
    std::string range =
        "data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) + "]";
    if (e.end < e.begin)
      return makeError(source, what + " has reversed " + range);
    std::optional<int64_t> n = numElementsOf(e.shape);
    if (!n || static_cast<uint64_t>(*n) > UINT64_MAX / dtypeSize(e.dtype))
      return makeError(source, what + ": shape " + shapeString(e.shape) +
                                   " overflows 64 bits");
    uint64_t nbytes = static_cast<uint64_t>(*n) * dtypeSize(e.dtype);
    if (e.end - e.begin != nbytes)
      return makeError(source, what + ": " + range + " hold " + std::to_string(e.end - e.begin) +
                                   " bytes, but " + specString(e.dtype, e.shape) + " needs " +
                                   std::to_string(nbytes));
    if (e.end > bufferSize)
      return makeError(source, what + ": " + range + " reach beyond the " +
                                   std::to_string(bufferSize) +
                                   "-byte data buffer (file truncated?)");
    header.entries.push_back(std::move(e));
  }

  // The tensors must tile the buffer exactly, as the reference requires.
  std::vector<const SafetensorsEntry *> byOffset;
  for (const SafetensorsEntry &e : header.entries)
    byOffset.push_back(&e);
  std::stable_sort(byOffset.begin(), byOffset.end(),
                   [](const SafetensorsEntry *a, const SafetensorsEntry *b) {
                     return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
                   });
  uint64_t pos = 0;
  const SafetensorsEntry *prev = nullptr;
  for (const SafetensorsEntry *e : byOffset) {
    if (e->begin < pos)
      return makeError(source, "tensor " + quoted(e->name) + " overlaps tensor " +
                                   quoted(prev->name) + " (bytes [" + std::to_string(e->begin) +
                                   ", " + std::to_string(pos) + ") of the data buffer)");
    if (e->begin > pos)
      return makeError(source, "bytes [" + std::to_string(pos) + ", " +
                                   std::to_string(e->begin) +
                                   ") of the data buffer belong to no tensor");
    pos = e->end;
    if (e->end > e->begin || !prev)
      prev = e;
  }
  if (pos != bufferSize)
    return makeError(source, std::to_string(bufferSize - pos) +
                                 " bytes after the last tensor (the data buffer has " +
                                 std::to_string(bufferSize) + " bytes, the tensors " +
                                 std::to_string(pos) + ")");
  std::sort(header.entries.begin(), header.entries.end(),
            [](const SafetensorsEntry &a, const SafetensorsEntry &b) { return a.name < b.name; });

  // Checksums move from the metadata to `crc32`; each must name a tensor.
  for (auto it = header.metadata.begin(); it != header.metadata.end();) {
    const std::string &key = it->first;
    if (key.rfind(kCrc32Prefix, 0) != 0) {
      ++it;
      continue;
    }
    std::string name = key.substr(std::strlen(kCrc32Prefix));
    const std::string &v = it->second;
    bool hex = v.size() == 8 && std::all_of(v.begin(), v.end(), [](char c) {
                 return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
               });
    if (!hex)
      return makeError(source, "metadata entry " + quoted(key) + " is " + jsonQuote(v) +
                                   ", not a crc32 of 8 lowercase hex digits");
    if (!header.find(name))
      return makeError(source, "metadata entry " + quoted(key) + " names no tensor of the file");
    header.crc32[name] = static_cast<uint32_t>(std::stoul(v, nullptr, 16));
    it = header.metadata.erase(it);
  }
  return header;
}

namespace {
/// Validates the 8-byte prefix; returns N.
Expected<uint64_t> checkPrefix(const uint8_t *data, uint64_t fileSize, const std::string &source) {
  if (fileSize < 8)
    return makeError(source, "not a safetensors file: " + std::to_string(fileSize) +
                                 " bytes, shorter than the 8-byte header length");
  uint64_t n = readU64LE(data);
  if (n > kMaxHeaderSize)
    return makeError(source, "not a safetensors file: header length " + std::to_string(n) +
                                 " is above the 100 MB limit");
  if (n > fileSize - 8)
    return makeError(source, "header length " + std::to_string(n) + " runs past the end of the " +
                                 std::to_string(fileSize) + "-byte file (truncated?)");
  return n;
}

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0)
      ::close(fd);
  }
};

Error preadAll(int fd, void *buf, size_t size, uint64_t offset, const std::string &path) {
  uint8_t *p = static_cast<uint8_t *>(buf);
  while (size > 0) {
    ssize_t n = ::pread(fd, p, size, static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return makeError(path, std::string("read failed: ") + std::strerror(errno));
    }
    if (n == 0)
      return makeError(path, "file shrank while being read");
    p += n;
    size -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return Error::success();
}

Expected<SafetensorsHeader> readHeaderFd(int fd, uint64_t fileSize, const std::string &path) {
  uint8_t prefix[8] = {0};
  if (fileSize >= 8)
    if (Error e = preadAll(fd, prefix, 8, 0, path))
      return e;
  Expected<uint64_t> n = checkPrefix(prefix, fileSize, path);
  if (!n)
    return n.takeError();
  std::string json(static_cast<size_t>(*n), '\0');
  if (Error e = preadAll(fd, json.data(), json.size(), 8, path))
    return e;
  return parseSafetensorsHeader(json, fileSize - 8 - *n, path);
}

Expected<uint64_t> openForRead(Fd &f, const std::string &path) {
  f.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (f.fd < 0)
    return makeError(path, std::string("cannot open: ") + std::strerror(errno));
  struct stat st;
  if (::fstat(f.fd, &st) != 0)
    return makeError(path, std::string("cannot stat: ") + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    return makeError(path, "not a regular file");
  return static_cast<uint64_t>(st.st_size);
}
} // namespace

Expected<SafetensorsHeader> readSafetensorsHeader(const std::string &path) {
  Fd f;
  Expected<uint64_t> size = openForRead(f, path);
  if (!size)
    return size.takeError();
  return readHeaderFd(f.fd, *size, path);
}

Expected<SafetensorsFile> readSafetensors(const std::string &path) {
  Fd f;
  Expected<uint64_t> size = openForRead(f, path);
  if (!size)
    return size.takeError();
  Expected<SafetensorsHeader> header = readHeaderFd(f.fd, *size, path);
  if (!header)
    return header.takeError();
  SafetensorsFile file;
  file.metadata = std::move(header->metadata);
  uint64_t base = 8 + header->headerSize;
  for (const SafetensorsEntry &e : header->entries) {
    Tensor t;
    t.dtype = e.dtype;
    t.shape = e.shape;
    t.bytes.resize(static_cast<size_t>(e.end - e.begin));
    if (Error err = preadAll(f.fd, t.bytes.data(), t.bytes.size(), base + e.begin, path))
      return err;
    if (Error err = verifyTensor(*header, e.name, t.bytes.data(), t.bytes.size(), path,
                                 file.verifiedTensors))
      return err;
    file.tensors.emplace(e.name, std::move(t));
  }
  return file;
}

Expected<SafetensorsFile> decodeSafetensors(const uint8_t *data, size_t size,
                                            const std::string &source) {
  Expected<uint64_t> n = checkPrefix(data, size, source);
  if (!n)
    return n.takeError();
  std::string json(reinterpret_cast<const char *>(data) + 8, static_cast<size_t>(*n));
  Expected<SafetensorsHeader> header = parseSafetensorsHeader(json, size - 8 - *n, source);
  if (!header)
    return header.takeError();
  SafetensorsFile file;
  file.metadata = std::move(header->metadata);
  const uint8_t *buffer = data + 8 + *n;
  for (const SafetensorsEntry &e : header->entries) {
    if (Error err = verifyTensor(*header, e.name, buffer + e.begin, e.end - e.begin, source,
                                 file.verifiedTensors))
      return err;
    file.tensors.emplace(e.name, Tensor(e.dtype, e.shape,
                                        std::vector<uint8_t>(buffer + e.begin, buffer + e.end)));
  }
  return file;
}

//===----------------------------------------------------------------------===//
// Matching a checkpoint against a model
//===----------------------------------------------------------------------===//

Error checkTensors(const SafetensorsHeader &header, const std::vector<TensorSpec> &expected,
                   const std::string &source) {
  std::vector<std::string> problems;
  std::set<std::string> wanted;
  for (const TensorSpec &s : expected) {
    wanted.insert(s.name);
    const SafetensorsEntry *e = header.find(s.name);
    if (!e) {
      problems.push_back("missing tensor " + quoted(s.name) + " (" +
                         specString(s.dtype, s.shape) + ")");
    } else if (e->dtype != s.dtype || e->shape != s.shape) {
      problems.push_back("tensor " + quoted(s.name) + " is " + specString(e->dtype, e->shape) +
                         " in the checkpoint, " + specString(s.dtype, s.shape) + " here");
    }
  }
  for (const SafetensorsEntry &e : header.entries)
    if (!wanted.count(e.name))
      problems.push_back("unexpected tensor " + quoted(e.name));
  if (problems.empty())
    return Error::success();
  std::string msg = "does not match this model: ";
  size_t shown = std::min<size_t>(problems.size(), 10);
  for (size_t i = 0; i < shown; ++i)
    msg += (i ? "; " : "") + problems[i];
  if (problems.size() > shown)
    msg += "; and " + std::to_string(problems.size() - shown) + " more";
  return makeError(source, msg);
}

} // namespace rt
} // namespace lpc
