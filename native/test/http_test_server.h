// A small HTTP/1.1 server for the native HTTP client's tests: 127.0.0.1 (or
// ::1), port 0, one thread per connection. The request path picks the answer:
//   /ok/T          200, body T             /chunked/T   200, T in chunks + a trailer
//   /close/T       200, Connection: close  /eof/T       200, body until the close
//   /interim/T     100 Continue, then 200  /status/503  503 with a long body
//   /garbage       not HTTP                /extra/T     200 plus 2 stray bytes
//   /cut           half a body, then close /echo        200, the request's body
//   /delay/MS/T    200 after MS ms         /vanish      no answer: the connection closes
//   /drip/N        the raw parts of drips[N] (head included), drip_gap_ms
//                  apart; a part "<close>" closes the connection there
// Options: every answer delayed; `Connection: close` after every answer; or
// a close after every answer that the answer does not announce; at most N
// connections at once (more are accepted and closed at once, as node:net's
// maxConnections does).
#pragma once

#if defined(__linux__)

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace loadgen_test {

class HttpTestServer {
 public:
  int delay_ms = 0;           // added to every answer
  bool close_each = false;    // Connection: close after every answer
  bool drop_each = false;     // closes the connection after every answer, without saying so,
  int drop_after_ms = 0;      // this long after the answer (a request sent meanwhile is lost)
  std::vector<std::vector<std::string>> drips;  // /drip/N: written part by part
  int drip_gap_ms = 30;
  int max_connections = 0;    // 0: no limit
  int accept_gap_ms = 0;      // a pause after each accept: connections wait in the backlog, connected

  ~HttpTestServer() { stop(); }

  // Listens on 127.0.0.1 (or ::1 when `ipv6`), port 0. False when the
  // address family is not available.
  bool start(bool ipv6 = false) {
    listen_fd_ = ::socket(ipv6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listen_fd_ < 0) return false;
    const int one = 1;
    setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_storage addr{};
    socklen_t len;
    if (ipv6) {
      auto* a = reinterpret_cast<sockaddr_in6*>(&addr);
      a->sin6_family = AF_INET6;
      a->sin6_addr = in6addr_loopback;
      len = sizeof(*a);
    } else {
      auto* a = reinterpret_cast<sockaddr_in*>(&addr);
      a->sin_family = AF_INET;
      a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      len = sizeof(*a);
    }
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), len) != 0 || ::listen(listen_fd_, 256) != 0) {
      ::close(listen_fd_);
      listen_fd_ = -1;
      return false;
    }
    getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port = ntohs(ipv6 ? reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port : reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
    acceptor_ = std::thread([this] { accept_loop(); });
    return true;
  }

  // Stops accepting and closes the listening socket: new connections are refused.
  void close_listener() {
    close_listener_.store(true);
    while (listen_fd_ >= 0 && !listener_closed_.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }

  void stop() {
    if (stopping_.exchange(true)) return;
    if (acceptor_.joinable()) acceptor_.join();
    std::vector<std::thread> workers;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (int fd : fds_) ::shutdown(fd, SHUT_RDWR);
      workers.swap(workers_);
    }
    for (auto& t : workers) t.join();
  }

  uint16_t port = 0;
  std::atomic<int> requests{0};
  std::atomic<int> accepted{0};
  std::atomic<int> turned_away{0};  // closed at once (max_connections)

 private:
  void accept_loop() {
    while (!stopping_.load()) {
      if (close_listener_.load()) break;
      pollfd p{listen_fd_, POLLIN, 0};
      if (::poll(&p, 1, 10) <= 0) continue;
      const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      accepted.fetch_add(1);
      if (accept_gap_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(accept_gap_ms));
      std::lock_guard<std::mutex> lock(mu_);
      if (max_connections > 0 && static_cast<int>(fds_.size()) >= max_connections) {
        turned_away.fetch_add(1);
        ::close(fd);
        continue;
      }
      fds_.push_back(fd);
      workers_.emplace_back([this, fd] { serve(fd); });
    }
    ::close(listen_fd_);
    listener_closed_.store(true);
  }

  bool sleep_ms(int ms) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (std::chrono::steady_clock::now() < end) {
      if (stopping_.load()) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return true;
  }

  static bool write_all(int fd, const std::string& data) {
    size_t at = 0;
    while (at < data.size()) {
      const ssize_t n = ::send(fd, data.data() + at, data.size() - at, MSG_NOSIGNAL);
      if (n <= 0) return false;
      at += static_cast<size_t>(n);
    }
    return true;
  }

  static std::string ok(const std::string& body, const std::string& extra_headers = "") {
    return "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\n" + extra_headers + "\r\n" + body;
  }

  // The answer to one request; `close` when the connection ends after it.
  std::string answer(const std::string& path, const std::string& body, bool* close) {
    auto after = [&](const char* prefix) { return path.substr(std::strlen(prefix)); };
    auto starts = [&](const char* prefix) { return path.rfind(prefix, 0) == 0; };
    if (starts("/ok/")) return ok(after("/ok/"));
    if (starts("/chunked/")) {
      const std::string t = after("/chunked/");
      std::string out = "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n";
      for (size_t i = 0; i < t.size(); i += 3) {
        const std::string part = t.substr(i, 3);
        char size[16];
        std::snprintf(size, sizeof(size), "%zx", part.size());
        out += std::string(size) + ";ext=1\r\n" + part + "\r\n";
      }
      return out + "0\r\nX-Trailer: yes\r\n\r\n";
    }
    if (starts("/close/")) {
      *close = true;
      return ok(after("/close/"), "Connection: close\r\n");
    }
    if (starts("/eof/")) {
      *close = true;
      return "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + after("/eof/");
    }
    if (starts("/interim/")) return "HTTP/1.1 100 Continue\r\n\r\n" + ok(after("/interim/"));
    if (path == "/status/503") {
      const std::string b = "service\tunavailable\n" + std::string(300, 'x');
      return "HTTP/1.1 503 Service Unavailable\r\nContent-Length: " + std::to_string(b.size()) + "\r\n\r\n" + b;
    }
    if (path == "/garbage") return "NOT HTTP AT ALL\r\n\r\n";
    if (starts("/extra/")) return ok(after("/extra/")) + "XX";
    if (path == "/cut") {
      *close = true;
      return "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789";
    }
    if (path == "/echo") return ok(body);
    if (path == "/vanish") {
      *close = true;
      return "";
    }
    if (starts("/drip/")) {
      // Written here, part by part; the caller writes nothing more.
      const size_t n = std::stoul(after("/drip/"));
      const std::vector<std::string> parts = n < drips.size() ? drips[n] : std::vector<std::string>{};
      for (size_t i = 0; i < parts.size(); ++i) {
        if (i > 0 && !sleep_ms(drip_gap_ms)) break;
        if (parts[i] == "<close>" || !write_all(drip_fd_, parts[i])) {
          *close = true;
          break;
        }
      }
      return "";
    }
    if (starts("/delay/")) {
      const std::string rest = after("/delay/");
      const size_t slash = rest.find('/');
      if (!sleep_ms(std::stoi(rest.substr(0, slash)))) {
        *close = true;
        return "";
      }
      return ok(slash == std::string::npos ? "" : rest.substr(slash + 1));
    }
    return "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";
  }

  void serve(int fd) {
    std::string in;
    char buf[65536];
    bool open = true;
    while (open && !stopping_.load()) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 10) <= 0) continue;
      const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
      if (n <= 0) break;
      in.append(buf, static_cast<size_t>(n));
      for (;;) {
        const size_t head_end = in.find("\r\n\r\n");
        if (head_end == std::string::npos) break;
        size_t length = 0;
        std::string lower = in.substr(0, head_end);
        for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        const size_t cl = lower.find("\r\ncontent-length:");
        if (cl != std::string::npos) length = std::stoul(lower.substr(cl + 17));
        if (in.size() < head_end + 4 + length) break;
        const size_t sp1 = in.find(' ');
        const size_t sp2 = in.find(' ', sp1 + 1);
        const std::string path = in.substr(sp1 + 1, sp2 - sp1 - 1);
        const std::string body = in.substr(head_end + 4, length);
        in.erase(0, head_end + 4 + length);
        requests.fetch_add(1);
        if (delay_ms > 0 && !sleep_ms(delay_ms)) {
          open = false;
          break;
        }
        bool close = close_each;
        drip_fd_ = fd;
        std::string out = answer(path, body, &close);
        if (close_each && out.rfind("HTTP/1.1 200 OK\r\n", 0) == 0) out.insert(17, "Connection: close\r\n");
        if (!write_all(fd, out) || close) {
          open = false;
          break;
        }
        if (drop_each) {
          if (drop_after_ms > 0) sleep_ms(drop_after_ms);
          open = false;
          break;
        }
      }
    }
    ::shutdown(fd, SHUT_RDWR);
    std::lock_guard<std::mutex> lock(mu_);
    // The fd is closed here, under the lock, so stop() never shuts down a reused number.
    for (size_t i = 0; i < fds_.size(); ++i)
      if (fds_[i] == fd) fds_.erase(fds_.begin() + static_cast<long>(i));
    ::close(fd);
  }

  int listen_fd_ = -1;
  inline static thread_local int drip_fd_ = -1;  // the connection answer() serves (/drip writes to it)
  std::thread acceptor_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> close_listener_{false};
  std::atomic<bool> listener_closed_{false};
  std::mutex mu_;
  std::vector<std::thread> workers_;
  std::vector<int> fds_;
};

}  // namespace loadgen_test

#endif
