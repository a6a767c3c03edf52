#include "app/serve/gallery_query.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <system_error>

namespace streetgan::cli {
namespace {

int hexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Percent-decoding as forms encode: '+' is a space, %XX a byte; a '%' not followed by two hex
// digits stays as it is.
std::string decoded(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '+') {
      out += ' ';
    } else if (c == '%' && i + 2 < text.size() && hexValue(text[i + 1]) >= 0 && hexValue(text[i + 2]) >= 0) {
      out += static_cast<char>(hexValue(text[i + 1]) * 16 + hexValue(text[i + 2]));
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

// The value as the message shows it: printable ASCII only, at most 40 characters.
std::string shown(const std::string& value) {
  std::string out;
  for (std::size_t i = 0; i < value.size() && i < 40; ++i) {
    const unsigned char c = static_cast<unsigned char>(value[i]);
    out += c >= 0x20 && c < 0x7f ? static_cast<char>(c) : '?';
  }
  if (value.size() > 40) out += "...";
  return out;
}

using Params = std::map<std::string, std::string>;

Params splitQuery(std::string_view query) {
  Params params;
  std::size_t start = 0;
  while (start <= query.size()) {
    std::size_t end = query.find('&', start);
    if (end == std::string_view::npos) end = query.size();
    const std::string_view pair = query.substr(start, end - start);
    if (!pair.empty()) {
      const std::size_t equals = pair.find('=');
      std::string name = decoded(pair.substr(0, equals));
      std::string value = equals == std::string_view::npos ? std::string() : decoded(pair.substr(equals + 1));
      if (!name.empty()) params.emplace(std::move(name), std::move(value));  // the first one counts
    }
    start = end + 1;
  }
  return params;
}

// A whole number in [lo, hi]; `fallback` when the query does not name it.
Result<std::uint64_t> number(const Params& params, const std::string& name, std::uint64_t fallback, std::uint64_t lo,
                             std::uint64_t hi) {
  const auto found = params.find(name);
  if (found == params.end()) return fallback;
  const std::string& text = found->second;
  const std::string range = name + " must be a whole number from " + std::to_string(lo) + " to " + std::to_string(hi);
  if (text.empty() || !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return makeError(range + " (got \"" + shown(text) + "\")");
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error == std::errc::result_out_of_range || (error == std::errc() && (value < lo || value > hi)))
    return makeError(range + " (got " + shown(text) + ")");
  if (error != std::errc() || end != text.data() + text.size()) return makeError(range + " (got \"" + shown(text) + "\")");
  return value;
}

}  // namespace

std::string_view queryOfTarget(std::string_view target) {
  const std::size_t fragment = target.find('#');
  if (fragment != std::string_view::npos) target = target.substr(0, fragment);
  const std::size_t mark = target.find('?');
  return mark == std::string_view::npos ? std::string_view() : target.substr(mark + 1);
}

Result<GalleryQuery> parseGalleryQuery(GalleryJob::Kind kind, std::string_view query, const GalleryQueryLimits& limits) {
  const Params params = splitQuery(query);
  GalleryQuery parsed;
  parsed.kind = kind;
  const bool grid = kind == GalleryJob::Kind::Grid;
  const std::uint64_t max_size = static_cast<std::uint64_t>(std::max(8, limits.max_size));

  auto count = grid ? number(params, "n", 16, 1, static_cast<std::uint64_t>(std::max(1, limits.max_n)))
                    : number(params, "frames", 16, 2, static_cast<std::uint64_t>(std::max(2, limits.max_frames)));
  if (!count) return makeError(count.error());
  if (params.count("seed")) {
    auto seed = number(params, "seed", 0, 0, kMaxQuerySeed);
    if (!seed) return makeError(seed.error());
    parsed.seed = *seed;
  }
  const std::uint64_t default_size =
      grid ? static_cast<std::uint64_t>(std::clamp(limits.grid_size, 8, static_cast<int>(max_size)))
           : std::min<std::uint64_t>(256, max_size);
  auto size = number(params, "size", default_size, 8, max_size);
  if (!size) return makeError(size.error());

  parsed.count = static_cast<int>(*count);
  parsed.size = static_cast<int>(*size);
  if (!grid) parsed.size &= ~1;  // H.264 and VP9 want even sides
  // count ≤ 100,000 and size ≤ 8192 (the command's own limits) keep the product far from overflow.
  const std::uint64_t pixels = *count * static_cast<std::uint64_t>(parsed.size) * static_cast<std::uint64_t>(parsed.size);
  const std::uint64_t max_pixels = static_cast<std::uint64_t>(std::max<std::int64_t>(1, limits.max_pixels));
  if (pixels > max_pixels)
    return makeError(std::string(grid ? "n" : "frames") + " x size x size must be at most " + std::to_string(max_pixels) +
                     " pixels (got " + std::to_string(*count) + " x " + std::to_string(parsed.size) + " x " +
                     std::to_string(parsed.size) + " = " + std::to_string(pixels) + "); ask for fewer or smaller images");
  if (!grid) {
    const auto format = params.find("format");
    parsed.format = format == params.end() ? "gif" : format->second;
    if (parsed.format != "gif" && parsed.format != "mp4" && parsed.format != "webm")
      return makeError("format must be gif, mp4 or webm");
  }
  return parsed;
}

}  // namespace streetgan::cli
