#pragma once
// checkLibTorchArchive: what a LibTorch archive (a StreetGAN checkpoint, written by
// torch::serialize::OutputArchive) must be before LibTorch's own reader sees a byte of it. That
// reader trusts its input: a pickle with TUPLE1 on an empty stack, or a tensor whose storage offset
// lies far past its record, crashes the program, and a class in the archive's code/ folder with a
// method (a __setstate__) would run TorchScript, which can create and read files, on load. So:
// - the zip's directory is read, no record may declare more bytes than the whole archive, no two
//   records may share a name once case and folder are ignored, and no legacy model.json is there;
// - data.pkl, constants.pkl and every .debug_pkl go through PickleReader (bounded, fuzzed), with
//   the archive's own classes allowed as plain data, and every tensor's storage must be a record
//   that holds all of the elements its view reaches;
// - every code/ file may only declare classes with typed attributes: no method, decorator or
//   statement; types at most kMaxTypeDepth deep, and no class holding itself, however indirectly;
//   a network's code (code_is_data_only false) may have methods, but no __setstate__, which runs
//   inside LibTorch's loader.
// The archive is read through a ReadAdapter the caller gives (a file it opened once), so what was
// checked is what LibTorch then reads from the same descriptor.
#include "core/util/result.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace caffe2::serialize {
class ReadAdapterInterface;
}

namespace streetgan {

struct LibTorchArchiveLimits {
  /// The largest data.pkl, constants.pkl or .debug_pkl read: a checkpoint's data.pkl is some
  /// 12 KB, plus its config.
  std::uint64_t max_pickle_bytes = 64ull << 20;
  /// The largest code/ file: one class of at most a few hundred attributes.
  std::uint64_t max_code_bytes = 1ull << 20;
  /// How deeply a declared type may nest (Tuple[float, float] is 2).
  int max_type_depth = 4;
  /// Whether code/ files may only declare data (a checkpoint). False for a TorchScript network,
  /// whose methods are code the user chose to run: its zip and pickles are still checked.
  bool code_is_data_only = true;
};

/// Reads `n` bytes at `offset` of the archive into `out`; the number of bytes read.
using ArchiveReader = std::function<std::size_t(std::uint64_t offset, void* out, std::size_t n)>;

/// Whether the LibTorch archive of `size` bytes that `read` reads is safe to give LibTorch's
/// reader; the Error says what is wrong in one line, without the file's name.
Status checkLibTorchArchive(const ArchiveReader& read, std::uint64_t size, const LibTorchArchiveLimits& limits = {});

/// Reads of the open file `fd` of `size` bytes at any offset (pread), for the check and then for
/// LibTorch's reader (archiveAdapter), so that both read the same file.
ArchiveReader fileArchiveReader(int fd, std::uint64_t size);

/// Reads of `bytes`, an archive read into memory once (it is kept while a reader is).
ArchiveReader memoryArchiveReader(std::shared_ptr<const std::string> bytes);

/// `read` as LibTorch's reader takes an archive (torch::jit::load).
std::shared_ptr<caffe2::serialize::ReadAdapterInterface> archiveAdapter(ArchiveReader read, std::uint64_t size);

}  // namespace streetgan
