// SemanticDirections against an independent numpy reference (tests/core/reference/
// semantic_directions_reference.py) on the same weights, latents and activations; the first block
// against LibTorch's own layers; the principal directions the same bits on 1, 2 and 3 threads; the
// labelled classifier on a planted direction; conditional editing; and DirectionFile: the round
// trip, the .npy export and every bad file it must refuse.
#include "core/latent/direction_file.h"
#include "core/latent/semantic_directions.h"
#include "core/model/generator.h"
#include "core/train/compute_device.h"
#include "tests/support/python_reference.h"
#include "tests/support/test_suite.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <torch/torch.h>

#include <cmath>
#include <fstream>

using namespace streetgan;
using namespace streetgan::test;

namespace {

QString npyDirections(const QTemporaryDir& dir, const QString& name, const torch::Tensor& t) {
  const QString path = dir.filePath(name + ".npy");
  return writeNpy(path, t) ? path : QString();
}

// The largest difference between two unit vectors up to their sign.
double upToSign(const torch::Tensor& ours, const QJsonArray& theirs) {
  std::vector<double> values;
  for (const auto& v : theirs) values.push_back(v.toDouble());
  const torch::Tensor r = torch::tensor(values, torch::kFloat64);
  return std::min((ours - r).abs().max().item<double>(), (ours + r).abs().max().item<double>());
}

// A small generator whose first BatchNorm has running statistics of its own (not 0 and 1).
Generator smallDirectionsGenerator(int nz, int ngf, int seed) {
  torch::manual_seed(seed);
  Generator g(GeneratorOptions{nz, ngf, 3, 64});
  torch::NoGradGuard no_grad;
  for (auto& item : g->named_buffers()) {
    if (item.key() == "main.1.running_mean") item.value().copy_(torch::randn_like(item.value()) * 0.3);
    if (item.key() == "main.1.running_var") item.value().copy_(torch::rand_like(item.value()) + 0.5);
  }
  for (auto& item : g->named_parameters()) {
    if (item.key() == "main.1.weight") item.value().copy_(torch::rand_like(item.value()) + 0.5);
    if (item.key() == "main.1.bias") item.value().copy_(torch::randn_like(item.value()) * 0.1);
  }
  g->eval();
  return g;
}

// Latents z (n, nz) and rows h (n, d) of nz planted axes, axis i scaled by decay^i, plus noise:
// a clear spectrum for PCA.
struct PlantedRows {
  torch::Tensor z, h;
};
PlantedRows plantedRows(std::int64_t n, std::int64_t nz, std::int64_t d, double decay, double noise) {
  const torch::Tensor z = torch::randn({n, nz}, torch::kFloat64);
  const torch::Tensor mixing = torch::randn({nz, d}, torch::kFloat64) *
                               torch::pow(decay, torch::arange(nz, torch::kFloat64)).view({nz, 1});
  return {z, torch::mm(z, mixing) + noise * torch::randn({n, d}, torch::kFloat64)};
}

void writeText(const QString& path, const QByteArray& text) {
  QFile file(path);
  QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
  file.write(text);
}

}  // namespace

class TestSemanticDirections : public QObject {
  Q_OBJECT
private slots:
  void closedFormMatchesNumpy_data();
  void closedFormMatchesNumpy();
  void movingAlongAClosedFormDirectionMovesItsProjection();
  void firstBlockIsTheGeneratorsFirstLayers();
  void principalMatchesNumpy();
  void subspaceIterationMatchesTheExactAxes();
  void principalIsTheSameOnAnyNumberOfThreads();
  void labelledRecoversAPlantedDirection_data();
  void labelledRecoversAPlantedDirection();
  void labelledNeedsEnoughMarks();
  void conditionalKeepsTheOthers();
  void fileRoundTrip();
  void npyExport();
  void listRenameDelete();
  void badFiles_data();
  void badFiles();
  void badNames_data();
  void badNames();
};

