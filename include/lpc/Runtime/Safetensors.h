//===- Safetensors.h - checkpoint files in the safetensors format -*- C++ -*-===//
//
// The format (https://github.com/huggingface/safetensors):
//
//   u64 little-endian N | N bytes of JSON header | byte buffer
//
// The header is an object: one member per tensor,
//   "name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}
// with offsets relative to the start of the byte buffer, and an optional
// "__metadata__" member holding an object of string values. As the reference
// implementation does, the writer pads the header with spaces to a multiple
// of 8 bytes and lays the tensors out back to back, widest element type first
// and then by name (so each tensor is aligned to its element size); header
// members are written in name order. Equal inputs give byte-identical files.
//
// The reader accepts exactly what the reference implementation accepts for
// lpc's eight dtypes and reports, naming the file: a file shorter than 8
// bytes, a header length beyond the file (or above 100 MB), a header that is
// not a JSON object / not UTF-8 / malformed JSON, duplicate names, a missing
// or ill-typed dtype / shape / data_offsets, unknown keys, an unknown dtype or
// one that lpc does not support, offsets that are reversed, out of range,
// overlapping, leave a gap, or do not match dtype size * number of elements,
// bytes after the last tensor, and metadata values that are not strings.
//
// Integrity: a metadata entry "crc32:NAME" = 8 lowercase hex digits records
// the CRC-32 (zlib's polynomial) of tensor NAME's bytes. lpc writes one per
// tensor in its checkpoints and weight files (withChecksums); every reader
// verifies those a file has and refuses a tensor whose bytes do not match,
// naming it. Files without them (other writers) load unverified.
//
//===----------------------------------------------------------------------===//

#ifndef LPC_RUNTIME_SAFETENSORS_H
#define LPC_RUNTIME_SAFETENSORS_H

#include "lpc/Runtime/Error.h"
#include "lpc/Runtime/Tensor.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace lpc {
namespace rt {

using Metadata = std::map<std::string, std::string>;

/// One tensor entry of a header.
struct SafetensorsEntry {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0; // offsets into the byte buffer
};

/// A validated header.
struct SafetensorsHeader {
  std::vector<SafetensorsEntry> entries; // in name order
  Metadata metadata; // without the "crc32:" entries
  std::map<std::string, uint32_t> crc32; // recorded checksums, by tensor name
  uint64_t headerSize = 0; // N
  uint64_t bufferSize = 0; // bytes after the header

  const SafetensorsEntry *find(const std::string &name) const;
};

/// A whole file in memory.
struct SafetensorsFile {
  std::map<std::string, Tensor> tensors;
  Metadata metadata;           // without the "crc32:" entries
  size_t verifiedTensors = 0;  // tensors whose recorded crc32 matched
};

/// The metadata key prefix of a tensor's checksum.
inline constexpr const char *kCrc32Prefix = "crc32:";
/// CRC-32 of `size` bytes (zlib's crc32 where the runtime has zlib).
uint32_t crc32Of(const void *data, size_t size);
/// `metadata` plus a "crc32:NAME" entry per tensor (replacing any there).
Metadata withChecksums(const std::vector<TensorView> &tensors, Metadata metadata);

/// Writes a checkpoint atomically (see AtomicFileWriter): on failure any
/// existing file at `path` is unchanged. Fails on duplicate or empty names,
/// the reserved name "__metadata__", names or metadata that are not UTF-8,
/// and tensors whose byte size does not match dtype and shape.
Error writeSafetensors(const std::string &path, const std::vector<TensorView> &tensors,
                       const Metadata &metadata = {});
Error writeSafetensors(const std::string &path,
                       const std::map<std::string, Tensor> &tensors,
                       const Metadata &metadata = {});

/// The file's bytes, as writeSafetensors writes them (for tests and for
/// callers that send a checkpoint elsewhere). `source` names the object in
/// error messages.
Expected<std::vector<uint8_t>> encodeSafetensors(const std::vector<TensorView> &tensors,
                                                 const Metadata &metadata,
                                                 const std::string &source = "safetensors");

/// Reads and validates only the header (reads 8 + N bytes); cheap to check a
/// checkpoint's metadata and tensor list before loading it.
Expected<SafetensorsHeader> readSafetensorsHeader(const std::string &path);
/// Reads and validates the whole file, verifying the recorded checksums.
Expected<SafetensorsFile> readSafetensors(const std::string &path);
/// Validates and decodes a file held in memory; `source` names it in errors.
Expected<SafetensorsFile> decodeSafetensors(const uint8_t *data, size_t size,
                                            const std::string &source);
/// Validates a header: `json` is the N header bytes, `bufferSize` the number
/// of bytes that follow them.
Expected<SafetensorsHeader> parseSafetensorsHeader(const std::string &json,
                                                   uint64_t bufferSize,
                                                   const std::string &source);

/// What a trainer expects a checkpoint to hold.
struct TensorSpec {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
};

/// Checks that `header` holds exactly the tensors of `expected` (names,
/// dtypes, shapes). The error lists every difference (up to 10), e.g.
///   "ckpt.safetensors: does not match this model: missing tensor
///    'fc1.weight' (F32 [784, 1024]); tensor 'fc2.bias' is F32 [20] in the
///    checkpoint, F32 [10] here; unexpected tensor 'fc3.weight'"
Error checkTensors(const SafetensorsHeader &header, const std::vector<TensorSpec> &expected,
                   const std::string &source);

} // namespace rt
} // namespace lpc

#endif // LPC_RUNTIME_SAFETENSORS_H
