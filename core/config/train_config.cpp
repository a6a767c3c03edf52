#include "core/config/train_config.h"

#include "core/util/json_value.h"
#include "core/util/regular_file.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <regex>
#include <set>
#include <sstream>
#include <vector>

namespace streetgan {
namespace {

using json = nlohmann::json;

enum class KeyGroup { Training, Checkpoint, Run, Augment, Data, Parzen, Metrics };

// A config key: how to read it into a TrainConfig (returning an error text, empty when valid)
// and how to write it back.
struct ConfigKey {
  std::string name;
  KeyGroup group;
  std::function<std::string(TrainConfig&, const json&)> set;
  std::function<json(const TrainConfig&)> get;
};

std::string shown(const json& value) {
  std::string text = value.dump();
  return text.size() > 60 ? text.substr(0, 57) + "..." : text;
}

bool readInteger(const json& value, long long& out) {
  if (value.is_number_integer()) {
    out = value.get<long long>();
    return true;
  }
  if (value.is_number_float()) {
    const double d = value.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9e15) {
      out = static_cast<long long>(d);
      return true;
    }
  }
  return false;
}

// An integer key reached through `field` (for nested structs).
template <class Field>
ConfigKey nestedIntKey(std::string name, KeyGroup group, Field field, long long lo, long long hi) {
  const std::string allowed = "an integer from " + std::to_string(lo) + " to " + std::to_string(hi);
  return {name, group,
          [=](TrainConfig& c, const json& v) -> std::string {
            long long n = 0;
            if (!readInteger(v, n) || n < lo || n > hi)
              return shown(v) + " is not allowed; allowed: " + allowed;
            field(c) = static_cast<std::remove_reference_t<decltype(field(c))>>(n);
            return {};
          },
          [=](const TrainConfig& c) {
            TrainConfig copy = c;
            return json(field(copy));
          }};
}

template <class Member>
ConfigKey intKey(std::string name, KeyGroup group, Member member, long long lo, long long hi) {
  return nestedIntKey(std::move(name), group, [member](TrainConfig& c) -> auto& { return c.*member; }, lo, hi);
}

ConfigKey choiceKey(std::string name, KeyGroup group, int TrainConfig::*member,
                    std::vector<int> choices) {
  std::string allowed;
  for (size_t i = 0; i < choices.size(); ++i)
    allowed += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + std::to_string(choices[i]);
  return {name, group,
          [=](TrainConfig& c, const json& v) -> std::string {
            long long n = 0;
            if (!readInteger(v, n) || std::find(choices.begin(), choices.end(), n) == choices.end())
              return shown(v) + " is not allowed; allowed: " + allowed;
            c.*member = static_cast<int>(n);
            return {};
          },
          [=](const TrainConfig& c) { return json(c.*member); }};
}

// A real number in [lo, hi) or (lo, hi) (open_lo), described by `allowed`.
ConfigKey numberKey(std::string name, KeyGroup group, std::function<double&(TrainConfig&)> field,
                    double lo, double hi, bool open_lo, std::string allowed) {
  return {name, group,
          [=](TrainConfig& c, const json& v) -> std::string {
            if (!v.is_number()) return shown(v) + " is not a number; allowed: " + allowed;
            const double d = v.get<double>();
            if (!std::isfinite(d) || d < lo || (open_lo && d == lo) || d >= hi)
              return shown(v) + " is not allowed; allowed: " + allowed;
            field(c) = d;
            return {};
          },
          [=](const TrainConfig& c) {
            TrainConfig copy = c;  // `field` hands out a mutable reference; read it from a copy
            return json(field(copy));
          }};
}

ConfigKey stringKey(std::string name, KeyGroup group, std::string TrainConfig::*member,
                    std::function<bool(const std::string&)> valid, std::string allowed) {
  return {name, group,
          [=](TrainConfig& c, const json& v) -> std::string {
            if (!v.is_string() || !valid(v.get<std::string>()))
              return shown(v) + " is not allowed; allowed: " + allowed;
            c.*member = v.get<std::string>();
            return {};
          },
          [=](const TrainConfig& c) { return json(c.*member); }};
}

ConfigKey boolKey(std::string name, KeyGroup group, std::function<bool&(TrainConfig&)> field) {
  return {name, group,
          [=](TrainConfig& c, const json& v) -> std::string {
            if (!v.is_boolean()) return shown(v) + " is not allowed; allowed: true or false";
            field(c) = v.get<bool>();
            return {};
          },
          [=](const TrainConfig& c) {
            TrainConfig copy = c;
            return json(field(copy));
          }};
}

// A list of names (cities); a single string is taken as a comma-separated list.
ConfigKey namesKey(std::string name, std::function<std::vector<std::string>&(TrainConfig&)> field) {
  return {name, KeyGroup::Data,
          [=](TrainConfig& c, const json& v) -> std::string {
            std::vector<std::string> names;
            auto add = [&](const std::string& text) {
              std::size_t start = 0;
              while (start <= text.size()) {
                const std::size_t comma = std::min(text.find(',', start), text.size());
                const std::string item = text.substr(start, comma - start);
                if (!item.empty()) names.push_back(item);
                start = comma + 1;
              }
            };
            if (v.is_string()) {
              add(v.get<std::string>());
            } else if (v.is_array()) {
              for (const auto& item : v) {
                if (!item.is_string() || item.get<std::string>().empty())
                  return shown(v) + " is not allowed; allowed: a list of names";
                names.push_back(item.get<std::string>());
              }
            } else {
              return shown(v) + " is not allowed; allowed: a list of names";
            }
            field(c) = names;
            return {};
          },
          [=](const TrainConfig& c) {
            TrainConfig copy = c;
            return json(field(copy));
          }};
}

ConfigKey dataChoiceKey(std::string name, std::function<std::string&(TrainConfig&)> field,
                        std::vector<std::string> choices) {
  std::string allowed;
  for (size_t i = 0; i < choices.size(); ++i)
    allowed += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + choices[i];
  return {name, KeyGroup::Data,
          [=](TrainConfig& c, const json& v) -> std::string {
            if (!v.is_string() || std::find(choices.begin(), choices.end(), v.get<std::string>()) == choices.end())
              return shown(v) + " is not allowed; allowed: " + allowed;
            field(c) = v.get<std::string>();
            return {};
          },
          [=](const TrainConfig& c) {
            TrainConfig copy = c;
            return json(field(copy));
          }};
}

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
  return {
      namesKey("data.cities", [](TrainConfig& c) -> std::vector<std::string>& { return c.data.filter.cities; }),
      namesKey("data.exclude_cities",
               [](TrainConfig& c) -> std::vector<std::string>& { return c.data.filter.exclude_cities; }),
      dataChoiceKey("data.msls_split", [](TrainConfig& c) -> std::string& { return c.data.filter.msls_split; },
                    {"all", "train_val", "test"}),
      dataChoiceKey("data.subset", [](TrainConfig& c) -> std::string& { return c.data.filter.subset; },
                    {"all", "database", "query"}),
      boolKey("data.drop_panoramas", KeyGroup::Data, [](TrainConfig& c) -> bool& { return c.data.filter.drop_panoramas; }),
      dataChoiceKey("data.time_of_day", [](TrainConfig& c) -> std::string& { return c.data.filter.time_of_day; },
                    {"all", "day", "night"}),
      nestedIntKey("data.max_per_sequence", G::Data,
                   [](TrainConfig& c) -> int& { return c.data.filter.max_per_sequence; }, 0, 1000000),
      namesKey("data.holdout_cities",
               [](TrainConfig& c) -> std::vector<std::string>& { return c.data.filter.holdout_cities; }),
      numberKey("data.holdout_fraction", G::Data,
                [](TrainConfig& c) -> double& { return c.data.filter.holdout_fraction; }, 0.0, 1.0,
                false, "a number in [0, 1)"),
      nestedIntKey("data.holdout_seed", G::Data,
                   [](TrainConfig& c) -> std::int64_t& { return c.data.filter.holdout_seed; }, 0,
                   std::numeric_limits<std::int64_t>::max()),
      nestedIntKey("data.workers", G::Data, [](TrainConfig& c) -> int& { return c.data.workers; }, 0, 1024),
      nestedIntKey("data.prefetch", G::Data, [](TrainConfig& c) -> int& { return c.data.prefetch; }, 0, 1024),
      {"data.cache", G::Data,
       [](TrainConfig& c, const json& v) -> std::string {
         if (!v.is_string() || v.get<std::string>().find('\0') != std::string::npos)
           return shown(v) + " is not allowed; allowed: a cache file path, or \"\" for none";
         c.data.cache = v.get<std::string>();
         return {};
       },
       [](const TrainConfig& c) { return json(c.data.cache); }},
      boolKey("data.reduced_decode", KeyGroup::Data, [](TrainConfig& c) -> bool& { return c.data.reduced_decode; }),
  };
}

