/* Included by macros.idl through -I inc. */
#define ROWS(n) ((n) + PAD)
