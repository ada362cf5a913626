/*
 * startprog - prints what startlib's constructor made before main, then
 * makes one checked allocation of its own (a failure there is handled).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char *startlib_greeting;

int main(void)
{
	char *copy = malloc(strlen(startlib_greeting) + 1);
	if (!copy) {
		fputs("startprog: out of memory\n", stderr);
		return 1;
	}
	strcpy(copy, startlib_greeting);
	puts(copy);
	free(copy);
	return 0;
}
