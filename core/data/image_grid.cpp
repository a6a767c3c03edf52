#include "core/data/image_grid.h"

#include "core/util/atomic_file.h"

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <torch/torch.h>

#include <cmath>

namespace streetgan {

torch::Tensor makeImageGrid(const torch::Tensor& images, int columns, int padding) {
  TORCH_CHECK(images.dim() == 4, "makeImageGrid expects (B, C, H, W)");
  const auto count = images.size(0), channels = images.size(1);
  const auto height = images.size(2), width = images.size(3);
  if (columns <= 0) columns = static_cast<int>(std::ceil(std::sqrt(static_cast<double>(count))));
  const auto rows = (count + columns - 1) / columns;
  auto pixels = ((images.detach().to(torch::kCPU, torch::kFloat32).clamp(-1, 1) + 1) * 127.5)
                    .round()
                    .to(torch::kUInt8);
  auto grid = torch::zeros({channels, rows * (height + padding) + padding,
                            columns * (width + padding) + padding},
                           torch::kUInt8);
  for (int64_t i = 0; i < count; ++i) {
    const auto y = padding + (i / columns) * (height + padding);
    const auto x = padding + (i % columns) * (width + padding);
    grid.narrow(1, y, height).narrow(2, x, width).copy_(pixels[i]);
  }
  return grid;
}

Result<std::string> encodePng(const torch::Tensor& chw_uint8) {
  const auto hwc = chw_uint8.permute({1, 2, 0}).contiguous();
  const int channels = static_cast<int>(hwc.size(2));
  cv::Mat view(static_cast<int>(hwc.size(0)), static_cast<int>(hwc.size(1)),
               CV_8UC(channels), hwc.data_ptr<std::uint8_t>());
  cv::Mat bgr;
  if (channels == 3)
    cv::cvtColor(view, bgr, cv::COLOR_RGB2BGR);
  else
    bgr = view;
  std::vector<unsigned char> bytes;
  try {
    if (!cv::imencode(".png", bgr, bytes)) return makeError("cannot encode the image as PNG");
  } catch (const cv::Exception& e) {
    return makeError("cannot encode the image as PNG (" + e.msg + ")");
  }
  return std::string(bytes.begin(), bytes.end());
}

Status writeImageGrid(const torch::Tensor& images, const std::string& path, int columns, FolderLinks folder) {
  auto png = encodePng(makeImageGrid(images, columns));
  if (!png) return makeError(path + ": " + png.error());
  return writeFileAtomically(path, *png, folder);
}

RgbImage toRgbImage(const torch::Tensor& chw_uint8) {
  const torch::Tensor hwc = chw_uint8.to(torch::kCPU, torch::kUInt8).permute({1, 2, 0}).contiguous();
  RgbImage image;
  image.height = static_cast<int>(hwc.size(0));
  image.width = static_cast<int>(hwc.size(1));
  image.channels = static_cast<int>(hwc.size(2));
  image.pixels.assign(hwc.data_ptr<std::uint8_t>(), hwc.data_ptr<std::uint8_t>() + hwc.numel());
  return image;
}

}  // namespace streetgan
