#pragma once
// The command lines of the benchmarks (bench train, data, allreduce, explore, metrics) and how
// each words its model options. Made without LibTorch (command_lines.h says why).
#include "app/cli/command_line.h"
#include "app/cli/option_specs.h"

namespace streetgan::cli {

ModelOptionsUse benchTrainModelUse();
CommandLine benchTrainCommandLine();
CommandLine benchDataCommandLine();
ModelOptionsUse benchAllReduceModelUse();
CommandLine benchAllReduceCommandLine();
ModelOptionsUse studioModelUse();
CommandLine benchExploreCommandLine();
CommandLine benchMetricsCommandLine();

}  // namespace streetgan::cli
