/*
 * init.c - lazy initialisation: the first allocation of the process reads the
 * configuration, whoever makes it (ld.so and libstdc++ allocate before any
 * constructor of ours runs); the constructor makes sure it happened and
 * then has route.c choose the routes from the policy.
 *
 * Reading the configuration must not allocate through the policy: it runs
 * with the thread's guard raised, so anything libc allocates on its behalf
 * goes straight to jemalloc. A bad configuration ends the process with
 * status 125 before main, so a typo never silently turns a policy off.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gfp_build.h"
#include "internal.h"
#include "fd.h"
#include "ipcache.h"
#include "cgroup.h"
#include "kswapd.h"
#include "mapped.h"
#include "route.h"

struct gfp_policy gfp_policy;
bool gfp_policy_active;
bool gfp_slowpath_on;
bool gfp_policy_plain;
bool gfp_free_direct_ok;
bool gfp_secure;

enum { INIT_NONE, INIT_DONE };
static int init_state; /* atomic */
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static bool strict = true;
static int config_errors;

extern char **environ;

bool gfp_config_strict(void)
{
	return strict;
}

static void report_error(const char *msg)
{
	gfp_log(strict ? GFP_LOG_ERROR : GFP_LOG_WARNING, "%s%s", msg,
	        strict ? "" : " [ignored: GFP_STRICT=0]");
}

static void config_fail(const char *msg)
{
	report_error(msg);
	config_errors++;
}

/* err: what read or open said; 0: the path is not a regular file (mode). */
static void policy_file_refused(const char *path, int err, mode_t mode)
{
	char msg[1024], q[512];
	gfp_quote(q, sizeof(q), path, strlen(path));
	if (err)
		gfp_snprintf(msg, sizeof(msg),
		             "GFP_POLICY_FILE: cannot read '%s': %s (fix the path or unset "
		             "GFP_POLICY_FILE)",
		             q, gfp_strerror(err));
	else
		gfp_snprintf(msg, sizeof(msg),
		             "GFP_POLICY_FILE: '%s' is not a regular file (%s) (give a file of "
		             "key=value lines, or the pairs in GFP_POLICY)",
		             q, gfp_fd_type(mode));
	config_fail(msg);
}

/* The policy file: read whole into a static buffer (no malloc here). A
 * regular file only: a FIFO or a terminal (/dev/stdin) would wait before
 * main, and read the program's input. */
static void read_policy_file(const char *path, struct gfp_cfg_err *err)
{
	static char text[64 * 1024];
	char src[600], q[512];
	gfp_snprintf(src, sizeof(src), "GFP_POLICY_FILE %s",
	             gfp_quote(q, sizeof(q), path, strlen(path)));
	struct stat st;
	if (stat(path, &st) != 0) {
		policy_file_refused(path, errno, 0);
		return;
	}
	if (!S_ISREG(st.st_mode)) {
		policy_file_refused(path, 0, st.st_mode);
		return;
	}
	/* O_NONBLOCK: should the path have become a FIFO since, open does not
	 * wait for a writer; fstat then says what was opened. */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		policy_file_refused(path, errno, 0);
		return;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		policy_file_refused(path, 0, st.st_mode);
		return;
	}
	size_t len = 0;
	int read_errno = 0;
	for (;;) {
		ssize_t r = read(fd, text + len, sizeof(text) - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			read_errno = errno;
		if (r <= 0)
			break;
		len += (size_t)r;
		if (len == sizeof(text))
			break;
	}
	close(fd);
	const char *nul = memchr(text, '\0', len);
	if (read_errno) {
		policy_file_refused(path, read_errno, 0);
		return;
	}
	if (len == sizeof(text) || nul) {
		char msg[1024];
		if (nul)
			gfp_snprintf(
			    msg, sizeof(msg),
			    "%s: a NUL byte at offset %zu: not a text file (write key=value "
			    "lines)",
			    src, (size_t)(nul - text));
		else
			gfp_snprintf(msg, sizeof(msg), "%s: larger than %zu bytes (split it up)",
			             src, sizeof(text) - 1);
		config_fail(msg);
		return;
	}
	config_errors += config_parse(&gfp_policy, src, text, len, true, report_error, err);
}

