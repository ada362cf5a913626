/*
 * ctl_requests.h - ctl_requests.c: the control socket's requests, as the
 * listener (ctl.c) hands them over.
 */
#ifndef GFP_CTL_REQUESTS_H
#define GFP_CTL_REQUESTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#pragma GCC visibility push(hidden)

/* CLOCK_MONOTONIC in milliseconds: the listener's deadlines. */
int64_t ctl_now_ms(void);
/* The reply that follows goes to `fd`; what the client has not taken by
 * `deadline` (0: what its socket takes now) it does not get. */
void ctl_reply_begin(int fd, int64_t deadline);
void ctl_replyf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Serves one request, `len` bytes as read (the line, its newline, and
 * whatever came after it); a client of another uid (`refused`) is only
 * told so. */
void ctl_serve(char *req, size_t len, bool refused);

#pragma GCC visibility pop

#endif /* GFP_CTL_REQUESTS_H */
