/*
 * inventory FILE - print a stock report
 *
 * FILE has lines "NAME COUNT PRICE [CATEGORY]"; '#' starts a comment line, a name listed again is
 * a restock.  Items live in a hash table keyed by name, a sorted array drives the report and two
 * worker threads summarise the categories.
 *
 * This is gfp-sweep's example program.  Every allocation is checked and fails cleanly ("inventory:
 * out of memory", exit status 1), except for four deliberate error-path bugs, marked BUG(n):
 *	1. crash:  make_title() writes through an unchecked strdup(); reached on every run.
 *	2. crash:  build_rows() frees uninitialised slots, but only once a row has been built.
 *	3. hang:   pool_submit() drops a job it has already counted; summarise() waits forever.
 *	4. silent: a category line whose asprintf() fails is left out; the exit status stays 0.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NWORKERS 2

struct item {
	char *name;			/* owned; the hash key */
	long count;
	double price;
	struct category *cat;
	struct item *next;		/* hash chain */
};

struct category {
	char *name;
	size_t nitems;
	struct category *next;		/* in name order */
	long units;			/* the rest is filled in by a worker */
	double value;
	char *top;			/* the item with the largest value; NULL: out of memory */
};

struct table {
	struct item **buckets;
	struct category *cats;
	size_t nbuckets, n, ncats;
};

struct job {
	struct category *cat;
	struct job *next;
};

struct pool {
	pthread_mutex_t lock;
	pthread_cond_t work, done;	/* a job was queued or stop set; pending dropped to 0 */
	struct job *head;		/* a stack: the order does not matter */
	size_t pending;			/* jobs submitted and not finished yet */
	int stop;
	struct item **items;		/* all of them, in name order */
	size_t nitems;
};

struct row {
	char *text;
	int len;
};

struct strbuf {
	char *buf;
	size_t len, cap;
};

static _Noreturn void oom(void)
{
	fputs("inventory: out of memory\n", stderr);
	exit(1);
}

