#include "core/config/config_key_builders.h"

#include <algorithm>

namespace streetgan::config_keys {

std::string shown(const json& value) { return shownConfigValue(value); }

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

ConfigKey choiceKey(std::string name, KeyGroup group, int TrainConfig::*member,
                    std::vector<int> choices) {
  std::string allowed;
  for (size_t i = 0; i < choices.size(); ++i)
    allowed += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + std::to_string(choices[i]);
  return {name,
          group,
          [=](TrainConfig& c, const json& v) -> std::string {
            long long n = 0;
            if (!readInteger(v, n) || std::find(choices.begin(), choices.end(), n) == choices.end())
              return shown(v) + " is not allowed; allowed: " + allowed;
            c.*member = static_cast<int>(n);
            return {};
          },
          [=](const TrainConfig& c) { return json(c.*member); },
          KeyKind::Integer,
          allowed};
}

// A real number in [lo, hi) or (lo, hi) (open_lo), described by `allowed`.
ConfigKey numberKey(std::string name, KeyGroup group, std::function<double&(TrainConfig&)> field,
                    double lo, double hi, bool open_lo, std::string allowed) {
  return {name,
          group,
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
          },
          KeyKind::Number,
          allowed};
}

ConfigKey nestedStringKey(std::string name, KeyGroup group, std::function<std::string&(TrainConfig&)> field,
                          std::function<bool(const std::string&)> valid, std::string allowed) {
  return {name,
          group,
          [=](TrainConfig& c, const json& v) -> std::string {
            if (!v.is_string() || !valid(v.get<std::string>()))
              return shown(v) + " is not allowed; allowed: " + allowed;
            field(c) = v.get<std::string>();
            return {};
          },
          [=](const TrainConfig& c) {
            TrainConfig copy = c;  // `field` hands out a mutable reference; read it from a copy
            return json(field(copy));
          },
          KeyKind::Other,
          allowed};
}

ConfigKey stringKey(std::string name, KeyGroup group, std::string TrainConfig::*member,
                    std::function<bool(const std::string&)> valid, std::string allowed) {
  return nestedStringKey(
      std::move(name), group, [member](TrainConfig& c) -> std::string& { return c.*member; }, std::move(valid),
      std::move(allowed));
}

ConfigKey boolKey(std::string name, KeyGroup group, std::function<bool&(TrainConfig&)> field) {
  return {name,
          group,
          [=](TrainConfig& c, const json& v) -> std::string {
            if (!v.is_boolean()) return shown(v) + " is not allowed; allowed: true or false";
            field(c) = v.get<bool>();
            return {};
          },
          [=](const TrainConfig& c) {
            TrainConfig copy = c;
            return json(field(copy));
          },
          KeyKind::Other,
          "true or false"};
}

// A list of names (cities); a single string is taken as a comma-separated list.
ConfigKey namesKey(std::string name, std::function<std::vector<std::string>&(TrainConfig&)> field) {
  return {name,
          KeyGroup::Data,
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
          },
          KeyKind::Other,
          "a list of names"};
}

ConfigKey dataChoiceKey(std::string name, std::function<std::string&(TrainConfig&)> field,
                        std::vector<std::string> choices) {
  std::string allowed;
  for (size_t i = 0; i < choices.size(); ++i)
    allowed += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + choices[i];
  return {name,
          KeyGroup::Data,
          [=](TrainConfig& c, const json& v) -> std::string {
            if (!v.is_string() || std::find(choices.begin(), choices.end(), v.get<std::string>()) == choices.end())
              return shown(v) + " is not allowed; allowed: " + allowed;
            field(c) = v.get<std::string>();
            return {};
          },
          [=](const TrainConfig& c) {
            TrainConfig copy = c;
            return json(field(copy));
          },
          KeyKind::Other,
          allowed};
}

}  // namespace streetgan::config_keys
