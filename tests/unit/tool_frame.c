/* What the tools call a frame (tools/lib/frame.c, demangle.c): a title by
 * the program's own source line, not the library header inlined into it;
 * C++ names demangled and long ones cut as the console shows them; a
 * frame's JSON read back as it was written. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "demangle.h"
#include "frame.h"

/* A string that may be missing, printable. */
static const char *or_null(const char *s)
{
	return s ? s : "(null)";
}

/* A frame located in the source: places[0] the innermost, the rest the
 * functions it was inlined into, outermost last. */
static void located(struct frame_info *fi, const struct sym_place *places, size_t n)
{
	memset(fi, 0, sizeof(*fi));
	fi->rec = (struct rec_frame){"prog", "0x1c2", NULL, NULL, NULL};
	fi->return_address = true;
	fi->located = true;
	fi->loc.at = places[0];
	fi->loc.inlined_into = (struct sym_place *)places + 1;
	fi->loc.ninlined = n - 1;
	fi->function = places[0].function;
	size_t len = 0;
	sym_loc_text(&fi->loc, fi->desc, sizeof(fi->desc), &len);
}

static void title_is(const struct frame_info *fi, const char *want, bool own)
{
	char title[600];
	bool got = frame_title(fi, title, sizeof(title));
	CHECK_STR(title, want);
	CHECK(got == own);
}

static void titles_name_the_programs_own_source(void)
{
	struct frame_info fi;
	/* a std::vector's code inlined into the program's function */
	const struct sym_place inlined[] = {
	    {"std::vector<int, std::allocator<int> >::push_back(int const&)",
	     "/usr/include/c++/12/bits/stl_vector.h", 1287},
	    {"ns::Shelf::stock(int)", "/src/shop/shelf.cc", 42},
	    {"main", "/src/shop/main.cc", 7},
	};
	located(&fi, inlined, 3);
	title_is(&fi, "ns::Shelf::stock(int) shelf.cc:42", true);
	CHECK(frame_title_place(&fi) == &inlined[1]);
	/* all library code: the function it is in, and no place of the program's */
	const struct sym_place library[] = {
	    {"std::__new_allocator<int>::allocate(unsigned long, void const*)",
	     "/usr/include/c++/12/bits/new_allocator.h", 137},
	    {"std::vector<int, std::allocator<int> >::_M_realloc_insert<int const&>()",
	     "/usr/include/c++/12/bits/vector.tcc", 440},
	};
	located(&fi, library, 2);
	title_is(&fi,
	         "std::vector<int, std::allocator<int> >::_M_realloc_insert<int const&>() "
	         "vector.tcc:440",
	         false);
	CHECK(frame_title_place(&fi) == NULL);
	/* a place without a file */
	const struct sym_place nofile[] = {{"f", NULL, 3}};
	located(&fi, nofile, 1);
	title_is(&fi, "f ??:3", false);
	/* not located: what it was named by, else module+offset */
	memset(&fi, 0, sizeof(fi));
	fi.rec = (struct rec_frame){"libfoo.so", "0x40", NULL, NULL, NULL};
	title_is(&fi, "libfoo.so+0x40", false);
	snprintf(fi.desc, sizeof(fi.desc), "foo_alloc+0x10");
	title_is(&fi, "foo_alloc+0x10 (libfoo.so+0x40)", false);
	/* cut to the room given, never past it */
	located(&fi, inlined, 3);
	char small[12];
	frame_title(&fi, small, sizeof(small));
	CHECK(strlen(small) == sizeof(small) - 1);
}

static void library_files_are_headers(void)
{
	CHECK(sym_library_file("/usr/include/stdio.h"));
	CHECK(sym_library_file("/usr/local/include/foo.h"));
	CHECK(sym_library_file("/usr/lib/gcc/x86_64-linux-gnu/12/include/stddef.h"));
	CHECK(sym_library_file("/opt/gcc/include/c++/13/vector"));
	CHECK(sym_library_file("/usr/lib/llvm-16/include/c++/v1/vector"));
	CHECK(!sym_library_file("/src/shop/shelf.cc"));
	CHECK(!sym_library_file("/home/u/include/mine.h"));
	CHECK(!sym_library_file(NULL));
}

/* fi's JSON, valid until the next call. */
static const char *json_of(const struct frame_info *fi)
{
	static char text[2048];
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	frame_json(f, fi);
	fclose(f);
	snprintf(text, sizeof(text), "%s", buf ? buf : "");
	free(buf);
	return text;
}

