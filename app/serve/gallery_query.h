#pragma once
// parseGalleryQuery(): the query string of a `streetgan serve` render route (`/gan_imgs`,
// `/gan_gifs`) read into the job it asks for, every number checked against its range. A pure
// function of its text and limits (no server, no randomness: a missing seed stays missing), so a
// fuzzer can call it on any bytes. Every refusal is one plain line naming the parameter and its
// range, which the server answers with 400.
//
// The query is the raw text after '?': pairs split at '&', each at its first '='; names and values
// percent-decoded ('+' is a space); the first of repeated names counts; unknown names are ignored,
// as the original tool's Flask app ignores them. Numbers are decimal digits only (no sign, no
// spaces), read with std::from_chars, so no length or value of the text can overflow.
#include "app/serve/gallery_renderer.h"
#include "core/util/result.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace streetgan::cli {

struct GalleryQueryLimits {
  int max_n = 256;        ///< images in one grid
  int max_frames = 600;   ///< frames in one walk
  int max_size = 1024;    ///< side of one image, pixels
  int grid_size = 64;     ///< a grid's image side when the query names none: the net's
  /// Pixels one request may ask for: images (n or frames) × size × size. It bounds a render's
  /// memory (a grid is made whole, four bytes a channel) and time, which the three limits above
  /// do not: 256 images of 1024 pixels would be 268 million pixels, 3 GB of floats.
  std::int64_t max_pixels = 40000000;
};

struct GalleryQuery {
  GalleryJob::Kind kind = GalleryJob::Kind::Grid;
  int count = 16;                      ///< n (grid) or frames (walk)
  std::optional<std::uint64_t> seed;   ///< none: the caller draws one
  int size = 64;                       ///< walks: even (H.264 and VP9 want even sides)
  std::string format = "gif";          ///< walks: gif, mp4 or webm
};

/// The largest seed a query may name.
inline constexpr std::uint64_t kMaxQuerySeed = 999999999999999999ULL;

/// Reads `query` (the text after '?', without it) for a grid or a walk.
Result<GalleryQuery> parseGalleryQuery(GalleryJob::Kind kind, std::string_view query,
                                       const GalleryQueryLimits& limits);

/// The query part of a request target ("/gan_imgs?n=4" gives "n=4"; none gives "").
std::string_view queryOfTarget(std::string_view target);

}  // namespace streetgan::cli
