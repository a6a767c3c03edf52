// LossScaler and MultiTensorAdamW on the test device (STREETGAN_TEST_DEVICE, default cpu), with
// Inf/NaN injected into the gradients: the step is skipped with nothing changed, the scale backs
// off, grows after its interval, and the state survives a checkpoint archive; a disabled
// scaler's state never lands in an enabled one.
#include "core/train/loss_scaler.h"
#include "core/train/multi_tensor_adamw.h"
#include "tests/support/test_device.h"
#include "tests/support/test_suite.h"

#include <QtTest>
#include <torch/torch.h>

#include <limits>
#include <sstream>

using namespace streetgan;
using streetgan::test::testDevice;

namespace {

// Two parameters with gradients set by hand, and their optimizer.
struct TinyModel {
  std::vector<torch::Tensor> params;
  std::unique_ptr<MultiTensorAdamW> optimizer;

  TinyModel() {
    torch::manual_seed(3);
    const auto options = torch::TensorOptions().device(testDevice());
    params = {torch::randn({4, 3}, options).requires_grad_(), torch::randn({5}, options).requires_grad_()};
    optimizer = std::make_unique<MultiTensorAdamW>(
        params, torch::optim::AdamWOptions(1e-2).betas({0.5, 0.999}).weight_decay(0.05));
  }
  // Gradients as a scaled backward would leave them: `scale` times a known gradient.
  void setGradients(double scale, double poison = 0, bool poisoned = false) {
    for (std::size_t i = 0; i < params.size(); ++i) {
      auto grad = torch::full_like(params[i], 0.25 * (i + 1)) * scale;
      if (poisoned && i == 1) grad[2] = poison;
      params[i].mutable_grad() = grad.detach();
    }
  }
  std::vector<torch::Tensor> snapshot() const {
    std::vector<torch::Tensor> copy;
    for (const auto& p : params) copy.push_back(p.detach().clone());
    return copy;
  }
};

bool same(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!torch::equal(a[i].cpu(), b[i].cpu())) return false;
  return true;
}

}  // namespace

class TestLossScaler : public QObject {
  Q_OBJECT
private slots:
  void scaledLossIsTheLossTimesTheScale_data();
  void scaledLossIsTheLossTimesTheScale();
  void nonFiniteGradientSkipsTheStep_data();
  void nonFiniteGradientSkipsTheStep();
  void finiteStepUnscalesLikeAnUnscaledStep();
  void scaleGrowsAfterTheGrowthInterval();
  void stateRoundTripsThroughAnArchive();
  void disabledStateDoesNotLandInAnEnabledScaler();
  void disabledScalerNeverSkips();
};

void TestLossScaler::scaledLossIsTheLossTimesTheScale_data() {
  QTest::addColumn<int>("dtype");  // c10::ScalarType of the loss
  QTest::newRow("float32") << static_cast<int>(torch::kFloat32);
  QTest::newRow("bfloat16") << static_cast<int>(torch::kBFloat16);
}

// The scaled loss stays one number of the loss's type (LibTorch 2.x once turned it into four: a
// byte view of the float scale), so backward() can start from it.
void TestLossScaler::scaledLossIsTheLossTimesTheScale() {
  QFETCH(int, dtype);
  const auto type = static_cast<c10::ScalarType>(dtype);
  LossScaler scaler(true, testDevice(), {1024.0, 2.0, 0.5, 2000});
  auto weight = torch::full({}, 0.75, torch::TensorOptions().device(testDevice()).dtype(type)).requires_grad_();
  const auto scaled = scaler.scale(weight * 1.0);
  QCOMPARE(scaled.dim(), std::int64_t(0));
  QCOMPARE(scaled.scalar_type(), type);
  QCOMPARE(scaled.to(torch::kFloat64).item<double>(), 768.0);  // exact: 0.75 · 2^10
  scaled.backward();
  QCOMPARE(weight.grad().to(torch::kFloat64).item<double>(), 1024.0);
}

void TestLossScaler::nonFiniteGradientSkipsTheStep_data() {
  QTest::addColumn<double>("poison");
  QTest::newRow("inf") << std::numeric_limits<double>::infinity();
  QTest::newRow("-inf") << -std::numeric_limits<double>::infinity();
  QTest::newRow("nan") << std::numeric_limits<double>::quiet_NaN();
}

void TestLossScaler::nonFiniteGradientSkipsTheStep() {
  QFETCH(double, poison);
  TinyModel model;
  LossScaler scaler(true, testDevice(), {1024.0, 2.0, 0.5, 2000});
  // One clean step first, so the skipped one has moments and a step count to keep.
  model.setGradients(1024.0);
  scaler.step(*model.optimizer);
  QCOMPARE(scaler.overflowTensor().item<float>(), 0.0f);
  scaler.update();
  QCOMPARE(scaler.cleanSteps(), std::int64_t(1));

  const auto before = model.snapshot();
  std::stringstream state_before;
  {
    torch::serialize::OutputArchive archive;
    model.optimizer->save(archive);
    archive.save_to(state_before);
  }
  model.setGradients(1024.0, poison, true);
  scaler.step(*model.optimizer);
  QCOMPARE(scaler.overflowTensor().item<float>(), 1.0f);
  scaler.update();
  QVERIFY2(same(before, model.snapshot()), "a step with a non-finite gradient changed the parameters");
  std::stringstream state_after;
  {
    torch::serialize::OutputArchive archive;
    model.optimizer->save(archive);
    archive.save_to(state_after);
  }
  QVERIFY2(state_before.str() == state_after.str(), "a skipped step changed the optimizer state");
  QCOMPARE(scaler.currentScale(), 512.0);
  QCOMPARE(scaler.cleanSteps(), std::int64_t(0));
  QCOMPARE(scaler.overflowTensor().item<float>(), 0.0f);  // cleared for the next iteration

  // The next clean step trains again, at the lower scale.
  model.setGradients(512.0);
  scaler.step(*model.optimizer);
  scaler.update();
  QVERIFY(!same(before, model.snapshot()));
  QCOMPARE(scaler.currentScale(), 512.0);
}