static void read_strict(void)
{
	const char *s = secure_getenv("GFP_STRICT");
	if (!s)
		return;
	if (strcmp(s, "0") == 0)
		strict = false;
	else if (strcmp(s, "1") != 0)
		config_fail("GFP_STRICT: expected 0 (warn about bad settings) or 1 (exit 125, the "
		            "default)");
}

const char *config_contradiction(const struct gfp_policy *p, size_t *drop)
{
	if (p->set[GFP_K_min_free] && p->min_free && (!p->limit || p->min_free > p->limit / 2)) {
		*drop = GFP_K_min_free;
		return p->limit ? "min_free may be at most half of limit (lower min_free or raise "
		                  "limit)"
		                : "min_free needs a limit (set limit=SIZE too)";
	}
	if (p->reserve_thread && !p->limit && !p->reserve_prefault) {
		*drop = GFP_K_reserve_thread;
		return "reserve.thread needs a budget to reserve from (set limit=SIZE) or pages of "
		       "its own (set reserve.prefault=1)";
	}
	if (p->limit_scope == GFP_SCOPE_TREE && !p->limit) {
		*drop = GFP_K_limit_scope;
		return "limit.scope=tree shares a limit with the process's children: set "
		       "limit=SIZE too";
	}
	if (p->limit && p->limit < 64 * 1024) {
		*drop = GFP_K_limit;
		return "limit below 64K cannot hold a process (raise limit)";
	}
	if (p->kswapd && !p->limit) {
		*drop = GFP_K_kswapd;
		return "kswapd wakes at the budget's low watermark: it needs a budget (set "
		       "limit=SIZE or limit=cgroup)";
	}
	if (p->kswapd_psi && !p->kswapd) {
		*drop = GFP_K_kswapd_psi;
		return "kswapd.psi wakes the background reclaim thread: it needs kswapd=1";
	}
	if (p->fail_site.v[0] && p->fail_site_hit == 0) {
		*drop = GFP_K_fail_site;
		return "fail.site.hit=last needs a recording run to count the site's hits: give "
		       "the policy to gfp-run --policy, which makes one, or the hit's number";
	}
	if (p->fail_site_call && !p->fail_site.v[0]) {
		*drop = GFP_K_fail_site_call;
		return "fail.site.call names the call at which fail.site's hit comes: it needs "
		       "fail.site=ID (or use fail.nth=N to fail a call by its number alone)";
	}
	if (p->fail_max && p->fail_min > p->fail_max) {
		*drop = GFP_K_fail_max;
		return "fail.min is above fail.max: no request could be injected (lower fail.min "
		       "or "
		       "raise fail.max)";
	}
	return NULL;
}

/* Each contradiction is an error; under GFP_STRICT=0 a warning, and the key
 * it names is ignored (back to its default), as the warning says. */
static void check_contradictions(void)
{
	size_t drop;
	const char *why;
	while ((why = config_contradiction(&gfp_policy, &drop))) {
		config_errors++;
		if (strict) {
			gfp_log(GFP_LOG_ERROR, "GFP_POLICY: %s", why);
			return;
		}
		gfp_log(GFP_LOG_WARNING, "GFP_POLICY: %s [%s ignored: GFP_STRICT=0]", why,
		        gfp_keys[drop].name);
		config_reset_key(&gfp_policy, drop);
	}
}

/* reserve.mode=tokens with prefaulted pools and no budget: a thread's
 * requests are served from its pool before jemalloc, so every call of the
 * thread must reach the shim (route.c). */
bool policy_pool_first(void)
{
	return gfp_policy.reserve_mode == GFP_RESERVE_TOKENS && gfp_policy.reserve_prefault &&
	       !gfp_budget_on;
}