void TestSemanticDirections::closedFormMatchesNumpy_data() {
  QTest::addColumn<int>("nz");
  QTest::addColumn<int>("channels");
  QTest::addColumn<int>("top");
  QTest::newRow("nz 16, 8 channels, top 5") << 16 << 8 << 5;
  QTest::newRow("nz 100, 64 channels, top 10") << 100 << 64 << 10;
  QTest::newRow("nz 32, 2 channels (rank 32), all") << 32 << 2 << 32;
}

void TestSemanticDirections::closedFormMatchesNumpy() {
  QFETCH(int, nz);
  QFETCH(int, channels);
  QFETCH(int, top);
  torch::manual_seed(nz + channels);
  // Decaying scales along the latent: well-separated eigenvalues, so the vectors are defined.
  const torch::Tensor scales = torch::pow(0.85, torch::arange(nz, torch::kFloat64)).view({nz, 1, 1, 1});
  const torch::Tensor weight = (torch::randn({nz, channels, 4, 4}, torch::kFloat64) * scales).to(torch::kFloat32);
  auto ours = SemanticDirections::closedForm(weight, top);
  QVERIFY2(ours, ours.error().c_str());
  QCOMPARE(int(ours->size()), top);
  QTemporaryDir dir;
  auto reference = runPythonReference("semantic_directions_reference.py",
                                      {"sefa", npyDirections(dir, "w", weight), QString::number(top)});
  QVERIFY2(reference.ok, qPrintable(reference.error));
  const QJsonArray vectors = reference.json["vectors"].toArray(), strengths = reference.json["strengths"].toArray();
  for (int i = 0; i < top; ++i) {
    const FoundDirection& d = (*ours)[std::size_t(i)];
    QVERIFY(std::fabs(d.vector.norm().item<double>() - 1) < 1e-12);
    const double difference = upToSign(d.vector, vectors[i].toArray());
    QVERIFY2(difference < 1e-5, qPrintable(QString("direction %1 differs by %2").arg(i).arg(difference)));
    QVERIFY(std::fabs(d.strength - strengths[i].toDouble()) <= 1e-9 * std::fabs(strengths[i].toDouble()));
    if (i) QVERIFY(d.strength <= (*ours)[std::size_t(i - 1)].strength);
    // The sign is fixed: the largest component is positive.
    QVERIFY(d.vector[d.vector.abs().argmax()].item<double>() > 0);
  }
}

void TestSemanticDirections::movingAlongAClosedFormDirectionMovesItsProjection() {
  // h = Az is linear: along a direction u, the output's projection on Au grows with the step.
  Generator g = smallDirectionsGenerator(12, 8, 3);
  const torch::Tensor w = SemanticDirections::firstWeight(*g);
  auto found = SemanticDirections::closedForm(w, 3);
  QVERIFY(found);
  const torch::Tensor a_t = w.flatten(1);  // (nz, D)
  const torch::Tensor z = torch::randn({12}, torch::kFloat64);
  for (const FoundDirection& d : *found) {
    const torch::Tensor axis = torch::mv(a_t.t(), d.vector);
    double previous = -INFINITY;
    for (double t = -3; t <= 3; t += 0.5) {
      const double projection = torch::dot(torch::mv(a_t.t(), z + t * d.vector), axis).item<double>();
      QVERIFY(projection > previous);
      previous = projection;
    }
  }
  QVERIFY(!SemanticDirections::closedForm(w, 0));
  QVERIFY(!SemanticDirections::closedForm(w, 13));
  QVERIFY(!SemanticDirections::closedForm(torch::zeros({12, 8}), 1));
}

