#pragma once
// ParzenEstimator: Goodfellow's Parzen-window log-likelihood of held-out points under a set of
// generated samples, log p(x) = log mean_j exp(−‖x−μ_j‖²/(2σ²)) − d·log(σ√(2π)), with x and μ
// flattened rows in [-1, 1]. The squared distance of each (x, μ) pair is computed once, in
// float64 and in bounded blocks (‖x‖² + ‖μ‖² − 2·x·μ by matrix product), and every σ of the grid
// is evaluated from it with a running log-sum-exp, so the σ grid costs little beyond one σ.
// σ is chosen on a validation split (highest mean log-likelihood) and reported on a separate test
// split as mean ± standard error. Bad input (empty splits, sizes that differ, NaN or Inf, σ ≤ 0)
// and cancellation come back as an Error; runs on CPU or CUDA.
#include "core/util/result.h"

#include <c10/core/Device.h>
#include <torch/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace streetgan {

struct ParzenOptions {
  std::vector<double> sigmas = defaultSigmas();  ///< the σ grid (each > 0)
  std::int64_t block = 512;                      ///< rows of x and of μ per distance block
  c10::Device device = c10::kCPU;                ///< where the distances are computed
  /// Called with the fraction done (0..1); returning false cancels.
  std::function<bool(double)> progress;

  /// logspace(−1, 0, 10): 0.1 … 1.
  static std::vector<double> defaultSigmas();
};

struct ParzenCurvePoint {
  double sigma = 0;
  double mean_ll = 0;  ///< mean log-likelihood of the validation split at this σ
};

struct ParzenResult {
  double sigma = 0;        ///< the σ chosen on the validation split
  double mean_ll = 0;      ///< mean log-likelihood of the test split at that σ
  double stderr_ll = 0;    ///< its standard error: sample std (n − 1 in the variance) / √n
  std::int64_t n_test = 0;
  std::int64_t n_valid = 0;
  std::int64_t n_samples = 0;
  std::vector<ParzenCurvePoint> curve;  ///< validation mean log-likelihood for every σ
};

class ParzenEstimator {
public:
  /// Log-likelihood of each row of `points` (n, d) under the window of `samples` (N, d) for each
  /// σ in options.sigmas: an (n, S) float64 tensor on the CPU.
  static Result<torch::Tensor> logLikelihoods(const torch::Tensor& samples, const torch::Tensor& points,
                                              const ParzenOptions& options);
  /// Chooses σ on `valid`, then scores `test` at it.
  static Result<ParzenResult> evaluate(const torch::Tensor& samples, const torch::Tensor& valid,
                                       const torch::Tensor& test, const ParzenOptions& options);
  /// Scores `test` at one given σ (no validation split).
  static Result<ParzenResult> evaluateAt(const torch::Tensor& samples, const torch::Tensor& test, double sigma,
                                         const ParzenOptions& options);

private:
  static Result<torch::Tensor> logLikelihoodsUnchecked(const torch::Tensor& samples, const torch::Tensor& points,
                                                       const ParzenOptions& options);
};

}  // namespace streetgan
