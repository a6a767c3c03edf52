#pragma once
// HeldOutSplits: the validation and test images a generator is evaluated on, loaded as the rows
// ParzenEstimator scores: either every image of two given folders, or one seeded shuffle of a data
// set's held-out split, validation first (at most half of the held-out images), test after, the two
// never overlapping. The one loader of `streetgan parzen` and of Parzen evaluation during training
// (core/train/trainer.cpp); the metrics that follow take their images from it too.
// An image that cannot be decoded is skipped and handed to `on_skipped`; a split left with no image,
// a missing folder or a held-out split of fewer than 2 images is an Error, worded for the caller
// (HeldOutSplitsRequest::purpose).
#include "core/config/data_config.h"
#include "core/config/train_config.h"
#include "core/data/image_dataset.h"
#include "core/eval/parzen_inputs.h"
#include "core/util/result.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace streetgan {

/// Where the splits come from and what their rows look like. forModel() fills in what training
/// uses; a caller changes the fields it chooses otherwise.
struct HeldOutSplitsRequest {
  /// True: every image of valid_folder is the validation split and every image of test_folder the
  /// test split (nothing is drawn). False: the splits are drawn from dataroot's held-out split.
  bool from_folders = false;
  std::string valid_folder, test_folder;
  /// How errors name the two folders (the CLI names its options: "option '--valid'").
  std::string valid_folder_name = "validation folder", test_folder_name = "test folder";

  std::string dataroot;          ///< the data set whose held-out split is drawn from
  DatasetFilter filter;          ///< its filters; they must define a held-out split (hasHoldout())
  std::uint64_t seed = 0;        ///< seed of the one shuffle both splits are drawn from
  std::size_t n_valid = 200;     ///< validation images drawn; at most half of the held-out images
  std::size_t n_test = 200;      ///< test images drawn from what validation left

  int img_size = 64;             ///< the rows' image size, channels and crop (the model's)
  int channels = 3;
  double crop_scale = 4.0;

  /// What the splits are for, as errors name it. Empty (the CLI): "validation split: …", the data
  /// set's own error as it is, "…; it needs at least 2 (validation and test)". A name such as
  /// "Parzen" (training): "Parzen validation split: …", "Parzen held-out split: …", "…; Parzen
  /// evaluation needs at least 2 (validation and test)".
  std::string purpose;
  /// Called for each image that could not be decoded (validation's first), as it is skipped.
  std::function<void(const SkippedFile&)> on_skipped;

  /// What training evaluates `model` on: its data set, filters and seed, parzen.n_valid and
  /// parzen.n_test, and its image size, channels and crop scale.
  static HeldOutSplitsRequest forModel(const TrainConfig& model);
};

struct HeldOutSplits {
  ImageRows valid;  ///< chooses σ
  ImageRows test;   ///< scored at that σ

  static Result<HeldOutSplits> load(const HeldOutSplitsRequest& request);
};

}  // namespace streetgan
