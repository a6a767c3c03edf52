#include "app/studio/host_dialog.h"

#include "app/studio/host_key_prompt.h"
#include "widgets/worker_pool.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

namespace streetgan::studio {

HostDialog::HostDialog(QList<HostProfile> profiles, QWidget* parent) : QDialog(parent), profiles_(std::move(profiles)) {
  setWindowTitle("Hosts");
  QVBoxLayout* left = buildProfileList();
  QVBoxLayout* right = buildProfileForm();
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Save | QDialogButtonBox::Cancel, this);
  auto* columns = new QHBoxLayout();
  columns->addLayout(left, 1);
  columns->addLayout(right, 2);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(columns, 1);
  layout->addWidget(buttons);
  resize(760, 560);

  for (const auto& profile : profiles_) list_->addItem(profile.label());
  connect(list_, &QListWidget::currentRowChanged, this, &HostDialog::showProfile);
  connect(test_, &QPushButton::clicked, this, &HostDialog::testConnection);
  connect(&tester_, &HostConnectionCheck::finished, this, &HostDialog::onTested);
  connect(&probe_, &QFutureWatcher<HostKeyProbe>::finished, this, &HostDialog::onProbed);
  connect(buttons, &QDialogButtonBox::accepted, this, [this] {
    storeFields();
    for (const auto& profile : profiles_) {
      if (const QString invalid = profile.validate(); !invalid.isEmpty()) {
        result_->setText(profile.label() + ": " + invalid);
        return;
      }
    }
    saveHostProfiles(profiles_);
    accept();
  });
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  if (profiles_.isEmpty()) addProfile();
  else list_->setCurrentRow(0);
}

// The profiles on the left, with Add and Remove under them.
QVBoxLayout* HostDialog::buildProfileList() {
  list_ = new QListWidget(this);
  auto* add = new QPushButton("Add", this);
  remove_ = new QPushButton("Remove", this);
  auto* list_buttons = new QHBoxLayout();
  list_buttons->addWidget(add);
  list_buttons->addWidget(remove_);
  auto* left = new QVBoxLayout();
  left->addWidget(list_, 1);
  left->addLayout(list_buttons);
  connect(add, &QPushButton::clicked, this, &HostDialog::addProfile);
  connect(remove_, &QPushButton::clicked, this, &HostDialog::removeProfile);
  return left;
}

// One editor for each field of a profile, with its placeholder (what an empty field means) and
// tool tip.
void HostDialog::createFieldEditors() {
  const auto line = [this](const QString& placeholder, const QString& tip) {
    auto* edit = new QLineEdit(this);
    edit->setPlaceholderText(placeholder);
    edit->setToolTip(tip);
    return edit;
  };
  name_ = line("shown in lists; empty: user@host", "A name for this host in the studio");
  host_ = line("gpu-box.example.org", "Host name, address or an alias from ~/.ssh/config");
  user_ = line("ssh's default", "User name on the host; empty: ssh's default");
  port_ = new QSpinBox(this);
  port_->setRange(0, 65535);
  port_->setSpecialValueText("ssh's default");
  jump_ = line("none", "A jump host to go through (ssh -J), e.g. me@bastion.example.org");
  key_ = line("ssh-agent and ssh's defaults", "A private key file; empty: your agent and ssh's usual keys");
  program_ = line("streetgan", "The streetgan program on the host (a leading ~/ is the remote home)");
  runs_root_ = line("~/streetgan-runs", "The folder on the host where run directories go");
  environment_ = line("none", "Shell run before each command on the host, e.g. source /opt/habana/env.sh");
  ssh_config_ = line("~/.ssh/config", "An ssh configuration file to use instead of ~/.ssh/config");
  known_hosts_ = line("ssh's default (~/.ssh/known_hosts)", "Where accepted host keys are kept");
  device_ = new QComboBox(this);
  device_->setObjectName("device");
  device_->setEditable(true);
  device_->addItems({"auto", "cpu", "cuda", "cuda:0", "cuda:1", "cuda:2", "cuda:3", "hpu"});
  device_->setToolTip("The device runs on this host train on (auto, cpu, cuda, cuda:N or hpu); "
                      "a device set in the Train tab's config wins");
  devices_ = new QSpinBox(this);
  devices_->setObjectName("devices");
  devices_->setRange(1, 1024);
  devices_->setToolTip("How many devices a run on this host uses, one rank each (streetgan train --nproc): "
                       "e.g. 8 on a host with 8 GPUs. The batch size is per rank.");
  cost_ = new QDoubleSpinBox(this);
  cost_->setObjectName("costPerHour");
  cost_->setRange(0, 100000);
  cost_->setDecimals(2);
  cost_->setPrefix("$ ");
  cost_->setSpecialValueText("Not known");
  cost_->setToolTip("What an hour of this host costs, in dollars: the Runs tab's Compare turns it into "
                    "dollars per million images for the runs trained here");
  threads_ = new QSpinBox(this);
  threads_->setObjectName("threads");
  threads_->setRange(0, 1024);
  threads_->setSpecialValueText("All cores");
  threads_->setToolTip("CPU threads of runs on this host; threads set in the Train tab's config win");
}

