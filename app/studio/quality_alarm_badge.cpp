#include "app/studio/quality_alarm_badge.h"

#include <QMouseEvent>

namespace streetgan::studio {

QualityAlarmBadge::QualityAlarmBadge(QWidget* parent) : QLabel(parent) {
  setObjectName("qualityAlarm");
  setTextFormat(Qt::PlainText);  // the engine's message, as written
  setWordWrap(true);
  setCursor(Qt::PointingHandCursor);
  setStyleSheet("QLabel#qualityAlarm { background-color: #d35400; color: white; font-weight: bold; "
                "padding: 4px 8px; border-radius: 3px; }");
  setToolTip("A quality alarm of this run; click to see every warning");
  hide();
}

void QualityAlarmBadge::addAlarm(const QString& message) {
  ++count_;
  QString text = QString::fromUtf8("⚠ ") + message;
  if (count_ > 1) text += QString(" — and %1 more").arg(count_ - 1);
  setText(text);
  show();
}

void QualityAlarmBadge::reset() {
  count_ = 0;
  clear();
  hide();
}

void QualityAlarmBadge::mouseReleaseEvent(QMouseEvent* event) {
  if (event->button() == Qt::LeftButton && rect().contains(event->position().toPoint())) emit clicked();
  QLabel::mouseReleaseEvent(event);
}

}  // namespace streetgan::studio
