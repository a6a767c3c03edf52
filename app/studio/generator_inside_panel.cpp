#include "app/studio/generator_inside_panel.h"

#include "app/studio/control/status_text.h"
#include "app/studio/channel_grid_view.h"
#include "widgets/rgb_image.h"
#include "widgets/worker_pool.h"

#include <QComboBox>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPainter>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <numeric>

namespace streetgan::studio {
namespace {

constexpr int kSample = 160;  // pixels the sample is shown at

QTableWidgetItem* panelNumber(double value) {
  auto* item = new QTableWidgetItem(QString::number(value, 'g', 4));
  item->setData(Qt::UserRole, value);
  item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  return item;
}

}  // namespace

GeneratorInsidePanel::GeneratorInsidePanel(QWidget* parent) : QWidget(parent) {
  block_ = new QComboBox(this);
  block_->setToolTip("The generator's block to show: the first maps the latent to 4×4, each next doubles the size");
  grid_ = new ChannelGridView(this);
  sample_ = new QLabel(this);
  sample_->setFixedSize(kSample, kSample);
  sample_->setAlignment(Qt::AlignCenter);
  sample_->setStyleSheet("background: #202020;");
  sample_->setToolTip("The sample, with the channels switched off");
  score_ = new QLabel(this);
  score_->setWordWrap(true);
  table_ = new QTableWidget(0, 6, this);
  table_->setHorizontalHeaderLabels({"Channel", "Mean activation", "Running mean", "Batch mean", "Running var", "Batch var"});
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  table_->verticalHeader()->hide();
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setToolTip("BatchNorm's running statistics (what eval mode uses) beside this batch's (the sample and its page), "
                     "before normalisation; a large gap is why a model looks different in the two modes");
  clear_ = new QPushButton("Switch All On", this);
  clear_->setToolTip("Undo every switched-off channel");
  save_ = new QPushButton("Save PNG…", this);
  status_ = new QLabel("Right-click a sample on the Samples page and choose Look Inside.", this);
  status_->setWordWrap(true);

  auto* top = new QHBoxLayout();
  top->addWidget(new QLabel("Block", this));
  top->addWidget(block_, 1);
  top->addWidget(clear_);
  top->addWidget(save_);
  auto* side = new QVBoxLayout();
  side->addWidget(sample_);
  side->addWidget(score_);
  side->addStretch(1);
  auto* middle = new QHBoxLayout();
  middle->addWidget(grid_, 1);
  middle->addLayout(side);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(top);
  layout->addLayout(middle, 3);
  layout->addWidget(table_, 2);
  layout->addWidget(status_);

  connect(block_, &QComboBox::currentIndexChanged, this, [this] { showBlock(); });
  connect(grid_, &ChannelGridView::channelClicked, this, &GeneratorInsidePanel::toggleChannel);
  connect(clear_, &QPushButton::clicked, this, &GeneratorInsidePanel::clearAblations);
  connect(save_, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getSaveFileName(this, "Save the Block's Channels", QString(), "PNG images (*.png)");
    if (!path.isEmpty()) savePng(path);
  });
  connect(&watcher_, &QFutureWatcher<Result<GeneratorInside>>::finished, this, &GeneratorInsidePanel::showResult);
}

GeneratorInsidePanel::~GeneratorInsidePanel() { watcher_.waitForFinished(); }

void GeneratorInsidePanel::setExplorer(std::shared_ptr<LatentExplorer> explorer) {
  explorer_ = std::move(explorer);
  inside_.reset();
  latent_.clear();
  ablated_.clear();
  orders_.clear();
  block_->clear();
  if (!explorer_) return;
  // Block b of a 64 px model: 4·2^b px; the last is the image.
  for (int b = 0, size = 4; size <= explorer_->imageSize(); ++b, size *= 2)
    block_->addItem(size == explorer_->imageSize() ? QString("Block %1: the image, %2×%2").arg(b + 1).arg(size)
                                                   : QString("Block %1: %2×%2").arg(b + 1).arg(size), b);
  block_->setCurrentIndex(std::max(0, block_->count() - 3));
}

void GeneratorInsidePanel::setSample(const Latent& latent, const std::vector<Latent>& page, const QString& label) {
  latent_ = latent;
  page_ = page;
  label_ = label;
  ablated_.clear();
  orders_.clear();
  render();
}

void GeneratorInsidePanel::setBlock(int block) {
  const int index = block_->findData(block);
  if (index >= 0) block_->setCurrentIndex(index);
}

int GeneratorInsidePanel::block() const { return block_->currentData().toInt(); }

void GeneratorInsidePanel::toggleChannel(int channel) {
  if (!inside_ || block() + 1 >= static_cast<int>(inside_->layers.size())) {
    return setStatus("The image's own channels (red, green, blue) cannot be switched off; choose a hidden block.", true);
  }
  const auto it = std::find_if(ablated_.begin(), ablated_.end(),
                               [&](const ChannelAblation& a) { return a.block == block() && a.channel == channel; });
  if (it != ablated_.end()) ablated_.erase(it);
  else ablated_.push_back({block(), channel});
  render();
}

