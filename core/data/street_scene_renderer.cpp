#include "core/data/street_scene_renderer.h"

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>
#include <random>

namespace streetgan {
namespace {

using Colour = StreetSceneRenderer::Colour;

double unitRandom(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) / 9007199254740992.0; }
double between(std::mt19937_64& rng, double lo, double hi) { return lo + (hi - lo) * unitRandom(rng); }

cv::Scalar scalar(const Colour& c, double light = 1.0) {
  return cv::Scalar(std::clamp(c.b * light, 0.0, 255.0), std::clamp(c.g * light, 0.0, 255.0),
                    std::clamp(c.r * light, 0.0, 255.0));
}

Colour mixSeed(const Colour& a, const Colour& b, double t) {
  return {a.b + (b.b - a.b) * t, a.g + (b.g - a.g) * t, a.r + (b.r - a.r) * t};
}

constexpr double kCameraHeight = 1.6;
constexpr double kNear = 1.0;

}  // namespace

StreetSceneRenderer::StreetSceneRenderer(std::uint64_t seed, int width, int height)
    : width_(width), height_(height) {
  std::mt19937_64 rng(seed);
  time_of_day_ = static_cast<int>(rng() % 4);
  static const Colour skies[4][2] = {{{235, 170, 90}, {250, 220, 180}},   // day
                                     {{130, 80, 90}, {90, 150, 250}},     // dusk
                                     {{45, 20, 15}, {80, 50, 40}},        // night
                                     {{175, 170, 165}, {215, 212, 208}}}; // overcast
  sky_top_ = skies[time_of_day_][0];
  sky_horizon_ = skies[time_of_day_][1];
  const double light = time_of_day_ == 2 ? 0.3 : time_of_day_ == 1 ? 0.75 : 1.0;
  const double grey = between(rng, 70, 110) * light;
  road_ = {grey, grey, grey * between(rng, 0.95, 1.05)};
  ground_ = Colour{between(rng, 120, 170), between(rng, 130, 175), between(rng, 130, 180)};
  ground_ = mixSeed(ground_, Colour{0, 0, 0}, 1.0 - light);
  lane_ = rng() % 3 == 0 ? Colour{40 * light, 200 * light, 230 * light}
                         : Colour{230 * light, 230 * light, 230 * light};
  road_half_width_ = between(rng, 3.0, 7.0);
  horizon_ = height * between(rng, 0.40, 0.52);
  vanish_x_ = width * between(rng, 0.42, 0.58);
  focal_ = width * between(rng, 0.7, 0.95);
  dashed_centre_ = rng() % 4 != 0;

  for (int side = 0; side < 2; ++side) {
    double z = between(rng, -10.0, 5.0);
    while (z < 400.0) {
      Building b;
      b.left = side == 0;
      b.z0 = z;
      b.z1 = z + between(rng, 8.0, 30.0);
      b.floors = 1 + static_cast<int>(rng() % 12);
      b.height = b.floors * between(rng, 3.0, 3.6);
      b.setback = between(rng, 1.5, 4.0);
      const Colour base{between(rng, 40, 220), between(rng, 40, 210), between(rng, 50, 230)};
      b.wall = mixSeed(base, Colour{0, 0, 0}, 1.0 - light);
      b.window = time_of_day_ == 2 ? Colour{60, 190, 250}
                                   : mixSeed(sky_horizon_, Colour{60, 50, 40}, between(rng, 0.3, 0.7));
      b.window_seed = rng();
      buildings_.push_back(b);
      z = b.z1 + (rng() % 3 == 0 ? between(rng, 2.0, 12.0) : 0.0);
    }
  }
}

