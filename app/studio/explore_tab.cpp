#include "app/studio/explore_tab.h"

#include "app/studio/checkpoint_file_dialog.h"
#include "app/studio/generator_switch.h"
#include "core/runs/checkpoint_reference.h"
#include "widgets/worker_pool.h"

#include "app/studio/control/run_checkpoints.h"
#include "app/studio/directions_panel.h"
#include "app/studio/export_walk_dialog.h"
#include "app/studio/generator_inside_panel.h"
#include "app/studio/latent_arithmetic_panel.h"
#include "app/studio/projection_dialog.h"
#include "app/studio/walk_preview.h"
#include "widgets/keyframe_strip.h"
#include "widgets/rgb_image.h"
#include "widgets/seed_grid.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSplitter>
#include <QTabWidget>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

namespace streetgan::studio {

ExploreTab::ExploreTab(QString runs_root, QWidget* parent) : QWidget(parent), runs_root_(std::move(runs_root)) {
  QHBoxLayout* top = buildOpenBar();
  QTabWidget* left = buildLatentPickers();
  QWidget* right = buildWalkPanel();
  auto* splitter = new QSplitter(this);
  splitter->addWidget(left);
  splitter->addWidget(right);
  splitter->setStretchFactor(1, 1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addLayout(top);
  layout->addWidget(status_);
  layout->addWidget(splitter, 1);

  connect(&loader_, &QFutureWatcher<Result<std::shared_ptr<LatentExplorer>>>::finished, this,
          &ExploreTab::showOpenedCheckpoint);
  follow_timer_.setInterval(2000);
  connect(&follow_timer_, &QTimer::timeout, this, &ExploreTab::checkForNewerCheckpoint);
  follow_timer_.start();
  listRuns();
}

// The bar that opens a checkpoint (a run's latest, followed or not, or a file) and the BatchNorm
// mode of every render; the status line shown under it is made here too.
QHBoxLayout* ExploreTab::buildOpenBar() {
  runs_ = new QComboBox(this);
  runs_->setMinimumContentsLength(16);
  runs_->setToolTip("Runs with a checkpoint, under the runs folder");
  auto* open_run = new QPushButton("Open Latest", this);
  open_run->setToolTip("Open the run's latest checkpoint");
  follow_ = new QCheckBox("Follow the latest checkpoint", this);
  follow_->setToolTip("Load each new checkpoint of the run as it lands: explore the model while it trains");
  auto* open_file = new QPushButton("Open File…", this);
  status_ = new QLabel("Open a checkpoint: the latest of a run, or a file.", this);
  status_->setWordWrap(true);
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* top = new QHBoxLayout();
  top->addWidget(new QLabel("Run", this));
  top->addWidget(runs_, 1);
  top->addWidget(open_run);
  top->addWidget(follow_);
  top->addWidget(open_file);
  batch_norm_ = new QComboBox(this);
  batch_norm_->setObjectName("batchNorm");
  batch_norm_->addItems({"Running statistics", "This batch's statistics"});
  batch_norm_->setToolTip("How G's BatchNorm layers normalise while exploring. Running statistics (eval mode, "
                          "the default): each image depends only on its latent. This batch's statistics (train "
                          "mode, how the run's sample grids are drawn): early models often look flat with their "
                          "running statistics; here an image also depends on the others rendered with it. The "
                          "model is not changed either way.");
  top->addWidget(new QLabel("BatchNorm", this));
  top->addWidget(batch_norm_);
  generator_ = new GeneratorSwitch(this);
  top->addWidget(new QLabel("Generator", this));
  top->addWidget(generator_);
  connect(generator_, &QComboBox::currentIndexChanged, this, [this] {
    if (explorer_) load(QString::fromStdString(explorer_->checkpointPath()));  // the other generator, same file
  });

  connect(open_run, &QPushButton::clicked, this, [this] {
    if (runs_->currentIndex() >= 0) openRun(runs_->currentData().toString(), follow_->isChecked());
  });
  connect(follow_, &QCheckBox::toggled, this, [this](bool on) {
    if (on && runs_->currentIndex() >= 0) openRun(runs_->currentData().toString(), true);
    if (!on) follow_run_.clear();
  });
  connect(open_file, &QPushButton::clicked, this, [this] {
    CheckpointFileDialog dialog(this, runs_root_);
    if (dialog.exec() == QDialog::Accepted && !dialog.chosen().isEmpty()) openCheckpoint(dialog.chosen());
  });
  connect(batch_norm_, &QComboBox::currentIndexChanged, this, [this](int index) {
    if (!explorer_) return;
    explorer_->setBatchStatistics(index == 1);
    // Everything shown is drawn again the new way.
    seeds_->setExplorer(explorer_);
    arithmetic_->setExplorer(explorer_);
    preview_->setExplorer(explorer_);
    inside_->setExplorer(explorer_);
  });
  return top;
}

// The ways to pick latents: a page of samples by seed, latent arithmetic, and directions (their
// sliders move the page of samples; the Samples tab and the Directions tab side by side).
QTabWidget* ExploreTab::buildLatentPickers() {
  seeds_ = new widgets::SeedGrid(this);
  arithmetic_ = new LatentArithmeticPanel(this);
  directions_ = new DirectionsPanel(this);
  auto* left = new QTabWidget(this);
  left->addTab(seeds_, "Samples");
  left->addTab(arithmetic_, "Arithmetic");
  left->addTab(directions_, "Directions");
  inside_ = new GeneratorInsidePanel(this);
  left->addTab(inside_, "Inside");
  connect(seeds_, &widgets::SeedGrid::insideRequested, this, [this, left](quint64 seed) {
    std::vector<Latent> page;
    for (int tile = 0; tile < seeds_->tileCount(); ++tile)
      if (seeds_->seedAt(tile) != seed) page.push_back(seeds_->latentOf(seeds_->seedAt(tile)));
    inside_->setSample(seeds_->latentOf(seed), page, QString("Seed %1").arg(seed));
    left->setCurrentWidget(inside_);
  });
  connect(directions_, &DirectionsPanel::offsetChanged, seeds_, &widgets::SeedGrid::setLatentOffset);
  connect(seeds_, &widgets::SeedGrid::markRequested, this,
          [this](const Latent& latent, bool has, const QImage&) { directions_->mark(latent, has); });
  connect(directions_, &DirectionsPanel::walkRequested, this, &ExploreTab::walkAlongDirection);
  return left;
}

ProjectionDialog* ExploreTab::findInLatentSpace(const QString& photo) {
  if (!explorer_) {
    setStatus("Open a checkpoint first: a photograph is found in a generator's latent space.", true);
    return nullptr;
  }
  auto* dialog = new ProjectionDialog(photo, QString::fromStdString(explorer_->checkpointPath()), device_,
                                      generator_->choice(), explorer_->batchStatistics(), this);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  connect(dialog, &ProjectionDialog::keyframeRequested, this, [this](const Latent& latent, const QImage& image) {
    strip_->addKeyframe(latent, std::nullopt, image);
    setStatus("Added the photograph's latent as a keyframe.");
  });
  dialog->show();
  dialog->start();
  return dialog;
}

void ExploreTab::walkAlongDirection(int row) {
  const std::vector<Latent> keys = directions_->walkAlong(row, seeds_->firstSeed());
  if (!explorer_ || keys.empty()) return;
  const auto explorer = explorer_;
  auto* watcher = new QFutureWatcher<widgets::RenderedImages>(this);
  connect(watcher, &QFutureWatcher<widgets::RenderedImages>::finished, this, [this, watcher, keys] {
    const widgets::RenderedImages rendered = watcher->result();
    watcher->deleteLater();
    if (!rendered || rendered->size() != static_cast<int>(keys.size()))
      return setStatus("Cannot render the walk's keyframes: " + QString::fromStdString(rendered.error()), true);
    strip_->clear();
    for (std::size_t i = 0; i < keys.size(); ++i) strip_->addKeyframe(keys[i], std::nullopt, (*rendered)[int(i)]);
  });
  watcher->setFuture(QtConcurrent::run(widgets::studioWorkers(), [explorer, keys] {
    return widgets::toRenderedImages(explorer->render(keys));
  }));
}

// The keyframes the pickers add, and the walk through them: previewed, saved, loaded, exported.
QWidget* ExploreTab::buildWalkPanel() {
  strip_ = new widgets::KeyframeStrip(this);
  preview_ = new WalkPreview(this);
  auto* save_walk = new QPushButton("Save Walk…", this);
  auto* load_walk = new QPushButton("Load Walk…", this);
  auto* export_walk = new QPushButton("Export…", this);
  export_walk->setToolTip("Export the walk as GIF, MP4, WebM or PNG frames");
  auto* keys_box = new QGroupBox("Keyframes", this);
  auto* keys_layout = new QVBoxLayout(keys_box);
  keys_layout->addWidget(strip_);
  auto* find_photo = new QPushButton("Find in Latent Space…", this);
  find_photo->setToolTip("Find the latent whose image is nearest a photograph, to make it a keyframe: "
                         "a walk from one real street photograph to another");
  auto* key_buttons = new QHBoxLayout();
  key_buttons->addWidget(find_photo);
  key_buttons->addStretch(1);
  keys_layout->addLayout(key_buttons);
  connect(find_photo, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, "Find a Photograph in Latent Space", QString(),
                                                      "Images (*.jpg *.jpeg *.png *.webp *.bmp *.tif *.tiff)");
    if (!path.isEmpty()) findInLatentSpace(path);
  });
  auto* walk_buttons = new QHBoxLayout();
  walk_buttons->addWidget(save_walk);
  walk_buttons->addWidget(load_walk);
  walk_buttons->addStretch(1);
  walk_buttons->addWidget(export_walk);
  auto* walk_box = new QGroupBox("Walk", this);
  auto* walk_layout = new QVBoxLayout(walk_box);
  walk_layout->addWidget(preview_, 1);
  walk_layout->addLayout(walk_buttons);
  auto* right = new QWidget(this);
  auto* right_layout = new QVBoxLayout(right);
  right_layout->setContentsMargins(0, 0, 0, 0);
  right_layout->addWidget(keys_box);
  right_layout->addWidget(walk_box, 1);

