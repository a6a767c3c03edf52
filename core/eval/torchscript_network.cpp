#include "core/eval/torchscript_network.h"

#include "core/eval/network_features.h"
#include "core/formats/libtorch_archive_check.h"
#include "core/util/regular_file.h"
#include "core/util/sha256.h"

#include <torch/csrc/jit/passes/inliner.h>
#include <torch/script.h>
#include <torch/torch.h>

#include <algorithm>
#include <set>
#include <vector>

namespace streetgan {

namespace {

// One line of what LibTorch or TorchScript said: TorchScript puts the script's own error ("raise
// ...") on the last line, after its traceback; LibTorch's first line is the message.
std::string oneLine(const std::exception& e) {
  const auto* error = dynamic_cast<const c10::Error*>(&e);
  std::string text = error ? error->what_without_backtrace() : e.what();
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    if (end > start) lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  if (lines.empty()) return "no message";
  const std::string& line = text.find("TorchScript interpreter") != std::string::npos ? lines.back() : lines.front();
  return line.substr(0, 300);
}

// The operators a features network may call: those of a pure tensor computation. Any namespace
// but these (c10d's network collectives, the profiler's, a custom library's) is refused, and so
// are the few tensor-namespace operators that reach outside the process: aten::from_file (a
// storage mapped from any file, created and written when asked), aten::save (torch.save to any
// path) and prim::Print (the network's text on our stdout).
bool allowedOperator(const std::string& name) {
  static const char* const kNamespaces[] = {"aten::", "prim::", "quantized::", "prepacked::", "mkldnn_prepacked::"};
  static const char* const kRefused[] = {"aten::from_file", "aten::save", "prim::Print"};
  for (const char* refused : kRefused)
    if (name == refused) return false;
  for (const char* space : kNamespaces)
    if (name.rfind(space, 0) == 0) return true;
  return false;
}

// Every node of `block`, of the blocks inside it, and of the graphs its nodes hold (the body a
// prim::fork starts, for one).
void collectOperators(const torch::jit::Block* block, std::set<std::string>& refused) {
  for (const torch::jit::Node* node : block->nodes()) {
    if (const std::string name = node->kind().toQualString(); !allowedOperator(name)) refused.insert(name);
    for (const torch::jit::Block* inner : node->blocks()) collectOperators(inner, refused);
    for (const torch::jit::Symbol attribute : node->attributeNames()) {
      if (node->kindOf(attribute) == torch::jit::AttributeKind::g) {
        collectOperators(node->g(attribute)->block(), refused);
      } else if (node->kindOf(attribute) == torch::jit::AttributeKind::gs) {
        for (const auto& graph : node->gs(attribute)) collectOperators(graph->block(), refused);
      }
    }
  }
}

// Every operator of every function the network's archive compiled (its modules' methods, its
// classes' methods, free functions: an interface call reaches any of them), with the functions
// they call inlined: the ones not allowed, by name ("" when none).
std::string refusedOperators(const torch::jit::Module& module) {
  std::set<std::string> refused;
  for (torch::jit::Function* function : module._ivalue()->compilation_unit()->get_functions()) {
    if (!function->isGraphFunction()) {
      refused.insert(function->qualname().qualifiedName() + " (not TorchScript)");
      continue;
    }
    auto graph = torch::jit::toGraphFunction(*function).graph()->copy();
    torch::jit::Inline(*graph);
    collectOperators(graph->block(), refused);
  }
  std::string names;
  for (const std::string& name : refused) names += (names.empty() ? "" : ", ") + name;
  return names;
}

}  // namespace

struct TorchScriptNetwork::Module {
  torch::jit::Module module;
};


Result<TorchScriptNetwork> TorchScriptNetwork::load(const std::string& path, int input_size, const c10::Device& device) {
  // Read once into memory: the digest, the checks and LibTorch's loader then see the same bytes,
  // however the file changes meanwhile (a file rewritten in place while it loaded once showed the
  // check one network and the loader another, whose __setstate__ ran).
  auto contents = RegularFile::readAll(path, NetworkFeatures::kMaxBytes);
  if (!contents) return makeError(contents.error());
  const auto bytes = std::make_shared<const std::string>(std::move(*contents));
  const auto file_size = static_cast<std::uint64_t>(bytes->size());
  const ArchiveReader read = memoryArchiveReader(bytes);
  TorchScriptNetwork network;
  network.path_ = path;
  network.sha256_ = Sha256::ofBytes(*bytes);
  network.input_size_ = input_size;
  network.device_ = device;
  LibTorchArchiveLimits limits;
  limits.code_is_data_only = false;
  if (Status checked = checkLibTorchArchive(read, file_size, limits); !checked)
    return makeError(path + ": not a TorchScript network that LibTorch can load (" + checked.error() + ")");
  try {
    network.module_ = std::make_shared<Module>(Module{torch::jit::load(archiveAdapter(read, file_size), device)});
    network.module_->module.eval();
    if (const std::string refused = refusedOperators(network.module_->module); !refused.empty())
      return makeError(path + ": the network calls " + refused + ", which a features network may not (only pure "
                       "tensor operators: docs/evaluation.md); it was not run");
  } catch (const std::exception& e) {
    return makeError(path + ": not a TorchScript network that LibTorch can load (" + oneLine(e) + ")");
  }
  return network;
}

Result<torch::Tensor> TorchScriptNetwork::features(const torch::Tensor& batch, std::int64_t max_features) {
  if (!module_) return makeError("no features network loaded");
  const std::string images = std::to_string(batch.size(0)) + " " + std::to_string(input_size_) + "x" +
                             std::to_string(input_size_) + " images";
  torch::NoGradGuard no_grad;
  try {
    const torch::IValue output = module_->module.forward({batch.to(device_)});
    if (!output.isTensor()) return makeError(path_ + ": the network returns " + output.tagKind() + ", not a tensor of features");
    const torch::Tensor features = output.toTensor();
    if (features.dim() != 2 || features.size(0) != batch.size(0) || features.size(1) < 1)
      return makeError(path_ + ": the network returns shape " + c10::str(features.sizes()) + " for a batch of " +
                       std::to_string(batch.size(0)) + "; it must return (batch, features)");
    if (features.size(1) > max_features)
      return makeError(path_ + ": the network returns " + std::to_string(features.size(1)) + " features an image; at most " +
                       std::to_string(max_features) + " are taken (FID's covariance grows with their square)");
    if (dimensions_ >= 0 && features.size(1) != dimensions_)
      return makeError(path_ + ": the network returns " + std::to_string(features.size(1)) + " features for one batch and " +
                       std::to_string(dimensions_) + " for another");
    dimensions_ = features.size(1);
    torch::Tensor values = features.detach().to(torch::kCPU, torch::kFloat64).contiguous();
    if (!torch::isfinite(values).all().item<bool>()) return makeError(path_ + ": the network returns NaN or Inf features");
    return values;
  } catch (const std::exception& e) {  // c10::Error, and TorchScript's own JITException
    return makeError(path_ + ": the network failed on a batch of " + images + " (" + oneLine(e) + ")");
  }
}

}  // namespace streetgan
