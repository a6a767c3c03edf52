#pragma once
// The builders of the config key table's rows (config_key_table.h), one per kind of value: each
// holds how that kind is read from JSON, checked against its bounds or choices, said in words when
// refused, and written back. Internal to core/config.
#include "core/config/config_key_table.h"

#include <cmath>
#include <functional>
#include <string>
#include <vector>

namespace streetgan::config_keys {

using json = nlohmann::json;

/// A value as the key errors show it.
std::string shown(const json& value);
/// An integer, or a float that is one (3.0), below 9·10^15; false otherwise.
bool readInteger(const json& value, long long& out);

// An integer key reached through `field` (for nested structs).
template <class Field>
ConfigKey nestedIntKey(std::string name, KeyGroup group, Field field, long long lo, long long hi) {
  const std::string allowed = "an integer from " + std::to_string(lo) + " to " + std::to_string(hi);
  return {std::move(name),
          group,
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
          },
          KeyKind::Integer,
          allowed};
}

template <class Member>
ConfigKey intKey(std::string name, KeyGroup group, Member member, long long lo, long long hi) {
  return nestedIntKey(std::move(name), group, [member](TrainConfig& c) -> auto& { return c.*member; }, lo, hi);
}

/// A key of one of `choices` (integers), read into `member`.
ConfigKey choiceKey(std::string name, KeyGroup group, int TrainConfig::*member, std::vector<int> choices);
/// A number in [lo, hi) ((lo, hi) with `open_lo`), read through `field`; `allowed` words it.
ConfigKey numberKey(std::string name, KeyGroup group, std::function<double&(TrainConfig&)> field, double lo, double hi,
                    bool open_lo, std::string allowed);
/// A string `valid` accepts, read through `field`.
ConfigKey nestedStringKey(std::string name, KeyGroup group, std::function<std::string&(TrainConfig&)> field,
                          std::function<bool(const std::string&)> valid, std::string allowed);
/// A string `valid` accepts, read into `member`.
ConfigKey stringKey(std::string name, KeyGroup group, std::string TrainConfig::*member,
                    std::function<bool(const std::string&)> valid, std::string allowed);
/// true or false.
ConfigKey boolKey(std::string name, KeyGroup group, std::function<bool&(TrainConfig&)> field);
/// A list of names (cities); a single string is taken as a comma-separated list.
ConfigKey namesKey(std::string name, std::function<std::vector<std::string>&(TrainConfig&)> field);
/// A data key of one of `choices` (strings).
ConfigKey dataChoiceKey(std::string name, std::function<std::string&(TrainConfig&)> field,
                        std::vector<std::string> choices);

}  // namespace streetgan::config_keys
