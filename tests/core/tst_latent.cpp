// Latent interpolation, easing, walks and arithmetic: endpoints exact, norms, the (anti)parallel
// guard, t outside [0, 1], loop closure, the walk file round trip bit for bit, group arithmetic.
#include "core/latent/latent_walk.h"
#include "core/latent/walk_renderer.h"
#include "tests/support/test_suite.h"

#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <cmath>

using namespace streetgan;

Q_DECLARE_METATYPE(Interpolation)
Q_DECLARE_METATYPE(Easing)

class TestLatent : public QObject {
  Q_OBJECT
private slots:
  void easing_data();
  void easing();
  void endpointsAreExact_data();
  void endpointsAreExact();
  void slerpKeepsNormsOfEqualLengthVectors();
  void slerpOfOrthogonalUnitVectors();
  void parallelAndAntiparallelFallBackToLerp_data();
  void parallelAndAntiparallelFallBackToLerp();
  void outsideTheUnitIntervalIsRejected();
  void openWalkEndsOnTheLastKeyframe();
  void loopClosesWithoutRepeatingAFrame();
  void walkFileRoundTripIsBitExact();
  void badWalkFiles_data();
  void badWalkFiles();
  void gridWalk();
  void arithmeticOfGroupMeans();
  void seedsGiveTheSameLatents();
  void renderedFramesDoNotDependOnTheBatch();
  void gridFramesAndCancel();
};

void TestLatent::easing_data() {
  QTest::addColumn<Easing>("easing");
  QTest::addColumn<double>("t");
  QTest::addColumn<double>("expected");
  for (Easing e : {Easing::Linear, Easing::EaseInOut, Easing::EaseIn, Easing::EaseOut}) {
    QTest::addRow("%s at 0", easingName(e)) << e << 0.0 << 0.0;
    QTest::addRow("%s at 1", easingName(e)) << e << 1.0 << 1.0;
  }
  QTest::newRow("linear at 0.3") << Easing::Linear << 0.3 << 0.3;
  QTest::newRow("ease-in-out at 0.5") << Easing::EaseInOut << 0.5 << 0.5;
  QTest::newRow("ease-in-out at 0.25") << Easing::EaseInOut << 0.25 << 0.15625;
  QTest::newRow("ease-in at 0.5") << Easing::EaseIn << 0.5 << 0.25;
  QTest::newRow("ease-out at 0.5") << Easing::EaseOut << 0.5 << 0.75;
}

void TestLatent::easing() {
  QFETCH(Easing, easing);
  QFETCH(double, t);
  QFETCH(double, expected);
  QCOMPARE(ease(easing, t), expected);
  auto parsed = parseEasing(easingName(easing));
  QVERIFY(parsed && *parsed == easing);
}

void TestLatent::endpointsAreExact_data() {
  QTest::addColumn<Interpolation>("mode");
  QTest::newRow("slerp") << Interpolation::Slerp;
  QTest::newRow("lerp") << Interpolation::Lerp;
}

void TestLatent::endpointsAreExact() {
  QFETCH(Interpolation, mode);
  const auto z0 = latentFromSeed(1, 100), z1 = latentFromSeed(2, 100);
  auto a = interpolate(z0, z1, 0.0, mode), b = interpolate(z0, z1, 1.0, mode);
  QVERIFY(a && b);
  QVERIFY(torch::equal(*a, z0));
  QVERIFY(torch::equal(*b, z1));
  auto mid = interpolate(z0, z1, 0.5, mode);
  QVERIFY(mid);
  QCOMPARE(mid->scalar_type(), torch::kFloat32);
  QVERIFY(!torch::equal(*mid, z0) && !torch::equal(*mid, z1));
}

