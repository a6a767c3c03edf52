// The training step as a CUDA graph (GraphedTrainStep, the `cuda_graphs` key). Everywhere: the
// refusals, in their order, naming the key. On a CUDA device (STREETGAN_TEST_DEVICE=cuda, in a
// build with CUDA graphs): graphed steps give what eager steps give, step by step, through the
// warm-up, the recording, the replays and a short batch between them, in fp32, bf16 and fp16.
#include "core/config/train_config.h"
#include "core/train/compute_device.h"
#include "core/train/cuda_graph.h"
#include "core/train/dcgan_step.h"
#include "core/train/graphed_train_step.h"
#include "core/train/multi_tensor_adamw.h"
#include "core/util/torch_compat.h"
#include "tests/support/test_device.h"
#include "tests/support/test_suite.h"
#include "tests/support/tiny_train_config.h"

#include <QtTest>
#include <torch/torch.h>

#include <stdexcept>

using namespace streetgan;
using streetgan::test::testDevice;
using streetgan::test::tinyTrainConfig;

namespace {

double maxDifference(const torch::Tensor& a, const torch::Tensor& b) {
  return (a.detach().cpu().to(torch::kFloat64) - b.detach().cpu().to(torch::kFloat64)).abs().max().item<double>();
}

}  // namespace

class TestGraphedTrainStep : public QObject {
  Q_OBJECT
private slots:
  void initTestCase() { setComputeThreads(streetgan::test::testThreads()); }
  void refusals_data();
  void refusals();
  void aCudaDeviceIsRefusedOnlyWhereTheBuildCannot();
  void noGraphOffCuda();
  void graphedStepsEqualEagerSteps_data();
  void graphedStepsEqualEagerSteps();
};

void TestGraphedTrainStep::refusals_data() {
  QTest::addColumn<QString>("device");
  QTest::addColumn<qint64>("world");
  QTest::addColumn<QString>("said");
  QTest::addColumn<QString>("expected");
  const QString key = "config key \"cuda_graphs\": true ";
  QTest::newRow("cpu") << "cpu" << qint64{1} << ""
                       << key + "needs a CUDA device, and this run trains on cpu; set it to false";
  QTest::newRow("cpu, said as the run's device line")
      << "cpu" << qint64{1} << "cpu, fp32 (auto: this LibTorch was built without CUDA)"
      << key + "needs a CUDA device, and this run trains on cpu, fp32 (auto: this LibTorch was built without CUDA); set it to false";
  QTest::newRow("hpu") << "hpu:0" << qint64{1} << "" << key + "needs a CUDA device, and this run trains on hpu:0; set it to false";
  // The ranks are named first: the launcher refuses them before any rank has a device.
  QTest::newRow("two ranks on CUDA") << "cuda:0" << qint64{2} << ""
      << key + "trains one process, and this job has 2 ranks (a graph does not hold the ranks' all-reduce); set it to false";
  QTest::newRow("65536 ranks on the CPU") << "cpu" << qint64{65536} << ""
      << key + "trains one process, and this job has 65536 ranks (a graph does not hold the ranks' all-reduce); set it to false";
}

void TestGraphedTrainStep::refusals() {
  QFETCH(QString, device);
  QFETCH(qint64, world);
  QFETCH(QString, said);
  QFETCH(QString, expected);
  QCOMPARE(QString::fromStdString(cudaGraphsRefusal(c10::Device(device.toStdString()), world, said.toStdString())), expected);
}

// cuda:0 with one rank: refused only for what this build lacks (fused AdamW on CUDA before
// LibTorch 2.0; CUDA graphs in a build without CUDA), and then for that.
void TestGraphedTrainStep::aCudaDeviceIsRefusedOnlyWhereTheBuildCannot() {
  const c10::Device cuda(c10::kCUDA, 0);
  const QString refusal = QString::fromStdString(cudaGraphsRefusal(cuda, 1));
  if (!torch_compat::hasFusedAdamW(cuda)) {
    QVERIFY2(refusal.startsWith("config key \"cuda_graphs\": true needs LibTorch's fused AdamW on CUDA (LibTorch 2.0 or "
                                "newer); this is "),
             qPrintable(refusal));
  } else if (!CudaGraph::unavailableReason(cuda).empty()) {
    QVERIFY2(refusal.startsWith("config key \"cuda_graphs\": true cannot be used: this build has no CUDA graphs"),
             qPrintable(refusal));
  } else {
    QCOMPARE(refusal, QString());
  }
  QVERIFY2(refusal.isEmpty() || refusal.endsWith("; set it to false"), qPrintable(refusal));
  QVERIFY(!CudaGraph::unavailableReason(c10::Device(c10::kCPU)).empty());
}

