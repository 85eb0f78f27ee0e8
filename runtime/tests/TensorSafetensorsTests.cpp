// TensorSafetensorsTests.cpp - tests of Tensor dtypes/shapes and the safetensors writer/reader (groups tensor, safetensors).

#include "TestHarness.h"

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

namespace {
/// A safetensors file from a header string and a buffer of `bufferSize`
/// bytes (0, 1, 2, ...).
std::vector<uint8_t> rawSafetensors(const std::string &header, size_t bufferSize,
                                    int64_t lengthOverride = -1) {
  std::vector<uint8_t> v;
  uint64_t n = lengthOverride >= 0 ? uint64_t(lengthOverride) : header.size();
  for (int i = 0; i < 8; ++i)
    v.push_back(uint8_t(n >> (8 * i)));
  v.insert(v.end(), header.begin(), header.end());
  for (size_t i = 0; i < bufferSize; ++i)
    v.push_back(uint8_t(i));
  return v;
}
} // namespace

//===----------------------------------------------------------------------===//
// tensor
//===----------------------------------------------------------------------===//

TEST(tensor, dtypes) {
  const char *names[] = {"F32", "F16", "BF16", "F8_E4M3", "F8_E5M2", "I32", "I64", "BOOL"};
  size_t sizes[] = {4, 2, 2, 1, 1, 4, 8, 1};
  int i = 0;
  for (DType d : kAllDTypes) {
    CHECK_EQ(std::string(dtypeName(d)), std::string(names[i]));
    CHECK_EQ(dtypeSize(d), sizes[i]);
    CHECK(parseDType(names[i]) == d);
    ++i;
  }
  CHECK(!parseDType("F64"));
  CHECK(!parseDType("f32"));
}

TEST(tensor, shapes) {
  CHECK_EQ(numElementsOf({}).value_or(-1), int64_t(1));
  CHECK_EQ(numElementsOf({2, 0, 5}).value_or(-1), int64_t(0));
  CHECK(!numElementsOf({-1, 2}));
  CHECK(!numElementsOf({INT64_MAX, 2}));
  CHECK_EQ(shapeString({2, 3}), std::string("[2, 3]"));
  Tensor t(DType::BF16, {3, 4});
  CHECK_EQ(t.bytes.size(), size_t(24));
  CHECK(t.isConsistent());
  t.bytes.pop_back();
  CHECK(!t.isConsistent());
  Tensor f = Tensor::fromF32({2}, {1.5f, -2.0f});
  CHECK_EQ(f.data<float>()[1], -2.0f);
  CHECK_EQ(f.bytes[3], uint8_t(0x3F)); // little-endian 1.5f = 0x3FC00000
}

//===----------------------------------------------------------------------===//
// safetensors
//===----------------------------------------------------------------------===//

