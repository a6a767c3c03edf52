#pragma once
// RequestHeadScanner: decides, from the bytes a connection has sent so far, whether they hold a
// whole HTTP/1.1 request (its head and the body its Content-Length declares), are still short of
// one, or must be refused at once, before any thread of the server spends time on it. It bounds
// what cpp-httplib 0.11 does not: the number of header lines and the size of the whole head (a
// client sending millions of header lines grew the server by hundreds of megabytes), besides the
// request line (414) and the body (413); a body in chunks (Transfer-Encoding) is refused, since no
// route reads one, and so is a Range of more than one byte range (416), which cpp-httplib would
// answer with a copy of the body for each. Only a line that is exactly CRLF ends the head, as for cpp-httplib.
//
// Incremental: each call gets the connection's bytes from the start of the request (the previous
// call's bytes and maybe more) and goes on from where it stopped, so a head trickled in one byte at
// a time costs its length, not its square. Pure (no I/O), so a fuzzer can drive it. Empty lines
// before the request line are skipped, as RFC 9112 (2.2) asks of a server (cpp-httplib answered
// the first with 400 and then the request after it).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace streetgan::cli {

class RequestHeadScanner {
public:
  struct Limits {
    std::size_t max_request_line = 8192;  ///< bytes, its CRLF included (cpp-httplib's 414 limit)
    std::size_t max_header_line = 8192;   ///< bytes of one header line
    std::size_t max_head = 32768;         ///< the request line, the headers and the blank line
    int max_headers = 100;                ///< header lines
    std::size_t max_body = 16384;         ///< a declared Content-Length
  };

  enum class State { Incomplete, Complete, Refused };
  struct Verdict {
    State state = State::Incomplete;
    std::size_t request_start = 0; ///< Complete: empty lines before the request line, to drop
    std::size_t request_size = 0;  ///< Complete: bytes of those lines, the head and the body
    int status = 0;                ///< Refused: the HTTP status to answer
    std::string reason;            ///< Refused: one plain line for the answer's body
  };

  RequestHeadScanner() = default;
  explicit RequestHeadScanner(Limits limits) : limits_(limits) {}

  /// Looks at `received`: the bytes since the request began (those of the last call, and maybe
  /// more). Once Complete or Refused, the same verdict comes back.
  Verdict scan(std::string_view received);
  /// Forgets the request, for the next one on the connection.
  void reset();
  /// True once some byte of a request was seen.
  bool started() const { return scanned_ > 0; }

private:
  Verdict refuse(int status, std::string reason);
  bool headerLine(std::string_view line);  // false: refused (verdict_ set)

  Limits limits_;
  Verdict verdict_;
  std::size_t scanned_ = 0;     // bytes looked at
  std::size_t line_start_ = 0;  // where the line being read begins
  int lines_ = 0;               // lines ended, the request line included
  bool head_done_ = false;
  std::size_t request_start_ = 0;  // bytes of the empty lines before the request line
  std::size_t head_size_ = 0;
  bool has_length_ = false;
  bool has_range_ = false;
  std::uint64_t content_length_ = 0;
};

}  // namespace streetgan::cli