void TestLossScaler::finiteStepUnscalesLikeAnUnscaledStep() {
  TinyModel scaled, plain;
  LossScaler scaler(true, testDevice(), {65536.0, 2.0, 0.5, 2000});
  for (int i = 0; i < 3; ++i) {
    scaled.setGradients(65536.0);
    scaler.step(*scaled.optimizer);
    scaler.update();
    plain.setGradients(1.0);
    plain.optimizer->step();
  }
  // 65536 is a power of two: unscaling is exact, so the two runs agree to the bit on any device.
  QVERIFY(same(scaled.snapshot(), plain.snapshot()));
}

void TestLossScaler::scaleGrowsAfterTheGrowthInterval() {
  TinyModel model;
  LossScaler scaler(true, testDevice(), {8.0, 2.0, 0.5, 3});
  const double expected[] = {8, 8, 16, 16, 16, 32};
  for (double scale_after : expected) {
    model.setGradients(scaler.currentScale());
    scaler.step(*model.optimizer);
    scaler.update();
    QCOMPARE(scaler.currentScale(), scale_after);
  }
  // An overflow halves the scale and restarts the count.
  model.setGradients(32.0, std::numeric_limits<double>::infinity(), true);
  scaler.step(*model.optimizer);
  scaler.update();
  QCOMPARE(scaler.currentScale(), 16.0);
  QCOMPARE(scaler.cleanSteps(), std::int64_t(0));
}

void TestLossScaler::stateRoundTripsThroughAnArchive() {
  TinyModel model;
  LossScaler scaler(true, testDevice(), {64.0, 2.0, 0.5, 4});
  for (int i = 0; i < 2; ++i) {
    model.setGradients(64.0);
    scaler.step(*model.optimizer);
    scaler.update();
  }
  model.setGradients(64.0, std::numeric_limits<double>::quiet_NaN(), true);
  scaler.step(*model.optimizer);
  scaler.update();
  model.setGradients(32.0);
  scaler.step(*model.optimizer);
  scaler.update();
  QCOMPARE(scaler.currentScale(), 32.0);
  QCOMPARE(scaler.cleanSteps(), std::int64_t(1));

  std::stringstream bytes;
  {
    torch::serialize::OutputArchive archive;
    scaler.save(archive);
    archive.save_to(bytes);
  }
  torch::serialize::InputArchive archive;
  archive.load_from(bytes);
  LossScaler restored(true, testDevice(), {64.0, 2.0, 0.5, 4});
  QVERIFY(restored.load(archive));
  QCOMPARE(restored.currentScale(), 32.0);
  QCOMPARE(restored.cleanSteps(), std::int64_t(1));
  // Three more clean steps reach the interval of 4: both grow at the same step.
  for (int i = 0; i < 3; ++i) {
    model.setGradients(restored.currentScale());
    restored.step(*model.optimizer);
    restored.update();
  }
  QCOMPARE(restored.currentScale(), 64.0);
}

void TestLossScaler::disabledStateDoesNotLandInAnEnabledScaler() {
  // A run trained in fp32 or bf16 (scaler disabled, scale 1) resumed in fp16.
  LossScaler disabled(false, testDevice());
  std::stringstream bytes;
  {
    torch::serialize::OutputArchive archive;
    disabled.save(archive);
    archive.save_to(bytes);
  }
  torch::serialize::InputArchive archive;
  archive.load_from(bytes);
  LossScaler enabled(true, testDevice());
  QVERIFY(!enabled.load(archive));
  QCOMPARE(enabled.currentScale(), 65536.0);
  QCOMPARE(enabled.cleanSteps(), std::int64_t(0));

  // A checkpoint written before `scaler_enabled` existed: a disabled scaler's scale of 1.
  std::stringstream old_bytes;
  {
    torch::serialize::OutputArchive old;
    old.write("scaler_scale", torch::tensor(1.0, torch::kFloat64));
    old.write("scaler_clean_steps", torch::tensor(std::int64_t(0), torch::kInt64));
    old.save_to(old_bytes);
  }
  torch::serialize::InputArchive old_archive;
  old_archive.load_from(old_bytes);
  LossScaler fresh(true, testDevice());
  QVERIFY(!fresh.load(old_archive));
  QCOMPARE(fresh.currentScale(), 65536.0);
}

void TestLossScaler::disabledScalerNeverSkips() {
  TinyModel model;
  LossScaler scaler(false, testDevice());
  const auto before = model.snapshot();
  model.setGradients(1.0);
  QCOMPARE(scaler.scale(torch::ones({}, torch::TensorOptions().device(testDevice()))).item<float>(), 1.0f);
  scaler.step(*model.optimizer);
  scaler.update();
  QVERIFY(!same(before, model.snapshot()));
  QCOMPARE(scaler.currentScale(), 1.0);
}

STREETGAN_TEST_GUILESS_MAIN(TestLossScaler)
#include "tst_loss_scaler.moc"
