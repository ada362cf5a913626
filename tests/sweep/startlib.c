/*
 * startlib - a library whose constructor trusts malloc: it writes through
 * the pointer before main without a check (startprog links it), the bug a
 * start-up sweep finds.
 */
#include <stdlib.h>
#include <string.h>

__attribute__((visibility("default"))) char *startlib_greeting;

__attribute__((constructor)) static void startlib_init(void)
{
	startlib_greeting = malloc(32);
	strcpy(startlib_greeting, "hello from startlib");
}