void TestLatent::slerpKeepsNormsOfEqualLengthVectors() {
  auto z0 = latentFromSeed(3, 100), z1 = latentFromSeed(4, 100);
  z1 = z1 * (z0.norm() / z1.norm());
  for (double t : {0.1, 0.37, 0.5, 0.9}) {
    const double n = slerp(z0, z1, t).norm().item<double>();
    QVERIFY2(std::fabs(n - z0.norm().item<double>()) < 1e-4, qPrintable(QString::number(n)));
    // lerp cuts the chord: shorter in the middle
    QVERIFY(lerp(z0, z1, t).norm().item<double>() < n);
  }
}

void TestLatent::slerpOfOrthogonalUnitVectors() {
  const auto x = torch::tensor({1.0f, 0.0f}), y = torch::tensor({0.0f, 1.0f});
  const auto mid = slerp(x, y, 0.5);
  QVERIFY(std::fabs(mid[0].item<float>() - std::sqrt(0.5f)) < 1e-6f);
  QVERIFY(std::fabs(mid[1].item<float>() - std::sqrt(0.5f)) < 1e-6f);
  const auto third = slerp(x, y, 1.0 / 3);
  QVERIFY(std::fabs(third[0].item<float>() - std::cos(M_PI / 6)) < 1e-6);
}

void TestLatent::parallelAndAntiparallelFallBackToLerp_data() {
  QTest::addColumn<double>("scale");  // z1 = scale · z0
  QTest::newRow("parallel, longer") << 2.0;
  QTest::newRow("identical") << 1.0;
  QTest::newRow("antiparallel") << -1.0;
  QTest::newRow("antiparallel, shorter") << -0.5;
}

void TestLatent::parallelAndAntiparallelFallBackToLerp() {
  QFETCH(double, scale);
  const auto z0 = latentFromSeed(5, 64), z1 = z0 * scale;
  for (double t : {0.25, 0.5, 0.75}) {
    const auto s = slerp(z0, z1, t);
    QVERIFY(torch::all(torch::isfinite(s)).item<bool>());
    QVERIFY(torch::allclose(s, lerp(z0, z1, t), 1e-6, 1e-6));
  }
  // Nearly parallel (|cos| just above 0.9995) still takes the lerp path: no division by ~0.
  const auto near = z0 + 1e-3 * latentFromSeed(6, 64);
  QVERIFY(torch::allclose(slerp(z0, near, 0.5), lerp(z0, near, 0.5), 1e-6, 1e-6));
  const auto zero = torch::zeros({64});
  QVERIFY(torch::allclose(slerp(zero, z0, 0.5), z0 * 0.5));
}

void TestLatent::outsideTheUnitIntervalIsRejected() {
  const auto z0 = latentFromSeed(1, 8), z1 = latentFromSeed(2, 8);
  for (double t : {-0.01, 1.5, 8.0}) {
    auto r = interpolate(z0, z1, t, Interpolation::Slerp);
    QVERIFY(!r);
    QVERIFY2(QString::fromStdString(r.error()).contains("outside [0, 1]"), r.error().c_str());
    QVERIFY(interpolate(z0, z1, t, Interpolation::Slerp, /*allow_extrapolation=*/true));
  }
  QVERIFY(!interpolate(z0, latentFromSeed(2, 9), 0.5, Interpolation::Lerp));
  QVERIFY(!interpolate(z0, z1, NAN, Interpolation::Lerp));
}

void TestLatent::openWalkEndsOnTheLastKeyframe() {
  LatentWalk walk = LatentWalk::fromSeeds({3, 14, 15}, 100);
  walk.frames_per_key = 10;
  QVERIFY(walk.validate());
  QCOMPARE(walk.frameCount(), std::int64_t(21));
  QVERIFY(torch::equal(walk.frame(0), walk.keyframes[0].latent));
  QVERIFY(torch::equal(walk.frame(10), walk.keyframes[1].latent));
  QVERIFY(torch::equal(walk.frame(20), walk.keyframes[2].latent));
  const auto batch = walk.frames(5, 7);
  QCOMPARE(batch.sizes(), (torch::IntArrayRef{7, 100, 1, 1}));
  QVERIFY(torch::equal(batch[3].view({100}), walk.frame(8)));
}

