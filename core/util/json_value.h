#pragma once
// Typed reads of one key of a JSON object that another program or person wrote: the value when it
// is there with the right type and in range, std::nullopt (or "") otherwise. Nothing throws, and no
// number is cast out of its range (a float of 1e300 or an unsigned above INT64_MAX is no int64).
// The one helper every reader of our JSON files (events, config, evaluations) uses.
#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace streetgan {

/// `value` as an int64 (a float is truncated toward zero when it fits).
std::optional<std::int64_t> jsonIntegerValue(const nlohmann::json& value);
/// `value` as a number.
std::optional<double> jsonNumberValue(const nlohmann::json& value);

/// `body[key]` as an int64 (a float is truncated toward zero when it fits).
std::optional<std::int64_t> jsonInteger(const nlohmann::json& body, const char* key);
/// `body[key]` as a number.
std::optional<double> jsonNumber(const nlohmann::json& body, const char* key);
/// `body[key]` as a string; "" when absent or not a string.
std::string jsonString(const nlohmann::json& body, const char* key);

/// How deeply arrays and objects nest in `text` (strings skipped; a stray closing bracket does
/// not go below 0), counted before parsing: a reader refuses "[[[[…" before nlohmann builds one
/// value per bracket, or before printing such a value in an error message overflows the stack.
std::size_t jsonNestingDepth(std::string_view text);

/// An upper bound, found by one scan of `text` (strings skipped), of how many values parsing it
/// would make: its arrays and objects plus the commas between their items, each value at most
/// twice (a member's key and value). A reader refuses a text past its bound before nlohmann
/// builds a tree of some 20 times the text's size.
std::size_t jsonValueBound(std::string_view text);

}  // namespace streetgan