  connect(seeds_, &widgets::SeedGrid::keyframeRequested, this, [this](quint64 seed, const QImage& image) {
    // With the directions' sliders moved, the sample is its seed's latent plus their offset.
    if (explorer_)
      strip_->addKeyframe(seeds_->latentOf(seed), seeds_->latentOffset().empty() ? std::optional<quint64>(seed) : std::nullopt,
                          image);
  });
  connect(seeds_, &widgets::SeedGrid::groupRequested, this,
          [this](quint64 seed, int group, const QImage& image) { arithmetic_->addToGroup(group, seed, image); });
  connect(arithmetic_, &LatentArithmeticPanel::keyframeRequested, this,
          [this](const Latent& latent, const QImage& image) { strip_->addKeyframe(latent, std::nullopt, image); });
  connect(strip_, &widgets::KeyframeStrip::changed, this, [this] { preview_->setKeys(strip_->latents(), strip_->seeds()); });
  connect(save_walk, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getSaveFileName(this, "Save Walk", QString(), "Walk files (*.json)");
    if (!path.isEmpty()) saveWalk(path);
  });
  connect(load_walk, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, "Load Walk", QString(), "Walk files (*.json)");
    if (!path.isEmpty()) loadWalk(path);
  });
  connect(export_walk, &QPushButton::clicked, this, [this] {
    auto dialog = makeExportDialog();
    if (dialog) dialog->exec();
  });
  return right;
}

