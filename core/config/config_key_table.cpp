#include "core/config/config_key_table.h"

#include "core/config/config_key_builders.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <regex>

namespace streetgan {
namespace {

using json = nlohmann::json;
using namespace config_keys;

bool validRunName(const std::string& s) {
  return !s.empty() && s.size() <= 200 && s != "." && s != ".." &&
         s.find('/') == std::string::npos && s.find('\0') == std::string::npos &&
         s.find('\n') == std::string::npos;
}

bool validDevice(const std::string& s) {
  static const std::regex pattern("auto|cpu|cuda(:[0-9]{1,2})?|hpu");
  return std::regex_match(s, pattern);
}

// The training keys: the networks, the optimiser, the batch and the image size.
std::vector<ConfigKey> trainingKeys() {
  using G = KeyGroup;
  return {
      choiceKey("nc", G::Training, &TrainConfig::nc, {1, 3}),
      intKey("nz", G::Training, &TrainConfig::nz, 1, 4096),
      intKey("ngf", G::Training, &TrainConfig::ngf, 1, 2048),
      intKey("ndf", G::Training, &TrainConfig::ndf, 1, 2048),
      numberKey("lr", G::Training, [](TrainConfig& c) -> double& { return c.lr; }, 0.0, 10.0, true,
                "a positive number below 10"),
      numberKey("beta1", G::Training, [](TrainConfig& c) -> double& { return c.beta1; }, 0.0, 1.0,
                false, "a number in [0, 1)"),
      numberKey("beta2", G::Training, [](TrainConfig& c) -> double& { return c.beta2; }, 0.0, 1.0,
                false, "a number in [0, 1)"),
      intKey("batch_size", G::Training, &TrainConfig::batch_size, 1, 65536),
      choiceKey("img_size", G::Training, &TrainConfig::img_size, {64, 128}),
      numberKey("weight_decay", G::Training,
                [](TrainConfig& c) -> double& { return c.weight_decay; }, 0.0, 1e3, false,
                "0 or a positive number below 1000"),
  };
}

// The recipe keys: the losses and learning rates beyond the original tool's (docs/config.md).
std::vector<ConfigKey> recipeKeys() {
  using G = KeyGroup;
  return {
      stringKey(
          "loss", G::Recipe, &TrainConfig::loss,
          [](const std::string& s) { return s == "bce" || s == "hinge" || s == "rpgan"; }, "bce, hinge or rpgan"),
      numberKey(
          "lr_d", G::Recipe, [](TrainConfig& c) -> double& { return c.lr_d; }, 0.0, 10.0, false,
          "0 (the same as lr) or a positive number below 10"),
      numberKey(
          "lr_g", G::Recipe, [](TrainConfig& c) -> double& { return c.lr_g; }, 0.0, 10.0, false,
          "0 (the same as lr) or a positive number below 10"),
      numberKey(
          "r1_gamma", G::Recipe, [](TrainConfig& c) -> double& { return c.r1_gamma; }, 0.0, 1e6, false,
          "0 (off) or a positive number below 1000000"),
      numberKey(
          "r2_gamma", G::Recipe, [](TrainConfig& c) -> double& { return c.r2_gamma; }, 0.0, 1e6, false,
          "0 (off) or a positive number below 1000000"),
      intKey("reg_every", G::Recipe, &TrainConfig::reg_every, 1, 1000000),
      intKey("n_critic", G::Recipe, &TrainConfig::n_critic, 1, 100),
      stringKey(
          "d_norm", G::Recipe, &TrainConfig::d_norm,
          [](const std::string& s) { return s == "batchnorm" || s == "none" || s == "spectral"; },
          "batchnorm, none or spectral"),
      numberKey(
          "ema.half_life_images", G::Recipe, [](TrainConfig& c) -> double& { return c.ema.half_life_images; }, 0.0,
          1e12, false, "0 (off) or a positive number of images below 10^12"),
      nestedStringKey(
          "augment.diff", G::Recipe, [](TrainConfig& c) -> std::string& { return c.augment.diff; },
          [](const std::string& s) { return diffAugmentPolicies(s).ok(); },
          "a comma-separated list of color, translation and cutout, each at most once, or \"\" for none"),
      numberKey(
          "augment.ada_target", G::Recipe, [](TrainConfig& c) -> double& { return c.augment.ada_target; }, 0.0, 1.0,
          false, "0 (off) or a number in (0, 1)"),
      numberKey(
          "augment.ada_p", G::Recipe, [](TrainConfig& c) -> double& { return c.augment.ada_p; }, 0.0,
          std::nextafter(1.0, 2.0), false, "a number from 0 to 1"),
      numberKey(
          "augment.ada_kimg", G::Recipe, [](TrainConfig& c) -> double& { return c.augment.ada_kimg; }, 0.001, 1e6,
          false, "a number of thousands of images from 0.001 to below 1000000"),
      nestedStringKey(
          "augment.ada_ops", G::Recipe, [](TrainConfig& c) -> std::string& { return c.augment.ada_ops; },
          [](const std::string& s) { return s == "blit" || s == "geom" || s == "color" || s == "bg" || s == "bgc"; },
          "blit, geom, color, bg or bgc"),
      numberKey(
          "ema.rampup", G::Recipe, [](TrainConfig& c) -> double& { return c.ema.rampup; }, 0.0, 1e6, false,
          "0 (off) or a positive number below 1000000"),
  };
}

// The checkpoint keys: the run's name and folder, and how often it logs and saves.
std::vector<ConfigKey> checkpointKeys() {
  using G = KeyGroup;
  return {
      stringKey("name", G::Checkpoint, &TrainConfig::name, validRunName,
                "a non-empty name without '/' or a line break, not \".\" or \"..\""),
      stringKey("root", G::Checkpoint, &TrainConfig::root,
                [](const std::string& s) { return !s.empty() && s.find('\0') == std::string::npos; },
                "a non-empty folder path"),
      intKey("log_frequency", G::Checkpoint, &TrainConfig::log_frequency, 1, 100000000),
      intKey("save_frequency", G::Checkpoint, &TrainConfig::save_frequency, 1, 1000000),
      intKey("keep_checkpoints", G::Checkpoint, &TrainConfig::keep_checkpoints, 1, 1000000),
  };
}

// The run keys: data folder, length, seed, device and precision, and what is recorded.
std::vector<ConfigKey> runKeys() {
  using G = KeyGroup;
  return {
      stringKey("dataroot", G::Run, &TrainConfig::dataroot,
                [](const std::string& s) { return s.find('\0') == std::string::npos; },
                "a folder path"),
      intKey("epochs", G::Run, &TrainConfig::epochs, 1, 1000000),
      intKey("seed", G::Run, &TrainConfig::seed, 0, std::numeric_limits<std::int64_t>::max()),
      stringKey("device", G::Run, &TrainConfig::device, validDevice,
                "auto, cpu, cuda, cuda:N or hpu"),
      stringKey("precision", G::Run, &TrainConfig::precision,
                [](const std::string& s) {
                  return s == "auto" || s == "fp32" || s == "fp16" || s == "bf16";
                },
                "auto, fp32, fp16 or bf16"),
      intKey("threads", G::Run, &TrainConfig::threads, 0, 1024),
      intKey("sync_every_steps", G::Run, &TrainConfig::sync_every_steps, 0, 1000000),
      boolKey("sync_batchnorm", G::Run, [](TrainConfig& c) -> bool& { return c.sync_batchnorm; }),
      boolKey("cuda_graphs", G::Run, [](TrainConfig& c) -> bool& { return c.cuda_graphs; }),
      boolKey("tensorboard", G::Run, [](TrainConfig& c) -> bool& { return c.tensorboard; }),
      intKey("sample_count", G::Run, &TrainConfig::sample_count, 1, 1024),
      stringKey("preset", G::Run, &TrainConfig::preset,
                [](const std::string& s) { return !s.empty() && s.size() <= 64; },
                "a non-empty label of at most 64 characters"),
  };
}

// The augmentation keys (augment.*).
std::vector<ConfigKey> augmentKeys() {
  using G = KeyGroup;
  return {
      numberKey("augment.shift", G::Augment,
                [](TrainConfig& c) -> double& { return c.augment.shift; }, 0.0, 1.0, false,
                "a number in [0, 1)"),
      numberKey("augment.crop_scale", G::Augment,
                [](TrainConfig& c) -> double& { return c.augment.crop_scale; }, 0.0, std::nextafter(64.0, 65.0), true,
                "a positive number up to 64"),
      numberKey("augment.noise_std", G::Augment,
                [](TrainConfig& c) -> double& { return c.augment.noise_std; }, 0.0, 10.0, false,
                "a number in [0, 10)"),
      boolKey("augment.flip", G::Augment, [](TrainConfig& c) -> bool& { return c.augment.flip; }),
      numberKey("augment.rotate_deg", G::Augment,
                [](TrainConfig& c) -> double& { return c.augment.rotate_deg; }, 0.0, 180.0, false,
                "a number of degrees in [0, 180)"),
      numberKey("augment.scale_jitter", G::Augment,
                [](TrainConfig& c) -> double& { return c.augment.scale_jitter; }, 0.0, 1.0, false,
                "a number in [0, 1)"),
  };
}

// The data keys (data.*): the filters, the held-out split and the loader.
std::vector<ConfigKey> dataKeys() {
  using G = KeyGroup;
  static const std::string cache_allowed = "a cache file path, or \"\" for none";
  return {
      namesKey("data.cities", [](TrainConfig& c) -> std::vector<std::string>& { return c.data.filter.cities; }),
      namesKey("data.exclude_cities",
               [](TrainConfig& c) -> std::vector<std::string>& { return c.data.filter.exclude_cities; }),
      dataChoiceKey("data.msls_split", [](TrainConfig& c) -> std::string& { return c.data.filter.msls_split; },
                    {"all", "train_val", "test"}),
      dataChoiceKey("data.subset", [](TrainConfig& c) -> std::string& { return c.data.filter.subset; },
                    {"all", "database", "query"}),
      boolKey("data.drop_panoramas", KeyGroup::Data,
              [](TrainConfig& c) -> bool& { return c.data.filter.drop_panoramas; }),
      dataChoiceKey("data.time_of_day", [](TrainConfig& c) -> std::string& { return c.data.filter.time_of_day; },
                    {"all", "day", "night"}),
      nestedIntKey(
          "data.max_per_sequence", G::Data, [](TrainConfig& c) -> int& { return c.data.filter.max_per_sequence; }, 0,
          1000000),
      namesKey("data.holdout_cities",
               [](TrainConfig& c) -> std::vector<std::string>& { return c.data.filter.holdout_cities; }),
      numberKey(
          "data.holdout_fraction", G::Data, [](TrainConfig& c) -> double& { return c.data.filter.holdout_fraction; },
          0.0, 1.0, false, "a number in [0, 1)"),
      nestedIntKey(
          "data.holdout_seed", G::Data, [](TrainConfig& c) -> std::int64_t& { return c.data.filter.holdout_seed; }, 0,
          std::numeric_limits<std::int64_t>::max()),
      nestedIntKey(
          "data.workers", G::Data, [](TrainConfig& c) -> int& { return c.data.workers; }, 0, 1024),
      nestedIntKey(
          "data.prefetch", G::Data, [](TrainConfig& c) -> int& { return c.data.prefetch; }, 0, 1024),
      {"data.cache", G::Data,
       [](TrainConfig& c, const json& v) -> std::string {
         if (!v.is_string() || v.get<std::string>().find('\0') != std::string::npos)
           return shown(v) + " is not allowed; allowed: " + cache_allowed;
         c.data.cache = v.get<std::string>();
         return {};
       },
       [](const TrainConfig& c) { return json(c.data.cache); }, KeyKind::Other, cache_allowed},
      boolKey("data.reduced_decode", KeyGroup::Data, [](TrainConfig& c) -> bool& { return c.data.reduced_decode; }),
  };
}

// The Parzen evaluation keys (parzen.*) of evaluation during training.
std::vector<ConfigKey> parzenKeys() {
  using G = KeyGroup;
  static const std::string sigmas_allowed = "a list of positive numbers ([] = logspace(-1, 0, 10))";
  return {
      nestedIntKey(
          "parzen.every_epochs", G::Parzen, [](TrainConfig& c) -> int& { return c.parzen.every_epochs; }, 0, 1000000),
      nestedIntKey(
          "parzen.n_samples", G::Parzen, [](TrainConfig& c) -> int& { return c.parzen.n_samples; }, 1, 10000000),
      nestedIntKey(
          "parzen.n_valid", G::Parzen, [](TrainConfig& c) -> int& { return c.parzen.n_valid; }, 1, 10000000),
      nestedIntKey(
          "parzen.n_test", G::Parzen, [](TrainConfig& c) -> int& { return c.parzen.n_test; }, 1, 10000000),
      {"parzen.sigmas", G::Parzen,
       [](TrainConfig& c, const json& v) -> std::string {
         const std::string& allowed = sigmas_allowed;
         if (!v.is_array()) return shown(v) + " is not allowed; allowed: " + allowed;
         std::vector<double> sigmas;
         for (const auto& item : v) {
           if (!item.is_number() || !(item.get<double>() > 0) || !std::isfinite(item.get<double>()))
             return shown(v) + " is not allowed; allowed: " + allowed;
           sigmas.push_back(item.get<double>());
         }
         c.parzen.sigmas = sigmas;
         return {};
       },
       [](const TrainConfig& c) { return json(c.parzen.sigmas); }, KeyKind::Other, sigmas_allowed},
  };
}

// The quality metric keys (metrics.*) of evaluation during training, and their alarms.
std::vector<ConfigKey> metricsKeys() {
  using G = KeyGroup;
  ConfigKey only = namesKey("metrics.only", [](TrainConfig& c) -> std::vector<std::string>& { return c.metrics.only; });
  only.group = G::Metrics;
  return {
      nestedIntKey("metrics.every_epochs", G::Metrics, [](TrainConfig& c) -> int& { return c.metrics.every_epochs; }, 0, 1000000),
      nestedIntKey("metrics.every_images", G::Metrics,
                   [](TrainConfig& c) -> std::int64_t& { return c.metrics.every_images; }, 0,
                   std::numeric_limits<std::int64_t>::max()),
      nestedIntKey("metrics.n_samples", G::Metrics, [](TrainConfig& c) -> int& { return c.metrics.n_samples; }, 2, 1000000),
      nestedIntKey("metrics.n_train", G::Metrics, [](TrainConfig& c) -> int& { return c.metrics.n_train; }, 2, 1000000),
      only,
      numberKey("metrics.alarm_msssim_margin", G::Metrics,
                [](TrainConfig& c) -> double& { return c.metrics.alarm_msssim_margin; }, 0.0, 1.0, false,
                "a number in [0, 1)"),
      numberKey("metrics.alarm_ndb_fraction", G::Metrics,
                [](TrainConfig& c) -> double& { return c.metrics.alarm_ndb_fraction; }, 0.0, std::nextafter(1.0, 2.0), true,
                "a number in (0, 1]"),
      numberKey("metrics.alarm_spread_ratio", G::Metrics,
                [](TrainConfig& c) -> double& { return c.metrics.alarm_spread_ratio; }, 0.0, 1.0, true,
                "a number in (0, 1)"),
      numberKey("metrics.alarm_copy_rate", G::Metrics,
                [](TrainConfig& c) -> double& { return c.metrics.alarm_copy_rate; }, 0.0, std::nextafter(1.0, 2.0), true,
                "a number in (0, 1]"),
      numberKey("metrics.alarm_rt", G::Metrics, [](TrainConfig& c) -> double& { return c.metrics.alarm_rt; }, -1.0,
                std::nextafter(1.0, 2.0), true, "a number in (-1, 1]"),
      nestedIntKey("metrics.alarm_rt_steps", G::Metrics, [](TrainConfig& c) -> int& { return c.metrics.alarm_rt_steps; }, 1,
                   100000000),
  };
}

// Every key, group after group: the order the studio's form and configToJson list them in.
}  // namespace

const std::vector<ConfigKey>& configKeyTable() {
  static const std::vector<ConfigKey> table = [] {
    std::vector<ConfigKey> all;
    for (auto group :
         {trainingKeys, recipeKeys, checkpointKeys, runKeys, augmentKeys, dataKeys, parzenKeys, metricsKeys}) {
      const std::vector<ConfigKey> group_keys = group();
      all.insert(all.end(), group_keys.begin(), group_keys.end());
    }
    return all;
  }();
  return table;
}

const ConfigKey* findConfigKey(const std::string& name) {
  for (const auto& key : configKeyTable())
    if (key.name == name) return &key;
  return nullptr;
}

// The keys a resumed run may change: where and how long it trains, and (with a warning) how fast
// each net learns, the penalties and the augmentation; never the networks' shapes or the loss.
const std::set<std::string>& resumableConfigKeys() {
  static const std::set<std::string> names = [] {
    std::set<std::string> all = {"dataroot", "epochs", "device", "precision", "threads",
                                 "cuda_graphs", "data.cache", "data.workers"};
    for (const auto& key : resumeTunedConfigKeys()) all.insert(key);
    return all;
  }();
  return names;
}

const std::set<std::string>& resumeTunedConfigKeys() {
  static const std::set<std::string> names = [] {
    std::set<std::string> all = {"lr", "lr_d", "lr_g", "r1_gamma", "r2_gamma"};
    for (const auto& key : configKeyTable())
      if (key.name.rfind("augment.", 0) == 0) all.insert(key.name);
    return all;
  }();
  return names;
}
std::string shownConfigValue(const json& value) {
  std::string text = value.dump();
  return text.size() > 60 ? text.substr(0, 57) + "..." : text;
}

}  // namespace streetgan
