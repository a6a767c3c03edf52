#include "core/util/symmetric_eigen.h"

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <dlfcn.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <string>
#include <vector>

namespace streetgan {
namespace {

// Fortran LAPACK/BLAS with 32-bit integers (the reference interface LibTorch's CPU build links);
// the trailing lengths are gfortran's hidden string lengths.
using Dsyevr = void (*)(const char* jobz, const char* range, const char* uplo, const int* n, double* a, const int* lda,
                        const double* vl, const double* vu, const int* il, const int* iu, const double* abstol, int* m,
                        double* w, double* z, const int* ldz, int* isuppz, double* work, const int* lwork, int* iwork,
                        const int* liwork, int* info, std::size_t, std::size_t, std::size_t);
using Dsyrk = void (*)(const char* uplo, const char* trans, const int* n, const int* k, const double* alpha,
                       const double* a, const int* lda, const double* beta, double* c, const int* ldc, std::size_t,
                       std::size_t);

struct Lapack {
  Dsyevr dsyevr = nullptr;
  Dsyrk dsyrk = nullptr;
  static const Lapack& get() {
    static const Lapack lapack = [] {
      Lapack l;
      l.dsyevr = reinterpret_cast<Dsyevr>(dlsym(RTLD_DEFAULT, "dsyevr_"));
      l.dsyrk = reinterpret_cast<Dsyrk>(dlsym(RTLD_DEFAULT, "dsyrk_"));
      return l;
    }();
    return lapack;
  }
};

// A fixed number of blocks, so that the sums are added in the same order on any number of threads.
constexpr std::int64_t kParts = 4;

// The parts' upper triangles (row-major; dsyrk "L" of the column-major view writes only those)
// added in part order into the first, then mirrored to its lower triangle: in place, row blocks
// on LibTorch's threads, no (d, d) temporaries (they cost more than the products at d = 3,072).
torch::Tensor sumUpperAndMirror(std::vector<torch::Tensor>& parts) {
  std::vector<const double*> others;
  for (std::size_t p = 1; p < parts.size(); ++p)
    if (parts[p].defined()) others.push_back(parts[p].data_ptr<double>());
  torch::Tensor sum = parts.front();
  double* out = sum.data_ptr<double>();
  const std::int64_t d = sum.size(0);
  constexpr std::int64_t kBlock = 64;
  at::parallel_for(0, d, kBlock, [&](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t i = lo; i < hi; ++i)
      for (const double* part : others)
        for (std::int64_t j = i; j < d; ++j) out[i * d + j] += part[i * d + j];
  });
  at::parallel_for(0, (d + kBlock - 1) / kBlock, 1, [&](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t block = lo; block < hi; ++block) {
      const std::int64_t row_end = std::min(d, (block + 1) * kBlock);
      for (std::int64_t column_block = 0; column_block <= block; ++column_block)
        for (std::int64_t i = block * kBlock; i < row_end; ++i)
          for (std::int64_t j = column_block * kBlock; j < std::min(i, (column_block + 1) * kBlock); ++j)
            out[i * d + j] = out[j * d + i];
    }
  });
  return sum;
}

}  // namespace

bool SymmetricEigen::usesLapack() { return Lapack::get().dsyevr && Lapack::get().dsyrk; }

