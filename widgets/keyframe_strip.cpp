#include "widgets/keyframe_strip.h"

#include <QHBoxLayout>
#include <QKeyEvent>
#include <QListWidget>
#include <QPushButton>
#include <QShortcut>
#include <QVBoxLayout>

namespace streetgan::widgets {

namespace {
constexpr int kLatentRole = Qt::UserRole;
constexpr int kSeedRole = Qt::UserRole + 1;
constexpr int kThumbnail = 72;
}  // namespace

KeyframeStrip::KeyframeStrip(QWidget* parent) : QWidget(parent) {
  list_ = new QListWidget(this);
  list_->setViewMode(QListView::IconMode);
  list_->setFlow(QListView::LeftToRight);
  list_->setWrapping(false);
  list_->setMovement(QListView::Snap);
  list_->setDragDropMode(QAbstractItemView::InternalMove);
  list_->setDefaultDropAction(Qt::MoveAction);
  list_->setSelectionMode(QAbstractItemView::ExtendedSelection);
  list_->setIconSize(QSize(kThumbnail, kThumbnail));
  list_->setFixedHeight(kThumbnail + 48);
  list_->setToolTip("Drag to reorder; Delete removes the selected keyframes");
  auto* remove_button = new QPushButton("Remove", this);
  auto* clear_button = new QPushButton("Clear", this);
  auto* buttons = new QVBoxLayout();
  buttons->addWidget(remove_button);
  buttons->addWidget(clear_button);
  buttons->addStretch(1);
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(list_, 1);
  layout->addLayout(buttons);

  auto remove_selected = [this] {
    const auto selected = list_->selectedItems();
    if (selected.isEmpty()) return;
    for (QListWidgetItem* item : selected) delete item;
    emit changed();
  };
  connect(remove_button, &QPushButton::clicked, this, remove_selected);
  connect(clear_button, &QPushButton::clicked, this, &KeyframeStrip::clear);
  auto* del = new QShortcut(QKeySequence::Delete, list_, nullptr, nullptr, Qt::WidgetShortcut);
  connect(del, &QShortcut::activated, this, remove_selected);
  connect(list_->model(), &QAbstractItemModel::rowsMoved, this, &KeyframeStrip::changed);
}

void KeyframeStrip::addKeyframe(const Latent& latent, std::optional<quint64> seed, const QImage& image) {
  auto* item = new QListWidgetItem(QIcon(QPixmap::fromImage(image.scaled(kThumbnail, kThumbnail, Qt::KeepAspectRatio))),
                                   seed ? QString("seed %1").arg(*seed) : QString("latent"));
  item->setData(kLatentRole, QVariant::fromValue(QList<float>(latent.begin(), latent.end())));
  if (seed) item->setData(kSeedRole, QVariant::fromValue(*seed));
  item->setFlags(item->flags() & ~Qt::ItemIsDropEnabled);  // dropping reorders; never onto an item
  list_->addItem(item);
  emit changed();
}

int KeyframeStrip::count() const { return list_->count(); }

void KeyframeStrip::move(int from, int to) {
  if (from < 0 || from >= count() || to < 0 || to >= count() || from == to) return;
  QListWidgetItem* item = list_->takeItem(from);
  list_->insertItem(to, item);
  emit changed();
}

void KeyframeStrip::remove(int index) {
  if (index < 0 || index >= count()) return;
  delete list_->takeItem(index);
  emit changed();
}

void KeyframeStrip::clear() {
  if (count() == 0) return;
  list_->clear();
  emit changed();
}

std::vector<Latent> KeyframeStrip::latents() const {
  std::vector<Latent> out;
  for (int i = 0; i < count(); ++i) {
    const QList<float> values = list_->item(i)->data(kLatentRole).value<QList<float>>();
    out.emplace_back(values.begin(), values.end());
  }
  return out;
}

std::vector<std::optional<std::uint64_t>> KeyframeStrip::seeds() const {
  std::vector<std::optional<std::uint64_t>> out;
  for (int i = 0; i < count(); ++i) {
    const QVariant seed = list_->item(i)->data(kSeedRole);
    out.push_back(seed.isValid() ? std::optional<std::uint64_t>(seed.value<quint64>()) : std::nullopt);
  }
  return out;
}

QStringList KeyframeStrip::labels() const {
  QStringList out;
  for (int i = 0; i < count(); ++i) out << list_->item(i)->text();
  return out;
}

}  // namespace streetgan::widgets
