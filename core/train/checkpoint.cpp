#include "core/train/checkpoint.h"

#include "core/train/checkpoint_archive.h"
#include "core/train/discriminator_augment.h"
#include "core/train/generator_average.h"
#include "core/train/network_options.h"

#include "core/util/atomic_file.h"
#include "core/util/exception_message.h"

#include <caffe2/serialize/inline_container.h>
#include <nlohmann/json.hpp>
#include <torch/serialize.h>
#include <torch/torch.h>

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

namespace streetgan {
namespace {

// The archive entry of G's moving average, written only by runs that keep one.
constexpr const char* kAverageEntry = "generator_ema";

torch::Tensor counter(std::int64_t value) { return torch::tensor(value, torch::kInt64); }

std::int64_t readCounter(torch::serialize::InputArchive& archive, const char* key) {
  torch::Tensor value;
  archive.read(key, value);
  return value.item<std::int64_t>();
}

std::string checkpointShapeText(c10::IntArrayRef sizes) {
  std::string text = "[";
  for (std::size_t i = 0; i < sizes.size(); ++i) text += (i ? ", " : "") + std::to_string(sizes[i]);
  return text + "]";
}

// Restores `module` from `archive` and checks that every parameter and buffer kept the shape the
// stored config gave it. LibTorch's load replaces a tensor of another shape without a word, so a
// checkpoint whose config does not describe its weights would load and then fail in a forward pass.
Status loadModule(torch::nn::Module& module, torch::serialize::InputArchive& archive,
                  const std::string& path, const std::string& name) {
  std::vector<std::pair<std::string, std::vector<std::int64_t>>> expected;
  for (const auto& item : module.named_parameters()) expected.emplace_back(item.key(), item.value().sizes().vec());
  for (const auto& item : module.named_buffers()) expected.emplace_back(item.key(), item.value().sizes().vec());
  module.load(archive);
  auto actual = module.named_parameters();
  auto buffers = module.named_buffers();
  for (const auto& [key, sizes] : expected) {
    const torch::Tensor* tensor = actual.find(key);
    if (!tensor) tensor = buffers.find(key);
    if (tensor && tensor->sizes().equals(sizes)) continue;
    return makeError(path + ": the weights do not match the config stored with them (" + name + " " + key +
                     " is " + (tensor ? checkpointShapeText(tensor->sizes()) : std::string("missing")) +
                     ", the config needs " + checkpointShapeText(sizes) + ")");
  }
  return {};
}

// A module whose weights or statistics are not all finite renders nothing but NaN: refused.
Status finiteModule(torch::nn::Module& module, const std::string& path, const std::string& name) {
  for (const auto& item : module.named_parameters())
    if (!torch::isfinite(item.value()).all().item<bool>())
      return makeError(path + ": the " + name + "'s " + item.key() + " is not finite");
  for (const auto& item : module.named_buffers())
    if (item.value().is_floating_point() && !torch::isfinite(item.value()).all().item<bool>())
      return makeError(path + ": the " + name + "'s " + item.key() + " is not finite");
  return {};
}

// G's moving average into `model`'s, when its config keeps one: a checkpoint of such a run
// without it is refused rather than restarting the average from G.
Status loadAverage(torch::serialize::InputArchive& archive, const std::string& path, DcganStep& model) {
  GeneratorAverage* average = model.average();
  if (!average) return {};
  torch::serialize::InputArchive generator_ema;
  if (!archive.try_read(kAverageEntry, generator_ema))
    return makeError(path + ": the config keeps G's moving average (ema.half_life_images) but the checkpoint "
                            "holds none");
  if (Status loaded = loadModule(*average->generator(), generator_ema, path, "moving average of G"); !loaded)
    return loaded;
  return finiteModule(*average->generator(), path, "moving average of G");
}

}  // namespace

Status saveCheckpoint(const std::string& path, DcganStep& model, const CheckpointState& state) {
  // The archive is written to memory and the file by writeFileAtomically: LibTorch's zip writer
  // writing to a file that fails (a full disk) throws from its destructor, which ends the
  // program, and left a half-written temporary file behind.
  std::string bytes;
  try {
    torch::serialize::OutputArchive archive;
    archive.write("streetgan_checkpoint_version", counter(kCheckpointFormatVersion));
    archive.write("config", c10::IValue(configToJson(state.config).dump()));
    archive.write("epoch", counter(state.progress.epoch));
    archive.write("batch", counter(state.progress.batch));
    archive.write("step", counter(state.progress.step));
    archive.write("images_seen", counter(state.progress.images_seen));
    archive.write("world_size", counter(state.progress.world_size));
    archive.write("fixed_noise", state.fixed_noise);
    archive.write("noise_rng_state", state.noise_rng_state);
    archive.write("noise_rng_kind", c10::IValue(state.noise_rng_kind));
    archive.write("precision", c10::IValue(state.precision));
    torch::serialize::OutputArchive generator, discriminator, optimizer_g, optimizer_d;
    model.generator()->save(generator);
    model.discriminator()->save(discriminator);
    model.optimizerG().save(optimizer_g);
    model.optimizerD().save(optimizer_d);
    archive.write("generator", generator);
    archive.write("discriminator", discriminator);
    archive.write("optimizer_g", optimizer_g);
    archive.write("optimizer_d", optimizer_d);
    if (DiscriminatorAugment* augment = model.augment()) {
      archive.write("augment_rng_state", augment->rngState());
      archive.write("augment_rng_kind", c10::IValue(augment->rngKind()));
      if (augment->ada()) archive.write("ada_state", augment->adaState());
    }
    if (GeneratorAverage* average = model.average()) {
      torch::serialize::OutputArchive generator_ema;
      average->generator()->save(generator_ema);
      archive.write(kAverageEntry, generator_ema);
    }
    model.scaler().save(archive);
    archive.save_to([&bytes](const void* data, std::size_t size) -> std::size_t {
      bytes.append(static_cast<const char*>(data), size);
      return size;
    });
  } catch (const c10::Error& e) {
    return makeError(path + ": cannot write the checkpoint (" + firstLine(e.what_without_backtrace()) + ")");
  } catch (const std::bad_alloc&) {
    return makeError(path + ": cannot write the checkpoint (out of memory)");
  }
  if (Status written = writeFileAtomically(path, bytes, FolderLinks::Refuse); !written)
    return makeError(written.error() + "; the previous checkpoints are kept");
  return {};
}

Result<TrainConfig> readCheckpointConfig(const std::string& path) {
  try {
    torch::serialize::InputArchive archive;
    if (Status opened = openCheckpointArchive(archive, path, torch::kCPU); !opened)
      return makeError(opened.error());
    return readCheckpointArchiveConfig(archive, path);
  } catch (...) {
    return checkpointReadFailure(path);
  }
}

Result<TrainConfig> readResumeConfig(const std::vector<std::string>& checkpoints) {
  auto stored = readCheckpointConfig(checkpoints.back());
  if (!stored && checkpoints.size() > 1) stored = readCheckpointConfig(checkpoints[checkpoints.size() - 2]);
  return stored;
}

Result<CheckpointState> loadCheckpoint(const std::string& path, DcganStep& model) {
  try {
    torch::serialize::InputArchive archive;
    if (Status opened = openCheckpointArchive(archive, path, model.device()); !opened)
      return makeError(opened.error());
    auto config = readCheckpointArchiveConfig(archive, path);
    if (!config) return makeError(config.error());
    CheckpointState state;
    state.config = *config;
    state.progress.epoch = readCounter(archive, "epoch");
    state.progress.batch = readCounter(archive, "batch");
    state.progress.step = readCounter(archive, "step");
    state.progress.images_seen = readCounter(archive, "images_seen");
    // Checkpoints from before distributed training were written by one process.
    torch::Tensor world_size;
    if (archive.try_read("world_size", world_size)) state.progress.world_size = world_size.item<std::int64_t>();
    archive.read("fixed_noise", state.fixed_noise);
    archive.read("noise_rng_state", state.noise_rng_state);
    state.noise_rng_state = state.noise_rng_state.to(torch::kCPU);
    // Checkpoints from before these keys: a CPU generator, and fp32 unless the scaler says fp16.
    c10::IValue text;
    if (archive.try_read("noise_rng_kind", text) && text.isString()) state.noise_rng_kind = text.toStringRef();
    if (archive.try_read("precision", text) && text.isString()) state.precision = text.toStringRef();
    torch::serialize::InputArchive generator, discriminator, optimizer_g, optimizer_d;
    archive.read("generator", generator);
    archive.read("discriminator", discriminator);
    archive.read("optimizer_g", optimizer_g);
    archive.read("optimizer_d", optimizer_d);
    if (Status loaded = loadModule(*model.generator(), generator, path, "generator"); !loaded)
      return makeError(loaded.error());
    if (Status loaded = loadModule(*model.discriminator(), discriminator, path, "discriminator"); !loaded)
      return makeError(loaded.error());
    model.optimizerG().load(optimizer_g);
    model.optimizerD().load(optimizer_d);
    if (Status average = loadAverage(archive, path, model); !average) return makeError(average.error());
    if (DiscriminatorAugment* augment = model.augment()) {
      torch::Tensor rng_state;
      c10::IValue kind;
      state.augment_rng_restored = archive.try_read("augment_rng_state", rng_state) &&
                                   archive.try_read("augment_rng_kind", kind) && kind.isString() &&
                                   augment->restoreRng(rng_state.to(torch::kCPU), kind.toStringRef());
      // ADA's p and its interval: a run that turns ADA on at resume starts from augment.ada_p, and
      // a fixed p is the config's.
      torch::Tensor ada_state;
      if (augment->adaptive() && archive.try_read("ada_state", ada_state)) augment->restoreAdaState(ada_state);
    }
    state.scaler_restored = model.scaler().load(archive);
    return state;
  } catch (...) {
    return checkpointReadFailure(path);
  }
}

Result<CheckpointState> loadCheckpointBytes(const std::string& bytes, const std::string& name, DcganStep& model) {
  // LibTorch's reader takes a path: the bytes go into an anonymous in-memory file, read through
  // /proc like any file (the zip checks included), and gone when its descriptor closes.
  const int fd = ::memfd_create("streetgan-checkpoint", MFD_CLOEXEC);
  if (fd < 0) return makeError(name + ": cannot hold rank 0's checkpoint in memory (" + std::strerror(errno) + ")");
  const std::unique_ptr<int, void (*)(int*)> closer(new int(fd), [](int* held) {
    ::close(*held);
    delete held;
  });
  for (std::size_t done = 0; done < bytes.size();) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return makeError(name + ": cannot hold rank 0's checkpoint in memory (" + std::strerror(errno) + ")");
    done += static_cast<std::size_t>(n);
  }
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  auto loaded = loadCheckpoint(path, model);
  if (loaded) return loaded;
  std::string message = loaded.error();
  for (std::size_t at = message.find(path); at != std::string::npos; at = message.find(path, at + name.size()))
    message.replace(at, path.size(), name);
  return makeError(message);
}

