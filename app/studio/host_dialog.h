#pragma once
// HostDialog: the host profiles (File → Hosts…, or Hosts… beside the Train tab's Run on): a list on the left, the selected profile's
// fields on the right, and Test Connection, which reports reachability, the remote streetgan's
// version and devices, and the device and CPU threads runs on the host use. When the host's key is unknown or changed, its fingerprint is shown (the
// probe runs off the GUI thread) and the key is trusted only if the user accepts it; then the
// test runs again. Save keeps the profiles with QSettings.
#include "app/studio/control/host_connection_check.h"
#include "app/studio/control/host_key_check.h"
#include "app/studio/control/host_profile.h"

#include <QDialog>
#include <QFutureWatcher>

#include <functional>

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QPushButton;
class QSpinBox;
class QVBoxLayout;

namespace streetgan::studio {

class HostDialog : public QDialog {
  Q_OBJECT
public:
  explicit HostDialog(QList<HostProfile> profiles, QWidget* parent = nullptr);
  ~HostDialog() override;

  QList<HostProfile> profiles() const { return profiles_; }
  void selectProfile(int row);
  /// The profile on show, as its fields now read.
  HostProfile currentProfile() const;
  /// Runs Test Connection for the profile on show.
  void testConnection();
  bool isTesting() const;
  QString testResultText() const;
  /// Who decides about an unknown or changed host key (default: askToAcceptHostKey); for tests.
  void setHostKeyDecider(std::function<bool(const HostKeyProbe&)> decider) { decider_ = std::move(decider); }
  /// The shared-connection folder for tests (empty: the default).
  void setControlDir(const QString& dir) { control_dir_ = dir; }

signals:
  void testFinished(const streetgan::studio::HostCheckResult& result);

private:
  // The constructor's parts: the profile list, then the form (its field editors first).
  QVBoxLayout* buildProfileList();
  void createFieldEditors();
  QVBoxLayout* buildProfileForm();
  void addProfile();
  void removeProfile();
  void showProfile(int row);
  void storeFields();
  void onTested(const HostCheckResult& result);
  void onProbed();
  void setBusy(bool busy);

  QList<HostProfile> profiles_;
  int row_ = -1;
  QListWidget* list_ = nullptr;
  QLineEdit *name_, *host_, *user_, *jump_, *key_, *program_, *runs_root_, *environment_, *ssh_config_, *known_hosts_;
  QSpinBox* port_ = nullptr;
  QComboBox* device_ = nullptr;
  QSpinBox* threads_ = nullptr;
  QSpinBox* devices_ = nullptr;
  QDoubleSpinBox* cost_ = nullptr;
  QPushButton *test_ = nullptr, *remove_ = nullptr;
  QLabel* result_ = nullptr;
  HostConnectionCheck tester_;
  QFutureWatcher<HostKeyProbe> probe_;
  std::function<bool(const HostKeyProbe&)> decider_;
  QString control_dir_;
  bool retried_after_accept_ = false;
};

}  // namespace streetgan::studio
