#include "widgets/seed_grid.h"
#include "widgets/worker_pool.h"

#include "widgets/rgb_image.h"

#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenu>
#include <QPushButton>
#include <QRandomGenerator>
#include <QSpinBox>
#include <QToolButton>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

namespace streetgan::widgets {

namespace {
constexpr int kRows = 4, kColumns = 4;
constexpr int kTilePixels = 112;
}  // namespace

SeedGrid::SeedGrid(QWidget* parent) : QWidget(parent) {
  auto* grid = new QGridLayout();
  grid->setSpacing(4);
  for (int i = 0; i < kRows * kColumns; ++i) {
    auto* tile = new QToolButton(this);
    tile->setToolButtonStyle(Qt::ToolButtonTextUnderIcon);
    tile->setIconSize(QSize(kTilePixels, kTilePixels));
    tile->setAutoRaise(true);
    tile->setContextMenuPolicy(Qt::CustomContextMenu);
    tile->setToolTip("Click: add as a keyframe. Right-click: add to a group of the latent arithmetic, or mark it "
                     "for a labelled direction.");
    connect(tile, &QToolButton::clicked, this, [this, i] { clickTile(i); });
    connect(tile, &QWidget::customContextMenuRequested, this, [this, i, tile](const QPoint& at) { showContextMenu(i, tile->mapToGlobal(at)); });
    grid->addWidget(tile, i / kColumns, i % kColumns);
    tiles_.push_back(tile);
  }
  auto* previous = new QPushButton("◀ Previous", this);
  auto* next = new QPushButton("Next ▶", this);
  seed_box_ = new QSpinBox(this);
  seed_box_->setRange(0, std::numeric_limits<int>::max());
  seed_box_->setPrefix("seed ");
  seed_box_->setToolTip("The first seed of the page; type one and press Enter");
  auto* resample = new QPushButton("Resample", this);
  resample->setToolTip("A page of random seeds");
  status_ = new QLabel(this);
  auto* controls = new QHBoxLayout();
  controls->addWidget(previous);
  controls->addWidget(next);
  controls->addWidget(seed_box_);
  controls->addWidget(resample);
  controls->addStretch(1);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(controls);
  layout->addLayout(grid);
  layout->addWidget(status_);
  layout->addStretch(1);

  connect(previous, &QPushButton::clicked, this,
          [this] { setFirstSeed(first_seed_ >= static_cast<quint64>(tileCount()) ? first_seed_ - tileCount() : 0); });
  connect(next, &QPushButton::clicked, this, [this] { setFirstSeed(first_seed_ + tileCount()); });
  connect(seed_box_, &QSpinBox::editingFinished, this, [this] { setFirstSeed(static_cast<quint64>(seed_box_->value())); });
  connect(resample, &QPushButton::clicked, this,
          [this] { setFirstSeed(QRandomGenerator::global()->bounded(std::numeric_limits<int>::max() - 1000)); });
  connect(&watcher_, &QFutureWatcher<RenderedImages>::finished, this, [this] {
    if (std::exchange(again_, false)) return render();  // settings changed meanwhile: render those
    const RenderedImages result = watcher_.result();
    const QString error = QString::fromStdString(result.error());
    images_ = result ? *result : QVector<QImage>();
    for (int i = 0; i < tileCount(); ++i) {
      tiles_[i]->setText(QString("seed %1").arg(seedAt(i)));
      tiles_[i]->setIcon(i < images_.size()
                             ? QIcon(QPixmap::fromImage(images_[i].scaled(kTilePixels, kTilePixels, Qt::KeepAspectRatio, Qt::FastTransformation)))
                             : QIcon());
    }
    status_->setText(result ? QString("Seeds %1–%2").arg(first_seed_).arg(first_seed_ + tileCount() - 1) : error);
    rendering_ = false;
    emit rendered(error);
  });
  setFirstSeed(0);
}

SeedGrid::~SeedGrid() { watcher_.waitForFinished(); }

void SeedGrid::setExplorer(std::shared_ptr<LatentExplorer> explorer) {
  explorer_ = std::move(explorer);
  render();
}

void SeedGrid::setFirstSeed(quint64 seed) {
  first_seed_ = seed;
  const QSignalBlocker block(seed_box_);
  seed_box_->setValue(static_cast<int>(std::min<quint64>(seed, std::numeric_limits<int>::max())));
  for (int i = 0; i < tileCount(); ++i) tiles_[i]->setText(QString("seed %1").arg(seedAt(i)));
  render();
}

void SeedGrid::render() {
  if (!explorer_) {
    rendering_ = watcher_.isRunning();  // a result still to come is dropped by the next render
    images_.clear();
    for (QToolButton* tile : tiles_) tile->setIcon(QIcon());
    status_->setText("Open a checkpoint to see its samples.");
    return;
  }
  rendering_ = true;
  if (watcher_.isRunning()) {
    again_ = true;
    return;
  }
  status_->setText("Sampling …");
  const auto explorer = explorer_;
  const quint64 first = first_seed_;
  const int count = tileCount();
  const Latent offset = offset_;
  watcher_.setFuture(QtConcurrent::run(studioWorkers(), [explorer, first, count, offset] {
    std::vector<Latent> latents;
    for (int i = 0; i < count; ++i) {
      Latent latent = explorer->latentOfSeed(first + static_cast<quint64>(i));
      if (offset.size() == latent.size())
        for (std::size_t j = 0; j < latent.size(); ++j) latent[j] += offset[j];
      latents.push_back(std::move(latent));
    }
    return toRenderedImages(explorer->render(latents));
  }));
}

void SeedGrid::setLatentOffset(const Latent& offset) {
  if (offset == offset_) return;
  offset_ = offset;
  render();
}

Latent SeedGrid::latentOf(quint64 seed) const {
  if (!explorer_) return {};
  Latent latent = explorer_->latentOfSeed(seed);
  if (offset_.size() == latent.size())
    for (std::size_t j = 0; j < latent.size(); ++j) latent[j] += offset_[j];
  return latent;
}

void SeedGrid::markTile(int tile, bool has) {
  if (!explorer_ || tile < 0 || tile >= images_.size()) return;
  emit markRequested(latentOf(seedAt(tile)), has, images_[tile]);
}

void SeedGrid::clickTile(int tile) {
  if (!explorer_ || tile < 0 || tile >= images_.size()) return;
  emit keyframeRequested(seedAt(tile), images_[tile]);
}

void SeedGrid::showContextMenu(int tile, const QPoint& at) {
  if (!explorer_ || tile >= images_.size()) return;
  QMenu menu(this);
  menu.addAction("Add as Keyframe", this, [this, tile] { clickTile(tile); });
  menu.addSeparator();
  const char* names[] = {"Add to Group A", "Add to Group B", "Add to Group C"};
  for (int group = 0; group < 3; ++group)
    menu.addAction(names[group], this, [this, tile, group] { emit groupRequested(seedAt(tile), group, images_[tile]); });
  menu.addSeparator();
  menu.addAction("Mark: Has the Property", this, [this, tile] { markTile(tile, true); });
  menu.addAction("Mark: Lacks the Property", this, [this, tile] { markTile(tile, false); });
  menu.addSeparator();
  menu.addAction("Look Inside the Generator", this, [this, tile] { lookInside(tile); });
  menu.exec(at);
}

}  // namespace streetgan::widgets
