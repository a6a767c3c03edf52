#include "series_smoothing.h"

#include <algorithm>
#include <cmath>

namespace streetgan {

std::vector<double> smoothSeries(const std::vector<double>& values, double weight) {
  if (values.empty() || !(weight > 0)) return values;
  weight = std::min(weight, 0.999999);
  const bool constant = std::all_of(values.begin(), values.end(), [&](double v) { return v == values.front(); });
  if (constant) return values;
  std::vector<double> out(values.size());
  double last = 0;
  double weight_power = 1;  // w^n after n finite points
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double v = values[i];
    if (!std::isfinite(v)) {
      out[i] = v;
      continue;
    }
    last = last * weight + (1 - weight) * v;
    weight_power *= weight;
    out[i] = last / (1 - weight_power);
  }
  return out;
}

std::vector<std::size_t> decimateForDrawing(const std::vector<double>& xs, const std::vector<double>& ys,
                                            double x_min, double x_max, int columns) {
  std::vector<std::size_t> out;
  const std::size_t n = std::min(xs.size(), ys.size());
  if (n == 0 || columns < 1 || !(x_max > x_min)) return out;
  const auto first = static_cast<std::size_t>(std::lower_bound(xs.begin(), xs.begin() + n, x_min) - xs.begin());
  const auto end = static_cast<std::size_t>(std::upper_bound(xs.begin(), xs.begin() + n, x_max) - xs.begin());
  if (first > 0) out.push_back(first - 1);
  const double per_column = columns / (x_max - x_min);
  std::size_t i = first;
  while (i < end) {
    const auto column = static_cast<long long>(std::floor((xs[i] - x_min) * per_column));
    std::size_t j = i, low = i, high = i;
    while (j < end && static_cast<long long>(std::floor((xs[j] - x_min) * per_column)) == column) {
      if (ys[j] < ys[low]) low = j;
      if (ys[j] > ys[high]) high = j;
      ++j;
    }
    const std::size_t last = j - 1;
    // first, then the extremes in x order, then last; duplicates removed.
    std::size_t picks[4] = {i, std::min(low, high), std::max(low, high), last};
    for (std::size_t pick : picks)
      if (out.empty() || out.back() < pick) out.push_back(pick);
    i = j;
  }
  if (end < n) out.push_back(end);
  return out;
}

}  // namespace streetgan
