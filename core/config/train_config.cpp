#include "core/config/train_config.h"

#include "core/config/config_key_table.h"

#include "core/util/json_value.h"
#include "core/util/regular_file.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
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

// "augment" of "augment.shift": the JSON object a dotted key is written in; empty for a top-level key.
std::string nestedGroupOf(const std::string& key_name) {
  const std::size_t dot = key_name.find('.');
  return dot == std::string::npos ? std::string() : key_name.substr(0, dot);
}

bool isNestedGroup(const std::string& name) {
  for (const auto& key : configKeyTable())
    if (nestedGroupOf(key.name) == name) return true;
  return false;
}

bool inScope(const ConfigKey& key, ConfigScope scope) {
  switch (scope) {
    case ConfigScope::All: return true;
    case ConfigScope::Training:
      return key.group == KeyGroup::Training || key.group == KeyGroup::Recipe || key.group == KeyGroup::Augment;
    case ConfigScope::Checkpoint:
      return key.group == KeyGroup::Checkpoint;
    case ConfigScope::Resume:
    case ConfigScope::ResumeUnread:
      return resumableConfigKeys().count(key.name) > 0;
  }
  return false;
}

std::string scopeKeyList(ConfigScope scope) {
  std::string list;
  if (scope == ConfigScope::Resume || scope == ConfigScope::ResumeUnread) {
    for (const auto& key : configKeyTable())
      if (inScope(key, scope)) list += (list.empty() ? "" : ", ") + key.name;
    return list;
  }
  std::set<std::string> groups_listed;
  for (const auto& key : configKeyTable()) {
    if (!inScope(key, scope)) continue;
    const std::string group = nestedGroupOf(key.name);
    if (!group.empty() && !groups_listed.insert(group).second) continue;
    list += (list.empty() ? "" : ", ") + (group.empty() ? key.name : group);
  }
  return list;
}

// The keys of group `prefix` ("augment.") that `scope` takes.
std::string groupKeyList(const std::string& prefix, ConfigScope scope) {
  std::string list;
  for (const auto& key : configKeyTable())
    if (key.name.rfind(prefix, 0) == 0 && inScope(key, scope)) list += (list.empty() ? "" : ", ") + key.name;
  return list;
}

// Why a resume may not change `key`, and what to do instead.
std::string resumeRefusal(const ConfigKey& key, const std::string& source) {
  return source + ": config key \"" + key.name +
         "\" cannot change when a run resumes: its checkpoints hold what it trained with it (" +
         (key.group == KeyGroup::Training || key.group == KeyGroup::Recipe ? "the networks and their step"
                                                                           : "its settings") +
         "); to train with another " + key.name +
         ", start a new run (another --run-dir). A resume may change: " + scopeKeyList(ConfigScope::Resume);
}

