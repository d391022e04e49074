/* bench_blocks.c - what the transaction-block benchmarks share (bench_util.h). */
#include <stdio.h>
#include <string.h>

#include "bench/bench_util.h"
#include "client/ninf.h"

void bench_block_servers(char *out, size_t size) {
  enum { kMaxServers = 64 };
  char names[kMaxServers][256];
  int counts[kMaxServers] = {0}, used = 0;
  for (int i = 0; i < Ninf_transaction_calls(); i++) {
    Ninf_call_info info;
    if (Ninf_transaction_call_info(i, &info) != 0) continue;
    int j = 0;
    while (j < used && strcmp(names[j], info.server) != 0) j++;
    if (j == used && used < kMaxServers)
      snprintf(names[used++], sizeof names[0], "%s", info.server);
    if (j < used) counts[j]++;
  }
  out[0] = '\0';
  for (int j = 0; j < used; j++) {
    size_t len = strlen(out);
    snprintf(out + len, size - len, "%s%s:%d", j ? "," : "", names[j], counts[j]);
  }
}
