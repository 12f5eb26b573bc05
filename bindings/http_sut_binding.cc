// The native HTTP client SUT (native/http_sut.h) as a JS object:
// `new NativeHttpSut(options)`, its request table, start (connects, a
// Promise), node statistics, cancel and close. startTest passes it to
// start(); the issue thread then sends the requests itself. Responses whose
// bodies JS must read reach `options.onResponses(meta, data, count)` through
// one threadsafe function, once per batch.
#include "bindings/http_sut_binding.h"

#if defined(__unix__) || defined(__APPLE__)
#include <sys/resource.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "bindings/env_teardown.h"
#include "bindings/process_state.h"

namespace loadgen_addon {

namespace {

// What the reactor's wake and the JS object share: the threadsafe function
// stays callable until close() (or the object's finalizer) releases it.
struct HostChannel {
  std::mutex mutex;
  Napi::ThreadSafeFunction tsfn;
  bool open = false;
};

// Marks real NativeHttpSut objects (napi_type_tag_object): start() trusts
// only those, never an object that merely looks like one.
// A response callback failed in a live environment (lib's onResponses and
// onStream catch everything, so this is loadgen's own bug): the responses it
// held are lost, so the run they belong to cannot be right and ends.
void abort_shared_run(const std::string& message) {
  SharedSession shared;
  if (shared.get() != nullptr) shared.get()->abort("internal error handing native HTTP responses to JS: " + message);
}

constexpr napi_type_tag kNativeHttpSutTag = {0x6c6f616467656e2dULL, 0x6874747073757431ULL};

[[noreturn]] void type_error(Napi::Env env, const std::string& message) {
  throw Napi::TypeError::New(env, "NativeHttpSut: " + message);
}

double number_field(Napi::Env env, const Napi::Object& o, const char* key, double fallback, double min, double max) {
  const Napi::Value v = o.Get(key);
  if (v.IsUndefined()) return fallback;
  if (!v.IsNumber()) type_error(env, std::string(key) + " must be a number");
  const double d = v.As<Napi::Number>().DoubleValue();
  if (!std::isfinite(d) || d < min || d > max || std::floor(d) != d)
    type_error(env, std::string(key) + " must be an integer in [" + std::to_string(static_cast<int64_t>(min)) + ", " +
                        std::to_string(static_cast<int64_t>(max)) + "], got " + std::to_string(d));
  return d;
}

// `secrets`: an array of strings (JS's UTF-16, as lib/net/secrets.ts matches them).
std::vector<std::u16string> secrets_of(Napi::Env env, const Napi::Value& v, const char* what) {
  if (!v.IsArray()) type_error(env, std::string(what) + " must be an array of strings");
  const Napi::Array list = v.As<Napi::Array>();
  std::vector<std::u16string> out;
  out.reserve(list.Length());
  for (uint32_t i = 0; i < list.Length(); ++i) {
    const Napi::Value item = list.Get(i);
    // Never the value itself in the message: it is a secret.
    if (!item.IsString()) type_error(env, std::string(what) + "[" + std::to_string(i) + "] must be a string");
    out.push_back(item.As<Napi::String>().Utf16Value());
  }
  return out;
}

// `responseHeaders`: the lowercase header names whose values responses hand over.
std::vector<std::string> header_names_of(Napi::Env env, const Napi::Value& v) {
  if (!v.IsArray()) type_error(env, "responseHeaders must be an array of strings");
  const Napi::Array list = v.As<Napi::Array>();
  constexpr size_t kMost = loadgen::HttpResponseParser::kMaxCapturedNames;
  if (list.Length() > kMost)
    type_error(env, "responseHeaders has " + std::to_string(list.Length()) + " names, at most " + std::to_string(kMost) + " allowed");
  std::vector<std::string> out;
  for (uint32_t i = 0; i < list.Length(); ++i) {
    const Napi::Value item = list.Get(i);
    if (!item.IsString()) type_error(env, "responseHeaders[" + std::to_string(i) + "] must be a string");
    const std::string name = item.As<Napi::String>().Utf8Value();
    const bool token = !name.empty() && name.size() <= 256 && std::all_of(name.begin(), name.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || std::strchr("!#$%&'*+-.^_`|~", c) != nullptr;
    });
    if (!token)
      type_error(env, "responseHeaders[" + std::to_string(i) + "] must be a lowercase header name (1 to 256 token characters), got '" +
                          name.substr(0, 64) + "'");
    out.push_back(name);
  }
  return out;
}

const uint8_t* bytes_of(Napi::Env env, const Napi::Value& v, size_t* size, const char* what) {
  if (!v.IsTypedArray()) type_error(env, std::string(what) + " must be a Uint8Array");
  Napi::TypedArray view = v.As<Napi::TypedArray>();
  if (view.TypedArrayType() != napi_uint8_array) type_error(env, std::string(what) + " must be a Uint8Array");
  *size = view.ByteLength();
  return static_cast<const uint8_t*>(view.ArrayBuffer().Data()) + view.ByteOffset();
}

class NativeHttpSut : public Napi::ObjectWrap<NativeHttpSut> {
 public:
  static Napi::Function define(Napi::Env env) {
    return DefineClass(env, "NativeHttpSut",
                       {
                           InstanceMethod<&NativeHttpSut::set_request>("setRequest"),
                           InstanceMethod<&NativeHttpSut::set_requests>("setRequests"),
                           InstanceMethod<&NativeHttpSut::clear_requests>("clearRequests"),
                           InstanceMethod<&NativeHttpSut::set_secrets>("setSecrets"),
                           InstanceMethod<&NativeHttpSut::start>("start"),
                           InstanceMethod<&NativeHttpSut::cancel_all>("cancelAll"),
                           InstanceMethod<&NativeHttpSut::cancel_outstanding>("cancelOutstanding"),
                           InstanceMethod<&NativeHttpSut::outstanding>("outstanding"),
                           InstanceMethod<&NativeHttpSut::node_stats>("nodeStats"),
                           InstanceMethod<&NativeHttpSut::reactor_counts>("reactorCounts"),
                           InstanceMethod<&NativeHttpSut::close>("close"),
                       });
  }

