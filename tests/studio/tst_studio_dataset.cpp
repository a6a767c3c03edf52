// The Dataset tab offscreen on real files: the demo data set listed (tree, counts table and bar
// chart), filters changing the count, a city picked in the tree, thumbnails decoded lazily, the
// augmented variants of a selected image and its settings sent to the Train tab, a bad folder;
// and a thumbnail grid of 100,000 entries scrolled end to end with a bounded cache (how smoothly
// is bench_gui_stall's figure, bench/README.md). Screenshots of the tab.
#include "app/studio/dataset_tab.h"
#include "app/studio/main_window.h"
#include "app/studio/train_tab.h"
#include "core/data/image_dataset.h"
#include "tests/support/test_suite.h"
#include "tests/support/test_support.h"
#include "widgets/augmentation_panel.h"
#include "widgets/config_form.h"
#include "widgets/dataset_picker.h"
#include "widgets/thumbnail_model.h"

#include <QDir>
#include <QListView>
#include <QScrollBar>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTimer>
#include <QTreeWidget>
#include <QtTest>

using namespace streetgan;
using namespace streetgan::studio;
using namespace streetgan::widgets;
using namespace streetgan::test;

class TestStudioDataset : public QObject {
  Q_OBJECT
private slots:
  void initTestCase();
  void listsTheDataSet();
  void filtersChangeTheListing();
  void treePicksACity();
  void thumbnailsAreDecodedLazily();
  void selectedImageAndItsVariants();
  void badFolderIsSaid();
  void hundredThousandThumbnailsScrollWithABoundedCache();

private:
  bool waitForListing(DatasetTab& tab, QString* error = nullptr);

  QTemporaryDir dir_;
  QString data_;
  std::unique_ptr<MainWindow> window_;
};

void TestStudioDataset::initTestCase() {
  QCoreApplication::setOrganizationName("StreetGAN-tests");
  QCoreApplication::setApplicationName("tst_studio_dataset");
  qputenv("HOME", dir_.path().toUtf8());
  data_ = makeTinyDataset(dir_.filePath("data"));
  window_ = std::make_unique<MainWindow>(STREETGAN_CLI);
  window_->resize(1600, 1000);
  window_->show();
  window_->tabs().setCurrentWidget(&window_->datasetTab());
}

bool TestStudioDataset::waitForListing(DatasetTab& tab, QString* error) {
  QSignalSpy listed(&tab, &DatasetTab::listed);
  if (!listed.wait(60000)) return false;
  while (tab.isListing() && listed.wait(60000)) {
  }
  if (error) *error = listed.last().first().toString();
  return true;
}

void TestStudioDataset::listsTheDataSet() {
  DatasetTab& tab = window_->datasetTab();
  tab.setRoot(data_);
  QString error;
  QVERIFY(waitForListing(tab, &error));
  QVERIFY2(error.isEmpty(), qPrintable(error));
  const auto expected = ImageDataset::open(data_.toStdString());
  QVERIFY(expected.ok());
  QCOMPARE(tab.listedImages(), int(expected->size()));
  QCOMPARE(tab.thumbnails().rowCount(), int(expected->size()));
  const auto groups = expected->groupCounts();
  QCOMPARE(tab.counts().rowCount(), int(groups.size()));
  qlonglong sum = 0;
  for (int row = 0; row < tab.counts().rowCount(); ++row) sum += tab.counts().item(row, 1)->data(Qt::DisplayRole).toLongLong();
  QCOMPARE(sum, qlonglong(expected->size()));
  // The tree: every image, then each city with its sequences.
  QCOMPARE(tab.tree().topLevelItemCount(), 1 + int(groups.size()));
  QCOMPARE(tab.tree().topLevelItem(0)->text(1), QString::number(expected->size()));
  QVERIFY(tab.tree().topLevelItem(1)->childCount() > 0);
  QVERIFY(tab.picker().lastCount().text.startsWith("MSLS layout"));
  QTest::qWait(300);
  const QString shot = testOutputDir() + "/studio-tab-dataset.png";
  QVERIFY(window_->grab().save(shot));
  qInfo("screenshot: %s", qPrintable(shot));
}

void TestStudioDataset::filtersChangeTheListing() {
  DatasetTab& tab = window_->datasetTab();
  tab.filters().enterText("data.max_per_sequence", "1");
  QVERIFY(waitForListing(tab));
  DatasetFilter filter;
  filter.max_per_sequence = 1;
  const auto expected = ImageDataset::open(data_.toStdString(), filter);
  QVERIFY(expected.ok());
  QVERIFY(expected->size() < 32);
  QCOMPARE(tab.listedImages(), int(expected->size()));
  QCOMPARE(tab.picker().lastCount().images, qint64(expected->size()));
  tab.filters().enterText("data.max_per_sequence", "0");
  QVERIFY(waitForListing(tab));
  QCOMPARE(tab.listedImages(), 32);
}

void TestStudioDataset::treePicksACity() {
  DatasetTab& tab = window_->datasetTab();
  QTreeWidgetItem* city = tab.tree().topLevelItem(1);
  tab.tree().setCurrentItem(city);
  QCOMPARE(tab.thumbnails().rowCount(), city->text(1).toInt());
  QTreeWidgetItem* sequence = city->child(0);
  tab.tree().setCurrentItem(sequence);
  QCOMPARE(tab.thumbnails().rowCount(), sequence->text(1).toInt());
  tab.tree().setCurrentItem(tab.tree().topLevelItem(0));
  QCOMPARE(tab.thumbnails().rowCount(), 32);
}

