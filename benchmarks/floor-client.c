/*
 * The network benchmark's open-loop floor (lib/bench/net-floor.ts builds it
 * with the system C compiler; it is not part of the addon): about the least
 * an open-loop HTTP client can do on this machine, so loadgen's client rows
 * have a measured floor beside them, at the same rates, on the same server
 * and CPUs. One thread, epoll, blocking sockets never: Poisson arrivals at
 * RATE (mean 1/RATE apart, xorshift64* uniforms: this is a load pattern, not
 * a conformance trace), each request written at its due time on a free
 * keep-alive connection, or queued until one is free; the thread sleeps in
 * epoll_pwait2 (nanosecond timeout, 1 ns timer slack) until the next due time and reads
 * responses as they come. MODE "sleep" sleeps to the due time (the least
 * CPU: every request pays this VM's wake-up); "spin" sleeps until a window
 * before it and polls epoll through the window, the window following how late
 * the sleeps end (their p90 + 5 us, 10 us..min(120 us, mean gap / 4)), as
 * loadgen's issue thread does (native/scheduler.h, AdaptiveSpinWindow).
 * Against the stamp server (stamp-server.c):
 *   latency: scheduled time -> the read that completed the response;
 *   server:  the response's own send - recv stamps;
 *   client:  latency - server (what the client, its wake-ups and the kernel took);
 *   lateness: scheduled time -> the request's write.
 * CPU: getrusage over the measured requests (from the first one's due time to
 * the last response), divided by their count.
 *
 *   floor-client PORT RATE DURATION_MS CONNECTIONS WARMUP_MS sleep|spin
 *     requests GET /s/<i> from 127.0.0.1:PORT; WARMUP_MS at RATE first (not
 *     recorded), then DURATION_MS recorded; prints one JSON line; exit 1 with
 *     {"error": ...} on any failed request (a floor counts only successes).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define RESPONSE_BUF 4096
#define MAX_EVENTS 256

struct conn {
  int fd;
  int busy;
  int64_t scheduled_ns;
  int64_t request;  // index into the records (-1: a warm-up request)
  size_t len;
  char buf[RESPONSE_BUF];
};

static int64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int64_t cpu_ns(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ((int64_t)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000LL +
         ((int64_t)ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000LL;
}

static void fail(const char *what, const char *detail) {
  printf("{\"error\":\"%s%s%s\"}\n", what, detail ? ": " : "", detail ? detail : "");
  exit(1);
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ULL;
static double uniform01(void) {
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return (double)((rng_state * 0x2545F4914F6CDD1DULL) >> 11) * (1.0 / 9007199254740992.0);
}

/* Sleeps in epoll until an event or timeout_ns (nanoseconds, as epoll_pwait2 allows). */
static int wait_events(int epfd, struct epoll_event *events, int64_t timeout_ns) {
#ifdef SYS_epoll_pwait2
  struct timespec ts = {.tv_sec = timeout_ns / 1000000000LL, .tv_nsec = timeout_ns % 1000000000LL};
  int n = (int)syscall(SYS_epoll_pwait2, epfd, events, MAX_EVENTS, &ts, NULL, 0);
  if (n >= 0 || errno != ENOSYS) return n;
#endif
  return epoll_wait(epfd, events, MAX_EVENTS, (int)((timeout_ns + 999999) / 1000000));
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

static void print_percentiles(const char *name, int64_t *v, size_t n) {
  qsort(v, n, sizeof(int64_t), cmp_i64);
#define AT(p) (n ? v[(size_t)((double)n * (p)) < n ? (size_t)((double)n * (p)) : n - 1] : 0)
  printf("\"%s\":{\"p50\":%lld,\"p99\":%lld,\"p999\":%lld}", name, (long long)AT(0.5), (long long)AT(0.99),
         (long long)AT(0.999));
#undef AT
}

/* The stamp server's body "RECV SEND\n": 19 digits, a space, 19 digits. */
static int stamps(const char *body, int64_t *recv_ns, int64_t *send_ns) {
  int64_t a = 0, b = 0;
  for (int i = 0; i < 19; i++) {
    if (body[i] < '0' || body[i] > '9' || body[20 + i] < '0' || body[20 + i] > '9') return -1;
    a = a * 10 + (body[i] - '0');
    b = b * 10 + (body[20 + i] - '0');
  }
  *recv_ns = a;
  *send_ns = b;
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 7) {
    fprintf(stderr, "usage: floor-client PORT RATE DURATION_MS CONNECTIONS WARMUP_MS sleep|spin\n");
    return 2;
  }
  const int port = atoi(argv[1]);
  const double rate = atof(argv[2]);
  const int64_t duration_ns = (int64_t)atoll(argv[3]) * 1000000LL;
  const int connections = atoi(argv[4]);
  const int64_t warmup_ns = (int64_t)atoll(argv[5]) * 1000000LL;
  if (port <= 0 || port > 65535) fail("PORT must be 1..65535", argv[1]);
  if (!(rate > 0 && rate <= 10e6)) fail("RATE must be in (0, 1e7] requests/s", argv[2]);
  if (duration_ns <= 0 || duration_ns > 3600LL * 1000000000LL) fail("DURATION_MS must be 1..3600000", argv[3]);
  if (connections < 1 || connections > 1024) fail("CONNECTIONS must be 1..1024", argv[4]);
  if (warmup_ns < 0 || warmup_ns > 600LL * 1000000000LL) fail("WARMUP_MS must be 0..600000", argv[5]);
  if (strcmp(argv[6], "sleep") != 0 && strcmp(argv[6], "spin") != 0) fail("MODE must be sleep or spin", argv[6]);
  const int spin = strcmp(argv[6], "spin") == 0;

  // Records for the measured requests: the mean count and a wide margin (Poisson's spread is its square root).
  const double expected = rate * (double)duration_ns / 1e9;
  const size_t capacity = (size_t)(expected + 10.0 * sqrt(expected) + 1024.0);
  int64_t *latency = malloc(capacity * sizeof(int64_t));
  int64_t *server = malloc(capacity * sizeof(int64_t));
  int64_t *client = malloc(capacity * sizeof(int64_t));
  int64_t *lateness = malloc(capacity * sizeof(int64_t));
  // Requests due with every connection busy wait here, in order (scheduled time, record index).
  const double expected_all = rate * (double)(duration_ns + warmup_ns) / 1e9;
  const size_t queue_capacity = (size_t)(expected_all + 10.0 * sqrt(expected_all) + 1024.0);
  int64_t *queue_sched = malloc(queue_capacity * sizeof(int64_t));
  int64_t *queue_req = malloc(queue_capacity * sizeof(int64_t));
  struct conn *conns = calloc((size_t)connections, sizeof(struct conn));
  int *free_list = malloc((size_t)connections * sizeof(int));
  if (!latency || !server || !client || !lateness || !queue_sched || !queue_req || !conns || !free_list) fail("out of memory", NULL);

  // The default 50 us timer slack would make every sleep overshoot (loadgen's issue thread sets 1 ns too).
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  int epfd = epoll_create1(0);
  struct sockaddr_in addr;
  memset(&addr, 0, sizeof(addr));
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons((unsigned short)port);
  int free_count = 0;
  for (int i = 0; i < connections; i++) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0) fail("connect", strerror(errno));
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
    if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) != 0) fail("epoll_ctl", strerror(errno));
    conns[i].fd = fd;
    free_list[free_count++] = i;
  }

  const double mean_gap_ns = 1e9 / rate;
  // spin: the window's bounds and its estimate of the sleeps' lateness p90 (one compare and add a sleep).
  const int64_t window_max = (int64_t)fmin(120000.0, fmax(10000.0, mean_gap_ns / 4));
  int64_t late_p90 = 0;
  const int64_t start_ns = mono_ns() + 1000000;  // the first due time: 1 ms from now
  const int64_t measure_from = start_ns + warmup_ns;
  const int64_t measure_to = measure_from + duration_ns;
  int64_t next_due = start_ns;
  size_t recorded = 0, completed = 0, queue_head = 0, queue_tail = 0;
  int64_t cpu_start = -1, cpu_end = -1, last_done = 0;
  size_t max_queued = 0;
  int outstanding = 0;
  uint64_t sent = 0;
  int schedule_done = 0;
  char request[128];
  struct epoll_event events[MAX_EVENTS];

  for (;;) {
    int64_t now = mono_ns();
    // Every request now due: onto a free connection, else the queue.
    while (!schedule_done && next_due <= now) {
      if (next_due >= measure_to || (next_due >= measure_from && recorded == capacity)) {
        schedule_done = 1;
        break;
      }
      if (next_due >= measure_from && cpu_start < 0) cpu_start = cpu_ns();
      if (queue_tail == queue_capacity) fail("more requests than the queue holds", NULL);
      queue_sched[queue_tail] = next_due;
      queue_req[queue_tail++] = next_due >= measure_from ? (int64_t)recorded++ : -1;
      next_due += (int64_t)(-log(1.0 - uniform01()) * mean_gap_ns);
    }
    if (queue_tail - queue_head > max_queued) max_queued = queue_tail - queue_head;
    while (queue_head < queue_tail && free_count > 0) {
      struct conn *c = &conns[free_list[--free_count]];
      const int64_t req = queue_req[queue_head];
      c->scheduled_ns = queue_sched[queue_head++];
      c->request = req;
      c->busy = 1;
      c->len = 0;
      int len = snprintf(request, sizeof(request), "GET /s/%lld HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n",
                         (unsigned long long)(sent++ & 65535), port);
      ssize_t w = send(c->fd, request, (size_t)len, MSG_DONTWAIT | MSG_NOSIGNAL);
      if (w != len) fail("send", w < 0 ? strerror(errno) : "short write");
      if (req >= 0) lateness[req] = mono_ns() - c->scheduled_ns;
      ++outstanding;
    }
    if (schedule_done && outstanding == 0 && queue_head == queue_tail) break;
    now = mono_ns();
    int64_t window = 0;
    if (spin) {
      window = late_p90 + 5000;
      window = window < 10000 ? 10000 : window > window_max ? window_max : window;
    }
    int64_t timeout_ns = schedule_done ? 5000000000LL : next_due - window - now;
    if (timeout_ns < 0) timeout_ns = 0;
    const int64_t wake_at = now + timeout_ns;
    int n = wait_events(epfd, events, timeout_ns);
    if (n < 0 && errno != EINTR) fail("epoll", strerror(errno));
    if (n == 0 && schedule_done) fail("no response within 5 s", NULL);
    if (spin && n == 0 && timeout_ns > 0) {
      const int64_t late = mono_ns() - wake_at;
      late_p90 += late > late_p90 ? 9 * 500 : -500;
      late_p90 = late_p90 < 0 ? 0 : late_p90 > window_max ? window_max : late_p90;
    }
    for (int e = 0; e < n; e++) {
      struct conn *c = &conns[events[e].data.u32];
      ssize_t r = recv(c->fd, c->buf + c->len, RESPONSE_BUF - c->len, MSG_DONTWAIT);
      const int64_t read_ns = mono_ns();
      if (r < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      if (r <= 0) fail("read", r == 0 ? "the server closed a connection" : strerror(errno));
      if (!c->busy) fail("read", "bytes on an idle connection");
      c->len += (size_t)r;
      const char *end = memmem(c->buf, c->len, "\r\n\r\n", 4);
      if (end == NULL) {
        if (c->len == RESPONSE_BUF) fail("read", "a response head over 4 KiB");
        continue;
      }
      const size_t head = (size_t)(end - c->buf) + 4;
      if (strncmp(c->buf, "HTTP/1.1 200 ", 13) != 0) fail("response", "not 200");
      if (c->len < head + 40) continue;  // the stamp server's body is 40 bytes
      if (c->len > head + 40) fail("response", "bytes after the 40-byte body");
      int64_t recv_ns, send_ns;
      if (stamps(c->buf + head, &recv_ns, &send_ns) != 0) fail("response", "no stamps in the body");
      if (c->request >= 0) {
        const int64_t lat = read_ns - c->scheduled_ns;
        latency[c->request] = lat;
        server[c->request] = send_ns - recv_ns;
        client[c->request] = lat - (send_ns - recv_ns);
        ++completed;
        last_done = read_ns;
      }
      c->busy = 0;
      --outstanding;
      free_list[free_count++] = (int)(c - conns);
    }
    if (schedule_done && completed == recorded && cpu_end < 0) cpu_end = cpu_ns();
  }
  if (cpu_end < 0) cpu_end = cpu_ns();
  if (recorded == 0) fail("no request was due in the measured window", NULL);
  const double span_s = (double)(last_done - measure_from) / 1e9;
  printf("{\"targetQps\":%.3f,\"requests\":%zu,\"achievedQps\":%.3f,\"maxQueued\":%zu,\"cpuPerRequestNs\":%.1f,",
         rate, recorded, span_s > 0 ? (double)completed / span_s : 0.0, max_queued,
         (double)(cpu_end - cpu_start) / (double)completed);
  print_percentiles("latencyNs", latency, completed);
  putchar(',');
  print_percentiles("serverNs", server, completed);
  putchar(',');
  print_percentiles("clientNs", client, completed);
  putchar(',');
  print_percentiles("latenessNs", lateness, completed);
  printf("}\n");
  return 0;
}
