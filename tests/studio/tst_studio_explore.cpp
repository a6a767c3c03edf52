// The Explore tab offscreen on real checkpoints of the real `streetgan` program (a naive-64
// generator trained for a few steps, so the preview runs a full-size 64 px model): the seed grid,
// keyframes added, reordered and removed, the live preview, latent arithmetic, walk files, export
// through the dialog (decoded back) and its cancel, following a running run's checkpoints, a bad
// checkpoint; a screenshot of the tab.
#include "app/studio/directions_panel.h"
#include "app/studio/checkpoint_file_dialog.h"
#include "app/studio/explore_tab.h"
#include "app/studio/channel_grid_view.h"
#include "app/studio/generator_inside_panel.h"
#include "app/studio/export_walk_dialog.h"
#include "app/studio/latent_arithmetic_panel.h"
#include "app/studio/main_window.h"
#include "app/studio/projection_dialog.h"
#include "app/studio/dataset_tab.h"
#include "app/studio/walk_preview.h"
#include "tests/support/decoded_video.h"
#include "tests/support/test_suite.h"
#include "tests/support/test_support.h"
#include "core/latent/direction_file.h"
#include "widgets/keyframe_strip.h"
#include "widgets/seed_grid.h"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QListWidget>
#include <QProgressDialog>
#include <QPushButton>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QComboBox>
#include <QtTest>

using namespace streetgan;
using namespace streetgan::studio;
using namespace streetgan::widgets;
using namespace streetgan::test;

class TestStudioExplore : public QObject {
  Q_OBJECT
private slots:
  void initTestCase();
  void opensARunAndShowsSeeds();
  void keyframesAddReorderRemove();
  void previewPlaysFromItsCache();
  void latentArithmetic();
  void directionsMoveThePage();
  void findsAPhotographInLatentSpace();
  void looksInsideTheGenerator();
  void walkFileRoundTrip();
  void exportThroughTheDialog();
  void exportCancelLeavesNothing();
  void followsTheLatestCheckpoint();
  void batchNormSwitch();
  void generatorSwitch();
  void badCheckpointIsSaid();
  void openFileTakesRunsAndSteps();

private:
  void openModel(ExploreTab& tab);

  QTemporaryDir dir_;
  QString data_, run_;
  std::unique_ptr<MainWindow> window_;
};

void TestStudioExplore::initTestCase() {
  QCoreApplication::setOrganizationName("StreetGAN-tests");
  QCoreApplication::setApplicationName("tst_studio_explore");
  qputenv("HOME", dir_.path().toUtf8());
  data_ = makeTinyDataset(dir_.filePath("data"));
  run_ = dir_.filePath("StreetGAN/runs/naive");
  // The naive-64 generator (ngf 64, nz 100) at its real size, a few steps on the tiny data.
  const auto trained = runCli({"train", "--dataroot", data_, "--run-dir", run_, "--preset", "naive-64", "--epochs", "1",
                               "--seed", "7", "--threads", testThreadsText(), "-t", R"({"batch_size":8})"});
  QVERIFY2(trained.exit_code == 0, qPrintable(trained.err));
  window_ = std::make_unique<MainWindow>(STREETGAN_CLI);
  window_->resize(1500, 950);
  window_->show();
}

void TestStudioExplore::openModel(ExploreTab& tab) {
  if (tab.explorer()) return;
  QSignalSpy opened(&tab, &ExploreTab::checkpointOpened);
  tab.openRun(run_, false);
  QVERIFY(opened.wait(60000));
  QVERIFY2(opened.first().first().toBool(), qPrintable(opened.first().last().toString()));
}

void TestStudioExplore::opensARunAndShowsSeeds() {
  ExploreTab& tab = window_->exploreTab();
  window_->tabs().setCurrentWidget(&tab);
  openModel(tab);
  QCOMPARE(tab.explorer()->imageSize(), 64);
  QCOMPARE(tab.explorer()->nz(), 100);
  QVERIFY(tab.statusText().contains("latent size 100"));
  SeedGrid& grid = tab.seedGrid();
  QSignalSpy rendered(&grid, &SeedGrid::rendered);
  QTRY_VERIFY_WITH_TIMEOUT(!grid.isRendering() && !grid.imageAt(15).isNull(), 30000);
  QCOMPARE(grid.tileCount(), 16);
  QCOMPARE(grid.imageAt(0).size(), QSize(64, 64));
  const QImage first = grid.imageAt(0);
  grid.setFirstSeed(16);
  QVERIFY(rendered.wait(30000));
  QCOMPARE(grid.seedAt(0), quint64(16));
  QVERIFY(grid.imageAt(0) != first);
  grid.setFirstSeed(0);
  QVERIFY(rendered.wait(30000));
  QCOMPARE(grid.imageAt(0), first);  // a seed always gives the same sample
}

