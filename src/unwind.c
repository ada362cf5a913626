/*
 * unwind.c - backtraces for warnings: libunwind walks the stack, the ELF
 * symbol tables name the functions (so static functions of the program are
 * named too), site.c's _dl_find_object names the module.
 *
 * A frame is named only by a function symbol whose size covers its address;
 * otherwise it has no name and reads as module+offset. libunwind's own
 * unw_get_proc_name is not used: up to 1.6 (Debian 12) it returns the
 * nearest earlier symbol whatever its size, so a static function of a
 * stripped object took the name of whatever exported function preceded it.
 *
 * Only on the slow path, never with a shim lock held, always with the guard
 * raised: libunwind and dl_iterate_phdr may allocate or take the loader's
 * lock, and what they allocate must go straight to jemalloc. The symbol tables are
 * read with open and mmap only, in address space kept for them
 * (unwind_reserve.c).
 */
#define UNW_LOCAL_ONLY
#include <dlfcn.h>
#include <fcntl.h>
#include <libunwind.h>
#include <link.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "glob.h"
#include "thread.h"
#include "unwind.h"
#include "unwind_gate.h"
#include "unwind_mem.h"
#include "unwind_reserve.h"
#include "site.h"
#include "sys.h"

static void name_slots_map(void);

/* What must be there before memory runs short: address space to map the
 * symbol tables in, and the table of names. */
void unwind_init(void)
{
	unwind_reserve_init();
	name_slots_map();
}

/* ------------------------------------------------------------------------
 * Function names from the ELF symbol tables
 * ---------------------------------------------------------------------- */

struct window {
	void *map;
	size_t len;
	bool reserved; /* in the reserve (unwind_reserve.c) */
};

/* Maps bytes [off, off + len) of the file read-only, in the reserve when
 * this naming holds it; NULL unless all of them lie in the file (a
 * mapping past its end would fault on access). */
static const void *window_map(int fd, uint64_t fsize, uint64_t off, uint64_t len, struct window *w)
{
	w->map = NULL;
	if (len == 0 || off > fsize || len > fsize - off)
		return NULL;
	uint64_t page = (uint64_t)getpagesize();
	uint64_t start = off & ~(page - 1);
	size_t span = (size_t)((off + len - start + page - 1) & ~(page - 1));
	void *p = unwind_reserve_map(span, fd, (off_t)start);
	w->reserved = p != NULL;
	if (!p)
		p = sys_mmap(NULL, span, PROT_READ, MAP_PRIVATE, fd, (off_t)start);
	if (p == MAP_FAILED)
		return NULL;
	w->map = p;
	w->len = span;
	return (const char *)p + (off - start);
}

static void window_unmap(struct window *w)
{
	if (w->map && w->reserved)
		unwind_reserve_unmap(w->map, w->len);
	else if (w->map)
		sys_munmap(w->map, w->len);
	w->map = NULL;
}

/* The best symbol found so far: the innermost function that holds the
 * address, the first one seen among symbols at the same address. */
struct sym_best {
	uint64_t addr; /* in the file's own addresses */
	bool found;
	uint64_t value;
	char *name;
	size_t size; /* of name */
};

/* Whether a symbol is a function that holds the address: a sizeless one
 * only at its own address (as glibc's dladdr rules). */
static bool sym_holds(const ElfW(Sym) * sym, uint64_t addr)
{
	if (ELF64_ST_TYPE(sym->st_info) != STT_FUNC || sym->st_shndx == SHN_UNDEF ||
	    sym->st_shndx == SHN_ABS || addr < sym->st_value)
		return false;
	return sym->st_size ? addr - sym->st_value < sym->st_size : addr == sym->st_value;
}

/* Scans one symbol table (its section header `sh`, its string table
 * `strsh`) for a better symbol than `b` has. */
static void scan_table(int fd, uint64_t fsize, const ElfW(Shdr) * sh, const ElfW(Shdr) * strsh,
                       struct sym_best *b)
{
	if (sh->sh_entsize != sizeof(ElfW(Sym)) || strsh->sh_type != SHT_STRTAB)
		return;
	struct window ws, wn;
	const ElfW(Sym) *syms = window_map(fd, fsize, sh->sh_offset, sh->sh_size, &ws);
	const char *names = window_map(fd, fsize, strsh->sh_offset, strsh->sh_size, &wn);
	if (syms && names) {
		size_t n = sh->sh_size / sizeof(ElfW(Sym));
		for (size_t i = 0; i < n; i++) {
			const ElfW(Sym) *sym = &syms[i];
			if (!sym_holds(sym, b->addr) || (b->found && sym->st_value <= b->value) ||
			    sym->st_name >= strsh->sh_size)
				continue;
			const char *name = names + sym->st_name;
			size_t len = strnlen(name, strsh->sh_size - sym->st_name);
			b->found = true;
			b->value = sym->st_value;
			/* A name that does not fit is no name: a glob must
			 * never match a truncated one. */
			if (len == strsh->sh_size - sym->st_name || len >= b->size)
				b->name[0] = '\0';
			else
				memcpy(b->name, name, len + 1);
		}
	}
	window_unmap(&ws);
	window_unmap(&wn);
}