// The Parzen evaluation keys (parzen.*) of evaluation during training.
std::vector<ConfigKey> parzenKeys() {
  using G = KeyGroup;
  return {
      nestedIntKey("parzen.every_epochs", G::Parzen, [](TrainConfig& c) -> int& { return c.parzen.every_epochs; }, 0, 1000000),
      nestedIntKey("parzen.n_samples", G::Parzen, [](TrainConfig& c) -> int& { return c.parzen.n_samples; }, 1, 10000000),
      nestedIntKey("parzen.n_valid", G::Parzen, [](TrainConfig& c) -> int& { return c.parzen.n_valid; }, 1, 10000000),
      nestedIntKey("parzen.n_test", G::Parzen, [](TrainConfig& c) -> int& { return c.parzen.n_test; }, 1, 10000000),
      {"parzen.sigmas", G::Parzen,
       [](TrainConfig& c, const json& v) -> std::string {
         const std::string allowed = "a list of positive numbers ([] = logspace(-1, 0, 10))";
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
       [](const TrainConfig& c) { return json(c.parzen.sigmas); }},
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
const std::vector<ConfigKey>& keys() {
  static const std::vector<ConfigKey> table = [] {
    std::vector<ConfigKey> all;
    for (auto group : {trainingKeys, checkpointKeys, runKeys, augmentKeys, dataKeys, parzenKeys, metricsKeys}) {
      const std::vector<ConfigKey> group_keys = group();
      all.insert(all.end(), group_keys.begin(), group_keys.end());
    }
    return all;
  }();
  return table;
}

const ConfigKey* findKey(const std::string& name) {
  for (const auto& key : keys())
    if (key.name == name) return &key;
  return nullptr;
}

bool inScope(KeyGroup group, ConfigScope scope) {
  switch (scope) {
    case ConfigScope::All: return true;
    case ConfigScope::Training: return group == KeyGroup::Training || group == KeyGroup::Augment;
    case ConfigScope::Checkpoint: return group == KeyGroup::Checkpoint;
  }
  return false;
}

std::string scopeKeyList(ConfigScope scope) {
  std::string list;
  for (const auto& key : keys())
    if (inScope(key.group, scope) && key.group != KeyGroup::Augment && key.group != KeyGroup::Data &&
        key.group != KeyGroup::Parzen && key.group != KeyGroup::Metrics)
      list += (list.empty() ? "" : ", ") + key.name;
  if (scope != ConfigScope::Checkpoint) list += ", augment";
  if (scope == ConfigScope::All) list += ", data, parzen, metrics";
  return list;
}

// Flattens {"augment": {"shift": 1}} into ("augment.shift", 1) (and "data" likewise) and the original tool's grouped
// form {"training": {...}, "checkpoint": {...}} into its keys.
Status flatten(const json& object, const std::string& prefix, ConfigScope scope,
               const std::string& source, std::vector<std::pair<std::string, json>>& out) {
  for (auto it = object.begin(); it != object.end(); ++it) {
    const std::string name = prefix + it.key();
    if (prefix.empty() &&
        (name == "augment" || name == "data" || name == "parzen" || name == "metrics" || name == "training" ||
         name == "checkpoint")) {
      if (!it.value().is_object())
        return makeError(source + ": config key \"" + name + "\" must be a JSON object");
      const bool grouped = name == "training" || name == "checkpoint";
      if (grouped && scope != ConfigScope::All)
        return makeError(source + ": config key \"" + name + "\" is not allowed here; allowed: " +
                         scopeKeyList(scope));
      const ConfigScope inner = name == "training"     ? ConfigScope::Training
                                : name == "checkpoint" ? ConfigScope::Checkpoint
                                                       : scope;
      const Status status =
          flatten(it.value(), grouped ? "" : name + ".", inner, source, out);
      if (!status) return status;
      continue;
    }
    const ConfigKey* key = findKey(name);
    if (!key)
      return makeError(source + ": unknown config key \"" + name + "\"; allowed: " +
                       scopeKeyList(scope));
    if (!inScope(key->group, scope))
      return makeError(source + ": config key \"" + name + "\" is not allowed here; allowed: " +
                       scopeKeyList(scope));
    out.emplace_back(name, it.value());
  }
  return {};
}

}  // namespace

Result<TrainConfig> applyConfigJson(const TrainConfig& base, const json& object, ConfigScope scope,
                                    const std::string& source) {
  if (!object.is_object())
    return makeError(source + ": the config must be a JSON object ({...}), not " + shown(object));
  std::vector<std::pair<std::string, json>> entries;
  if (Status status = flatten(object, "", scope, source, entries); !status) return makeError(status.error());
  TrainConfig config = base;
  for (const auto& [name, value] : entries) {
    const std::string problem = findKey(name)->set(config, value);
    if (!problem.empty()) return makeError(source + ": config key \"" + name + "\": " + problem);
  }
  if (Status status = validateConfig(config); !status)
    return makeError(source + ": " + status.error());
  return config;
}

// A config is two levels deep; nlohmann's parser copes with any depth, but printing a value in an
// error message recurses, and 65,000 levels (a 130 KB -t argument) overflowed the stack: see
// jsonNestingDepth.
Result<TrainConfig> applyConfigText(const TrainConfig& base, const std::string& text,
                                    ConfigScope scope, const std::string& source) {
  constexpr int kMaxDepth = 32;
  if (jsonNestingDepth(text) > static_cast<std::size_t>(kMaxDepth))
    return makeError(source + ": not a config (its JSON nests more than " + std::to_string(kMaxDepth) + " levels deep)");
  json parsed;
  // A key given twice in one object: JSON readers keep the last without a word, so a config with
  // two "nz" would train with one the researcher may not have meant.
  std::vector<std::set<std::string>> keys_seen;
  std::string repeated;
  const json::parser_callback_t watch_keys = [&](int, json::parse_event_t event, json& value) {
    if (event == json::parse_event_t::object_start) keys_seen.emplace_back();
    if (event == json::parse_event_t::object_end && !keys_seen.empty()) keys_seen.pop_back();
    if (event == json::parse_event_t::key && !keys_seen.empty() && value.is_string() &&
        !keys_seen.back().insert(value.get<std::string>()).second && repeated.empty())
      repeated = value.get<std::string>();
    return true;
  };
  try {
    parsed = json::parse(text, watch_keys);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for a number past a double's range
    return makeError(source + ": not valid JSON (" + std::string(e.what()) + ")");
  }
  if (!repeated.empty()) return makeError(source + ": the key \"" + repeated + "\" is given twice in one object");
  return applyConfigJson(base, parsed, scope, source);
}

Result<TrainConfig> applyConfigFile(const TrainConfig& base, const std::string& path) {
  // A regular file of sane size only: /dev/zero would be read until memory runs out, a FIFO
  // would wait for a writer forever.
  auto file = RegularFile::open(path);
  if (!file) return makeError(path + ": cannot open the config file (" + RegularFile::reasonOf(path, file.error()) + ")");
  if (file->size() > kMaxConfigBytes)
    return makeError(path + ": the config file is larger than " + std::to_string(kMaxConfigBytes >> 20) + " MiB");
  auto text = file->readRest(kMaxConfigBytes);  // fails only for a file that grows past the bound
  if (!text) return makeError(text.error());
  // The JSON reader stops at a NUL byte and would take what follows it for no part of the file.
  if (const std::size_t nul = text->find('\0'); nul != std::string::npos)
    return makeError(path + ": the config file holds a NUL byte at offset " + std::to_string(nul) + "; it must be JSON text");
  return applyConfigText(base, *text, ConfigScope::All, path);
}

Status validateConfig(const TrainConfig& config) {
  if (config.augment.crop_scale * config.img_size < 1.0)
    return makeError("config key \"augment.crop_scale\": " + std::to_string(config.augment.crop_scale) +
                     " gives a crop smaller than one pixel at img_size " +
                     std::to_string(config.img_size));
  return {};
}

json configToJson(const TrainConfig& config) {
  json out = json::object();
  for (const auto& key : keys()) {
    if (key.group == KeyGroup::Augment || key.group == KeyGroup::Data || key.group == KeyGroup::Parzen ||
        key.group == KeyGroup::Metrics) {
      const std::size_t dot = key.name.find('.');
      out[key.name.substr(0, dot)][key.name.substr(dot + 1)] = key.get(config);
    } else {
      out[key.name] = key.get(config);
    }
  }
  return out;
}

Result<TrainConfig> presetConfig(const std::string& name) {
  TrainConfig config;
  config.preset = name;
  if (name == "naive-64") {
    config.nz = 100, config.ngf = 64, config.ndf = 64, config.img_size = 64;
  } else if (name == "safe-64") {
    config.nz = 256, config.ngf = 256, config.ndf = 64, config.img_size = 64;
  } else if (name == "safe-128") {
    config.nz = 256, config.ngf = 256, config.ndf = 128, config.img_size = 128;
  } else if (name == "demo") {
    // Small enough to learn street-like scenes from the demo data in minutes on 2 CPU cores.
    config.nz = 64, config.ngf = 32, config.ndf = 32, config.img_size = 64;
    config.batch_size = 32;
    config.epochs = 60;
    config.log_frequency = 50;
    config.save_frequency = 2;
    config.name = "demo";
    // Its charts fill within minutes (an epoch of the demo data takes 7 to 11 s here): Parzen
    // every 2 epochs on 4 of the demo data's 40 sequences held out, and the quality metrics every
    // 15 epochs on a worker (docs/evaluation.md; their cost is measured in bench/README.md).
    config.data.filter.holdout_fraction = 0.1;
    config.parzen.every_epochs = 2;
    config.parzen.n_samples = 500;
    config.parzen.n_valid = 50;
    config.parzen.n_test = 50;
    config.metrics.every_epochs = 15;
  } else {
    return makeError("unknown preset \"" + name + "\"; allowed: naive-64, safe-64, safe-128, demo");
  }
  return config;
}

std::vector<std::string> presetNames() { return {"naive-64", "safe-64", "safe-128", "demo"}; }

std::vector<std::string> configKeyNames() {
  std::vector<std::string> names;
  for (const auto& key : keys()) names.push_back(key.name);
  return names;
}

std::string configKeyGroup(const std::string& name) {
  const ConfigKey* key = findKey(name);
  if (key == nullptr) return {};
  switch (key->group) {
    case KeyGroup::Training: return "Training";
    case KeyGroup::Checkpoint: return "Checkpoint";
    case KeyGroup::Run: return "Run";
    case KeyGroup::Augment: return "Augment";
    case KeyGroup::Data: return "Data";
    case KeyGroup::Parzen: return "Parzen";
    case KeyGroup::Metrics: return "Quality metrics";
  }
  return {};
}

}  // namespace streetgan
