#include "core/interop/reference_checkpoint.h"

#include "core/util/torch_compat.h"
#include "core/formats/torch_save_file.h"

#include <torch/optim/adamw.h>
#include <torch/torch.h>

#include <algorithm>
#include <map>

namespace streetgan {
namespace {

const char* const kKnownKeys[] = {"epoch", "G_state_dict", "D_state_dict", "G_optim", "D_optim",
                                  "losses", "img_list", "noise"};

std::string referenceShapeText(c10::IntArrayRef sizes) {
  std::string text = "[";
  for (std::size_t i = 0; i < sizes.size(); ++i) text += (i ? ", " : "") + std::to_string(sizes[i]);
  return text + "]";
}

// A state dict's tensors, `module.` stripped (from every key or from none).
Result<NamedTensors> stateDict(const PickleValue& value, const std::string& key, bool& prefixed) {
  if (!value.isDict()) return makeError(key + " is a " + value.typeName() + ", not a state dict");
  NamedTensors tensors;
  std::size_t with_prefix = 0;
  for (const auto& [name, tensor] : value.entries()) {
    if (!name.isString() || !tensor.isTensor())
      return makeError(key + " holds a " + name.typeName() + " → " + tensor.typeName() + " entry, not name → tensor");
    std::string text = name.toString();
    if (text.rfind("module.", 0) == 0) {
      ++with_prefix;
      text.erase(0, 7);
    }
    // Converted only once every shape fits its net (asFloat32): a crafted file may hold many
    // views of one storage, and copying each would multiply the file's size.
    tensors.emplace_back(std::move(text), tensor.toTensor());
  }
  if (with_prefix != 0 && with_prefix != tensors.size())
    return makeError(key + " mixes names with and without DistributedDataParallel's module. prefix");
  prefixed = with_prefix != 0;
  return tensors;
}

// Weights become float32, integer buffers (BatchNorm's num_batches_tracked) int64, each contiguous.
void asFloat32(NamedTensors& tensors) {
  for (auto& [name, t] : tensors) t = t.to(t.is_floating_point() ? torch::kFloat32 : torch::kInt64).contiguous();
}

// The 4-D weights of main.<i>, in layer order: the convolutions.
std::vector<std::pair<int, torch::Tensor>> convWeights(const NamedTensors& state) {
  std::vector<std::pair<int, torch::Tensor>> convs;
  for (const auto& [name, tensor] : state) {
    if (name.rfind("main.", 0) != 0 || tensor.dim() != 4) continue;
    const auto dot = name.find('.', 5);
    if (dot == std::string::npos || name.substr(dot) != ".weight") continue;
    try {
      convs.emplace_back(std::stoi(name.substr(5, dot - 5)), tensor);
    } catch (const std::exception&) {
    }
  }
  std::sort(convs.begin(), convs.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return convs;
}

// Every parameter and buffer of `module` is in `state` with its shape, and `state` holds nothing else.
Status fits(torch::nn::Module& module, const NamedTensors& state, const std::string& what) {
  std::map<std::string, torch::Tensor> given(state.begin(), state.end());
  auto check = [&](const std::string& name, const torch::Tensor& expected) -> Status {
    auto found = given.find(name);
    if (found == given.end()) {
      if (name.size() > 20 && name.compare(name.size() - 20, 20, ".num_batches_tracked") == 0) return {};  // before PyTorch 0.4.1
      return makeError(what + ": " + name + " is missing");
    }
    if (!found->second.sizes().equals(expected.sizes()))
      return makeError(what + ": " + name + " is " + referenceShapeText(found->second.sizes()) + ", not " +
                       referenceShapeText(expected.sizes()));
    given.erase(found);
    return {};
  };
  for (const auto& item : module.named_parameters())
    if (Status s = check(item.key(), item.value()); !s) return s;
  for (const auto& item : module.named_buffers())
    if (Status s = check(item.key(), item.value()); !s) return s;
  if (!given.empty()) return makeError(what + ": it also holds " + given.begin()->first + ", which that net has not");
  return {};
}

// The configuration's limits (core/config/train_config.cpp): a file claiming more is refused
// before any net is built, as building one to compare shapes would allocate its full size.
constexpr std::int64_t kMaxNz = 4096;
constexpr std::int64_t kMaxWidth = 2048;

// Each convolution weight has the shape its place in the net gives it: `channels` lists the
// channels between layers, and a weight is [in, out, 4, 4] (transposed) or [out, in, 4, 4]. When
// they all fit, the net built to check the rest is no larger than the file's own tensors.
Status convChainFits(const std::vector<std::pair<int, torch::Tensor>>& convs, const std::vector<std::int64_t>& channels,
                     bool transposed, const std::string& what) {
  for (std::size_t i = 0; i < convs.size() && i + 1 < channels.size(); ++i) {
    const std::int64_t in = channels[i];
    const std::int64_t out = channels[i + 1];
    const std::vector<std::int64_t> expected = transposed ? std::vector<std::int64_t>{in, out, 4, 4}
                                                          : std::vector<std::int64_t>{out, in, 4, 4};
    if (!convs[i].second.sizes().equals(expected))
      return makeError(what + ": main." + std::to_string(convs[i].first) + ".weight is " +
                       referenceShapeText(convs[i].second.sizes()) + ", not " + referenceShapeText(expected));
  }
  return {};
}

std::string describeReference(const GeneratorOptions& o) {
  return "a DCGAN generator (nz " + std::to_string(o.nz) + ", ngf " + std::to_string(o.ngf) + ", nc " +
         std::to_string(o.nc) + ", " + std::to_string(o.img_size) + " px)";
}

Result<GeneratorOptions> inferGenerator(const NamedTensors& state) {
  const auto convs = convWeights(state);
  if (convs.size() != 5 && convs.size() != 6)
    return makeError("G_state_dict has " + std::to_string(convs.size()) +
                     " convolution weights under main.; a DCGAN generator has 5 (64 px) or 6 (128 px)");
  GeneratorOptions options;
  options.img_size = convs.size() == 5 ? 64 : 128;
  const std::int64_t nz = convs.front().second.size(0);
  const std::int64_t ngf = convs.back().second.size(0);
  const std::int64_t nc = convs.back().second.size(1);
  if (nc != 1 && nc != 3)
    return makeError("G_state_dict makes images of " + std::to_string(nc) + " channels; 1 or 3 are supported");
  if (nz < 1 || nz > kMaxNz || ngf < 1 || ngf > kMaxWidth)
    return makeError("G_state_dict is a generator with nz " + std::to_string(nz) + " and ngf " + std::to_string(ngf) +
                     "; this program trains nz 1 to " + std::to_string(kMaxNz) + " and ngf 1 to " +
                     std::to_string(kMaxWidth));
  options.nz = static_cast<int>(nz);
  options.ngf = static_cast<int>(ngf);
  options.nc = static_cast<int>(nc);
  std::vector<std::int64_t> channels{nz};
  for (std::int64_t mult = options.img_size == 64 ? 8 : 16; mult >= 1; mult /= 2) channels.push_back(mult * ngf);
  channels.push_back(nc);
  if (Status s = convChainFits(convs, channels, true, "G_state_dict does not fit " + describeReference(options)); !s)
    return makeError(s.error());
  Generator probe(options);
  if (Status ok = fits(*probe, state, "G_state_dict does not fit " + describeReference(options)); !ok)
    return makeError(ok.error());
  return options;
}

Result<DiscriminatorOptions> inferDiscriminator(const NamedTensors& state, const GeneratorOptions& g) {
  const auto convs = convWeights(state);
  if (convs.size() != 5 && convs.size() != 6)
    return makeError("D_state_dict has " + std::to_string(convs.size()) +
                     " convolution weights under main.; a DCGAN discriminator has 5 (64 px) or 6 (128 px)");
  DiscriminatorOptions options;
  options.img_size = convs.size() == 5 ? 64 : 128;
  const std::int64_t ndf = convs.front().second.size(0);
  if (ndf < 1 || ndf > kMaxWidth)
    return makeError("D_state_dict is a discriminator with ndf " + std::to_string(ndf) + "; this program trains ndf 1 to " +
                     std::to_string(kMaxWidth));
  options.ndf = static_cast<int>(ndf);
  options.nc = static_cast<int>(convs.front().second.size(1));
  if (options.img_size != g.img_size || options.nc != g.nc)
    return makeError("D_state_dict is for " + std::to_string(options.nc) + "-channel " +
                     std::to_string(options.img_size) + " px images, G_state_dict makes " +
                     std::to_string(g.nc) + "-channel " + std::to_string(g.img_size) + " px ones");
  std::vector<std::int64_t> channels{options.nc};
  for (std::int64_t mult = 1; mult <= (options.img_size == 64 ? 8 : 16); mult *= 2) channels.push_back(mult * ndf);
  channels.push_back(1);
  if (Status s = convChainFits(convs, channels, false, "D_state_dict does not fit a DCGAN discriminator (ndf " +
                                                           std::to_string(ndf) + ")");
      !s)
    return makeError(s.error());
  Discriminator probe(options);
  if (Status ok = fits(*probe, state,
                       "D_state_dict does not fit a DCGAN discriminator (ndf " + std::to_string(options.ndf) + ", nc " +
                           std::to_string(options.nc) + ", " + std::to_string(options.img_size) + " px)");
      !ok)
    return makeError(ok.error());
  return options;
}

Result<ReferenceOptimizer> optimizer(const PickleValue& value, const std::string& key, torch::nn::Module& net) {
  const auto params = net.parameters();
  if (!value.isDict()) return makeError(key + " is a " + value.typeName() + ", not an optimizer state dict");
  const PickleValue* state = value.find("state");
  const PickleValue* groups = value.find("param_groups");
  if (!state || !state->isDict() || !groups || groups->kind() != PickleValue::Kind::List || groups->items().size() != 1 ||
      !groups->items()[0].isDict())
    return makeError(key + " is not the state dict of an optimizer with one parameter group (state, param_groups)");
  const PickleValue& group = groups->items()[0];
  ReferenceOptimizer out;
  auto number = [&](const char* name, double& into) -> Status {
    const PickleValue* v = group.find(name);
    if (!v) return {};
    if (!v->isNumber()) return makeError(key + "'s " + name + " is a " + v->typeName());
    into = v->toDouble();
    return {};
  };
  for (auto [name, into] : {std::pair<const char*, double*>{"lr", &out.lr}, {"eps", &out.eps}, {"weight_decay", &out.weight_decay}})
    if (Status s = number(name, *into); !s) return makeError(s.error());
  if (const PickleValue* betas = group.find("betas")) {
    if (!betas->isSequence() || betas->items().size() != 2 || !betas->items()[0].isNumber() || !betas->items()[1].isNumber())
      return makeError(key + "'s betas are not two numbers");
    out.beta1 = betas->items()[0].toDouble();
    out.beta2 = betas->items()[1].toDouble();
  }
  if (const PickleValue* amsgrad = group.find("amsgrad"); amsgrad && amsgrad->toBool())
    return makeError(key + " uses AMSGrad, which the AdamW of this program does not");
  const PickleValue* ids = group.find("params");
  if (!ids || !ids->isSequence() || ids->items().size() != params.size())
    return makeError(key + " optimizes " + std::to_string(ids && ids->isSequence() ? ids->items().size() : 0) +
                     " parameters; the net has " + std::to_string(params.size()));
  if (state->entries().empty()) return out;  // saved before its first step
  for (std::size_t i = 0; i < params.size(); ++i) {
    const PickleValue* moments = nullptr;
    for (const auto& [id, entry] : state->entries())
      if (id.sameKey(ids->items()[i])) moments = &entry;
    if (!moments || !moments->isDict())
      return makeError(key + " has no moments for parameter " + std::to_string(i));
    const PickleValue* step = moments->find("step");
    const PickleValue* avg = moments->find("exp_avg");
    const PickleValue* avg_sq = moments->find("exp_avg_sq");
    if (!step || (!step->isNumber() && !step->isTensor()) || !avg || !avg->isTensor() || !avg_sq || !avg_sq->isTensor())
      return makeError(key + "'s moments for parameter " + std::to_string(i) + " lack step, exp_avg or exp_avg_sq");
    if (!avg->toTensor().sizes().equals(params[i].sizes()) || !avg_sq->toTensor().sizes().equals(params[i].sizes()))
      return makeError(key + "'s moments for parameter " + std::to_string(i) + " are " +
                       referenceShapeText(avg->toTensor().sizes()) + ", the parameter is " + referenceShapeText(params[i].sizes()));
    out.params.push_back({static_cast<std::int64_t>(std::llround(step->toDouble())),
                          avg->toTensor().to(torch::kFloat32).contiguous(),
                          avg_sq->toTensor().to(torch::kFloat32).contiguous()});
  }
  return out;
}

Result<std::vector<double>> numbers(const PickleValue* value, const std::string& key) {
  std::vector<double> out;
  if (!value) return out;
  if (!value->isSequence()) return makeError(key + " is a " + value->typeName() + ", not a list of numbers");
  for (const auto& item : value->items()) {
    if (!item.isNumber() && !(item.isTensor() && item.toTensor().numel() == 1))
      return makeError(key + " holds a " + item.typeName() + ", not a number");
    out.push_back(item.toDouble());
  }
  return out;
}

Status readRest(const PickleValue& root, ReferenceCheckpoint& out) {
  if (const PickleValue* losses = root.find("losses")) {
    if (!losses->isDict()) return makeError("losses is a " + losses->typeName() + ", not {\"_G\": [...], \"_D\": [...]}");
    auto g = numbers(losses->find("_G"), "losses[\"_G\"]");
    if (!g) return makeError(g.error());
    auto d = numbers(losses->find("_D"), "losses[\"_D\"]");
    if (!d) return makeError(d.error());
    out.losses_g = std::move(*g);
    out.losses_d = std::move(*d);
  }
  if (const PickleValue* images = root.find("img_list")) {
    if (!images->isSequence()) return makeError("img_list is a " + images->typeName() + ", not a list of image grids");
    // Each grid is a view of a storage in the file, but many may view one storage: their
    // float copies are bounded as a whole (a 64 px grid of 64 samples is 0.8 M elements).
    constexpr std::int64_t kMaxGridElements = std::int64_t{1} << 28;
    // Each grid becomes a PNG in the run: 10,000 (one every 500 iterations for five million)
    // bounds the files an import writes, as the elements bound its memory.
    if (static_cast<std::int64_t>(images->items().size()) > kMaxImportedGrids)
      return makeError("img_list holds " + std::to_string(images->items().size()) + " image grids; at most " +
                       std::to_string(kMaxImportedGrids) + " can be imported");
    std::int64_t total = 0;
    for (const auto& image : images->items()) {
      if (image.isTensor() && (total += image.toTensor().numel()) > kMaxGridElements)
        return makeError("img_list holds more than " + std::to_string(kMaxGridElements) + " pixel values in all");
      if (!image.isTensor() || image.toTensor().dim() != 3 || (image.toTensor().size(0) != 3 && image.toTensor().size(0) != 1))
        return makeError("img_list holds a " + (image.isTensor() ? referenceShapeText(image.toTensor().sizes()) + " tensor" : image.typeName()) +
                         ", not an image grid (3, H, W)");
      out.img_list.push_back(image.toTensor().to(torch::kFloat32));
    }
  }
  if (const PickleValue* noise = root.find("noise")) {
    if (!noise->isTensor()) return makeError("noise is a " + noise->typeName() + ", not a tensor");
    torch::Tensor z = noise->toTensor().to(torch::kFloat32);
    if (z.dim() == 2) z = z.view({z.size(0), z.size(1), 1, 1});
    if (z.dim() != 4 || z.size(1) != out.generator.nz || z.size(2) != 1 || z.size(3) != 1 || z.size(0) < 1)
      return makeError("noise is " + referenceShapeText(z.sizes()) + ", not (n, " + std::to_string(out.generator.nz) + ", 1, 1)");
    out.noise = z.contiguous();
  }
  return {};
}

}  // namespace

Result<ReferenceCheckpoint> readReferenceCheckpoint(const std::string& path) {
  auto file = readTorchSaveFile(path);
  if (!file) return makeError(file.error());
  const PickleValue& root = *file;
  auto fail = [&](const std::string& message) { return makeError(path + ": " + message); };
  if (!root.isDict()) return fail("it holds a " + root.typeName() + ", not the original tool's checkpoint dict");
  for (const auto& [key, value] : root.entries()) {
    const bool known = key.isString() && std::find(std::begin(kKnownKeys), std::end(kKnownKeys), key.toString()) != std::end(kKnownKeys);
    if (!known)
      return fail("it holds the key " + (key.isString() ? "\"" + key.toString() + "\"" : key.typeName()) +
                  ", which the original tool's checkpoints never hold (they hold epoch, G_state_dict, D_state_dict, "
                  "G_optim, D_optim, losses, img_list, noise)");
  }
  ReferenceCheckpoint out;
  const PickleValue* epoch = root.find("epoch");
  const PickleValue* g_state = root.find("G_state_dict");
  if (!epoch || !g_state) return fail("it lacks " + std::string(!epoch ? "epoch" : "G_state_dict") + ", which every checkpoint of the original tool holds");
  if (!epoch->isInt() || epoch->toInt() < 0) return fail("epoch is " + epoch->typeName() + ", not an epoch number");
  out.epoch = epoch->toInt();
  auto g = stateDict(*g_state, "G_state_dict", out.ddp_prefixed);
  if (!g) return fail(g.error());
  out.generator_state = std::move(*g);
  auto g_options = inferGenerator(out.generator_state);
  if (!g_options) return fail(g_options.error());
  out.generator = *g_options;
  asFloat32(out.generator_state);
  if (const PickleValue* d_state = root.find("D_state_dict")) {
    bool prefixed = false;
    auto d = stateDict(*d_state, "D_state_dict", prefixed);
    if (!d) return fail(d.error());
    out.discriminator_state = std::move(*d);
    auto d_options = inferDiscriminator(out.discriminator_state, out.generator);
    if (!d_options) return fail(d_options.error());
    out.discriminator = *d_options;
    asFloat32(out.discriminator_state);
  }
  Generator g_net(out.generator);
  if (const PickleValue* g_optim = root.find("G_optim")) {
    auto opt = optimizer(*g_optim, "G_optim", *g_net);
    if (!opt) return fail(opt.error());
    out.optimizer_g = std::move(*opt);
  }
  if (const PickleValue* d_optim = root.find("D_optim")) {
    if (!out.discriminator) return fail("it holds D_optim without D_state_dict");
    Discriminator d_net(*out.discriminator);
    auto opt = optimizer(*d_optim, "D_optim", *d_net);
    if (!opt) return fail(opt.error());
    out.optimizer_d = std::move(*opt);
  }
  if (Status rest = readRest(root, out); !rest) return fail(rest.error());
  return out;
}

void copyStateInto(torch::nn::Module& module, const NamedTensors& state) {
  torch::NoGradGuard no_grad;
  std::map<std::string, torch::Tensor> given(state.begin(), state.end());
  for (auto& item : module.named_parameters())
    if (auto found = given.find(item.key()); found != given.end()) item.value().copy_(found->second);
  for (auto& item : module.named_buffers())
    if (auto found = given.find(item.key()); found != given.end()) item.value().copy_(found->second);
}

void restoreOptimizerState(torch::optim::Optimizer& optimizer, const std::vector<torch::Tensor>& params,
                           const ReferenceOptimizer& saved) {
  for (std::size_t i = 0; i < saved.params.size() && i < params.size(); ++i) {
    auto state = std::make_unique<torch::optim::AdamWParamState>();
    state->step(saved.params[i].step);
    state->exp_avg(saved.params[i].exp_avg.to(params[i].device()).clone());
    state->exp_avg_sq(saved.params[i].exp_avg_sq.to(params[i].device()).clone());
    optimizer.state()[torch_compat::optimizerStateKey(params[i])] = std::move(state);
  }
}

}  // namespace streetgan
