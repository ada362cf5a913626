/* Prints "main" from main: a configuration error must stop the process
 * before this line. */
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
	char *p = malloc(10);
	printf("main\n");
	free(p);
	return 0;
}