void TestSemanticDirections::firstBlockIsTheGeneratorsFirstLayers() {
  Generator g = smallDirectionsGenerator(10, 4, 5);
  const torch::Tensor z = torch::randn({7, 10}, torch::kFloat64);
  const torch::Tensor ours = SemanticDirections::firstBlock(*g, z);
  // LibTorch's own layers in float64: transposed convolution of the 1×1 latent, BatchNorm in eval
  // mode with the running statistics, ReLU.
  auto p = g->named_parameters();
  auto b = g->named_buffers();
  const auto f64 = [](const torch::Tensor& t) { return t.detach().to(torch::kFloat64); };
  torch::Tensor x = torch::conv_transpose2d(z.view({7, 10, 1, 1}), f64(p["main.0.weight"]));
  x = torch::batch_norm(x, f64(p["main.1.weight"]), f64(p["main.1.bias"]), f64(b["main.1.running_mean"]),
                        f64(b["main.1.running_var"]), false, 0.1, 1e-5, false);
  const torch::Tensor expected = torch::relu(x).flatten(1);
  QCOMPARE(ours.sizes(), expected.sizes());
  QVERIFY((ours - expected).abs().max().item<double>() < 1e-12);
}

void TestSemanticDirections::principalMatchesNumpy() {
  Generator g = smallDirectionsGenerator(8, 4, 7);  // 32 channels × 16 = 512 values: the exact path
  torch::manual_seed(8);
  const torch::Tensor z = torch::randn({400, 8}, torch::kFloat64);
  const torch::Tensor h = SemanticDirections::firstBlock(*g, z);
  auto ours = SemanticDirections::principalOf(z, h, 5);
  QVERIFY2(ours, ours.error().c_str());
  QTemporaryDir dir;
  auto reference = runPythonReference("semantic_directions_reference.py",
                                      {"pca", npyDirections(dir, "z", z), npyDirections(dir, "h", h), "5"});
  QVERIFY2(reference.ok, qPrintable(reference.error));
  const QJsonArray vectors = reference.json["vectors"].toArray(), strengths = reference.json["strengths"].toArray();
  for (int i = 0; i < 5; ++i) {
    const double difference = upToSign((*ours)[std::size_t(i)].vector, vectors[i].toArray());
    QVERIFY2(difference < 1e-6, qPrintable(QString("component %1 differs by %2").arg(i).arg(difference)));
    QVERIFY(std::fabs((*ours)[std::size_t(i)].strength - strengths[i].toDouble()) < 1e-10);
  }
  // The generator path draws its own latents from the seed: same seed, same directions.
  PrincipalDirectionsOptions options;
  options.samples = 300;
  options.block = 64;
  int calls = 0;
  options.progress = [&](double) { return ++calls > 0; };
  auto first = SemanticDirections::principal(*g, 3, options), again = SemanticDirections::principal(*g, 3, options);
  QVERIFY(first && again && calls > 4);
  for (int i = 0; i < 3; ++i) QVERIFY(torch::equal((*first)[std::size_t(i)].vector, (*again)[std::size_t(i)].vector));
  options.progress = [](double) { return false; };
  auto cancelled = SemanticDirections::principal(*g, 3, options);
  QVERIFY(!cancelled);
  QCOMPARE(QString::fromStdString(cancelled.error()), QString("directions: cancelled"));
  QVERIFY(!SemanticDirections::principalOf(z.narrow(0, 0, 8), h.narrow(0, 0, 8), 2));  // fewer latents than nz + 1
}

void TestSemanticDirections::subspaceIterationMatchesTheExactAxes() {
  // 5,000 values per row: subspace iteration. Planted axes with a clear spectrum and noise; the
  // exact answer from the 300 × 300 Gram matrix.
  torch::manual_seed(9);
  const auto [z, h] = plantedRows(300, 6, 5000, 0.6, 0.01);
  auto ours = SemanticDirections::principalOf(z, h, 3);
  QVERIFY2(ours, ours.error().c_str());
  const torch::Tensor centred = h - h.mean(0, true);
  const auto eig = torch::linalg_eigh(torch::mm(centred, centred.t()), "L");
  const torch::Tensor left = std::get<1>(eig).flip({1}).narrow(1, 0, 3);  // the projections' directions
  const torch::Tensor u = std::get<0>(torch::linalg_lstsq(z, left, c10::nullopt, "gelsd"));
  for (int i = 0; i < 3; ++i) {
    const torch::Tensor expected = u.select(1, i) / u.select(1, i).norm();
    const double cosine = std::fabs(torch::dot((*ours)[std::size_t(i)].vector, expected).item<double>());
    QVERIFY2(cosine > 1 - 1e-9, qPrintable(QString("component %1: |cos| %2").arg(i).arg(cosine, 0, 'g', 12)));
  }
}

