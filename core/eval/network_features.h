#pragma once
// NetworkFeatures: a feature space given as a TorchScript file (`streetgan metrics --features
// FILE.pt`): any network that maps a batch of images (B, 3, S, S), float32 in [-1, 1], to
// feature vectors (B, D), for example the Inception network FID papers use, exported by the user
// with torch.jit.script or torch.jit.trace (include its own input normalisation). Images of
// another size are resized to S (bilinear, as torchvision's Resize) before the network sees them.
// The file's SHA-256 and S name the space: figures computed with different files or sizes are
// never compared. The object owns the loaded module (shared when copied). Failures (no such file,
// not TorchScript, a wrong output shape, NaN) come back as an Error naming the file.
#include "core/util/result.h"

#include <c10/core/Device.h>
#include <torch/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace streetgan {

class NetworkFeatures {
public:
  /// Loads `path` onto `device`; `input_size` is S (≥ 8).
  static Result<NetworkFeatures> load(const std::string& path, int input_size, const c10::Device& device = c10::kCPU);

  /// The features of `images` (n, 3, H, W): (n, D) float64 on the CPU, in batches of at most
  /// `batch` (fewer when a batch at the input size would pass kMaxBatchBytes); `keep_going` is
  /// asked before each batch (false cancels). D may be at most kMaxFeatures.
  Result<torch::Tensor> extract(const torch::Tensor& images, std::int64_t batch = 64,
                                const std::function<bool()>& keep_going = {}) const;

  const std::string& path() const { return path_; }
  const std::string& sha256() const { return sha256_; }
  int inputSize() const { return input_size_; }
  /// "torchscript:<first 16 hex digits of the SHA-256>@<S>px": how results name this space.
  std::string spaceName() const;

  /// The most a features file may hold (a network bigger than this is refused before loading).
  static constexpr std::int64_t kMaxBytes = std::int64_t{4} << 30;
  /// The most features per image (Inception's pool layer has 2,048): FID's covariances grow as D².
  static constexpr std::int64_t kMaxFeatures = 8192;
  /// The most bytes of one input batch at the network's size.
  static constexpr std::int64_t kMaxBatchBytes = std::int64_t{256} << 20;

private:
  struct Module;
  std::shared_ptr<Module> module_;
  std::string path_, sha256_;
  int input_size_ = 0;
  c10::Device device_ = c10::kCPU;
};

}  // namespace streetgan
