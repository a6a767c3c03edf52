#pragma once
// DcganStep: both networks, both AdamW optimizers and the loss scaler, and the one training step
// of docs/model.md. D learns from a real batch and from G(z).detach(); then G learns through the
// updated D, each image D sees augmented as the config asks (augment.diff), with the config's loss (gan_loss.h; the original recipe's BCE by default), D's
// gradient penalties R1 and R2 where asked (every reg_every steps), each net's learning rate
// (lr_d, lr_g), and G learning on every n_critic-th step only (D on every step). Used by the
// Trainer and by `streetgan bench train`, so the benchmark measures exactly the step that trains.
//
// trainStep() never waits for the host: its statistics come back as one small tensor on the
// device, for the caller to copy to the host when it logs (StepStatsQueue). Per device it picks
// the memory layout (conv_layout.h), turns on cuDNN's autotuner on CUDA, and updates each net's
// parameters in one multi-tensor (or fused) AdamW step.
#include "core/config/train_config.h"
#include "core/model/discriminator.h"
#include "core/model/generator.h"
#include "core/train/compute_device.h"
#include "core/train/gan_loss.h"
#include "core/train/loss_scaler.h"
#include "core/train/multi_tensor_adamw.h"

#include <array>
#include <memory>

namespace streetgan {

class DiscriminatorAugment;
class GeneratorAverage;
class GradientAllReduce;
class RankGroup;

/// One step's statistics on the host, in the order of the tensor trainStep() returns.
struct StepStats {
  static constexpr int kValues = 9;
  double loss_d = 0;  ///< D's loss (gan_loss.h): with bce, BCE of D on real + BCE of D on fake
  double loss_g = 0;  ///< G's loss: with bce, BCE of D(G(z)) against label 1
  double d_x = 0;     ///< mean sigmoid(D(x)) on the real batch
  double d_g_z1 = 0;  ///< mean sigmoid(D(G(z))) before D's step
  double d_g_z2 = 0;  ///< mean sigmoid(D(G(z))) after D's step
  bool skipped = false;    ///< fp16 overflow: the optimizers did not step
  double loss_scale = 1;   ///< the loss scale this step ran with
  /// ADA's overfitting heuristic r_t (Karras et al. 2020): the mean sign of D's logits on the real
  /// batch, −1 to 1; near 1 means D tells every training image apart (it is overfitting).
  double rt = 0;
  /// ADA's probability p this step ran with (0 without ADA; discriminator_augment.h).
  double ada_p = 0;

  /// From kValues doubles in trainStep()'s order.
  static StepStats fromRow(const double* row);
};

class DcganStep {
public:
  /// Builds G and D for `config`, initialised from `config.seed`, on `device`.
  DcganStep(const TrainConfig& config, const c10::Device& device, Precision precision);
  ~DcganStep();

  /// One step on `real` (B, nc, H, W) in [-1, 1] with latent `noise` (B, nz, 1, 1), both already
  /// on the device. Returns StepStats::kValues float64 values on the device (StepStats order);
  /// nothing is copied to the host.
  torch::Tensor trainStep(const torch::Tensor& real, const torch::Tensor& noise);
  /// Trains as one rank of `group` (null: alone again): each net's gradients are averaged over
  /// the ranks before its optimizer steps, the statistics trainStep() returns are the ranks'
  /// means, and the BatchNorm layers use the whole job's batch statistics with `sync_batchnorm`,
  /// else their own, with rank 0's running statistics given to every rank before each step (as
  /// DistributedDataParallel does). `group` outlives this object.
  void setRankGroup(RankGroup* group, bool sync_batchnorm);
  /// Gives every rank rank 0's parameters and BatchNorm statistics (at the start and on resume).
  void broadcastFromRankZero();
  /// The steps a resumed run has trained: the lazy penalties (reg_every) and G's steps (n_critic)
  /// keep their schedule.
  void setStepsDone(std::int64_t steps) { steps_done_ = steps; }

  /// Moves G's moving average (ema.half_life_images; nothing when off) after a step of
  /// `step_images` images over every rank, `images_before` trained before it. The caller counts
  /// the images: ranks may train unequal shares of a batch.
  void updateAverage(std::int64_t images_before, std::int64_t step_images);
  /// What D's inputs go through (augment.diff); null when nothing is applied.
  DiscriminatorAugment* augment() { return augment_.get(); }
  /// G's moving average; null when the config has none.
  GeneratorAverage* average() { return average_.get(); }
  /// The generator sample grids, evaluations and checkpoints render from: G's moving average
  /// when the run keeps one, else G.
  Generator& renderingGenerator();

  /// `config`'s learning rates (lr_d, lr_g; 0 = lr) on both optimizers: a resume sets them after
  /// loading the optimizers' saved state, which carries the rates the run trained with.
  void setLearningRates(const TrainConfig& config);

  /// trainStep() with its statistics read to the host (a synchronisation; tests and tools).
  StepStats step(const torch::Tensor& real, const torch::Tensor& noise);

  Generator& generator() { return generator_; }
  Discriminator& discriminator() { return discriminator_; }
  /// Both nets as plain modules, G first (for walks over every parameter or buffer).
  std::array<torch::nn::Module*, 2> nets() { return {generator_.get(), discriminator_.get()}; }
  MultiTensorAdamW& optimizerG() { return *optimizer_g_; }
  MultiTensorAdamW& optimizerD() { return *optimizer_d_; }
  LossScaler& scaler() { return scaler_; }
  const c10::Device& device() const { return device_; }
  Precision precision() const { return precision_; }

private:
  torch::Tensor generatorStep(const torch::Tensor& real, const torch::Tensor& fake, bool learns,
                              torch::Tensor& out_fake_g);
  /// `x` as D sees it: augmented when the config asks.
  torch::Tensor augmented(const torch::Tensor& x);

  c10::Device device_;
  Precision precision_;
  Generator generator_;
  Discriminator discriminator_;
  std::unique_ptr<MultiTensorAdamW> optimizer_g_;
  std::unique_ptr<MultiTensorAdamW> optimizer_d_;
  LossScaler scaler_;
  GanLoss loss_ = GanLoss::Bce;
  double r1_gamma_ = 0, r2_gamma_ = 0;  ///< the gradient penalties (0: off)
  int reg_every_ = 1;                   ///< penalised every reg_every_ steps, scaled by it
  int n_critic_ = 1;                    ///< D steps per G step
  std::int64_t steps_done_ = 0;         ///< steps trained, for the lazy penalties' and n_critic's schedule
  RankGroup* group_ = nullptr;
  bool sync_batchnorm_ = false;
  std::unique_ptr<GradientAllReduce> reduce_g_, reduce_d_;
  std::unique_ptr<GeneratorAverage> average_;
  std::unique_ptr<DiscriminatorAugment> augment_;
};

}  // namespace streetgan