void TestStudioExplore::keyframesAddReorderRemove() {
  ExploreTab& tab = window_->exploreTab();
  openModel(tab);
  SeedGrid& grid = tab.seedGrid();
  QTRY_VERIFY_WITH_TIMEOUT(!grid.isRendering() && !grid.imageAt(2).isNull(), 30000);
  KeyframeStrip& strip = tab.keyframes();
  strip.clear();
  for (int tile : {0, 1, 2}) grid.clickTile(tile);
  QCOMPARE(strip.labels(), (QStringList{"seed 0", "seed 1", "seed 2"}));
  strip.move(0, 2);
  QCOMPARE(strip.labels(), (QStringList{"seed 1", "seed 2", "seed 0"}));
  QCOMPARE(strip.latents()[2], tab.explorer()->latentOfSeed(0));
  QCOMPARE(strip.latents()[0], tab.explorer()->latentOfSeed(1));
  // The preview follows: 3 keys, 30 frames each, looping.
  QCOMPARE(tab.preview().frameCount(), 90);
  strip.remove(1);
  QCOMPARE(strip.labels(), (QStringList{"seed 1", "seed 0"}));
  QCOMPARE(tab.preview().frameCount(), 60);
  // The Delete key removes the selection.
  strip.list().setFocus();
  strip.list().item(0)->setSelected(true);
  QTest::keyClick(&strip.list(), Qt::Key_Delete);
  QCOMPARE(strip.labels(), (QStringList{"seed 0"}));
  QCOMPARE(tab.preview().frameCount(), 0);
  QVERIFY(tab.preview().statusText().contains("at least two keyframes"));
}

void TestStudioExplore::previewPlaysFromItsCache() {
  ExploreTab& tab = window_->exploreTab();
  openModel(tab);
  SeedGrid& grid = tab.seedGrid();
  QTRY_VERIFY_WITH_TIMEOUT(!grid.isRendering() && !grid.imageAt(5).isNull(), 30000);
  tab.keyframes().clear();
  for (int tile : {3, 4, 5}) grid.clickTile(tile);
  WalkPreview& preview = tab.preview();
  QCOMPARE(preview.frameCount(), 90);
  // Every frame ends up in the cache (the wait is a hang guard only: how fast the worker renders
  // is `streetgan bench explore`'s figure, against the preview's 30 frames/s, bench/README.md).
  QTRY_VERIFY_WITH_TIMEOUT(preview.cachedFrames() == 90, 300000);
  // Once every frame is rendered, playback never waits for one: it plays on from the cache past
  // the walk's end and round again (the loop), and no tick finds its frame missing.
  preview.setPlaying(false);
  preview.setPlaying(true);
  QTRY_VERIFY_WITH_TIMEOUT(preview.shownFrames() >= 100, 120000);
  qInfo("shown %d frames (%.1f frames/s at a set 30), %d ticks without a frame", preview.shownFrames(),
        preview.shownRate(), preview.missedTicks());
  QCOMPARE(preview.missedTicks(), 0);
  QCOMPARE(preview.cachedFrames(), 90);
  QCOMPARE(preview.currentFrame().size(), QSize(64, 64));
  // A 2 × 2 grid walk tiles four walks of their own.
  preview.setKeys(tab.keyframes().latents(), tab.keyframes().seeds());
  WalkPlan plan = preview.plan();
  plan.rows = plan.columns = 2;
  auto frames = tab.explorer()->renderFrames(plan, 0, 1);
  QVERIFY(frames.ok());
  QCOMPARE(frames->front().width, 2 * 64 + 3 * 2);
}

void TestStudioExplore::latentArithmetic() {
  ExploreTab& tab = window_->exploreTab();
  openModel(tab);
  SeedGrid& grid = tab.seedGrid();
  QTRY_VERIFY_WITH_TIMEOUT(!grid.isRendering() && !grid.imageAt(4).isNull(), 30000);
  LatentArithmeticPanel& panel = tab.arithmetic();
  panel.clearGroups();
  QVERIFY(!panel.compute());
  QVERIFY(panel.statusText().startsWith("Put at least one sample in each group"));
  emit grid.groupRequested(1, 0, grid.imageAt(1));
  emit grid.groupRequested(2, 0, grid.imageAt(2));
  emit grid.groupRequested(3, 1, grid.imageAt(3));
  emit grid.groupRequested(4, 2, grid.imageAt(4));
  QCOMPARE(panel.groupSize(0), 2);
  QSignalSpy computed(&panel, &LatentArithmeticPanel::computed);
  QVERIFY(panel.compute());
  QVERIFY(computed.wait(30000));
  QCOMPARE(computed.first().first().toString(), QString());
  QCOMPARE(panel.resultCount(), 9);
  // The middle is (z1 + z2)/2 − z3 + z4, computed here independently.
  const auto z = [&](int seed) { return tab.explorer()->latentOfSeed(seed); };
  const Latent& middle = panel.resultLatent(4);
  for (std::size_t i = 0; i < middle.size(); ++i)
    QVERIFY(std::abs(middle[i] - ((z(1)[i] + z(2)[i]) / 2 - z(3)[i] + z(4)[i])) < 1e-5);
  QVERIFY(panel.resultLatent(0) != middle);
  const int keys = tab.keyframes().count();
  panel.useAsKeyframe(4);
  QCOMPARE(tab.keyframes().count(), keys + 1);
  QCOMPARE(tab.keyframes().labels().last(), QString("latent"));
  QCOMPARE(tab.keyframes().latents().back(), middle);
  window_->tabs().setCurrentWidget(&tab);
  const QString shot = testOutputDir() + "/studio-tab-explore-arithmetic.png";
  QVERIFY(window_->grab().save(shot));
}