// The selected profile's fields on the right, then Test Connection and its result.
QVBoxLayout* HostDialog::buildProfileForm() {
  createFieldEditors();
  auto* browse_key = new QPushButton("Browse…", this);
  auto* key_row = new QHBoxLayout();
  key_row->addWidget(key_, 1);
  key_row->addWidget(browse_key);

  auto* form = new QFormLayout();
  form->addRow("Name", name_);
  form->addRow("Host", host_);
  form->addRow("User", user_);
  form->addRow("Port", port_);
  form->addRow("Jump host", jump_);
  form->addRow("Key file", key_row);
  form->addRow("streetgan path", program_);
  form->addRow("Runs folder", runs_root_);
  form->addRow("Device", device_);
  form->addRow("Devices to use", devices_);
  form->addRow("CPU threads", threads_);
  form->addRow("Cost per hour", cost_);
  form->addRow("Environment line", environment_);
  auto* advanced = new QGroupBox("Advanced", this);
  auto* advanced_form = new QFormLayout(advanced);
  advanced_form->addRow("ssh config file", ssh_config_);
  advanced_form->addRow("Known hosts file", known_hosts_);
  auto* note = new QLabel("Host keys are always checked. The studio never asks for or stores a password: "
                          "it logs in with your keys or ssh-agent.", this);
  note->setWordWrap(true);
  test_ = new QPushButton("Test Connection", this);
  result_ = new QLabel(this);
  result_->setWordWrap(true);
  result_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  result_->setMinimumHeight(48);
  auto* right = new QVBoxLayout();
  right->addLayout(form);
  right->addWidget(advanced);
  right->addWidget(note);
  right->addWidget(test_, 0, Qt::AlignLeft);
  right->addWidget(result_);
  right->addStretch(1);

  connect(browse_key, &QPushButton::clicked, this, [this] {
    const QString file = QFileDialog::getOpenFileName(this, "Private Key", QDir::homePath() + "/.ssh");
    if (!file.isEmpty()) key_->setText(file);
  });
  return right;
}

HostDialog::~HostDialog() { probe_.waitForFinished(); }

void HostDialog::selectProfile(int row) { list_->setCurrentRow(row); }

HostProfile HostDialog::currentProfile() const {
  HostProfile p;
  p.name = name_->text().trimmed();
  p.host = host_->text().trimmed();
  p.user = user_->text().trimmed();
  p.port = port_->value();
  p.jump_host = jump_->text().trimmed();
  p.identity_file = key_->text().trimmed();
  p.streetgan_path = program_->text().trimmed().isEmpty() ? QString("streetgan") : program_->text().trimmed();
  p.runs_root = runs_root_->text().trimmed().isEmpty() ? QString("~/streetgan-runs") : runs_root_->text().trimmed();
  p.environment_line = environment_->text();
  p.ssh_config_file = ssh_config_->text().trimmed();
  p.known_hosts_file = known_hosts_->text().trimmed();
  p.device = device_->currentText().trimmed().isEmpty() ? QString("auto") : device_->currentText().trimmed();
  p.threads = threads_->value();
  p.devices = devices_->value();
  p.cost_per_hour = cost_->value();
  return p;
}

