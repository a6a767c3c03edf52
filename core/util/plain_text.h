#pragma once
// plainText: text that came from somebody else (another rank's failure report, a peer's message)
// made safe to print on a terminal and to put in an event: valid UTF-8 is kept, except control
// characters (C0, DEL and C1, so no escape sequence survives), and every byte that is not part of
// a valid character becomes '?'. At most `max_bytes` bytes are kept, cut at a character boundary
// and marked with "...".
#include <cstddef>
#include <string>
#include <string_view>

namespace streetgan {

std::string plainText(std::string_view bytes, std::size_t max_bytes);

}  // namespace streetgan