void TestSemanticDirections::principalIsTheSameOnAnyNumberOfThreads() {
  // 5,000 float32 rows of 4,608 values (subspace iteration, as a large model's outputs): LibTorch's
  // own sum of their squares differs in its last bit between 1 and 2 threads here.
  torch::manual_seed(10);
  const PlantedRows planted = plantedRows(5000, 8, 4608, 0.7, 0.1);
  const torch::Tensor z = planted.z, h = planted.h.to(torch::kFloat32);
  std::vector<FoundDirection> one;
  for (int threads : {1, 2, 3}) {
    setComputeThreads(threads);
    auto found = SemanticDirections::principalOf(z, h, 3);
    QVERIFY2(found, found.error().c_str());
    if (threads == 1) one = *found;
    for (std::size_t i = 0; i < 3; ++i) {
      QVERIFY2((*found)[i].strength == one[i].strength,
               qPrintable(QString("%1 threads: variance share %2 of component %3; %4 on 1 thread").arg(threads)
                              .arg((*found)[i].strength, 0, 'g', 17).arg(i).arg(one[i].strength, 0, 'g', 17)));
      QVERIFY(torch::equal((*found)[i].vector, one[i].vector));
    }
  }
  setComputeThreads(2);
}

void TestSemanticDirections::labelledRecoversAPlantedDirection_data() {
  QTest::addColumn<int>("nz");
  QTest::addColumn<int>("count");
  QTest::newRow("nz 32, 1000 latents") << 32 << 1000;
  QTest::newRow("nz 100, 3000 latents") << 100 << 3000;
}

void TestSemanticDirections::labelledRecoversAPlantedDirection() {
  QFETCH(int, nz);
  QFETCH(int, count);
  torch::manual_seed(nz);
  const torch::Tensor planted = torch::randn({nz}, torch::kFloat64);
  const torch::Tensor unit = planted / planted.norm();
  const torch::Tensor z = torch::randn({count, nz}, torch::kFloat64);
  const torch::Tensor side = torch::mv(z, unit) > 0;
  const torch::Tensor has = z.index({side}), lacks = z.index({~side});
  auto found = SemanticDirections::labelled(has, lacks);
  QVERIFY2(found, found.error().c_str());
  const double cosine = torch::dot(found->vector, unit).item<double>();
  QVERIFY2(cosine >= 0.95, qPrintable(QString("cosine %1").arg(cosine)));
  QVERIFY2(found->accuracy >= 0.85, qPrintable(QString("held-out accuracy %1").arg(found->accuracy)));
  QCOMPARE(found->held_out, std::int64_t(std::llround(0.2 * has.size(0)) + std::llround(0.2 * lacks.size(0))));
  QCOMPARE(found->held_out + found->fitted, std::int64_t(count));
  // Labels that say nothing about the latent: about chance on the held-out latents.
  const torch::Tensor coin = torch::rand({count}) > 0.5;
  auto chance = SemanticDirections::labelled(z.index({coin}), z.index({~coin}));
  QVERIFY(chance);
  QVERIFY2(chance->accuracy < 0.7, qPrintable(QString("accuracy %1 on coin flips").arg(chance->accuracy)));
}

