#pragma once
// QualityAlarmBadge: the notice at the top of the Train tab's dashboard when the run raises a
// quality alarm (a `warning` event with an alarm: collapse, memorisation or overfitting). It shows
// the newest alarm's message as the engine wrote it (what happened, with the figures, and what to
// try), "and N more" when there were others, on an orange ground; clicking it asks for the
// warnings (clicked()). Hidden while there is none.
#include <QLabel>
#include <QString>

class QMouseEvent;

namespace streetgan::studio {

class QualityAlarmBadge : public QLabel {
  Q_OBJECT
public:
  explicit QualityAlarmBadge(QWidget* parent = nullptr);

  /// An alarm's message: shown, the earlier ones counted.
  void addAlarm(const QString& message);
  /// Forgets every alarm and hides.
  void reset();
  int count() const { return count_; }

signals:
  void clicked();

protected:
  void mouseReleaseEvent(QMouseEvent* event) override;

private:
  int count_ = 0;
};

}  // namespace streetgan::studio
