/*
 * inj_cxx - C++ allocation under fault injection.
 *
 *   inj_cxx ops TOKENS   one character per token:
 *     t  new char[100]: '.' or 'B' (std::bad_alloc caught)
 *     a  new of a 64-byte aligned type: '.' or 'B'
 *     n  new (std::nothrow) char[100]: '.' or 'N' (nullptr)
 *     h  install a new_handler that counts its calls and returns (retry)
 *     u  install a new_handler that counts, then uninstalls itself
 *     -  no new_handler
 *   prints "main RESULTS handler=CALLS"
 *
 *   inj_cxx work         strings, vectors and a map (a few hundred
 *   requests); prints "done CHECKSUM" and exits 0, or catches
 *   std::bad_alloc in main, prints "caught std::bad_alloc" and exits 3.
 *
 * Output goes through write(2): stdio's buffer would be one more request.
 */
#include <cstdio>
#include <cstring>
#include <map>
#include <new>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

int handler_calls;
void *volatile sink;

struct alignas(64) wide {
	char bytes[64];
};

void counting_handler()
{
	handler_calls++;
}

void once_handler()
{
	handler_calls++;
	std::set_new_handler(nullptr);
}

void say(const char *s)
{
	size_t n = std::strlen(s);

	while (n > 0) {
		ssize_t w = write(1, s, n);
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

int ops(const char *tokens)
{
	static char res[4096];
	size_t n = 0;

	for (const char *t = tokens; *t && n < sizeof(res) - 1; t++) {
		switch (*t) {
		case 't':
			try {
				char *p = new char[100];
				sink = p;
				delete[] p;
				res[n++] = '.';
			} catch (const std::bad_alloc &) {
				res[n++] = 'B';
			}
			break;
		case 'a':
			try {
				wide *p = new wide;
				sink = p;
				delete p;
				res[n++] = '.';
			} catch (const std::bad_alloc &) {
				res[n++] = 'B';
			}
			break;
		case 'n': {
			char *p = new (std::nothrow) char[100];
			sink = p;
			res[n++] = p != nullptr ? '.' : 'N';
			delete[] p;
			break;
		}
		case 'h': std::set_new_handler(counting_handler); break;
		case 'u': std::set_new_handler(once_handler); break;
		case '-': std::set_new_handler(nullptr); break;
		default: say("inj_cxx: unknown token\n"); return 2;
		}
	}
	char line[4200];
	std::snprintf(line, sizeof(line), "main %.*s handler=%d\n", (int)n, res, handler_calls);
	say(line);
	return 0;
}

unsigned long work()
{
	std::vector<std::string> names;
	std::map<int, std::string> index;
	unsigned long sum = 0;

	for (int i = 0; i < 60; i++) {
		std::string s = "a name long enough to leave the small-string buffer #" +
				std::to_string(i);
		names.push_back(s);
		index[i * 7 % 61] = s + s;
	}
	for (const auto &kv : index)
		sum = sum * 31 + kv.second.size() + (unsigned long)kv.first;
	std::vector<std::vector<int>> grid(20, std::vector<int>(50, 1));
	for (const auto &row : grid)
		for (int v : row)
			sum += (unsigned long)v;
	return sum + names.size();
}

} // namespace

int main(int argc, char **argv)
{
	if (argc == 3 && std::strcmp(argv[1], "ops") == 0)
		return ops(argv[2]);
	if (argc == 2 && std::strcmp(argv[1], "work") == 0) {
		char line[64];
		try {
			unsigned long sum = work();
			std::snprintf(line, sizeof(line), "done %lu\n", sum);
			say(line);
			return 0;
		} catch (const std::bad_alloc &) {
			say("caught std::bad_alloc\n");
			return 3;
		}
	}
	say("usage: inj_cxx ops TOKENS | inj_cxx work\n");
	return 2;
}
