/*
 * titles.c - frame_title's word on each frame of a record: "RECORDS EVENT"
 * prints, for every frame of the first EVENT record of the GFP_RECORD file
 * RECORDS, a line "own TITLE" when the title names a place in the
 * program's own source, else "lib TITLE" (titles.sh).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "infile.h"
#include "frame.h"
#include "record_reader.h"
#include "text.h"

int main(int argc, char **argv)
{
	size_t len = 0;
	char *text = argc == 3 ? infile_read(argv[1], &len) : NULL;
	struct jval rec;
	if (!text || !rec_find(text, len, argv[2], &rec)) {
		fprintf(stderr, "usage: titles RECORDS EVENT (with such a record)\n");
		return 2;
	}
	bool crash = strcmp(argv[2], "crash") == 0;
	for (size_t i = 0; i < rec_nframes(&rec); i++) {
		struct rec_frame rf;
		if (!rec_frame(&rec, i, &rf))
			continue;
		struct frame_info fi;
		frame_resolve(&rf, !(crash && i == 0), &fi);
		char title[512];
		bool own = frame_title(&fi, title, sizeof(title));
		printf("%s %s\n", own ? "own" : "lib", title);
		frame_info_free(&fi);
	}
	json_free(&rec);
	frame_close_all();
	free(text);
	return 0;
}