Result<std::string> StreetSceneRenderer::renderJpeg(int frame) const {
  cv::Mat canvas(height_, width_, CV_8UC3);
  const double camera_z = frame * kMetresPerFrame;
  auto project = [&](double x, double y, double z) {
    const double depth = std::max(z - camera_z, kNear);
    return cv::Point2d(vanish_x_ + focal_ * x / depth,
                       horizon_ + focal_ * (kCameraHeight - y) / depth);
  };
  auto fill = [&](std::vector<cv::Point2d> points, const cv::Scalar& colour) {
    std::vector<cv::Point> pixels;
    for (const auto& p : points)
      pixels.emplace_back(static_cast<int>(std::lround(std::clamp(p.x, -1e5, 1e5) * 16)),
                          static_cast<int>(std::lround(std::clamp(p.y, -1e5, 1e5) * 16)));
    cv::fillConvexPoly(canvas, pixels, colour, cv::LINE_AA, 4);
  };

  // Sky gradient down to the horizon, ground below it.
  for (int y = 0; y < height_; ++y) {
    const cv::Scalar colour = y < horizon_ ? scalar(mixSeed(sky_top_, sky_horizon_, y / horizon_))
                                           : scalar(ground_);
    canvas.row(y).setTo(colour);
  }
  const double far = camera_z + 600.0;
  fill({project(-road_half_width_, 0, camera_z + kNear), project(road_half_width_, 0, camera_z + kNear),
        project(road_half_width_, 0, far), project(-road_half_width_, 0, far)},
       scalar(road_));
  // Lane marks: dashes that move towards the camera from frame to frame.
  const double dash = 3.0, period = 9.0;
  for (double z = std::floor(camera_z / period) * period; dashed_centre_ && z < camera_z + 200;
       z += period) {
    if (z + dash < camera_z + kNear) continue;
    const double z0 = std::max(z, camera_z + kNear);
    fill({project(-0.08, 0, z0), project(0.08, 0, z0), project(0.08, 0, z + dash),
          project(-0.08, 0, z + dash)},
         scalar(lane_));
  }
  for (const double edge : {-road_half_width_ + 0.3, road_half_width_ - 0.3})
    fill({project(edge - 0.07, 0, camera_z + kNear), project(edge + 0.07, 0, camera_z + kNear),
          project(edge + 0.07, 0, far), project(edge - 0.07, 0, far)},
         scalar(lane_, 0.9));

  // Buildings, far to near so nearer ones cover farther ones.
  std::vector<const Building*> order;
  for (const auto& b : buildings_)
    if (b.z1 > camera_z + kNear && b.z0 < camera_z + 300) order.push_back(&b);
  std::sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->z0 > b->z0; });
  for (const Building* b : order) {
    const double sign = b->left ? -1.0 : 1.0;
    const double x = sign * (road_half_width_ + b->setback);
    const double depth_x = sign * 12.0;
    const double z0 = std::max(b->z0, camera_z + kNear);
    // Front face (towards the camera), then the facade along the road.
    if (b->z0 >= camera_z + kNear)
      fill({project(x, 0, z0), project(x + depth_x, 0, z0), project(x + depth_x, b->height, z0),
            project(x, b->height, z0)},
           scalar(b->wall, 0.7));
    fill({project(x, 0, z0), project(x, 0, b->z1), project(x, b->height, b->z1),
          project(x, b->height, z0)},
         scalar(b->wall));
    std::mt19937_64 windows(b->window_seed);
    const double floor_height = b->height / b->floors;
    for (double wz = b->z0 + 1.0; wz + 1.2 < b->z1; wz += 3.0) {
      for (int f = 0; f < b->floors; ++f) {
        const bool lit = unitRandom(windows) < 0.6;
        if (wz < camera_z + kNear) continue;
        const double y0 = f * floor_height + 0.9, y1 = y0 + floor_height * 0.5;
        fill({project(x, y0, wz), project(x, y0, wz + 1.2), project(x, y1, wz + 1.2),
              project(x, y1, wz)},
             scalar(b->window, isNight() && !lit ? 0.25 : 1.0));
      }
    }
  }

  std::vector<unsigned char> bytes;
  try {
    if (!cv::imencode(".jpg", canvas, bytes, {cv::IMWRITE_JPEG_QUALITY, 92}))
      return makeError("cannot encode the demo image as JPEG");
  } catch (const cv::Exception& e) {
    return makeError("cannot encode the demo image as JPEG (" + e.msg + ")");
  }
  return std::string(bytes.begin(), bytes.end());
}

}  // namespace streetgan
