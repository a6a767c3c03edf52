#include "app/cli/train_progress_printer.h"

#include "core/runs/run_event.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

namespace streetgan::cli {

TrainProgressPrinter::TrainProgressPrinter(TrainProgressOptions options)
    : options_(options), origin_(std::chrono::steady_clock::now()) {}

TrainProgressPrinter::~TrainProgressPrinter() { clear(); }

TrainProgressOptions::Mode TrainProgressPrinter::modeFor(std::FILE* stream, bool quiet) {
  if (quiet) return TrainProgressOptions::Mode::Quiet;
  return ::isatty(::fileno(stream)) == 1 ? TrainProgressOptions::Mode::Live : TrainProgressOptions::Mode::Periodic;
}

double TrainProgressPrinter::now() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - origin_).count();
}

std::size_t TrainProgressPrinter::terminalWidth() const {
  winsize size{};
  if (::ioctl(::fileno(options_.stream), TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return 80;
}

void TrainProgressPrinter::clear() {
  if (drawn_ == 0) return;
  // Two columns more than drawn: the terminal's echo of a Ctrl-C ("^C") lands right after the line.
  const std::size_t blank = std::min(drawn_ + 2, std::max<std::size_t>(terminalWidth(), 2) - 1);
  std::fprintf(options_.stream, "\r%s\r", std::string(std::max(blank, drawn_), ' ').c_str());
  std::fflush(options_.stream);
  drawn_ = 0;
  last_draw_s_ = -1e9;  // the next step draws it again at once
}

void TrainProgressPrinter::printLine(const std::string& line) {
  clear();
  std::fprintf(options_.stream, "%s\n", line.c_str());
  std::fflush(options_.stream);
}

void TrainProgressPrinter::redraw(double now_s, bool force) {
  if (!force && now_s - last_draw_s_ < options_.redraw_s) return;
  last_draw_s_ = now_s;
  // One column short of the width: a line that fills the last column wraps on some terminals,
  // and "\r" then redraws only its second row.
  const std::size_t width = std::max<std::size_t>(terminalWidth(), 2) - 1;
  const std::string line = status_.liveLine(now_s, width);
  std::size_t shown = 0;
  for (unsigned char c : line) shown += (c & 0xC0) != 0x80;
  const std::string pad = drawn_ > shown ? std::string(drawn_ - shown, ' ') : std::string();
  std::fprintf(options_.stream, "\r%s%s", line.c_str(), pad.c_str());
  if (!pad.empty()) std::fprintf(options_.stream, "\r%s", line.c_str());
  std::fflush(options_.stream);
  drawn_ = shown;
}

void TrainProgressPrinter::onEvent(const events::RunEvent& typed) {
  using Mode = TrainProgressOptions::Mode;
  if (options_.mode == Mode::Quiet) return;
  const double now_s = now();
  const auto shown = [](double value) { return std::isnan(value) ? 0.0 : value; };
  char buffer[512];
  if (const auto* started = std::get_if<events::RunStarted>(&typed)) {
    status_.onRunStarted(*started, now_s);
  } else if (const auto* step = std::get_if<events::Step>(&typed)) {
    status_.onStep(*step, now_s);
    if (options_.mode == Mode::Live) {
      redraw(now_s, false);
    } else if (now_s - last_plain_s_ >= options_.every_s) {
      last_plain_s_ = now_s;
      printLine(status_.plainLine(now_s));
    }
  } else if (const auto* end = std::get_if<events::EpochEnd>(&typed)) {
    status_.onEpochEnd(*end, now_s);
    std::snprintf(buffer, sizeof buffer, "epoch %lld/%lld  step %lld  loss_d %.4f  loss_g %.4f  %.1f s",
                  static_cast<long long>(end->epoch.value_or(0)), static_cast<long long>(end->epochs.value_or(0)),
                  static_cast<long long>(end->step.value_or(0)), shown(end->mean_loss_d), shown(end->mean_loss_g),
                  shown(end->seconds));
    printLine(buffer);
  } else if (const auto* warning = std::get_if<events::Warning>(&typed)) {
    printLine("warning: " + warning->message);
  } else if (const auto* restart = std::get_if<events::Restart>(&typed)) {
    printLine("restart " + std::to_string(restart->attempt.value_or(0)) + " of " +
              std::to_string(restart->max_restarts.value_or(0)) + ": continuing from step " +
              std::to_string(restart->step.value_or(0)) + "; the attempt before failed: " + restart->cause);
  } else if (std::holds_alternative<events::RunFinished>(typed)) {
    clear();
  }
}

}  // namespace streetgan::cli
