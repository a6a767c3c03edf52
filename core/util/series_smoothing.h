#pragma once
// Chart math for the training dashboard, on plain vectors (no Qt):
// - smoothSeries(): TensorBoard's debiased exponential moving average. With weight w in [0, 1),
//   s_t = w·s_{t−1} + (1 − w)·y_t from s_0 = 0, divided by (1 − w^n) after n finite points, so the
//   first points are not pulled toward zero. Non-finite points pass through unsmoothed and do not
//   enter the average; a constant series is returned as it is.
// - decimateForDrawing(): which points to draw so a million-point series stays fluid: within each
//   pixel column the first, lowest, highest and last point, in x order, so every spike survives
//   and the line's shape is exact at that resolution. Every point is kept in the series itself.
#include <cstddef>
#include <vector>

namespace streetgan {

std::vector<double> smoothSeries(const std::vector<double>& values, double weight);

/// The running state of smoothSeries(), for series that grow a point at a time.
struct SmoothingState {
  double last = 0;
  double weight_power = 1;  ///< weight^n after n finite points
};
/// The smoothed value of the next point; the same numbers smoothSeries() gives (for a series
/// that is not constant).
double smoothNext(SmoothingState& state, double value, double weight);

/// Indices of the points of (xs, ys) to draw, xs ascending, in a view from x_min to x_max that is
/// `columns` pixels wide: at most 4 per column, plus the nearest point outside the view on each
/// side (so lines run to the edges). Empty when the view is empty or columns < 1.
std::vector<std::size_t> decimateForDrawing(const std::vector<double>& xs, const std::vector<double>& ys,
                                            double x_min, double x_max, int columns);

}  // namespace streetgan
