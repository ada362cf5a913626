#include <stdio.h>

long early_join(void);

int main(void)
{
	printf("%ld\n", early_join());
	return 0;
}
