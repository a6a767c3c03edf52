#include "core/runs/run_directory.h"
#include "core/train/checkpoint.h"
#include "core/train/dcgan_step.h"
#include "core/train/generator_average.h"
#include "tests/support/test_device.h"
#include "tests/support/test_suite.h"

#include <QtTest>

#include <sys/stat.h>
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <ATen/CPUGeneratorImpl.h>

using namespace streetgan;
using streetgan::test::testDevice;

namespace {

TrainConfig tinyConfig() {
  TrainConfig c;
  c.nz = 16;
  c.ngf = 8;
  c.ndf = 8;
  c.batch_size = 8;
  c.seed = 11;
  return c;
}

std::vector<torch::Tensor> stateOf(DcganStep& model) {
  std::vector<torch::Tensor> all;
  for (auto* module : {static_cast<torch::nn::Module*>(model.generator().get()),
                       static_cast<torch::nn::Module*>(model.discriminator().get())}) {
    for (const auto& p : module->parameters()) all.push_back(p.detach().clone());
    for (const auto& b : module->buffers()) all.push_back(b.detach().clone());
  }
  return all;
}

bool bitEqual(const torch::Tensor& a, const torch::Tensor& b) {
  const auto ha = a.cpu().contiguous(), hb = b.cpu().contiguous();
  return ha.sizes() == hb.sizes() && ha.dtype() == hb.dtype() &&
         std::memcmp(ha.data_ptr(), hb.data_ptr(), ha.nbytes()) == 0;
}

}  // namespace

class TestCheckpoint : public QObject {
  Q_OBJECT
private slots:
  void initTestCase() { torch::set_num_threads(2); }
  void stepChangesBothNets();
  void roundTripIsBitExact();
  void fp16ResumeOfAnFp32RunStartsTheScalerAfresh();
  void theMovingAverageRoundTrips();
  void whichGeneratorRenders();
  void badFiles_data();
  void badFiles();
  void weightsThatDoNotMatchTheirConfig();
  void unfinishedFilesAreNeverListed();
};

void TestCheckpoint::stepChangesBothNets() {
  const auto config = tinyConfig();
  DcganStep model(config, testDevice(), Precision::Fp32);
  const auto g_before = model.generator()->parameters()[0].detach().clone();
  const auto d_before = model.discriminator()->parameters()[0].detach().clone();
  const auto real = torch::rand({8, 3, 64, 64}).to(testDevice()) * 2 - 1;
  const auto stats = model.step(real, torch::randn({8, 16, 1, 1}).to(testDevice()));
  QVERIFY(!torch::equal(g_before, model.generator()->parameters()[0]));
  QVERIFY(!torch::equal(d_before, model.discriminator()->parameters()[0]));
  QVERIFY(std::isfinite(stats.loss_d) && stats.loss_d > 0);
  QVERIFY(std::isfinite(stats.loss_g) && stats.loss_g > 0);
  for (double p : {stats.d_x, stats.d_g_z1, stats.d_g_z2}) QVERIFY(p > 0 && p < 1);
  // After D's step, D thinks the same fakes are less real.
  QVERIFY(stats.d_g_z2 < stats.d_g_z1);
}

