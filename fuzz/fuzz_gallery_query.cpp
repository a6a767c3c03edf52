// serve's request parsing: the head of an HTTP request as it arrives in pieces (the first byte
// picks their size), then the query of its target as a grid and as a walk.
#include "app/serve/gallery_query.h"
#include "app/serve/request_head_scanner.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t piece = 1 + data[0] % 32;
  const std::string_view input(reinterpret_cast<const char*>(data + 1), size - 1);
  streetgan::cli::RequestHeadScanner scanner;
  for (std::size_t end = piece;; end += piece) {
    const auto verdict = scanner.scan(input.substr(0, end < input.size() ? end : input.size()));
    if (verdict.state != streetgan::cli::RequestHeadScanner::State::Incomplete || end >= input.size()) break;
  }
  const std::string_view target = input.substr(0, input.find(' '));
  const std::string_view query = streetgan::cli::queryOfTarget(target);
  const streetgan::cli::GalleryQueryLimits limits;
  (void)streetgan::cli::parseGalleryQuery(streetgan::cli::GalleryJob::Kind::Grid, query, limits);
  (void)streetgan::cli::parseGalleryQuery(streetgan::cli::GalleryJob::Kind::Walk, query, limits);
  return 0;
}