/* What the policy's keys make of the process; again after gfp-ctl set. */
void policy_derive(void)
{
	/* Any key that shapes allocation puts the process under the policy;
	 * only the ones about messages (and the control socket) leave it
	 * idle (plain jemalloc). The fail.* keys count only while they can
	 * inject: a gfp-ctl set that disarms makes the process idle again. */
	/* rules shape what failing requests do */
	bool slow = gfp_rules_on || config_shapes(&gfp_policy);
	/* What the ranges of ld.so and the shim are, before injection can
	 * look at them (a set may turn a process that was idle active). */
	bool injects =
	    gfp_policy.fail_probability > 0 || gfp_policy.fail_nth > 0 || gfp_policy.fail_site.v[0];
	bool active_soon =
	    slow || injects || gfp_policy.stats != 0 || records_on() || gfp_policy.junk;
	if (active_soon) {
		static bool ready;
		if (!ready) {
			unwind_init();
			site_init();
			ready = true;
		}
	}
	budget_init();
	inject_init();
	profile_init();
	/* (stats=paths turns gfp_inject_on on only to count: it injects nothing) */
	gfp_slowpath_on = slow || (injects && gfp_inject_on);
	/* statistics count on the common path too. With reserve.mode=tokens a
	 * prefaulted reservation serves its thread first (attempt_jemalloc):
	 * with a budget its thread draws under the lock anyway, without one
	 * only the general path knows to try the pool first. */
	gfp_policy_plain = !gfp_inject_on && !policy_pool_first() && !gfp_policy.junk;
	/* A free needs the engine only to be counted, to top a thread's reserve
	 * up, or to wake a waiter (thread_update_free_direct). */
	gfp_free_direct_ok = !gfp_policy.stats && !gfp_policy.reserve_thread;
	/* Statistics and records only watch: they need the policy path but
	 * must not change what a failing request does; failures must be seen
	 * to be recorded. The junk fill sees every block handed out. */
	bool active = gfp_slowpath_on || gfp_policy.stats != 0 || records_on() || gfp_policy.junk;
	__atomic_store_n(&gfp_policy_active, active, __ATOMIC_RELEASE);
}

static void log_effective_policy(void)
{
	char line[2048];
	struct gfp_buf b = {line, sizeof(line), 0};
	gfp_buf_printf(&b, "gfpshim %s policy:", GFP_VERSION);
	for (size_t i = 0; i < GFP_KEY_COUNT; i++) {
		char v[256];
		struct gfp_buf vb = {v, sizeof(v), 0};
		config_format_value(&gfp_keys[i], &gfp_policy, &vb);
		gfp_buf_printf(&b, " %s=", gfp_keys[i].name);
		gfp_buf_quote(&b, v, vb.len);
	}
	if (gfp_rules_on) {
		gfp_buf_printf(&b, " rules='");
		gfp_buf_quote(&b, rules_text(), strlen(rules_text()));
		gfp_buf_printf(&b, "'");
	}
	gfp_log(GFP_LOG_INFO, "%s", line);
}

static void atfork_prepare(void)
{
	unwind_setup_atfork_prepare();
	unwind_atfork_prepare(); /* before any lock: an unwinder may take them */
	kswapd_atfork_prepare(); /* first: its round takes the locks below */
	pthread_mutex_lock(&init_lock);
	thread_atfork_prepare();
	mapped_atfork_prepare();
}

static void atfork_parent(void)
{
	mapped_atfork_parent();
	thread_atfork_parent();
	pthread_mutex_unlock(&init_lock);
	kswapd_atfork_parent();
	unwind_atfork_parent();
}

