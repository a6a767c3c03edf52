#pragma once
// NetworkFeatures: a feature space given as a TorchScript file (`streetgan metrics --features
// FILE.pt`): any network that maps a batch of images (B, 3, S, S), float32 in [-1, 1], to
// feature vectors (B, D), for example the Inception network FID papers use, exported by the user
// with torch.jit.script or torch.jit.trace (include its own input normalisation). Images of
// another size are resized to S (bilinear, as torchvision's Resize) before the network sees them.
// The file's SHA-256 and S name the space: figures computed with different files or sizes are
// never compared.
//
// A TorchScript file is code, so it never runs in this process: load() starts a features worker
// (FeaturesWorker, FeaturesWorkerProcess) that checks, loads and runs it, with a memory limit, and
// a time limit for loading and for each batch after which it is killed (SIGKILL), as it is when
// `keep_going` says stop. A network that crashes its process is an Error. Failures (no such file,
// not TorchScript, an operator outside pure tensor computation, a wrong output shape, NaN) come
// back as an Error naming the file. Copies share the one worker.
#include "core/eval/features_worker_options.h"
#include "core/util/result.h"

#include <c10/core/Device.h>
#include <torch/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace streetgan {

class NetworkFeatures {
public:
  /// Checks `path` and starts its worker on `device`; `input_size` is S (≥ 8).
  static Result<NetworkFeatures> load(const std::string& path, int input_size, const c10::Device& device,
                                      const FeaturesWorkerOptions& worker, const std::function<bool()>& keep_going = {});

  /// The features of `images` (n, 3, H, W): (n, D) float64 on the CPU, in batches of at most
  /// `batch` (fewer when a batch at the input size would pass kMaxBatchBytes); `keep_going` is
  /// asked while it waits (false cancels and stops the worker). D may be at most kMaxFeatures.
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
  /// The most images of one batch.
  static constexpr std::int64_t kMaxBatchImages = 4096;

private:
  struct Worker;
  Result<torch::Tensor> batchFeatures(const torch::Tensor& input, const std::function<bool()>& keep_going) const;
  Status failed(const std::string& message) const;

  std::shared_ptr<Worker> worker_;
  std::string path_, sha256_;
  int input_size_ = 0;
  FeaturesWorkerOptions options_;
};

}  // namespace streetgan
