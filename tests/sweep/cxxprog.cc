/*
 * cxxprog - C++ frames for gfp-sweep and gfp-report to name: a member
 * function in a namespace that writes through what a failed malloc gave it
 * (a crash in inventory::Shelf::label), and a std::vector that grows inside
 * another (its allocation is inlined from the library's headers into
 * inventory::Shelf::stock; operator new's std::bad_alloc aborts). Built
 * optimised, with debug information, as C++ (cxx_names.sh, titles.sh); a
 * stripped copy has neither symbols nor lines (stripped_names.sh).
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace inventory {

class Shelf {
public:
	char *label(const char *name, int copies);
	void stock(int n);
	std::vector<int> counts;
};

__attribute__((noinline)) char *Shelf::label(const char *name, int copies)
{
	size_t n = std::strlen(name);
	char *p = static_cast<char *>(std::malloc(n + 16));
	p[0] = '['; /* SITE:label */
	std::memcpy(p + 1, name, n);
	std::snprintf(p + 1 + n, 15, "]x%d", copies);
	return p;
}

__attribute__((noinline)) void Shelf::stock(int n)
{
	for (int i = 0; i < n; i++)
		counts.push_back(i * i); /* SITE:stock */
}

} // namespace inventory

int main()
{
	inventory::Shelf shelf;
	shelf.stock(3); /* SITE:main_stock */
	char *l = shelf.label("apples", 3);
	std::printf("%s %zu\n", l, shelf.counts.size());
	std::free(l);
	return 0;
}