  explicit NativeHttpSut(const Napi::CallbackInfo& info) : Napi::ObjectWrap<NativeHttpSut>(info) {
    Napi::Env env = info.Env();
    if (!loadgen::HttpClient::available()) type_error(env, "the native HTTP client is not available on this platform");
    if (info.Length() < 1 || !info[0].IsObject()) type_error(env, "expects an options object");
    const Napi::Object o = info[0].As<Napi::Object>();
    loadgen::HttpClientConfig config;
    const Napi::Value nodes = o.Get("nodes");
    if (!nodes.IsArray()) type_error(env, "nodes must be an array");
    const Napi::Array list = nodes.As<Napi::Array>();
    if (list.Length() == 0 || list.Length() > 1024) type_error(env, "nodes must have 1 to 1024 entries");
    node_count_ = list.Length();
    for (uint32_t i = 0; i < list.Length(); ++i) {
      const Napi::Value n = list.Get(i);
      if (!n.IsObject()) type_error(env, "nodes[" + std::to_string(i) + "] must be an object");
      const Napi::Object node = n.As<Napi::Object>();
      if (!node.Get("host").IsString() || !node.Get("label").IsString())
        type_error(env, "nodes[" + std::to_string(i) + "] needs host and label strings");
      loadgen::HttpNodeAddress address;
      address.host = node.Get("host").As<Napi::String>().Utf8Value();
      address.label = node.Get("label").As<Napi::String>().Utf8Value();
      address.port = static_cast<uint16_t>(number_field(env, node, "port", 0, 1, 65535));
      if (address.host.empty() || address.host.size() > 255 || address.host.find('\0') != std::string::npos)
        type_error(env, "nodes[" + std::to_string(i) + "].host must be 1 to 255 characters without NUL");
      config.nodes.push_back(std::move(address));
    }
    config.connections_per_node = static_cast<uint32_t>(number_field(env, o, "connectionsPerNode", 32, 1, 4096));
    const Napi::Value balance = o.Get("leastOutstanding");
    if (!balance.IsUndefined() && !balance.IsBoolean()) type_error(env, "leastOutstanding must be a boolean");
    config.least_outstanding = balance.IsUndefined() || balance.As<Napi::Boolean>().Value();
    // The longest JS timer, as lib/net/transport.ts checks them.
    constexpr double kMaxMs = 2147483647;
    config.connect_timeout_ns = static_cast<int64_t>(number_field(env, o, "connectTimeoutMs", 10000, 1, kMaxMs) * 1e6);
    config.request_timeout_ns = static_cast<int64_t>(number_field(env, o, "requestTimeoutMs", 60000, 0, kMaxMs) * 1e6);
    config.node_backoff_ns = static_cast<int64_t>(number_field(env, o, "nodeBackoffMs", 1000, 0, kMaxMs) * 1e6);
    config.max_body_bytes =
        static_cast<uint64_t>(number_field(env, o, "maxBodyBytes", 64.0 * 1024 * 1024, 1, 9007199254740991.0));
    config.reactor_cpu = static_cast<int>(number_field(env, o, "reactorCpu", -1, -1, 4095));
    config.response_poll_ns = static_cast<int64_t>(number_field(env, o, "responsePollUs", 200, 0, 1e6) * 1e3);
    const uint32_t client_threads = static_cast<uint32_t>(
        number_field(env, o, "clientThreads", 1, 1, loadgen::HttpSut::kMaxClientThreads));
    if (client_threads > config.connections_per_node)
      type_error(env, "clientThreads " + std::to_string(client_threads) + " exceeds connectionsPerNode " +
                          std::to_string(config.connections_per_node) + ": each client thread owns one connection per node at least");
    const Napi::Value inline_reactor = o.Get("inlineReactor");
    if (!inline_reactor.IsUndefined() && !inline_reactor.IsBoolean()) type_error(env, "inlineReactor must be a boolean");
    config.inline_reactor = inline_reactor.IsUndefined() || inline_reactor.As<Napi::Boolean>().Value();
    const Napi::Value every = o.Get("hostReadsEveryBody");
    if (!every.IsUndefined() && !every.IsBoolean()) type_error(env, "hostReadsEveryBody must be a boolean");
    const Napi::Value every_outcome = o.Get("hostReadsEveryOutcome");
    if (!every_outcome.IsUndefined() && !every_outcome.IsBoolean()) type_error(env, "hostReadsEveryOutcome must be a boolean");
    const Napi::Value secrets = o.Get("secrets");
    std::vector<std::u16string> secret_list;
    if (!secrets.IsUndefined()) secret_list = secrets_of(env, secrets, "secrets");
    const Napi::Value header_names = o.Get("responseHeaders");
    if (!header_names.IsUndefined()) config.response_headers = header_names_of(env, header_names);
    const Napi::Value stream = o.Get("streamBodies");
    if (!stream.IsUndefined() && !stream.IsBoolean()) type_error(env, "streamBodies must be a boolean");
    config.stream_bodies = stream.IsBoolean() && stream.As<Napi::Boolean>().Value();
    // Whole responses reach onResponses; streamed ones (streamBodies) onStream.
    const char* callback_name = config.stream_bodies ? "onStream" : "onResponses";
    const Napi::Value on_response = o.Get(callback_name);
    if (!on_response.IsFunction()) type_error(env, std::string(callback_name) + " must be a function");

    if (napi_type_tag_object(env, info.This(), &kNativeHttpSutTag) != napi_ok) type_error(env, "cannot tag the object");
    sut_ = std::make_shared<loadgen::HttpSut>(std::move(config), client_threads);
    sut_->set_host_reads_every_body(every.IsBoolean() && every.As<Napi::Boolean>().Value());
    sut_->set_host_reads_every_outcome(every_outcome.IsBoolean() && every_outcome.As<Napi::Boolean>().Value());
    sut_->set_secrets(secret_list);
    channel_ = std::make_shared<HostChannel>();
    channel_->tsfn = Napi::ThreadSafeFunction::New(env, on_response.As<Napi::Function>(), "loadgen-http-responses", 0, 1);
    channel_->tsfn.Unref(env);  // idle: it must not keep the process alive
    channel_->open = true;
    std::weak_ptr<loadgen::HttpSut> weak_sut = sut_;
    std::shared_ptr<HostChannel> channel = channel_;
    if (config_streams()) {
      set_stream_wake(channel, weak_sut);
      return;
    }
    sut_->set_host_wake([channel, weak_sut] {
      std::lock_guard<std::mutex> lock(channel->mutex);
      if (!channel->open) return;
      channel->tsfn.NonBlockingCall([weak_sut](Napi::Env env, Napi::Function callback) {
        std::shared_ptr<loadgen::HttpSut> sut = weak_sut.lock();
        if (!sut || env == nullptr) return;
        run_in_env(
            env,
            [&] {
              std::vector<loadgen::HttpOutcome> responses;
              sut->take_host_responses(&responses);
              if (responses.empty()) return;
              // One call per wake: the bodies (each followed by its captured
              // headers) back to back in one buffer (one backing store, not
              // one per response) and kResponseRecord numbers per response.
              size_t bytes = 0;
              for (const loadgen::HttpOutcome& r : responses) bytes += (r.ok ? r.body.size() : r.message.size()) + r.headers.size();
              Napi::Buffer<uint8_t> data = Napi::Buffer<uint8_t>::New(env, bytes);
              Napi::Float64Array meta = Napi::Float64Array::New(env, responses.size() * kResponseRecord);
              size_t at = 0;
              for (size_t i = 0; i < responses.size(); ++i) {
                const loadgen::HttpOutcome& r = responses[i];
                double* m = meta.Data() + i * kResponseRecord;
                m[0] = static_cast<double>(r.tag);
                m[1] = r.index;
                m[2] = static_cast<double>(r.done_ns);
                m[3] = r.node;
                // A failure (hostReadsEveryOutcome) carries its message where a body goes.
                const uint8_t* bytes_of = r.ok ? r.body.data() : reinterpret_cast<const uint8_t*>(r.message.data());
                const size_t size = r.ok ? r.body.size() : r.message.size();
                m[4] = static_cast<double>(at);
                m[5] = static_cast<double>(size);
                if (size != 0) std::memcpy(data.Data() + at, bytes_of, size);
                at += size;
                m[6] = static_cast<double>(at);
                m[7] = static_cast<double>(r.headers.size());
                if (!r.headers.empty()) std::memcpy(data.Data() + at, r.headers.data(), r.headers.size());
                at += r.headers.size();
                m[8] = static_cast<double>(r.sent_ns);
                m[9] = r.ok ? -1.0 : static_cast<double>(static_cast<int>(r.kind));
              }
              callback.Call({meta, data, Napi::Number::New(env, static_cast<double>(responses.size()))});
            },
            abort_shared_run);
      });
    });
  }

