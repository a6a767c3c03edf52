// BatchLoader, BatchPrefetcher and the image cache on real JPEGs: batches are the same whatever
// the worker count and whether they come from the files or the cache; the prefetch queue stays
// bounded; a damaged, truncated or unfinished cache is refused or skipped with a clear message.
#include "core/data/batch_prefetcher.h"
#include "core/data/demo_data_generator.h"
#include "core/data/image_cache.h"
#include "core/data/image_cache_builder.h"
#include "tests/support/test_suite.h"

#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <sys/stat.h>

#include <torch/torch.h>

#include <filesystem>
#include <thread>

using namespace streetgan;

namespace {

std::vector<Batch> stream(const BatchLoader& loader, int workers, int prefetch, std::int64_t epochs,
                          std::int64_t* peak = nullptr, bool slow = false) {
  std::vector<Batch> batches;
  BatchPrefetcher prefetcher(loader, workers, prefetch, 0, 0, epochs);
  while (prefetcher.hasNext()) {
    auto next = prefetcher.next();
    if (!next) qFatal("%s", next.error().c_str());
    if (slow) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    batches.push_back(std::move(next->batch));
  }
  if (peak) *peak = prefetcher.peakInFlight();
  return batches;
}

void compareStreams(const std::vector<Batch>& a, const std::vector<Batch>& b) {
  QCOMPARE(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    QCOMPARE(a[i].images.sizes(), b[i].images.sizes());
    QVERIFY2(torch::equal(a[i].images, b[i].images), qPrintable(QString("batch %1 differs").arg(i)));
  }
}

}  // namespace

class TestBatchLoader : public QObject {
  Q_OBJECT
private slots:
  void initTestCase();
  void sameBatchesWithOneOrFourWorkers();
  void resumeMidEpochGivesTheSameBatches();
  void prefetchQueueIsBounded();
  void cacheGivesTheSameBatches();
  void cacheBuiltForAnotherConfigIsRefused();
  void damagedCacheRecordIsSkipped();
  void damagedOrUnfinishedCacheIsRefused_data();
  void damagedOrUnfinishedCacheIsRefused();
  void specialFilesAreRefusedAtOnce();
  void cancelledBuildLeavesNoFile();
  void unreadableFilesAreSkippedAndNamed();
  void shardsTogetherServeTheEpoch_data();
  void shardsTogetherServeTheEpoch();

private:
  BatchLoader makeLoader(std::shared_ptr<const ImageCache> cache = nullptr) const;
  QTemporaryDir dir_;
  std::string root_, cache_path_;
  AugmentConfig augment_;
};

void TestBatchLoader::initTestCase() {
  QVERIFY(dir_.isValid());
  root_ = (dir_.path() + "/data").toStdString();
  DemoDataOptions options;
  options.out_dir = root_;
  options.cities = 2;
  options.sequences_per_city = 3;
  options.frames_per_sequence = 7;  // 42 images: batches of 8 leave a partial last batch
  auto generated = DemoDataGenerator(options).generate();
  QVERIFY2(generated, generated.error().c_str());
  augment_.flip = true;
  augment_.rotate_deg = 5;
  cache_path_ = (dir_.path() + "/data.sgcache").toStdString();
  auto dataset = ImageDataset::open(root_);
  QVERIFY(dataset);
  auto built = ImageCacheBuilder::build(*dataset, SamplePipeline(augment_, 64, 3), cache_path_);
  QVERIFY2(built, built.error().c_str());
  QCOMPARE(built->records, std::int64_t(42));
}

BatchLoader TestBatchLoader::makeLoader(std::shared_ptr<const ImageCache> cache) const {
  auto dataset = ImageDataset::open(root_);
  if (!dataset) qFatal("%s", dataset.error().c_str());
  return BatchLoader(std::move(*dataset), SamplePipeline(augment_, 64, 3), 8, 11, std::move(cache));
}

void TestBatchLoader::sameBatchesWithOneOrFourWorkers() {
  const BatchLoader loader = makeLoader();
  QCOMPARE(loader.batchesPerEpoch(), std::int64_t(6));
  const auto one = stream(loader, 1, 0, 2);
  const auto four = stream(loader, 4, 3, 2);
  QCOMPARE(one.size(), std::size_t(12));
  QCOMPARE(one[5].images.size(0), std::int64_t(2));  // 42 = 5·8 + 2
  compareStreams(one, four);
  // Direct loads agree with the stream, and epochs differ from each other.
  QVERIFY(torch::equal(loader.load(1, 3).images, one[9].images));
  QVERIFY(!torch::equal(one[0].images, one[6].images));
}

