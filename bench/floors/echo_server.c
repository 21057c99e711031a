/* The floor for round trips and calls/s: reads NUL-terminated requests on a Unix stream
 * socket and answers each with the bytes of REPLY_FILE (qactd's own reply to the same
 * request, NUL included), one thread per connection.   echo_server SOCKET REPLY_FILE */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static char *reply; static size_t reply_len;

static void *serve(void *arg) {
    int fd = (int)(long)arg; char buf[65536];
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n <= 0) break;
        for (ssize_t i = 0; i < n; i++) if (buf[i] == 0) {
            const char *p = reply; size_t left = reply_len;
            while (left) { ssize_t w = write(fd, p, left); if (w <= 0) goto done; p += w; left -= (size_t)w; }
        }
    }
done:
    close(fd); return NULL;
}

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: echo_server SOCKET REPLY_FILE\n"); return 64; }
    FILE *f = fopen(argv[2], "rb"); if (!f) { perror(argv[2]); return 1; }
    fseek(f, 0, SEEK_END); reply_len = (size_t)ftell(f); rewind(f);
    reply = malloc(reply_len); if (fread(reply, 1, reply_len, f) != reply_len) return 1; fclose(f);
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un a = { .sun_family = AF_UNIX }; strncpy(a.sun_path, argv[1], sizeof a.sun_path - 1);
    unlink(argv[1]);
    if (bind(s, (struct sockaddr *)&a, sizeof a) < 0 || listen(s, 128) < 0) { perror("bind"); return 1; }
    printf("listening\n"); fflush(stdout);
    for (;;) {
        int c = accept4(s, NULL, NULL, SOCK_CLOEXEC); if (c < 0) continue;
        pthread_t t; pthread_create(&t, NULL, serve, (void *)(long)c); pthread_detach(t);
    }
}