void TestCheckpoint::roundTripIsBitExact() {
  QTemporaryDir dir;
  const auto config = tinyConfig();
  DcganStep model(config, testDevice(), Precision::Fp32);
  const auto real = torch::rand({8, 3, 64, 64}).to(testDevice()) * 2 - 1;
  for (int i = 0; i < 3; ++i) model.step(real, torch::randn({8, 16, 1, 1}).to(testDevice()));

  auto rng = at::make_generator<at::CPUGeneratorImpl>(99);
  torch::randn({5}, rng);  // move the generator off its seed state
  CheckpointState state;
  state.progress = {2, 1, 3, 24};
  state.fixed_noise = torch::randn({4, 16, 1, 1});
  state.noise_rng_state = rng.get_state();
  state.precision = "bf16";
  state.config = config;
  const std::string path = dir.filePath("step.pt").toStdString();
  const Status saved = saveCheckpoint(path, model, state);
  QVERIFY2(saved.ok(), saved.error().c_str());

  DcganStep restored(config, testDevice(), Precision::Fp32);
  auto loaded = loadCheckpoint(path, restored);
  QVERIFY2(loaded.ok(), loaded.error().c_str());
  const auto a = stateOf(model), b = stateOf(restored);
  QCOMPARE(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) QVERIFY2(bitEqual(a[i], b[i]), qPrintable(QString::number(i)));
  QCOMPARE(loaded->progress.epoch, std::int64_t(2));
  QCOMPARE(loaded->progress.batch, std::int64_t(1));
  QCOMPARE(loaded->progress.step, std::int64_t(3));
  QCOMPARE(loaded->progress.images_seen, std::int64_t(24));
  QVERIFY(bitEqual(loaded->fixed_noise, state.fixed_noise));
  QVERIFY(bitEqual(loaded->noise_rng_state, state.noise_rng_state));
  QCOMPARE(configToJson(loaded->config).dump(), configToJson(config).dump());
  QCOMPARE(loaded->precision, std::string("bf16"));
  QCOMPARE(loaded->noise_rng_kind, std::string("cpu"));
  QVERIFY(loaded->scaler_restored);

  // Optimizer moments came back too: the next step is identical, bit for bit on the CPU (to
  // float tolerance on another STREETGAN_TEST_DEVICE, whose kernels may sum in another order).
  const auto noise = torch::randn({8, 16, 1, 1}).to(testDevice());
  const auto s1 = model.step(real, noise);
  const auto s2 = restored.step(real, noise);
  const double tolerance = streetgan::test::testTolerance();
  for (auto [x, y] : {std::pair{s1.loss_d, s2.loss_d}, {s1.loss_g, s2.loss_g}, {s1.d_g_z2, s2.d_g_z2}})
    QVERIFY2(std::abs(x - y) <= tolerance * std::max(1.0, std::abs(y)),
             qPrintable(QString("%1 vs %2").arg(x, 0, 'g', 17).arg(y, 0, 'g', 17)));
  const auto a2 = stateOf(model), b2 = stateOf(restored);
  for (std::size_t i = 0; i < a2.size(); ++i)
    QVERIFY(tolerance == 0 ? bitEqual(a2[i], b2[i]) : torch::allclose(a2[i], b2[i], tolerance, tolerance));
}

