/*
 * hang.c - where a hung run waits: before the timeout kills it, the stack
 * of the thread that made the failed call (the process's initial thread
 * when that one has ended), read from outside through elfutils' libdwfl
 * (ptrace and the modules' CFI, as eu-stack reads it). One read is wherever
 * a busy loop happened to be: the stack is read several times, and the
 * frames all the reads share are the place it waits. Its frames are
 * written as classify.c writes a record's, modules named as the shim names
 * them, so that a hang's state is read the way a crash's is. A process that
 * cannot be traced (it has a tracer, or the sweep may not trace it) gives
 * no stack: its hang is keyed by the failed allocation instead.
 */
#include <elf.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <link.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "infile.h"
#include "symbolize.h"
#include "sweep.h"

#define HANG_FRAMES 64
/* Samples of a hung thread's stack, this far apart: a busy loop is
 * somewhere else in each, a blocked thread in the same place. */
#define HANG_SAMPLES       20
#define HANG_SAMPLE_GAP_US 5000
#define HANG_LINKS         512

/* One frame of a sample: its module, its pc, and the start of its function
 * (the symbol's, else the CFI's FDE's, else the pc itself). */
struct hframe {
	Dwfl_Module *m;
	Dwarf_Addr pc, fn;
	bool activation;
};

struct sample {
	struct hframe f[HANG_FRAMES];
	int n;
};

/* A module as the dynamic loader lists it: its dynamic section's address
 * and the name it was loaded by (l_name). */
struct link {
	unsigned long long ld;
	char name[128];
};

struct hang_ctx {
	Dwfl *dwfl;
	char exe[PATH_MAX], exe_name[128]; /* the program's file and name as the shim names it */
	struct link links[HANG_LINKS];
	size_t nlinks;
	struct sample *cur;
};

/* The shim names a frame's module by the base name of the loader's l_name
 * (a library by the name it was asked for, libstdc++.so.6 rather than the
 * file libstdc++.so.6.0.30 the link points to), the program by the name it
 * was run as (program_invocation_name); a module the loader does not list
 * (the vDSO) by its file's base name. */
static void module_name(const struct hang_ctx *h, Dwfl_Module *m, const char *file, char *out,
                        size_t n)
{
	Dwarf_Addr low = 0, high = 0;
	dwfl_module_info(m, NULL, &low, &high, NULL, NULL, NULL, NULL);
	const char *slash = strrchr(file, '/');
	if (h->exe_name[0] && strcmp(file, h->exe) == 0) {
		snprintf(out, n, "%s", h->exe_name);
		return;
	}
	for (size_t i = 0; i < h->nlinks; i++)
		if (h->links[i].ld >= low && h->links[i].ld < high && h->links[i].name[0]) {
			const char *base = strrchr(h->links[i].name, '/');
			snprintf(out, n, "%s", base ? base + 1 : h->links[i].name);
			return;
		}
	snprintf(out, n, "%s", slash ? slash + 1 : file);
}

static bool peek(int mem, unsigned long long addr, void *buf, size_t n)
{
	return pread(mem, buf, n, (off_t)addr) == (ssize_t)n;
}

/* The loader's list of modules in pid: the program's PT_DYNAMIC (through
 * the auxiliary vector's AT_PHDR), its DT_DEBUG's r_debug, r_map's chain. */
static void read_links(struct hang_ctx *h, pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/auxv", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf64_auxv_t av[64];
	ssize_t got = fd >= 0 ? read(fd, av, sizeof(av)) : -1;
	if (fd >= 0)
		close(fd);
	unsigned long long phdr = 0, phnum = 0;
	for (ssize_t i = 0; i < got / (ssize_t)sizeof(av[0]); i++) {
		if (av[i].a_type == AT_PHDR)
			phdr = av[i].a_un.a_val;
		else if (av[i].a_type == AT_PHNUM)
			phnum = av[i].a_un.a_val;
	}
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	int mem = open(path, O_RDONLY | O_CLOEXEC);
	if (mem < 0)
		return;
	unsigned long long bias = 0, dyn = 0, rdebug = 0;
	for (unsigned long long i = 0; phdr && i < phnum && i < 64; i++) {
		Elf64_Phdr ph;
		if (!peek(mem, phdr + i * sizeof(ph), &ph, sizeof(ph)))
			break;
		if (ph.p_type == PT_PHDR)
			bias = phdr - ph.p_vaddr;
		else if (ph.p_type == PT_DYNAMIC)
			dyn = ph.p_vaddr;
	}
	for (int i = 0; dyn && i < 256; i++) {
		Elf64_Dyn d;
		if (!peek(mem, bias + dyn + (unsigned long long)i * sizeof(d), &d, sizeof(d)) ||
		    d.d_tag == DT_NULL)
			break;
		if (d.d_tag == DT_DEBUG)
			rdebug = d.d_un.d_ptr;
	}
	struct r_debug rd;
	struct link_map lm;
	unsigned long long at =
	    rdebug && peek(mem, rdebug, &rd, sizeof(rd)) ? (uintptr_t)rd.r_map : 0;
	while (at && h->nlinks < HANG_LINKS && peek(mem, at, &lm, sizeof(lm))) {
		struct link *l = &h->links[h->nlinks];
		char name[sizeof(l->name)];
		ssize_t n = lm.l_name
		                ? pread(mem, name, sizeof(name) - 1, (off_t)(uintptr_t)lm.l_name)
		                : -1;
		name[n > 0 ? n : 0] = '\0';
		if (name[0]) {
			l->ld = (uintptr_t)lm.l_ld;
			memcpy(l->name, name, sizeof(name));
			h->nlinks++;
		}
		at = (uintptr_t)lm.l_next;
	}
	close(mem);
}

