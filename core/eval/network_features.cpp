#include "core/eval/network_features.h"

#include "core/util/libtorch_archive_check.h"
#include "core/util/regular_file.h"

#include "core/util/sha256.h"

#include <torch/csrc/jit/passes/inliner.h>
#include <torch/script.h>
#include <torch/torch.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <system_error>
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

struct NetworkFeatures::Module {
  torch::jit::Module module;
};

Result<NetworkFeatures> NetworkFeatures::load(const std::string& path, int input_size, const c10::Device& device) {
  if (input_size < 8 || input_size > 4096)
    return makeError("the features network's input size must be 8 to 4096 pixels, got " + std::to_string(input_size));
  std::error_code error;
  const auto status = std::filesystem::status(path, error);
  if (error && error != std::errc::no_such_file_or_directory)
    return makeError(path + ": cannot read the features file (" + error.message() + ")");
  if (!std::filesystem::exists(status)) return makeError(path + ": no such features file");
  if (!std::filesystem::is_regular_file(status)) return makeError(path + ": not a regular file");
  const auto size = std::filesystem::file_size(path, error);
  if (error) return makeError(path + ": cannot read its size (" + error.message() + ")");
  if (static_cast<std::int64_t>(size) > kMaxBytes)
    return makeError(path + ": " + std::to_string(size >> 20) + " MiB is more than a features network may be (" +
                     std::to_string(kMaxBytes >> 20) + " MiB)");
  auto digest = Sha256::ofFile(path);
  if (!digest) return makeError(digest.error());
  NetworkFeatures features;
  features.path_ = path;
  features.sha256_ = *digest;
  features.input_size_ = input_size;
  features.device_ = device;
  // The network's methods are code the user chose to run (docs/evaluation.md); its zip and
  // pickles are checked before LibTorch's reader, which a crafted pickle crashed, sees them, and
  // LibTorch reads the same open file.
  auto file = RegularFile::open(path);
  if (!file) return makeError(file.error());
  const auto file_size = static_cast<std::uint64_t>(file->size());
  const ArchiveReader read = fileArchiveReader(file->descriptor(), file_size);
  LibTorchArchiveLimits limits;
  limits.code_is_data_only = false;
  if (Status checked = checkLibTorchArchive(read, file_size, limits); !checked)
    return makeError(path + ": not a TorchScript network that LibTorch can load (" + checked.error() + ")");
  try {
    features.module_ = std::make_shared<Module>(Module{torch::jit::load(archiveAdapter(read, file_size), device)});
    features.module_->module.eval();
    if (const std::string refused = refusedOperators(features.module_->module); !refused.empty())
      return makeError(path + ": the network calls " + refused + ", which a features network may not (only pure "
                       "tensor operators: docs/evaluation.md); it was not run");
  } catch (const std::exception& e) {
    return makeError(path + ": not a TorchScript network that LibTorch can load (" + oneLine(e) + ")");
  }
  return features;
}

std::string NetworkFeatures::spaceName() const {
  return "torchscript:" + sha256_.substr(0, 16) + "@" + std::to_string(input_size_) + "px";
}

Result<torch::Tensor> NetworkFeatures::extract(const torch::Tensor& images, std::int64_t batch,
                                               const std::function<bool()>& keep_going) const {
  if (!module_) return makeError("no features network loaded");
  if (!images.defined() || images.dim() != 4 || images.size(1) != 3)
    return makeError("the features network takes a batch of RGB images (N, 3, height, width)");
  if (batch < 1) return makeError("the features batch size must be at least 1");
  const std::int64_t image_bytes = std::int64_t{3} * input_size_ * input_size_ * 4;
  batch = std::max<std::int64_t>(1, std::min(batch, kMaxBatchBytes / image_bytes));
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> pieces;
  std::int64_t dimensions = -1;
  try {
    for (std::int64_t start = 0; start < images.size(0); start += batch) {
      if (keep_going && !keep_going()) return makeError("cancelled");
      torch::Tensor input = images.slice(0, start, std::min(images.size(0), start + batch)).to(device_, torch::kFloat32);
      if (input.size(2) != input_size_ || input.size(3) != input_size_)
        input = torch::nn::functional::interpolate(
            input, torch::nn::functional::InterpolateFuncOptions()
                       .size(std::vector<std::int64_t>{input_size_, input_size_})
                       .mode(torch::kBilinear)
                       .align_corners(false));
      const torch::IValue output = module_->module.forward({input});
      if (!output.isTensor())
        return makeError(path_ + ": the network returns " + output.tagKind() + ", not a tensor of features");
      const torch::Tensor features = output.toTensor();
      if (features.dim() != 2 || features.size(0) != input.size(0) || features.size(1) < 1)
        return makeError(path_ + ": the network returns shape " + c10::str(features.sizes()) + " for a batch of " +
                         std::to_string(input.size(0)) + "; it must return (batch, features)");
      if (features.size(1) > kMaxFeatures)
        return makeError(path_ + ": the network returns " + std::to_string(features.size(1)) + " features an image; at most " +
                         std::to_string(kMaxFeatures) + " are taken (FID's covariance grows with their square)");
      if (dimensions >= 0 && features.size(1) != dimensions)
        return makeError(path_ + ": the network returns " + std::to_string(features.size(1)) + " features for one batch and " +
                         std::to_string(dimensions) + " for another");
      dimensions = features.size(1);
      const torch::Tensor values = features.detach().to(torch::kCPU, torch::kFloat64);
      if (!torch::isfinite(values).all().item<bool>())
        return makeError(path_ + ": the network returns NaN or Inf features");
      pieces.push_back(values);
    }
  } catch (const std::exception& e) {  // c10::Error, and TorchScript's own JITException
    return makeError(path_ + ": the network failed on a batch of " + std::to_string(std::min(batch, images.size(0))) + " " +
                     std::to_string(input_size_) + "x" + std::to_string(input_size_) + " images (" +
                     oneLine(e) + ")");
  }
  if (pieces.empty()) return makeError("no images to compute features of");
  return torch::cat(pieces, 0);
}

}  // namespace streetgan