// G's moving average (ema.half_life_images) is in the checkpoint and comes back bit for bit; a
// checkpoint of a run without one cannot resume a run that keeps one.
void TestCheckpoint::theMovingAverageRoundTrips() {
  QTemporaryDir dir;
  auto config = tinyConfig();
  config.ema.half_life_images = 40;
  DcganStep model(config, testDevice(), Precision::Fp32);
  const auto real = torch::rand({8, 3, 64, 64}).to(testDevice()) * 2 - 1;
  for (int i = 0; i < 3; ++i) {
    model.step(real, torch::randn({8, 16, 1, 1}).to(testDevice()));
    model.updateAverage(8 * i, 8);
  }
  CheckpointState state;
  state.progress = {1, 0, 3, 24};
  state.fixed_noise = torch::randn({4, 16, 1, 1});
  state.noise_rng_state = at::make_generator<at::CPUGeneratorImpl>(1).get_state();
  state.config = config;
  const std::string path = dir.filePath("ema.pt").toStdString();
  QVERIFY(saveCheckpoint(path, model, state).ok());
  DcganStep restored(config, testDevice(), Precision::Fp32);
  auto loaded = loadCheckpoint(path, restored);
  QVERIFY2(loaded.ok(), loaded.error().c_str());
  auto ours = model.average()->generator()->parameters(), theirs = restored.average()->generator()->parameters();
  for (std::size_t i = 0; i < ours.size(); ++i) QVERIFY(bitEqual(ours[i], theirs[i]));
  auto our_buffers = model.average()->generator()->buffers(), their_buffers = restored.average()->generator()->buffers();
  for (std::size_t i = 0; i < our_buffers.size(); ++i) QVERIFY(bitEqual(our_buffers[i], their_buffers[i]));
  // The average is not G (the checkpoint holds both).
  QVERIFY(!bitEqual(ours[0], restored.generator()->parameters()[0]));

  auto plain_config = tinyConfig();
  DcganStep plain(plain_config, testDevice(), Precision::Fp32);
  state.config = plain_config;
  const std::string plain_path = dir.filePath("plain.pt").toStdString();
  QVERIFY(saveCheckpoint(plain_path, plain, state).ok());
  DcganStep wants_average(config, testDevice(), Precision::Fp32);
  auto refused = loadCheckpoint(plain_path, wants_average);
  QVERIFY(!refused.ok());
  QCOMPARE(QString::fromStdString(refused.error()),
           QString::fromStdString(plain_path + ": the config keeps G's moving average (ema.half_life_images) but the "
                                               "checkpoint holds none"));
  // An average that is not finite renders nothing but NaN: refused when resuming and when rendering.
  {
    torch::NoGradGuard no_grad;
    model.average()->generator()->parameters()[0].view(-1)[0] = NAN;
  }
  state.config = config;
  const std::string nan_path = dir.filePath("nan.pt").toStdString();
  QVERIFY(saveCheckpoint(nan_path, model, state).ok());
  DcganStep another(config, testDevice(), Precision::Fp32);
  auto not_finite = loadCheckpoint(nan_path, another);
  QVERIFY(!not_finite.ok());
  QVERIFY2(QString::fromStdString(not_finite.error()).endsWith("the moving average of G's main.0.weight is not finite"),
           not_finite.error().c_str());
  QVERIFY(!loadCheckpointGenerator(nan_path, torch::kCPU).ok());
  QVERIFY(loadCheckpointGenerator(nan_path, torch::kCPU, GeneratorChoice::Raw).ok());
}

// loadCheckpointGenerator renders with the average when the checkpoint has one, G when asked or
// when it has none; asking for an average a checkpoint lacks names the file and the way out.
void TestCheckpoint::whichGeneratorRenders() {
  QTemporaryDir dir;
  auto config = tinyConfig();
  config.ema.half_life_images = 40;
  DcganStep model(config, testDevice(), Precision::Fp32);
  const auto real = torch::rand({8, 3, 64, 64}).to(testDevice()) * 2 - 1;
  model.step(real, torch::randn({8, 16, 1, 1}).to(testDevice()));
  model.updateAverage(0, 8);
  CheckpointState state;
  state.fixed_noise = torch::randn({4, 16, 1, 1});
  state.noise_rng_state = at::make_generator<at::CPUGeneratorImpl>(1).get_state();
  state.config = config;
  const std::string path = dir.filePath("ema.pt").toStdString();
  QVERIFY(saveCheckpoint(path, model, state).ok());
  const auto first = [](Generator& g) { return g->parameters()[0].detach().cpu(); };

  auto average = loadCheckpointGenerator(path, torch::kCPU);
  QVERIFY2(average.ok(), average.error().c_str());
  QVERIFY(average->average);
  QCOMPARE(std::string(average->generatorName()), std::string("ema"));
  QVERIFY(bitEqual(first(average->generator), first(model.average()->generator())));
  auto named = loadCheckpointGenerator(path, torch::kCPU, GeneratorChoice::Average);
  QVERIFY(named.ok() && named->average);
  auto raw = loadCheckpointGenerator(path, torch::kCPU, GeneratorChoice::Raw);
  QVERIFY2(raw.ok(), raw.error().c_str());
  QVERIFY(!raw->average);
  QCOMPARE(std::string(raw->generatorName()), std::string("raw"));
  QVERIFY(bitEqual(first(raw->generator), first(model.generator())));

  DcganStep plain(tinyConfig(), testDevice(), Precision::Fp32);
  state.config = tinyConfig();
  const std::string plain_path = dir.filePath("plain.pt").toStdString();
  QVERIFY(saveCheckpoint(plain_path, plain, state).ok());
  auto fallback = loadCheckpointGenerator(plain_path, torch::kCPU);
  QVERIFY(fallback.ok() && !fallback->average);
  auto refused = loadCheckpointGenerator(plain_path, torch::kCPU, GeneratorChoice::Average);
  QVERIFY(!refused.ok());
  QCOMPARE(QString::fromStdString(refused.error()),
           QString::fromStdString(plain_path + ": the checkpoint holds no moving average of G (its run had "
                                               "ema.half_life_images 0); choose the raw generator (--generator raw)"));
}