TEST(safetensors, reference_bytes) {
  // Byte vectors from the reference implementation's own tests
  // (safetensors/src/tensor.rs: test_serialization, test_empty,
  // test_serialization_forced_alignement).
  std::vector<float> values = {0, 1, 2, 3, 4, 5};
  std::vector<TensorView> one = {{"attn.0", DType::F32, {1, 2, 3}, values.data(), 24}};
  Expected<std::vector<uint8_t>> out = encodeSafetensors(one, {});
  CHECK_OK(out);
  std::vector<uint8_t> expected = {
      64,  0,   0,   0,  0,   0,   0,   0,   123, 34,  97,  116, 116, 110, 46,  48,  34,
      58,  123, 34,  100, 116, 121, 112, 101, 34,  58,  34,  70,  51,  50,  34,  44,  34,
      115, 104, 97,  112, 101, 34,  58,  91,  49,  44,  50,  44,  51,  93,  44,  34,  100,
      97,  116, 97,  95,  111, 102, 102, 115, 101, 116, 115, 34,  58,  91,  48,  44,  50,
      52,  93,  125, 125, 0,   0,   0,   0,   0,   0,   128, 63,  0,   0,   0,   64,  0,
      0,   64,  64,  0,   0,   128, 64,  0,   0,   160, 64};
  CHECK(out && *out == expected);

  out = encodeSafetensors({}, {});
  CHECK(out && *out == std::vector<uint8_t>({8, 0, 0, 0, 0, 0, 0, 0, 123, 125, 32, 32, 32, 32,
                                             32, 32}));
  out = encodeSafetensors({}, {{"framework", "pt"}});
  std::vector<uint8_t> withMeta = {40,  0,   0,   0,   0,   0,   0,   0,   123, 34, 95, 95,
                                   109, 101, 116, 97,  100, 97,  116, 97,  95,  95, 34, 58,
                                   123, 34,  102, 114, 97,  109, 101, 119, 111, 114, 107, 34,
                                   58,  34,  112, 116, 34,  125, 125, 32,  32,  32,  32, 32};
  CHECK(out && *out == withMeta);

  std::vector<TensorView> aligned = {{"attn0", DType::F32, {1, 1, 2, 3}, values.data(), 24}};
  out = encodeSafetensors(aligned, {});
  CHECK(out && (*out)[0] == 72 && out->size() == 8 + 72 + 24);
  CHECK(out && (*out)[8 + 71] == ' ' && (*out)[8 + 65] == ' ' && (*out)[8 + 64] == '}');
  Expected<SafetensorsFile> back = decodeSafetensors(expected.data(), expected.size(), "ref");
  CHECK_OK(back);
  if (back) {
    CHECK_EQ(back->tensors.at("attn.0").shape, (std::vector<int64_t>{1, 2, 3}));
    CHECK_EQ(back->tensors.at("attn.0").data<float>()[5], 5.0f);
  }
}

TEST(safetensors, round_trip_every_dtype) {
  std::map<std::string, Tensor> tensors = sampleTensors();
  Metadata meta = sampleMetadata();
  std::string path = tmp("all.safetensors");
  CHECK_OK(writeSafetensors(path, tensors, meta));
  Expected<SafetensorsFile> back = readSafetensors(path);
  CHECK_OK(back);
  if (!back)
    return;
  CHECK(back->metadata == meta);
  CHECK_EQ(back->tensors.size(), tensors.size());
  for (const auto &kv : tensors) {
    auto it = back->tensors.find(kv.first);
    CHECK(it != back->tensors.end());
    if (it == back->tensors.end())
      continue;
    CHECK(it->second.dtype == kv.second.dtype);
    CHECK(it->second.shape == kv.second.shape);
    CHECK(it->second.bytes == kv.second.bytes); // bit-exact, NaN payloads included
  }
  // The in-memory decoder and the header-only reader agree with the file.
  std::vector<uint8_t> bytes = readBytes(path);
  Expected<SafetensorsFile> mem = decodeSafetensors(bytes.data(), bytes.size(), "mem");
  CHECK_OK(mem);
  if (mem)
    for (const auto &kv : tensors)
      CHECK(mem->tensors.at(kv.first).bytes == kv.second.bytes);
  Expected<SafetensorsHeader> header = readSafetensorsHeader(path);
  CHECK_OK(header);
  if (header) {
    CHECK_EQ(header->entries.size(), tensors.size());
    CHECK(header->metadata == meta);
    CHECK_EQ(header->headerSize % 8, uint64_t(0));
    CHECK_EQ(header->entries.front().name, std::string("a.f32")); // name order
    // Layout: widest first, so each tensor is aligned to its element size.
    for (const SafetensorsEntry &e : header->entries)
      CHECK_EQ((8 + header->headerSize + e.begin) % dtypeSize(e.dtype), uint64_t(0));
    const SafetensorsEntry *i64 = header->find("g.i64");
    CHECK(i64 && i64->begin == 0);
    const SafetensorsEntry *b = header->find("h.bool");
    CHECK(b && b->end == header->bufferSize);
  }
}