/*
 * Names the function of the object `path` that holds `addr` (an address in
 * the file's own terms) from its .dynsym and .symtab. `loaded` is the ELF
 * header as loaded: a file that differs (replaced since) names nothing.
 * Returns the symbol's address, 0 (name empty) when no symbol holds addr.
 */
static uint64_t elf_name(const char *path, const ElfW(Ehdr) * loaded, uint64_t addr, char *name,
                         size_t size)
{
	struct sym_best b = {.addr = addr, .name = name, .size = size};
	name[0] = '\0';
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	struct stat st;
	struct window wh = {0}, wsh = {0};
	const ElfW(Ehdr) *eh = NULL;
	const ElfW(Shdr) *sh = NULL;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		eh = window_map(fd, (uint64_t)st.st_size, 0, sizeof(*eh), &wh);
	if (eh && memcmp(eh, loaded, sizeof(*eh)) == 0 && eh->e_shentsize == sizeof(ElfW(Shdr)))
		sh = window_map(fd, (uint64_t)st.st_size, eh->e_shoff,
		                (uint64_t)eh->e_shnum * sizeof(ElfW(Shdr)), &wsh);
	for (unsigned i = 0; sh && i < eh->e_shnum; i++)
		if ((sh[i].sh_type == SHT_DYNSYM || sh[i].sh_type == SHT_SYMTAB) &&
		    sh[i].sh_link < eh->e_shnum)
			scan_table(fd, (uint64_t)st.st_size, &sh[i], &sh[sh[i].sh_link], &b);
	window_unmap(&wsh);
	window_unmap(&wh);
	close(fd);
	if (!b.found || !name[0]) {
		name[0] = '\0';
		return 0;
	}
	return b.value;
}

/*
 * Names already looked up, by the address named: the same return addresses
 * recur in every call path, and naming one scans its module's symbol
 * tables. Direct-mapped, mapped at start-up. Emptied when a module was
 * unloaded (another may come at its addresses). Only tried (trylock): a
 * signal handler's backtrace may interrupt a holder, and a forked child may
 * find it held for good, and then names without it.
 */
#define NAME_SLOTS 8192
_Static_assert(NAME_SLOTS == 1 << 13, "name_slot_lock hashes to 13 bits");
struct name_slot {
	uintptr_t pc, start; /* start: the symbol's address, when func is set */
	char func[sizeof(((struct gfp_frame *)0)->func)];
};
static struct name_slot *name_slots;
static pthread_mutex_t name_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long long name_subs; /* dl_iterate_phdr's unload count, when filled */

static int read_subs(struct dl_phdr_info *info, size_t size, void *subs)
{
	(void)size;
	*(unsigned long long *)subs = info->dlpi_subs;
	return 1; /* the count is the same in every entry */
}

/* At start-up, before any pressure: mapped later, under ulimit -v, it would
 * take address space from what the program is about to free. */
static void name_slots_map(void)
{
	void *m = sys_mmap(NULL, NAME_SLOTS * sizeof(*name_slots), PROT_READ | PROT_WRITE,
	                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m != MAP_FAILED)
		name_slots = m;
}

/* Once per backtrace: the names go when a module was unloaded since. */
static void names_forget_unloaded(void)
{
	if (!name_slots || pthread_mutex_trylock(&name_lock) != 0)
		return;
	unsigned long long subs = 0;
	dl_iterate_phdr(read_subs, &subs);
	if (subs != name_subs) {
		memset(name_slots, 0, NAME_SLOTS * sizeof(*name_slots));
		name_subs = subs;
	}
	pthread_mutex_unlock(&name_lock);
}

/* The slot of pc, with name_lock held; NULL (not held) when there is none. */
static struct name_slot *name_slot_lock(uintptr_t pc)
{
	if (!name_slots || pthread_mutex_trylock(&name_lock) != 0)
		return NULL;
	return &name_slots[(pc * 0x9e3779b97f4a7c15ULL) >> 51]; /* 13 bits: NAME_SLOTS */
}

/* The function that holds `pc` in frame `f`, from the file of its module;
 * func_off is from `ip`, the frame's own address. */
static void frame_name_uncached(struct gfp_frame *f, uintptr_t ip, uintptr_t pc);

static void frame_name(struct gfp_frame *f, uintptr_t ip, uintptr_t pc)
{
	struct name_slot *slot = name_slot_lock(pc);
	if (!slot) {
		frame_name_uncached(f, ip, pc);
		return;
	}
	if (slot->pc != pc) {
		frame_name_uncached(f, ip, pc);
		slot->pc = pc;
		slot->start = f->func[0] ? ip - f->func_off : 0;
		memcpy(slot->func, f->func, sizeof(slot->func));
	} else {
		memcpy(f->func, slot->func, sizeof(f->func));
		f->func_off = f->func[0] ? ip - slot->start : 0;
	}
	pthread_mutex_unlock(&name_lock);
}

