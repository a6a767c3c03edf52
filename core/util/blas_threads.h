#pragma once
// OpenBLAS under LibTorch: LibTorch splits a convolution over its own (OpenMP) threads and calls
// BLAS from each of them; a multi-threaded OpenBLAS underneath would then run threads × cores
// threads on the cores (2-4× slower on 2 cores, bench/README.md).

namespace streetgan {

/// Keeps OpenBLAS to one thread when the process has OpenBLAS (looked up at run time: another
/// BLAS, or none, is left as it is). The commands that set their compute threads call it through
/// setComputeThreads (core/train/compute_device.h), and the features worker itself.
void keepBlasSingleThreaded();

}  // namespace streetgan
