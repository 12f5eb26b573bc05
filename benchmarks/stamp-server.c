/*
 * The network benchmark's server (lib/bench/net.ts builds it with the system
 * C compiler; it is not part of the addon). HTTP/1.1 keep-alive on 127.0.0.1,
 * one thread, epoll; every request is answered at once with 200 and its own
 * time stamps on CLOCK_MONOTONIC (the clock of the core's clockNs(), system-wide
 * on Linux, so the client can compare them with its own):
 *   recv: the read that completed the request returned;
 *   send: just before the write of the response.
 * They are sent as headers x-recv-ns / x-send-ns and as the body "RECV SEND\n"
 * (fixed width, so every response has the same length).
 *
 *   stamp-server [CPU [spin|wait [PORT]]]
 *     pins itself to CPU when given (>= 0); "spin" polls epoll without
 *     sleeping; listens on PORT (default: any free one) with SO_REUSEPORT, so
 *     several processes, each on its own CPU, can serve one port (the kernel
 *     spreads the connections over them); prints "PORT n".
 * Ends on SIGTERM/SIGINT or when stdin closes (its parent went away).
 *
 * Lines on stdin (the bench's client share, so the client reads no body):
 *   record        forget the stamps kept so far and keep each request's from
 *                 now on: its sample index (GET /s/N; -1 for other paths),
 *                 recv and send; answers "RECORDING"
 *   stamps PATH   writes them to PATH, a line "INDEX RECV SEND" each, and
 *                 stops keeping them; answers "STAMPS <written> <dropped>"
 *                 (dropped: beyond MAX_RECORDS) or "STAMPS error <reason>"
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BUF_SIZE 65536
#define MAX_CONNS 4096
/* At most this many kept stamps (24 bytes each): 2^24 is 168 s at 100k requests/s. */
#define MAX_RECORDS (1L << 24)

struct conn {
  int fd;
  size_t len;
  char buf[BUF_SIZE];
};

static struct conn *conns[MAX_CONNS];
static volatile sig_atomic_t stopping = 0;

/* The stamps kept between "record" and "stamps PATH". */
struct record {
  long long index, recv_ns, send_ns;
};
static int recording = 0;
static struct record *records = NULL;
static long record_count = 0, record_capacity = 0, records_dropped = 0;

/* The sample index of a request line "GET /s/N ...", -1 for any other. */
static long long sample_index(const char *buf, size_t len) {
  if (len < 8 || memcmp(buf, "GET /s/", 7) != 0) return -1;
  long long n = 0;
  size_t i = 7;
  for (; i < len && i < 7 + 18 && buf[i] >= '0' && buf[i] <= '9'; i++) n = n * 10 + (buf[i] - '0');
  return i > 7 && i < len && buf[i] == ' ' ? n : -1;
}

static void keep_record(long long index, long long recv_ns, long long send_ns) {
  if (record_count == record_capacity) {
    long grown = record_capacity ? record_capacity * 2 : 65536;
    struct record *more = grown <= MAX_RECORDS ? realloc(records, (size_t)grown * sizeof(struct record)) : NULL;
    if (more == NULL) {
      records_dropped++;
      return;
    }
    records = more;
    record_capacity = grown;
  }
  records[record_count++] = (struct record){index, recv_ns, send_ns};
}

/* One line of stdin (without its newline): "record" or "stamps PATH". */
static void on_command(char *line) {
  if (strcmp(line, "record") == 0) {
    record_count = 0;
    records_dropped = 0;
    recording = 1;
    printf("RECORDING\n");
  } else if (strncmp(line, "stamps ", 7) == 0) {
    recording = 0;
    FILE *f = fopen(line + 7, "w");
    if (f == NULL) {
      printf("STAMPS error %s: %s\n", line + 7, strerror(errno));
    } else {
      for (long i = 0; i < record_count; i++)
        fprintf(f, "%lld %lld %lld\n", records[i].index, records[i].recv_ns, records[i].send_ns);
      if (fclose(f) != 0) printf("STAMPS error %s: %s\n", line + 7, strerror(errno));
      else printf("STAMPS %ld %ld\n", record_count, records_dropped);
    }
  } else {
    printf("ERROR unknown command\n");
  }
  fflush(stdout);
}

static void on_signal(int sig) {
  (void)sig;
  stopping = 1;
}

static long long mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Length of the first complete request in buf (headers + Content-Length body), 0 if incomplete, -1 if bad. */
static long request_length(const char *buf, size_t len) {
  const char *end = memmem(buf, len, "\r\n\r\n", 4);
  if (end == NULL) return len >= BUF_SIZE ? -1 : 0;
  size_t head = (size_t)(end - buf) + 4;
  size_t body = 0;
  for (const char *line = buf; line < end;) {
    const char *eol = memmem(line, (size_t)(end - line) + 2, "\r\n", 2);
    if (eol == NULL) break;
    if ((size_t)(eol - line) > 15 && strncasecmp(line, "content-length:", 15) == 0) body = strtoul(line + 15, NULL, 10);
    line = eol + 2;
  }
  if (head + body > BUF_SIZE) return -1;
  return head + body <= len ? (long)(head + body) : 0;
}