void TestStudioDataset::thumbnailsAreDecodedLazily() {
  DatasetTab& tab = window_->datasetTab();
  QTRY_VERIFY_WITH_TIMEOUT(tab.thumbnails().decodedCount() > 0 && tab.thumbnails().pendingCount() == 0, 30000);
  const QPixmap first = tab.thumbnails().index(0).data(Qt::DecorationRole).value<QPixmap>();
  QVERIFY(!first.isNull());
  QVERIFY(std::max(first.width(), first.height()) <= tab.thumbnails().thumbnailSize());
  QVERIFY(std::max(first.width(), first.height()) >= tab.thumbnails().thumbnailSize() / 2);
}

void TestStudioDataset::selectedImageAndItsVariants() {
  DatasetTab& tab = window_->datasetTab();
  AugmentationPanel& panel = tab.augmentation();
  QSignalSpy rendered(&panel, &AugmentationPanel::rendered);
  tab.grid().setCurrentIndex(tab.thumbnails().index(3));
  QVERIFY(rendered.wait(30000));
  QCOMPARE(rendered.last().first().toString(), QString());
  QCOMPARE(panel.imagePath(), tab.thumbnails().index(3).data(ThumbnailModel::PathRole).toString());
  QCOMPARE(panel.variants().size(), 9);
  QCOMPARE(panel.variants().front().size(), QSize(64, 64));
  QVERIFY(!panel.original().isNull());
  // New settings redraw the variants.
  AugmentConfig augment;
  augment.shift = 0.3;
  augment.flip = true;
  augment.noise_std = 0.1;
  const QVector<QImage> before = panel.variants();
  panel.setSettings(augment, 64);
  QVERIFY(rendered.wait(30000));
  while (panel.isRendering()) QVERIFY(rendered.wait(30000));
  QVERIFY(panel.variants() != before);
  // …and go to the Train tab's form with the folder and filters.
  panel.useSettings();
  TrainTab& train = window_->trainTab();
  QCOMPARE(window_->tabs().currentWidget(), &train);
  QCOMPARE(train.form().config().augment.shift, 0.3);
  QCOMPARE(train.form().config().augment.flip, true);
  QCOMPARE(train.form().config().augment.noise_std, 0.1);
  QCOMPARE(QString::fromStdString(train.form().config().dataroot), data_);
  window_->tabs().setCurrentWidget(&tab);
  QTest::qWait(200);
  const QString shot = testOutputDir() + "/studio-tab-dataset-variants.png";
  QVERIFY(window_->grab().save(shot));
}

void TestStudioDataset::badFolderIsSaid() {
  DatasetTab& tab = window_->datasetTab();
  const QString missing = dir_.filePath("no-such-folder");
  tab.setRoot(missing);
  QString error;
  QVERIFY(waitForListing(tab, &error));
  QCOMPARE(error, missing + " does not exist.");
  QCOMPARE(tab.thumbnails().rowCount(), 0);
  tab.setRoot(data_);
  QVERIFY(waitForListing(tab, &error));
  QVERIFY(error.isEmpty());
}

void TestStudioDataset::hundredThousandThumbnailsScrollWithABoundedCache() {
  // 100,000 entries over the data set's real files (each row decoded on its own).
  const auto dataset = ImageDataset::open(data_.toStdString());
  QVERIFY(dataset.ok());
  QStringList paths;
  for (int i = 0; i < 100000; ++i) paths << QString::fromStdString(dataset->path(static_cast<std::size_t>(i) % dataset->size()));
  ThumbnailModel model;
  const qint64 budget = 16 << 20;
  model.setCacheBytes(budget);
  QListView view;
  model.showIn(view);  // as the Dataset tab shows it
  view.resize(1200, 800);
  view.show();
  model.setPaths(paths);
  QTRY_VERIFY_WITH_TIMEOUT(view.verticalScrollBar()->maximum() > 0, 120000);
  // Scroll end to end in 250 steps, then back to the top: rows are decoded as they pass and the
  // cache stays within its budget. How late the GUI thread's timers run meanwhile (the 50 ms
  // target) is bench_gui_stall's figure (bench/README.md), not this test's.
  QScrollBar* bar = view.verticalScrollBar();
  QTimer scroller;
  scroller.setInterval(20);
  const int steps = 250;
  int step = 0;
  QObject::connect(&scroller, &QTimer::timeout, [&] {
    ++step;
    const int at = step <= steps ? step : 2 * steps - step;
    bar->setValue(static_cast<int>(qint64(bar->maximum()) * at / steps));
    if (step >= 2 * steps) scroller.stop();
  });
  scroller.start();
  QTRY_VERIFY_WITH_TIMEOUT(step >= 2 * steps, 300000);
  qInfo("100,000 thumbnails scrolled down and up: %d decoded, %d cached (%.1f MiB of a %lld MiB budget)",
        model.decodedCount(), model.cachedCount(), model.cachedBytes() / 1048576.0, budget >> 20);
  QVERIFY(model.decodedCount() > 0);
  QVERIFY(model.cachedBytes() <= budget);
  // The thumbnails at the end are decoded too.
  const QModelIndex last_row = model.index(99999);
  QTRY_VERIFY_WITH_TIMEOUT(model.pendingCount() == 0, 120000);
  view.scrollTo(last_row);
  QTRY_VERIFY_WITH_TIMEOUT(model.data(last_row, Qt::DecorationRole).value<QPixmap>().width() <= model.thumbnailSize() &&
                               model.pendingCount() == 0 && model.cachedCount() > 0, 120000);
}

STREETGAN_TEST_MAIN(TestStudioDataset)
#include "tst_studio_dataset.moc"
