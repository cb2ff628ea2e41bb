/*
 * floor.c - the physical-limit reference server for the peer lab.
 *
 * Single-threaded, non-blocking, level-triggered epoll.  For every readable
 * connection it does ONE read() into a buffer, counts complete requests by
 * scanning for "\r\n\r\n" (GET only, no bodies; a terminator split across two
 * reads is still found via a 3-byte carry), and answers with ONE write() that
 * holds that many copies of a canned keep-alive "Hello, World!" response.
 * It does no real HTTP parsing, no routing, no Date header: it is the floor
 * of what any server can cost per request on this kernel (accept + epoll +
 * read + write syscalls and TCP loopback).
 *
 * For the short-lived-connection scenario it honours one header, spelled
 * exactly as the load generator sends it: a read holding
 * "\r\nConnection: close\r\n" is answered once, with "Connection: close",
 * and the server closes first (as every real server does), so the floor pays
 * for the same accept, teardown and TIME_WAIT as the others.
 *
 * env PORT (default 8080).  WORKERS is accepted but ignored: always 1 thread.
 * Binds 127.0.0.1.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

static const char RESP[] =
    "HTTP/1.1 200 OK\r\n"
    "Server: floor\r\n"
    "Content-Type: text/plain\r\n"
    "Content-Length: 13\r\n"
    "\r\n"
    "Hello, World!";
#define RESP_LEN (sizeof(RESP) - 1)

static const char RESP_CLOSE[] =
    "HTTP/1.1 200 OK\r\n"
    "Server: floor\r\n"
    "Content-Type: text/plain\r\n"
    "Content-Length: 13\r\n"
    "Connection: close\r\n"
    "\r\n"
    "Hello, World!";
static const char CLOSE_HEADER[] = "\r\nConnection: close\r\n";

#define MAX_FDS 65536
#define RBUF 65536

struct conn {
    char carry[3];       /* last bytes of the previous read (no terminator yet) */
    unsigned char ncarry;
    char *out;           /* pending output when a write was short */
    size_t out_len, out_off;
};

static struct conn conns[MAX_FDS];
static char rbuf[3 + RBUF];
static char *wbuf;       /* RESP repeated; grown on demand */
static size_t wbuf_cap;  /* in responses */

static void close_conn(int ep, int fd) {
    epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
    close(fd);
    free(conns[fd].out);
    memset(&conns[fd], 0, sizeof conns[fd]);
}

static int ensure_wbuf(size_t n) {
    if (n <= wbuf_cap) return 0;
    size_t cap = wbuf_cap ? wbuf_cap : 64;
    while (cap < n) cap *= 2;
    char *p = realloc(wbuf, cap * RESP_LEN);
    if (!p) return -1;
    for (size_t i = wbuf_cap; i < cap; i++) memcpy(p + i * RESP_LEN, RESP, RESP_LEN);
    wbuf = p;
    wbuf_cap = cap;
    return 0;
}

/* Try to flush pending output; returns -1 on fatal error. */
static int flush_out(int ep, int fd) {
    struct conn *c = &conns[fd];
    while (c->out_off < c->out_len) {
        ssize_t w = write(fd, c->out + c->out_off, c->out_len - c->out_off);
        if (w < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN) return 0;
            return -1;
        }
        c->out_off += (size_t)w;
    }
    free(c->out);
    c->out = NULL;
    c->out_len = c->out_off = 0;
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};
    epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev);
    return 0;
}

static int on_readable(int ep, int fd) {
    struct conn *c = &conns[fd];
    /* data goes to rbuf+3; the carry sits just before it */
    ssize_t n = read(fd, rbuf + 3, RBUF);
    if (n == 0) return -1;
    if (n < 0) return (errno == EAGAIN || errno == EINTR) ? 0 : -1;

    char *start = rbuf + 3 - c->ncarry;
    memcpy(start, c->carry, c->ncarry);
    char *end = rbuf + 3 + n;
    size_t count = 0;
    char *p = start, *hit;
    while ((hit = memmem(p, (size_t)(end - p), "\r\n\r\n", 4)) != NULL) {
        count++;
        p = hit + 4;
    }
    size_t tail = (size_t)(end - p);
    if (tail > 3) tail = 3;
    memcpy(c->carry, end - tail, tail);
    c->ncarry = (unsigned char)tail;

    if (count == 0) return 0;
    if (memmem(start, (size_t)(end - start), CLOSE_HEADER, sizeof CLOSE_HEADER - 1)) {
        /* One small write to a fresh socket is never short; returning -1 closes. */
        (void)!write(fd, RESP_CLOSE, sizeof RESP_CLOSE - 1);
        return -1;
    }
    if (c->out) { /* still blocked on a previous write: append */
        size_t add = count * RESP_LEN;
        char *q = realloc(c->out, c->out_len + add);
        if (!q) return -1;
        for (size_t i = 0; i < count; i++) memcpy(q + c->out_len + i * RESP_LEN, RESP, RESP_LEN);
        c->out = q;
        c->out_len += add;
        return 0;
    }
    if (ensure_wbuf(count) < 0) return -1;
    size_t len = count * RESP_LEN, off = 0;
    while (off < len) {
        ssize_t w = write(fd, wbuf + off, len - off);
        if (w < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN) break;
            return -1;
        }
        off += (size_t)w;
    }
    if (off < len) {
        c->out = malloc(len - off);
        if (!c->out) return -1;
        memcpy(c->out, wbuf + off, len - off);
        c->out_len = len - off;
        c->out_off = 0;
        struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT, .data.fd = fd};
        epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev);
    }
    return 0;
}

int main(void) {
    signal(SIGPIPE, SIG_IGN);
    const char *ps = getenv("PORT");
    int port = ps && *ps ? atoi(ps) : 8080;

    int lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (lfd < 0) { perror("socket"); return 1; }
    int one = 1;
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons((unsigned short)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(lfd, (struct sockaddr *)&a, sizeof a) < 0) { perror("bind"); return 1; }
    if (listen(lfd, 4096) < 0) { perror("listen"); return 1; }

    int ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = lfd};
    epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
    if (ensure_wbuf(64) < 0) return 1;
    fprintf(stderr, "floor: listening on 127.0.0.1:%d (1 thread)\n", port);

    struct epoll_event evs[256];
    for (;;) {
        int n = epoll_wait(ep, evs, 256, -1);
        if (n < 0) { if (errno == EINTR) continue; perror("epoll_wait"); return 1; }
        for (int i = 0; i < n; i++) {
            int fd = evs[i].data.fd;
            if (fd == lfd) {
                for (;;) {
                    int cfd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                    if (cfd < 0) break;
                    if (cfd >= MAX_FDS) { close(cfd); continue; }
                    setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                    struct epoll_event cev = {.events = EPOLLIN, .data.fd = cfd};
                    epoll_ctl(ep, EPOLL_CTL_ADD, cfd, &cev);
                }
                continue;
            }
            int bad = 0;
            if (evs[i].events & (EPOLLERR)) bad = 1;
            if (!bad && (evs[i].events & EPOLLOUT)) bad = flush_out(ep, fd) < 0;
            if (!bad && (evs[i].events & (EPOLLIN | EPOLLHUP))) bad = on_readable(ep, fd) < 0;
            if (bad) close_conn(ep, fd);
        }
    }
}