static void close_conn(int epfd, struct conn *c) {
  epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, NULL);
  close(c->fd);
  conns[c->fd] = NULL;
  free(c);
}

/* Writes all of a small response; the socket is non-blocking, so spin briefly on EAGAIN. */
static int write_all(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      return -1;
    }
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

static void on_readable(int epfd, struct conn *c) {
  for (;;) {
    ssize_t r = read(c->fd, c->buf + c->len, BUF_SIZE - c->len);
    if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
      close_conn(epfd, c);
      return;
    }
    if (r < 0) {
      if (errno == EINTR) continue;
      return;
    }
    long long recv_ns = mono_ns();
    c->len += (size_t)r;
    long n;
    while ((n = request_length(c->buf, c->len)) > 0) {
      char out[256];
      long long send_ns = mono_ns();
      int k = snprintf(out, sizeof(out),
                       "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 40\r\n"
                       "x-recv-ns: %019lld\r\nx-send-ns: %019lld\r\n\r\n%019lld %019lld\n",
                       recv_ns, send_ns, recv_ns, send_ns);
      if (write_all(c->fd, out, (size_t)k) != 0) {
        close_conn(epfd, c);
        return;
      }
      if (recording) keep_record(sample_index(c->buf, (size_t)n), recv_ns, send_ns);
      memmove(c->buf, c->buf + n, c->len - (size_t)n);
      c->len -= (size_t)n;
    }
    if (n < 0) {
      close_conn(epfd, c);
      return;
    }
  }
}

int main(int argc, char **argv) {
  int cpu = argc > 1 ? atoi(argv[1]) : -1;
  // "spin": poll epoll without sleeping, so the server's own CPU is awake when
  // a request lands (a halted vCPU takes 100 us-1 ms to wake here, and that
  // wake-up comes before the receive stamp).
  int spin = argc > 2 && strcmp(argv[2], "spin") == 0;
  int port = argc > 3 ? atoi(argv[3]) : 0;
  if (port < 0 || port > 65535) {
    fprintf(stderr, "stamp-server: port %s is not 0..65535\n", argv[3]);
    return 2;
  }
  if (cpu >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof(set), &set) != 0) perror("stamp-server: sched_setaffinity");
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_signal;
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  signal(SIGPIPE, SIG_IGN);

  int lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  int one = 1;
  setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (setsockopt(lfd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) != 0 && port != 0) {
    perror("stamp-server: SO_REUSEPORT");
    return 1;
  }
  struct sockaddr_in addr;
  memset(&addr, 0, sizeof(addr));
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons((unsigned short)port);
  socklen_t alen = sizeof(addr);
  if (bind(lfd, (struct sockaddr *)&addr, sizeof(addr)) != 0 || listen(lfd, 1024) != 0 ||
      getsockname(lfd, (struct sockaddr *)&addr, &alen) != 0) {
    perror("stamp-server: listen");
    return 1;
  }
  int epfd = epoll_create1(0);
  struct epoll_event ev = {.events = EPOLLIN, .data.fd = lfd};
  epoll_ctl(epfd, EPOLL_CTL_ADD, lfd, &ev);
  struct epoll_event in_ev = {.events = EPOLLIN, .data.fd = STDIN_FILENO};
  epoll_ctl(epfd, EPOLL_CTL_ADD, STDIN_FILENO, &in_ev);
  printf("PORT %d\n", ntohs(addr.sin_port));
  fflush(stdout);

  struct epoll_event events[256];
  char command[4096];
  size_t command_len = 0;
  while (!stopping) {
    int n = epoll_wait(epfd, events, 256, spin ? 0 : 1000);
    for (int i = 0; i < n; i++) {
      int fd = events[i].data.fd;
      if (fd == STDIN_FILENO) {
        char tmp[512];
        ssize_t r = read(STDIN_FILENO, tmp, sizeof(tmp));
        if (r <= 0) stopping = 1;
        for (ssize_t k = 0; k < r; k++) {
          if (tmp[k] == '\n') {
            command[command_len] = '\0';
            on_command(command);
            command_len = 0;
          } else if (command_len < sizeof(command) - 1) {
            command[command_len++] = tmp[k];
          }
        }
      } else if (fd == lfd) {
        int cfd;
        while ((cfd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
          if (cfd >= MAX_CONNS) {
            close(cfd);
            continue;
          }
          setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
          struct conn *c = calloc(1, sizeof(struct conn));
          if (c == NULL) {
            close(cfd);
            continue;
          }
          c->fd = cfd;
          conns[cfd] = c;
          struct epoll_event cev = {.events = EPOLLIN, .data.fd = cfd};
          epoll_ctl(epfd, EPOLL_CTL_ADD, cfd, &cev);
        }
      } else if (fd >= 0 && fd < MAX_CONNS && conns[fd] != NULL) {
        on_readable(epfd, conns[fd]);
      }
    }
  }
  return 0;
}