  ~NativeHttpSut() override { release_channel(); }

  // Whole responses, one call per wake: onResponses(meta, data, count),
  // kResponseRecord numbers per response in `meta`: id, QSL index, stamp,
  // node, offset and length of its body (a failure's message) in `data`,
  // offset and length of its captured headers (HttpResponseParser::captured()'s
  // entries), when its request was sent, and its failure kind (-1: none;
  // lib/net/native-transport.ts).
  static constexpr size_t kResponseRecord = 10;

  // Stream events, one call per wake: onStream(meta, data, count), the bytes
  // back to back in `data` and kStreamRecord numbers per event in `meta`:
  // id, stamp, offset, length, event (0 bytes, 1 end, 2 failed: the bytes are
  // the message, 3 headers: the captured entries), QSL index, node, failure
  // kind, and (end and failure) when the request was sent (lib/net/native-stream.ts).
  static constexpr size_t kStreamRecord = 9;

  bool config_streams() const { return sut_->streams(); }

  void set_stream_wake(const std::shared_ptr<HostChannel>& channel, const std::weak_ptr<loadgen::HttpSut>& weak_sut) {
    // The host's vectors, swapped with the SUT's each wake: capacity reused both sides.
    auto events = std::make_shared<std::vector<loadgen::HttpStreamEvent>>();
    auto bytes = std::make_shared<std::vector<uint8_t>>();
    sut_->set_host_wake([channel, weak_sut, events, bytes] {
      std::lock_guard<std::mutex> lock(channel->mutex);
      if (!channel->open) return;
      channel->tsfn.NonBlockingCall([weak_sut, events, bytes](Napi::Env env, Napi::Function callback) {
        std::shared_ptr<loadgen::HttpSut> sut = weak_sut.lock();
        if (!sut || env == nullptr) return;
        run_in_env(
            env,
            [&] {
              sut->take_stream_events(events.get(), bytes.get());
              if (events->empty()) return;
              Napi::Buffer<uint8_t> data = Napi::Buffer<uint8_t>::Copy(env, bytes->data(), bytes->size());
              Napi::Float64Array meta = Napi::Float64Array::New(env, events->size() * kStreamRecord);
              double* m = meta.Data();
              for (const loadgen::HttpStreamEvent& e : *events) {
                m[0] = static_cast<double>(e.tag);
                m[1] = static_cast<double>(e.stamp_ns);
                m[2] = static_cast<double>(e.offset);
                m[3] = static_cast<double>(e.size);
                m[4] = static_cast<double>(e.kind);
                m[5] = e.index;
                m[6] = e.node;
                m[7] = static_cast<double>(e.failure);
                m[8] = static_cast<double>(e.sent_ns);
                m += kStreamRecord;
              }
              const double count = static_cast<double>(events->size());
              callback.Call({meta, data, Napi::Number::New(env, count)});
            },
            abort_shared_run);
      });
    });
  }

