/*
 * modules.c - the loaded objects that records and reports name, each once,
 * with its full path and its GNU build-id, so that gfp-report can find the
 * file (or its debug information by build-id) from another folder, another
 * day or another machine, and can tell when the file has changed since.
 *
 * The build-id is read from the note in the loaded image, not from the file:
 * no open, no allocation, and the right answer even when the file has been
 * replaced since the process mapped it.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h> /* program_invocation_name */
#include <link.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "site.h"
#include "modules.h"

#define MAX_MODULES 256

/* Entries are written by the thread whose id is in `filler`, then
 * published by `count`; readers take no lock. A module is known by its
 * mapping's start and its path: after a dlclose another object may be
 * mapped at the same place. */
static struct entry {
	uintptr_t start;
	char lname[256]; /* the link_map's name: "" for the program */
	struct gfp_module m;
} table[MAX_MODULES + 1]; /* [0] unused: 0 is none */
static unsigned count;    /* atomic */
static pid_t filler;      /* atomic: 0, or the thread adding an entry */

/* Yields to another thread's fill before a record goes without a module.
 * Filling takes no lock and allocates nothing, so the filler ends soon
 * once it runs; the bound is for a filler that never runs again (stopped
 * inside a signal handler of its own that waits for us). */
#define FILL_WAIT_YIELDS 100000

static bool within(uintptr_t p, size_t n, uintptr_t lo, uintptr_t hi)
{
	return p >= lo && p <= hi && n <= hi - p;
}

/* The NT_GNU_BUILD_ID note of the object mapped at [start, end), whose load
 * bias is `bias`, as hex into out (41 bytes); "" when there is none. */
static void build_id_of(uintptr_t start, uintptr_t end, uintptr_t bias, char *out)
{
	out[0] = '\0';
	const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)start;
	if (!within(start, sizeof(*eh), start, end) || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh->e_phentsize != sizeof(ElfW(Phdr)) ||
	    !within(start + eh->e_phoff, (size_t)eh->e_phnum * sizeof(ElfW(Phdr)), start, end))
		return;
	const ElfW(Phdr) *ph = (const ElfW(Phdr) *)(start + eh->e_phoff);
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type != PT_NOTE)
			continue;
		uintptr_t p = bias + ph[i].p_vaddr, stop = p + ph[i].p_memsz;
		if (!within(p, ph[i].p_memsz, start, end))
			continue;
		while (p + sizeof(ElfW(Nhdr)) <= stop) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
			uintptr_t name = p + sizeof(*nh);
			uintptr_t desc = name + ((nh->n_namesz + 3) & ~3u);
			uintptr_t next = desc + ((nh->n_descsz + 3) & ~3u);
			if (next > stop || next <= p)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    memcmp((const void *)name, "GNU", 4) == 0 && nh->n_descsz <= 20) {
				static const char hex[] = "0123456789abcdef";
				const unsigned char *d = (const unsigned char *)desc;
				for (unsigned k = 0; k < nh->n_descsz; k++) {
					out[2 * k] = hex[d[k] >> 4];
					out[2 * k + 1] = hex[d[k] & 15];
				}
				out[2 * nh->n_descsz] = '\0';
				return;
			}
			p = next;
		}
	}
}

/* The program's own path: its link_map has no name. */
static void program_path(char *out, size_t n)
{
	ssize_t len = readlink("/proc/self/exe", out, n - 1);
	if (len > 0)
		out[len] = '\0';
	else
		gfp_snprintf(out, n, "%s", program_invocation_name);
}

/* The table's entry of the module at start named lname, or 0. */
static unsigned known(uintptr_t start, const char *lname)
{
	unsigned n = __atomic_load_n(&count, __ATOMIC_ACQUIRE);
	for (unsigned i = 1; i <= n; i++)
		if (table[i].start == start && strcmp(table[i].lname, lname) == 0)
			return i;
	return 0;
}

/* Whether this thread may add an entry: it waits while another thread of
 * the process adds one (a record made meanwhile on another thread would
 * otherwise name its modules by file name alone). It does not wait for
 * itself (a signal handler that interrupted this thread's fill), nor for
 * a filler that is not a thread of this process (a fork's child inherits
 * the parent's `filler`, not its threads). */
static bool fill_begin(void)
{
	int saved = errno; /* the program's: tgkill may set it */
	pid_t me = gettid();
	bool mine = false;
	for (unsigned i = 0; i < FILL_WAIT_YIELDS; i++) {
		pid_t other = 0;
		if (__atomic_compare_exchange_n(&filler, &other, me, false, __ATOMIC_ACQUIRE,
		                                __ATOMIC_RELAXED)) {
			mine = true;
			break;
		}
		if (other == me)
			break;
		if (tgkill(getpid(), other, 0) != 0 && errno == ESRCH) {
			mine = __atomic_compare_exchange_n(&filler, &other, me, false,
			                                   __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
			if (mine)
				break;
			continue;
		}
		sched_yield();
	}
	errno = saved;
	return mine;
}

unsigned modules_of(uintptr_t ip)
{
	struct dl_find_object o;
	if (_dl_find_object((void *)ip, &o) != 0 || !o.dlfo_link_map)
		return 0;
	const struct link_map *lm = o.dlfo_link_map;
	const char *lname = lm->l_name ? lm->l_name : "";
	uintptr_t start = (uintptr_t)o.dlfo_map_start;
	unsigned idx = known(start, lname);
	if (idx || !fill_begin())
		return idx; /* 0: the record names the module by its file name */
	/* Another thread may have added it while this one waited. */
	idx = known(start, lname);
	unsigned n = __atomic_load_n(&count, __ATOMIC_RELAXED);
	if (!idx && n < MAX_MODULES) {
		struct entry *e = &table[n + 1];
		uintptr_t off;
		const char *name = site_module(ip, &off);
		gfp_snprintf(e->m.name, sizeof(e->m.name), "%s", name ? name : "?");
		if (lname[0])
			gfp_snprintf(e->m.path, sizeof(e->m.path), "%s", lname);
		else
			program_path(e->m.path, sizeof(e->m.path));
		if (e->m.path[0] != '/') /* the vDSO: "linux-vdso.so.1", no file */
			e->m.path[0] = '\0';
		build_id_of(start, (uintptr_t)o.dlfo_map_end, lm->l_addr, e->m.build_id);
		gfp_snprintf(e->lname, sizeof(e->lname), "%s", lname);
		e->start = start;
		idx = n + 1;
		__atomic_store_n(&count, idx, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&filler, 0, __ATOMIC_RELEASE);
	return idx;
}

const struct gfp_module *modules_get(unsigned idx)
{
	return idx && idx <= __atomic_load_n(&count, __ATOMIC_ACQUIRE) ? &table[idx].m : NULL;
}

void modules_json(struct gfp_buf *b, unsigned idx)
{
	const struct gfp_module *m = modules_get(idx);
	if (!m)
		return;
	gfp_buf_printf(b, "{\"name\":");
	gfp_buf_json_str(b, m->name);
	if (m->path[0]) {
		gfp_buf_printf(b, ",\"path\":");
		gfp_buf_json_str(b, m->path);
	}
	if (m->build_id[0])
		gfp_buf_printf(b, ",\"build_id\":\"%s\"", m->build_id);
	gfp_buf_printf(b, "}");
}