// The worker has opened a checkpoint, or could not: every view gets the new generator. A path
// asked for meanwhile is opened next.
void ExploreTab::showOpenedCheckpoint() {
  const Result<std::shared_ptr<LatentExplorer>> opened = loader_.result();
  const QString path = std::exchange(loading_path_, QString());
  if (!opened) {
    const QString error = QString::fromStdString(opened.error());
    setStatus("Cannot open " + path + ": " + error, true);
    emit checkpointOpened(false, error);
  } else {
    explorer_ = *opened;
    explorer_->setBatchStatistics(batchStatistics());
    seeds_->setExplorer(explorer_);
    arithmetic_->setExplorer(explorer_);
    directions_->setExplorer(explorer_);
    inside_->setExplorer(explorer_);
    preview_->setExplorer(explorer_);
    setStatus(QString("%1 — step %2, epoch %3; %4×%4 images, latent size %5; %6%7")
                  .arg(path).arg(explorer_->step()).arg(explorer_->epoch()).arg(explorer_->imageSize()).arg(explorer_->nz())
                  .arg(GeneratorSwitch::describe(explorer_->rendersAverage()))
                  .arg(follow_run_.isEmpty() ? QString() : "; following the run's checkpoints"));
    emit checkpointOpened(true, path);
  }
  if (!pending_path_.isEmpty()) load(std::exchange(pending_path_, QString()));
}

ExploreTab::~ExploreTab() { loader_.waitForFinished(); }

void ExploreTab::setBatchStatistics(bool on) { batch_norm_->setCurrentIndex(on ? 1 : 0); }
bool ExploreTab::batchStatistics() const { return batch_norm_->currentIndex() == 1; }

void ExploreTab::setRunsRoot(const QString& root) {
  runs_root_ = root;
  listRuns();
}

void ExploreTab::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  listRuns();
}

void ExploreTab::listRuns() {
  const QString current = runs_->currentData().toString();
  const QSignalBlocker block(runs_);
  runs_->clear();
  for (const QFileInfo& run : runsWithCheckpoints(runs_root_)) {
    const QString latest = latestCheckpoint(run.absoluteFilePath());
    runs_->addItem(QString("%1 (%2)").arg(run.fileName(), QFileInfo(latest).completeBaseName()), run.absoluteFilePath());
  }
  const int index = runs_->findData(current);
  if (index >= 0) runs_->setCurrentIndex(index);
}