  std::shared_ptr<loadgen::HttpSut> sut() const { return sut_; }

 private:
  void release_channel() {
    if (!channel_) return;
    std::lock_guard<std::mutex> lock(channel_->mutex);
    if (channel_->open) {
      channel_->open = false;
      channel_->tsfn.Release();
    }
  }

  // setRequest(index, line, rest): the request of QSL index `index`.
  void set_request(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (info.Length() < 3) type_error(env, "setRequest(index, line, rest) expects three arguments");
    if (!info[0].IsNumber()) type_error(env, "setRequest: index must be a number");
    const double index = info[0].As<Napi::Number>().DoubleValue();
    constexpr double kMaxIndex = loadgen::HttpClient::kMaxRequestIndex;
    if (!(index >= 0 && index <= kMaxIndex) || std::floor(index) != index)
      type_error(env, "setRequest: index must be an integer in [0, " + std::to_string(loadgen::HttpClient::kMaxRequestIndex) +
                          "], got " + std::to_string(index));
    size_t line_size = 0, rest_size = 0;
    const uint8_t* line = bytes_of(env, info[1], &line_size, "setRequest: line");
    const uint8_t* rest = bytes_of(env, info[2], &rest_size, "setRequest: rest");
    if (line_size == 0) type_error(env, "setRequest: line must not be empty");
    if (sut_->outstanding() != 0) type_error(env, "setRequest: requests are outstanding");
    if (line_size > UINT32_MAX || rest_size > UINT32_MAX) type_error(env, "setRequest: a request part exceeds 4 GiB");
    sut_->set_request(static_cast<uint32_t>(index), line, line_size, rest, rest_size);
  }

