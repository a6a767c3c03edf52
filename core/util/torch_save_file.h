#pragma once
// Reads a file written by Python's torch.save (the zip format of PyTorch 1.6 and later): the zip
// is opened with LibTorch's own archive reader (caffe2::serialize::PyTorchStreamReader), its
// data.pkl is unpickled by PickleReader, and each tensor storage is copied out of its data/<key>
// record onto the CPU. No Python is involved and no code in the file can run.
//
// Failures (no such file, not a zip, the legacy pre-1.6 format, a big-endian file, a missing or
// short record, a pickle PickleReader refuses) come back as one line that names the file.
#include "core/util/pickle_value.h"
#include "core/util/result.h"

#include <string>

namespace streetgan {

/// The value the torch.save file at `path` holds.
Result<PickleValue> readTorchSaveFile(const std::string& path);

}  // namespace streetgan