// Flattens {"augment": {"shift": 1}} into ("augment.shift", 1) (and "data" likewise) and the original tool's grouped
// form {"training": {...}, "checkpoint": {...}} into its keys.
Status flatten(const json& object, const std::string& prefix, ConfigScope scope,
               const std::string& source, std::vector<std::pair<std::string, json>>& out) {
  for (auto it = object.begin(); it != object.end(); ++it) {
    const std::string name = prefix + it.key();
    if (prefix.empty() && (isNestedGroup(name) || name == "training" || name == "checkpoint")) {
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
    const ConfigKey* key = findConfigKey(name);
    if (!key)
      return makeError(source + ": unknown config key \"" + name +
                       "\"; allowed: " + (prefix.empty() ? scopeKeyList(scope) : groupKeyList(prefix, scope)));
    for (const auto& [given, unused] : out)
      if (given == name) return makeError(source + ": config key \"" + name + "\" is given twice");
    const bool resume = scope == ConfigScope::Resume || scope == ConfigScope::ResumeUnread;
    // A resume may repeat a training key it cannot change, at the value the run has (applyConfigJson checks).
    if (resume && !inScope(*key, scope) && !inScope(*key, ConfigScope::Training))
      return makeError(resumeRefusal(*key, source));
    if (!inScope(*key, scope) && !resume)
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
    return makeError(source + ": the config must be a JSON object ({...}), not " + shownConfigValue(object));
  std::vector<std::pair<std::string, json>> entries;
  if (Status status = flatten(object, "", scope, source, entries); !status) return makeError(status.error());
  TrainConfig config = base;
  for (const auto& [name, value] : entries) {
    const ConfigKey& key = *findConfigKey(name);
    const std::string problem = key.set(config, value);
    if (!problem.empty()) return makeError(source + ": config key \"" + name + "\": " + problem);
    if (scope == ConfigScope::Resume && !inScope(key, scope) && key.get(config) != key.get(base))
      return makeError(resumeRefusal(key, source));
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

Result<std::vector<std::string>> diffAugmentPolicies(const std::string& text) {
  std::vector<std::string> policies;
  if (text.empty()) return policies;
  std::stringstream parts(text);
  for (std::string name; std::getline(parts, name, ',');) {
    if (name != "color" && name != "translation" && name != "cutout")
      return makeError("\"" + name + "\" is not a DiffAugment policy; allowed: color, translation, cutout");
    if (std::find(policies.begin(), policies.end(), name) != policies.end())
      return makeError("\"" + name + "\" is given twice");
    policies.push_back(name);
  }
  if (text.back() == ',') return makeError("a policy list does not end with a comma");
  return policies;
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
  for (const auto& key : configKeyTable()) {
    if (const std::string group = nestedGroupOf(key.name); !group.empty()) {
      out[group][key.name.substr(group.size() + 1)] = key.get(config);
    } else {
      out[key.name] = key.get(config);
    }
  }
  return out;
}

namespace {

// The DCGAN paper's networks (nz 100, ngf 64, ndf 64) at `img_size`.
void setPaperNetworks(TrainConfig& config, int img_size) {
  config.nz = 100, config.ngf = 64, config.ndf = 64, config.img_size = img_size;
}

// The recipe bench/bench_recipes.py measured best at equal images on real photographs
// (bench/README.md "What each recipe gains"; docs/config.md says what each key gained there).
void setModernRecipe(TrainConfig& config) {
  // Batch 32, not 128: at equal images, four times the steps (the recipe's gain over naive-64 on
  // 30,000 images of photographs was measured at batch 32, naive-64's own at batch 128 and 32).
  config.batch_size = 32;
  config.loss = "rpgan";
  // AdamW's betas as R3GAN and StyleGAN2 set them with R1: at 30,000 images of the photographs,
  // SWD −40% and FID −60% against naive-64, where DCGAN's 0.5/0.999 gave −25% and −40%.
  config.beta1 = 0, config.beta2 = 0.99;
  config.r1_gamma = 1, config.r2_gamma = 1, config.reg_every = 4;
  config.d_norm = "none";
  config.augment.ada_target = 0.6, config.augment.ada_kimg = 100;
  config.ema.half_life_images = 10000, config.ema.rampup = 0.05;
}

void setDemo(TrainConfig& config) {
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
}

}  // namespace

Result<TrainConfig> presetConfig(const std::string& name) {
  TrainConfig config;
  config.preset = name;
  if (name == "naive-64") {
    setPaperNetworks(config, 64);
  } else if (name == "safe-64") {
    config.nz = 256, config.ngf = 256, config.ndf = 64, config.img_size = 64;
  } else if (name == "safe-128") {
    config.nz = 256, config.ngf = 256, config.ndf = 128, config.img_size = 128;
  } else if (name == "demo") {
    setDemo(config);
  } else if (name == "modern-64" || name == "modern-128") {
    setPaperNetworks(config, name == "modern-64" ? 64 : 128);
    setModernRecipe(config);
  } else {
    return makeError("unknown preset \"" + name + "\"; allowed: " + presetNameList());
  }
  return config;
}

bool configKeyMayChangeOnResume(const std::string& name) { return resumableConfigKeys().count(name) > 0; }
bool configKeyTunedOnResume(const std::string& name) { return resumeTunedConfigKeys().count(name) > 0; }

Result<json> configOptionValue(const std::string& name, const std::string& option, const std::string& text) {
  const ConfigKey* key = findConfigKey(name);
  if (key == nullptr) return makeError("option '" + option + "': no config key \"" + name + "\"");
  json value = text;
  char* end = nullptr;
  errno = 0;
  if (key->kind == KeyKind::Integer) {
    const long long n = std::strtoll(text.c_str(), &end, 10);
    if (!text.empty() && *end == '\0' && errno == 0) value = n;
  } else if (key->kind == KeyKind::Number) {
    const double x = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0') return makeError("option '" + option + "': \"" + text + "\" is not a number");
    return json(x);  // its bounds are checked with the rest of the config (applyConfigJson)
  } else {
    return value;  // checked with the rest of the config (applyConfigJson), as a config file's
  }
  TrainConfig scratch;
  const std::string problem = key->set(scratch, value);
  if (problem.empty()) return value;
  const std::size_t why = problem.find(" is not allowed");
  return makeError("option '" + option + "': '" + text + "'" +
                   (why == std::string::npos ? ": " + problem : problem.substr(why)));
}

std::vector<std::string> configKeyNames() {
  std::vector<std::string> names;
  for (const auto& key : configKeyTable()) names.push_back(key.name);
  return names;
}

std::string configKeyAllowed(const std::string& name) {
  const ConfigKey* key = findConfigKey(name);
  return key ? key->allowed : std::string();
}

std::string configKeyGroup(const std::string& name) {
  const ConfigKey* key = findConfigKey(name);
  if (key == nullptr) return {};
  switch (key->group) {
    case KeyGroup::Training: return "Training";
    case KeyGroup::Recipe:
      return "Recipe";
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
