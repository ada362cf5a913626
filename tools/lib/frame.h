/*
 * frame.h - a recorded frame made whole for gfp-report and gfp-sweep: which
 * file its module is (the recorded path, else the recorded build-id, else a
 * search by name) and what it names there (function, source line, the
 * functions it was inlined into), spelled one way as text and as JSON.
 */
#ifndef GFP_TOOLS_FRAME_H
#define GFP_TOOLS_FRAME_H

#include <stdbool.h>
#include <stdio.h>

#include "record_reader.h"
#include "symbolize.h"

/* Where a module is looked for by its name when neither its path nor its
 * build-id finds it: the directories added, in order (the user's first),
 * then with frame_dirs_default those of a tool: the program's directory,
 * ".", /lib/x86_64-linux-gnu, /usr/lib/x86_64-linux-gnu, /usr/bin, /bin
 * and the shim's. Clearing forgets what was found in them. */
void frame_dir_add(const char *dir);
void frame_dirs_default(const char *prog);
void frame_dirs_clear(void);
/* Forgets every directory, module and note (sym_close_all too). */
void frame_close_all(void);
/* What a "not found" note ends with (how to name the module's directory);
 * NULL, the default, for no note at all. */
void frame_set_hint(const char *hint);

/* The module file to name a frame of `name` with: at path if its build-id is
 * the recorded one, else by build-id (debug directories, debuginfod), else
 * by name in the directories above with the recorded build-id. A file at
 * path that is another build gives one warning and no module. path and
 * build_id may be NULL (files from before they were recorded). */
struct sym_module *frame_module(const char *name, const char *path, const char *build_id);

/* One frame as recorded and what its module's file says of it. */
struct frame_info {
	struct rec_frame rec;        /* as recorded: its strings are the caller's */
	bool return_address;         /* every frame but a crash's top */
	const char *path, *build_id; /* recorded, else the file's that named it; NULL */
	bool located;                /* loc is valid */
	struct sym_loc loc;
	/* loc's innermost function, else the symbol table's: the whole name,
	 * demangled (symbolize.h); "" for none, never NULL. It lives as long
	 * as loc's strings (frame_read_json: as long as o). */
	const char *function;
	/* How the frame reads on the console: loc's chain "f a.c:1 < g b.c:2",
	 * else the recorded symbol, else the symbol table's "f+0x1c", names
	 * demangled and long ones cut (demangle_short); "" for none: a frame
	 * without a name reads module+offset. */
	char desc[1024];
	/* Where its function starts by the module's CFI (sym_function_start),
	 * an offset like the record's; has_start false without an FDE. */
	bool has_start;
	unsigned long long start;
};

/* fi for rec; frame_info_free lets go of it. */
void frame_resolve(const struct rec_frame *rec, bool return_address, struct frame_info *fi);
/* fi as frame_json wrote it into o, its strings o's; false (fi as far as it
 * goes) when o has no source line, or is no frame. */
bool frame_read_json(const struct jval *o, bool return_address, struct frame_info *fi);
void frame_info_free(struct frame_info *fi);
/* "    DESC (module+offset)" or "    module+offset", and a newline. */
void frame_print(FILE *f, const struct frame_info *fi);

/* What a title (a finding's heading, a JUnit test's name) calls the frame:
 * the innermost place of its inline chain that is the program's own
 * source rather than a library header inlined into it (sym_library_file:
 * a std::vector's allocate inlined into ns::Shelf::stock is the stock
 * line), as "function file:line", the function as demangle_short cuts it,
 * the file by basename; true. False when it has no such place: a frame
 * all in library headers (an out-of-line std:: template) reads as its
 * outermost function there, one without a source line "DESC
 * (module+offset)" or "module+offset" (a stripped module: never a bare
 * offset). out is always written, cut to n. */
bool frame_title(const struct frame_info *fi, char *out, size_t n);
/* The place frame_title names, for its file and line (a JUnit testcase's
 * file= and line=), the function whole; NULL when it returns false. */
const struct sym_place *frame_title_place(const struct frame_info *fi);

/* Once per module, on one line of f: which modules had frames that no
 * debug information, symbol table or record named (frame_resolve), and
 * how to get their names: the Debian package's -dbgsym (dpkg-query -S
 * finds the package), -g for a file of no package, DEBUGINFOD_URLS.
 * Nothing when every module it saw had names, or was named before. */
void frame_names_hint(FILE *f);
/* {"module","path","build_id","offset","function","file","line",
 * "inlined_into":[{"function","file","line"}...],"symbol"}, null where
 * unknown. */
void frame_json(FILE *f, const struct frame_info *fi);

#endif
