// LatentExplorer::inside ("Inside the generator"): each block's activations for a sample, its
// BatchNorm running statistics beside the batch's (block 0's checked against z·W computed here),
// a channel switched off in the sample alone, D's score against the checkpoint's own D, the bad
// ablations refused, and the model unchanged in both BatchNorm modes.
#include "core/latent/latent_explorer.h"
#include "core/latent/latent_math.h"
#include "core/train/checkpoint.h"
#include "core/train/dcgan_step.h"
#include "tests/support/test_device.h"
#include "tests/support/test_suite.h"
#include "tests/support/tiny_train_config.h"

#include <QTemporaryDir>
#include <QtTest>

#include <torch/torch.h>

using namespace streetgan;
using namespace streetgan::test;

class TestGeneratorInside : public QObject {
  Q_OBJECT
private slots:
  void initTestCase();
  void blocksAndStatistics();
  void ablationSwitchesAChannelOff();
  void discriminatorScore();
  void badAblationsAreRefused();
  void batchStatisticsLeaveTheModelAsItWas();

private:
  QTemporaryDir dir_;
  std::string checkpoint_;
  std::shared_ptr<LatentExplorer> explorer_;
};

void TestGeneratorInside::initTestCase() {
  const TrainConfig config = streetgan::test::tinyTrainConfig(3);
  DcganStep model(config, testDevice(), Precision::Fp32);
  torch::manual_seed(3);
  const torch::Tensor real = torch::rand({8, 3, 64, 64}).to(testDevice()) * 2 - 1;
  for (int i = 0; i < 4; ++i) model.step(real, torch::randn({8, 16, 1, 1}).to(testDevice()));
  CheckpointState state;
  state.fixed_noise = torch::randn({4, 16, 1, 1});
  state.noise_rng_state = at::make_generator<at::CPUGeneratorImpl>(1).get_state();
  state.config = config;
  checkpoint_ = dir_.filePath("step.pt").toStdString();
  QVERIFY(saveCheckpoint(checkpoint_, model, state).ok());
  auto opened = LatentExplorer::open(checkpoint_, testDeviceName());
  QVERIFY2(opened, opened ? "" : opened.error().c_str());
  explorer_ = *opened;
  QVERIFY(explorer_->hasDiscriminator());
}

void TestGeneratorInside::blocksAndStatistics() {
  const Latent z = explorer_->latentOfSeed(5);
  std::vector<Latent> page;
  for (std::uint64_t s = 10; s < 25; ++s) page.push_back(explorer_->latentOfSeed(s));
  auto inside = explorer_->inside(z, page);
  QVERIFY2(inside, inside ? "" : inside.error().c_str());
  QCOMPARE(inside->layers.size(), std::size_t(5));
  const int channels[] = {64, 32, 16, 8, 3}, sizes[] = {4, 8, 16, 32, 64};
  for (int b = 0; b < 5; ++b) {
    const GeneratorLayerView& view = inside->layers[std::size_t(b)];
    QCOMPARE(view.block, b);
    QCOMPARE(view.channels, channels[b]);
    QCOMPARE(view.height, sizes[b]);
    QCOMPARE(view.activations.size(), std::size_t(channels[b] * sizes[b] * sizes[b]));
    QCOMPARE(view.channel_means.size(), std::size_t(channels[b]));
    QCOMPARE(view.running_mean.size(), b < 4 ? std::size_t(channels[b]) : std::size_t(0));
    QCOMPARE(view.batch_var.size(), view.running_var.size());
    if (b < 4)  // after ReLU
      for (float v : view.activations) QVERIFY(v >= 0);
  }
  // The image is the sample's own render (running statistics: the page does not change it). The
  // render goes through the BatchNorm-folded copy, inside() through G's own layers: the same
  // function up to float rounding, so at most one level of 255 apart.
  auto rendered = explorer_->render({z});
  QVERIFY(rendered);
  QCOMPARE(inside->image.pixels.size(), rendered->front().pixels.size());
  for (std::size_t i = 0; i < inside->image.pixels.size(); ++i)
    QVERIFY(std::abs(int(inside->image.pixels[i]) - int(rendered->front().pixels[i])) <= 1);
  // Block 0's statistics: the batch's from z·W computed here, the running ones from the file.
  auto loaded = loadCheckpointGenerator(checkpoint_, torch::kCPU);
  QVERIFY(loaded);
  const auto params = loaded->generator->named_parameters();
  const auto buffers = loaded->generator->named_buffers();
  std::vector<torch::Tensor> rows{torch::from_blob(const_cast<float*>(z.data()), {16}).clone()};
  for (const Latent& p : page) rows.push_back(torch::from_blob(const_cast<float*>(p.data()), {16}).clone());
  const torch::Tensor h = torch::mm(torch::stack(rows).to(torch::kFloat64), params["main.0.weight"].to(torch::kFloat64).flatten(1))
                              .view({16, 64, 4, 4});
  const torch::Tensor mean = h.mean({0, 2, 3}), var = h.var({0, 2, 3}, false);
  for (int c = 0; c < 64; ++c) {
    QVERIFY(std::abs(inside->layers[0].batch_mean[std::size_t(c)] - mean[c].item<double>()) < 1e-4);
    QVERIFY(std::abs(inside->layers[0].batch_var[std::size_t(c)] - var[c].item<double>()) < 1e-4);
    QCOMPARE(inside->layers[0].running_mean[std::size_t(c)], (*buffers.find("main.1.running_mean"))[c].item<double>());
  }
}

