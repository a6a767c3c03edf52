#pragma once
// PickleReader: a Python unpickler for what torch.save writes and nothing more: dicts (also
// collections.OrderedDict, with the `_metadata` a state dict carries), lists (APPEND and
// APPENDS), tuples, integers, floats, strings, None, booleans, and tensors through persistent ids
// ('storage', torch.FloatStorage, key, location, numel) and torch._utils._rebuild_tensor_v2.
// Any other global is refused by name before anything is built from it: a checkpoint is data and
// must never run code, so there is no way to call an arbitrary class.
//
// Storages are fetched by key from the caller's loader (TorchSaveArchive reads them from the
// zip's data/ records); each key is fetched once and shared by the tensors that view it.
// Failures (a truncated pickle, an opcode torch.save never writes, a refused global, a tensor
// reaching past its storage) come back as an Error with a one-line reason.
#include "core/formats/pickle_value.h"
#include "core/util/result.h"

#include <functional>
#include <map>
#include <string>

namespace streetgan {

class PickleReader {
public:
  /// Returns the 1-D storage `key` holding `numel` elements of `dtype`, or why it cannot.
  using StorageLoader =
      std::function<Result<torch::Tensor>(const std::string& key, torch::ScalarType dtype, std::int64_t numel)>;

  struct Limits {
    /// Values the pickle may make (each number, string, container or memo lookup is one, 64 bytes
    /// or more in memory): a checkpoint holds thousands; a 4 MB pickle of a million True opcodes
    /// would otherwise cost some 200 times its size. 4,194,304 allows two loss lists of two
    /// million entries each.
    std::size_t max_values = std::size_t{1} << 22;
    /// Also read what LibTorch's own archives hold (a checkpoint's data.pkl, constants.pkl and
    /// .debug_pkl records): objects of the archive's __torch__ classes, made by NEWOBJ without
    /// arguments and given a dict of attributes by BUILD (read as that dict), and the lists of
    /// torch.jit._pickle's build_intlist, build_doublelist, build_boollist and build_tensorlist.
    /// What those classes are is checked elsewhere (libtorch_archive_check.h): here they only
    /// hold data.
    bool libtorch_archive = false;
  };

  explicit PickleReader(StorageLoader loader) : PickleReader(std::move(loader), Limits{}) {}
  PickleReader(StorageLoader loader, Limits limits);

  /// The value the pickle `bytes` holds.
  Result<PickleValue> read(const std::string& bytes);

  /// The dtype of a storage class named as torch.save names it ("torch.FloatStorage"), or
  /// nothing for a name that is not one.
  static std::optional<torch::ScalarType> storageType(const std::string& global);

private:
  Result<PickleValue> persistentLoad(const PickleValue& pid);
  Result<PickleValue> call(const PickleValue& callable, const PickleValue& args);

  StorageLoader loader_;
  Limits limits_;
  std::map<std::string, torch::Tensor> storages_;
};

}  // namespace streetgan
