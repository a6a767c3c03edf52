#include "core/eval/network_features.h"

#include "core/eval/features_channel.h"
#include "core/eval/features_worker.h"
#include "core/eval/features_worker_process.h"
#include "core/util/plain_text.h"
#include "core/util/sha256.h"

#include <poll.h>
#include <torch/torch.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <vector>

namespace streetgan {

struct NetworkFeatures::Worker {
  std::unique_ptr<FeaturesWorkerProcess> process;  // null once stopped
};

namespace {

using Clock = std::chrono::steady_clock;

// What the channel calls while the worker has not answered: poll in short steps, so that a
// cancel or the deadline stops the wait within a tenth of a second.
FeaturesChannel channelTo(int socket, Clock::time_point deadline, const std::function<bool()>& keep_going) {
  return FeaturesChannel(socket, [socket, deadline, keep_going](short events) -> Status {
    for (;;) {
      if (keep_going && !keep_going()) return makeError("cancelled");
      if (Clock::now() > deadline) return makeError("timeout");
      pollfd ready{socket, events, 0};
      const int n = ::poll(&ready, 1, 100);
      if (n > 0) return {};
      if (n < 0 && errno != EINTR) return makeError(std::string("cannot wait for the features network: ") + std::strerror(errno));
    }
  });
}

Status fileFits(const std::string& path) {
  std::error_code error;
  const auto status = std::filesystem::status(path, error);
  if (error && error != std::errc::no_such_file_or_directory)
    return makeError(path + ": cannot read the features file (" + error.message() + ")");
  if (!std::filesystem::exists(status)) return makeError(path + ": no such features file");
  if (!std::filesystem::is_regular_file(status)) return makeError(path + ": not a regular file");
  const auto size = std::filesystem::file_size(path, error);
  if (error) return makeError(path + ": cannot read its size (" + error.message() + ")");
  if (static_cast<std::int64_t>(size) > NetworkFeatures::kMaxBytes)
    return makeError(path + ": " + std::to_string(size >> 20) + " MiB is more than a features network may be (" +
                     std::to_string(NetworkFeatures::kMaxBytes >> 20) + " MiB)");
  return {};
}

// The worker's own Failure text: ours, but written by a process that ran foreign code.
std::string failureText(FeaturesChannel& channel, std::uint64_t bytes) {
  std::string text(static_cast<std::size_t>(bytes), '\0');
  if (!channel.receive(text.data(), text.size())) return "";
  return plainText(text, FeaturesChannel::kMaxFailureBytes);
}

}  // namespace

Result<NetworkFeatures> NetworkFeatures::load(const std::string& path, int input_size, const c10::Device& device,
                                              const FeaturesWorkerOptions& worker, const std::function<bool()>& keep_going) {
  if (input_size < 8 || input_size > 4096)
    return makeError("the features network's input size must be 8 to 4096 pixels, got " + std::to_string(input_size));
  if (Status fits = fileFits(path); !fits) return makeError(fits.error());
  auto digest = Sha256::ofFile(path);
  if (!digest) return makeError(digest.error());
  NetworkFeatures features;
  features.path_ = path;
  features.sha256_ = *digest;
  features.input_size_ = input_size;
  features.options_ = worker;
  FeaturesWorkerArguments arguments{path, input_size, device.str(), *digest, worker.threads};
  std::vector<std::string> command = worker.command;
  for (const std::string& word : arguments.toWords()) command.push_back(word);
  auto process = FeaturesWorkerProcess::start(command, worker.memory_bytes);
  if (!process) return makeError(path + ": " + process.error());
  features.worker_ = std::make_shared<Worker>(Worker{std::move(*process)});
  FeaturesChannel channel = channelTo(features.worker_->process->socket(), Clock::now() + worker.batch_timeout, keep_going);
  auto head = channel.receiveHead();
  if (head && head->kind == FeaturesFrameKind::Ready) return features;
  if (head && head->kind == FeaturesFrameKind::Failure) return makeError(features.failed(failureText(channel, head->payload_bytes)).error());
  return makeError(features.failed(head ? "an answer the protocol does not allow" : head.error()).error());
}

std::string NetworkFeatures::spaceName() const {
  return "torchscript:" + sha256_.substr(0, 16) + "@" + std::to_string(input_size_) + "px";
}

// Words one failure, and stops the worker: nothing more is asked of it.
Status NetworkFeatures::failed(const std::string& message) const {
  if (!worker_ || !worker_->process) return makeError(path_ + ": the features network's process was stopped after a failure");
  std::string text;
  if (message == "cancelled") text = "cancelled";
  else if (message == "timeout")
    text = path_ + ": the features network took longer than " + std::to_string(options_.batch_timeout.count()) +
           " s and was stopped";
  else if (message == FeaturesChannel::kClosed || message.empty() || message.rfind("the other end", 0) == 0)
    text = path_ + ": the features network's process " + worker_->process->howItEnded();
  else if (message.find("allocate") != std::string::npos)
    text = message + " (the features network may allocate at most " + std::to_string(options_.memory_bytes >> 20) + " MiB)";
  else if (message.rfind(path_, 0) == 0) text = message;
  else text = path_ + ": the features network's process: " + message;
  worker_->process.reset();
  return makeError(text);
}

Result<torch::Tensor> NetworkFeatures::batchFeatures(const torch::Tensor& input, const std::function<bool()>& keep_going) const {
  if (!worker_ || !worker_->process) return makeError(failed("").error());
  FeaturesChannel channel = channelTo(worker_->process->socket(), Clock::now() + options_.batch_timeout, keep_going);
  const std::int64_t n = input.size(0);
  if (Status sent = channel.send(FeaturesFrameKind::Batch, {{&n, 8}, {input.data_ptr(), static_cast<std::size_t>(input.numel()) * 4}});
      !sent)
    return makeError(failed(sent.error()).error());
  auto head = channel.receiveHead();
  if (!head) return makeError(failed(head.error()).error());
  if (head->kind == FeaturesFrameKind::Failure) return makeError(failed(failureText(channel, head->payload_bytes)).error());
  std::int64_t dimensions = 0;
  if (head->kind != FeaturesFrameKind::Features || head->payload_bytes < 8)
    return makeError(failed("an answer the protocol does not allow").error());
  if (Status received = channel.receive(&dimensions, 8); !received) return makeError(failed(received.error()).error());
  if (dimensions < 1 || dimensions > kMaxFeatures || head->payload_bytes != 8 + static_cast<std::uint64_t>(n * dimensions * 8))
    return makeError(failed("features of a shape the protocol does not allow").error());
  torch::Tensor values = torch::empty({n, dimensions}, torch::kFloat64);
  if (Status received = channel.receive(values.data_ptr(), static_cast<std::size_t>(n * dimensions * 8)); !received)
    return makeError(failed(received.error()).error());
  if (!torch::isfinite(values).all().item<bool>()) return makeError(failed(path_ + ": the network returns NaN or Inf features").error());
  return values;
}

Result<torch::Tensor> NetworkFeatures::extract(const torch::Tensor& images, std::int64_t batch,
                                               const std::function<bool()>& keep_going) const {
  if (!worker_) return makeError("no features network loaded");
  if (!images.defined() || images.dim() != 4 || images.size(1) != 3)
    return makeError("the features network takes a batch of RGB images (N, 3, height, width)");
  if (batch < 1) return makeError("the features batch size must be at least 1");
  const std::int64_t image_bytes = std::int64_t{3} * input_size_ * input_size_ * 4;
  batch = std::max<std::int64_t>(1, std::min({batch, kMaxBatchBytes / image_bytes, kMaxBatchImages}));
  std::vector<torch::Tensor> pieces;
  std::int64_t dimensions = -1;
  for (std::int64_t start = 0; start < images.size(0); start += batch) {
    if (keep_going && !keep_going()) return makeError(failed("cancelled").error());
    torch::NoGradGuard no_grad;
    torch::Tensor input = images.slice(0, start, std::min(images.size(0), start + batch)).to(torch::kCPU, torch::kFloat32);
    if (input.size(2) != input_size_ || input.size(3) != input_size_)
      input = torch::nn::functional::interpolate(input, torch::nn::functional::InterpolateFuncOptions()
                                                            .size(std::vector<std::int64_t>{input_size_, input_size_})
                                                            .mode(torch::kBilinear)
                                                            .align_corners(false));
    auto features = batchFeatures(input.contiguous(), keep_going);
    if (!features) return makeError(features.error());
    if (dimensions >= 0 && features->size(1) != dimensions)
      return makeError(failed(path_ + ": the network returns " + std::to_string(features->size(1)) +
                              " features for one batch and " + std::to_string(dimensions) + " for another").error());
    dimensions = features->size(1);
    pieces.push_back(*features);
  }
  if (pieces.empty()) return makeError("no images to compute features of");
  return torch::cat(pieces, 0);
}

}  // namespace streetgan
