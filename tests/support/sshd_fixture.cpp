#include "tests/support/sshd_fixture.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QThread>

#include <arpa/inet.h>
#include <csignal>
#include <fcntl.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

int freePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t size = sizeof address;
  ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size);
  ::close(fd);
  return ntohs(address.sin_port);
}

bool accepts(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  ::close(fd);
  return ok;
}

bool run(const QString& program, const QStringList& args, QString* error) {
  QProcess process;
  process.start(program, args);
  if (!process.waitForFinished(30000) || process.exitStatus() != QProcess::NormalExit || process.exitCode() != 0) {
    if (error) *error = program + " " + args.join(' ') + ": " + QString::fromUtf8(process.readAllStandardError()) + process.errorString();
    return false;
  }
  return true;
}

// Every process below `root` (sshd's sessions and the commands they run), from /proc.
QList<qint64> descendants(qint64 root) {
  QList<qint64> found{root};
  for (int i = 0; i < found.size(); ++i) {
    for (const QString& entry : QDir("/proc").entryList(QDir::Dirs)) {
      bool numeric = false;
      const qint64 pid = entry.toLongLong(&numeric);
      if (!numeric) continue;
      QFile stat("/proc/" + entry + "/stat");
      if (!stat.open(QIODevice::ReadOnly)) continue;
      const QByteArray text = stat.readAll();
      const QList<QByteArray> fields = text.mid(text.lastIndexOf(')') + 2).split(' ');
      if (fields.size() > 1 && fields[1].toLongLong() == found[i] && !found.contains(pid)) found << pid;
    }
  }
  return found;
}

// " OPENBLAS_NUM_THREADS=N" with the suite's own N (a number only: it goes into sshd_config), or
// nothing when the suite has none.
QString openblasThreads() {
  bool number = false;
  const int threads = qEnvironmentVariableIntValue("OPENBLAS_NUM_THREADS", &number);
  return number && threads > 0 ? QString(" OPENBLAS_NUM_THREADS=%1").arg(threads) : QString();
}

}  // namespace

SshdFixture::SshdFixture(QString dir) : dir_(std::move(dir)) {
  QDir(dir_).removeRecursively();
  QDir().mkpath(dir_);
  QDir().mkpath(controlDir());
  ::chmod(QFile::encodeName(controlDir()).constData(), 0700);
  QDir().mkpath(remoteRunsRoot());
  port_ = freePort();
}

SshdFixture::~SshdFixture() { stop(); }

bool SshdFixture::regenerateHostKey(QString* error) {
  QFile::remove(dir_ + "/host_key");
  QFile::remove(dir_ + "/host_key.pub");
  return run("ssh-keygen", {"-q", "-t", "ed25519", "-N", "", "-C", "streetgan-test-host", "-f", dir_ + "/host_key"}, error);
}

bool SshdFixture::start(QString* error) {
  if (!QFile::exists("/usr/sbin/sshd")) {
    if (error) *error = "/usr/sbin/sshd is missing (Debian package openssh-server)";
    return false;
  }
  if (!QFile::exists(dir_ + "/host_key") && !regenerateHostKey(error)) return false;
  if (!QFile::exists(dir_ + "/user_key")) {
    if (!run("ssh-keygen", {"-q", "-t", "ed25519", "-N", "", "-C", "streetgan-test-user", "-f", dir_ + "/user_key"}, error)) return false;
    QFile::copy(dir_ + "/user_key.pub", dir_ + "/authorized_keys");
  }
  if (::geteuid() == 0) QDir().mkpath("/run/sshd");  // sshd's privilege separation folder
  QFile config(dir_ + "/sshd_config");
  if (!config.open(QIODevice::WriteOnly)) return false;
  config.write(QString("Port %1\nListenAddress 127.0.0.1\nHostKey %2/host_key\nPidFile %2/sshd.pid\n"
                       "AuthorizedKeysFile %2/authorized_keys\nStrictModes no\nUsePAM no\n"
                       "PasswordAuthentication no\nKbdInteractiveAuthentication no\nPubkeyAuthentication yes\n"
                       "PermitRootLogin prohibit-password\nMaxSessions 64\nMaxStartups 64\nLogLevel ERROR\n"
                       // bash sources ~/.bashrc for commands run by sshd unless it is a nested
                       // shell: the test user's own rc files (a pyenv hook, say) stay out of it.
                       // The programs it starts get the suite's OPENBLAS_NUM_THREADS, as the
                       // suite's own do (tests/CMakeLists.txt says why). sshd reads only the
                       // first SetEnv line: another variable goes on this one.
                       "SetEnv SHLVL=1%3\n")
                   .arg(port_)
                   .arg(dir_)
                   .arg(openblasThreads())
                   .toUtf8());
  config.close();
  const QByteArray log = QFile::encodeName(dir_ + "/sshd.log");
  const QByteArray path = QFile::encodeName(dir_ + "/sshd_config");
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int fd = ::open(log.constData(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    ::dup2(fd, 2);
    ::execl("/usr/sbin/sshd", "/usr/sbin/sshd", "-D", "-e", "-f", path.constData(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  pid_ = pid;
  QElapsedTimer waited;
  waited.start();
  while (!accepts(port_)) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      pid_ = 0;
      QFile log(dir_ + "/sshd.log");
      log.open(QIODevice::ReadOnly);
      if (error) *error = "sshd ended at once: " + QString::fromUtf8(log.readAll());
      return false;
    }
    if (waited.elapsed() > 10000) {
      if (error) *error = "sshd did not accept connections within 10 s";
      return false;
    }
    QThread::msleep(20);
  }
  return true;
}

void SshdFixture::stop() {
  if (pid_ <= 0) return;
  const auto all = descendants(pid_);
  for (qint64 pid : all) ::kill(static_cast<pid_t>(pid), SIGKILL);
  ::waitpid(static_cast<pid_t>(pid_), nullptr, 0);
  pid_ = 0;
}

bool SshdFixture::trustHostKey(QString* error) {
  QFile key(dir_ + "/host_key.pub");
  QFile known(knownHostsFile());
  if (!key.open(QIODevice::ReadOnly) || !known.open(QIODevice::Append)) {
    if (error) *error = "cannot write " + knownHostsFile();
    return false;
  }
  const QList<QByteArray> fields = key.readAll().trimmed().split(' ');
  known.write(QString("[127.0.0.1]:%1 ").arg(port_).toUtf8() + fields.value(0) + " " + fields.value(1) + "\n");
  return true;
}

QString SshdFixture::hostKeyFingerprint() const {
  QProcess process;
  process.start("ssh-keygen", {"-l", "-f", dir_ + "/host_key.pub"});
  process.waitForFinished(10000);
  const QString line = QString::fromUtf8(process.readAllStandardOutput()).trimmed();
  return line.section(' ', -1).remove('(').remove(')') + " " + line.section(' ', 1, 1);
}

streetgan::studio::HostProfile SshdFixture::profile() const {
  streetgan::studio::HostProfile profile;
  profile.name = "test sshd";
  profile.host = "127.0.0.1";
  profile.port = port_;
  const passwd* user = ::getpwuid(::geteuid());
  profile.user = user ? QString::fromLocal8Bit(user->pw_name) : QString();
  profile.identity_file = dir_ + "/user_key";
  profile.known_hosts_file = knownHostsFile();
  profile.ssh_config_file = "/dev/null";
  profile.streetgan_path = STREETGAN_CLI;
  profile.runs_root = remoteRunsRoot();
  return profile;
}
