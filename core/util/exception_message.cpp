#include "core/util/exception_message.h"

#include <c10/util/Exception.h>
#include <opencv2/core.hpp>

#include <cstdint>
#include <cstdio>
#include <new>
#include <regex>

namespace streetgan {

namespace {

std::string bytesText(double bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (bytes >= 1024 && unit < 4) bytes /= 1024, ++unit;
  char text[64];
  if (unit == 0) std::snprintf(text, sizeof text, "%.0f bytes", bytes);
  else std::snprintf(text, sizeof text, "%.1f %s", bytes, units[unit]);
  return text;
}

// CUDA's caching allocator: "CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 7.79 GiB
// total capacity; ...)" (LibTorch 1.x) or "... Tried to allocate 20.00 MiB. GPU 0 has a total
// capacity of ..." (2.x); thrown as c10::OutOfMemoryError.
std::string cudaOutOfMemory(const std::string& text) {
  std::smatch size, gpu;
  const bool sized = std::regex_search(text, size, std::regex(R"(Tried to allocate ([0-9.]+ [KMGT]?i?B))"));
  const bool numbered = std::regex_search(text, gpu, std::regex(R"(GPU ([0-9]+))"));
  if (!sized) return "out of memory on the GPU (" + text + ")";
  return "out of memory on the GPU: CUDA could not allocate " + size[1].str() +
         (numbered ? " on GPU " + gpu[1].str() : std::string());
}

std::string torchMessage(const c10::Error& error, bool out_of_memory) {
  const std::string text = firstLine(error.what_without_backtrace());
  if (out_of_memory || text.find("CUDA out of memory") != std::string::npos) return cudaOutOfMemory(text);
  // The CPU allocator: "[enforce fail at alloc_cpu.cpp:75] err == 0. DefaultCPUAllocator: can't
  // allocate memory: you tried to allocate 1073741824 bytes. Error code 12 (Cannot allocate memory)".
  if (text.find("can't allocate memory") != std::string::npos) {
    std::smatch bytes;
    if (std::regex_search(text, bytes, std::regex(R"(tried to allocate ([0-9]+) bytes)")))
      return "out of memory: could not allocate " + bytesText(std::stod(bytes[1].str())) + " on the CPU";
    return "out of memory on the CPU";
  }
  return "LibTorch: " + text;
}

std::string openCvMessage(const cv::Exception& error) {
  const std::string where = error.func.empty() ? std::string() : " in " + error.func;
  const std::string what = firstLine(error.err);
  if (error.code == cv::Error::StsNoMem) return "out of memory (OpenCV: " + what + where + ")";
  if (error.code == cv::Error::StsAssert) return "OpenCV: assertion failed: " + what + where;
  return "OpenCV: " + what + where;
}

}  // namespace

std::string firstLine(const std::string& text) {
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::size_t first = text.find_first_not_of(" \t\r", start);
    if (first != std::string::npos && first < end) {
      std::size_t last = end;
      while (last > first && (text[last - 1] == ' ' || text[last - 1] == '\t' || text[last - 1] == '\r')) --last;
      return text.substr(first, last - first);
    }
    start = end + 1;
  }
  return {};
}

std::string exceptionMessage(const std::exception_ptr& error) {
  if (!error) return "unknown error";
  try {
    std::rethrow_exception(error);
  } catch (const c10::OutOfMemoryError& e) {
    return torchMessage(e, true);
  } catch (const c10::Error& e) {
    return torchMessage(e, false);
  } catch (const cv::Exception& e) {
    return openCvMessage(e);
  } catch (const std::bad_alloc&) {
    return "out of memory";
  } catch (const std::exception& e) {
    const std::string text = firstLine(e.what());
    return text.empty() ? "unknown error" : text;
  } catch (...) {
    return "unknown error (not a standard exception)";
  }
}

}  // namespace streetgan
