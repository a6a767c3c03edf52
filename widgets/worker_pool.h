#pragma once
// The studio's thread pool for long work (listing runs and data sets, decoding, rendering,
// exporting). Not QThreadPool::globalInstance(): Qt's own image scaling waits on the global pool,
// so a long job there (an export holding the generator) would freeze the GUI thread's painting.
#include <QThreadPool>

namespace streetgan::widgets {

/// The pool, created on first use, with a thread per core plus two (a job that waits on the
/// generator must not starve the others).
QThreadPool* studioWorkers();

/// Lowers the calling worker thread's CPU priority (Linux: its nice value to 10), so a stream of
/// background jobs (thumbnails, preview frames) never takes a core from the GUI thread.
void yieldToTheGuiThread();

}  // namespace streetgan::widgets