TEST(safetensors, deterministic) {
  std::map<std::string, Tensor> tensors = sampleTensors();
  std::vector<TensorView> views, reversed;
  for (const auto &kv : tensors)
    views.push_back({kv.first, kv.second.dtype, kv.second.shape, kv.second.bytes.data(),
                     kv.second.bytes.size()});
  reversed.assign(views.rbegin(), views.rend());
  Expected<std::vector<uint8_t>> a = encodeSafetensors(views, sampleMetadata());
  Expected<std::vector<uint8_t>> b = encodeSafetensors(reversed, sampleMetadata());
  CHECK(a && b && *a == *b);
  std::string p1 = tmp("det1.safetensors"), p2 = tmp("det2.safetensors");
  CHECK_OK(writeSafetensors(p1, views, sampleMetadata()));
  CHECK_OK(writeSafetensors(p2, reversed, sampleMetadata()));
  CHECK(readBytes(p1) == readBytes(p2));
  CHECK(a && readBytes(p1) == *a);
}

TEST(safetensors, writer_errors) {
  float x[2] = {1, 2};
  std::string p = tmp("bad-write.safetensors");
  CHECK_ERR(writeSafetensors(p, std::vector<TensorView>{{"w", DType::F32, {2}, x, 8},
                                                        {"w", DType::F32, {2}, x, 8}}),
            p.c_str(), "two tensors are named 'w'");
  CHECK_ERR(writeSafetensors(p, std::vector<TensorView>{{"w", DType::F32, {3}, x, 8}}),
            "'w' (F32 [3]) has 8 bytes, expected 12");
  CHECK_ERR(writeSafetensors(p, std::vector<TensorView>{{"__metadata__", DType::F32, {2}, x, 8}}),
            "reserved");
  CHECK_ERR(writeSafetensors(p, std::vector<TensorView>{{"", DType::F32, {2}, x, 8}}),
            "empty name");
  CHECK_ERR(writeSafetensors(p, std::vector<TensorView>{{"w\xff", DType::F32, {2}, x, 8}}),
            "not valid UTF-8");
  CHECK_ERR(writeSafetensors(p, std::vector<TensorView>{{"w", DType::F32, {-2}, x, 8}}),
            "invalid shape");
  CHECK_ERR(writeSafetensors(p, std::vector<TensorView>{}, {{"k", "\xff"}}), "not valid UTF-8");
  CHECK(!isRegularFile(p));
  CHECK(tempFilesContaining("bad-write").empty());
}

