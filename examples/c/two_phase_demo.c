/*
 * two_phase_demo.c - a two-phase call (docs/transactions.md): one process
 * submits a matrix product and exits with a ticket; another collects the
 * product later with the ticket and checks it.
 *
 *     two_phase_demo [-server host] [-port n] submit [n]   prints the ticket
 *     two_phase_demo collect TICKET [n]                    checks, prints VERIFIED
 *
 * The matrices come from a fixed seed, so the collecting process rebuilds
 * A and B (the argument list must be the same as at submission) and its own
 * local product to compare with. Exit status 0 on success; otherwise the
 * Ninf error code, with the error on stderr.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ninf.h"

static double *matrix(long n, unsigned seed) {
  double *m = malloc((size_t)(n * n) * sizeof *m);
  if (!m) return NULL;
  srand(seed);
  for (long i = 0; i < n * n; i++) m[i] = (double)rand() / RAND_MAX - 0.5;
  return m;
}

static int usage(void) {
  fprintf(stderr,
          "usage: two_phase_demo [-server host] [-port n] submit [n]\n"
          "       two_phase_demo collect TICKET [n]\n");
  return 2;
}

int main(int argc, char **argv) {
  argc = Ninf_parse_arg(argc, argv);
  if (argc < 2) return usage();
  const int submit = strcmp(argv[1], "submit") == 0;
  if (!submit && (strcmp(argv[1], "collect") != 0 || argc < 3)) return usage();
  const char *size = submit ? (argc > 2 ? argv[2] : NULL) : (argc > 3 ? argv[3] : NULL);
  const long n = size ? atol(size) : 200;
  if (n <= 0) return usage();
  double *a = matrix(n, 1), *b = matrix(n, 2), *c = calloc((size_t)(n * n), sizeof *c);
  if (!a || !b || !c) return 1;

  if (submit) {
    Ninf_ticket ticket;
    if (Ninf_call_submit(&ticket, "dmmul", n, a, b, c) != 0) {
      Ninf_perror("submit");
      return Ninf_get_error();
    }
    printf("%s\n", ticket.text); /* c is untouched: the product stays on the server */
    return 0;
  }

  Ninf_ticket ticket;
  snprintf(ticket.text, sizeof ticket.text, "%s", argv[2]);
  if (Ninf_call_collect(&ticket, "dmmul", n, a, b, c) != 0) {
    Ninf_perror("collect");
    return Ninf_get_error();
  }
  double worst = 0;
  for (long i = 0; i < n; i++)
    for (long j = 0; j < n; j++) {
      double s = 0;
      for (long k = 0; k < n; k++) s += a[i * n + k] * b[k * n + j];
      double d = fabs(s - c[i * n + j]);
      if (d > worst) worst = d;
    }
  printf("max |C - A*B| = %.3g: %s\n", worst, worst < 1e-9 * n ? "VERIFIED" : "WRONG");
  return worst < 1e-9 * n ? 0 : 1;
}