static void json_reads_back(void)
{
	const struct sym_place places[] = {
	    {"inner", "/src/a.c", 3},
	    {"outer", "/src/b.c", 9},
	};
	struct frame_info fi, back;
	located(&fi, places, 2);
	fi.rec.symbol = "outer+0x1c";
	fi.path = "/bin/prog";
	fi.build_id = "0123abcd";
	char text[2048];
	snprintf(text, sizeof(text), "%s", json_of(&fi));
	CHECK_STR(text, "{\"module\":\"prog\",\"path\":\"/bin/prog\",\"build_id\":\"0123abcd\","
	                "\"offset\":\"0x1c2\",\"function\":\"inner\",\"file\":\"/src/a.c\","
	                "\"line\":3,\"inlined_into\":[{\"function\":\"outer\",\"file\":\"/src/"
	                "b.c\",\"line\":9}],\"symbol\":\"outer+0x1c\"}");
	struct jval v;
	char err[128];
	CHECK(json_parse(text, strlen(text), 1, &v, err, sizeof(err)));
	CHECK(frame_read_json(&v, true, &back));
	CHECK_STR(or_null(back.rec.module), "prog");
	CHECK_STR(or_null(back.rec.offset), "0x1c2");
	CHECK_STR(or_null(back.path), "/bin/prog");
	CHECK_STR(or_null(back.build_id), "0123abcd");
	CHECK_STR(or_null(back.function), "inner");
	CHECK(back.loc.ninlined == 1 && back.loc.inlined_into[0].line == 9);
	CHECK_STR(back.desc, fi.desc);
	CHECK_STR(back.desc, "inner a.c:3 < outer b.c:9");
	CHECK_STR(json_of(&back), text);
	frame_info_free(&back);
	json_free(&v);
	/* unknowns are null, and a frame without a source line reads as far
	 * as it goes */
	memset(&fi, 0, sizeof(fi));
	fi.rec = (struct rec_frame){"m", "0x1", NULL, NULL, NULL};
	fi.function = "";
	snprintf(text, sizeof(text), "%s", json_of(&fi));
	CHECK_STR(text, "{\"module\":\"m\",\"path\":null,\"build_id\":null,\"offset\":\"0x1\","
	                "\"function\":null,\"file\":null,\"line\":null,\"inlined_into\":[],"
	                "\"symbol\":null}");
	CHECK(json_parse(text, strlen(text), 1, &v, err, sizeof(err)));
	CHECK(!frame_read_json(&v, true, &back));
	CHECK_STR(or_null(back.rec.module), "m");
	frame_info_free(&back);
	json_free(&v);
}

static void printed_frames(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct frame_info fi;
	memset(&fi, 0, sizeof(fi));
	fi.rec = (struct rec_frame){"libfoo.so", "0x40", NULL, NULL, NULL};
	frame_print(f, &fi);
	snprintf(fi.desc, sizeof(fi.desc), "foo f.c:2");
	frame_print(f, &fi);
	fclose(f);
	CHECK_STR(or_null(buf), "    libfoo.so+0x40\n    foo f.c:2 (libfoo.so+0x40)\n");
	free(buf);
}

static const char *shorter(const char *name, char *out, size_t n)
{
	size_t len = 0;
	out[0] = '\0';
	demangle_short(name, out, n, &len);
	return out;
}

static void names_as_people_read_them(void)
{
	CHECK_STR(or_null(demangle_name("_ZN2ns5Shelf5stockEi")), "ns::Shelf::stock(int)");
	CHECK_STR(or_null(demangle_name("main")), "main");
	CHECK_STR(or_null(demangle_name("_Zbogus!")), "_Zbogus!"); /* the demangler refuses it */
	CHECK(demangle_name(NULL) == NULL);
	/* the same name demangled once, kept until demangle_free */
	CHECK(demangle_name("_ZN2ns5Shelf5stockEi") == demangle_name("_ZN2ns5Shelf5stockEi"));
	char out[400];
	size_t len = 0;
	out[0] = '\0';
	demangle_symbol("_ZplRK1VS1_+0x10", out, sizeof(out), &len);
	CHECK_STR(out, "operator+(V const&, V const&)+0x10");
	len = 0;
	demangle_symbol("strlen", out, sizeof(out), &len);
	CHECK_STR(out, "strlen");
	/* short names whole; long ones' template arguments cut, then their
	 * parameters, then their end; an operator's brackets are no template's */
	CHECK_STR(shorter("f(int)", out, sizeof(out)), "f(int)");
	char longname[300];
	snprintf(longname, sizeof(longname),
	         "std::vector<std::pair<std::__cxx11::basic_string<char>, int>, "
	         "std::allocator<std::pair<std::__cxx11::basic_string<char>, int> > "
	         ">::_M_realloc_insert<int>(long, int&&)");
	CHECK_STR(shorter(longname, out, sizeof(out)),
	          "std::vector<...>::_M_realloc_insert<...>(long, int&&)");
	char params[400];
	snprintf(params, sizeof(params), "ns::a_function_with_a_long_name<T>(%s)",
	         "std::basic_ostream<char>& (*)(std::basic_ostream<char>&), "
	         "very_long_parameter_type_one, very_long_parameter_type_two, "
	         "very_long_parameter_type_three");
	CHECK_STR(shorter(params, out, sizeof(out)), "ns::a_function_with_a_long_name<...>(...)");
	char op[300];
	snprintf(op, sizeof(op),
	         "std::operator<< <std::char_traits<char> >(std::basic_ostream<char, "
	         "std::char_traits<char> >&, char const*, a_very_long_tail_parameter)");
	CHECK(strncmp(shorter(op, out, sizeof(out)), "std::operator<< <...>(", 22) == 0);
	char huge[600];
	memset(huge, 'x', sizeof(huge) - 1);
	huge[sizeof(huge) - 1] = '\0';
	shorter(huge, out, sizeof(out));
	CHECK(strlen(out) == DEMANGLE_SHORT_LONGEST);
	CHECK(strcmp(out + DEMANGLE_SHORT_LONGEST - 3, "...") == 0);
	demangle_free();
}

int main(void)
{
	titles_name_the_programs_own_source();
	library_files_are_headers();
	json_reads_back();
	printed_frames();
	names_as_people_read_them();
	return CHECK_DONE();
}