void TestLatent::loopClosesWithoutRepeatingAFrame() {
  LatentWalk walk = LatentWalk::fromSeeds({1, 2, 3}, 32);
  walk.frames_per_key = 4;
  walk.loop = true;
  QCOMPARE(walk.frameCount(), std::int64_t(12));
  QVERIFY(torch::equal(walk.frame(8), walk.keyframes[2].latent));
  // The last frame leads back towards the first keyframe, which is not repeated at the end.
  QVERIFY(!torch::equal(walk.frame(11), walk.keyframes[0].latent));
  const double last_step = (walk.frame(11) - walk.keyframes[0].latent).norm().item<double>();
  const double first_step = (walk.frame(1) - walk.frame(0)).norm().item<double>();
  QVERIFY(last_step > 0 && last_step < 3 * first_step + 1e-6);
}

void TestLatent::walkFileRoundTripIsBitExact() {
  QTemporaryDir dir;
  LatentWalk walk = LatentWalk::fromSeeds({7, 8}, 100);
  walk.keyframes.push_back({latentFromSeed(99, 100) * 1.2345678f, std::nullopt});  // a saved vector, no seed
  walk.frames_per_key = 17;
  walk.mode = Interpolation::Lerp;
  walk.easing = Easing::EaseOut;
  walk.loop = true;
  const std::string path = (dir.path() + "/walk.json").toStdString();
  QVERIFY(walk.save(path));
  auto loaded = LatentWalk::load(path);
  QVERIFY2(loaded, loaded.error().c_str());
  QCOMPARE(loaded->keyframes.size(), std::size_t(3));
  for (std::size_t i = 0; i < 3; ++i) QVERIFY(torch::equal(loaded->keyframes[i].latent, walk.keyframes[i].latent));
  QCOMPARE(loaded->keyframes[0].seed, std::optional<std::uint64_t>(7));
  QVERIFY(!loaded->keyframes[2].seed);
  QCOMPARE(loaded->frames_per_key, 17);
  QCOMPARE(loaded->mode, Interpolation::Lerp);
  QCOMPARE(loaded->easing, Easing::EaseOut);
  QVERIFY(loaded->loop);
  QVERIFY(torch::equal(loaded->frame(23), walk.frame(23)));
}

