#pragma once
// The Intel Gaudi (HPU) bridge: Intel's PyTorch for Gaudi ships its device support as a plugin
// library that registers the HPU device with LibTorch when it is loaded. loadHpuBridge() finds
// it (STREETGAN_HPU_PLUGIN, else habana_frameworks/torch/lib under the Python package folders
// Gaudi's installer uses), loads it once into this process and returns the number of HPUs it
// sees. On a host without the Gaudi software it returns an Error naming what is missing and
// where it looked; it never throws. See docs/hpu.md.
#include "core/util/result.h"

#include <string>
#include <vector>

namespace streetgan {

/// The plugin files looked for, in order (the first that exists is loaded).
std::vector<std::string> hpuPluginCandidates();

/// Loads the bridge (once) and returns the number of HPUs.
Result<int> loadHpuBridge();

}  // namespace streetgan