void TestCheckpoint::fp16ResumeOfAnFp32RunStartsTheScalerAfresh() {
  // A run trained on the CPU in fp32 (scaler disabled, scale 1) resumed on a GPU in fp16: the
  // scale of 1 would make fp16 gradients underflow for ~32,000 steps, so the scaler starts at
  // its initial scale and the load says so. (Only loaded here: fp16 steps need CUDA.)
  QTemporaryDir dir;
  const auto config = tinyConfig();
  DcganStep fp32(config, testDevice(), Precision::Fp32);
  CheckpointState state;
  state.fixed_noise = torch::randn({4, 16, 1, 1});
  state.noise_rng_state = at::make_generator<at::CPUGeneratorImpl>(1).get_state();
  state.precision = "fp32";
  state.config = config;
  const std::string path = dir.filePath("fp32.pt").toStdString();
  QVERIFY(saveCheckpoint(path, fp32, state).ok());

  DcganStep fp16(config, testDevice(), Precision::Fp16);
  QVERIFY(fp16.scaler().enabled());
  auto loaded = loadCheckpoint(path, fp16);
  QVERIFY2(loaded.ok(), loaded.error().c_str());
  QVERIFY(!loaded->scaler_restored);
  QCOMPARE(loaded->precision, std::string("fp32"));
  QCOMPARE(fp16.scaler().currentScale(), fp16.scaler().options().init_scale);
  // The nets and optimizers did load.
  const auto a = stateOf(fp32), b = stateOf(fp16);
  for (std::size_t i = 0; i < a.size(); ++i) QVERIFY(bitEqual(a[i], b[i]));
}

void TestCheckpoint::badFiles_data() {
  QTest::addColumn<QByteArray>("content");
  QTest::addColumn<QString>("expected");
  QTest::newRow("empty") << QByteArray() << "cannot read the checkpoint";
  QTest::newRow("text") << QByteArray("hello, not a checkpoint") << "cannot read the checkpoint";
  QTest::newRow("truncated") << QByteArray("TRUNCATE") << "cannot read the checkpoint";
}

void TestCheckpoint::badFiles() {
  QFETCH(QByteArray, content);
  QFETCH(QString, expected);
  QTemporaryDir dir;
  const QString path = dir.filePath("bad.pt");
  if (content == "TRUNCATE") {
    DcganStep model(tinyConfig(), testDevice(), Precision::Fp32);
    CheckpointState state{{}, torch::zeros({1, 16, 1, 1}),
                          at::make_generator<at::CPUGeneratorImpl>(1).get_state(), tinyConfig()};
    QVERIFY(saveCheckpoint(path.toStdString(), model, state).ok());
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadWrite));
    QVERIFY(file.resize(file.size() / 2));
  } else {
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(content);
  }
  DcganStep model(tinyConfig(), testDevice(), Precision::Fp32);
  const auto loaded = loadCheckpoint(path.toStdString(), model);
  QVERIFY(!loaded.ok());
  const QString message = QString::fromStdString(loaded.error());
  QVERIFY2(message.startsWith(path + ": ") && message.contains(expected), qPrintable(message));
  const auto missing = loadCheckpoint(dir.filePath("none.pt").toStdString(), model);
  QCOMPARE(QString::fromStdString(missing.error()), dir.filePath("none.pt") + ": the checkpoint does not exist");
  // A folder or a FIFO named as a checkpoint said it "does not exist".
  QVERIFY(QDir().mkpath(dir.filePath("folder.pt")));
  QCOMPARE(::mkfifo(QFile::encodeName(dir.filePath("fifo.pt")).constData(), 0600), 0);
  for (const QString name : {"folder.pt", "fifo.pt"}) {
    const auto odd = loadCheckpoint(dir.filePath(name).toStdString(), model);
    QCOMPARE(QString::fromStdString(odd.error()),
             dir.filePath(name) + ": not a checkpoint (not a regular file: a folder, FIFO or device)");
  }
}