void HostDialog::storeFields() {
  if (row_ < 0 || row_ >= profiles_.size()) return;
  profiles_[row_] = currentProfile();
  list_->item(row_)->setText(profiles_[row_].label().isEmpty() ? QString("(new host)") : profiles_[row_].label());
}

void HostDialog::showProfile(int row) {
  storeFields();
  row_ = row;
  const HostProfile p = row >= 0 && row < profiles_.size() ? profiles_[row] : HostProfile();
  name_->setText(p.name);
  host_->setText(p.host);
  user_->setText(p.user);
  port_->setValue(p.port);
  jump_->setText(p.jump_host);
  key_->setText(p.identity_file);
  program_->setText(p.streetgan_path);
  runs_root_->setText(p.runs_root);
  environment_->setText(p.environment_line);
  ssh_config_->setText(p.ssh_config_file);
  known_hosts_->setText(p.known_hosts_file);
  device_->setCurrentText(p.device);
  threads_->setValue(p.threads);
  devices_->setValue(p.devices);
  cost_->setValue(p.cost_per_hour);
  result_->clear();
  remove_->setEnabled(row >= 0);
}

void HostDialog::addProfile() {
  storeFields();
  profiles_.push_back(HostProfile());
  list_->addItem("(new host)");
  list_->setCurrentRow(profiles_.size() - 1);
  host_->setFocus();
}

void HostDialog::removeProfile() {
  if (row_ < 0 || row_ >= profiles_.size()) return;
  const int row = row_;
  row_ = -1;  // nothing to store from the fields of the one removed
  profiles_.removeAt(row);
  delete list_->takeItem(row);
  if (profiles_.isEmpty()) showProfile(-1);
}

bool HostDialog::isTesting() const { return tester_.isRunning() || probe_.isRunning(); }
QString HostDialog::testResultText() const { return result_->text(); }

void HostDialog::setBusy(bool busy) { test_->setEnabled(!busy); }

void HostDialog::testConnection() {
  storeFields();
  const HostProfile profile = currentProfile();
  result_->setText("Connecting to " + profile.destination() + " …");
  setBusy(true);
  tester_.start(profile, control_dir_);
}

void HostDialog::onTested(const HostCheckResult& result) {
  if (result.failure == SshFailure::HostKeyUnknown || result.failure == SshFailure::HostKeyChanged) {
    result_->setText(result.message + "\nGetting the host's key …");
    const SshConnection connection(currentProfile(), control_dir_);
    const bool changed = result.failure == SshFailure::HostKeyChanged;
    probe_.setFuture(QtConcurrent::run(widgets::studioWorkers(), [connection, changed] { return HostKeyCheck::probe(connection, changed); }));
    return;
  }
  setBusy(false);
  result_->setText(result.ok() ? result.message : "Failed: " + result.message);
  retried_after_accept_ = false;
  emit testFinished(result);
}

void HostDialog::onProbed() {
  const HostKeyProbe probe = probe_.result();
  if (!probe.status) {
    setBusy(false);
    result_->setText("Failed: " + errorText(probe.status));
    emit testFinished({SshFailure::Unreachable, errorText(probe.status), {}, {}, 0, 0});
    return;
  }
  const QString host = currentProfile().destination();
  const bool accepted = !retried_after_accept_ && (decider_ ? decider_(probe) : askToAcceptHostKey(probe, host, this));
  if (!accepted) {
    setBusy(false);
    const QString text = "Refused: the key of " + host + " (" + probe.fingerprints.join(", ") + ") was not accepted; nothing was trusted.";
    result_->setText(text);
    emit testFinished({probe.changed ? SshFailure::HostKeyChanged : SshFailure::HostKeyUnknown, text, {}, {}, 0, 0});
    return;
  }
  if (const QString failed = HostKeyCheck::accept(probe); !failed.isEmpty()) {
    setBusy(false);
    result_->setText("Failed: " + failed);
    emit testFinished({SshFailure::CommandFailed, failed, {}, {}, 0, 0});
    return;
  }
  retried_after_accept_ = true;  // once: a host that still fails is not asked about again
  result_->setText("Key accepted; connecting again …");
  tester_.start(currentProfile(), control_dir_);
}

}  // namespace streetgan::studio
