#include "core/util/series_smoothing.h"

#include <algorithm>
#include <cmath>

namespace streetgan {

std::vector<double> smoothSeries(const std::vector<double>& values, double weight) {
  if (values.empty() || !(weight > 0)) return values;
  weight = std::min(weight, 0.999999);
  const bool constant = std::all_of(values.begin(), values.end(), [&](double v) { return v == values.front(); });
  if (constant) return values;
  std::vector<double> out(values.size());
  SmoothingState state;
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = smoothNext(state, values[i], weight);
  return out;
}

double smoothNext(SmoothingState& state, double value, double weight) {
  if (!std::isfinite(value)) return value;
  if (!(weight > 0)) return value;
  weight = std::min(weight, 0.999999);
  state.last = state.last * weight + (1 - weight) * value;
  state.weight_power *= weight;
  return state.last / (1 - state.weight_power);
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
    // The column of point i, and where it ends: found by bisection, then one tight min/max pass.
    const double column = std::floor((xs[i] - x_min) * per_column);
    const double column_end = x_min + (column + 1) / per_column;
    std::size_t j = static_cast<std::size_t>(std::lower_bound(xs.begin() + i, xs.begin() + end, column_end) - xs.begin());
    if (j <= i) j = i + 1;
    std::size_t low = i, high = i;
    for (std::size_t k = i + 1; k < j; ++k) {
      if (ys[k] < ys[low]) low = k;
      if (ys[k] > ys[high]) high = k;
    }
    const std::size_t last = j - 1;
    // first, then the extremes in x order, then last; duplicates removed.
    const std::size_t picks[4] = {i, std::min(low, high), std::max(low, high), last};
    for (std::size_t pick : picks)
      if (out.empty() || out.back() < pick) out.push_back(pick);
    i = j;
  }
  if (end < n) out.push_back(end);
  return out;
}

}  // namespace streetgan
