#include "loadtest/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace ninf::loadtest {

double FractionDone(const Plan &p, double elapsed, std::size_t calls) {
  double end = p.duration;
  if (p.steps > 0 && p.interval > 0)
    end = end > 0 ? std::min(end, p.steps * p.interval) : p.steps * p.interval;
  double f = 0;
  if (end > 0)
    f = elapsed / end;
  else if (p.steps > 0)  // a closed loop of steps: expected calls
    f = static_cast<double>(calls) / std::max(1.0, p.clients * p.steps * p.probability);
  return std::clamp(f, 0.0, 0.99);
}

Progress::Progress(bool on, const Plan &plan) : on_(on), tty_(::isatty(2) != 0), plan_(plan) {}

void Progress::Count(const CallRow &row) {
  ++calls_;
  if (row.outcome != "ok")
    ++failed_;
  else
    work_ += row.flops;
}

void Progress::Show(double elapsed, bool last) {
  if (!on_) return;
  if (!last && elapsed - shown_ < (tty_ ? 0.5 : 10.0)) return;
  shown_ = elapsed;
  const double f = last && !stopped_ ? 1.0 : FractionDone(plan_, elapsed, calls_);
  char eta[48] = "";
  if (!last && f > 0.01) {
    const double left = elapsed * (1 - f) / f;
    if (left < 120)
      std::snprintf(eta, sizeof eta, ", ETA %.0f s", left);
    else
      std::snprintf(eta, sizeof eta, ", ETA %.0f min", left / 60);
  }
  // On a terminal the line is rewritten in place (\r, then erase to its end).
  std::fprintf(stderr, "%sloadtest: %3.0f%% %6.1f s%s, %zu calls (%zu failed), %.2f GF/s%s%s",
               tty_ ? "\r" : "", 100 * f, elapsed, eta, calls_, failed_,
               elapsed > 0 ? work_ / elapsed / 1e9 : 0.0, last && stopped_ ? ", interrupted" : "",
               tty_ ? "\033[K" : "");
  open_ = tty_ && !last;
  if (!open_) std::fputc('\n', stderr);
}

void Progress::Note(const std::string &text) {
  if (open_) std::fputc('\n', stderr);
  open_ = false;
  shown_ = -1e9;  // the progress line comes back below the note at once
  std::fprintf(stderr, "ninf-loadtest: %s\n", text.c_str());
}

}  // namespace ninf::loadtest
