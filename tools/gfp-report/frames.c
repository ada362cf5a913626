/*
 * frames.c - frames named by function and source line: where gfp-report
 * looks for modules (frame.c finds them: --path first, then a file's
 * program and the usual places) and printing the frames of records and of
 * gfp-sweep's results.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "report.h"

static const char **user_dirs;
static size_t nuser_dirs;

void frames_add_user_dir(const char *dir)
{
	user_dirs = xrealloc(user_dirs, (nuser_dirs + 1) * sizeof(*user_dirs));
	user_dirs[nuser_dirs++] = dir;
}

/* --path first (the user knows best), then the file's program, the usual
 * places and the shim's directory, for modules whose recorded path and
 * build-id find no file. */
void frames_set_dirs(const char *prog)
{
	frame_dirs_clear();
	frame_set_hint("--path DIR names its directory, --debug-dir DIR a tree of "
	               ".build-id/ files");
	for (size_t i = 0; i < nuser_dirs; i++)
		frame_dir_add(user_dirs[i]);
	frame_dirs_default(prog);
}

/* One frame as "    DESC (module+offset)" or "    module+offset". Return
 * addresses point after the call, possibly to the next line's code, so those
 * are looked up one byte back; the top of a crash is the faulting pc itself. */
void frames_print(const struct rec_frame *fr, bool return_address)
{
	struct frame_info fi;
	frame_resolve(fr, return_address, &fi);
	frame_print(stdout, &fi);
	frame_info_free(&fi);
}

/* Frames as records.c writes them: [{"module","offset","symbol"}, ...]. */
void frames_print_json(const struct jval *rec, bool top_is_pc)
{
	for (size_t i = 0; i < rec_nframes(rec); i++) {
		struct rec_frame fr;
		if (!rec_frame(rec, i, &fr)) {
			printf("    (a frame without module and offset)\n");
			continue;
		}
		frames_print(&fr, !(top_is_pc && i == 0));
	}
}

/* A frame of gfp-sweep's: as the sweep named it where it has a source line
 * (the sweep ran beside the modules), else named here. */
void frames_print_sweep_one(const struct jval *o, bool return_address)
{
	struct frame_info fi;
	if (frame_read_json(o, return_address, &fi))
		frame_print(stdout, &fi);
	else if (fi.rec.module && fi.rec.offset)
		frames_print(&fi.rec, return_address);
	else
		printf("    (a frame without module and offset)\n");
	frame_info_free(&fi);
}

void frames_each_text(const char *frames, frame_text_fn *fn, void *ctx)
{
	bool first = true;
	for (const char *line = frames; line && *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		char buf[1024];
		snprintf(buf, sizeof(buf), "%.*s", (int)len, line);
		line = nl ? nl + 1 : line + len;
		char *s = buf + strspn(buf, " \t");
		size_t sl = strlen(s);
		char *open = strrchr(s, '(');
		/* The last '+' splits, for modules such as libstdc++.so.6. */
		char *plus = open ? strrchr(open, '+') : NULL;
		if (!sl || s[sl - 1] != ')' || !plus) {
			if (*s && !fn(ctx, s, NULL, NULL, first))
				return;
			continue;
		}
		s[sl - 1] = '\0';
		*plus = '\0';
		*open = '\0';
		char *sym_end = open;
		while (sym_end > s && sym_end[-1] == ' ')
			*--sym_end = '\0';
		if (!fn(ctx, s, open + 1, plus + 1, first))
			return;
		first = false;
	}
}

static bool print_frame_text(void *ctx, const char *sym, const char *mod, const char *off,
                             bool first)
{
	bool top_is_pc = *(const bool *)ctx;
	struct rec_frame fr = {mod, off, sym, NULL, NULL};
	if (mod)
		frames_print(&fr, !(top_is_pc && first));
	else
		printf("    %s\n", sym);
	return true;
}

static void print_frames_text(const char *frames, bool top_is_pc)
{
	frames_each_text(frames, print_frame_text, &top_is_pc);
}

void frames_print_sweep(const struct jval *frames, bool top_is_pc)
{
	if (frames && frames->type == J_STR) /* before frames were objects */
		print_frames_text(frames->s, top_is_pc);
	for (size_t i = 0; frames && frames->type == J_ARR && i < frames->n; i++)
		frames_print_sweep_one(&frames->v[i], !(top_is_pc && i == 0));
}

void frames_free(void)
{
	frame_close_all();
	free(user_dirs);
}