void GeneratorInsidePanel::clearAblations() {
  ablated_.clear();
  render();
}

void GeneratorInsidePanel::render() {
  if (!explorer_ || latent_.empty()) return;
  if (watcher_.isRunning()) {
    pending_ = true;
    return;
  }
  pending_ = false;
  setStatus("Rendering …");
  const auto explorer = explorer_;
  const Latent latent = latent_;
  const std::vector<Latent> page = page_;
  const std::vector<ChannelAblation> ablated = ablated_;
  watcher_.setFuture(QtConcurrent::run(widgets::studioWorkers(), [explorer, latent, page, ablated] {
    try {
      return explorer->inside(latent, page, ablated);
    } catch (const std::exception& e) {  // the worker's boundary
      return Result<GeneratorInside>(makeError(e.what(), ErrorKind::Machine));
    }
  }));
}

void GeneratorInsidePanel::showResult() {
  Result<GeneratorInside> result = watcher_.result();
  if (pending_) return render();
  if (!result) return setStatus(errorText(result), true);
  inside_ = std::move(*result);
  sample_image_ = widgets::toQImage(inside_->image);
  sample_->setPixmap(QPixmap::fromImage(sample_image_.scaled(kSample, kSample, Qt::KeepAspectRatio, Qt::FastTransformation)));
  score_->setText(inside_->discriminator_score
                      ? QString("Discriminator: %1 (its probability that the sample is real)")
                            .arg(*inside_->discriminator_score, 0, 'f', 3)
                      : QString("Discriminator: none in this checkpoint"));
  showBlock();
  setStatus(QString("%1: %2 channel%3 switched off; BatchNorm: %4 statistics.")
                .arg(label_)
                .arg(ablated_.size())
                .arg(ablated_.size() == 1 ? "" : "s")
                .arg(inside_->batch_statistics ? "batch" : "running"));
}

void GeneratorInsidePanel::showBlock() {
  if (!inside_ || block() < 0 || block() >= static_cast<int>(inside_->layers.size())) return;
  const GeneratorLayerView& view = inside_->layers[static_cast<std::size_t>(block())];
  // Sorted by the whole sample's mean activations, and kept while channels are switched off, so
  // that a click never moves the tiles.
  std::vector<int>& order = orders_[block()];
  if (order.size() != static_cast<std::size_t>(view.channels)) {
    order.resize(static_cast<std::size_t>(view.channels));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return view.channel_means[static_cast<std::size_t>(a)] > view.channel_means[static_cast<std::size_t>(b)];
    });
  }
  grid_->setChannels(view.activations, view.channels, view.height, view.width, order);
  QSet<int> off;
  for (const ChannelAblation& a : ablated_)
    if (a.block == block()) off.insert(a.channel);
  grid_->setAblated(off);
  table_->setSortingEnabled(false);
  table_->setRowCount(view.channels);
  for (int row = 0; row < view.channels; ++row) {
    const auto c = static_cast<std::size_t>(order[static_cast<std::size_t>(row)]);
    table_->setItem(row, 0, panelNumber(static_cast<double>(c)));
    table_->setItem(row, 1, panelNumber(view.channel_means[c]));
    const bool norm = !view.running_mean.empty();
    table_->setItem(row, 2, norm ? panelNumber(view.running_mean[c]) : new QTableWidgetItem("—"));
    table_->setItem(row, 3, norm ? panelNumber(view.batch_mean[c]) : new QTableWidgetItem("—"));
    table_->setItem(row, 4, norm ? panelNumber(view.running_var[c]) : new QTableWidgetItem("—"));
    table_->setItem(row, 5, norm ? panelNumber(view.batch_var[c]) : new QTableWidgetItem("—"));
  }
}

QImage GeneratorInsidePanel::pngImage() const {
  const QImage grid = grid_->gridImage();
  if (grid.isNull() || sample_image_.isNull()) return {};
  const QImage sample = sample_image_.scaled(std::min(grid.height(), 256), std::min(grid.height(), 256), Qt::KeepAspectRatio,
                                             Qt::FastTransformation);
  QImage out(grid.width() + 8 + sample.width(), std::max(grid.height(), sample.height()), QImage::Format_RGB32);
  out.fill(QColor(32, 32, 32));
  QPainter painter(&out);
  painter.drawImage(0, 0, grid);
  painter.drawImage(grid.width() + 8, 0, sample);
  return out;
}

bool GeneratorInsidePanel::savePng(const QString& path) {
  const QImage image = pngImage();
  if (image.isNull()) {
    setStatus("Nothing to save yet: look inside a sample first.", true);
    return false;
  }
  if (!image.save(path, "PNG")) {
    setStatus("Could not write " + path + ".", true);
    return false;
  }
  setStatus("Saved " + path + ".");
  return true;
}

QString GeneratorInsidePanel::statusText() const { return status_->text(); }

void GeneratorInsidePanel::setStatus(const QString& text, bool error) {
  status_->setText(text);
  status_->setStyleSheet(error ? "color: #c0392b;" : QString());
}

}  // namespace streetgan::studio