void TestStudioExplore::directionsMoveThePage() {
  ExploreTab& tab = window_->exploreTab();
  openModel(tab);
  SeedGrid& grid = tab.seedGrid();
  grid.setFirstSeed(0);
  QTRY_VERIFY_WITH_TIMEOUT(!grid.isRendering() && !grid.imageAt(15).isNull(), 30000);
  const QImage before = grid.imageAt(0);
  DirectionsPanel& panel = tab.directions();
  // SeFa: the strongest 20 directions, instant.
  panel.setMethod("sefa");
  panel.setTop(20);
  panel.find();
  QTRY_VERIFY_WITH_TIMEOUT(!panel.isFinding(), 30000);
  QCOMPARE(panel.rowCount(), 20);
  QVERIFY2(panel.statusText().startsWith("20 directions found"), qPrintable(panel.statusText()));
  QVERIFY(panel.direction(0).strength >= panel.direction(1).strength);
  // A slider moves every sample of the page together: the grid renders seed latent + 2.5 d.
  QSignalSpy rendered(&grid, &SeedGrid::rendered);
  panel.setAmount(0, 2.5);
  QCOMPARE(panel.amount(0), 2.5);
  QVERIFY(rendered.wait(30000));
  QTRY_VERIFY_WITH_TIMEOUT(!grid.isRendering(), 30000);
  QVERIFY(grid.imageAt(0) != before);
  const Latent moved = grid.latentOf(0);
  const Latent seed = tab.explorer()->latentOfSeed(0);
  for (std::size_t i = 0; i < seed.size(); ++i)
    QVERIFY(std::abs(moved[i] - (seed[i] + 2.5f * panel.direction(0).vector[i])) < 1e-5);
  // A sample clicked now is a keyframe at the moved latent.
  const int keys = tab.keyframes().count();
  grid.clickTile(0);
  QCOMPARE(tab.keyframes().count(), keys + 1);
  QCOMPARE(tab.keyframes().latents().back(), moved);
  // Labelled: 200 marks each side of a planted direction (the sign of the latent's first value).
  panel.clearMarks();
  for (quint64 s = 100; panel.markCount(true) < 200 || panel.markCount(false) < 200; ++s) {
    const Latent z = tab.explorer()->latentOfSeed(s);
    if ((z[0] > 0 ? panel.markCount(true) : panel.markCount(false)) < 200) panel.mark(z, z[0] > 0);
  }
  QVERIFY(panel.fitLabelled());
  const LatentDirection& labelled = panel.direction(panel.rowCount() - 1);
  QVERIFY(labelled.kind == LatentDirection::Kind::Labelled);
  QVERIFY2(labelled.vector[0] > 0.6f, qPrintable(QString::number(labelled.vector[0])));
  QVERIFY2(panel.statusText().contains("held-out samples"), qPrintable(panel.statusText()));
  // Conditional: with direction 0 in use, the labelled direction is kept orthogonal to it.
  panel.setConditional(true);
  QVERIFY(panel.fitLabelled());
  const LatentDirection& conditional = panel.direction(panel.rowCount() - 1);
  double dot = 0;
  for (std::size_t i = 0; i < seed.size(); ++i) dot += double(conditional.vector[i]) * panel.direction(0).vector[i];
  QVERIFY(std::abs(dot) < 1e-5);
  panel.setConditional(false);
  // Saved into the run, refused under a taken or bad name.
  QVERIFY2(panel.save(0, "sefa-strongest"), qPrintable(panel.statusText()));
  QVERIFY(QFile::exists(run_ + "/directions/sefa-strongest.json"));
  QVERIFY(!panel.save(1, "sefa-strongest"));
  QVERIFY(panel.statusText().contains("already exists"));
  QVERIFY(!panel.save(1, "../out"));
  auto read = DirectionFile::read((run_ + "/directions/sefa-strongest.json").toStdString(), 100);
  QVERIFY2(read, read.error().c_str());
  QCOMPARE(read->vector, panel.direction(0).vector);
  // Walk along it: two keyframes, −3 and +3 times the direction from the page's first seed.
  tab.walkAlongDirection(0);
  QTRY_COMPARE_WITH_TIMEOUT(tab.keyframes().count(), 2, 30000);
  const auto walk_keys = tab.keyframes().latents();
  for (std::size_t i = 0; i < seed.size(); ++i) {
    QVERIFY(std::abs(walk_keys[0][i] - (seed[i] - 3 * panel.direction(0).vector[i])) < 1e-5);
    QVERIFY(std::abs(walk_keys[1][i] - (seed[i] + 3 * panel.direction(0).vector[i])) < 1e-5);
  }
  // PCA runs on a worker; Cancel stops it.
  panel.setMethod("pca");
  panel.find();
  QVERIFY(panel.isFinding());
  panel.cancel();
  QTRY_VERIFY_WITH_TIMEOUT(!panel.isFinding(), 60000);
  QVERIFY2(panel.statusText().startsWith("Cancelled"), qPrintable(panel.statusText()));
  window_->tabs().setCurrentWidget(&tab);
  tab.findChild<QTabWidget*>()->setCurrentWidget(&panel);
  QTest::qWait(300);
  const QString shot = testOutputDir() + "/studio-explore-directions.png";
  QVERIFY(window_->grab().save(shot));
  qInfo("screenshot: %s", qPrintable(shot));
  // Reopening the checkpoint lists the run's saved direction; the page goes back to its seeds.
  panel.resetAmounts();
  QTRY_VERIFY_WITH_TIMEOUT(!grid.isRendering(), 30000);
  QCOMPARE(grid.imageAt(0), before);
  panel.setExplorer(tab.explorer());
  QCOMPARE(panel.rowCount(), 1);
  QCOMPARE(QString::fromStdString(panel.direction(0).name), QString("sefa-strongest"));
  tab.keyframes().clear();
}

