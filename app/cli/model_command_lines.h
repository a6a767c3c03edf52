#pragma once
// The command lines of the commands that run a checkpoint's generator (sample, nearest, walk,
// directions, project, serve, publish, parzen, metrics), and how each words its model options (ModelOptionsUse, which
// the command passes on to modelOptionsFrom). Made without LibTorch (command_lines.h says why).
#include "app/cli/command_line.h"
#include "app/cli/option_specs.h"

#include <cstddef>

namespace streetgan::cli {

// The most images one grid holds, by --n or --seeds: 4,096 images of 64 px are a 4 MB PNG and
// some 200 MB while they are made; 128 px, four times that.
constexpr long long kSampleMaxImages = 4096;

// The most keyframes --seeds gives a walk: with the default 30 frames between keyframes, 3,600
// keyframes make an hour of video at 30 fps.
constexpr std::size_t kMaxKeyframeSeeds = 10000;

ModelOptionsUse sampleModelUse();
CommandLine sampleCommandLine();
// The most samples `nearest` compares at once: each is searched against every training image.
constexpr long long kNearestMaxSamples = 256;

ModelOptionsUse nearestModelUse();
CommandLine nearestCommandLine();
ModelOptionsUse walkModelUse();
CommandLine walkCommandLine();
ModelOptionsUse directionsModelUse();
CommandLine directionsCommandLine();
ModelOptionsUse projectModelUse();
CommandLine projectCommandLine();
CommandLine serveCommandLine();
CommandLine publishCommandLine();
/// How parzen and metrics word the model options: they score a checkpoint's samples.
ModelOptionsUse scoringModelUse();
CommandLine parzenCommandLine();
CommandLine metricsCommandLine();

}  // namespace streetgan::cli