/* Where the function at `at` starts: its symbol's start, else its FDE's
 * (a stripped module's CFI still bounds each function), else 0. */
static Dwarf_Addr function_start(Dwfl_Module *m, Dwarf_Addr at)
{
	GElf_Off symoff = 0;
	GElf_Sym s;
	unsigned long long start = 0;
	if (dwfl_module_addrinfo(m, at, &symoff, &s, NULL, NULL, NULL))
		return at - symoff;
	return sym_cfi_function(m, at, &start) ? start : 0;
}

static int take_frame(Dwfl_Frame *state, void *arg)
{
	struct hang_ctx *h = arg;
	struct sample *s = h->cur;
	Dwarf_Addr pc;
	bool activation;
	if (!dwfl_frame_pc(state, &pc, &activation))
		return DWARF_CB_ABORT;
	/* A return address names the call before it. */
	Dwarf_Addr at = activation ? pc : pc - 1;
	Dwfl_Module *m = dwfl_addrmodule(h->dwfl, at);
	struct hframe *f = &s->f[s->n++];
	*f = (struct hframe){m, pc, 0, activation};
	if (m) {
		f->fn = function_start(m, at);
		if (!f->fn)
			f->fn = at;
	}
	return s->n < HANG_FRAMES ? DWARF_CB_OK : DWARF_CB_ABORT;
}

/* One frame as classify.c writes a record's: "MODULE\tOFFSET\tSYMBOL\tN". */
static size_t write_frame(struct hang_ctx *h, const struct hframe *f, bool top, char *out, size_t n)
{
	Dwarf_Addr start = 0;
	const char *file = NULL;
	const char *name =
	    f->m ? dwfl_module_info(f->m, NULL, &start, NULL, NULL, NULL, &file, NULL) : NULL;
	if (!name || name[0] != '/')
		return 0;
	/* The innermost frame kept is read as the place it waited (a return
	 * address there is still in the function: the call it follows came
	 * back, as the loop went on). */
	Dwarf_Addr pc = f->pc;
	bool activation = top || f->activation;
	Dwarf_Addr at = activation ? pc : pc - 1;
	char mod[128], sym[160] = "", bid[130] = "";
	module_name(h, f->m, name, mod, sizeof(mod));
	for (char *p = mod; *p; p++)
		if (*p == '\t' || *p == '\n')
			*p = ' ';
	GElf_Off symoff = 0;
	GElf_Sym s;
	const char *sname = dwfl_module_addrinfo(f->m, at, &symoff, &s, NULL, NULL, NULL);
	if (sname)
		snprintf(sym, sizeof(sym), "%s+%#llx", sname,
		         (unsigned long long)(symoff + (activation ? 0 : 1)));
	const unsigned char *bits;
	GElf_Addr vaddr;
	int nb = dwfl_module_build_id(f->m, &bits, &vaddr);
	for (int i = 0; i < nb && i < 64; i++)
		snprintf(bid + 2 * i, sizeof(bid) - 2 * (size_t)i, "%02x", bits[i]);
	for (char *p = sym; *p; p++)
		if (*p == '\t' || *p == '\n')
			*p = ' ';
	int w = snprintf(out, n, "%s\t%#llx\t%s\t%zu\n", mod, (unsigned long long)(pc - start), sym,
	                 frames_module_index(mod, file ? file : name, nb > 0 ? bid : NULL));
	return w > 0 && (size_t)w < n ? (size_t)w : 0;
}

static bool same_function(const struct hframe *a, const struct hframe *b)
{
	return a->m == b->m && a->fn == b->fn;
}

/* Where the samples agree: the frames every one of them has, matched by
 * function from the outermost in (a loop's function is at another pc in
 * each, its callers at the same). Writes them from the sample whose top
 * frame is the innermost of them, else the first sample's; a blocked
 * thread's samples agree to the top, so its stack is written whole. */
