// checkLaunchable (core/train/launch_check.h): the rules the rank launcher and each trainer share,
// as a data table of configs, worlds and resumes against the exact device description or refusal.
// "{absent}" in an expected text stands for cudaAbsence(): why this machine has no CUDA device.
#include "core/train/launch_check.h"
#include "tests/support/test_suite.h"

#include <QTest>

#include <nlohmann/json.hpp>

using namespace streetgan;

class TestLaunchCheck : public QObject {
  Q_OBJECT

private slots:
  void rules_data();
  void rules();
  void lazyRegularisationWithGraphs();
};

void TestLaunchCheck::rules_data() {
  QTest::addColumn<QString>("device");
  QTest::addColumn<QString>("precision");
  QTest::addColumn<bool>("cudaGraphs");
  QTest::addColumn<int>("worldSize");
  QTest::addColumn<int>("ranksPerHost");
  QTest::addColumn<bool>("startsRanks");
  QTest::addColumn<int>("localRank");  // -1: not a rank
  QTest::addColumn<bool>("resume");
  QTest::addColumn<QString>("overrides");
  QTest::addColumn<QString>("expected");  // "ok: <description>", "error: <message>" or "none"

  // clang-format off
  const QString graphs_ranks = "error: config key \"cuda_graphs\": true trains one process, and this job has 2 ranks "
                               "(a graph does not hold the ranks' all-reduce); set it to false";
  const QString one_gpu = " would put every rank on one GPU; with --nproc use --device cuda (rank i trains on cuda:i)";
  QTest::newRow("cpu, fp32") << "cpu" << "fp32" << false << 1 << 1 << false << -1 << false << "{}" << "ok: cpu, fp32";
  QTest::newRow("cpu, bf16") << "cpu" << "bf16" << false << 1 << 1 << false << -1 << false << "{}" << "ok: cpu, bf16";
  QTest::newRow("auto without a GPU")
      << "auto" << "auto" << false << 1 << 1 << false << -1 << false << "{}" << "ok: cpu, fp32 (auto: {absent})";
  QTest::newRow("fp16 on the CPU")
      << "cpu" << "fp16" << false << 1 << 1 << false << -1 << false << "{}"
      << "error: precision \"fp16\" needs a CUDA device; on the CPU use fp32 or bf16";
  QTest::newRow("fp16 on the CPU, resumed")
      << "cpu" << "fp16" << false << 1 << 1 << false << -1 << true << "{}"
      << "error: precision \"fp16\" needs a CUDA device; on the CPU use fp32 or bf16 "
         "(resume with --precision to choose another)";
  QTest::newRow("fp16 on the CPU, given again on resume")
      << "cpu" << "fp16" << false << 1 << 1 << false << -1 << true << "{\"precision\": \"fp16\"}"
      << "error: precision \"fp16\" needs a CUDA device; on the CPU use fp32 or bf16";
  QTest::newRow("a device not allowed")
      << "gpu" << "fp32" << false << 1 << 1 << false << -1 << false << "{}"
      << "error: device \"gpu\" is not allowed; allowed: auto, cpu, cuda, cuda:N or hpu";
  QTest::newRow("cuda without a GPU")
      << "cuda" << "auto" << false << 1 << 1 << false << -1 << false << "{}"
      << "error: device \"cuda\" is not available: {absent} (available: cpu)";
  QTest::newRow("graphs with two ranks") << "cpu" << "fp32" << true << 2 << 2 << true << -1 << false << "{}" << graphs_ranks;
  QTest::newRow("graphs with two ranks, a rank's view")
      << "cpu" << "fp32" << true << 2 << 1 << false << 1 << false << "{}" << graphs_ranks;
  QTest::newRow("graphs with two ranks, kept from the run")
      << "cpu" << "fp32" << true << 2 << 2 << true << -1 << true << "{}"
      << graphs_ranks + " (resume with --cuda-graphs off)";
  QTest::newRow("graphs with two ranks, given again on resume")
      << "cpu" << "fp32" << true << 2 << 2 << true << -1 << true << "{\"cuda_graphs\": true}" << graphs_ranks;
  QTest::newRow("graphs on the CPU")
      << "cpu" << "fp32" << true << 1 << 1 << false << -1 << false << "{}"
      << "error: config key \"cuda_graphs\": true needs a CUDA device, and this run trains on cpu, fp32; set it to false";
  QTest::newRow("graphs on the CPU, the run's config unread")
      << "cpu" << "" << true << 1 << 1 << true << -1 << true << "{}"
      << "error: config key \"cuda_graphs\": true needs a CUDA device, and this run trains on cpu; set it to false "
         "(resume with --cuda-graphs off)";
  QTest::newRow("launcher: one GPU for two ranks")
      << "cuda:1" << "auto" << false << 2 << 2 << true << -1 << false << "{}" << "error: --device cuda:1" + one_gpu;
  QTest::newRow("launcher: the run's device, one GPU for two ranks")
      << "cuda:1" << "auto" << false << 2 << 2 << true << -1 << true << "{}" << "error: the run's device cuda:1" + one_gpu;
  QTest::newRow("launcher: --device given again on resume")
      << "cuda:1" << "auto" << false << 2 << 2 << true << -1 << true << "{\"device\": \"cuda:1\"}"
      << "error: --device cuda:1" + one_gpu;
  QTest::newRow("launcher: cuda for two ranks without a GPU")
      << "cuda" << "auto" << false << 4 << 2 << true << -1 << false << "{}"
      << "error: --nproc 2 --device cuda needs a CUDA device for each rank: {absent}";
  QTest::newRow("launcher: the run's cuda for two ranks without a GPU")
      << "cuda" << "auto" << false << 2 << 2 << true << -1 << true << "{}"
      << "error: --nproc 2 with the run's device cuda needs a CUDA device for each rank: {absent}";
  QTest::newRow("the per-host rules are the launcher's")
      << "cuda:1" << "auto" << false << 2 << 2 << false << -1 << false << "{}"
      << "error: device \"cuda:1\" is not available: {absent} (available: cpu)";
  QTest::newRow("a rank checks its own device")
      << "cuda" << "auto" << false << 2 << 1 << false << 1 << false << "{}"
      << "error: device \"cuda:1\" is not available: {absent} (available: cpu)";
  QTest::newRow("a rank on the CPU") << "cpu" << "fp32" << false << 2 << 1 << false << 1 << false << "{}" << "ok: cpu, fp32";
  QTest::newRow("auto ranks on a host without a GPU")
      << "auto" << "auto" << false << 4 << 4 << true << -1 << false << "{}" << "ok: cpu, fp32 (auto: {absent})";
  QTest::newRow("the run's config unread") << "" << "" << false << 2 << 2 << true << -1 << true << "{}" << "none";
  // clang-format on
}