void TestBatchLoader::resumeMidEpochGivesTheSameBatches() {
  const BatchLoader loader = makeLoader();
  const auto all = stream(loader, 2, 2, 2);
  BatchPrefetcher resumed(loader, 3, 1, 0, 4, 2);
  for (std::size_t i = 4; i < all.size(); ++i) {
    auto next = resumed.next();
    QVERIFY(next);
    QCOMPARE(next->epoch, std::int64_t(i / 6));
    QCOMPARE(next->batch_index, std::int64_t(i % 6));
    QVERIFY(torch::equal(next->batch.images, all[i].images));
  }
  QVERIFY(!resumed.hasNext());
}

void TestBatchLoader::prefetchQueueIsBounded() {
  const BatchLoader loader = makeLoader();
  std::int64_t peak = 0;
  stream(loader, 3, 2, 3, &peak, /*slow=*/true);
  QVERIFY2(peak <= 5, qPrintable(QString("peak %1 batches in flight").arg(peak)));
  QVERIFY(peak >= 3);  // the workers did run ahead of the slow consumer
}

void TestBatchLoader::cacheGivesTheSameBatches() {
  auto cache = ImageCache::open(cache_path_);
  QVERIFY2(cache, cache.error().c_str());
  QCOMPARE((*cache)->reduction(), 4);
  QCOMPARE(int((*cache)->size()), 42);
  const BatchLoader from_files = makeLoader();
  const BatchLoader from_cache = makeLoader(*cache);
  QCOMPARE(from_cache.uncachedCount(), std::int64_t(0));
  compareStreams(stream(from_files, 2, 2, 2), stream(from_cache, 2, 2, 2));
}

void TestBatchLoader::cacheBuiltForAnotherConfigIsRefused() {
  auto cache = ImageCache::open(cache_path_);
  QVERIFY(cache);
  QVERIFY(BatchLoader::cacheMismatch(**cache, SamplePipeline(augment_, 64, 3)).empty());
  AugmentConfig wide = augment_;
  wide.crop_scale = 2;  // needs 1/2 size
  const std::string message = BatchLoader::cacheMismatch(**cache, SamplePipeline(wide, 64, 3));
  QVERIFY2(QString::fromStdString(message).contains("3 channel(s) at 1/4 size; this config needs 3 channel(s) at 1/2 size"),
           message.c_str());
  QVERIFY(!BatchLoader::cacheMismatch(**cache, SamplePipeline(augment_, 64, 1)).empty());
}

void TestBatchLoader::damagedCacheRecordIsSkipped() {
  const QString copy = dir_.path() + "/damaged.sgcache";
  QFile::remove(copy);
  QVERIFY(QFile::copy(QString::fromStdString(cache_path_), copy));
  QFile file(copy);
  QVERIFY(file.open(QIODevice::ReadWrite));
  file.seek(64 + 1000);  // inside the first record's pixels
  char byte = 0;
  file.getChar(&byte);
  file.seek(64 + 1000);
  file.putChar(char(byte ^ 0x5A));
  file.close();
  auto cache = ImageCache::open(copy.toStdString());
  QVERIFY2(cache, cache.error().c_str());
  auto view = (*cache)->image(0);
  QVERIFY(!view);
  QVERIFY2(QString::fromStdString(view.error()).contains("fails its checksum"), view.error().c_str());
  QVERIFY2(QString::fromStdString(view.error()).contains(QString::fromStdString((*cache)->relativePath(0))), view.error().c_str());
  QVERIFY((*cache)->image(1));
  const BatchLoader loader = makeLoader(*cache);
  std::int64_t images = 0, skipped = 0;
  for (const auto& batch : stream(loader, 2, 1, 1)) {
    images += batch.images.size(0);
    skipped += std::int64_t(batch.skipped.size());
  }
  QCOMPARE(images, std::int64_t(41));
  QCOMPARE(skipped, std::int64_t(1));
}

void TestBatchLoader::damagedOrUnfinishedCacheIsRefused_data() {
  QTest::addColumn<int>("cut");         // bytes kept (-1: all)
  QTest::addColumn<int>("flip_at");     // byte to corrupt (-1: none)
  QTest::addColumn<QString>("error");
  QTest::newRow("empty") << 0 << -1 << "too short";
  QTest::newRow("unfinished (no signature)") << -1 << 0 << "no SGCACHE1 signature";
  QTest::newRow("header damaged") << -1 << 30 << "header is damaged";
  QTest::newRow("truncated") << 200000 << -1 << "does not fit the file";
  QTest::newRow("index damaged") << -1 << -2 << "index is damaged";
}