/// Writes `bytes` to a file and expects readSafetensors and
/// readSafetensorsHeader (when `headerToo`) to fail with `want`.
static void expectReadError(const std::string &name, const std::vector<uint8_t> &bytes,
                            const char *want, int line, bool headerToo = true) {
  std::string path = tmp(name);
  writeBytes(path, bytes);
  Expected<SafetensorsFile> r = readSafetensors(path);
  Expected<SafetensorsFile> m = decodeSafetensors(bytes.data(), bytes.size(), path);
  for (const Expected<SafetensorsFile> *x : {&r, &m}) {
    if (x->ok()) {
      fail(__FILE__, line, name + ": read succeeded, expected \"" + want + "\"");
    } else if (x->error().message().find(want) == std::string::npos ||
               x->error().message().find(path) == std::string::npos) {
      fail(__FILE__, line, name + ": message \"" + x->error().message() + "\" lacks \"" + want +
                               "\" or the path");
    }
  }
  if (headerToo) {
    Expected<SafetensorsHeader> h = readSafetensorsHeader(path);
    if (h.ok() || h.error().message().find(want) == std::string::npos)
      fail(__FILE__, line,
           name + ": header reader: " + (h.ok() ? "succeeded" : h.error().message()));
  }
}
#define EXPECT_READ_ERROR(name, bytes, want, ...)                                              \
  expectReadError(name, bytes, want, __LINE__, ##__VA_ARGS__)

TEST(safetensors, reader_errors) {
  const std::string ok1 = "{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}";
  CHECK_OK(decodeSafetensors(rawSafetensors(ok1, 8).data(), 8 + ok1.size() + 8, "ok"));
  // Unknown keys in an entry are ignored (as the reference does).
  const std::string extra =
      "{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8],\"x\":1}}";
  CHECK_OK(decodeSafetensors(rawSafetensors(extra, 8).data(), 8 + extra.size() + 8, "ok"));

  EXPECT_READ_ERROR("empty.st", std::vector<uint8_t>(), "0 bytes, shorter than the 8-byte header length");
  EXPECT_READ_ERROR("short.st", (std::vector<uint8_t>{1, 0, 0}), "3 bytes, shorter than the 8-byte header length");
  EXPECT_READ_ERROR("len-past-end.st", rawSafetensors(ok1, 8, 1000),
                    "header length 1000 runs past the end");
  EXPECT_READ_ERROR("len-huge.st", rawSafetensors(ok1, 8, int64_t(1) << 40),
                    "above the 100 MB limit");
  EXPECT_READ_ERROR("not-json.st", rawSafetensors("{\"w\": [1, 2", 0),
                    "header is not valid JSON: byte 11");
  EXPECT_READ_ERROR("not-object.st", rawSafetensors("[1, 2]  ", 0), "header is a JSON array");
  EXPECT_READ_ERROR("not-utf8.st", rawSafetensors("{\"\xff\":1}", 0), "not valid UTF-8");
  EXPECT_READ_ERROR("entry-not-object.st", rawSafetensors("{\"w\":[1]}", 0),
                    "tensor 'w' is described by a JSON array");
  EXPECT_READ_ERROR("unknown-dtype.st",
                    rawSafetensors("{\"w\":{\"dtype\":\"F33\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8),
                    "tensor 'w' has unknown dtype \"F33\"");
  EXPECT_READ_ERROR("unsupported-dtype.st",
                    rawSafetensors("{\"w\":{\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[0,8]}}", 8),
                    "dtype 'F64', which lpc does not support");
  EXPECT_READ_ERROR("dtype-not-string.st",
                    rawSafetensors("{\"w\":{\"dtype\":4,\"shape\":[1],\"data_offsets\":[0,4]}}", 4),
                    "'dtype' is a JSON number");
  EXPECT_READ_ERROR("no-dtype.st", rawSafetensors("{\"w\":{\"shape\":[2],\"data_offsets\":[0,8]}}", 8),
                    "tensor 'w' lacks 'dtype'");
  EXPECT_READ_ERROR("no-shape.st", rawSafetensors("{\"w\":{\"dtype\":\"F32\",\"data_offsets\":[0,8]}}", 8),
                    "lacks 'shape'");
  EXPECT_READ_ERROR("no-offsets.st", rawSafetensors("{\"w\":{\"dtype\":\"F32\",\"shape\":[2]}}", 8),
                    "lacks 'data_offsets'");
  EXPECT_READ_ERROR("shape-neg.st",
                    rawSafetensors("{\"w\":{\"dtype\":\"F32\",\"shape\":[-2],\"data_offsets\":[0,8]}}", 8),
                    "shape entries must be non-negative integers, found -2");
  EXPECT_READ_ERROR("shape-float.st",
                    rawSafetensors("{\"w\":{\"dtype\":\"F32\",\"shape\":[2.0],\"data_offsets\":[0,8]}}", 8),
                    "found 2.0");
  EXPECT_READ_ERROR("shape-not-array.st",
                    rawSafetensors("{\"w\":{\"dtype\":\"F32\",\"shape\":2,\"data_offsets\":[0,8]}}", 8),
                    "'shape' is a JSON number");
  EXPECT_READ_ERROR("shape-overflow.st",
                    rawSafetensors("{\"w\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296],"
                                   "\"data_offsets\":[0,8]}}", 8),
                    "overflows 64 bits");
  EXPECT_READ_ERROR("offsets-arity.st",
                    rawSafetensors("{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0]}}", 8),
                    "'data_offsets' must be an array [begin, end]");
  EXPECT_READ_ERROR("offsets-neg.st",
                    rawSafetensors("{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[-8,0]}}", 8),
                    "entries must be non-negative integers");
  EXPECT_READ_ERROR("reversed.st",
                    rawSafetensors("{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,0]}}", 8),
                    "tensor 'w' has reversed data_offsets [8, 0]");
  EXPECT_READ_ERROR("size-mismatch.st",
                    rawSafetensors("{\"w\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", 8),
                    "data_offsets [0, 8] hold 8 bytes, but F32 [3] needs 12");
  EXPECT_READ_ERROR("out-of-range.st", rawSafetensors(ok1, 4),
                    "reach beyond the 4-byte data buffer (file truncated?)");
  EXPECT_READ_ERROR("overlap.st",
                    rawSafetensors("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                                   "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8),
                    "tensor 'b' overlaps tensor 'a' (bytes [4, 8)");
  EXPECT_READ_ERROR("gap.st",
                    rawSafetensors("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                                   "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]}}", 12),
                    "bytes [4, 8) of the data buffer belong to no tensor");
  EXPECT_READ_ERROR("gap-at-start.st",
                    rawSafetensors("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8),
                    "bytes [0, 4) of the data buffer belong to no tensor");
  EXPECT_READ_ERROR("trailing.st", rawSafetensors(ok1, 12), "4 bytes after the last tensor");
  EXPECT_READ_ERROR("duplicate.st",
                    rawSafetensors("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                                   "\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8),
                    "the header names tensor 'a' twice");
  EXPECT_READ_ERROR("meta-twice.st", rawSafetensors("{\"__metadata__\":{},\"__metadata__\":{}}", 0),
                    "two '__metadata__' entries");
  EXPECT_READ_ERROR("meta-not-object.st", rawSafetensors("{\"__metadata__\":[\"a\"]}", 0),
                    "'__metadata__' is a JSON array, not an object of strings");
  EXPECT_READ_ERROR("meta-not-string.st", rawSafetensors("{\"__metadata__\":{\"step\":3}}", 0),
                    "metadata entry 'step' is a JSON number; metadata values must be strings");
  EXPECT_READ_ERROR("meta-dup.st",
                    rawSafetensors("{\"__metadata__\":{\"a\":\"1\",\"a\":\"2\"}}", 0),
                    "metadata key 'a' appears twice");
  // A real file cut short: the header still parses, the data does not fit.
  std::vector<uint8_t> good = *encodeSafetensors(
      {{"w", DType::F32, {4}, std::vector<float>{1, 2, 3, 4}.data(), 16}}, {});
  good.resize(good.size() - 5);
  EXPECT_READ_ERROR("cut.st", good, "reach beyond the 11-byte data buffer");

  CHECK_ERR(readSafetensors(tmp("does-not-exist.st")), "does-not-exist.st: cannot open",
            "No such file");
  CHECK_ERR(readSafetensors(gTempDir), "not a regular file");
}

TEST(safetensors, check_tensors) {
  std::string path = tmp("model.safetensors");
  std::vector<float> w(6, 1.0f), b(2, 0.0f);
  CHECK_OK(writeSafetensors(path, std::vector<TensorView>{{"fc.weight", DType::F32, {2, 3}, w.data(), 24},
                                                         {"fc.bias", DType::F32, {2}, b.data(), 8}},
                            {{"model", "mlp"}}));
  Expected<SafetensorsHeader> h = readSafetensorsHeader(path);
  CHECK_OK(h);
  if (!h)
    return;
  CHECK_OK(checkTensors(*h, {{"fc.bias", DType::F32, {2}}, {"fc.weight", DType::F32, {2, 3}}}, path));
  CHECK_ERR(checkTensors(*h,
                         {{"fc.weight", DType::F32, {3, 2}},
                          {"fc.bias", DType::BF16, {2}},
                          {"fc2.weight", DType::F32, {4}}},
                         path),
            "model.safetensors: does not match this model",
            "tensor 'fc.weight' is F32 [2, 3] in the checkpoint, F32 [3, 2] here",
            "tensor 'fc.bias' is F32 [2] in the checkpoint, BF16 [2] here",
            "missing tensor 'fc2.weight' (F32 [4])");
  CHECK_ERR(checkTensors(*h, {{"fc.weight", DType::F32, {2, 3}}}, path),
            "unexpected tensor 'fc.bias'");
}

TEST(safetensors, checksums) {
  // CRC-32's check value (zlib's, and the fallback's without zlib).
  const char check[] = "123456789";
  CHECK_EQ(crc32Of(check, 9), uint32_t(0xCBF43926));
  CHECK_EQ(crc32Of(nullptr, 0), uint32_t(0));

  std::vector<float> w = {1.5f, -2.0f, 3.25f, 0.0f, 7.0f, -0.5f};
  std::vector<int64_t> step = {42};
  std::vector<TensorView> views = {{"param/w", DType::F32, {2, 3}, w.data(), 24},
                                   {"step", DType::I64, {}, step.data(), 8},
                                   {"empty", DType::F32, {0}, nullptr, 0}};
  Metadata md = withChecksums(views, {{"model", "mlp"}});
  CHECK_EQ(md.size(), size_t(4));
  CHECK_EQ(md.at("crc32:param/w"), [&] {
    char buf[9];
    std::snprintf(buf, sizeof buf, "%08x", crc32Of(w.data(), 24));
    return std::string(buf);
  }());
  std::string path = tmp("crc.safetensors");
  CHECK_OK(writeSafetensors(path, views, md));
  Expected<SafetensorsFile> back = readSafetensors(path);
  CHECK_OK(back);
  if (back) {
    CHECK_EQ(back->verifiedTensors, size_t(3));
    // The checksums are the reader's business, not the caller's metadata.
    CHECK(back->metadata == (Metadata{{"model", "mlp"}}));
  }
  Expected<SafetensorsHeader> h = readSafetensorsHeader(path);
  CHECK_OK(h);
  if (h)
    CHECK_EQ(h->crc32.size(), size_t(3));

  // One flipped bit in a tensor's bytes: refused by both readers, naming it.
  std::vector<uint8_t> bytes = readBytes(path);
  std::vector<uint8_t> flipped = bytes;
  flipped[flipped.size() - 10] ^= 0x04; // inside param/w (the last 24 bytes; I64 first)
  writeBytes(tmp("flipped.safetensors"), flipped);
  CHECK_ERR(readSafetensors(tmp("flipped.safetensors")),
            "flipped.safetensors: tensor 'param/w' is damaged: its bytes have crc32",
            "the header records");
  CHECK_ERR(decodeSafetensors(flipped.data(), flipped.size(), "mem"),
            "mem: tensor 'param/w' is damaged");
  // The header alone is still readable (the damage is in the data).
  CHECK_OK(readSafetensorsHeader(tmp("flipped.safetensors")));

  // Ill-formed checksum entries.
  std::string t = "\"a\":{\"dtype\":\"I32\",\"shape\":[1],\"data_offsets\":[0,4]}";
  auto header = [&](const std::string &meta) {
    std::string h = "{\"__metadata__\":{" + meta + "}," + t + "}";
    return rawSafetensors(h, 4);
  };
  std::vector<uint8_t> ok = header("\"crc32:a\":\"" + [&] {
    uint8_t b[4] = {0, 1, 2, 3};
    char buf[9];
    std::snprintf(buf, sizeof buf, "%08x", crc32Of(b, 4));
    return std::string(buf);
  }() + "\"");
  Expected<SafetensorsFile> okf = decodeSafetensors(ok.data(), ok.size(), "ok");
  CHECK_OK(okf);
  if (okf)
    CHECK_EQ(okf->verifiedTensors, size_t(1));
  std::vector<uint8_t> bad = header("\"crc32:a\":\"XYZ\"");
  CHECK_ERR(decodeSafetensors(bad.data(), bad.size(), "bad"),
            "metadata entry 'crc32:a' is \"XYZ\", not a crc32 of 8 lowercase hex digits");
  bad = header("\"crc32:b\":\"00000000\"");
  CHECK_ERR(decodeSafetensors(bad.data(), bad.size(), "bad"),
            "metadata entry 'crc32:b' names no tensor of the file");
  // Without checksums (another writer): read, nothing verified.
  std::vector<uint8_t> plain = rawSafetensors("{" + t + "}", 4);
  Expected<SafetensorsFile> pf = decodeSafetensors(plain.data(), plain.size(), "plain");
  CHECK_OK(pf);
  if (pf)
    CHECK_EQ(pf->verifiedTensors, size_t(0));
}