static void write_common(struct hang_ctx *h, const struct sample *s, int ns, char *out, size_t n)
{
	int first = -1, common = HANG_FRAMES + 1;
	for (int i = 0; i < ns; i++)
		if (s[i].n > 0) {
			if (first < 0)
				first = i;
			int k = 0;
			while (
			    k < s[i].n && k < s[first].n &&
			    same_function(&s[i].f[s[i].n - 1 - k], &s[first].f[s[first].n - 1 - k]))
				k++;
			if (k < common)
				common = k;
		}
	if (first < 0)
		return;
	const struct sample *w = &s[first];
	if (common == 0) /* nothing shared (a stack too deep to compare): one sample */
		common = w->n;
	for (int i = first; i < ns; i++)
		if (s[i].n == common) {
			w = &s[i];
			break;
		}
	size_t len = 0;
	for (int i = w->n - common; i < w->n; i++)
		len += write_frame(h, &w->f[i], i == w->n - common, out + len, n - len);
}

/* pid is keeper's descendant: a pid reused by another process since the
 * injection record was written is not traced. */
static bool descendant(pid_t pid, pid_t keeper)
{
	for (int depth = 0; pid > 1 && depth < 64; depth++) {
		char path[64], stat[512];
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
		FILE *f = fopen(path, "r");
		if (!f)
			return false;
		size_t n = fread(stat, 1, sizeof(stat) - 1, f);
		fclose(f);
		stat[n] = '\0';
		char *close = strrchr(stat, ')');
		int ppid;
		if (!close || sscanf(close + 1, " %*c %d", &ppid) != 1)
			return false;
		if (ppid == keeper)
			return true;
		pid = ppid;
	}
	return false;
}

/* The name the process was run as: its argv[0]'s base name. */
static void run_name(pid_t pid, char *out, size_t n)
{
	char path[64], arg[PATH_MAX] = "";
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	FILE *f = fopen(path, "r");
	if (f) {
		size_t len = fread(arg, 1, sizeof(arg) - 1, f);
		arg[len] = '\0';
		fclose(f);
	}
	const char *slash = strrchr(arg, '/');
	snprintf(out, n, "%s", slash ? slash + 1 : arg);
}

bool hang_stack(int idx, pid_t keeper, char *out, size_t n)
{
	out[0] = '\0';
	char path[PATH_MAX + 16];
	size_t len = 0;
	run_paths(idx, "rec", path, sizeof(path));
	char *text = infile_read(path, &len);
	struct jval inj;
	if (!text || !rec_find(text, len, "injection", &inj)) {
		free(text);
		return false;
	}
	double p = 0, t = 0;
	json_num(&inj, "pid", &p);
	json_num(&inj, "tid", &t);
	json_free(&inj);
	free(text);
	pid_t pid = (pid_t)p, tid = (pid_t)t;
	if (pid <= 1 || !descendant(pid, keeper))
		return false;
	snprintf(path, sizeof(path), "/proc/%d/task/%d", (int)pid, (int)tid);
	if (tid <= 0 || access(path, F_OK) != 0)
		tid = pid;

	static const Dwfl_Callbacks callbacks = {
	    .find_elf = dwfl_linux_proc_find_elf,
	    .find_debuginfo = dwfl_standard_find_debuginfo,
	};
	struct hang_ctx *h = xrealloc(NULL, sizeof(*h));
	memset(h, 0, sizeof(*h));
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	ssize_t l = readlink(path, h->exe, sizeof(h->exe) - 1);
	h->exe[l > 0 ? l : 0] = '\0';
	run_name(pid, h->exe_name, sizeof(h->exe_name));
	struct sample *s = xrealloc(NULL, HANG_SAMPLES * sizeof(*s));
	int ns = 0;
	h->dwfl = dwfl_begin(&callbacks);
	if (h->dwfl && dwfl_linux_proc_report(h->dwfl, pid) == 0 &&
	    dwfl_report_end(h->dwfl, NULL, NULL) == 0 &&
	    dwfl_linux_proc_attach(h->dwfl, pid, false) == 0) {
		read_links(h, pid);
		/* Each sample stops the thread, reads its stack and lets it go on. */
		for (; ns < HANG_SAMPLES; ns++) {
			if (ns)
				usleep(HANG_SAMPLE_GAP_US);
			h->cur = &s[ns];
			s[ns].n = 0;
			dwfl_getthread_frames(h->dwfl, tid, take_frame, h);
			if (s[ns].n == 0 && ns > 0)
				break; /* it ended */
		}
		write_common(h, s, ns, out, n);
	}
	if (h->dwfl)
		dwfl_end(h->dwfl); /* detaches: the keeper kills it next */
	free(s);
	free(h);
	return out[0] != '\0';
}