void TestLaunchCheck::rules() {
  QFETCH(QString, device);
  QFETCH(QString, precision);
  QFETCH(bool, cudaGraphs);
  QFETCH(int, worldSize);
  QFETCH(int, ranksPerHost);
  QFETCH(bool, startsRanks);
  QFETCH(int, localRank);
  QFETCH(bool, resume);
  QFETCH(QString, overrides);
  QFETCH(QString, expected);
  if (visibleCudaDevices() > 0) QSKIP("the table is written for a machine without a CUDA device");

  TrainConfig config;
  config.device = device.toStdString();
  config.precision = precision.toStdString();
  config.cuda_graphs = cudaGraphs;
  TrainerOptions options;
  options.resume = resume;
  options.resume_overrides = nlohmann::json::parse(overrides.toStdString());
  if (localRank >= 0) {
    RankPlacement placement;
    placement.rank = localRank;
    placement.local_rank = localRank;
    placement.world_size = worldSize;
    placement.local_world_size = worldSize;
    options.placement = placement;
  }
  LaunchWorld world;
  world.world_size = worldSize;
  world.ranks_per_host = ranksPerHost;
  world.starts_ranks = startsRanks;

  const auto checked = checkLaunchable(config, options, world);
  QString got = !checked    ? "error: " + QString::fromStdString(checked.error())
                : !*checked ? QString("none")
                            : "ok: " + QString::fromStdString((*checked)->description);
  expected.replace("{absent}", QString::fromStdString(cudaAbsence()));
  QCOMPARE(got, expected);
}

