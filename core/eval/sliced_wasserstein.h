#pragma once
// SlicedWasserstein: the sliced Wasserstein distance (SWD) between two image sets on the patches of
// their Laplacian pyramids, as Karras et al. 2018 define it ("Progressive Growing of GANs",
// appendix D, metrics/sliced_wasserstein.py):
//  - pyramid: cv2's pyrDown/pyrUp with the 5-tap binomial kernel [1 4 6 4 1]/16 (separable) and
//    whole-sample mirror borders (d c b | a b c d | c b a: cv2's BORDER_REFLECT_101, scipy's
//    'mirror', as their code); Laplacian levels from the image size down to min_resolution, the
//    smallest level the Gaussian level itself (64 px: 64, 32, 16);
//  - per level: patches_per_image random 7x7x3 neighbourhoods per image (centres uniform over the
//    positions where the patch fits, their randint(H, S − H)), read in (channel, row, column) order
//    into 147-vectors (theirs is (channel, column, row): a fixed permutation of the components, which
//    random isotropic directions do not see), and normalised per channel over all patches and
//    pixels of one set (their finalize_descriptors; a zero std is left at 1);
//  - per level: `projections` random unit directions (512: their 4 repeats of 128; the mean over
//    all directions is the mean over the repeats), both sets projected and sorted, the mean
//    absolute difference of the sorted projections. Reported × 10³, with the mean over levels.
// Pixel values may be in any range: an affine map of the values is removed by the normalisation,
// so images in [-1, 1] give what their uint8 images give. Sets of different sizes: the larger is
// subsampled (a seeded draw without replacement) to the smaller. The pyramid, descriptors and
// projections are computed in float32 as Karras' code (relative error ~1e-6, half the memory and
// time of float64, which options.float64 selects), level by level, in blocks of images, each
// image's level made alone (LaplacianPatches).
// The pieces below (distance() and the rest) are always float64.
// Bad input and cancellation come back as an Error; nothing throws. CPU only.
#include "core/util/result.h"

#include <torch/types.h>

#include <cstdint>
#include <functional>
#include <vector>

namespace streetgan {

struct SlicedWassersteinOptions {
  int patch_size = 7;                    ///< side of the square neighbourhoods (odd)
  std::int64_t patches_per_image = 128;  ///< neighbourhoods drawn per image and level
  std::int64_t projections = 512;        ///< random directions per level (Karras: 4 × 128)
  int min_resolution = 16;               ///< the smallest pyramid level (at least patch_size, ≥ 4)
  std::uint64_t seed = 0;                ///< patch positions, directions and the subsample
  /// One draw of patch positions for both sets (their counts are equal after subsampling):
  /// identical sets then give exactly 0, and a change to the images is measured without the
  /// noise of two independent draws. false (Karras): each set has its own positions.
  bool shared_positions = false;
  bool float64 = false;      ///< descriptors and projections in float64 (false: float32, as Karras)
  std::int64_t block = 256;  ///< images per pyramid block
  /// Called with the fraction done (0..1); returning false cancels.
  std::function<bool(double)> progress;
};

struct SlicedWassersteinResult {
  std::vector<int> resolutions;      ///< the levels, finest first (64, 32, 16 at 64 px)
  std::vector<double> distances_e3;  ///< the SWD of each level × 10³
  double mean_e3 = 0;                ///< their mean (the paper's "avg")
  std::int64_t images = 0;           ///< images used from each set (the smaller count)
};

class SlicedWasserstein {
public:
  /// SWD of every pyramid level between the image sets `a` and `b` ((N, 3, S, S), S ≥
  /// min_resolution and halving evenly down to it; the counts may differ).
  static Result<SlicedWassersteinResult> compute(const torch::Tensor& a, const torch::Tensor& b,
                                                 const SlicedWassersteinOptions& options = {});

  // The pieces, public so that tests can feed the same random parts to a reference.

  /// The levels of an S px image: S, S/2, … while ≥ min_resolution (empty when S < it).
  static std::vector<int> resolutions(std::int64_t size, int min_resolution);
  /// The Laplacian pyramid of `images` (N, 3, S, S), finest first, float64: level i is
  /// G_i − pyrUp(G_{i+1}), the last the Gaussian level G_last.
  static Result<std::vector<torch::Tensor>> laplacianPyramid(const torch::Tensor& images, int min_resolution);
  /// The patches of one level (N, 3, S, S) at `positions` (M, 3) integer rows (image, centre row,
  /// centre column; a patch must lie inside the level): (M, 3·p²) in the level's dtype, each row
  /// in (channel, row, column) order.
  static Result<torch::Tensor> patchDescriptors(const torch::Tensor& level, const torch::Tensor& positions,
                                                int patch_size);
  /// Karras' finalize_descriptors on (M, 3·k) rows: each channel's k components less their mean
  /// over all rows and components, divided by their (population) std. A float64 copy.
  static Result<torch::Tensor> normaliseDescriptors(const torch::Tensor& descriptors);
  /// The SWD of two descriptor sets (M, D) of equal M along the columns of `directions` (D, P),
  /// each normalised to unit length here: the mean over directions and ranks of the absolute
  /// difference of the sorted projections. Not scaled by 10³. In float64.
  static Result<double> distance(const torch::Tensor& a, const torch::Tensor& b, const torch::Tensor& directions);
};

}  // namespace streetgan
