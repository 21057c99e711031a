/* The floor for a changed ResignActive: write+fsync+rename+fsync(dir) of SIZE bytes as
 * DIR/state.json, the way a state file is replaced.   atomic_write DIR SIZE -> "elapsed_ns" */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: atomic_write DIR SIZE\n"); return 64; }
    size_t size = (size_t)atol(argv[2]); char *bytes = malloc(size + 1); memset(bytes, 'x', size);
    char tmp[4096], dst[4096];
    snprintf(tmp, sizeof tmp, "%s/.state.json.tmp", argv[1]); snprintf(dst, sizeof dst, "%s/state.json", argv[1]);
    struct timespec a, b; clock_gettime(CLOCK_MONOTONIC, &a);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) { perror(tmp); return 1; }
    for (size_t off = 0; off < size;) { ssize_t w = write(fd, bytes + off, size - off); if (w <= 0) return 1; off += (size_t)w; }
    if (fsync(fd) || close(fd) || rename(tmp, dst)) { perror("write"); return 1; }
    int dir = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0 || fsync(dir)) { perror(argv[1]); return 1; }
    close(dir);
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("%lld\n", (long long)(b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec));
    return 0;
}
