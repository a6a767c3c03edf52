#include "app/studio/latent_arithmetic_panel.h"
#include "app/studio/control/status_text.h"
#include "widgets/worker_pool.h"

#include "widgets/rgb_image.h"

#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QToolButton>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

namespace streetgan::studio {

namespace {
constexpr int kTile = 96;
constexpr double kNeighbourSpread = 0.25;
}  // namespace

LatentArithmeticPanel::LatentArithmeticPanel(QWidget* parent) : QWidget(parent) {
  watcher_ = new QFutureWatcher<widgets::RenderedImages>(this);
  auto* groups = new QHBoxLayout();
  const char* titles[] = {"A", "− B", "+ C"};
  for (int g = 0; g < 3; ++g) {
    auto* column = new QVBoxLayout();
    column->addWidget(new QLabel(QString("<b>%1</b>").arg(titles[g]), this));
    lists_[g] = new QListWidget(this);
    lists_[g]->setViewMode(QListView::IconMode);
    lists_[g]->setIconSize(QSize(48, 48));
    lists_[g]->setMovement(QListView::Static);
    column->addWidget(lists_[g]);
    groups->addLayout(column);
  }
  auto* compute_button = new QPushButton("Compute A − B + C", this);
  auto* clear_button = new QPushButton("Clear Groups", this);
  auto* result_grid = new QGridLayout();
  for (int i = 0; i < 9; ++i) {
    auto* tile = new QToolButton(this);
    tile->setIconSize(QSize(kTile, kTile));
    tile->setAutoRaise(true);
    tile->setToolTip(i == 4 ? "The result; click to use it as a keyframe" : "A neighbour of the result; click to use it as a keyframe");
    connect(tile, &QToolButton::clicked, this, [this, i] { useAsKeyframe(i); });
    result_grid->addWidget(tile, i / 3, i % 3);
    tiles_.push_back(tile);
  }
  status_ = new QLabel("Right-click samples to add them to groups A, B and C.", this);
  status_->setWordWrap(true);
  auto* buttons = new QHBoxLayout();
  buttons->addWidget(compute_button);
  buttons->addWidget(clear_button);
  buttons->addStretch(1);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(groups);
  layout->addLayout(buttons);
  layout->addLayout(result_grid);
  layout->addWidget(status_);
  layout->addStretch(1);

  connect(compute_button, &QPushButton::clicked, this, [this] { compute(); });
  connect(clear_button, &QPushButton::clicked, this, &LatentArithmeticPanel::clearGroups);
  connect(watcher_, &QFutureWatcher<widgets::RenderedImages>::finished, this, [this] {
    const widgets::RenderedImages result = watcher_->result();
    const QString error = errorText(result);
    images_ = result ? *result : QVector<QImage>();
    for (int i = 0; i < tiles_.size(); ++i)
      tiles_[i]->setIcon(i < images_.size() ? QIcon(QPixmap::fromImage(images_[i].scaled(kTile, kTile, Qt::KeepAspectRatio))) : QIcon());
    status_->setText(
        result ? QString("Middle: A − B + C; around it: neighbours (noise σ %1). Click one to use it as a keyframe.")
                     .arg(kNeighbourSpread)
               : error);
    emit computed(error);
  });
}

LatentArithmeticPanel::~LatentArithmeticPanel() { watcher_->waitForFinished(); }

void LatentArithmeticPanel::setExplorer(std::shared_ptr<LatentExplorer> explorer) {
  explorer_ = std::move(explorer);
  results_.clear();
  images_.clear();
  for (QToolButton* tile : tiles_) tile->setIcon(QIcon());
}

void LatentArithmeticPanel::addToGroup(int group, quint64 seed, const QImage& image) {
  if (group < 0 || group > 2) return;
  groups_[group].push_back(seed);
  lists_[group]->addItem(new QListWidgetItem(QIcon(QPixmap::fromImage(image.scaled(48, 48, Qt::KeepAspectRatio))), QString::number(seed)));
}

int LatentArithmeticPanel::groupSize(int group) const { return group >= 0 && group < 3 ? groups_[group].size() : 0; }

void LatentArithmeticPanel::clearGroups() {
  for (int g = 0; g < 3; ++g) {
    groups_[g].clear();
    lists_[g]->clear();
  }
}

bool LatentArithmeticPanel::isRendering() const { return watcher_->isRunning(); }
QString LatentArithmeticPanel::statusText() const { return status_->text(); }

bool LatentArithmeticPanel::compute() {
  if (!explorer_) {
    status_->setText("Open a checkpoint first.");
    return false;
  }
  if (watcher_->isRunning()) return false;
  std::vector<Latent> groups[3];
  for (int g = 0; g < 3; ++g)
    for (quint64 seed : groups_[g]) groups[g].push_back(explorer_->latentOfSeed(seed));
  auto result = explorer_->arithmetic(groups[0], groups[1], groups[2]);
  if (!result) {
    status_->setText("Put at least one sample in each group: " + QString::fromStdString(result.error()));
    return false;
  }
  results_.clear();
  for (int i = 0; i < 9; ++i)
    results_.push_back(i == 4 ? *result : explorer_->neighbour(*result, kNeighbourSpread, 1000 + static_cast<quint64>(i)));
  status_->setText("Rendering …");
  const auto explorer = explorer_;
  const auto latents = results_;
  watcher_->setFuture(QtConcurrent::run(widgets::studioWorkers(), [explorer, latents] {
    return widgets::toRenderedImages(explorer->render(latents));
  }));
  return true;
}

void LatentArithmeticPanel::useAsKeyframe(int tile) {
  if (tile < 0 || tile >= resultCount() || tile >= images_.size()) return;
  emit keyframeRequested(results_[static_cast<std::size_t>(tile)], images_[tile]);
}

}  // namespace streetgan::studio