void TestStudioExplore::findsAPhotographInLatentSpace() {
  ExploreTab& tab = window_->exploreTab();
  openModel(tab);
  tab.keyframes().clear();
  QDirIterator images(data_, {"*.jpg"}, QDir::Files, QDirIterator::Subdirectories);
  QVERIFY(images.hasNext());
  const QString photo = images.next();
  // From the Dataset tab's right-click: the Explore tab opens the dialog, which starts at once
  // (500 steps from 8 starts); Cancel stops it and keeps nothing.
  emit window_->datasetTab().findInLatentSpaceRequested(photo);
  QCOMPARE(window_->tabs().currentWidget(), &tab);
  auto* dialog = tab.findChild<ProjectionDialog*>();
  QVERIFY(dialog);
  QVERIFY(dialog->isRunning());
  dialog->cancel();
  QTRY_VERIFY_WITH_TIMEOUT(!dialog->isRunning(), 60000);
  QVERIFY2(dialog->statusText().startsWith("Cancelled"), qPrintable(dialog->statusText()));
  QVERIFY(!dialog->result());
  // A short projection: the photograph, its reconstruction and their difference, the error said.
  dialog->setSteps(40);
  dialog->setRestarts(2);
  dialog->start();
  QTRY_VERIFY_WITH_TIMEOUT(!dialog->isRunning(), 120000);
  QVERIFY2(dialog->result(), qPrintable(dialog->statusText()));
  QVERIFY2(dialog->statusText().contains("pixel RMSE") && dialog->statusText().contains("BatchNorm: running statistics"),
           qPrintable(dialog->statusText()));
  QCOMPARE(dialog->photoImage().size(), QSize(64, 64));
  QCOMPARE(dialog->reconstructionImage().size(), QSize(64, 64));
  QCOMPARE(dialog->differenceImage().size(), QSize(64, 64));
  // The reconstruction is the latent's own image, as the page renders it (the page through the
  // BatchNorm-folded copy: equal up to float rounding, at most one level of 255).
  auto rendered = tab.explorer()->render({dialog->result()->latent});
  QVERIFY(rendered);
  QCOMPARE(rendered->front().pixels.size(), dialog->result()->reconstruction.pixels.size());
  for (std::size_t i = 0; i < rendered->front().pixels.size(); ++i)
    QVERIFY(std::abs(int(rendered->front().pixels[i]) - int(dialog->result()->reconstruction.pixels[i])) <= 1);
  const QString shot = testOutputDir() + "/studio-explore-find-in-latent-space.png";
  QVERIFY(dialog->grab().save(shot));
  qInfo("screenshot: %s", qPrintable(shot));
  // Add as Keyframe: the latent joins the walk.
  for (auto* button : dialog->findChildren<QPushButton*>())
    if (button->text() == "Add as Keyframe") button->click();
  QCOMPARE(tab.keyframes().count(), 1);
  QCOMPARE(tab.keyframes().latents().front(), dialog->result()->latent);
  dialog->close();
  QTRY_VERIFY(!tab.findChild<ProjectionDialog*>());
  tab.keyframes().clear();
}

