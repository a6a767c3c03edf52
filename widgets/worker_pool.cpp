#include "widgets/worker_pool.h"

#include <QThread>

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace streetgan::widgets {

QThreadPool* studioWorkers() {
  static QThreadPool* pool = [] {
    auto* created = new QThreadPool();  // lives as long as the program: jobs may outlive any window
    created->setMaxThreadCount(QThread::idealThreadCount() + 2);
    return created;
  }();
  return pool;
}

void yieldToTheGuiThread() {
  thread_local bool lowered = false;
  if (lowered) return;
  lowered = true;
  // On Linux a thread has its own nice value; elsewhere this is a no-op.
  ::setpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)), 10);
}

}  // namespace streetgan::widgets
