#include "app/studio/host_key_prompt.h"

#include <QPushButton>

namespace streetgan::studio {

QMessageBox* makeHostKeyPrompt(const HostKeyProbe& probe, const QString& host, QWidget* parent) {
  auto* box = new QMessageBox(parent);
  box->setIcon(probe.changed ? QMessageBox::Warning : QMessageBox::Question);
  box->setWindowTitle(probe.changed ? "Host Key Changed" : "Unknown Host Key");
  QString text = probe.changed
                     ? "The key of " + host + " (" + probe.host_key_name + ") is not the one accepted before.\n\n"
                       "This happens when the host was reinstalled, or when someone is intercepting the "
                       "connection. Accept the new key only if its owner confirms this fingerprint:"
                     : "The key of " + host + " (" + probe.host_key_name + ") is not known yet.\n\n"
                       "Accept it only if it matches the fingerprint the host's owner gave you "
                       "(on the host: ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub):";
  text += "\n\n" + probe.fingerprints.join("\n") + "\n\nAccepting adds it to " + probe.known_hosts_file + ".";
  box->setText(text);
  auto* accept = box->addButton("Accept Key", QMessageBox::AcceptRole);
  accept->setObjectName("acceptHostKey");
  auto* refuse = box->addButton("Refuse", QMessageBox::RejectRole);
  box->setDefaultButton(refuse);
  box->setEscapeButton(refuse);
  return box;
}

QAbstractButton* hostKeyAcceptButton(QMessageBox* box) { return box->findChild<QAbstractButton*>("acceptHostKey"); }

bool askToAcceptHostKey(const HostKeyProbe& probe, const QString& host, QWidget* parent) {
  std::unique_ptr<QMessageBox> box(makeHostKeyPrompt(probe, host, parent));
  box->exec();
  return box->clickedButton() == hostKeyAcceptButton(box.get());
}

}  // namespace streetgan::studio