void TestStudioExplore::looksInsideTheGenerator() {
  ExploreTab& tab = window_->exploreTab();
  openModel(tab);
  SeedGrid& grid = tab.seedGrid();
  grid.setFirstSeed(40);
  QTRY_VERIFY_WITH_TIMEOUT(!grid.isRendering() && !grid.imageAt(3).isNull(), 30000);
  GeneratorInsidePanel& panel = tab.inside();
  grid.lookInside(3);  // the sample's context menu
  QTRY_VERIFY_WITH_TIMEOUT(!panel.isRendering() && panel.inside(), 30000);
  QVERIFY2(panel.statusText().startsWith("Seed 43: 0 channels switched off; BatchNorm: running statistics"),
           qPrintable(panel.statusText()));
  // The sample as the page shows it; the naive-64 model's blocks: 512×4×4 … 64×32×32, the image.
  // (The page renders through the BatchNorm-folded copy, the Inside page through G's own layers:
  // equal up to float rounding, at most one level of 255.)
  {
    const QImage a = panel.sampleImage().convertToFormat(QImage::Format_RGB888);
    const QImage b = grid.imageAt(3).convertToFormat(QImage::Format_RGB888);
    QCOMPARE(a.size(), b.size());
    for (int y = 0; y < a.height(); ++y)
      for (int x = 0; x < a.width() * 3; ++x) QVERIFY(std::abs(int(a.constScanLine(y)[x]) - int(b.constScanLine(y)[x])) <= 1);
  }
  QCOMPARE(panel.inside()->layers.size(), std::size_t(5));
  QVERIFY(panel.inside()->discriminator_score && *panel.inside()->discriminator_score > 0);
  panel.setBlock(2);  // 128 channels of 16×16
  QCOMPARE(panel.statistics().rowCount(), 128);
  // Rows sorted by mean activation, the strongest first; its tile is the grid's first.
  const double first = panel.statistics().item(0, 1)->data(Qt::UserRole).toDouble();
  QVERIFY(first >= panel.statistics().item(1, 1)->data(Qt::UserRole).toDouble());
  const int strongest = panel.statistics().item(0, 0)->data(Qt::UserRole).toInt();
  QCOMPARE(panel.grid().channelAt(panel.grid().tileRect(strongest).center()), strongest);
  // A click switches the channel off: the sample is drawn again without it.
  const QImage whole = panel.sampleImage();
  QTest::mouseClick(&panel.grid(), Qt::LeftButton, {}, panel.grid().tileRect(strongest).center());
  QTRY_VERIFY_WITH_TIMEOUT(!panel.isRendering() && panel.statusText().contains("1 channel switched off"), 30000);
  QVERIFY(panel.sampleImage() != whole);
  QCOMPARE(panel.grid().channelAt(panel.grid().tileRect(strongest).center()), strongest);  // the tiles stay put
  QCOMPARE(panel.grid().tileRect(strongest).topLeft(), QPoint(0, 0));
  const auto& view = panel.inside()->layers[2];
  const std::size_t plane = std::size_t(view.height * view.width);
  for (std::size_t i = 0; i < plane; ++i) QCOMPARE(view.activations[std::size_t(strongest) * plane + i], 0.0f);
  const QString png = dir_.filePath("inside.png");
  QVERIFY(panel.savePng(png));
  QVERIFY(!QImage(png).isNull());
  window_->tabs().setCurrentWidget(&tab);
  QTest::qWait(300);
  const QString shot = testOutputDir() + "/studio-explore-inside.png";
  QVERIFY(window_->grab().save(shot));
  qInfo("screenshot: %s", qPrintable(shot));
  // Switched back on, the sample is whole again; the image's own channels cannot be switched off.
  panel.clearAblations();
  QTRY_VERIFY_WITH_TIMEOUT(!panel.isRendering() && panel.statusText().contains("0 channels switched off"), 30000);
  QCOMPARE(panel.sampleImage(), whole);
  panel.setBlock(4);
  panel.toggleChannel(0);
  QVERIFY2(panel.statusText().contains("cannot be switched off"), qPrintable(panel.statusText()));
  grid.setFirstSeed(0);
}