void TestSemanticDirections::labelledNeedsEnoughMarks() {
  const torch::Tensor z = torch::randn({30, 8}, torch::kFloat64);
  auto few = SemanticDirections::labelled(z.narrow(0, 0, 9), z.narrow(0, 9, 21));
  QVERIFY(!few);
  QVERIFY2(QString::fromStdString(few.error()).contains("mark at least 10 samples \"has\" and 10 \"lacks\"; got 9 and 21"),
           few.error().c_str());
  auto sizes = SemanticDirections::labelled(z.narrow(0, 0, 15), torch::randn({15, 9}, torch::kFloat64));
  QVERIFY(!sizes);
  torch::Tensor nan = z.narrow(0, 0, 15).clone();
  nan[3][2] = NAN;
  QVERIFY(!SemanticDirections::labelled(nan, z.narrow(0, 15, 15)));
}

void TestSemanticDirections::conditionalKeepsTheOthers() {
  torch::manual_seed(4);
  const torch::Tensor d = torch::randn({20}, torch::kFloat64);
  const std::vector<torch::Tensor> others = {torch::randn({20}, torch::kFloat64), torch::randn({20}, torch::kFloat64)};
  auto kept = SemanticDirections::conditional(d, others);
  QVERIFY2(kept, kept.error().c_str());
  QVERIFY(std::fabs(kept->norm().item<double>() - 1) < 1e-12);
  for (const auto& other : others) QVERIFY(std::fabs(torch::dot(*kept, other).item<double>()) < 1e-12);
  QVERIFY(torch::dot(*kept, d).item<double>() > 0);  // still the same way
  auto inside = SemanticDirections::conditional(others[0] * 2 - others[1], others);
  QVERIFY(!inside);
  QVERIFY2(QString::fromStdString(inside.error()).contains("nothing is left"), inside.error().c_str());
  QVERIFY(!SemanticDirections::conditional(d, {torch::randn({19}, torch::kFloat64)}));
}

void TestSemanticDirections::fileRoundTrip() {
  QTemporaryDir dir;
  LatentDirection d;
  d.name = "night";
  d.kind = LatentDirection::Kind::Labelled;
  d.checkpoint = "runs/a/checkpoints/step-0000000096.pt";
  d.step = 96;
  d.vector = {0.6f, -0.8f, 0.0f};
  d.strength = 0.875;
  d.held_out = 4;
  d.has = {{1, 2, 3}, {0.5f, 0.25f, -1}};
  d.lacks = {{-1, -2, -3}};
  QVERIFY(QDir(dir.path()).mkdir("run"));
  const std::string path = DirectionFile::pathIn(dir.path().toStdString() + "/run", "night");
  QVERIFY(DirectionFile::write(path, d));
  auto back = DirectionFile::read(path, 3);
  QVERIFY2(back, back.error().c_str());
  QCOMPARE(back->name, d.name);
  QVERIFY(back->kind == d.kind);
  QCOMPARE(back->checkpoint, d.checkpoint);
  QCOMPARE(back->step, d.step);
  QCOMPARE(back->vector, d.vector);
  QCOMPARE(back->strength, d.strength);
  QCOMPARE(back->held_out, d.held_out);
  QCOMPARE(back->has, d.has);
  QCOMPARE(back->lacks, d.lacks);
  // A folder that is not there is not made: a mistyped run is an error.
  QVERIFY(!DirectionFile::write(dir.path().toStdString() + "/no-run/directions/x.json", d));
  QVERIFY(!QDir(dir.filePath("no-run")).exists());
  auto other_nz = DirectionFile::read(path, 100);
  QVERIFY(!other_nz);
  QVERIFY2(QString::fromStdString(other_nz.error()).contains("the direction has 3 values, the generator's latent 100"),
           other_nz.error().c_str());
  QCOMPARE(QDir(dir.path() + "/run/directions").entryList(QDir::Files), QStringList{"night.json"});  // no temporary left
}

