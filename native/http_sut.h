// The native HTTP client as a SUT inside the core (native_sut.h): the issue
// thread sends each sample's request itself (HttpClient::send), the client's
// reactor thread completes it through the session with the stamp of its
// last byte. Responses whose bodies the host must read (accuracy-logged
// samples, or all when asked) go to the host's thread instead, stamped
// already: reading them there adds nothing to a latency.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "http_client.h"
#include "native_sut.h"

namespace loadgen {

class Session;

class HttpSut final : public NativeSut, public HttpSink {
 public:
  explicit HttpSut(HttpClientConfig config);
  ~HttpSut() override;

  HttpClient& client() { return *client_; }

  // Host thread, before the run starts / after it ended (waits for a
  // completion under way on the reactor thread). Outcomes that arrive while
  // no session is attached are dropped: their ids belong to no series.
  void attach(Session* session);
  void detach() { attach(nullptr); }

  // A secret (the API key, sent in the requests' headers) that no failure
  // message may carry, e.g. when a server echoes the request back: replaced
  // by "<api key>", also a cut-off start of it at the end of an excerpt.
  void set_secret(std::string secret) { secret_ = std::move(secret); }
  std::string redact(std::string text) const;

  // Every response body goes to the host (token counts or checks the host's
  // reader makes), not only the accuracy-logged ones.
  void set_host_reads_every_body(bool every) { host_reads_every_body_ = every; }
  // Called (from the reactor thread) when responses wait for the host and no
  // earlier call is still unanswered; the host then calls take_host_responses().
  void set_host_wake(std::function<void()> wake) { host_wake_ = std::move(wake); }
  // Host thread: the waiting responses (ok, body kept), oldest first.
  void take_host_responses(std::vector<HttpOutcome>* out);

  // NativeSut
  void series_started(Series& series) override;
  void issue(Series& series, uint64_t first, uint64_t last) override;
  // HttpSink (reactor thread)
  void on_outcome(HttpOutcome& outcome) override;

 private:
  // Whether sample `id`'s body goes to the host (as issue() decided).
  bool host_reads_body(uint64_t id) const;

  std::unique_ptr<HttpClient> client_;
  std::atomic<const Series*> series_{nullptr};  // the current series (series_started)
  std::atomic<Session*> session_{nullptr};
  std::atomic<int> in_outcome_{0};  // on_outcome calls using session_ (detach waits for 0)
  bool host_reads_every_body_ = false;
  std::string secret_;
  std::function<void()> host_wake_;
  std::mutex host_mutex_;
  std::vector<HttpOutcome> host_responses_;
  std::atomic<bool> host_wake_pending_{false};
};

}  // namespace loadgen
