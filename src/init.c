/*
 * init.c - lazy initialisation: the first allocation of the process reads the
 * configuration, whoever makes it (ld.so and libstdc++ allocate before any
 * constructor of ours runs); the constructor makes sure it happened and
 * then has route.c install the routes meaning.c chose for the policy.
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
#include "sys.h"
#include "fd.h"
#include "ipcache.h"
#include "cgroup.h"
#include "fork.h"
#include "apply.h"
#include "init_once.h"

static int config_errors;

extern char **environ;

static void report_error(const char *msg)
{
	gfp_log(gfp_strict ? GFP_LOG_ERROR : GFP_LOG_WARNING, "%s%s", msg,
	        gfp_strict ? "" : " [ignored: GFP_STRICT=0]");
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
		gfp_strict = false;
	else if (strcmp(s, "1") != 0)
		config_fail("GFP_STRICT: expected 0 (warn about bad settings) or 1 (exit 125, the "
		            "default)");
}

/* Each contradiction is an error; under GFP_STRICT=0 a warning, and the key
 * it names is ignored (back to its default), as the warning says. */
static void check_contradictions(void)
{
	size_t drop;
	const char *why;
	while ((why = config_contradiction(&gfp_policy, &drop))) {
		config_errors++;
		if (gfp_strict) {
			gfp_log(GFP_LOG_ERROR, "GFP_POLICY: %s", why);
			return;
		}
		gfp_log(GFP_LOG_WARNING, "GFP_POLICY: %s [%s ignored: GFP_STRICT=0]", why,
		        gfp_keys[drop].name);
		config_reset_key(&gfp_policy, drop);
	}
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

	if (config_errors && gfp_strict)
		sys_exit_group(GFP_EXIT_CONFIG);

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
	if (config_errors && gfp_strict)
		sys_exit_group(GFP_EXIT_CONFIG);
	/* After every other check: a bad policy leaves no tree behind. */
	if (tree_init(gfp_secure, err_msg, sizeof(err_msg)) != 0) {
		config_fail(err_msg);
		if (gfp_strict)
			sys_exit_group(GFP_EXIT_CONFIG);
	}

	cgroup_resolve_policy(); /* limit=cgroup: which cgroup, and is there a limit */
	apply_policy();
	if (records_on())
		crash_init();

	if (gfp_policy.glibc_warn)
		compat_warn_glibc_env();
	if (gfp_policy.confirm)
		log_effective_policy();

	thread_life_init();
	fork_handlers_install();
}

bool init_ensure(void)
{
	if (likely(__atomic_load_n(&init_state, __ATOMIC_ACQUIRE) == INIT_DONE))
		return true;
	/* In theory ld.so could allocate before libc has set environ; then the
	 * configuration cannot be read yet and the call passes through. */
	if (environ == NULL)
		return false;
	gfp_tls.guard++;
	init_once_lock();
	if (__atomic_load_n(&init_state, __ATOMIC_RELAXED) != INIT_DONE) {
		do_init();
		__atomic_store_n(&init_state, INIT_DONE, __ATOMIC_RELEASE);
	}
	init_once_unlock();
	gfp_tls.guard--;
	return true;
}

void init_fini(void)
{
	if (__atomic_load_n(&init_state, __ATOMIC_ACQUIRE) != INIT_DONE)
		return;
	gfp_tls.guard++;
	ctl_stop();
	stats_report_at_exit();
	tree_leave();
	gfp_tls.guard--;
}