  // setRequests(indices: Uint32Array, data: Uint8Array, layout: Uint32Array):
  // request indices[i] is data[layout[4i], +layout[4i+1]) (its line) and
  // data[layout[4i+2], +layout[4i+3]) (the rest). One call for a whole load.
  void set_requests(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (info.Length() < 3 || !info[0].IsTypedArray() || !info[2].IsTypedArray())
      type_error(env, "setRequests(indices, data, layout) expects a Uint32Array, a Uint8Array and a Uint32Array");
    Napi::TypedArray indices_array = info[0].As<Napi::TypedArray>();
    Napi::TypedArray layout_array = info[2].As<Napi::TypedArray>();
    if (indices_array.TypedArrayType() != napi_uint32_array || layout_array.TypedArrayType() != napi_uint32_array)
      type_error(env, "setRequests: indices and layout must be Uint32Arrays");
    size_t data_size = 0;
    const uint8_t* data = bytes_of(env, info[1], &data_size, "setRequests: data");
    const uint32_t* indices = indices_array.As<Napi::Uint32Array>().Data();
    const uint32_t* layout = layout_array.As<Napi::Uint32Array>().Data();
    const size_t count = indices_array.ElementLength();
    if (layout_array.ElementLength() != count * 4) type_error(env, "setRequests: layout must hold 4 numbers per index");
    // Every range is checked before anything is stored: a bad call changes nothing.
    for (size_t i = 0; i < count; ++i) {
      const uint64_t line_end = uint64_t{layout[4 * i]} + layout[4 * i + 1];
      const uint64_t rest_end = uint64_t{layout[4 * i + 2]} + layout[4 * i + 3];
      if (line_end > data_size || rest_end > data_size || layout[4 * i + 1] == 0)
        type_error(env, "setRequests: request " + std::to_string(i) + " lies outside data (or has an empty line)");
      if (indices[i] > loadgen::HttpClient::kMaxRequestIndex)
        type_error(env, "setRequests: indices[" + std::to_string(i) + "] is " + std::to_string(indices[i]) +
                            ", beyond the table's limit " + std::to_string(loadgen::HttpClient::kMaxRequestIndex));
    }
    if (sut_->outstanding() != 0) type_error(env, "setRequests: requests are outstanding");
    sut_->set_requests(indices, count, data, layout);
  }

