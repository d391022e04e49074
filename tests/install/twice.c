/* The routine of twice.idl. */
void twice(int n, const double *x, double *y) {
  for (int i = 0; i < n; i++) y[i] = 2 * x[i];
}