void TestStudioExplore::walkFileRoundTrip() {
  ExploreTab& tab = window_->exploreTab();
  openModel(tab);
  SeedGrid& grid = tab.seedGrid();
  QTRY_VERIFY_WITH_TIMEOUT(!grid.isRendering() && !grid.imageAt(9).isNull(), 30000);
  tab.keyframes().clear();
  for (int tile : {7, 8, 9}) grid.clickTile(tile);
  const auto latents = tab.keyframes().latents();
  const QString file = dir_.filePath("walk.json");
  QVERIFY(tab.saveWalk(file));
  tab.keyframes().clear();
  QVERIFY(tab.loadWalk(file));
  QCOMPARE(tab.keyframes().labels(), (QStringList{"seed 7", "seed 8", "seed 9"}));
  QCOMPARE(tab.keyframes().latents(), latents);  // bit for bit
  QCOMPARE(tab.preview().frameCount(), 90);
  // A broken file says which and why, and keeps the strip.
  QFile broken(dir_.filePath("broken.json"));
  QVERIFY(broken.open(QIODevice::WriteOnly));
  broken.write("{\"keyframes\": 3}");
  broken.close();
  QVERIFY(!tab.loadWalk(broken.fileName()));
  QVERIFY2(tab.statusText().contains("broken.json"), qPrintable(tab.statusText()));
  QCOMPARE(tab.keyframes().count(), 3);
  window_->tabs().setCurrentWidget(&tab);
  QTest::qWait(300);
  const QString shot = testOutputDir() + "/studio-tab-explore.png";
  QVERIFY(window_->grab().save(shot));
  qInfo("screenshot: %s", qPrintable(shot));
}

void TestStudioExplore::exportThroughTheDialog() {
  ExploreTab& tab = window_->exploreTab();
  openModel(tab);
  if (tab.keyframes().count() < 2) QSKIP("needs the walk of walkFileRoundTrip");
  auto dialog = tab.makeExportDialog();
  QVERIFY(dialog);
  const QString out = dir_.filePath("walk.gif");
  dialog->setPath(out);
  dialog->setFormat("gif");
  dialog->setLongSide(128);
  dialog->setOfferReveal(false);
  QVERIFY2(dialog->runExport(), qPrintable(dialog->resultMessage()));
  QVERIFY(dialog->resultMessage().startsWith("Exported 90 frames to"));
  const DecodedVideo video = decodeVideo(out);
  QVERIFY2(video.error.isEmpty(), qPrintable(video.error));
  QCOMPARE(video.codec, QString("gif"));
  QCOMPARE(int(video.frames.size()), 90);
  QCOMPARE(video.width, 128);
  QCOMPARE(video.height, 128);
}

void TestStudioExplore::exportCancelLeavesNothing() {
  ExploreTab& tab = window_->exploreTab();
  openModel(tab);
  if (tab.keyframes().count() < 2) QSKIP("needs the walk of walkFileRoundTrip");
  auto dialog = tab.makeExportDialog();
  QVERIFY(dialog);
  QDir().mkpath(dir_.filePath("cancelled"));
  const QString out = dir_.filePath("cancelled/walk.mp4");
  dialog->setPath(out);
  dialog->setFormat("mp4");
  dialog->setLongSide(1024);
  dialog->setOfferReveal(false);
  // Cancel as soon as the progress dialog is up (it was a fixed 150 ms: on a busy machine the
  // dialog did not exist yet and the test failed).
  QTimer poll;
  poll.setInterval(20);
  QObject::connect(&poll, &QTimer::timeout, dialog.get(), [&dialog, &poll] {
    if (!dialog->progressDialog()) return;
    poll.stop();
    dialog->progressDialog()->cancel();
  });
  poll.start();
  QElapsedTimer clock;
  clock.start();
  const bool exported = dialog->runExport();
  QVERIFY2(!exported, qPrintable(QString("%1 after %2 ms").arg(dialog->resultMessage()).arg(clock.elapsed())));
  QCOMPARE(dialog->resultMessage(), "Export cancelled; nothing was written to " + out + ".");
  QCOMPARE(QDir(dir_.filePath("cancelled")).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden), QStringList());
}

void TestStudioExplore::followsTheLatestCheckpoint() {
  ExploreTab& tab = window_->exploreTab();
  const QString live = dir_.filePath("StreetGAN/runs/live");
  QProcess process;
  process.setProgram(STREETGAN_CLI);
  process.setArguments(tinyTrainArgs(data_, live, 100000));
  process.setStandardOutputFile(QProcess::nullDevice());
  process.start();
  QVERIFY(process.waitForStarted());
  QTRY_VERIFY_WITH_TIMEOUT(!QDir(live + "/checkpoints").entryList({"*.pt"}).isEmpty(), 120000);
  QSignalSpy opened(&tab, &ExploreTab::checkpointOpened);
  tab.openRun(live, true);
  QVERIFY(opened.wait(60000));
  QVERIFY(opened.last().first().toBool());
  const std::int64_t first_step = tab.explorer()->step();
  QVERIFY(tab.statusText().contains("following the run's checkpoints"));
  // A newer checkpoint lands and is loaded on its own.
  QTRY_VERIFY_WITH_TIMEOUT(tab.explorer()->step() > first_step, 60000);
  process.kill();
  QVERIFY(process.waitForFinished());
  // Opening a file stops following.
  tab.openCheckpoint(QDir(run_ + "/checkpoints").entryInfoList({"*.pt"}).last().absoluteFilePath());
  QVERIFY(opened.wait(60000));
  QCOMPARE(tab.explorer()->imageSize(), 64);
  QVERIFY(!tab.statusText().contains("following"));
}

