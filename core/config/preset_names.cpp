#include "core/config/preset_names.h"

namespace streetgan {

std::vector<std::string> presetNames() {
  return {"naive-64", "safe-64", "safe-128", "demo", "modern-64", "modern-128"};
}

std::string presetNameList(const std::string& last_separator) {
  const auto names = presetNames();
  std::string list;
  for (std::size_t i = 0; i < names.size(); ++i)
    list += (i == 0 ? "" : i + 1 == names.size() ? last_separator : ", ") + names[i];
  return list;
}

}  // namespace streetgan
