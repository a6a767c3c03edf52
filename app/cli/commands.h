#pragma once
// The `streetgan` subcommands. Each takes the words after its name and returns the exit code:
// 0 ok, 2 usage or config error (nothing was started), 1 runtime failure.
#include <string>
#include <vector>

namespace streetgan::cli {

using Args = std::vector<std::string>;

int runTrain(const Args& args);
int runInfo(const Args& args);
int runSample(const Args& args);
int runNearest(const Args& args);
int runDemoData(const Args& args);
int runBench(const Args& args);
int runBenchData(const Args& args);
int runBenchAllReduce(const Args& args);
int runBenchExplore(const Args& args);
int runBenchMetrics(const Args& args);
int runData(const Args& args);
int runCache(const Args& args);
int runParzen(const Args& args);
int runMetrics(const Args& args);
int runWalk(const Args& args);
int runDirections(const Args& args);
int runProject(const Args& args);
int runRemote(const Args& args);
int runTensorBoard(const Args& args);
int runImport(const Args& args);
int runExport(const Args& args);
int runServe(const Args& args);
int runPublish(const Args& args);
int runFeaturesWorker(const Args& args);

}  // namespace streetgan::cli