static void frame_name_uncached(struct gfp_frame *f, uintptr_t ip, uintptr_t pc)
{
	uintptr_t base;
	f->func[0] = '\0';
	struct link_map *lm = site_object(pc, &base);
	if (!lm || !base)
		return;
	/* The program's l_name is empty (dladdr gives argv[0] instead). */
	const char *path = lm->l_name && lm->l_name[0] ? lm->l_name : "/proc/self/exe";
	uint64_t start =
	    elf_name(path, (const void *)base, pc - lm->l_addr, f->func, sizeof(f->func));
	if (f->func[0])
		f->func_off = ip - (uintptr_t)(start + lm->l_addr);
}

static int capture(struct gfp_frame *frames, int max, bool from_signal);

static void frame_fill(struct gfp_frame *f, uintptr_t ip, uintptr_t pc)
{
	memset(f, 0, sizeof(*f));
	f->ip = ip;
	frame_name(f, ip, pc);
	uintptr_t moff;
	const char *name = site_module(ip, &moff);
	if (name) {
		gfp_snprintf(f->module, sizeof(f->module), "%s", *name ? name : "(main)");
		f->module_off = moff;
	}
}

void unwind_name(struct gfp_frame *f, uintptr_t ip)
{
	gfp_tls.guard++;
	bool held = unwind_reserve_hold();
	frame_fill(f, ip, ip - 1);
	if (held)
		unwind_reserve_release();
	gfp_tls.guard--;
}

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
	if (!unwind_setup())
		return 0;
	gfp_tls.guard++;
	bool held = unwind_reserve_hold();
	unwind_enter();
	names_forget_unloaded(); /* dl_iterate_phdr: inside the fork gate */
	if (unw_getcontext(&uc) == 0 && unw_init_local(&cursor, &uc) == 0) {
		bool outside = false, after_signal = false;
		while (n < max && unw_step(&cursor) > 0) {
			unw_word_t ip;
			if (unw_get_reg(&cursor, UNW_REG_IP, &ip) < 0 || ip == 0)
				break;
			/* A return address may lie past its call's function
			 * (a noreturn call ends it): name the call itself,
			 * unless a signal interrupted the frame at ip. */
			bool sig = unw_is_signal_frame(&cursor) > 0;
			uintptr_t pc = ip - !(sig || after_signal);
			after_signal = sig;
			/* Skip the shim's frames, but only the innermost ones; from
			 * a signal handler, everything up to the signal frame. */
			if (!outside && from_signal) {
				/* libunwind flags the interrupted frame itself. */
				if (unw_is_signal_frame(&cursor) <= 0)
					continue;
				outside = true;
			}
			if (!outside && site_in_shim(ip))
				continue;
			outside = true;
			frame_fill(&frames[n++], ip, pc);
		}
	}
	unwind_leave();
	if (held)
		unwind_reserve_release();
	gfp_tls.guard--;
	return n;
}

void unwind_format(struct gfp_buf *b, const struct gfp_frame *frames, int n)
{
	for (int i = 0; i < n; i++) {
		const struct gfp_frame *f = &frames[i];
		gfp_buf_printf(b, "\n  #%d ", i);
		/* Names come from files: their control bytes are quoted. */
		if (f->func[0]) {
			gfp_buf_quote(b, f->func, strlen(f->func));
			gfp_buf_printf(b, "+%#lx", (unsigned long)f->func_off);
		} else {
			gfp_buf_printf(b, "%p", (void *)f->ip);
		}
		if (f->module[0]) {
			gfp_buf_printf(b, " (");
			gfp_buf_quote(b, f->module, strlen(f->module));
			gfp_buf_printf(b, "+%#lx)", (unsigned long)f->module_off);
		}
	}
}

/* The frame that made the request, for "in FUNC" in one-line messages: the
 * first outside libc (strdup's caller, not strdup), by its name, else as
 * module+offset; never a named frame further up, which did not call. */
const char *unwind_caller(const struct gfp_frame *frames, int n, char *buf, size_t size)
{
	const struct gfp_frame *f = n ? &frames[0] : NULL;
	for (int i = 0; i < n; i++)
		if (strcmp(frames[i].module, "libc.so.6") != 0) {
			f = &frames[i];
			break;
		}
	if (!f)
		return "?";
	if (f->func[0])
		return gfp_quote(buf, size, f->func, strlen(f->func));
	if (f->module[0]) {
		struct gfp_buf b = {buf, size, 0};
		gfp_buf_quote(&b, f->module, strlen(f->module));
		gfp_buf_printf(&b, "+%#lx", (unsigned long)f->module_off);
	} else
		gfp_snprintf(buf, size, "%p", (void *)f->ip);
	return buf;
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
