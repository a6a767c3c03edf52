#pragma once
// TorchScriptNetwork: a features network (`metrics --features FILE.pt`) loaded into this process,
// which is the features worker's (FeaturesWorker), never the program that asked for the figures:
// a TorchScript file is code. Before LibTorch's loader sees the file, its zip and pickles are
// checked (checkLibTorchArchive) and a class that would run code while it loads (__setstate__)
// is refused; after loading, every operator of every compiled function must be a pure tensor
// operator (no file, storage-from-file, print or other namespace's operator) before anything
// runs. The file's SHA-256 is of the bytes LibTorch read, from the one descriptor opened.
#include "core/util/result.h"

#include <c10/core/Device.h>
#include <torch/types.h>

#include <memory>
#include <string>

namespace streetgan {

class TorchScriptNetwork {
public:
  /// Loads `path` onto `device`, for images of `input_size` pixels. Errors name the file.
  static Result<TorchScriptNetwork> load(const std::string& path, int input_size, const c10::Device& device);

  /// The features (n, D) of one batch (n, 3, S, S) float32 in [-1, 1], as float64 on the CPU;
  /// an Error names the file when the network fails or returns anything but n finite rows of at
  /// most `max_features` values, or a different D than the batch before.
  Result<torch::Tensor> features(const torch::Tensor& batch, std::int64_t max_features);

  const std::string& sha256() const { return sha256_; }

private:
  struct Module;
  std::shared_ptr<Module> module_;
  std::string path_, sha256_;
  int input_size_ = 0;
  c10::Device device_ = c10::kCPU;
  std::int64_t dimensions_ = -1;
};

}  // namespace streetgan
