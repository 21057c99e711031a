/* The measured client, the same for qactd and for the C echo floor: NUL-terminated
 * messages over one persistent Unix stream connection per client.
 *   vlclient lat   SOCKET REQUEST CALLS SECS   -> per-call round trips: "p50_ns p99_ns min_ns max_ns calls"
 *                                                (stops early after SECS seconds, at 10 calls at least)
 *   vlclient tput  SOCKET REQUEST CLIENTS SECS -> "calls_per_second" (one connection per client thread;
 *                                                the window lasts SECS, longer until CLIENTS replies came)
 *   vlclient repl  SOCKET                      -> per stdin line: send it, print "elapsed_ns reply"
 *   vlclient watch SOCKET REQUEST              -> send once; print "ready", then the first 16 KiB of each reply */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* How much of each Watch reply is printed. */
#define WATCH_PRINTED_BYTES 16384

static long long now_ns(void) {
    struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int connect_to(const char *path) {
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un a = { .sun_family = AF_UNIX };
    strncpy(a.sun_path, path, sizeof a.sun_path - 1);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) < 0) { perror("connect"); exit(2); }
    return fd;
}

static void send_all(int fd, const char *p, size_t n) {
    while (n) { ssize_t w = write(fd, p, n); if (w <= 0) { perror("write"); exit(2); } p += w; n -= (size_t)w; }
}

typedef struct { int fd; char *buf; size_t cap, len, start; } reader;

/* Returns one message (NUL-terminated in place) and its length. */
static char *read_message(reader *r, size_t *length) {
    for (;;) {
        char *nul = r->len > r->start ? memchr(r->buf + r->start, 0, r->len - r->start) : NULL;
        if (nul) { char *m = r->buf + r->start; *length = (size_t)(nul - m); r->start = (size_t)(nul - r->buf) + 1; return m; }
        if (r->start) { memmove(r->buf, r->buf + r->start, r->len - r->start); r->len -= r->start; r->start = 0; }
        if (r->len == r->cap) { r->cap = r->cap ? r->cap * 2 : 65536; r->buf = realloc(r->buf, r->cap); }
        ssize_t n = read(r->fd, r->buf + r->len, r->cap - r->len);
        if (n <= 0) { fprintf(stderr, "vlclient: connection closed\n"); exit(2); }
        r->len += (size_t)n;
    }
}

static int cmp(const void *a, const void *b) { long long x = *(const long long *)a, y = *(const long long *)b; return (x > y) - (x < y); }

typedef struct { const char *path, *request; size_t rlen; volatile int *stop; long long calls; } worker;

static void *work(void *arg) {
    worker *w = arg; reader r = { .fd = connect_to(w->path) }; size_t n;
    while (!*w->stop) { send_all(r.fd, w->request, w->rlen); read_message(&r, &n); w->calls++; }
    close(r.fd); return NULL;
}

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: see the source\n"); return 64; }
    const char *mode = argv[1], *path = argv[2];
    if (!strcmp(mode, "lat") && argc == 6) {
        size_t rlen = strlen(argv[3]) + 1; int calls = atoi(argv[4]); long long budget = (long long)(atof(argv[5]) * 1e9);
        long long *s = malloc(sizeof *s * (size_t)calls); reader r = { .fd = connect_to(path) }; size_t n;
        for (int i = 0; i < 3; i++) { send_all(r.fd, argv[3], rlen); read_message(&r, &n); } /* warm-up */
        long long began = now_ns();
        for (int i = 0; i < calls; i++) {
            long long t = now_ns(); send_all(r.fd, argv[3], rlen); read_message(&r, &n); s[i] = now_ns() - t;
            if (i >= 9 && now_ns() - began > budget) { calls = i + 1; break; }
        }
        qsort(s, (size_t)calls, sizeof *s, cmp);
        printf("%lld %lld %lld %lld %d\n", s[calls / 2], s[(calls * 99) / 100], s[0], s[calls - 1], calls);
        return 0;
    }
    if (!strcmp(mode, "tput") && argc == 6) {
        int clients = atoi(argv[4]); double secs = atof(argv[5]); volatile int stop = 0;
        worker *w = calloc((size_t)clients, sizeof *w); pthread_t *t = calloc((size_t)clients, sizeof *t);
        for (int i = 0; i < clients; i++) {
            w[i] = (worker){ path, argv[3], strlen(argv[3]) + 1, &stop, 0 };
            pthread_create(&t[i], NULL, work, &w[i]);
        }
        usleep(100000); /* connections up */
        long long c0 = 0; for (int i = 0; i < clients; i++) c0 += w[i].calls;
        long long t0 = now_ns(); usleep((useconds_t)(secs * 1e6));
        long long c1, t1;
        for (;;) { /* a slow server: go on until every client could have had one reply (at most 120 s) */
            c1 = 0; for (int i = 0; i < clients; i++) c1 += w[i].calls;
            t1 = now_ns();
            if (c1 - c0 >= clients || t1 - t0 > 120000000000LL) break;
            usleep(10000);
        }
        stop = 1;
        for (int i = 0; i < clients; i++) pthread_join(t[i], NULL);
        printf("%.1f\n", (double)(c1 - c0) * 1e9 / (double)(t1 - t0));
        return 0;
    }
    if (!strcmp(mode, "repl")) {
        reader r = { .fd = connect_to(path) }; char *line = NULL; size_t cap = 0; ssize_t got; size_t n;
        setvbuf(stdout, NULL, _IOLBF, 0);
        while ((got = getline(&line, &cap, stdin)) > 0) {
            if (line[got - 1] == '\n') line[--got] = 0;
            long long t = now_ns(); send_all(r.fd, line, (size_t)got + 1); char *m = read_message(&r, &n);
            long long e = now_ns() - t;
            for (size_t i = 0; i < n; i++) if (m[i] == '\n') m[i] = ' ';
            printf("%lld %s\n", e, m);
        }
        return 0;
    }
    if (!strcmp(mode, "watch") && argc == 4) {
        reader r = { .fd = connect_to(path) }; size_t n;
        setvbuf(stdout, NULL, _IOLBF, 0);
        send_all(r.fd, argv[3], strlen(argv[3]) + 1);
        for (long long i = 0;; i++) {
            char *m = read_message(&r, &n);
            /* The whole reply is read (above); only its start is printed: the edited favorite
             * sorts first, and piping 288 KB per event to the benchmark (which then decodes it)
             * timed the benchmark's own reading, not qactd. */
            if (n > WATCH_PRINTED_BYTES) { n = WATCH_PRINTED_BYTES; m[n] = 0; }
            for (size_t k = 0; k < n; k++) if (m[k] == '\n') m[k] = ' ';
            printf("%s\n", i == 0 ? "ready" : m);
        }
    }
    fprintf(stderr, "vlclient: bad arguments\n"); return 64;
}