  // setSecrets(list): replaces the secrets no failure message may carry
  // (more became known as requests were built). Never logged.
  void set_secrets(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (info.Length() < 1) type_error(env, "setSecrets(secrets) expects an array of strings");
    sut_->set_secrets(secrets_of(env, info[0], "setSecrets: secrets"));
  }

  void clear_requests(const Napi::CallbackInfo& info) {
    if (sut_->outstanding() != 0) type_error(info.Env(), "clearRequests: requests are outstanding");
    sut_->clear_requests();
  }

  // start() -> Promise<string>: '' when every node's connections are open,
  // else the reason (naming the node).
  Napi::Value start(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    auto deferred = Napi::Promise::Deferred::New(env);
    if (started_) type_error(env, "start: already started");
    started_ = true;
    (new StartWorker(env, sut_, deferred))->Queue();
    return deferred.Promise();
  }

  void cancel_all(const Napi::CallbackInfo& info) {
    const std::string message =
        info.Length() >= 1 && info[0].IsString() ? info[0].As<Napi::String>().Utf8Value() : std::string("cancelled");
    sut_->cancel_all(message);
  }

  // cancelOutstanding(message): between series, fails what the last one left outstanding (completing nothing).
  void cancel_outstanding(const Napi::CallbackInfo& info) {
    const std::string message =
        info.Length() >= 1 && info[0].IsString() ? info[0].As<Napi::String>().Utf8Value() : std::string("cancelled");
    sut_->abandon_outstanding(message);
  }

