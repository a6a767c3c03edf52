#pragma once
// Checkpoints: the whole training state in one file, enough to continue a run exactly: both
// networks (weights and BatchNorm statistics), both AdamW optimizers (moments, step counts), the
// loss scaler, G's moving average when the run keeps one, the progress counters, the noise generator's RNG state, the fixed sample noise and
// the resolved config. Written to a temporary file, synced and renamed into place (atomic_file.h).
// Loading reports an unreadable or foreign file as an Error naming it (LibTorch's exceptions are
// translated here).
#include "core/config/train_config.h"
#include "core/train/dcgan_step.h"
#include "core/train/generator_choice.h"
#include "core/util/result.h"

#include <torch/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace streetgan {

struct TrainingProgress {
  std::int64_t epoch = 0;        ///< epochs completed
  std::int64_t batch = 0;        ///< next batch within the current epoch
  std::int64_t step = 0;         ///< optimizer steps taken
  std::int64_t images_seen = 0;  ///< real images shown to D
  std::int64_t world_size = 1;   ///< ranks that trained `batch` (a batch index counts world_size·batch_size images)
};

struct CheckpointState {
  TrainingProgress progress;
  torch::Tensor fixed_noise;      ///< (sample_count, nz, 1, 1), the sample grid's latents
  torch::Tensor noise_rng_state;  ///< state of the generator that draws the training latents
  TrainConfig config;
  std::string noise_rng_kind = "cpu";  ///< the device kind of that generator ("cpu", "cuda")
  std::string precision = "fp32";      ///< the precision the run resolved (fp32, fp16, bf16)
  /// on load: false when the augmentation generator's saved state was of another device kind (or
  /// absent) and it keeps its seed
  bool augment_rng_restored = true;
  bool scaler_restored = true;    ///< on load: false when the model's enabled loss scaler could
                                  ///< not take the saved state (it was disabled) and starts afresh
};

/// Writes `state` and the nets/optimizers of `model` to `path` atomically.
Status saveCheckpoint(const std::string& path, DcganStep& model, const CheckpointState& state);

/// Reads only the config stored in a checkpoint.
Result<TrainConfig> readCheckpointConfig(const std::string& path);

/// The config a resumed run continues with: its newest checkpoint's, or the one before it when the
/// newest cannot be read (a write cut short). `checkpoints`: the run's, oldest first, not empty.
Result<TrainConfig> readResumeConfig(const std::vector<std::string>& checkpoints);

/// Restores `model` (built from the checkpoint's config) and returns the rest of the state.
Result<CheckpointState> loadCheckpoint(const std::string& path, DcganStep& model);

/// loadCheckpoint() of a checkpoint's bytes (one rank 0 read and sent to the others): `name`
/// stands for the file in messages.
Result<CheckpointState> loadCheckpointBytes(const std::string& bytes, const std::string& name, DcganStep& model);

/// A generator restored from a checkpoint, for sampling.
struct CheckpointGenerator {
  Generator generator{nullptr};
  /// `generator` is G's moving average (else G itself, the raw generator).
  bool average = false;
  /// "ema" or "raw": which generator rendered, as results and `--generator` name it.
  const char* generatorName() const { return streetgan::generatorName(average); }
  /// The discriminator when the checkpoint holds one that loads (null otherwise), in eval mode.
  Discriminator discriminator{nullptr};
  TrainConfig config;
  torch::Tensor fixed_noise;
  TrainingProgress progress;
};
/// Refuses GeneratorChoice::Average for a checkpoint without a moving average, naming the file.
Result<CheckpointGenerator> loadCheckpointGenerator(const std::string& path, const c10::Device& device,
                                                    GeneratorChoice choice = GeneratorChoice::Default);

}  // namespace streetgan
