#include "core/util/json_value.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

namespace streetgan {

std::optional<std::int64_t> jsonIntegerValue(const nlohmann::json& value) {
  if (value.is_number_unsigned()) {
    const auto unsigned_value = value.get<std::uint64_t>();
    if (unsigned_value <= static_cast<std::uint64_t>(INT64_MAX)) return static_cast<std::int64_t>(unsigned_value);
    return std::nullopt;
  }
  if (value.is_number_integer()) return value.get<std::int64_t>();
  if (value.is_number_float()) {
    const double number = value.get<double>();
    // -2^63 ≤ number < 2^63, both exact in a double.
    if (std::isfinite(number) && number >= -9223372036854775808.0 && number < 9223372036854775808.0)
      return static_cast<std::int64_t>(number);
  }
  return std::nullopt;
}

std::optional<double> jsonNumberValue(const nlohmann::json& value) {
  if (!value.is_number()) return std::nullopt;
  return value.get<double>();
}

std::optional<std::int64_t> jsonInteger(const nlohmann::json& body, const char* key) {
  if (!body.is_object()) return std::nullopt;
  const auto it = body.find(key);
  return it == body.end() ? std::nullopt : jsonIntegerValue(*it);
}

std::optional<double> jsonNumber(const nlohmann::json& body, const char* key) {
  if (!body.is_object()) return std::nullopt;
  const auto it = body.find(key);
  return it == body.end() ? std::nullopt : jsonNumberValue(*it);
}

std::string jsonString(const nlohmann::json& body, const char* key) {
  if (!body.is_object()) return {};
  const auto it = body.find(key);
  return it != body.end() && it->is_string() ? it->get<std::string>() : std::string();
}

namespace {

// Calls `visit` with each character of `text` outside its strings.
template <typename Visit>
void forEachStructuralCharacter(std::string_view text, Visit visit) {
  bool in_string = false, escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else {
      visit(c);
    }
  }
}

}  // namespace

std::size_t jsonNestingDepth(std::string_view text) {
  std::size_t depth = 0, deepest = 0;
  forEachStructuralCharacter(text, [&](char c) {
    if (c == '[' || c == '{') deepest = std::max(deepest, ++depth);
    else if ((c == ']' || c == '}') && depth > 0) --depth;
  });
  return deepest;
}

std::size_t jsonValueBound(std::string_view text) {
  std::size_t items = 1;
  forEachStructuralCharacter(text, [&](char c) {
    if (c == '[' || c == '{' || c == ',') ++items;
  });
  return 2 * items;
}

}  // namespace streetgan
