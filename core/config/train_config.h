#pragma once
// TrainConfig: every setting of a training run, with the defaults of the original Python tool.
// Parsed from JSON (a config file, or the `-t` training / `-c` checkpoint strings of the original
// CLI) and written back fully resolved to the run directory's config.json. Parsing validates each
// key as it is read and reports the first bad one as an Error naming the key, the value and what
// is allowed; nothing is half-applied.
#include "core/config/data_config.h"
#include "core/config/preset_names.h"
#include "core/util/result.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace streetgan {

/// The reference augmentation pipeline (docs/data.md), applied in this order.
struct AugmentConfig {
  double shift = 0.2;        ///< random horizontal shift, up to ±shift·width
  double crop_scale = 4.0;   ///< center crop of crop_scale·img_size pixels (black padding)
  double noise_std = 0.05;   ///< Gaussian noise added in [0,1] space
  bool flip = false;         ///< random horizontal flip
  double rotate_deg = 0.0;   ///< random rotation up to ±rotate_deg degrees
  double scale_jitter = 0.0; ///< random zoom factor in [1−scale_jitter, 1+scale_jitter]
  /// DiffAugment (Zhao et al. 2020; docs/config.md "Recipe"): policies applied to every image D
  /// sees, real and generated, differentiably; comma-separated color, translation, cutout; "" = off.
  std::string diff;
  /// ADA (Karras et al. 2020; docs/config.md "Recipe"): the r_t its probability p steers toward;
  /// 0 = off, 0.6 in the paper.
  double ada_target = 0;
  /// ADA's p at the start of a run; with ada_target 0 a fixed probability (StyleGAN2-ADA's
  /// `--aug fixed --p`): 0 and ada_target 0 = off.
  double ada_p = 0;
  /// ADA: images over which p can move from 0 to 1 (500k in the paper: 500).
  double ada_kimg = 500;
  /// ADA's operations: blit, geom, color, bg or bgc (StyleGAN2-ADA's pipelines).
  std::string ada_ops = "bgc";
};

/// G's exponential moving average (docs/config.md "Recipe"): the generator every checkpoint
/// renders from by default. Each step moves the average toward G by β = 0.5^(images / half-life),
/// where images is the step's batch over every rank (StyleGAN2's ema_kimg).
struct EmaConfig {
  double half_life_images = 0;  ///< images over which G's old weights count half; 0 = off
  /// StyleGAN2-ADA's ramp-up: the half-life is at most rampup × the images trained so far (early
  /// averages forget the random start quickly); 0 = off, StyleGAN2-ADA uses 0.05.
  double rampup = 0;
};

/// Parzen evaluation during training (docs/evaluation.md), on the data set's held-out split.
struct ParzenConfig {
  int every_epochs = 0;        ///< evaluate after every N epochs; 0 = off
  int n_samples = 1000;        ///< generated samples
  int n_valid = 200;           ///< held-out images that choose σ
  int n_test = 200;            ///< held-out images scored at that σ
  std::vector<double> sigmas;  ///< the σ grid; empty = logspace(−1, 0, 10)
};

/// Quality metrics during training (docs/evaluation.md): the suite of `streetgan metrics` on rank 0,
/// on a worker thread with a copy of the generator, and the alarms raised from its figures.
struct MetricsConfig {
  int every_epochs = 0;             ///< evaluate after every N epochs; 0 = off
  std::int64_t every_images = 0;    ///< or after every N training images; 0 = off
  int n_samples = 1000;             ///< generated samples per evaluation
  int n_train = 1000;               ///< training images compared with (a seeded draw, loaded once)
  std::vector<std::string> only;    ///< the metrics to compute (swd, msssim, ...); empty = all
  /// Mode collapse: the samples' MS-SSIM above the training images' by more than this.
  double alarm_msssim_margin = 0.1;
  /// Mode collapse: a share of the NDB bins above this.
  double alarm_ndb_fraction = 0.5;
  /// Mode collapse: the samples' spread (median distance to the nearest other sample) below this
  /// share of the training images'.
  double alarm_spread_ratio = 0.5;
  /// Memorisation: a copy rate above this.
  double alarm_copy_rate = 0.05;
  /// D overfitting: r_t's mean over the last alarm_rt_steps steps above this.
  double alarm_rt = 0.6;
  int alarm_rt_steps = 200;
};