static void atfork_child(void)
{
	unwind_setup_atfork_child();
	unwind_atfork_child();
	kswapd_atfork_child();
	cgroup_atfork_child();
	vmstat_atfork_child();
	mapped_atfork_child(); /* before the budget's sums and the tree's slot */
	thread_atfork_child();
	tree_atfork_child(); /* before the budget publishes to a slot */
	budget_atfork_child();
	inject_atfork_child();
	reclaim_atfork_child();
	ipcache_atfork_child();
	profile_report_atfork_child();
	pool_atfork_child();
	pthread_mutex_init(&init_lock, NULL);
}

/* The process that read the configuration (a fork's child inherits it). */
static pid_t init_pid;

static void do_init(void)
{
	init_pid = getpid();
	backend_init();
	gfp_secure = getauxval(AT_SECURE) != 0;
	config_defaults(&gfp_policy);
	read_strict();

	char err_msg[1024];
	const char *log = secure_getenv("GFP_LOG");
	if (log_set_dest(log, gfp_secure, err_msg, sizeof(err_msg)) != 0)
		config_fail(err_msg);

	struct gfp_cfg_err err = {0};
	const char *file = secure_getenv("GFP_POLICY_FILE");
	if (file && *file && !gfp_secure)
		read_policy_file(file, &err);
	const char *policy = secure_getenv("GFP_POLICY");
	if (policy)
		config_errors += config_parse(&gfp_policy, "GFP_POLICY", policy, strlen(policy),
		                              false, report_error, &err);

	if (config_errors && strict)
		_exit(GFP_EXIT_CONFIG);

	const char *record = secure_getenv("GFP_RECORD");
	if (records_set_dest(record, gfp_secure, err_msg, sizeof(err_msg)) != 0)
		config_fail(err_msg);

	/* (GFP_INJECT_PID: the other processes of a sweep's run report nothing) */
	const char *report = secure_getenv("GFP_REPORT");
	if (!inject_other_process() &&
	    stats_set_report(report, gfp_secure, err_msg, sizeof(err_msg)) != 0)
		config_fail(err_msg);
	check_contradictions();
	const char *rules = secure_getenv("GFP_RULES");
	if (rules_init(rules, err_msg, sizeof(err_msg)) != 0)
		config_fail(err_msg);
	if (config_errors && strict)
		_exit(GFP_EXIT_CONFIG);
	/* After every other check: a bad policy leaves no tree behind. */
	if (tree_init(err_msg, sizeof(err_msg)) != 0) {
		config_fail(err_msg);
		if (strict)
			_exit(GFP_EXIT_CONFIG);
	}

	cgroup_resolve_policy(); /* limit=cgroup: which cgroup, and is there a limit */
	policy_derive();
	if (records_on())
		crash_init();

	if (gfp_policy.glibc_warn)
		compat_warn_glibc_env();
	if (gfp_policy.confirm)
		log_effective_policy();

	thread_init();
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

bool gfp_init(void)
{
	if (likely(__atomic_load_n(&init_state, __ATOMIC_ACQUIRE) == INIT_DONE))
		return true;
	/* In theory ld.so could allocate before libc has set environ; then the
	 * configuration cannot be read yet and the call passes through. */
	if (environ == NULL)
		return false;
	gfp_tls.guard++;
	pthread_mutex_lock(&init_lock);
	if (__atomic_load_n(&init_state, __ATOMIC_RELAXED) != INIT_DONE) {
		do_init();
		__atomic_store_n(&init_state, INIT_DONE, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&init_lock);
	gfp_tls.guard--;
	return true;
}

void gfp_fini_exit(void)
{
	if (__atomic_load_n(&init_state, __ATOMIC_ACQUIRE) != INIT_DONE || getpid() != init_pid)
		return;
	gfp_tls.guard++;
	stats_report_at_exit();
	gfp_tls.guard--;
}

void gfp_fini(void)
{
	if (__atomic_load_n(&init_state, __ATOMIC_ACQUIRE) != INIT_DONE)
		return;
	gfp_tls.guard++;
	ctl_stop();
	stats_report_at_exit();
	tree_leave();
	gfp_tls.guard--;
}
