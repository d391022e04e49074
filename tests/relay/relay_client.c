/*
 * relay_client.c - the relay test's client: one echo call of N doubles
 * (a[i] = i, checked when it comes back) on the server in NINF_SERVER
 * (name@relayhost:port in the test), or a null call with N = 0.
 *
 *     relay_client N
 *
 * Prints "ok" and exits 0, or prints the library's error and exits 1.
 */
#include <stdio.h>
#include <stdlib.h>

#include "client/ninf.h"

int main(int argc, char **argv) {
  argc = Ninf_parse_arg(argc, argv);
  if (argc != 2) {
    fprintf(stderr, "usage: %s N\n", argv[0]);
    return 2;
  }
  long n = strtol(argv[1], NULL, 10);
  if (n == 0) {
    if (Ninf_call("null") != 0) {
      Ninf_perror("relay_client: null");
      return 1;
    }
    puts("ok");
    return 0;
  }
  double *a = malloc((size_t)n * sizeof *a);
  if (a == NULL) return 1;
  for (long i = 0; i < n; i++) a[i] = (double)i;
  if (Ninf_call("echo", n, a) != 0) {
    Ninf_perror("relay_client: echo");
    free(a);
    return 1;
  }
  for (long i = 0; i < n; i++) {
    if (a[i] != (double)i) {
      fprintf(stderr, "relay_client: echo changed a[%ld]\n", i);
      free(a);
      return 1;
    }
  }
  free(a);
  puts("ok");
  return 0;
}