// A checkpoint whose stored config was edited (nz 32 over the weights of an nz-16 model) is refused
// when it is loaded, naming the tensor, instead of loading and failing in the first forward pass.
void TestCheckpoint::weightsThatDoNotMatchTheirConfig() {
  QTemporaryDir dir;
  const QString path = dir.filePath("edited.pt");
  DcganStep model(tinyConfig(), torch::kCPU, Precision::Fp32);
  TrainConfig edited = tinyConfig();
  edited.nz = 32;
  CheckpointState state{{}, torch::zeros({4, 32, 1, 1}), at::make_generator<at::CPUGeneratorImpl>(1).get_state(), edited};
  QVERIFY(saveCheckpoint(path.toStdString(), model, state).ok());
  QCOMPARE(readCheckpointConfig(path.toStdString())->nz, 32);

  const QString expected = path + ": the weights do not match the config stored with them (generator "
                                  "main.0.weight is [16, 64, 4, 4], the config needs [32, 64, 4, 4])";
  const auto generator = loadCheckpointGenerator(path.toStdString(), torch::kCPU);
  QVERIFY(!generator.ok());
  QCOMPARE(QString::fromStdString(generator.error()), expected);
  DcganStep restored(edited, torch::kCPU, Precision::Fp32);
  const auto loaded = loadCheckpoint(path.toStdString(), restored);
  QVERIFY(!loaded.ok());
  QCOMPARE(QString::fromStdString(loaded.error()), expected);

  // The discriminator is checked as well: ndf 16 in the config over ndf-8 weights.
  TrainConfig wider = tinyConfig();
  wider.ndf = 16;
  CheckpointState wide{{}, torch::zeros({4, 16, 1, 1}), at::make_generator<at::CPUGeneratorImpl>(1).get_state(), wider};
  QVERIFY(saveCheckpoint(path.toStdString(), model, wide).ok());
  DcganStep widened(wider, torch::kCPU, Precision::Fp32);
  const auto refused = loadCheckpoint(path.toStdString(), widened);
  QVERIFY(!refused.ok());
  QVERIFY2(QString::fromStdString(refused.error()).startsWith(path + ": the weights do not match the config stored with them (discriminator "),
           refused.error().c_str());
  QVERIFY(loadCheckpointGenerator(path.toStdString(), torch::kCPU).ok());  // G is as its config says
}

void TestCheckpoint::unfinishedFilesAreNeverListed() {
  QTemporaryDir dir;
  RunDirectory run(dir.path().toStdString());
  QVERIFY(run.create().ok());
  for (const char* name : {"step-0000000004.pt", "step-0000000008.pt.1234.tmp", "notes.txt",
                           "step-0000000002.pt"}) {
    QFile file(QString::fromStdString(run.checkpointsDir()) + "/" + name);
    QVERIFY(file.open(QIODevice::WriteOnly));
  }
  const auto listed = run.checkpoints();
  QCOMPARE(listed.size(), std::size_t(2));
  QVERIFY(QString::fromStdString(listed.back()).endsWith("step-0000000004.pt"));
  QCOMPARE(run.removeTemporaryFiles(), 1);
  run.pruneCheckpoints(1);
  QCOMPARE(run.checkpoints().size(), std::size_t(1));
}

STREETGAN_TEST_APPLESS_MAIN(TestCheckpoint)
#include "tst_checkpoint.moc"