// A CUDA graph replays one recording of the step: it cannot penalise only every k-th step. Refused
// before the device is looked at; on resume the recipe is the run's, so only the graphs can go.
void TestLaunchCheck::lazyRegularisationWithGraphs() {
  TrainConfig config;
  config.device = "cpu";
  config.cuda_graphs = true;
  config.r2_gamma = 2;
  config.reg_every = 3;
  TrainerOptions options;
  auto checked = checkLaunchable(config, options, LaunchWorld{});
  QVERIFY(!checked.ok());
  QCOMPARE(QString::fromStdString(checked.error()),
           QString("config key \"cuda_graphs\": true cannot go with lazy regularisation (reg_every 3 with r2_gamma 2); "
                   "set reg_every to 1 or cuda_graphs to false"));
  config.r1_gamma = 10;
  config.r2_gamma = 0.5;
  options.resume = true;
  options.resume_overrides = nlohmann::json{{"cuda_graphs", true}};
  checked = checkLaunchable(config, options, LaunchWorld{});
  QVERIFY(!checked.ok());
  QCOMPARE(QString::fromStdString(checked.error()),
           QString("config key \"cuda_graphs\": true cannot go with the run's lazy regularisation (reg_every 3 with "
                   "r1_gamma 10 and r2_gamma 0.5); resume with --cuda-graphs off"));
  // G learning every other step: a graph cannot hold that either.
  TrainConfig critic;
  critic.device = "cpu";
  critic.cuda_graphs = true;
  critic.n_critic = 2;
  checked = checkLaunchable(critic, TrainerOptions(), LaunchWorld{});
  QVERIFY(!checked.ok());
  QCOMPARE(QString::fromStdString(checked.error()),
           QString("config key \"cuda_graphs\": true cannot go with n_critic 2 (G learns every 2 steps); set n_critic "
                   "to 1 or cuda_graphs to false"));
  // D's augmentations draw from a generator of their own: a graph would replay one draw.
  TrainConfig augmented;
  augmented.device = "cpu";
  augmented.cuda_graphs = true;
  augmented.augment.diff = "translation,cutout";
  checked = checkLaunchable(augmented, TrainerOptions(), LaunchWorld{});
  QVERIFY(!checked.ok());
  QCOMPARE(QString::fromStdString(checked.error()),
           QString("config key \"cuda_graphs\": true cannot go with augment.diff \"translation,cutout\"; set "
                   "augment.diff to \"\" or cuda_graphs to false"));
  augmented.augment.diff = "";
  augmented.augment.ada_target = 0.6;
  checked = checkLaunchable(augmented, TrainerOptions(), LaunchWorld{});
  QVERIFY(!checked.ok());
  QCOMPARE(QString::fromStdString(checked.error()),
           QString("config key \"cuda_graphs\": true cannot go with ADA (augment.ada_target 0.6); set "
                   "augment.ada_target to 0 or cuda_graphs to false"));
  // Every step penalised: a graph can hold it; the CPU is what refuses it here.
  config.reg_every = 1;
  options = TrainerOptions();
  checked = checkLaunchable(config, options, LaunchWorld{});
  QVERIFY(!checked.ok());
  QVERIFY2(QString::fromStdString(checked.error()).contains("needs a CUDA device"), checked.error().c_str());
}

STREETGAN_TEST_GUILESS_MAIN(TestLaunchCheck)
#include "tst_launch_check.moc"