void TestStudioExplore::batchNormSwitch() {
  ExploreTab& tab = window_->exploreTab();
  window_->tabs().setCurrentWidget(&tab);
  // One checkpoint file, opened by hand: no run is followed, so the model stays the same.
  const QStringList checkpoints = QDir(run_ + "/checkpoints").entryList({"*.pt"}, QDir::Files, QDir::Name);
  QVERIFY(!checkpoints.isEmpty());
  QSignalSpy opened(&tab, &ExploreTab::checkpointOpened);
  tab.openCheckpoint(run_ + "/checkpoints/" + checkpoints.last());
  QVERIFY(opened.wait(60000));
  QVERIFY(opened.first().first().toBool());
  QVERIFY(!tab.isFollowing());
  QVERIFY(!tab.batchStatistics());  // eval mode by default
  SeedGrid& grid = tab.seedGrid();
  QTRY_VERIFY_WITH_TIMEOUT(!grid.isRendering() && !grid.imageAt(15).isNull(), 30000);
  const QImage running = grid.imageAt(3);
  // The same latents rendered through the explorer: eval twice gives the same pixels.
  const Latent latent = tab.explorer()->latentOfSeed(3);
  auto eval_image = tab.explorer()->render({latent, tab.explorer()->latentOfSeed(4)});
  QVERIFY(eval_image);
  // This batch's statistics: the page is drawn again, and differently.
  QSignalSpy rendered(&grid, &SeedGrid::rendered);
  tab.setBatchStatistics(true);
  QVERIFY(tab.explorer()->batchStatistics());
  QVERIFY(rendered.wait(30000));
  QTRY_VERIFY_WITH_TIMEOUT(!grid.isRendering(), 30000);
  QVERIFY(grid.imageAt(3) != running);
  const QString path = testOutputDir() + "/explore-batch-statistics.png";
  QVERIFY(tab.grab().save(path));
  qInfo("screenshot: %s", qPrintable(path));
  auto train_image = tab.explorer()->render({latent, tab.explorer()->latentOfSeed(4)});
  QVERIFY(train_image);
  QVERIFY((*train_image)[0].pixels != (*eval_image)[0].pixels);
  // Back to the running statistics: exactly the images of before (the model was not changed).
  tab.setBatchStatistics(false);
  // The page may be drawn in more than one pass (a render already under way finishes first):
  // what counts is the page it settles on.
  QTRY_VERIFY_WITH_TIMEOUT(!grid.isRendering() && grid.imageAt(3) == running, 30000);
  auto again = tab.explorer()->render({latent, tab.explorer()->latentOfSeed(4)});
  QVERIFY(again);
  QVERIFY((*again)[0].pixels == (*eval_image)[0].pixels);
}

// A run that keeps G's moving average opens with it; the Generator switch opens the same file's
// raw G, which renders other images, and the status line says which one renders.
void TestStudioExplore::generatorSwitch() {
  const QString run = dir_.filePath("ema-run");
  const auto trained = runCli({"train", "--dataroot", data_, "--run-dir", run, "--epochs", "1", "--seed", "3",
                               "--threads", testThreadsText(), "-t",
                               R"({"batch_size":8,"ngf":8,"ndf":8,"nz":16,"ema":{"half_life_images":20}})"});
  QVERIFY2(trained.exit_code == 0, qPrintable(trained.err));
  ExploreTab& tab = window_->exploreTab();
  window_->tabs().setCurrentWidget(&tab);
  auto* generator = tab.findChild<QComboBox*>("generator");
  QVERIFY(generator);
  QCOMPARE(generator->currentText(), QString("Moving average"));
  const QStringList checkpoints = QDir(run + "/checkpoints").entryList({"*.pt"}, QDir::Files, QDir::Name);
  QVERIFY(!checkpoints.isEmpty());
  QSignalSpy opened(&tab, &ExploreTab::checkpointOpened);
  tab.openCheckpoint(run + "/checkpoints/" + checkpoints.last());
  QVERIFY(opened.wait(60000));
  QVERIFY2(opened.last().first().toBool(), qPrintable(opened.last().last().toString()));
  QVERIFY2(tab.statusText().contains("G's moving average (ema)"), qPrintable(tab.statusText()));
  const Latent latent = tab.explorer()->latentOfSeed(5);
  auto average = tab.explorer()->render({latent});
  QVERIFY(average);

  generator->setCurrentIndex(1);
  QVERIFY(opened.wait(60000));
  QVERIFY(opened.last().first().toBool());
  QVERIFY2(tab.statusText().contains("the raw G (raw)"), qPrintable(tab.statusText()));
  QVERIFY(!tab.explorer()->rendersAverage());
  auto raw = tab.explorer()->render({latent});
  QVERIFY(raw);
  QVERIFY((*raw)[0].pixels != (*average)[0].pixels);
  const QString path = testOutputDir() + "/explore-generator-raw.png";
  QVERIFY(tab.grab().save(path));
  qInfo("screenshot: %s", qPrintable(path));

  generator->setCurrentIndex(0);
  QVERIFY(opened.wait(60000));
  QVERIFY(tab.explorer()->rendersAverage());
  auto again = tab.explorer()->render({latent});
  QVERIFY(again);
  QVERIFY((*again)[0].pixels == (*average)[0].pixels);
}