void TestSemanticDirections::npyExport() {
  QTemporaryDir dir;
  const std::vector<float> v = {0.25f, -0.5f, 1.0f, 2.5f, -3.0f};
  const QString path = dir.filePath("v.npy");
  QVERIFY(DirectionFile::writeNpy(path.toStdString(), v));
  QProcess python;
  python.start("/usr/bin/python3", {"-c", "import sys, numpy; a = numpy.load(sys.argv[1]); print(a.dtype, a.shape, ' '.join(map(str, a)))", path});
  QVERIFY(python.waitForFinished(60000));
  QCOMPARE(QString(python.readAllStandardOutput()).trimmed(), QString("float32 (5,) 0.25 -0.5 1.0 2.5 -3.0"));
  // A link or a FIFO in its place is refused, not replaced.
  QVERIFY(QFile::link(path, dir.filePath("link.npy")));
  auto link = DirectionFile::writeNpy(dir.filePath("link.npy").toStdString(), v);
  QVERIFY(!link);
  QVERIFY2(QString::fromStdString(link.error()).contains("a symbolic link"), link.error().c_str());
  QVERIFY(QFileInfo(dir.filePath("link.npy")).isSymLink());
  QVERIFY(!DirectionFile::writeNpy("", v));
}

void TestSemanticDirections::listRenameDelete() {
  QTemporaryDir dir;
  const std::string run = dir.path().toStdString();
  LatentDirection d;
  d.vector = {1, 0};
  for (const char* name : {"b", "a"}) {
    d.name = name;
    QVERIFY(DirectionFile::write(DirectionFile::pathIn(run, name), d));
  }
  writeText(dir.filePath("directions/broken.json"), "{\"v\": 1, \"kind\": \"closed-form\"");
  QVERIFY(QDir(dir.path()).mkpath("directions/folder.json"));
  // Listed by name (the folder is no file), not read: the broken one is the reader's to report.
  QCOMPARE(DirectionFile::list(run), (std::vector<std::string>{"a", "b", "broken"}));
  QVERIFY(!DirectionFile::read(DirectionFile::pathIn(run, "broken")));
  QVERIFY(!DirectionFile::remove(run, "folder"));
  QVERIFY(QDir(dir.filePath("directions/folder.json")).exists());
  QVERIFY(DirectionFile::remove(run, "broken"));
  auto taken = DirectionFile::rename(run, "a", "b");
  QVERIFY(!taken);
  QVERIFY2(QString::fromStdString(taken.error()).contains("already exists"), taken.error().c_str());
  QVERIFY(DirectionFile::writeNpy(dir.filePath("directions/a.npy").toStdString(), d.vector));
  QVERIFY(DirectionFile::rename(run, "a", "day"));
  QVERIFY(QFile::exists(dir.filePath("directions/day.npy")) && !QFile::exists(dir.filePath("directions/a.npy")));
  QCOMPARE(DirectionFile::list(run), (std::vector<std::string>{"b", "day"}));
  QCOMPARE(DirectionFile::read(DirectionFile::pathIn(run, "day"))->name, std::string("day"));
  QVERIFY(DirectionFile::remove(run, "b"));
  QVERIFY(!DirectionFile::remove(run, "b"));
  QVERIFY(DirectionFile::remove(run, "day"));
  QVERIFY(!QFile::exists(dir.filePath("directions/day.npy")));  // its NumPy copy goes with it
  QVERIFY(DirectionFile::write(DirectionFile::pathIn(run, "day"), d));
  QVERIFY(!DirectionFile::remove(run, "../../etc/passwd"));
  QCOMPARE(DirectionFile::list(run), (std::vector<std::string>{"day"}));
}