Result<CheckpointGenerator> loadCheckpointGenerator(const std::string& path, const c10::Device& device,
                                                    GeneratorChoice choice) {
  try {
    torch::serialize::InputArchive archive;
    if (Status opened = openCheckpointArchive(archive, path, device); !opened)
      return makeError(opened.error());
    auto config = readCheckpointArchiveConfig(archive, path);
    if (!config) return makeError(config.error());
    CheckpointGenerator loaded;
    loaded.config = *config;
    loaded.generator = Generator(generatorOptionsFor(*config));
    torch::serialize::InputArchive generator;
    const bool has_average = archive.try_read(kAverageEntry, generator);
    if (choice == GeneratorChoice::Average && !has_average)
      return makeError(path + ": the checkpoint holds no moving average of G" +
                       (config->ema.half_life_images > 0 ? std::string() : " (its run had ema.half_life_images 0)") +
                       "; choose the raw generator (--generator raw)");
    loaded.average = has_average && choice != GeneratorChoice::Raw;
    if (!loaded.average) archive.read("generator", generator);
    if (Status restored = loadModule(*loaded.generator, generator, path,
                                     loaded.average ? "moving average of G" : "generator");
        !restored)
      return makeError(restored.error());
    if (loaded.average)
      if (Status finite = finiteModule(*loaded.generator, path, "moving average of G"); !finite)
        return makeError(finite.error());
    loaded.generator->to(device);
    torch::serialize::InputArchive discriminator;
    if (archive.try_read("discriminator", discriminator)) {
      // Only for its score in Explore: a discriminator that does not load leaves none, and the
      // generator still opens.
      loaded.discriminator = Discriminator(discriminatorOptionsFor(*config));
      if (loadModule(*loaded.discriminator, discriminator, path, "discriminator")) {
        loaded.discriminator->to(device);
        loaded.discriminator->eval();
      } else {
        loaded.discriminator = nullptr;
      }
    }
    archive.read("fixed_noise", loaded.fixed_noise);
    loaded.progress.epoch = readCounter(archive, "epoch");
    loaded.progress.step = readCounter(archive, "step");
    loaded.progress.images_seen = readCounter(archive, "images_seen");
    return loaded;
  } catch (...) {
    return checkpointReadFailure(path);
  }
}

}  // namespace streetgan
