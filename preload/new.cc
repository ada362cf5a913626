/*
 * new.cc - the 20 replaceable C++ operator new/delete variants.
 *
 * Exported so that a program - or a C program that dlopens a C++ plugin -
 * cannot reach jemalloc's or libstdc++'s own operators around the shim
 * (Debian's libjemalloc exports all 20). The throwing forms run the
 * new_handler loop of [new.delete.single] and throw std::bad_alloc; the
 * nothrow forms run the same loop and answer nullptr instead of throwing, as
 * libstdc++ does since GCC 9. Only the failure loop is C++; the fast path is
 * the same inline code as malloc's.
 */
#include <cstddef>
#include <new>

extern "C" {
#include "internal.h"
#include "fastpath.h"
}

#define EXPORT __attribute__((visibility("default")))

namespace
{

inline size_t nonzero(size_t n)
{
	return n ? n : 1;
}

/* The new_handler loop, out of line: it is the failure path only. */
__attribute__((noinline, cold)) void *new_loop(gfp_entry entry, size_t size, size_t align,
						bool nothrow)
{
	for (;;) {
		std::new_handler handler = std::get_new_handler();
		if (!handler) {
			if (nothrow)
				return nullptr;
			throw std::bad_alloc();
		}
		if (nothrow) {
			try {
				handler();
			} catch (const std::bad_alloc &) {
				return nullptr;
			}
		} else {
			handler();
		}
		if (void *p = fastpath_alloc(entry, size, align ? MALLOCX_ALIGN(align) : 0, align))
			return p;
	}
}

inline void *new_impl(gfp_entry entry, size_t n, size_t align, bool nothrow)
{
	size_t size = nonzero(n);
	if (void *p = fastpath_alloc(entry, size, align ? MALLOCX_ALIGN(align) : 0, align))
		return p;
	return new_loop(entry, size, align, nothrow);
}

inline int align_flags(std::align_val_t al)
{
	return MALLOCX_ALIGN(static_cast<size_t>(al));
}

} // namespace

EXPORT void *operator new(size_t n)
{
	return new_impl(GFP_E_new, n, 0, false);
}

EXPORT void *operator new(size_t n, const std::nothrow_t &) noexcept
{
	return new_impl(GFP_E_new_nothrow, n, 0, true);
}

EXPORT void *operator new(size_t n, std::align_val_t al)
{
	return new_impl(GFP_E_new_align, n, static_cast<size_t>(al), false);
}

EXPORT void *operator new(size_t n, std::align_val_t al, const std::nothrow_t &) noexcept
{
	return new_impl(GFP_E_new_align_nothrow, n, static_cast<size_t>(al), true);
}

EXPORT void *operator new[](size_t n)
{
	return new_impl(GFP_E_new_array, n, 0, false);
}

EXPORT void *operator new[](size_t n, const std::nothrow_t &) noexcept
{
	return new_impl(GFP_E_new_array_nothrow, n, 0, true);
}

EXPORT void *operator new[](size_t n, std::align_val_t al)
{
	return new_impl(GFP_E_new_array_align, n, static_cast<size_t>(al), false);
}

EXPORT void *operator new[](size_t n, std::align_val_t al, const std::nothrow_t &) noexcept
{
	return new_impl(GFP_E_new_array_align_nothrow, n, static_cast<size_t>(al), true);
}

EXPORT void operator delete(void *p) noexcept
{
	fastpath_free(GFP_E_delete, p, 0, 0);
}

EXPORT void operator delete(void *p, size_t n) noexcept
{
	fastpath_free(GFP_E_delete_sized, p, n, 0);
}

EXPORT void operator delete(void *p, std::align_val_t al) noexcept
{
	fastpath_free(GFP_E_delete_align, p, 0, align_flags(al));
}

EXPORT void operator delete(void *p, size_t n, std::align_val_t al) noexcept
{
	fastpath_free(GFP_E_delete_sized_align, p, n, align_flags(al));
}

EXPORT void operator delete(void *p, const std::nothrow_t &) noexcept
{
	fastpath_free(GFP_E_delete_nothrow, p, 0, 0);
}

EXPORT void operator delete(void *p, std::align_val_t al, const std::nothrow_t &) noexcept
{
	fastpath_free(GFP_E_delete_align_nothrow, p, 0, align_flags(al));
}

EXPORT void operator delete[](void *p) noexcept
{
	fastpath_free(GFP_E_delete_array, p, 0, 0);
}

EXPORT void operator delete[](void *p, size_t n) noexcept
{
	fastpath_free(GFP_E_delete_array_sized, p, n, 0);
}

EXPORT void operator delete[](void *p, std::align_val_t al) noexcept
{
	fastpath_free(GFP_E_delete_array_align, p, 0, align_flags(al));
}

EXPORT void operator delete[](void *p, size_t n, std::align_val_t al) noexcept
{
	fastpath_free(GFP_E_delete_array_sized_align, p, n, align_flags(al));
}

EXPORT void operator delete[](void *p, const std::nothrow_t &) noexcept
{
	fastpath_free(GFP_E_delete_array_nothrow, p, 0, 0);
}

EXPORT void operator delete[](void *p, std::align_val_t al, const std::nothrow_t &) noexcept
{
	fastpath_free(GFP_E_delete_array_align_nothrow, p, 0, align_flags(al));
}
