/*
 * cxx_new.cc - the C++ entry points of the shim, as real new/delete
 * expressions use them: aligned new for over-aligned types and explicit
 * std::align_val_t, the sized and aligned deletes the compiler picks, the
 * std::new_handler loop on failure, and the nothrow forms.
 *
 * Run under LD_PRELOAD=libgfpshim.so (cxx_new.sh). Exits 0 only if every
 * check holds, printing each failed one. On stdout it prints "expect ENTRY N"
 * lines: the shell checks that the shim's GFP_REPORT counts at least N calls
 * of each ENTRY, which shows the calls reached the shim's operators.
 */
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <new>

#include "gfpshim.h"

namespace
{

int failed;

void check(bool ok, const char *what, int line)
{
	if (!ok) {
		std::fprintf(stderr, "FAIL (cxx_new.cc:%d): %s\n", line, what);
		failed++;
	}
}

#define CHECK(cond) check((cond), #cond, __LINE__)

bool is_aligned(const void *p, std::size_t align)
{
	return reinterpret_cast<std::uintptr_t>(p) % align == 0;
}

/*
 * 2^62 bytes: no machine can map that, whatever its overcommit setting
 * (2^46 would fit in a 47-bit address space with vm.overcommit_memory=1).
 * Volatile, so that the compiler sees neither the size nor, through `sink`,
 * an unused allocation it could remove.
 */
volatile std::size_t huge = std::size_t(1) << 62;
void *volatile sink;

/* How many calls of each entry this program makes, at least; printed at the
 * end for the shell to compare with the report. */
struct expectation {
	const char *entry;
	int calls;
} expected[32];

void expect(const char *entry, int n)
{
	for (expectation &e : expected) {
		if (!e.entry)
			e.entry = entry;
		if (e.entry == entry || std::strcmp(e.entry, entry) == 0) {
			e.calls += n;
			return;
		}
	}
	check(false, "expected[] is too small", __LINE__);
}

/* Passes a pointer where the compiler cannot follow it. A new-expression
 * may be elided ([expr.new]): GCC drops new/delete pairs whose memory is not
 * otherwise used, and clang even a failing nothrow new whose result is only
 * compared with nullptr, folding the comparison to false. */
template <typename T> T *escape(T *p)
{
	sink = p;
	return static_cast<T *>(sink);
}

struct alignas(256) Big {
	unsigned char bytes[300];
	static int live;
	Big()
	{
		live++;
	}
	~Big() /* not trivial: new[] keeps a cookie, delete[] is the sized one */
	{
		live--;
	}
};
int Big::live;

struct Small {
	long a, b;
};

void test_aligned()
{
	/* Explicit alignment through the placement form of a new-expression. */
	char *c = escape(new (std::align_val_t(64)) char[100]);
	CHECK(is_aligned(c, 64));
	c[0] = c[99] = 'x';
	::operator delete[](c, std::align_val_t(64));
	expect("operator new[](align)", 1);
	expect("operator delete[](align)", 1);

	/* The operators themselves, with a larger alignment. */
	void *p = escape(::operator new(1000, std::align_val_t(4096)));
	CHECK(is_aligned(p, 4096));
	::operator delete(p, std::align_val_t(4096));
	p = escape(::operator new(1000, std::align_val_t(128)));
	CHECK(is_aligned(p, 128));
	::operator delete(p, 1000, std::align_val_t(128));

	/* An over-aligned type: the compiler passes its alignment and size. */
	Big *b = escape(new Big);
	CHECK(is_aligned(b, 256));
	CHECK(Big::live == 1);
	delete b;
	CHECK(Big::live == 0);
	expect("operator new(align)", 3);
	expect("operator delete(align)", 1);
	expect("operator delete(sized, align)", 2);

	Big *arr = escape(new Big[5]);
	CHECK(Big::live == 5);
	for (int i = 0; i < 5; i++)
		CHECK(is_aligned(&arr[i], 256));
	delete[] arr;
	CHECK(Big::live == 0);
	expect("operator new[](align)", 1);
	expect("operator delete[](sized, align)", 1);
}

void test_sized()
{
	/* -fsized-deallocation is on from C++14: delete of a complete type
	 * passes the size. */
	for (int i = 0; i < 10; i++) {
		Small *s = escape(new Small{i, -i});
		CHECK(s->a == i);
		delete s;
	}
	expect("operator new", 10);
	expect("operator delete(sized)", 10);

	Small *v = escape(new Small[7]);
	v[6].b = 6;
	delete[] v;
	expect("operator new[]", 1);
	expect("operator delete[]", 1);

	void *p = escape(::operator new[](333));
	::operator delete[](p, 333);
	expect("operator new[]", 1);
	expect("operator delete[](sized)", 1);
}

/* The handler of [new.delete.single]: frees the reserve the first time and
 * uninstalls itself, so the retry after it finds no handler and throws. */
char *reserve;
int handler_calls;

void release_reserve()
{
	handler_calls++;
	delete[] reserve;
	reserve = nullptr;
	std::set_new_handler(nullptr);
}

void throwing_handler()
{
	handler_calls++;
	throw std::bad_alloc();
}

void test_new_handler()
{
	reserve = escape(new char[1 << 20]);
	handler_calls = 0;
	std::set_new_handler(release_reserve);
	bool caught = false;
	try {
		sink = new char[huge];
	} catch (const std::bad_alloc &) {
		caught = true;
	}
	CHECK(caught);
	CHECK(handler_calls == 1);
	CHECK(reserve == nullptr);
	CHECK(std::get_new_handler() == nullptr);

	/* The same for plain and aligned operator new, with no handler. */
	caught = false;
	try {
		sink = ::operator new(huge);
	} catch (const std::bad_alloc &) {
		caught = true;
	}
	CHECK(caught);
	caught = false;
	try {
		sink = ::operator new(huge, std::align_val_t(64));
	} catch (const std::bad_alloc &) {
		caught = true;
	}
	CHECK(caught);
	CHECK(handler_calls == 1);
	expect("operator new[]", 2);
	expect("operator delete[]", 1);
	expect("operator new", 1);
	expect("operator new(align)", 1);
}

void test_nothrow()
{
	/* No handler: nullptr, no exception. */
	std::set_new_handler(nullptr);
	char *c = escape(new (std::nothrow) char[huge]);
	CHECK(c == nullptr);
	void *p = escape(::operator new(huge, std::nothrow));
	CHECK(p == nullptr);
	p = escape(::operator new(huge, std::align_val_t(64), std::nothrow));
	CHECK(p == nullptr);
	p = escape(::operator new[](huge, std::align_val_t(64), std::nothrow));
	CHECK(p == nullptr);

	/* A handler that throws bad_alloc: the nothrow form still returns
	 * nullptr, after the handler ran once. */
	handler_calls = 0;
	std::set_new_handler(throwing_handler);
	bool escaped = false;
	try {
		c = escape(new (std::nothrow) char[huge]);
	} catch (...) {
		escaped = true;
	}
	CHECK(!escaped);
	CHECK(c == nullptr);
	CHECK(handler_calls == 1);
	std::set_new_handler(nullptr);

	/* And nothrow forms that succeed are ordinary memory. */
	c = escape(new (std::nothrow) char[64]);
	CHECK(c != nullptr);
	if (c)
		c[63] = 1;
	delete[] c;
	Small *s = escape(new (std::nothrow) Small{1, 2});
	CHECK(s != nullptr && s->b == 2);
	delete s;
	expect("operator new[](nothrow)", 3);
	expect("operator new(nothrow)", 2);
	expect("operator new(align, nothrow)", 1);
	expect("operator new[](align, nothrow)", 1);
	expect("operator delete[]", 1);
	expect("operator delete(sized)", 1);
}

} // namespace

int main()
{
	if (!gfp_active()) {
		std::fprintf(stderr, "FAIL: libgfpshim.so is not loaded (run under LD_PRELOAD)\n");
		return 1;
	}
	test_aligned();
	test_sized();
	test_new_handler();
	test_nothrow();
	/* Calls that failed: new[] (whose retry after the handler fails too),
	 * new, new(align), the four nothrow forms without a handler and the
	 * one with the throwing handler. Each counts at least once. */
	std::printf("expect failures %d\n", 1 + 1 + 1 + 4 + 1);
	for (const expectation &e : expected)
		if (e.entry)
			std::printf("expect %s %d\n", e.entry, e.calls);
	if (failed) {
		std::fprintf(stderr, "%d check(s) failed\n", failed);
		return 1;
	}
	std::printf("all checks passed\n");
	return 0;
}