QString ExploreTab::statusText() const { return status_->text(); }

void ExploreTab::setStatus(const QString& text, bool error) {
  status_->setText(text);
  status_->setStyleSheet(error ? "color: #c0392b;" : QString());
}

void ExploreTab::openCheckpoint(const QString& path) {
  follow_run_.clear();
  const QSignalBlocker block(follow_);
  follow_->setChecked(false);
  // What --checkpoint takes: a file, a run folder, RUN@STEP or RUN@latest.
  auto resolved = resolveCheckpointReference(path.toStdString());
  if (!resolved) {
    const QString error = QString::fromStdString(resolved.error());
    setStatus(error, true);
    emit checkpointOpened(false, error);
    return;
  }
  load(QString::fromStdString(resolved->path));
}

void ExploreTab::openRun(const QString& run_dir, bool follow) {
  listRuns();  // the run may be new (started or imported a moment ago): the list shows it chosen
  if (const int index = runs_->findData(QDir::cleanPath(QFileInfo(run_dir).absoluteFilePath())); index >= 0) {
    const QSignalBlocker block(runs_);
    runs_->setCurrentIndex(index);
  }
  const QString latest = latestCheckpoint(run_dir);
  if (latest.isEmpty() && follow) {
    // A run that has just started: its first checkpoint opens as soon as it lands.
    follow_run_ = run_dir;
    const QSignalBlocker block(follow_);
    follow_->setChecked(true);
    setStatus("Waiting for the first checkpoint of " + QDir(run_dir).dirName() + "; it opens here as soon as the "
              "run writes one.");
    return;
  }
  if (latest.isEmpty()) {
    setStatus(run_dir + " has no checkpoint yet.", true);
    emit checkpointOpened(false, run_dir + " has no checkpoint yet");
    return;
  }
  follow_run_ = follow ? run_dir : QString();
  {
    const QSignalBlocker block(follow_);
    follow_->setChecked(follow);
  }
  load(latest);
}

void ExploreTab::load(const QString& path) {
  if (loader_.isRunning()) {  // the newest wish waits for the load in progress
    pending_path_ = path;
    return;
  }
  loading_path_ = path;
  setStatus("Opening " + path + " …");
  const std::string file = path.toStdString(), device = device_.toStdString();
  const GeneratorChoice generator = generator_->choice();
  loader_.setFuture(QtConcurrent::run(widgets::studioWorkers(), [file, device, generator] {
    return LatentExplorer::open(file, device, generator);
  }));
}

void ExploreTab::checkForNewerCheckpoint() {
  if (follow_run_.isEmpty() || loader_.isRunning()) return;
  const QString latest = latestCheckpoint(follow_run_);
  if (!latest.isEmpty() && (!explorer_ || QString::fromStdString(explorer_->checkpointPath()) != latest)) load(latest);
}

bool ExploreTab::saveWalk(const QString& path) {
  const Status saved = LatentExplorer::saveWalk(preview_->plan(), path.toStdString());
  if (!saved) setStatus(QString::fromStdString(saved.error()), true);
  else setStatus("Saved the walk to " + path + ".");
  return saved.ok();
}

bool ExploreTab::loadWalk(const QString& path) {
  auto plan = LatentExplorer::loadWalk(path.toStdString());
  if (!plan) {
    setStatus(QString::fromStdString(plan.error()), true);
    return false;
  }
  if (!explorer_) {
    setStatus("Open a checkpoint before loading a walk.", true);
    return false;
  }
  // Thumbnails of the keys: a few small images, rendered here.
  auto images = explorer_->render(plan->keys);
  if (!images) {
    setStatus(path + ": " + QString::fromStdString(images.error()), true);
    return false;
  }
  const QSignalBlocker block(strip_);
  strip_->clear();
  for (std::size_t i = 0; i < plan->keys.size(); ++i)
    strip_->addKeyframe(plan->keys[i], plan->seeds[i] ? std::optional<quint64>(*plan->seeds[i]) : std::nullopt, widgets::toQImage((*images)[i]));
  preview_->setSettings(*plan);
  preview_->setKeys(strip_->latents(), strip_->seeds());
  setStatus(QString("Loaded %1 keyframes from %2.").arg(plan->keys.size()).arg(path));
  return true;
}

std::unique_ptr<ExportWalkDialog> ExploreTab::makeExportDialog() {
  const WalkPlan plan = preview_->plan();
  if (!explorer_ || !explorer_->validate(plan)) {
    setStatus(explorer_ ? "Add at least two keyframes to export a walk." : "Open a checkpoint first.", true);
    return nullptr;
  }
  return std::make_unique<ExportWalkDialog>(explorer_, plan, preview_->framesPerSecond(), this);
}

}  // namespace streetgan::studio
