#pragma once
// Reads a file written by Python's torch.save (the zip format of PyTorch 1.6 and later): the zip
// is opened with LibTorch's own archive reader (caffe2::serialize::PyTorchStreamReader), its
// data.pkl is unpickled by PickleReader, and each tensor storage is copied out of its data/<key>
// record onto the CPU. No Python is involved and no code in the file can run.
//
// Failures (no such file, not a zip, the legacy pre-1.6 format, a big-endian file, a missing or
// short record, a pickle PickleReader refuses) come back as one line that names the file.
//
// The other way, torchSaveStateDict() makes the bytes torch.save writes for a state dict. Not
// LibTorch's torch::pickle_save: it tags the dict with torch.jit._pickle.restore_type_tag, which
// torch.load refuses under weights_only=True, its default from PyTorch 2.6.
#include "core/formats/pickle_value.h"
#include "core/util/result.h"

#include <torch/types.h>

#include <string>
#include <utility>
#include <vector>

namespace streetgan {

/// The value the torch.save file at `path` holds.
Result<PickleValue> readTorchSaveFile(const std::string& path);

/// The bytes of a torch.save zip holding a collections.OrderedDict of `tensors` (name → tensor,
/// in this order; any device, copied to the CPU), loadable with torch.load(weights_only=True).
Result<std::string> torchSaveStateDict(const std::vector<std::pair<std::string, torch::Tensor>>& tensors);

}  // namespace streetgan
