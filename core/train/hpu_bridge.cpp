#include "core/train/hpu_bridge.h"

#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>

namespace streetgan {

namespace fs = std::filesystem;

std::vector<std::string> hpuPluginCandidates() {
  if (const char* named = std::getenv("STREETGAN_HPU_PLUGIN"); named && *named) return {named};
  std::vector<std::string> found;
  // Gaudi's installer puts Intel's PyTorch into the system Python's package folders.
  for (const char* base : {"/usr/local/lib", "/usr/lib"}) {
    std::error_code error;
    for (const auto& entry : fs::directory_iterator(base, error)) {
      const std::string name = entry.path().filename().string();
      if (name.rfind("python3", 0) != 0) continue;
      for (const char* packages : {"dist-packages", "site-packages"})
        for (const char* plugin : {"libhabana_pytorch2_plugin.so", "libhabana_pytorch_plugin.so"}) {
          const fs::path path = entry.path() / packages / "habana_frameworks/torch/lib" / plugin;
          if (fs::exists(path, error)) found.push_back(path.string());
        }
    }
  }
  return found;
}

Result<int> loadHpuBridge() {
  static std::mutex mutex;
  static std::string loaded_error;
  static bool tried = false;
  std::lock_guard<std::mutex> lock(mutex);
  if (!tried) {
    tried = true;
    const auto candidates = hpuPluginCandidates();
    const char* named = std::getenv("STREETGAN_HPU_PLUGIN");
    if (candidates.empty()) {
      loaded_error =
          "device \"hpu\" is not available: the Intel Gaudi software is not installed here (no "
          "libhabana_pytorch_plugin.so of Intel Gaudi's PyTorch under "
          "/usr/{local/,}lib/python3*/{dist,site}-packages/habana_frameworks/torch/lib, and "
          "STREETGAN_HPU_PLUGIN is not set); see docs/hpu.md";
    } else if (named && *named && !fs::exists(named)) {
      loaded_error = std::string("device \"hpu\" is not available: STREETGAN_HPU_PLUGIN names ") + named +
                     ", which does not exist";
    } else if (!dlopen(candidates.front().c_str(), RTLD_NOW | RTLD_GLOBAL)) {
      const char* why = dlerror();
      loaded_error = "device \"hpu\" is not available: cannot load the Gaudi bridge " + candidates.front() + " (" +
                     (why ? why : "unknown error") + ")";
    } else if (!c10::impl::hasDeviceGuardImpl(c10::DeviceType::HPU)) {
      loaded_error = "device \"hpu\" is not available: " + candidates.front() +
                     " loaded but registered no HPU device with this LibTorch (is it the bridge built for this "
                     "PyTorch version?)";
    }
  }
  if (!loaded_error.empty()) return makeError(loaded_error);
  return static_cast<int>(c10::impl::getDeviceGuardImpl(c10::DeviceType::HPU)->deviceCount());
}

}  // namespace streetgan
