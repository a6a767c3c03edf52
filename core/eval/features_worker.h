#pragma once
// FeaturesWorker: the process that runs a features network for `metrics --features` (a
// TorchScript file is code): `streetgan features-worker` with the words of
// FeaturesWorkerArguments, its standard input one end of a socket pair (FeaturesChannel). It
// loads the network (TorchScriptNetwork, every check), refuses a file whose SHA-256 is not the one
// the caller hashed, answers Ready or Failure, then the features of each Batch until the caller
// closes the socket. The caller (NetworkFeatures) bounds its memory and time and stops it with
// SIGKILL, which no network can ignore.
#include "core/util/result.h"

#include <string>
#include <vector>

namespace streetgan {

struct FeaturesWorkerArguments {
  std::string network;     ///< the TorchScript file
  int input_size = 299;    ///< S: the batches' images are (3, S, S)
  std::string device = "cpu";
  std::string sha256;      ///< the file's digest as the caller read it
  int threads = 0;         ///< CPU threads; 0: LibTorch's default

  /// The words that give these arguments on the worker's command line.
  std::vector<std::string> toWords() const;
  /// The arguments those words give; an Error names a missing or bad option.
  static Result<FeaturesWorkerArguments> fromWords(const std::vector<std::string>& words);
};

/// Serves the caller on the connected socket `fd` until it closes it: 0 then, 1 when the network
/// did not load or the caller sent what the protocol does not allow.
int runFeaturesWorker(const FeaturesWorkerArguments& arguments, int fd);

}  // namespace streetgan
