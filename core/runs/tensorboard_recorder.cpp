#include "core/runs/tensorboard_recorder.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace streetgan {

namespace {

using json = nlohmann::json;

double numberAt(const json& body, const char* key) {
  const auto it = body.find(key);
  return it != body.end() && it->is_number() ? it->get<double>() : std::nan("");
}

/// Width, height and TensorBoard's colorspace (1 grey, 2 grey+alpha, 3 RGB, 4 RGBA) from a PNG's
/// IHDR chunk; nullopt when the bytes are not a PNG this understands.
struct PngShape {
  int width = 0, height = 0, channels = 0;
};

std::optional<PngShape> pngShape(const std::string& bytes) {
  static const char kSignature[] = "\x89PNG\r\n\x1a\n";
  if (bytes.size() < 26 || bytes.compare(0, 8, kSignature, 8) != 0 || bytes.compare(12, 4, "IHDR") != 0) return std::nullopt;
  auto be32 = [&bytes](std::size_t at) {
    return (static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[at])) << 24) |
           (static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[at + 1])) << 16) |
           (static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[at + 2])) << 8) |
           static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[at + 3]));
  };
  PngShape shape;
  shape.width = static_cast<int>(be32(16));
  shape.height = static_cast<int>(be32(20));
  switch (static_cast<unsigned char>(bytes[25])) {
    case 0: shape.channels = 1; break;
    case 4: shape.channels = 2; break;
    case 2: shape.channels = 3; break;
    case 6: shape.channels = 4; break;
    default: return std::nullopt;  // palette images: TensorBoard decodes them, but we never write them
  }
  return shape;
}

}  // namespace

TensorBoardRecorder::TensorBoardRecorder(std::string run_dir, std::string out_dir)
    : run_dir_(std::move(run_dir)), out_dir_(std::move(out_dir)) {}

Status TensorBoardRecorder::record(const json& event) {
  const auto type_it = event.find("type");
  if (type_it == event.end() || !type_it->is_string()) return {};
  const std::string type = type_it->get<std::string>();
  const double time = numberAt(event, "time");
  const double images = numberAt(event, "images_seen");
  const auto step = static_cast<std::int64_t>(std::isfinite(images) ? images : 0);
  if (type == "run_started") {
    if (!writer_) {
      auto opened = TensorBoardWriter::open(out_dir_, time);
      if (!opened) return makeError(opened.error());
      writer_ = std::move(*opened);
    }
    return writer_->sessionStart(time, step);
  }
  if (!writer_) return {};  // nothing before the first start (a log cut at its head)
  auto scalar = [&](const char* tag, const char* key) -> Status {
    const double value = numberAt(event, key);
    return std::isfinite(value) ? writer_->scalar(tag, time, step, value) : Status{};
  };
  if (type == "step") {
    for (const auto& [tag, key] : {std::pair{"G_loss", "loss_g"}, std::pair{"D_loss", "loss_d"}, std::pair{"D_X", "d_x"},
                                   std::pair{"D_G_z1", "d_g_z1"}, std::pair{"D_G_z2", "d_g_z2"},
                                   std::pair{"throughput/images_per_s", "images_per_s"},
                                   std::pair{"throughput/data_wait_fraction", "data_wait_fraction"}})
      if (Status s = scalar(tag, key); !s) return s;
  } else if (type == "parzen") {
    if (Status s = scalar("parzen/mean_ll", "mean_ll"); !s) return s;
    return scalar("parzen/stderr", "stderr");
  } else if (type == "samples") {
    const auto path = event.find("path");
    if (path == event.end() || !path->is_string()) return {};
    std::ifstream file(std::filesystem::path(run_dir_) / path->get<std::string>(), std::ios::binary);
    const std::string png((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    const auto shape = pngShape(png);
    if (!shape) return {};
    return writer_->image("samples", time, step, png, shape->width, shape->height, shape->channels);
  }
  return {};
}

}  // namespace streetgan