void TestGeneratorInside::ablationSwitchesAChannelOff() {
  const Latent z = explorer_->latentOfSeed(6);
  auto plain = explorer_->inside(z);
  QVERIFY(plain);
  // The block-1 channel with the largest mean activation: switching it off must show.
  const auto& means = plain->layers[1].channel_means;
  const int channel = int(std::max_element(means.begin(), means.end()) - means.begin());
  QVERIFY(means[std::size_t(channel)] > 0);
  auto ablated = explorer_->inside(z, {}, {{1, channel}});
  QVERIFY(ablated);
  const GeneratorLayerView& view = ablated->layers[1];
  const std::size_t plane = std::size_t(view.height * view.width);
  for (std::size_t i = 0; i < plane; ++i) QCOMPARE(view.activations[std::size_t(channel) * plane + i], 0.0f);
  QCOMPARE(ablated->layers[0].activations, plain->layers[0].activations);  // blocks before it: untouched
  QVERIFY(ablated->image.pixels != plain->image.pixels);
  // Only the sample is ablated: the same latent in the page is rendered whole.
  auto again = explorer_->inside(z);
  QVERIFY(again);
  QCOMPARE(again->image.pixels, plain->image.pixels);
}

void TestGeneratorInside::discriminatorScore() {
  const Latent z = explorer_->latentOfSeed(7);
  auto inside = explorer_->inside(z);
  QVERIFY(inside && inside->discriminator_score);
  auto loaded = loadCheckpointGenerator(checkpoint_, torch::kCPU);
  QVERIFY(loaded && loaded->discriminator);
  torch::NoGradGuard no_grad;
  loaded->generator->eval();
  const torch::Tensor image = loaded->generator->forward(torch::from_blob(const_cast<float*>(z.data()), {1, 16, 1, 1}).clone());
  const double expected = torch::sigmoid(loaded->discriminator->forward(image))[0].item<double>();
  QVERIFY2(std::abs(*inside->discriminator_score - expected) < 1e-5,
           qPrintable(QString("%1 vs %2").arg(*inside->discriminator_score).arg(expected)));
  QVERIFY(expected > 0 && expected < 1);
}

void TestGeneratorInside::badAblationsAreRefused() {
  const Latent z = explorer_->latentOfSeed(1);
  auto last = explorer_->inside(z, {}, {{4, 0}});
  QVERIFY(!last);
  QCOMPARE(QString::fromStdString(last.error()), QString("block 4 is not a hidden block (0 to 3)"));
  auto wide = explorer_->inside(z, {}, {{0, 64}});
  QVERIFY(!wide);
  QCOMPARE(QString::fromStdString(wide.error()), QString("block 0 has 64 channels, not channel 64"));
  auto short_latent = explorer_->inside(Latent(3, 0.0f));
  QVERIFY(!short_latent);
  QVERIFY(QString::fromStdString(short_latent.error()).contains("has 3 values but this generator takes 16"));
}

void TestGeneratorInside::batchStatisticsLeaveTheModelAsItWas() {
  const Latent z = explorer_->latentOfSeed(8);
  auto before = explorer_->render({z});
  explorer_->setBatchStatistics(true);
  std::vector<Latent> page;
  for (std::uint64_t s = 30; s < 38; ++s) page.push_back(explorer_->latentOfSeed(s));
  auto inside = explorer_->inside(z, page, {{2, 1}});
  explorer_->setBatchStatistics(false);
  QVERIFY(inside);
  QVERIFY(inside->batch_statistics);
  auto after = explorer_->render({z});
  QCOMPARE(after->front().pixels, before->front().pixels);
}

STREETGAN_TEST_APPLESS_MAIN(TestGeneratorInside)
#include "tst_generator_inside.moc"