/* A library call failed; errno says why. */
static _Noreturn void die(const char *what)
{
	if (errno == ENOMEM)
		oom();
	fprintf(stderr, "inventory: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* The report's title: the file's base name without its extension, capitalised. */
static char *make_title(const char *path)
{
	const char *base = strrchr(path, '/');
	char *title, *dot;

	title = strdup(base ? base + 1 : path);
	/* BUG(1): the strdup() above is not checked; when it fails this writes through NULL. */
	title[0] = (char)toupper((unsigned char)title[0]);
	dot = strrchr(title, '.');
	if (dot && dot != title)
		*dot = '\0';
	return title;
}

static size_t hash(const char *s, size_t nbuckets)
{
	uint64_t h = 14695981039346656037u;	/* FNV-1a */

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211u;
	return h % nbuckets;
}

/* Doubles the buckets.  Failing is harmless: the table still works, with longer chains. */
static void table_grow(struct table *t)
{
	size_t nb = 2 * t->nbuckets, i, b;
	struct item **buckets, *it, *next;

	buckets = calloc(nb, sizeof(*buckets));
	if (!buckets)
		return;
	for (i = 0; i < t->nbuckets; i++) {
		for (it = t->buckets[i]; it; it = next) {
			next = it->next;
			b = hash(it->name, nb);
			it->next = buckets[b];
			buckets[b] = it;
		}
	}
	free(t->buckets);
	t->buckets = buckets;
	t->nbuckets = nb;
}

/* Finds or adds the category, keeping the list in name order. */
static struct category *table_category(struct table *t, const char *name)
{
	struct category **pos = &t->cats, *c;
	int cmp = 1;

	while (*pos && (cmp = strcmp((*pos)->name, name)) < 0)
		pos = &(*pos)->next;
	if (!cmp)
		return *pos;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->name = strdup(name);
	if (!c->name) {
		free(c);
		return NULL;
	}
	c->next = *pos;
	*pos = c;
	t->ncats++;
	return c;
}

/* Adds an item, or restocks it: a restock keeps the item's first category. */
static int table_add(struct table *t, const char *name, long count, double price, const char *cat)
{
	size_t b = hash(name, t->nbuckets);
	struct item *it;

	for (it = t->buckets[b]; it; it = it->next) {
		if (!strcmp(it->name, name)) {
			it->count += count;
			it->price = price;
			return 0;
		}
	}
	it = calloc(1, sizeof(*it));
	if (!it)
		return -1;
	it->name = strdup(name);
	it->cat = table_category(t, cat);
	if (!it->name || !it->cat) {
		free(it->name);
		free(it);
		return -1;
	}
	it->cat->nitems++;
	it->count = count;
	it->price = price;
	it->next = t->buckets[b];
	t->buckets[b] = it;
	if (++t->n > t->nbuckets / 4 * 3)
		table_grow(t);
	return 0;
}

static void load(const char *path, struct table *t)
{
	char *line = NULL, name[64], cat[32];
	size_t size = 0, lineno = 0;
	double price;
	FILE *fp;
	long n;
	int got;

	fp = fopen(path, "r");
	if (!fp)
		die(path);
	for (errno = 0; getline(&line, &size, fp) >= 0; errno = 0) {
		lineno++;
		strcpy(cat, "misc");
		got = sscanf(line, "%63s %ld %lf %31s", name, &n, &price, cat);
		if (got <= 0 || name[0] == '#')
			continue;
		if (got < 3 || n < 0 || price < 0) {
			fprintf(stderr, "inventory: %s:%zu: expected NAME COUNT PRICE [CATEGORY]\n",
				path, lineno);
			exit(1);
		}
		if (table_add(t, name, n, price, cat))
			oom();
	}
	if (errno || ferror(fp))	/* getline()'s ENOMEM does not set the error flag */
		die(path);
	free(line);
	fclose(fp);
}

static int cmp_item(const void *a, const void *b)
{
	return strcmp((*(struct item *const *)a)->name, (*(struct item *const *)b)->name);
}

/* Runs on a worker: the units, value and most valuable item of one category. */
static void cat_summarise(struct category *c, struct item **items, size_t n)
{
	struct item *best = NULL;
	size_t i;

	for (i = 0; i < n; i++) {
		if (items[i]->cat != c)
			continue;
		c->units += items[i]->count;
		c->value += items[i]->count * items[i]->price;
		if (!best || items[i]->count * items[i]->price > best->count * best->price)
			best = items[i];
	}
	c->top = strdup(best->name);
}

static void *worker(void *arg)
{
	struct pool *p = arg;
	struct job *job;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		while (!p->head && !p->stop)
			pthread_cond_wait(&p->work, &p->lock);
		job = p->head;
		if (!job)
			break;
		p->head = job->next;
		pthread_mutex_unlock(&p->lock);
		cat_summarise(job->cat, p->items, p->nitems);
		free(job);
		pthread_mutex_lock(&p->lock);
		if (--p->pending == 0)
			pthread_cond_broadcast(&p->done);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

static int pool_submit(struct pool *p, struct category *cat)
{
	struct job *job;

	/* Count the job before it exists, so that a worker finishing early cannot signal done. */
	pthread_mutex_lock(&p->lock);
	p->pending++;
	pthread_mutex_unlock(&p->lock);
	job = malloc(sizeof(*job));
	/* BUG(3): the job is dropped but stays counted in pending, so nobody signals done. */
	if (!job)
		return -1;
	job->cat = cat;
	pthread_mutex_lock(&p->lock);
	job->next = p->head;
	p->head = job;
	pthread_cond_signal(&p->work);
	pthread_mutex_unlock(&p->lock);
	return 0;
}

static void summarise(struct table *t, struct item **items)
{
	struct pool p = { .lock = PTHREAD_MUTEX_INITIALIZER, .work = PTHREAD_COND_INITIALIZER,
			  .done = PTHREAD_COND_INITIALIZER, .items = items, .nitems = t->n };
	pthread_t threads[NWORKERS];
	struct category *c;
	int i, err = 0;

	for (i = 0; i < NWORKERS; i++) {
		errno = pthread_create(&threads[i], NULL, worker, &p);
		if (errno)
			die("cannot start worker threads");
	}
	for (c = t->cats; c && !err; c = c->next)
		err = pool_submit(&p, c);

	/* The jobs already queued must finish before the workers stop. */
	pthread_mutex_lock(&p.lock);
	while (p.pending)
		pthread_cond_wait(&p.done, &p.lock);
	p.stop = 1;
	pthread_cond_broadcast(&p.work);
	pthread_mutex_unlock(&p.lock);
	for (i = 0; i < NWORKERS; i++)
		pthread_join(threads[i], NULL);
	for (c = t->cats; c; c = c->next)
		err |= !c->top;
	if (err)
		oom();
}

static void row_free(struct row *row)
{
	if (row) {
		free(row->text);
		free(row);
	}
}

/* One line per item, in name order; *width grows to the longest one. */
static struct row **build_rows(struct item **items, size_t n, int namew, size_t *width)
{
	size_t cap = 1, used = 0, i;
	struct row **rows, **tmp, *row;
	struct item *it;

	rows = calloc(cap, sizeof(*rows));	/* zeroed: the cleanup frees every slot */
	if (!rows)
		return NULL;
	for (i = 0; i < n; i++) {
		if (used == cap) {
			tmp = realloc(rows, 2 * cap * sizeof(*rows));
			if (!tmp)
				goto fail;
			rows = tmp;	/* BUG(2): the new slots are not zeroed */
			cap *= 2;
		}
		row = malloc(sizeof(*row));
		if (!row)
			goto fail;
		it = items[i];
		row->len = asprintf(&row->text, "%-*s %6ld %9.2f %11.2f  %s", namew, it->name,
				    it->count, it->price, it->count * it->price, it->cat->name);
		if (row->len < 0) {
			free(row);
			goto fail;
		}
		if ((size_t)row->len > *width)
			*width = (size_t)row->len;
		rows[used++] = row;
	}
	return rows;
fail:
	/* BUG(2), continued: after the first grow the slots from rows[used] on hold junk. */
	for (i = 0; i < cap; i++)
		row_free(rows[i]);
	free(rows);
	return NULL;
}

static void sb_append(struct strbuf *sb, const char *s, size_t len)
{
	size_t cap = sb->cap ? sb->cap : 256;
	char *buf;

	while (cap < sb->len + len + 1)
		cap *= 2;
	if (cap != sb->cap) {
		buf = realloc(sb->buf, cap);
		if (!buf)
			oom();
		sb->buf = buf;
		sb->cap = cap;
	}
	memcpy(sb->buf + sb->len, s, len);
	sb->len += len;
	sb->buf[sb->len] = '\0';
}

static void __attribute__((format(printf, 2, 3)))
sb_printf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int len;

	va_start(ap, fmt);
	len = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (len < 0)
		oom();
	sb_append(sb, s, (size_t)len);
	free(s);
}

static char *report(const char *title, struct table *t, struct item **items, size_t *len)
{
	struct strbuf sb = { NULL, 0, 0 };
	size_t i, namew = 4, width;
	struct category *c;
	struct row **rows;
	double value = 0;
	char ruler[128], *line;
	long units = 0;
	int n;

	for (i = 0; i < t->n; i++)
		if (strlen(items[i]->name) > namew)
			namew = strlen(items[i]->name);
	width = namew + 39;	/* the column titles */
	rows = build_rows(items, t->n, (int)namew, &width);
	if (!rows)
		oom();
	if (width >= sizeof(ruler))	/* only with absurd counts or prices */
		width = sizeof(ruler) - 1;
	memset(ruler, '-', width);
	ruler[width] = '\0';

	sb_printf(&sb, "Inventory report: %s (%zu items in %zu categories)\n\n", title, t->n,
		  t->ncats);
	sb_printf(&sb, "%-*s %6s %9s %11s  %s\n%s\n", (int)namew, "name", "count", "price", "value",
		  "category", ruler);
	for (i = 0; i < t->n; i++) {
		sb_append(&sb, rows[i]->text, (size_t)rows[i]->len);
		sb_append(&sb, "\n", 1);
		row_free(rows[i]);
	}
	free(rows);
	sb_printf(&sb, "%s\n\n%-12s %5s %6s %11s  %s\n", ruler, "category", "items", "units",
		  "value", "top item");
	for (c = t->cats; c; c = c->next) {
		units += c->units;
		value += c->value;
		n = asprintf(&line, "%-12s %5zu %6ld %11.2f  %s\n", c->name, c->nitems, c->units,
			     c->value, c->top);
		/* BUG(4): a line that cannot be formatted is left out; the exit status stays 0. */
		if (n < 0)
			continue;
		sb_append(&sb, line, (size_t)n);
		free(line);
	}
	sb_printf(&sb, "\n%-12s %5zu %6ld %11.2f\n", "total", t->n, units, value);
	*len = sb.len;
	return sb.buf;
}

int main(int argc, char **argv)
{
	struct table t = { .nbuckets = 8 };
	struct item **items, *it;
	struct category *c;
	char *title, *out;
	size_t i, len = 0;

	if (argc != 2) {
		fputs("usage: inventory FILE\n", stderr);
		return 2;
	}
	title = make_title(argv[1]);
	t.buckets = calloc(t.nbuckets, sizeof(*t.buckets));
	if (!t.buckets)
		oom();
	load(argv[1], &t);

	items = malloc((t.n ? t.n : 1) * sizeof(*items));
	if (!items)
		oom();
	for (i = 0; i < t.nbuckets; i++)
		for (it = t.buckets[i]; it; it = it->next)
			items[len++] = it;
	qsort(items, t.n, sizeof(*items), cmp_item);
	summarise(&t, items);

	out = report(title, &t, items, &len);
	if (fwrite(out, 1, len, stdout) != len || fflush(stdout))
		die("stdout");

	free(out);
	free(items);
	for (i = 0; i < t.nbuckets; i++) {
		while ((it = t.buckets[i])) {
			t.buckets[i] = it->next;
			free(it->name);
			free(it);
		}
	}
	free(t.buckets);
	while ((c = t.cats)) {
		t.cats = c->next;
		free(c->name);
		free(c->top);
		free(c);
	}
	free(title);
	return 0;
}
