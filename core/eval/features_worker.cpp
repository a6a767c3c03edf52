#include "core/eval/features_worker.h"

#include "core/eval/features_channel.h"
#include "core/eval/network_features.h"
#include "core/eval/torchscript_network.h"
#include "core/util/blas_threads.h"

#include <ATen/Parallel.h>
#include <poll.h>
#include <torch/torch.h>

#include <cerrno>
#include <cstring>
#include <limits>

namespace streetgan {

namespace {

const char* const kNetwork = "--network";
const char* const kSize = "--size";
const char* const kDevice = "--device";
const char* const kSha256 = "--sha256";
const char* const kThreads = "--threads";

Result<int> wholeNumber(const std::string& option, const std::string& text, int low, int high) {
  if (text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != std::string::npos)
    return makeError("option '" + option + "': '" + text + "' is not a whole number");
  const int value = std::stoi(text);
  if (value < low || value > high)
    return makeError("option '" + option + "': " + text + " is not in " + std::to_string(low) + ".." + std::to_string(high));
  return value;
}

Status waitForever(int fd, short events) {
  pollfd ready{fd, events, 0};
  while (::poll(&ready, 1, -1) < 0)
    if (errno != EINTR) return makeError(std::string("cannot wait for the caller: ") + std::strerror(errno));
  return {};
}

Status sendFailure(FeaturesChannel& channel, const std::string& message) {
  const std::string text = message.substr(0, FeaturesChannel::kMaxFailureBytes);
  return channel.send(FeaturesFrameKind::Failure, {{text.data(), text.size()}});
}

// One Batch: its images, checked against the payload's length before anything is allocated.
Result<torch::Tensor> receiveBatch(FeaturesChannel& channel, std::uint64_t payload_bytes, int input_size) {
  std::int64_t n = 0;
  if (payload_bytes < 8) return makeError("a batch without its count");
  if (Status received = channel.receive(&n, 8); !received) return makeError(received.error());
  const auto image_bytes = std::uint64_t{3} * input_size * input_size * 4;
  if (n < 1 || static_cast<std::uint64_t>(n) > (payload_bytes - 8) / image_bytes ||
      static_cast<std::uint64_t>(n) * image_bytes != payload_bytes - 8)
    return makeError("a batch of " + std::to_string(n) + " images in " + std::to_string(payload_bytes) + " bytes");
  torch::Tensor batch = torch::empty({n, 3, input_size, input_size}, torch::kFloat32);
  if (Status received = channel.receive(batch.data_ptr(), static_cast<std::size_t>(payload_bytes - 8)); !received)
    return makeError(received.error());
  return batch;
}

}  // namespace

std::vector<std::string> FeaturesWorkerArguments::toWords() const {
  return {kNetwork, network, kSize, std::to_string(input_size), kDevice, device, kSha256, sha256, kThreads, std::to_string(threads)};
}

Result<FeaturesWorkerArguments> FeaturesWorkerArguments::fromWords(const std::vector<std::string>& words) {
  FeaturesWorkerArguments arguments;
  bool given[5] = {};
  for (std::size_t i = 0; i < words.size(); i += 2) {
    if (i + 1 >= words.size()) return makeError("option '" + words[i] + "' needs a value");
    const std::string& value = words[i + 1];
    const char* const options[] = {kNetwork, kSize, kDevice, kSha256, kThreads};
    int which = 0;
    while (which < 5 && words[i] != options[which]) ++which;
    if (which == 5) return makeError("unknown option '" + words[i] + "'");
    given[which] = true;
    if (which == 0) arguments.network = value;
    if (which == 2) arguments.device = value;
    if (which == 3) arguments.sha256 = value;
    if (which == 1 || which == 4) {
      auto number = which == 1 ? wholeNumber(words[i], value, 8, 4096) : wholeNumber(words[i], value, 0, 4096);
      if (!number) return makeError(number.error());
      (which == 1 ? arguments.input_size : arguments.threads) = *number;
    }
  }
  const char* const required[] = {kNetwork, kSize, kDevice, kSha256};
  for (int which = 0; which < 4; ++which)
    if (!given[which]) return makeError(std::string("option '") + required[which] + "' is missing");
  return arguments;
}

int runFeaturesWorker(const FeaturesWorkerArguments& arguments, int fd) {
  FeaturesChannel channel(fd, [fd](short events) { return waitForever(fd, events); });
  if (arguments.threads > 0) at::set_num_threads(arguments.threads);
  keepBlasSingleThreaded();
  c10::Device device = c10::kCPU;
  try {
    device = c10::Device(arguments.device);
  } catch (const std::exception&) {
    (void)sendFailure(channel, "option '--device': '" + arguments.device + "' is not a device");
    return 1;
  }
  auto network = TorchScriptNetwork::load(arguments.network, arguments.input_size, device);
  if (network && network->sha256() != arguments.sha256)
    network = makeError(arguments.network + ": the file changed while it was being read (its SHA-256 differs)");
  if (!network) {
    (void)sendFailure(channel, network.error());
    return 1;
  }
  if (!channel.send(FeaturesFrameKind::Ready, {})) return 1;
  for (;;) {
    auto head = channel.receiveHead();
    if (!head) return head.error() == FeaturesChannel::kClosed ? 0 : 1;
    if (head->kind != FeaturesFrameKind::Batch) return 1;
    auto batch = receiveBatch(channel, head->payload_bytes, arguments.input_size);
    if (!batch) return 1;
    auto features = network->features(*batch, NetworkFeatures::kMaxFeatures);
    if (!features) {
      (void)sendFailure(channel, features.error());
      return 1;
    }
    const std::int64_t dimensions = features->size(1);
    if (!channel.send(FeaturesFrameKind::Features,
                      {{&dimensions, 8}, {features->data_ptr(), static_cast<std::size_t>(features->numel()) * 8}}))
      return 1;
  }
}

}  // namespace streetgan
