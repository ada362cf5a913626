/*
 * unwind.c - backtraces for warnings: libunwind walks the stack, the ELF
 * symbol table names the functions (so static functions of the program are
 * named too), dladdr names the module.
 *
 * Only on the slow path, never with a shim lock held, always with the guard
 * raised: libunwind and dladdr may allocate or take the loader's lock, and
 * what they allocate must go straight to jemalloc.
 */
#define UNW_LOCAL_ONLY
#include <dlfcn.h>
#include <libunwind.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"

/* The shim's own module: frames inside it are not the caller's. */
static const char self_marker;

static const void *self_base(void)
{
	static const void *base;
	if (!base) {
		Dl_info info;
		if (dladdr(&self_marker, &info))
			base = info.dli_fbase;
	}
	return base;
}

static bool in_shim(uintptr_t ip)
{
	Dl_info info;
	return dladdr((void *)ip, &info) && info.dli_fbase == self_base();
}

/*
 * Naming a function maps the object's symbol table, which fails when memory
 * ran out for real (ulimit -v). So the shim keeps a little address space in
 * reserve, like PF_MEMALLOC's reserves, and lends it to the unwinder.
 */
#define RESERVE_BYTES (8u << 20)
static void *reserve;
static size_t reserve_len;
static int reserve_busy; /* atomic */

/* Maps as much of the reserve as fits, halving down to 256K. */
static void reserve_map(void)
{
	for (size_t len = RESERVE_BYTES; len >= (256u << 10); len /= 2) {
		void *p =
		    mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (p != MAP_FAILED) {
			reserve = p;
			reserve_len = len;
			return;
		}
	}
	reserve = NULL;
	reserve_len = 0;
}

void unwind_init(void)
{
	reserve_map();
}

static bool reserve_lend(void)
{
	if (__atomic_exchange_n(&reserve_busy, 1, __ATOMIC_ACQUIRE))
		return false;
	if (reserve)
		munmap(reserve, reserve_len);
	return true;
}

static void reserve_take_back(void)
{
	/* libunwind keeps some of what it mapped; take back what is free. */
	reserve_map();
	__atomic_store_n(&reserve_busy, 0, __ATOMIC_RELEASE);
}

static int capture(struct gfp_frame *frames, int max, bool from_signal);

int unwind_capture(struct gfp_frame *frames, int max)
{
	return capture(frames, max, false);
}

int unwind_capture_signal(struct gfp_frame *frames, int max)
{
	return capture(frames, max, true);
}

static int capture(struct gfp_frame *frames, int max, bool from_signal)
{
	unw_context_t uc;
	unw_cursor_t cursor;
	int n = 0;
	gfp_tls.guard++;
	bool lent = reserve_lend();
	if (unw_getcontext(&uc) == 0 && unw_init_local(&cursor, &uc) == 0) {
		bool outside = false;
		while (n < max && unw_step(&cursor) > 0) {
			unw_word_t ip, off = 0;
			if (unw_get_reg(&cursor, UNW_REG_IP, &ip) < 0 || ip == 0)
				break;
			/* Skip the shim's frames, but only the innermost ones; from
			 * a signal handler, everything up to the signal frame. */
			if (!outside && from_signal) {
				/* libunwind flags the interrupted frame itself. */
				if (unw_is_signal_frame(&cursor) <= 0)
					continue;
				outside = true;
			}
			if (!outside && in_shim(ip))
				continue;
			outside = true;
			struct gfp_frame *f = &frames[n++];
			memset(f, 0, sizeof(*f));
			f->ip = ip;
			if (unw_get_proc_name(&cursor, f->func, sizeof(f->func), &off) == 0)
				f->func_off = off;
			else
				f->func[0] = '\0';
			uintptr_t moff;
			const char *name = site_module(ip, &moff);
			if (name) {
				gfp_snprintf(f->module, sizeof(f->module), "%s",
				             *name ? name : "(main)");
				f->module_off = moff;
			}
		}
	}
	if (lent)
		reserve_take_back();
	gfp_tls.guard--;
	return n;
}

void unwind_format(struct gfp_buf *b, const struct gfp_frame *frames, int n)
{
	for (int i = 0; i < n; i++) {
		const struct gfp_frame *f = &frames[i];
		gfp_buf_printf(b, "\n  #%d ", i);
		if (f->func[0])
			gfp_buf_printf(b, "%s+%#lx", f->func, (unsigned long)f->func_off);
		else
			gfp_buf_printf(b, "%p", (void *)f->ip);
		if (f->module[0])
			gfp_buf_printf(b, " (%s+%#lx)", f->module, (unsigned long)f->module_off);
	}
}

/* The first named frame of the program, for "in FUNC" in one-line messages. */
const char *unwind_caller(const struct gfp_frame *frames, int n)
{
	for (int i = 0; i < n; i++)
		if (frames[i].func[0] && strcmp(frames[i].module, "libc.so.6") != 0)
			return frames[i].func;
	return n ? frames[0].func : "?";
}

bool unwind_any_frame(const struct gfp_frame *frames, int n, const char *glob, bool module)
{
	for (int i = 0; i < n; i++) {
		const char *s = module ? frames[i].module : frames[i].func;
		if (*s && glob_match(glob, s))
			return true;
	}
	return false;
}
