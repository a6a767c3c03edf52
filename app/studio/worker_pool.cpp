#include "worker_pool.h"

#include <QThread>

namespace streetgan::studio {

QThreadPool* studioWorkers() {
  static QThreadPool* pool = [] {
    auto* created = new QThreadPool();  // lives as long as the program: jobs may outlive any window
    created->setMaxThreadCount(QThread::idealThreadCount() + 2);
    return created;
  }();
  return pool;
}

}  // namespace streetgan::studio