void TestBatchLoader::damagedOrUnfinishedCacheIsRefused() {
  QFETCH(int, cut);
  QFETCH(int, flip_at);
  QFETCH(QString, error);
  QFile source(QString::fromStdString(cache_path_));
  QVERIFY(source.open(QIODevice::ReadOnly));
  QByteArray bytes = source.readAll();
  if (cut >= 0) bytes.truncate(cut);
  if (flip_at == -2) flip_at = bytes.size() - 3;  // in the path table, covered by the index CRC
  if (flip_at >= 0) bytes[flip_at] = char(bytes[flip_at] ^ 0x21);
  const QString path = dir_.path() + "/bad.sgcache";
  QFile out(path);
  QVERIFY(out.open(QIODevice::WriteOnly | QIODevice::Truncate));
  out.write(bytes);
  out.close();
  auto cache = ImageCache::open(path.toStdString());
  QVERIFY(!cache);
  QVERIFY2(QString::fromStdString(cache.error()).startsWith(path), cache.error().c_str());
  QVERIFY2(QString::fromStdString(cache.error()).contains(error), cache.error().c_str());
}

void TestBatchLoader::specialFilesAreRefusedAtOnce() {
  // A FIFO would block open() until a writer came; a directory cannot be mapped. Both are refused
  // before anything is read, naming the file.
  const std::string fifo = (dir_.path() + "/pipe.sgcache").toStdString();
  QCOMPARE(::mkfifo(fifo.c_str(), 0600), 0);
  const auto from_fifo = ImageCache::open(fifo);
  QVERIFY(!from_fifo);
  QVERIFY2(from_fifo.error() == fifo + ": not a regular file (a device, pipe or socket); give the cache file that "
                                       "streetgan cache build wrote",
           from_fifo.error().c_str());
  const auto from_folder = ImageCache::open(dir_.path().toStdString());
  QVERIFY(!from_folder);
  QVERIFY2(from_folder.error().find("not a regular file (a directory)") != std::string::npos, from_folder.error().c_str());
}

void TestBatchLoader::cancelledBuildLeavesNoFile() {
  auto dataset = ImageDataset::open(root_);
  QVERIFY(dataset);
  const std::string out = (dir_.path() + "/cancelled.sgcache").toStdString();
  std::atomic<bool> cancel{false};
  CacheBuildOptions options;
  options.workers = 1;
  options.cancel = &cancel;
  options.progress = [&](std::int64_t, std::int64_t) { cancel = true; };
  auto built = ImageCacheBuilder::build(*dataset, SamplePipeline(augment_, 64, 3), out, options);
  QVERIFY(!built);
  QVERIFY2(QString::fromStdString(built.error()).contains("cancelled"), built.error().c_str());
  for (const auto& entry : std::filesystem::directory_iterator(dir_.path().toStdString()))
    QVERIFY2(entry.path().filename().string().rfind("cancelled", 0) != 0, entry.path().c_str());
  const std::string unwritable = (dir_.path() + "/no/such/folder/x.sgcache").toStdString();
  auto failed = ImageCacheBuilder::build(*dataset, SamplePipeline(augment_, 64, 3), unwritable);
  QVERIFY(!failed);
  QVERIFY2(QString::fromStdString(failed.error()).contains("cannot create the cache file"), failed.error().c_str());
}

void TestBatchLoader::unreadableFilesAreSkippedAndNamed() {
  const QString root = dir_.path() + "/mixed";
  QDir().mkpath(root);
  auto dataset = ImageDataset::open(root_);
  QVERIFY(dataset);
  for (int i = 0; i < 6; ++i)
    QVERIFY(QFile::copy(QString::fromStdString(dataset->path(std::size_t(i))), root + QString("/good%1.jpg").arg(i)));
  QFile(root + "/empty.jpg").open(QIODevice::WriteOnly);
  QFile text(root + "/text.jpg");
  QVERIFY(text.open(QIODevice::WriteOnly));
  text.write("hello");
  text.close();
  QVERIFY(QFile::copy(QString::fromStdString(dataset->path(6)), root + "/vanishes.jpg"));
  auto mixed = ImageDataset::open(root.toStdString());
  QVERIFY(mixed);
  QCOMPARE(int(mixed->size()), 9);
  QVERIFY(QFile::remove(root + "/vanishes.jpg"));  // gone between the scan and the load
  const BatchLoader loader(std::move(*mixed), SamplePipeline(augment_, 64, 3), 4, 1);
  std::vector<std::string> skipped;
  std::int64_t images = 0;
  for (const auto& batch : stream(loader, 2, 1, 1)) {
    images += batch.images.size(0);
    for (const auto& s : batch.skipped) skipped.push_back(s.path);
  }
  QCOMPARE(images, std::int64_t(6));
  std::sort(skipped.begin(), skipped.end());
  QCOMPARE(skipped, (std::vector<std::string>{(root + "/empty.jpg").toStdString(), (root + "/text.jpg").toStdString(),
                                              (root + "/vanishes.jpg").toStdString()}));
}

