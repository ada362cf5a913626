/*
 * plugin.cc - a C++ plugin for dlopen_plugin.c: plugin_run(n) makes n
 * std::strings too long for the small-string buffer (operator new for the
 * object and for its characters), n int arrays (operator new[]) and frees
 * them all. Whichever operators it binds to are the ones a C program that
 * dlopens C++ code would reach.
 */
#include <dlfcn.h>

#include <cstddef>
#include <string>

#define EXPORT extern "C" __attribute__((visibility("default")))

namespace
{

/* Where the compiler cannot follow: no new/delete pair is elided. */
void *volatile sink;

template <typename T> T *escape(T *p)
{
	sink = p;
	return static_cast<T *>(sink);
}

} // namespace

/* Returns how many of the n rounds saw the memory they wrote: n if all. */
EXPORT int plugin_run(int n)
{
	int good = 0;
	for (int i = 0; i < n; i++) {
		std::size_t len = 40 + static_cast<std::size_t>(i % 50);
		char ch = static_cast<char>('a' + i % 26);
		std::string *s = escape(new std::string(len, ch));
		int *a = escape(new int[16 + i % 8]);
		a[0] = i;
		a[15] = -i;
		if (s->size() == len && (*s)[len - 1] == ch && a[0] + a[15] == 0)
			good++;
		delete[] a;
		delete s;
	}
	return good;
}

/* The file that defines the operator new this plugin calls. */
EXPORT const char *plugin_new_owner(void)
{
	void *(*op)(std::size_t) = &::operator new;
	Dl_info info;
	if (!dladdr(reinterpret_cast<void *>(op), &info) || !info.dli_fname)
		return "(unknown)";
	return info.dli_fname;
}
