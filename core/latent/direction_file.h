#pragma once
// DirectionFile: a named direction in a generator's latent space, kept in a run folder as
// <run>/directions/NAME.json (docs/explore.md): how it was found (closed form, principal
// component, labelled samples), from which checkpoint, the unit vector, its strength (eigenvalue,
// share of variance or held-out accuracy) and, for a labelled one, the latents the user marked.
// write() is atomic (the old file or the new one, never half of one); read() takes files from
// anyone's run folder: a regular file of at most kMaxBytes, nesting and counts bounded before
// anything is built, every key checked, and an Error naming the file and the key. Plain types
// only: the studio includes this header.
#include "core/util/result.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace streetgan {

struct LatentDirection {
  enum class Kind {
    ClosedForm,          ///< "closed-form": SeFa, an eigenvector of the first layer's weight
    PrincipalComponent,  ///< "principal-component": GANSpace, PCA of the first block's outputs
    Labelled,            ///< "labelled": InterFaceGAN, a linear classifier on marked latents
  };
  std::string name;             ///< the file's name without ".json"
  Kind kind = Kind::ClosedForm;
  std::string checkpoint;       ///< the checkpoint it was found on, as given
  std::int64_t step = 0;        ///< that checkpoint's step
  std::vector<float> vector;    ///< unit length, nz values
  int rank = 0;                 ///< closed form and principal: 1 for the strongest; labelled: 0
  double strength = 0;          ///< eigenvalue, share of variance (0–1) or held-out accuracy (0–1)
  std::int64_t held_out = 0;    ///< labelled: latents the accuracy was measured on
  std::vector<std::vector<float>> has, lacks;  ///< labelled: the latents marked "has" / "lacks"
};

class DirectionFile {
public:
  /// Parsed, a file takes about 20× its size: 16 MiB holds 2,000 marks at nz 512.
  static constexpr std::int64_t kMaxBytes = std::int64_t(16) << 20;
  static constexpr std::int64_t kMaxLatents = 10000;  ///< marked latents per file, each kind
  static constexpr int kMaxNz = 4096;

  /// "closed-form", "principal-component", "labelled".
  static const char* kindName(LatentDirection::Kind kind);
  /// The strength's name in files and tables: "eigenvalue", "variance_share", "accuracy".
  static const char* strengthName(LatentDirection::Kind kind);

  /// A name is 1 to 64 of A–Z, a–z, 0–9, '.', '_' and '-', not starting with '.'; an Error says why not.
  static Status checkName(const std::string& name);
  /// <run>/directions/<name>.json.
  static std::string pathIn(const std::string& run, const std::string& name);

  /// Writes `direction` to `path` atomically; its folder is made when missing, the one above it
  /// must exist (a mistyped run folder is not made).
  static Status write(const std::string& path, const LatentDirection& direction);
  /// Reads `path`; with `nz` set, a vector of another length is refused, naming both. The
  /// strength must be in range (an eigenvalue ≥ 0, a share or an accuracy in [0, 1]).
  static Result<LatentDirection> read(const std::string& path, std::optional<int> nz = std::nullopt);

  /// The names of a run's direction files (regular files NAME.json with a valid name), sorted;
  /// they are not read: read() each, and say which could not be.
  static std::vector<std::string> list(const std::string& run);
  /// Renames <run>/directions/<from>.json to <to>.json (its "name" too, and a NAME.npy beside
  /// it); refuses to overwrite.
  static Status rename(const std::string& run, const std::string& from, const std::string& to);
  /// Deletes <run>/directions/<name>.json (a regular file only) and a <name>.npy beside it.
  static Status remove(const std::string& run, const std::string& name);

  /// The vector as a NumPy .npy file (float32, shape (nz,)), atomically, for Python. A path that
  /// is there and is not a regular file (a FIFO, a device, a symbolic link) is refused.
  static Status writeNpy(const std::string& path, const std::vector<float>& vector);
};

}  // namespace streetgan
