// The load test's progress on stderr: percent done and an estimate of the
// time left, one updating line on a terminal and a line every 10 s
// otherwise; and the run's notes (a server that cannot be sampled or
// reached), each on a line of its own that the progress line never
// overwrites.
#pragma once

#include <cstddef>
#include <string>

#include "loadtest/report.h"

namespace ninf::loadtest {

// What the run is to do, for how far it is.
struct Plan {
  int clients = 1;
  double interval = 0, probability = 1, duration = 0;
  int steps = 0;
};

// How far a run of `plan` is after `elapsed` seconds and `calls` calls: by
// time when it has a known end (its duration, or steps x interval), by calls
// in a closed loop of steps. At most 0.99: the end of the ticks is not the
// end of the run, whose last calls are still to come back. Pure.
double FractionDone(const Plan &plan, double elapsed, std::size_t calls);

class Progress {
 public:
  // `on`: show the progress line (--quiet: not); notes are always shown.
  Progress(bool on, const Plan &plan);
  void Count(const CallRow &row);
  // The progress line, at most every 0.5 s on a terminal, 10 s otherwise;
  // `last` prints the final figures and ends the line.
  void Show(double elapsed, bool last);
  // "ninf-loadtest: TEXT" on a line of its own.
  void Note(const std::string &text);
  // The run was stopped early: the last line says so, with the share of
  // the plan done rather than 100 %.
  void Stop() { stopped_ = true; }

 private:
  bool on_, tty_, open_ = false, stopped_ = false;
  Plan plan_;
  double shown_ = -1e9;
  std::size_t calls_ = 0, failed_ = 0;
  double work_ = 0;
};

}  // namespace ninf::loadtest
