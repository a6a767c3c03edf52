#pragma once
// FuzzScratchFolder: a private folder (mkdtemp) for the harnesses that must hand their input to a
// reader as a file. A function-local static: made at the first input, removed with what it holds
// when libFuzzer ends the process with exit() (after -runs or -max_total_time), so runs leave
// nothing in /tmp. A crash leaves it, beside the crash file, on purpose.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <unistd.h>

class FuzzScratchFolder {
public:
  explicit FuzzScratchFolder(const char* name) {
    const char* tmpdir = std::getenv("TMPDIR");
    std::string pattern = std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/streetgan-" + name + "-XXXXXX";
    if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~FuzzScratchFolder() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  FuzzScratchFolder(const FuzzScratchFolder&) = delete;
  FuzzScratchFolder& operator=(const FuzzScratchFolder&) = delete;

  bool ok() const { return !path_.empty(); }
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  /// Writes `size` bytes of `data` to the file `name` in the folder; false when it cannot.
  bool write(const std::string& name, const std::uint8_t* data, std::size_t size) const {
    if (!ok()) return false;
    FILE* out = std::fopen(file(name).c_str(), "wb");
    if (!out) return false;
    const bool written = std::fwrite(data, 1, size, out) == size;
    return std::fclose(out) == 0 && written;
  }

private:
  std::string path_;
};
