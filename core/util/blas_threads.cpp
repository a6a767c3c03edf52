#include "core/util/blas_threads.h"

#include <dlfcn.h>

namespace streetgan {

void keepBlasSingleThreaded() {
  using SetThreads = void (*)(int);
  if (auto set_blas_threads = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads")))
    set_blas_threads(1);
}

}  // namespace streetgan