torch::Tensor SymmetricEigen::gram(const torch::Tensor& x) {
  const torch::Tensor rows = x.to(torch::kFloat64).contiguous();
  const std::int64_t n = rows.size(0), d = rows.size(1), parts = std::max<std::int64_t>(1, std::min(kParts, n));
  const std::int64_t each = (n + parts - 1) / parts;
  const Lapack& lapack = Lapack::get();
  if (n == 0) return torch::zeros({d, d}, torch::kFloat64);
  const bool direct = lapack.dsyrk && d <= INT_MAX && each <= INT_MAX;
  std::vector<torch::Tensor> partial(static_cast<std::size_t>(parts));
  at::parallel_for(0, parts, 1, [&](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t p = lo; p < hi; ++p) {
      const std::int64_t begin = p * each, count = std::min(each, n - begin);
      if (count <= 0) continue;
      const torch::Tensor block = rows.narrow(0, begin, count);
      if (!direct) {
        partial[static_cast<std::size_t>(p)] = torch::mm(block.t(), block);
        continue;
      }
      // Row-major (count, d) is column-major Xᵀ (d, count): XᵀX = Xᵀ(Xᵀ)ᵀ, dsyrk "N".
      torch::Tensor c = torch::empty({d, d}, torch::kFloat64);  // beta 0: dsyrk writes its triangle, reads none
      const int nd = static_cast<int>(d), k = static_cast<int>(count);
      const double one = 1.0, zero = 0.0;
      lapack.dsyrk("L", "N", &nd, &k, &one, block.data_ptr<double>(), &nd, &zero, c.data_ptr<double>(), &nd, 1, 1);
      partial[static_cast<std::size_t>(p)] = c;
    }
  });
  return sumUpperAndMirror(partial);
}

Result<EigenPairs> SymmetricEigen::largest(const torch::Tensor& symmetric, std::int64_t k) {
  const std::int64_t d = symmetric.size(0);
  if (symmetric.dim() != 2 || symmetric.size(1) != d || k < 1 || k > d)
    return makeError("eigenpairs: needs a square matrix and 1 to " + std::to_string(d) + " of them, asked for " +
                     std::to_string(k));
  const Lapack& lapack = Lapack::get();
  if (!lapack.dsyevr || d > INT_MAX / 26) {
    auto [values, vectors] = at::linalg_eigh(symmetric.to(torch::kFloat64), "L");  // ascending
    return EigenPairs{values.slice(0, d - k, d).flip({0}).contiguous(),
                      vectors.slice(1, d - k, d).flip({1}).contiguous()};
  }
  torch::Tensor a = symmetric.to(torch::kFloat64).contiguous().clone();  // dsyevr overwrites it
  const int n = static_cast<int>(d), il = static_cast<int>(d - k + 1), iu = n;
  const double unused = 0.0, abstol = 0.0;
  int found = 0, info = 0, lwork = -1, liwork = -1, iwork_size = 0;
  double work_size = 0;
  torch::Tensor w = torch::empty({d}, torch::kFloat64), z = torch::empty({k, d}, torch::kFloat64);
  std::vector<int> isuppz(static_cast<std::size_t>(2 * k));
  lapack.dsyevr("V", "I", "L", &n, a.data_ptr<double>(), &n, &unused, &unused, &il, &iu, &abstol, &found,
                w.data_ptr<double>(), z.data_ptr<double>(), &n, isuppz.data(), &work_size, &lwork, &iwork_size,
                &liwork, &info, 1, 1, 1);
  if (info != 0) return makeError("eigenpairs: LAPACK's dsyevr refused the workspace query (info " + std::to_string(info) + ")");
  lwork = static_cast<int>(work_size) + 1;
  liwork = iwork_size;
  std::vector<double> work(static_cast<std::size_t>(lwork));
  std::vector<int> iwork(static_cast<std::size_t>(std::max(1, liwork)));
  lapack.dsyevr("V", "I", "L", &n, a.data_ptr<double>(), &n, &unused, &unused, &il, &iu, &abstol, &found,
                w.data_ptr<double>(), z.data_ptr<double>(), &n, isuppz.data(), work.data(), &lwork, iwork.data(),
                &liwork, &info, 1, 1, 1);
  if (info != 0 || found != k)
    return makeError("eigenpairs: LAPACK's dsyevr did not converge (info " + std::to_string(info) + ", " +
                     std::to_string(found) + " of " + std::to_string(k) + " found)");
  // z holds the vectors as rows (column-major d × k), values ascending.
  return EigenPairs{w.narrow(0, 0, k).flip({0}).contiguous(), z.flip({0}).t().contiguous()};
}

}  // namespace streetgan