// A graph is never made for a device the refusal names: that is a programming error.
void TestGraphedTrainStep::noGraphOffCuda() {
  DcganStep model(tinyTrainConfig(), c10::Device(c10::kCPU), Precision::Fp32);
  bool threw = false;
  try {
    GraphedTrainStep graphed(model, nullptr);
  } catch (const std::logic_error& e) {
    threw = QString(e.what()).contains("needs a CUDA device");
  }
  QVERIFY(threw);
  QVERIFY_THROWS_EXCEPTION(std::logic_error, CudaGraph(c10::Device(c10::kCPU)));
}

void TestGraphedTrainStep::graphedStepsEqualEagerSteps_data() {
  QTest::addColumn<int>("precision");
  QTest::newRow("fp32") << static_cast<int>(Precision::Fp32);
  QTest::newRow("bf16") << static_cast<int>(Precision::Bf16);
  QTest::newRow("fp16") << static_cast<int>(Precision::Fp16);
}

// Two models from one seed, one eager and one graphed, fed the same batches: 3 warm-up steps, the
// recorded one, replays, a short batch (eager, with the labels' first rows) and replays again.
void TestGraphedTrainStep::graphedStepsEqualEagerSteps() {
  const c10::Device device = testDevice();
  if (!device.is_cuda()) QSKIP("needs STREETGAN_TEST_DEVICE=cuda (a GPU): the CPU path is the refusal above");
  if (const std::string why = cudaGraphsRefusal(device, 1); !why.empty()) QSKIP(why.c_str());
  QFETCH(int, precision);
  const TrainConfig config = tinyTrainConfig();
  DcganStep eager(config, device, static_cast<Precision>(precision));
  DcganStep model(config, device, static_cast<Precision>(precision));
  QStringList warnings;
  GraphedTrainStepOptions options;
  options.batch_size = config.batch_size;
  GraphedTrainStep graphed(model, [&warnings](const std::string& m) { warnings << QString::fromStdString(m); }, options);

  const auto tensor_options = torch::TensorOptions().device(device);
  torch::manual_seed(11);
  const std::vector<std::int64_t> batches{8, 8, 8, 8, 8, 8, 4, 8, 8, 8};
  for (std::size_t i = 0; i < batches.size(); ++i) {
    const auto real = torch::rand({batches[i], 3, 64, 64}, tensor_options) * 2 - 1;
    const auto noise = torch::randn({batches[i], config.nz, 1, 1}, tensor_options);
    const auto expected = eager.trainStep(real, noise);
    const auto got = graphed.trainStep(real, noise);
    QCOMPARE(got.device(), expected.device());
    // cuDNN's autotuner may choose other kernels for the two models: agreement to rounding.
    const double difference = maxDifference(got, expected);
    QVERIFY2(difference < 2e-3, qPrintable(QString("step %1: statistics differ by %2").arg(i + 1).arg(difference)));
  }
  QVERIFY2(warnings.isEmpty(), qPrintable(warnings.join('\n')));
  QVERIFY(graphed.captured());
  QCOMPARE(graphed.eagerSteps(), std::int64_t{4});  // 3 warm-up steps and the short batch
  QCOMPARE(graphed.replays(), std::int64_t{6});     // the recorded step and 5 more
  const auto a = eager.generator()->parameters(), b = model.generator()->parameters();
  for (std::size_t i = 0; i < a.size(); ++i)
    QVERIFY2(maxDifference(a[i], b[i]) < 1e-3, qPrintable(QString("G parameter %1 differs").arg(i)));
  const auto c = eager.discriminator()->parameters(), d = model.discriminator()->parameters();
  for (std::size_t i = 0; i < c.size(); ++i)
    QVERIFY2(maxDifference(c[i], d[i]) < 1e-3, qPrintable(QString("D parameter %1 differs").arg(i)));
  // The optimizers' step counts, read back from the device for a checkpoint, count the replays too.
  const auto steps = [](MultiTensorAdamW& optimizer) {
    torch::serialize::OutputArchive archive;
    optimizer.save(archive);  // brings the host counts up to date from the device
    std::vector<std::int64_t> counts;
    for (const auto& entry : optimizer.state())
      counts.push_back(static_cast<const torch::optim::AdamWParamState&>(*entry.second).step());
    return counts;
  };
  QCOMPARE(steps(model.optimizerG()), steps(eager.optimizerG()));
  QCOMPARE(steps(model.optimizerD()), steps(eager.optimizerD()));
  QVERIFY(!steps(model.optimizerD()).empty());
  if (static_cast<Precision>(precision) != Precision::Fp16)
    QCOMPARE(steps(model.optimizerD()).front(), static_cast<std::int64_t>(batches.size()));
  else
    QCOMPARE(model.scaler().currentScale(), eager.scaler().currentScale());
}

STREETGAN_TEST_GUILESS_MAIN(TestGraphedTrainStep)
#include "tst_graphed_train_step.moc"
