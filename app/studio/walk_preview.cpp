#include "app/studio/walk_preview.h"
#include "app/studio/control/status_text.h"
#include "widgets/worker_pool.h"

#include "widgets/rgb_image.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

namespace streetgan::studio {

namespace {
constexpr qint64 kCacheBytes = 256ll << 20;
constexpr int kFramesPerJob = 8;
}  // namespace

WalkPreview::WalkPreview(QWidget* parent) : QWidget(parent) {
  mode_ = new QComboBox(this);
  mode_->addItems({"slerp", "lerp"});
  easing_ = new QComboBox(this);
  easing_->addItems({"ease-in-out", "linear", "ease-in", "ease-out"});
  frames_per_key_ = new QSpinBox(this);
  frames_per_key_->setRange(1, 10000);
  frames_per_key_->setValue(30);
  fps_ = new QDoubleSpinBox(this);
  fps_->setRange(1, 120);
  fps_->setDecimals(3);
  fps_->setValue(30);
  loop_ = new QCheckBox("Loop back to the first keyframe", this);
  loop_->setChecked(true);
  rows_ = new QSpinBox(this);
  rows_->setRange(1, 8);
  columns_ = new QSpinBox(this);
  columns_->setRange(1, 8);
  auto* grid = new QHBoxLayout();
  grid->addWidget(rows_);
  grid->addWidget(new QLabel("×", this));
  grid->addWidget(columns_);
  grid->addStretch(1);
  play_ = new QPushButton("Pause", this);
  view_ = new QLabel(this);
  view_->setMinimumSize(192, 192);
  view_->setAlignment(Qt::AlignCenter);
  status_ = new QLabel(this);
  status_->setWordWrap(true);

  auto* form = new QFormLayout();
  form->addRow("Interpolation", mode_);
  form->addRow("Easing", easing_);
  form->addRow("Frames per key", frames_per_key_);
  form->addRow("Frames per second", fps_);
  form->addRow("", loop_);
  form->addRow("Grid (rows × columns)", grid);
  form->addRow("", play_);
  auto* layout = new QHBoxLayout(this);
  layout->addLayout(form);
  auto* right = new QVBoxLayout();
  right->addWidget(view_, 1);
  right->addWidget(status_);
  layout->addLayout(right, 1);
  setToolTip("A grid larger than 1 × 1 walks every tile through seeds of its own, as many keys as the strip has");

  for (QComboBox* box : {mode_, easing_}) connect(box, &QComboBox::currentTextChanged, this, &WalkPreview::restart);
  for (QSpinBox* box : {frames_per_key_, rows_, columns_}) connect(box, &QSpinBox::valueChanged, this, &WalkPreview::restart);
  connect(loop_, &QCheckBox::toggled, this, &WalkPreview::restart);
  connect(fps_, &QDoubleSpinBox::valueChanged, this, [this](double fps) {
    timer_.setInterval(static_cast<int>(1000.0 / fps));
    shown_ = missed_ = 0;
    clock_.start();
    emit planChanged();
  });
  connect(play_, &QPushButton::clicked, this, [this] { setPlaying(!isPlaying()); });
  timer_.setTimerType(Qt::PreciseTimer);
  timer_.setInterval(static_cast<int>(1000.0 / fps_->value()));
  connect(&timer_, &QTimer::timeout, this, &WalkPreview::tick);
  connect(&watcher_, &QFutureWatcher<widgets::RenderedImages>::finished, this, [this] {
    const widgets::RenderedImages result = watcher_.result();
    const int from = std::exchange(rendering_from_, -1);
    if (job_generation_ == generation_) {
      if (!result) {
        error_ = errorText(result);
      } else {
        for (int i = 0; i < result->size() && from + i < cache_.size(); ++i) {
          if (cache_[from + i].isNull()) ++cached_;
          cache_[from + i] = (*result)[i];
        }
      }
    }
    renderAhead();
  });
  restart();
}

WalkPreview::~WalkPreview() { watcher_.waitForFinished(); }

void WalkPreview::setExplorer(std::shared_ptr<LatentExplorer> explorer) {
  explorer_ = std::move(explorer);
  restart();
}

void WalkPreview::setKeys(std::vector<Latent> keys, std::vector<std::optional<std::uint64_t>> seeds) {
  keys_ = std::move(keys);
  seeds_ = std::move(seeds);
  restart();
}

WalkPlan WalkPreview::plan() const {
  WalkPlan plan;
  plan.keys = keys_;
  plan.seeds = seeds_;
  plan.frames_per_key = frames_per_key_->value();
  plan.mode = mode_->currentText().toStdString();
  plan.easing = easing_->currentText().toStdString();
  plan.loop = loop_->isChecked();
  plan.rows = rows_->value();
  plan.columns = columns_->value();
  plan.grid_seed = seeds_.empty() || !seeds_.front() ? 0 : *seeds_.front();
  return plan;
}

void WalkPreview::setSettings(const WalkPlan& plan) {
  {
    const QSignalBlocker a(mode_), b(easing_), c(frames_per_key_), d(loop_);
    mode_->setCurrentText(QString::fromStdString(plan.mode));
    easing_->setCurrentText(QString::fromStdString(plan.easing));
    frames_per_key_->setValue(plan.frames_per_key);
    loop_->setChecked(plan.loop);
  }
  restart();
}

double WalkPreview::framesPerSecond() const { return fps_->value(); }

double WalkPreview::shownRate() const {
  const double seconds = clock_.isValid() ? clock_.elapsed() / 1000.0 : 0;
  return seconds > 0 ? shown_ / seconds : 0;
}

QString WalkPreview::statusText() const { return status_->text(); }

qint64 WalkPreview::frameBytes() const {
  if (!explorer_) return 1;
  const qint64 side = explorer_->imageSize();
  return side * side * explorer_->channels() * rows_->value() * columns_->value();
}

void WalkPreview::restart() {
  ++generation_;
  cache_.clear();
  cached_ = head_ = shown_ = missed_ = 0;
  error_.clear();
  current_ = QImage();
  view_->clear();
  emit planChanged();
  if (!explorer_) {
    status_->setText("Open a checkpoint, then add keyframes: click samples.");
    timer_.stop();
    return;
  }
  auto frames = explorer_->frameCount(plan());
  if (!frames) {
    status_->setText(keys_.size() < 2 ? QString("Add at least two keyframes (click samples) to preview a walk.")
                                      : QString::fromStdString(frames.error()));
    timer_.stop();
    return;
  }
  cache_.resize(static_cast<int>(*frames));
  clock_.start();
  timer_.start();
  play_->setText("Pause");
  renderAhead();
}

void WalkPreview::setPlaying(bool playing) {
  if (playing == isPlaying() || cache_.isEmpty()) return;
  if (playing) {
    shown_ = missed_ = 0;
    clock_.start();
    timer_.start();
  } else {
    timer_.stop();
  }
  play_->setText(playing ? "Pause" : "Play");
}

void WalkPreview::tick() {
  if (cache_.isEmpty()) return;
  if (cache_[head_].isNull()) {
    ++missed_;
  } else {
    current_ = cache_[head_];
    view_->setPixmap(QPixmap::fromImage(current_.scaled(view_->size(), Qt::KeepAspectRatio, Qt::FastTransformation)));
    ++shown_;
    head_ = (head_ + 1) % cache_.size();
  }
  status_->setText(error_.isEmpty() ? QString("frame %1 of %2 · %3 frames/s shown · %4 of %2 rendered")
                                          .arg(head_ + 1).arg(cache_.size()).arg(shownRate(), 0, 'f', 1).arg(cached_)
                                    : error_);
  renderAhead();
}

void WalkPreview::renderAhead() {
  if (rendering_from_ >= 0 || !explorer_ || cache_.isEmpty() || !error_.isEmpty()) return;
  const int total = cache_.size();
  const int window = static_cast<int>(std::clamp<qint64>(kCacheBytes / std::max<qint64>(1, frameBytes()), kFramesPerJob, total));
  // The first frame ahead of the play head that is not rendered, within the window.
  int from = -1;
  for (int k = 0; k < window; ++k) {
    const int i = (head_ + k) % total;
    if (cache_[i].isNull()) {
      from = i;
      break;
    }
  }
  if (from < 0) return;
  if (window < total) {  // over budget: forget frames outside the window
    for (int i = 0; i < total; ++i) {
      const int ahead = (i - head_ + total) % total;
      if (ahead >= window && !cache_[i].isNull()) {
        cache_[i] = QImage();
        --cached_;
      }
    }
  }
  int count = 1;
  while (count < kFramesPerJob && from + count < total && cache_[from + count].isNull()) ++count;
  rendering_from_ = from;
  job_generation_ = generation_;
  const auto explorer = explorer_;
  const WalkPlan walk = plan();
  watcher_.setFuture(QtConcurrent::run(widgets::studioWorkers(), [explorer, walk, from, count] {
    widgets::yieldToTheGuiThread();
    return widgets::toRenderedImages(explorer->renderFrames(walk, from, count));
  }));
}

}  // namespace streetgan::studio
