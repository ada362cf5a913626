/*
 * gfp-ctl - read and change the policy of a running process (ctl=1).
 *
 *   gfp-ctl PID get [KEY]            the policy, or one key, as key=value
 *   gfp-ctl PID set KEY=VALUE...     change keys at once (GFP_POLICY syntax)
 *   gfp-ctl PID report               the statistics now (GFP_REPORT JSON)
 *
 * Exit status: 0 done; 1 the process answered with an error (refused, or a
 * key that cannot change at run time); 125 a set the policy parser rejects;
 * 2 usage, or no process listening for this user.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "policy.h"

#define EXIT_USAGE 2

static void usage(FILE *f)
{
	fprintf(f, "usage: gfp-ctl PID get [KEY]\n"
	           "       gfp-ctl PID set KEY=VALUE...\n"
	           "       gfp-ctl PID report\n"
	           "Talks to a process started with GFP_POLICY ctl=1 (same user only).\n");
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
		usage(stdout);
		return 0;
	}
	if (argc < 3) {
		usage(stderr);
		return EXIT_USAGE;
	}
	char *end;
	long pid = strtol(argv[1], &end, 10);
	const char *cmd = argv[2];
	bool is_set = !strcmp(cmd, "set");
	if (*end || pid <= 0 || (!is_set && strcmp(cmd, "get") && strcmp(cmd, "report")) ||
	    (is_set && argc < 4) || (!strcmp(cmd, "get") && argc > 4) ||
	    (!strcmp(cmd, "report") && argc > 3)) {
		usage(stderr);
		return EXIT_USAGE;
	}
	/* set needs a key: an empty argument is a mistake on this side. */
	bool any = false;
	for (int i = 3; i < argc; i++)
		any |= argv[i][strspn(argv[i], " \t;")] != '\0';
	if (is_set && !any) {
		fprintf(stderr, "gfp-ctl: error: set needs KEY=VALUE\n");
		usage(stderr);
		return EXIT_USAGE;
	}
	/* One request line: the command and its arguments, set's joined by ';'. */
	static char req[64 * 1024];
	size_t len = (size_t)snprintf(req, sizeof(req), "%s", cmd);
	for (int i = 3; i < argc && len < sizeof(req); i++)
		len += (size_t)snprintf(req + len, sizeof(req) - len, "%s%s", i == 3 ? " " : ";",
		                        argv[i]);
	if (len >= sizeof(req) - 1 || strchr(req, '\n')) {
		fprintf(stderr, "gfp-ctl: error: the request is too long or has a newline\n");
		return EXIT_USAGE;
	}
	req[len++] = '\n';

	char path[108], why[512];
	int fd = connect_to((pid_t)pid, path, sizeof(path), why, sizeof(why));
	if (fd < 0) {
		fprintf(stderr,
		        "gfp-ctl: error: no control socket for process %ld (%s): start it with "
		        "GFP_POLICY='ctl=1' as this user\n",
		        pid, strerror(errno));
		if (why[0])
			fprintf(stderr, "gfp-ctl: note: %s\n", why);
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
		fprintf(stderr, "gfp-ctl: error: cannot send to %s: %s\n", path,
		        strerror(send_errno));
		return EXIT_USAGE;
	}
	if (first) {
		fprintf(stderr,
		        "gfp-ctl: error: process %ld closed the connection without a reply\n", pid);
		return 1;
	}
	return ctl_reply_status(head, is_set);
}