void TestLatent::badWalkFiles_data() {
  QTest::addColumn<QByteArray>("text");
  QTest::addColumn<QString>("error");
  QTest::newRow("not JSON") << QByteArray("{") << "not valid JSON";
  QTest::newRow("no version") << QByteArray(R"({"frames_per_key":3,"keyframes":[]})") << "\"version\" must be 1";
  QTest::newRow("one keyframe") << QByteArray(R"({"version":1,"frames_per_key":3,"keyframes":[{"latent":[1,2]}]})")
                                << "at least 2 keyframes";
  QTest::newRow("sizes differ") << QByteArray(R"({"version":1,"frames_per_key":3,"keyframes":[{"latent":[1,2]},{"latent":[1]}]})")
                                << "keyframe 2 is not a latent of the walk's size";
  QTest::newRow("text in a latent") << QByteArray(R"({"version":1,"frames_per_key":3,"keyframes":[{"latent":[1,"x"]},{"latent":[1,2]}]})")
                                    << "keyframe 1: \"latent\" holds a value that is not a finite number";
  QTest::newRow("zero frames") << QByteArray(R"({"version":1,"frames_per_key":0,"keyframes":[]})") << "\"frames_per_key\"";
  QTest::newRow("bad easing") << QByteArray(R"({"version":1,"frames_per_key":3,"easing":"bounce","keyframes":[]})")
                              << "unknown easing \"bounce\"";
  // json::value() threw type_error for these (fuzz_walk_file).
  QTest::newRow("mode true") << QByteArray(R"({"version":1,"frames_per_key":3,"mode":true,"keyframes":[]})")
                             << "\"mode\" must be a string";
  QTest::newRow("easing a list") << QByteArray(R"({"version":1,"frames_per_key":3,"easing":[],"keyframes":[]})")
                                 << "\"easing\" must be a string";
  QTest::newRow("version text") << QByteArray(R"({"version":"1","frames_per_key":3,"keyframes":[]})")
                                << "\"version\" must be 1";
  QTest::newRow("number past a double") << QByteArray(R"({"version":1e999})") << "not valid JSON";
  QTest::newRow("negative seed") << QByteArray(R"({"version":1,"frames_per_key":3,"keyframes":[{"latent":[1],"seed":-1},{"latent":[2]}]})")
                                 << "\"seed\" must be a non-negative integer";
  // "nz" disagreeing with the latents was taken silently.
  QTest::newRow("nz disagrees") << QByteArray(R"({"version":1,"frames_per_key":3,"nz":100,"keyframes":[{"latent":[1,2]},{"latent":[3,4]}]})")
                                << "\"nz\" must be the length of every latent (2), not 100";
  // A walk's values are counted before it is parsed (a tree costs some 20 times its text): 2.1
  // million numbers in 4 MiB, and as many empty objects, whose parse with a counting callback
  // took quadratic time.
  QByteArray many = R"({"version":1,"frames_per_key":3,"keyframes":[{"latent":[)";
  many += QByteArray("0,").repeated(2097152) + R"(0]},{"latent":[1]}]})";
  QTest::newRow("past 4,194,304 values") << many << "holds more than 4194304 values";
  QByteArray empty = R"({"version":1,"frames_per_key":3,"keyframes":[)";
  empty += QByteArray("{},").repeated(2097152) + R"({}]})";
  QTest::newRow("past 4,194,304 empty objects") << empty << "holds more than 4194304 values";
  QTest::newRow("NUL and more") << QByteArray(R"({"version":1,"frames_per_key":3,"keyframes":[{"latent":[1]},{"latent":[2]}]})" "\0junk", 81)
                                << "a NUL byte at offset";
}

void TestLatent::badWalkFiles() {
  QFETCH(QByteArray, text);
  QFETCH(QString, error);
  QTemporaryDir dir;
  const QString path = dir.path() + "/bad.json";
  QFile file(path);
  QVERIFY(file.open(QIODevice::WriteOnly));
  file.write(text);
  file.close();
  auto loaded = LatentWalk::load(path.toStdString());
  QVERIFY(!loaded);
  QVERIFY2(QString::fromStdString(loaded.error()).startsWith(path), loaded.error().c_str());
  QVERIFY2(QString::fromStdString(loaded.error()).contains(error), loaded.error().c_str());
  QVERIFY(!LatentWalk::load((dir.path() + "/missing.json").toStdString()));
}

void TestLatent::gridWalk() {
  LatentWalk settings;
  settings.frames_per_key = 5;
  settings.loop = true;
  const GridWalk grid = GridWalk::fromSeedBase(2, 3, 3, 100, 16, settings);
  QVERIFY(grid.validate());
  QCOMPARE(grid.frameCount(), std::int64_t(15));
  const auto frame = grid.frame(5);
  QCOMPARE(frame.sizes(), (torch::IntArrayRef{6, 16, 1, 1}));
  QVERIFY(torch::equal(frame[4].view({16}), latentFromSeed(100 + 4 * 3 + 1, 16)));  // tile 4, keyframe 1
}

void TestLatent::arithmeticOfGroupMeans() {
  const auto a1 = torch::tensor({1.0f, 2.0f}), a2 = torch::tensor({3.0f, 4.0f});
  const auto b1 = torch::tensor({1.0f, 1.0f});
  const auto c1 = torch::tensor({0.0f, 5.0f}), c2 = torch::tensor({2.0f, 1.0f}), c3 = torch::tensor({1.0f, 0.0f});
  auto result = latentArithmetic({a1, a2}, {b1}, {c1, c2, c3});
  QVERIFY(result);
  QVERIFY(torch::equal(*result, torch::tensor({2.0f, 4.0f})));  // (2,3) − (1,1) + (1,2)
  QVERIFY(!latentArithmetic({a1}, {}, {c1}));
  auto mixed = latentArithmetic({a1}, {torch::zeros({3})}, {c1});
  QVERIFY(!mixed);
  QVERIFY2(QString::fromStdString(mixed.error()).contains("group B"), mixed.error().c_str());
}