struct TrainConfig {
  // Training keys of the original tool (`-t`).
  int nc = 3;                 ///< image channels: 3 (RGB) or 1 (grayscale)
  int nz = 100;               ///< latent size
  int ngf = 64;               ///< generator width
  int ndf = 64;               ///< discriminator width
  double lr = 2e-4;           ///< AdamW learning rate, both nets
  double beta1 = 0.5;         ///< AdamW beta1
  double beta2 = 0.999;       ///< AdamW beta2
  int batch_size = 128;       ///< images per step
  int img_size = 64;          ///< 64 (G64/D64) or 128 (G128/D128)
  double weight_decay = 0.05; ///< AdamW weight decay

  // The recipe beyond the original tool's (docs/config.md "Recipe"): each key's default is the
  // original recipe.
  std::string loss = "bce";          ///< bce | hinge | rpgan (core/train/gan_loss.h)
  double lr_d = 0;                   ///< D's AdamW learning rate (TTUR); 0 = lr
  double lr_g = 0;                   ///< G's AdamW learning rate (TTUR); 0 = lr
  double r1_gamma = 0;               ///< R1: γ of the zero-centred gradient penalty on real images; 0 = off
  double r2_gamma = 0;               ///< R2: γ of the zero-centred gradient penalty on generated images; 0 = off
  int reg_every = 1;                 ///< lazy regularisation: the penalties every k steps, scaled by k
  int n_critic = 1;                  ///< D steps per G step: G learns on every n_critic-th step
  std::string d_norm = "batchnorm";  ///< D's normalisation: batchnorm | none | spectral
  EmaConfig ema;                     ///< G's moving average ("ema" keys)

  // Checkpoint keys of the original tool (`-c`).
  std::string name = "streetgan"; ///< run name: the run directory is root/name
  std::string root = "runs";      ///< folder that holds run directories
  int log_frequency = 100;        ///< steps between sample grids (one is also written per epoch)
  int save_frequency = 1;         ///< epochs between checkpoints
  int keep_checkpoints = 3;       ///< checkpoints kept; older ones are deleted

  // Run settings.
  std::string dataroot;           ///< folder of training images (required to train)
  int epochs = 25;                ///< total epochs of the run (a resumed run continues up to it)
  std::int64_t seed = 0;          ///< seeds weights, data order, augmentation and noise
  std::string device = "auto";    ///< auto | cpu | cuda | cuda:N | hpu
  std::string precision = "auto"; ///< auto (fp16 on CUDA, fp32 on CPU) | fp32 | fp16 | bf16
  int threads = 0;                ///< CPU threads for LibTorch and decoding; 0 = all cores
  int sync_every_steps = 0;       ///< steps between copies of the step statistics to the host;
                                  ///< 0 = auto (every step on the CPU, about once a second elsewhere)
  bool sync_batchnorm = false;    ///< several ranks: BatchNorm statistics of the whole job's batch
  bool cuda_graphs = false;       ///< one CUDA device: the training step recorded as a CUDA graph and replayed
  bool tensorboard = true;        ///< also write TensorBoard event files under <run>/tensorboard/
  int sample_count = 64;          ///< images in each sample grid (fixed noise batch)
  std::string preset = "custom";  ///< the preset this config started from, for display

  AugmentConfig augment;
  DataConfig data;            ///< which images, and how they are loaded ("data" keys)
  ParzenConfig parzen;        ///< Parzen evaluation while training ("parzen" keys)
  MetricsConfig metrics;      ///< quality metrics while training ("metrics" keys)
};