void TestBatchLoader::shardsTogetherServeTheEpoch_data() {
  QTest::addColumn<int>("world");
  QTest::addColumn<int>("batch");
  QTest::addColumn<std::int64_t>("batches");
  QTest::newRow("2 ranks × 8") << 2 << 8 << std::int64_t(3);  // 21 each
  QTest::newRow("3 ranks × 4") << 3 << 4 << std::int64_t(4);  // 14 each
  QTest::newRow("4 ranks × 8, padded") << 4 << 8 << std::int64_t(2);  // 44 = 42 + 2 repeated
  QTest::newRow("5 ranks × 3, padded") << 5 << 3 << std::int64_t(3);  // 45 = 42 + 3 repeated
  QTest::newRow("1 rank") << 1 << 8 << std::int64_t(6);
}

// DistributedSampler's shares: batch k of every rank together is batch k of one process with
// world × the batch (the same images, the same augmentation), each epoch a new order, and over
// an epoch every image once (plus the few repeated to pad the order to a multiple of world).
void TestBatchLoader::shardsTogetherServeTheEpoch() {
  QFETCH(int, world);
  QFETCH(int, batch);
  QFETCH(std::int64_t, batches);
  auto dataset = ImageDataset::open(root_);
  QVERIFY(dataset);
  const BatchLoader whole(ImageDataset(*dataset), SamplePipeline(augment_, 64, 3), world * batch, 11);
  std::vector<std::unique_ptr<BatchLoader>> ranks;
  for (int r = 0; r < world; ++r) {
    ranks.push_back(std::make_unique<BatchLoader>(ImageDataset(*dataset), SamplePipeline(augment_, 64, 3), batch, 11));
    ranks.back()->setShard(r, world);
    QCOMPARE(ranks.back()->batchesPerEpoch(), batches);
  }
  const std::int64_t n = 42, padded = (n + world - 1) / world * world;
  for (std::int64_t epoch = 0; epoch < 2; ++epoch) {
    const auto order = whole.epochOrder(epoch);
    std::vector<std::int64_t> seen;
    for (std::int64_t k = 0; k < batches; ++k) {
      // Position j·world + r of the job's batch k is rank r's image j.
      std::vector<std::int64_t> job;
      for (std::size_t j = 0;; ++j) {
        bool any = false;
        for (int r = 0; r < world; ++r) {
          const auto mine = ranks[static_cast<std::size_t>(r)]->batchIndices(epoch, k);
          if (j < mine.size()) {
            job.push_back(mine[j]);
            any = true;
          }
        }
        if (!any) break;
      }
      const std::int64_t begin = k * world * batch;
      for (std::size_t i = 0; i < job.size(); ++i)
        QCOMPARE(job[i], order[static_cast<std::size_t>((begin + static_cast<std::int64_t>(i)) % n)]);
      if (padded == n) QCOMPARE(whole.batchIndices(epoch, k), job);
      seen.insert(seen.end(), job.begin(), job.end());
    }
    QCOMPARE(static_cast<std::int64_t>(seen.size()), padded);
    std::vector<std::int64_t> expected(order.begin(), order.end());
    expected.insert(expected.end(), order.begin(), order.begin() + (padded - n));
    std::sort(seen.begin(), seen.end());
    std::sort(expected.begin(), expected.end());
    QCOMPARE(seen, expected);
  }
  QVERIFY(ranks[0]->batchIndices(0, 0) != ranks[0]->batchIndices(1, 0));
  // The pixels too: rank r's batch 1 is rows r, r + world, ... of the whole batch 1.
  if (padded == n) {
    const torch::Tensor all = whole.load(1, 1).images;
    for (int r = 0; r < world; ++r) {
      const torch::Tensor mine = ranks[static_cast<std::size_t>(r)]->load(1, 1).images;
      QVERIFY(torch::equal(mine, all.slice(0, r, all.size(0), world)));
    }
  }
}

STREETGAN_TEST_GUILESS_MAIN(TestBatchLoader)
#include "tst_batch_loader.moc"
