/*
 * Walks every entry point of src/entries.def. A new entry without a
 * walker here fails to compile: the switch needs walk_<id>.
 */
#include <cstdlib>
#include <cstring>
#include <malloc.h>
#include <new>
#include <sys/mman.h>
#include <unistd.h>

#include "gfpshim.h"

namespace
{
void *(*volatile vmalloc)(size_t) = malloc;
int sink;

void touch(void *p)
{
	if (!p)
		std::abort();
	sink += *static_cast<volatile char *>(p);
}

struct alignas(64) Wide {
	char c[64];
};

void walk_malloc() { void *p = vmalloc(10); touch(p); free(p); }
void walk_calloc() { void *p = calloc(2, 10); touch(p); free(p); }
void walk_realloc() { void *p = realloc(nullptr, 10); touch(p); free(realloc(p, 100)); }
void walk_reallocarray() { void *p = reallocarray(nullptr, 2, 10); touch(p); free(p); }
void walk_posix_memalign() { void *p; if (posix_memalign(&p, 64, 10)) std::abort(); touch(p); free(p); }
void walk_aligned_alloc() { void *p = aligned_alloc(64, 64); touch(p); free(p); }
void walk_memalign() { void *p = memalign(64, 10); touch(p); free(p); }
void walk_valloc() { void *p = valloc(10); touch(p); free(p); }
void walk_pvalloc() { void *p = pvalloc(10); touch(p); free(p); }
void walk_free() { free(vmalloc(1)); }
void walk_malloc_usable_size() { void *p = vmalloc(10); sink += (int)malloc_usable_size(p); free(p); }
void walk_new() { void *p = ::operator new(10); touch(p); ::operator delete(p); }
void walk_new_nothrow() { void *p = ::operator new(10, std::nothrow); touch(p); ::operator delete(p); }
void walk_new_align() { void *p = ::operator new(10, std::align_val_t(64)); touch(p); ::operator delete(p, std::align_val_t(64)); }
void walk_new_align_nothrow() { void *p = ::operator new(10, std::align_val_t(64), std::nothrow); touch(p); ::operator delete(p, std::align_val_t(64)); }
void walk_new_array() { void *p = ::operator new[](10); touch(p); ::operator delete[](p); }
void walk_new_array_nothrow() { void *p = ::operator new[](10, std::nothrow); touch(p); ::operator delete[](p); }
void walk_new_array_align() { void *p = ::operator new[](10, std::align_val_t(64)); touch(p); ::operator delete[](p, std::align_val_t(64)); }
void walk_new_array_align_nothrow() { void *p = ::operator new[](10, std::align_val_t(64), std::nothrow); touch(p); ::operator delete[](p, std::align_val_t(64)); }
void walk_delete() { ::operator delete(::operator new(10)); }
void walk_delete_sized() { ::operator delete(::operator new(10), 10); }
void walk_delete_align() { ::operator delete(::operator new(10, std::align_val_t(64)), std::align_val_t(64)); }
void walk_delete_sized_align() { ::operator delete(::operator new(64, std::align_val_t(64)), 64, std::align_val_t(64)); }
void walk_delete_nothrow() { ::operator delete(::operator new(10), std::nothrow); }
void walk_delete_align_nothrow() { ::operator delete(::operator new(10, std::align_val_t(64)), std::align_val_t(64), std::nothrow); }
void walk_delete_array() { ::operator delete[](::operator new[](10)); }
void walk_delete_array_sized() { ::operator delete[](::operator new[](10), 10); }
void walk_delete_array_align() { ::operator delete[](::operator new[](10, std::align_val_t(64)), std::align_val_t(64)); }
void walk_delete_array_sized_align() { ::operator delete[](::operator new[](64, std::align_val_t(64)), 64, std::align_val_t(64)); }
void walk_delete_array_nothrow() { ::operator delete[](::operator new[](10), std::nothrow); }
void walk_delete_array_align_nothrow() { ::operator delete[](::operator new[](10, std::align_val_t(64)), std::align_val_t(64), std::nothrow); }
void walk_gfp_malloc() { void *p = gfp_malloc(10, GFP_KERNEL); touch(p); free(p); }
void walk_gfp_calloc() { void *p = gfp_calloc(2, 10, GFP_NOFS); touch(p); free(p); }
void walk_gfp_realloc() { void *p = gfp_realloc(nullptr, 10, GFP_KERNEL); touch(p); free(gfp_realloc(p, 100, GFP_NOIO)); }
void walk_gfp_aligned_alloc() { void *p = gfp_aligned_alloc(64, 10, GFP_KERNEL); touch(p); free(p); }
void walk_gfp_reserve() { if (gfp_reserve(4096, GFP_KERNEL) == 0) gfp_unreserve(); }
// The mapping calls count the program's anonymous private mappings.
const int RW = PROT_READ | PROT_WRITE, ANON = MAP_PRIVATE | MAP_ANONYMOUS;
void *map(size_t n, int prot) { void *p = mmap(nullptr, n, prot, ANON, -1, 0); if (p == MAP_FAILED) std::abort(); return p; }
void walk_mmap() { munmap(map(4096, RW), 4096); }
void walk_mremap() { void *p = mremap(map(4096, RW), 4096, 8192, MREMAP_MAYMOVE); if (p == MAP_FAILED) std::abort(); munmap(p, 8192); }
void walk_mprotect() { void *p = map(4096, PROT_NONE); if (mprotect(p, 4096, RW)) std::abort(); munmap(p, 4096); }
void walk_munmap() { if (munmap(map(4096, RW), 4096)) std::abort(); }
void walk_brk() { void *b = sbrk(0); if (brk(static_cast<char *>(b) + 4096) || brk(b)) std::abort(); }
void walk_sbrk() { if (sbrk(4096) == reinterpret_cast<void *>(-1) || sbrk(-4096) == reinterpret_cast<void *>(-1)) std::abort(); }
} // namespace

/* walk_entries [ROUNDS]: the walk ROUNDS times (default 1), so that every
 * site is also met again after others, as the routes' caches see it. */
int main(int argc, char **argv)
{
	int rounds = argc > 1 ? std::atoi(argv[1]) : 1;
	enum {
#define ENTRY(id, name, kind) E_##id,
#include "entries.def"
#undef ENTRY
		E_COUNT
	};
	for (int e = 0; e < E_COUNT * rounds; e++) {
		switch (e % E_COUNT) {
#define ENTRY(id, name, kind)                                                                      \
	case E_##id:                                                                               \
		walk_##id();                                                                       \
		break;
#include "entries.def"
#undef ENTRY
		}
	}
	Wide *w = new Wide[3];
	delete[] w;
	return sink == 12345678;
}