void TestSemanticDirections::badFiles_data() {
  QTest::addColumn<QByteArray>("text");
  QTest::addColumn<QString>("error");
  const QByteArray ok = R"("v": 1, "kind": "closed-form", "eigenvalue": 2.5)";
  QTest::newRow("not JSON") << QByteArray("{\"v\": 1,") << "not valid JSON";
  QTest::newRow("not an object") << QByteArray("[1, 2]") << "not a direction file";
  QTest::newRow("another version") << QByteArray(R"({"v": 2, "kind": "closed-form", "eigenvalue": 1, "vector": [1]})")
                                   << "\"v\" must be 1";
  QTest::newRow("unknown kind") << QByteArray(R"({"v": 1, "kind": "magic", "eigenvalue": 1, "vector": [1]})")
                                << "\"kind\" must be";
  QTest::newRow("no vector") << "{" + ok + "}" << "\"vector\" is missing";
  QTest::newRow("empty vector") << "{" + ok + R"(, "vector": []})" << "\"vector\" must be a list of 1 to 4096 numbers";
  QTest::newRow("a string in the vector") << "{" + ok + R"(, "vector": [1, "NaN"]})" << "must hold finite numbers only";
  QTest::newRow("beyond a float") << "{" + ok + R"(, "vector": [1, 1e39]})" << "must hold finite numbers only";
  QTest::newRow("zero vector") << "{" + ok + R"(, "vector": [0, 0]})" << "\"vector\" is zero";
  QTest::newRow("no strength") << QByteArray(R"({"v": 1, "kind": "closed-form", "vector": [1]})")
                               << "\"eigenvalue\" must be a number";
  QTest::newRow("nested deep") << "{" + ok + R"(, "vector": [[[[[1]]]]]})" << "nested deeper than 4 levels";
  QTest::newRow("labelled latent of another size")
      << QByteArray(R"({"v": 1, "kind": "labelled", "accuracy": 0.9, "vector": [1, 0], "labelled": {"has": [[1, 2, 3]]}})")
      << "\"labelled.has[0]\" has 3 values, expected 2";
  QTest::newRow("an accuracy above 1")
      << QByteArray(R"({"v": 1, "kind": "labelled", "accuracy": 5, "vector": [1, 0]})") << "\"accuracy\" must be between 0 and 1";
  QTest::newRow("a negative eigenvalue") << QByteArray(R"({"v": 1, "kind": "closed-form", "eigenvalue": -1, "vector": [1]})")
                                         << "\"eigenvalue\" must be at least 0";
  QTest::newRow("nz not the vector's length") << "{" + ok + R"(, "nz": 32, "vector": [1, 0]})"
                                              << "\"nz\" must be the vector's length, 2";
  QTest::newRow("a long token") << "{" + ok + R"(, "vector": [1, 0)" + QByteArray(100000, '7') + "\x01]}"
                                << "not valid JSON";
  QTest::newRow("labelled not an object")
      << QByteArray(R"({"v": 1, "kind": "labelled", "accuracy": 0.9, "vector": [1, 0], "labelled": 3})")
      << "\"labelled\" must be an object";
}

void TestSemanticDirections::badFiles() {
  QFETCH(QByteArray, text);
  QFETCH(QString, error);
  QTemporaryDir dir;
  const QString path = dir.filePath("d.json");
  writeText(path, text);
  auto read = DirectionFile::read(path.toStdString());
  QVERIFY(!read);
  QVERIFY2(QString::fromStdString(read.error()).startsWith(path), read.error().c_str());
  QVERIFY2(QString::fromStdString(read.error()).contains(error), read.error().c_str());
  QVERIFY2(read.error().size() < std::size_t(path.size() + 400), "one short line, whatever the file holds");
}

void TestSemanticDirections::badNames_data() {
  QTest::addColumn<QString>("name");
  QTest::addColumn<QString>("error");
  QTest::newRow("empty") << "" << "1 to 64 characters";
  QTest::newRow("a path") << "../x" << "must not start with '.'";
  QTest::newRow("a slash") << "a/b" << "letters, digits, '.', '_' and '-' only";
  QTest::newRow("a space") << "day night" << "letters, digits";
  QTest::newRow("too long") << QString(65, 'a') << "1 to 64 characters";
}

void TestSemanticDirections::badNames() {
  QFETCH(QString, name);
  QFETCH(QString, error);
  auto checked = DirectionFile::checkName(name.toStdString());
  QVERIFY(!checked);
  QVERIFY2(QString::fromStdString(checked.error()).contains(error), checked.error().c_str());
}

STREETGAN_TEST_GUILESS_MAIN(TestSemanticDirections)
#include "tst_semantic_directions.moc"
