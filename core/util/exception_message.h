#pragma once
// exceptionMessage(): the one plain line a library or program boundary reports for an exception it
// caught. LibTorch's c10::Error loses its backtrace, OpenCV's cv::Exception its source location,
// and every allocation failure (std::bad_alloc, LibTorch's CPU allocator, CUDA's caching
// allocator, OpenCV's) is said as "out of memory", with the size when the library gave it.
// Messages that span lines are cut to their first line.
#include <exception>
#include <string>

namespace streetgan {

/// One line describing `error` (std::current_exception() inside a catch block).
std::string exceptionMessage(const std::exception_ptr& error);

/// The first non-blank line of `text`, without leading and trailing white space.
std::string firstLine(const std::string& text);

}  // namespace streetgan
