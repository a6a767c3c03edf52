#include "app/serve/request_head_scanner.h"

#include <charconv>
#include <cstring>
#include <system_error>

namespace streetgan::cli {
namespace {

bool sameName(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

std::string_view trimmed(std::string_view text) {
  const char* space = " \t\r\n";
  const std::size_t first = text.find_first_not_of(space);
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(space) - first + 1);
}

}  // namespace

void RequestHeadScanner::reset() { *this = RequestHeadScanner(limits_); }

RequestHeadScanner::Verdict RequestHeadScanner::refuse(int status, std::string reason) {
  verdict_ = Verdict{State::Refused, 0, 0, status, std::move(reason)};
  return verdict_;
}

bool RequestHeadScanner::headerLine(std::string_view line) {
  // `lines_` lines ended before this one, the request line among them: this is header lines_.
  if (lines_ > limits_.max_headers) {
    refuse(431, "the request has more than " + std::to_string(limits_.max_headers) + " header lines");
    return false;
  }
  if (line.size() > limits_.max_header_line) {
    refuse(431, "a header line of the request is longer than " + std::to_string(limits_.max_header_line) + " bytes");
    return false;
  }
  const std::size_t colon = line.find(':');
  if (colon == std::string_view::npos) return true;  // not a header: cpp-httplib skips or refuses it
  const std::string_view name = line.substr(0, colon);
  const std::string_view value = trimmed(line.substr(colon + 1));
  if (sameName(name, "transfer-encoding")) {
    refuse(501, "request bodies in chunks (Transfer-Encoding) are not accepted");
    return false;
  }
  if (sameName(name, "range")) {
    // cpp-httplib answers every range of "bytes=0-,0-,…" with the whole body again: a few KB of
    // header would ask for thousands of copies of a video. One range is all a player asks for.
    if (has_range_ || value.find(',') != std::string_view::npos) {
      refuse(416, "a request may ask for one byte range at most");
      return false;
    }
    has_range_ = true;
    return true;
  }
  if (!sameName(name, "content-length")) return true;
  std::uint64_t length = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), length);
  if (error == std::errc::result_out_of_range) {
    refuse(413, "a request body may have at most " + std::to_string(limits_.max_body) + " bytes");
    return false;
  }
  if (value.empty() || error != std::errc() || end != value.data() + value.size()) {
    refuse(400, "the request's Content-Length is not a number");
    return false;
  }
  if (has_length_ && length != content_length_) {
    refuse(400, "the request has two different Content-Length headers");
    return false;
  }
  if (length > limits_.max_body) {
    refuse(413, "a request body may have at most " + std::to_string(limits_.max_body) + " bytes");
    return false;
  }
  has_length_ = true;
  content_length_ = length;
  return true;
}

RequestHeadScanner::Verdict RequestHeadScanner::scan(std::string_view received) {
  if (verdict_.state != State::Incomplete) return verdict_;
  while (!head_done_ && scanned_ < received.size()) {
    const char* from = received.data() + scanned_;
    const void* newline = std::memchr(from, '\n', received.size() - scanned_);
    if (newline == nullptr) {
      scanned_ = received.size();
      break;
    }
    const std::size_t end = static_cast<std::size_t>(static_cast<const char*>(newline) - received.data()) + 1;
    scanned_ = end;
    const std::string_view line = received.substr(line_start_, end - line_start_);
    line_start_ = end;
    // cpp-httplib skips a header line that ends in a bare LF, so a head of such lines never ends:
    // refused at once, rather than waiting for the time limit.
    if (line.size() < 2 || line[line.size() - 2] != '\r')
      return refuse(400, "the request's lines must end with CR LF");
    if (lines_ == 0 && line == "\r\n") {
      request_start_ = end;  // an empty line before the request line: skipped
      if (end > limits_.max_head)
        return refuse(400, "the request begins with more than " + std::to_string(limits_.max_head) + " bytes of empty lines");
      continue;
    }
    if (lines_ == 0) {
      if (line.size() > limits_.max_request_line)
        return refuse(414, "the request line is longer than " + std::to_string(limits_.max_request_line) + " bytes");
    } else if (line == "\r\n") {
      head_done_ = true;
      head_size_ = end;
    } else if (!headerLine(line)) {
      return verdict_;
    }
    ++lines_;
    if (end > limits_.max_head)
      return refuse(431, "the request's head is longer than " + std::to_string(limits_.max_head) + " bytes");
  }
  if (!head_done_) {
    // The line still arriving must not outgrow its limit either.
    const std::size_t partial = received.size() - line_start_;
    if (lines_ == 0 && partial > limits_.max_request_line)
      return refuse(414, "the request line is longer than " + std::to_string(limits_.max_request_line) + " bytes");
    if (lines_ > 0 && partial > limits_.max_header_line)
      return refuse(431, "a header line of the request is longer than " + std::to_string(limits_.max_header_line) + " bytes");
    if (received.size() > limits_.max_head)
      return refuse(431, "the request's head is longer than " + std::to_string(limits_.max_head) + " bytes");
    return Verdict{};
  }
  const std::uint64_t total = static_cast<std::uint64_t>(head_size_) + content_length_;
  if (received.size() < total) return Verdict{};
  verdict_ = Verdict{State::Complete, request_start_, static_cast<std::size_t>(total), 0, {}};
  return verdict_;
}

}  // namespace streetgan::cli
