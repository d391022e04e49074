/*
 * build_tree_client.c - a client built against the build tree the way
 * README says (build/tools/ninfcc), by build_tree_client.sh. It needs no
 * server: it proves that ninf.h compiles as a user includes it and that
 * libninf links and loads, through calls that answer without a connection.
 */
#include <ninf.h>
#include <stdio.h>
#include <string.h>

int main(void) {
  /* A bad -port is refused before anything is changed (ninf.h). */
  char arg0[] = "client", flag[] = "-port", value[] = "notaport";
  char *argv[] = {arg0, flag, value, NULL};
  if (Ninf_parse_arg(3, argv) != -1 || Ninf_get_error() != NINF_ERR_INVALID_ARGUMENT) {
    fprintf(stderr, "Ninf_parse_arg accepted -port notaport\n");
    return 1;
  }
  const char *text = Ninf_error_string(NINF_ERR_CONNECT);
  if (text == NULL || strcmp(text, "cannot connect to the server") != 0) {
    fprintf(stderr, "Ninf_error_string(NINF_ERR_CONNECT) = %s\n", text ? text : "(null)");
    return 1;
  }
  printf("linked: %s\n", text);
  return 0;
}
