#pragma once
// The question put to the user when a host's key is unknown or has changed: the host, the key's
// fingerprints and what accepting means. Refuse is the default button; nothing is trusted unless
// the user picks Accept Key.
#include "app/studio/control/host_key_check.h"

#include <QMessageBox>

namespace streetgan::studio {

/// A modal box for `probe` (the caller shows it with exec()); its Accept Key button is
/// acceptButton(box).
QMessageBox* makeHostKeyPrompt(const HostKeyProbe& probe, const QString& host, QWidget* parent);
QAbstractButton* hostKeyAcceptButton(QMessageBox* box);

/// Shows the prompt and returns whether the user accepted the key.
bool askToAcceptHostKey(const HostKeyProbe& probe, const QString& host, QWidget* parent);

}  // namespace streetgan::studio
