/*
 * gfp-ctl - read and change the policy of a running process (ctl=1).
 *
 *   gfp-ctl PID get [KEY]            the policy, or one key, as key=value
 *   gfp-ctl PID set KEY=VALUE...     change keys at once (GFP_POLICY syntax)
 *   gfp-ctl PID report               the statistics now (GFP_REPORT JSON)
 *
 * Exit status: 0 done; 1 the process answered with an error (refused, or a
 * key that cannot change at run time, or closed the connection without a
 * reply); 125 a set the policy parser rejects; 2 usage, or no process
 * listening for this user.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "common.h"
#include "policy.h"

static void usage(void)
{
	printf("usage: gfp-ctl PID get [KEY]\n"
	       "       gfp-ctl PID set KEY=VALUE...\n"
	       "       gfp-ctl PID report\n"
	       "       gfp-ctl --help | --version\n"
	       "Talks to a process started with GFP_POLICY ctl=1 (same user only): get prints\n"
	       "its policy or one key as key=value, set changes keys at once (GFP_POLICY\n"
	       "syntax), report prints its statistics now (GFP_REPORT JSON).\n"
	       "Exit status:\n"
	       "  0    done\n"
	       "  1    the process answered with an error (refused, an unknown key, a key\n"
	       "       that cannot change at run time) or closed without a reply\n"
	       "  2    usage error, or no process of this user listening at PID\n"
	       "  125  set: the policy parser rejects the keys (as GFP_POLICY would)\n"
	       "See gfp-ctl(1) and gfpshim(7).\n");
}

/* The command line's mistakes, each named; NULL when it is well formed. */
static const char *bad_usage(int argc, char **argv, long *pid)
{
	static char why[256];
	if (argc < 3)
		return "expected PID and a command: get, set or report";
	char *end;
	errno = 0;
	*pid = strtol(argv[1], &end, 10);
	if (end == argv[1] || *end || errno || *pid <= 0 || *pid > INT_MAX) {
		snprintf(why, sizeof(why), "'%s' is not a process id", argv[1]);
		return why;
	}
	const char *cmd = argv[2];
	if (!strcmp(cmd, "set")) {
		/* set needs a key: an empty argument is a mistake on this side. */
		bool any = false;
		for (int i = 3; i < argc; i++)
			any |= argv[i][strspn(argv[i], " \t;")] != '\0';
		return any ? NULL : "set needs KEY=VALUE";
	}
	if (!strcmp(cmd, "get"))
		return argc > 4 ? "get takes at most one KEY" : NULL;
	if (!strcmp(cmd, "report"))
		return argc > 3 ? "report takes no argument" : NULL;
	snprintf(why, sizeof(why), "unknown command '%s' (get, set or report)", cmd);
	return why;
}

/* why[]: what was wrong with a directory that was looked in, if anything. */
static int connect_to(pid_t pid, char *path, size_t n, char *why, size_t wn)
{
	int last = ENOENT;
	why[0] = '\0';
	for (int which = 0; which < 2; which++) {
		char bad[512];
		if (ctl_socket_path(which, pid, path, n, false, bad, sizeof(bad)) != 0) {
			/* A directory that does not exist says nothing. */
			if (!why[0] && errno != ENOENT)
				snprintf(why, wn, "%s", bad);
			continue;
		}
		struct sockaddr_un addr = {.sun_family = AF_UNIX};
		snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return -1;
		if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0)
			return fd;
		last = errno;
		close(fd);
	}
	errno = last;
	return -1;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		usage();
		return 0;
	}
	if (argc >= 2 && !strcmp(argv[1], "--version"))
		return tool_version();
	if (argc >= 2 && argv[1][0] == '-' && argv[1][1] && !isdigit((unsigned char)argv[1][1]))
		return tool_usage_error("unknown option '%s'", argv[1]);
	long pid = 0;
	const char *why_bad = bad_usage(argc, argv, &pid);
	if (why_bad)
		return tool_usage_error("%s", why_bad);
	const char *cmd = argv[2];
	bool is_set = !strcmp(cmd, "set");
	/* One request line: the command and its arguments, set's joined by ';'. */
	static char req[64 * 1024];
	size_t len = (size_t)snprintf(req, sizeof(req), "%s", cmd);
	for (int i = 3; i < argc && len < sizeof(req); i++)
		len += (size_t)snprintf(req + len, sizeof(req) - len, "%s%s", i == 3 ? " " : ";",
		                        argv[i]);
	if (len >= sizeof(req) - 1 || strchr(req, '\n')) {
		tool_error("the request is too long or has a newline");
		return EXIT_USAGE;
	}
	req[len++] = '\n';

	char path[108], why[512];
	int fd = connect_to((pid_t)pid, path, sizeof(path), why, sizeof(why));
	if (fd < 0) {
		tool_error("no control socket for process %ld (%s): start it with "
		           "GFP_POLICY='ctl=1' as this user",
		           pid, strerror(errno));
		if (why[0])
			tool_note("%s", why);
		return EXIT_USAGE;
	}
	/* A refusal may close the socket before the request is read: the
	 * reply, if any, still says why. */
	signal(SIGPIPE, SIG_IGN);
	bool sent = gfp_write_all(fd, req, len);
	int send_errno = errno;
	shutdown(fd, SHUT_WR);
	/* The reply: copied through, an "error:" one to stderr; its first line
	 * (kept whole, however the reads split it) decides the exit status. */
	static char buf[1 << 16];
	char head[512];
	size_t hl = 0;
	bool first = true, error = false;
	ssize_t n;
	while ((n = read(fd, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR)) {
		if (n < 0)
			continue;
		size_t take = (size_t)n < sizeof(head) - 1 - hl ? (size_t)n : sizeof(head) - 1 - hl;
		memcpy(head + hl, buf, take);
		hl += take;
		first = false;
		error = ctl_reply_is_error(head, hl);
		fwrite(buf, 1, (size_t)n, error ? stderr : stdout);
	}
	head[hl] = '\0';
	char *eol = strchr(head, '\n');
	if (eol)
		*eol = '\0';
	close(fd);
	if (first && !sent) {
		tool_error("cannot send to %s: %s", path, strerror(send_errno));
		return EXIT_USAGE;
	}
	if (first) {
		tool_error("process %ld closed the connection without a reply", pid);
		return 1;
	}
	return ctl_reply_status(head, is_set);
}