  Napi::Value outstanding(const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), static_cast<double>(sut_->outstanding()));
  }

  // nodeStats() -> Float64Array (kNodeStatsLength per node, lib/net/node-stats.ts's layout).
  Napi::Value node_stats(const Napi::CallbackInfo& info) {
    const size_t nodes = node_count();
    Napi::Float64Array out = Napi::Float64Array::New(info.Env(), nodes * loadgen::kNodeStatsLength);
    sut_->copy_node_stats(out.Data());
    return out;
  }

  static Napi::Object counts_object(Napi::Env env, const loadgen::HttpReactorCounts& counts) {
    Napi::Object out = Napi::Object::New(env);
    out.Set("polledEvents", static_cast<double>(counts.polled_events));
    out.Set("inlineEvents", static_cast<double>(counts.inline_events));
    out.Set("blockingWaits", static_cast<double>(counts.blocking_waits));
    out.Set("sendWakes", static_cast<double>(counts.send_wakes));
    out.Set("pollBudgetNs", static_cast<double>(counts.poll_budget_ns));
    out.Set("openedConnections", static_cast<double>(counts.opened_connections));
    out.Set("refusedConnections", static_cast<double>(counts.refused_connections));
    out.Set("retriedRequests", static_cast<double>(counts.retried_requests));
    out.Set("responses", static_cast<double>(counts.responses));
    out.Set("reactorCpuNs", static_cast<double>(counts.reactor_cpu_ns));
    out.Set("handedWrites", static_cast<double>(counts.handed_writes));
    return out;
  }

  // reactorCounts(): the sums over the client threads, and `threads`: each one's.
  Napi::Value reactor_counts(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    Napi::Object out = counts_object(env, sut_->reactor_counts());
    const std::vector<loadgen::HttpReactorCounts> threads = sut_->thread_counts();
    Napi::Array list = Napi::Array::New(env, threads.size());
    for (size_t k = 0; k < threads.size(); ++k) list.Set(static_cast<uint32_t>(k), counts_object(env, threads[k]));
    out.Set("threads", list);
    return out;
  }

  void close(const Napi::CallbackInfo&) {
    sut_->detach();
    sut_->stop();
    release_channel();
  }

  size_t node_count() const { return node_count_ == 0 ? 1 : node_count_; }

  class StartWorker : public Napi::AsyncWorker {
   public:
    StartWorker(Napi::Env env, std::shared_ptr<loadgen::HttpSut> sut, Napi::Promise::Deferred deferred)
        : Napi::AsyncWorker(env, "loadgen-http-start"), sut_(std::move(sut)), deferred_(deferred) {}
    void Execute() override {
      if (!sut_->start(&error_) && error_.empty()) error_ = "the native HTTP client could not start";
    }
    void OnOK() override { deferred_.Resolve(Napi::String::New(Env(), error_)); }
    void OnError(const Napi::Error& e) override { deferred_.Reject(e.Value()); }

   private:
    std::shared_ptr<loadgen::HttpSut> sut_;
    Napi::Promise::Deferred deferred_;
    std::string error_;
  };

  std::shared_ptr<loadgen::HttpSut> sut_;
  std::shared_ptr<HostChannel> channel_;
  size_t node_count_ = 0;
  bool started_ = false;
};

}  // namespace

// The process's open-file limit (RLIMIT_NOFILE, soft), which every
// connection counts against; -1 when unlimited or unknown.
Napi::Value open_file_limit(const Napi::CallbackInfo& info) {
#if defined(__unix__) || defined(__APPLE__)
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != RLIM_INFINITY)
    return Napi::Number::New(info.Env(), static_cast<double>(files.rlim_cur));
#endif
  return Napi::Number::New(info.Env(), -1);
}

void register_http_sut(Napi::Env env, Napi::Object exports) {
  exports.Set("NativeHttpSut", NativeHttpSut::define(env));
  exports.Set("nativeHttpAvailable", Napi::Boolean::New(env, loadgen::HttpClient::available()));
  exports.Set("openFileLimit", Napi::Function::New(env, open_file_limit, "openFileLimit"));
}

std::shared_ptr<loadgen::HttpSut> unwrap_http_sut(const Napi::Value& value) {
  if (!value.IsObject()) return nullptr;
  bool tagged = false;
  if (napi_check_object_type_tag(value.Env(), value, &kNativeHttpSutTag, &tagged) != napi_ok || !tagged) return nullptr;
  void* wrapped = nullptr;
  if (napi_unwrap(value.Env(), value, &wrapped) != napi_ok || wrapped == nullptr) return nullptr;
  return static_cast<NativeHttpSut*>(static_cast<Napi::ObjectWrap<NativeHttpSut>*>(wrapped))->sut();
}

}  // namespace loadgen_addon