void TestStudioExplore::badCheckpointIsSaid() {
  ExploreTab& tab = window_->exploreTab();
  const QString bad = dir_.filePath("bad.pt");
  QFile file(bad);
  QVERIFY(file.open(QIODevice::WriteOnly));
  file.write("this is not a checkpoint");
  file.close();
  const auto before = tab.explorer();
  QSignalSpy opened(&tab, &ExploreTab::checkpointOpened);
  tab.openCheckpoint(bad);
  QVERIFY(opened.wait(60000));
  QCOMPARE(opened.first().first().toBool(), false);
  QVERIFY2(tab.statusText().startsWith("Cannot open " + bad), qPrintable(tab.statusText()));
  QCOMPARE(tab.explorer(), before);  // the model open before stays
  tab.openRun(dir_.filePath("no-such-run"), false);
  QVERIFY(tab.statusText().contains("has no checkpoint yet"));
}

// Open File… takes what --checkpoint takes: a run folder chosen as a whole (another folder is
// entered, as always), a typed RUN@STEP; ExploreTab opens the checkpoint they name, or says why not.
void TestStudioExplore::openFileTakesRunsAndSteps() {
  const QString runs = QFileInfo(run_).path();
  {
    CheckpointFileDialog dialog(window_.get(), runs);
    dialog.resize(900, 520);
    dialog.show();
    dialog.selectFile(run_);
    QVERIFY(QTest::qWaitForWindowExposed(&dialog));
    QVERIFY(dialog.grab().save(testOutputDir() + "/studio-open-checkpoint.png"));
    dialog.accept();
    QCOMPARE(dialog.result(), int(QDialog::Accepted));
    QCOMPARE(QDir::cleanPath(dialog.chosen()), QDir::cleanPath(run_));
  }
  {
    CheckpointFileDialog dialog(window_.get(), runs);
    dialog.show();
    dialog.selectFile(data_);  // a folder that is not a run: Open goes into it
    dialog.accept();
    QVERIFY(dialog.isVisible());
    QCOMPARE(dialog.chosen(), QString());
    QCOMPARE(QDir::cleanPath(dialog.directory().absolutePath()), QDir::cleanPath(data_));
    dialog.selectFile(run_ + "@latest");  // typed: names no file
    dialog.accept();
    QCOMPARE(dialog.result(), int(QDialog::Accepted));
    QCOMPARE(dialog.chosen(), run_ + "@latest");
  }
  ExploreTab& tab = window_->exploreTab();
  const QString newest = QDir(run_ + "/checkpoints").entryInfoList({"step-*.pt"}, QDir::Files, QDir::Name).last().filePath();
  QSignalSpy opened(&tab, &ExploreTab::checkpointOpened);
  tab.openCheckpoint(run_ + "@latest");
  QVERIFY(opened.wait(60000));
  QVERIFY2(opened.first().first().toBool(), qPrintable(opened.first().last().toString()));
  QCOMPARE(QString::fromStdString(tab.explorer()->checkpointPath()), newest);
  opened.clear();
  tab.openCheckpoint(run_ + "@0");
  QCOMPARE(opened.size(), 1);
  QCOMPARE(opened.first().first().toBool(), false);
  QVERIFY2(tab.statusText().contains(run_ + "@0: the run " + run_ + " has no checkpoint at or before step 0"),
           qPrintable(tab.statusText()));
  QCOMPARE(QString::fromStdString(tab.explorer()->checkpointPath()), newest);  // the model open before stays
}

STREETGAN_TEST_MAIN(TestStudioExplore)
#include "tst_studio_explore.moc"
