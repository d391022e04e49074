#!/usr/bin/env python3
"""scripts/function_sizes.py on a hand-made C++ file: what it counts as a
function, its lines, and a class's member functions."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import function_sizes  # noqa: E402

SAMPLE = '''#include "x.h"
#define NOT_CODE(x) { x; }
namespace a::b {
namespace {
// a comment with { a brace
int Free(int x) {
  auto f = [](int y) {
    return y + 1;
  };
  return f(x) + sizeof("}");
}
}  // namespace

class Widget {
 public:
  Widget(int n) : n_{n}, m_(n) {
    n_ += 1;
  }
  ~Widget();
  Widget &operator=(const Widget &) = delete;
  bool operator<(const Widget &o) const { return n_ < o.n_; }
  int n() const { return n_; }
  void Set(int n);

 private:
  std::function<void(int)> callback_;
  int n_ = Free(1);
  int m_;
};

void Widget::Set(int n) {
  n_ = n;
}
}  // namespace a::b
'''


class FunctionSizesTest(unittest.TestCase):
    def setUp(self):
        self.functions, self.classes = function_sizes.scan(
            'x.cc', function_sizes.blank_out(SAMPLE))

    def test_functions_and_their_lines(self):
        found = {name: (lines, where) for lines, where, name in self.functions}
        # the lambda counts in Free; the init-list braces do not start a function
        self.assertEqual(found['Free'], (6, 'x.cc:6'))
        self.assertEqual(found['Widget'], (3, 'x.cc:16'))
        self.assertEqual(found['Widget::Set'], (3, 'x.cc:31'))
        self.assertEqual(sorted(found), ['Free', 'Widget', 'Widget::Set', 'n', 'operator<'])

    def test_member_functions_of_a_class(self):
        # constructor, destructor, operator=, operator<, n, Set; not the
        # std::function member nor the initialized data member
        self.assertEqual(self.classes, [(6, 'x.cc:14', 'Widget')])


if __name__ == '__main__':
    unittest.main()