void TestLatent::seedsGiveTheSameLatents() {
  QVERIFY(torch::equal(latentFromSeed(42, 100), latentFromSeed(42, 100)));
  QVERIFY(!torch::equal(latentFromSeed(42, 100), latentFromSeed(43, 100)));
  QCOMPARE(latentFromSeed(1, 256).size(0), std::int64_t(256));
}

namespace {

Generator tinyLatentGenerator() {
  torch::manual_seed(11);
  GeneratorOptions options;
  options.nz = 16;
  options.ngf = 8;
  return Generator(options);
}

std::vector<torch::Tensor> renderAll(Generator& g, const LatentWalk& walk, std::int64_t batch) {
  std::vector<torch::Tensor> frames;
  WalkRenderOptions options;
  options.batch = batch;
  const Status done = WalkRenderer::render(g, walk, options, [&](std::int64_t index, const torch::Tensor& frame) {
    if (index != std::int64_t(frames.size())) return Status(makeError("frames out of order"));
    frames.push_back(frame.clone());
    return Status{};
  });
  if (!done) qFatal("%s", done.error().c_str());
  return frames;
}

}  // namespace

void TestLatent::renderedFramesDoNotDependOnTheBatch() {
  Generator g = tinyLatentGenerator();
  LatentWalk walk = LatentWalk::fromSeeds({3, 14, 15}, 16);
  walk.frames_per_key = 5;
  const auto one = renderAll(g, walk, 1), four = renderAll(g, walk, 4), all = renderAll(g, walk, 64);
  QCOMPARE(one.size(), std::size_t(11));
  QCOMPARE(one[0].sizes(), (torch::IntArrayRef{3, 64, 64}));
  QCOMPARE(one[0].scalar_type(), torch::kUInt8);
  for (std::size_t i = 0; i < one.size(); ++i) {
    QVERIFY2(torch::equal(one[i], four[i]), qPrintable(QString("frame %1, batch 4").arg(i)));
    QVERIFY2(torch::equal(one[i], all[i]), qPrintable(QString("frame %1, batch 64").arg(i)));
  }
  QVERIFY(!torch::equal(one[0], one[5]));
}

void TestLatent::gridFramesAndCancel() {
  Generator g = tinyLatentGenerator();
  LatentWalk settings;
  settings.frames_per_key = 3;
  const GridWalk grid = GridWalk::fromSeedBase(2, 2, 2, 7, 16, settings);
  std::int64_t frames = 0;
  WalkRenderOptions options;
  options.batch = 5;
  const Status done = WalkRenderer::render(g, grid, options, [&](std::int64_t, const torch::Tensor& frame) {
    ++frames;
    return frame.sizes() == torch::IntArrayRef{3, 2 * 66 + 2, 2 * 66 + 2} ? Status{} : Status(makeError("bad frame size"));
  });
  QVERIFY2(done, done.error().c_str());
  QCOMPARE(frames, grid.frameCount());
  options.progress = [](std::int64_t done_frames, std::int64_t) { return done_frames < 2; };
  const Status cancelled = WalkRenderer::render(g, grid, options, [](std::int64_t, const torch::Tensor&) { return Status{}; });
  QVERIFY(!cancelled);
  QCOMPARE(QString::fromStdString(cancelled.error()), QString("rendering cancelled"));
  const Status refused = WalkRenderer::render(g, grid, options, [](std::int64_t, const torch::Tensor&) {
    return Status(makeError("disk full"));
  });
  QCOMPARE(QString::fromStdString(refused.error()), QString("disk full"));
}

STREETGAN_TEST_GUILESS_MAIN(TestLatent)
#include "tst_latent.moc"
