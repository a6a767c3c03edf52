#pragma once
// The parts the Evaluate tab's job forms (Parzen, quality metrics) share: spin boxes for counts of
// samples or images, and the rows that run a job and follow it.
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>

namespace streetgan::widgets {

/// From `minimum` to 10,000,000, starting at `value`.
inline QSpinBox* newCountSpinBox(int minimum, int value, QWidget* parent) {
  auto* box = new QSpinBox(parent);
  box->setRange(minimum, 10000000);
  box->setValue(value);
  return box;
}

/// The job's Start and Cancel buttons side by side, then its progress bar and status line.
inline void addJobRows(QFormLayout* form, QPushButton* start, QPushButton* cancel, QProgressBar* progress,
                       QLabel* status) {
  auto* buttons = new QHBoxLayout();
  buttons->addWidget(start);
  buttons->addWidget(cancel);
  form->addRow(buttons);
  form->addRow(progress);
  form->addRow(status);
}

}  // namespace streetgan::widgets
