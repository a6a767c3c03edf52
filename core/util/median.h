#pragma once
// median(): the middle of a sample of timings or rates (the mean of the two middle values for an
// even count; 0 for none), as every benchmark and `streetgan bench` command reports its figures.
#include <vector>

namespace streetgan {

double median(std::vector<double> values);

}  // namespace streetgan