/// Which keys a JSON object may set: the original CLI's `-t` takes training keys only,
/// `-c` checkpoint keys only; a config file takes every key; a resumed run takes only the keys
/// that may change on resume (configKeyMayChangeOnResume: where and how long it trains, never what
/// it learns), given again on its command line, and a training key at the value `base` has (the
/// first command line again). ResumeUnread is Resume when the run's config cannot be read here
/// (another host's run, an unreadable checkpoint): every training key passes at any value, and the
/// trainer, which reads the run, refuses one that changes.
enum class ConfigScope { All, Training, Checkpoint, Resume, ResumeUnread };

/// Applies the keys of `json` (an object) on top of `base`. `source` names where the JSON came
/// from (a file path, "-t", "-c") and starts every error message.
Result<TrainConfig> applyConfigJson(const TrainConfig& base, const nlohmann::json& json,
                                    ConfigScope scope, const std::string& source);

/// Parses `text` as JSON and applies it as applyConfigJson does.
Result<TrainConfig> applyConfigText(const TrainConfig& base, const std::string& text,
                                    ConfigScope scope, const std::string& source);

/// Reads a config file and applies it on top of `base`.
Result<TrainConfig> applyConfigFile(const TrainConfig& base, const std::string& path);
/// The largest config text read, from a file or from another rank.
constexpr std::int64_t kMaxConfigBytes = 16 << 20;

/// The DiffAugment policies `text` (augment.diff) names, in its order: color, translation and
/// cutout, comma-separated without spaces, each at most once; "" names none. An Error otherwise.
Result<std::vector<std::string>> diffAugmentPolicies(const std::string& text);

/// Checks the rules that span keys (run after every key is set).
Status validateConfig(const TrainConfig& config);

/// Every key written out, nested as `augment: {...}` and `data: {...}`; applyConfigJson of it gives back `config`.
nlohmann::json configToJson(const TrainConfig& config);

/// Named presets: naive-64 (the DCGAN paper's networks and recipe), safe-64, safe-128, demo (nz 64,
/// ngf/ndf 32, batch 32, 60 epochs: learns the demo street scenes in minutes on a CPU), and
/// modern-64 and modern-128 (the paper's networks with the recipe bench/bench_recipes.py found best).
/// Their names: core/config/preset_names.h.
Result<TrainConfig> presetConfig(const std::string& name);

/// Every key a config may hold, in the dotted form used by messages (`augment.shift`, `data.cities`).
std::vector<std::string> configKeyNames();

/// Whether a resumed run may change key `name` (ConfigScope::Resume): the data folder, the epochs,
/// the device, precision and threads, CUDA graphs, the image cache and the data workers.
bool configKeyMayChangeOnResume(const std::string& name);
/// Whether key `name` is one of those a resume may change that change what the run learns from
/// then on (lr, lr_d, lr_g, r1_gamma, r2_gamma, augment.*): the trainer warns when one does.
bool configKeyTunedOnResume(const std::string& name);

/// The value of key `name` given on the command line as `text` by `option`: an integer key's text
/// read as an integer and checked against the key's bounds (the key table's, the only ones), with
/// errors that name the option ("option '--epochs': 'zero' is not allowed; allowed: an integer
/// from 1 to 1000000"); a number key's text read as a number, and any other key's text as it is,
/// both checked with the rest of the config by applyConfigJson ("config key ...").
Result<nlohmann::json> configOptionValue(const std::string& name, const std::string& option, const std::string& text);

/// A key's allowed values in words ("an integer from 1 to 4096", "bce, hinge or rpgan"), as its
/// errors say them (empty for an unknown key).
std::string configKeyAllowed(const std::string& name);

/// The group a key belongs to, for forms: Training, Recipe, Checkpoint, Run, Augment, Data, Parzen
/// or Quality metrics (empty for an unknown key).
std::string configKeyGroup(const std::string& name);

}  // namespace streetgan
