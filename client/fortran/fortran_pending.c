/* fortran_pending.c - the table of asynchronous calls with temporaries: a
 * short list under a mutex (a program has few calls in flight at once). */
#include "client/fortran/fortran_pending.h"

#include <pthread.h>
#include <stdlib.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static fortran_call *head;
static int length;

void fortran_pending_add(int id, fortran_call *call) {
  call->id = id;
  pthread_mutex_lock(&lock);
  call->next = head;
  head = call;
  length++;
  pthread_mutex_unlock(&lock);
}

fortran_call *fortran_pending_take(int id) {
  fortran_call *found = NULL;
  pthread_mutex_lock(&lock);
  for (fortran_call **link = &head; *link; link = &(*link)->next) {
    if ((*link)->id != id) continue;
    found = *link;
    *link = found->next;
    found->next = NULL;
    length--;
    break;
  }
  pthread_mutex_unlock(&lock);
  return found;
}

int *fortran_pending_ids(int *count) {
  int *ids = NULL;
  *count = 0;
  pthread_mutex_lock(&lock);
  if (length > 0 && (ids = malloc((size_t)length * sizeof *ids)) != NULL) {
    for (fortran_call *c = head; c; c = c->next) ids[(*count)++] = c->id;
  }
  pthread_mutex_unlock(&lock);
  return ids;
}
