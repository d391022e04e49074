/*
 * client.c - the install test's client (install_test.sh), built with the
 * installed ninfcc and with the installed ninf.pc.
 *
 *     client dgesv    solves a 3x3 system remotely and checks x = (1, 2, 3)
 *     client twice    calls the routine ninf-gen --install registered
 *     client typed    the same dgesv through the installed typed header
 */
#include <math.h>
#include <ninf.h>
#include <ninf_lapack.h>
#include <stdio.h>
#include <string.h>

static int check_dgesv(int typed) {
  /* Column-major A, and b = A * (1, 2, 3). */
  double a[9] = {4, 1, 2, 1, 5, 1, 2, 1, 6};
  double b[3] = {4 + 2 + 6, 1 + 10 + 3, 2 + 2 + 18};
  int ipiv[3], info = -1;
  int status = typed ? ninf_dgesv(3, 1, a, 3, ipiv, b, 3, &info)
                     : Ninf_call("dgesv", 3, 1, a, 3, ipiv, b, 3, &info);
  if (status != 0) return Ninf_perror("dgesv"), 1;
  for (int i = 0; i < 3; i++)
    if (info != 0 || fabs(b[i] - (i + 1)) > 1e-12) {
      fprintf(stderr, "dgesv: info %d, x[%d] = %g\n", info, i, b[i]);
      return 1;
    }
  return 0;
}

static int check_twice(void) {
  double x[4] = {1, 2, 3, 4.5}, y[4] = {0};
  if (Ninf_call("twice", 4, x, y) != 0) return Ninf_perror("twice"), 1;
  for (int i = 0; i < 4; i++)
    if (y[i] != 2 * x[i]) {
      fprintf(stderr, "twice: y[%d] = %g\n", i, y[i]);
      return 1;
    }
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "dgesv") == 0) return check_dgesv(0);
  if (argc == 2 && strcmp(argv[1], "typed") == 0) return check_dgesv(1);
  if (argc == 2 && strcmp(argv[1], "twice") == 0) return check_twice();
  fprintf(stderr, "usage: %s dgesv|typed|twice\n", argv[0]);
  return 2;
}
