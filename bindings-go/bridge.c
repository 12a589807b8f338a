// The C side of the cgo bridge: builds PhaseoHost values whose callbacks pass on to the Go
// functions exported in host.go, and the call queue. Kept in a .c file because a Go file
// with //export may only declare C functions in its preamble.
//
// Why a queue: a host's `invoke` runs on a core thread. Entering Go there (a cgo callback)
// makes that thread find a Go P for every call, and the goroutine it starts then waits on
// a P the thread holds in a syscall state until the scheduler retakes it: tens of µs per
// call. Instead `invoke` is C: it appends the call to a process-wide queue and, only when
// the Go dispatcher sleeps, wakes it through an eventfd that the Go netpoller watches. The
// dispatcher takes the calls in batches and starts their goroutines.
//
// A run that Go drives itself (phaseo_go_poll, see drive.go) produces its calls on the
// Go thread that polls it: they are queued without waking the dispatcher, and the driver
// takes them when its poll returns. An answer given with phaseo_go_complete that makes a
// driven run ready hands its driver back to Go instead of queueing a wake-up.
#include "bridge.h"

#include <pthread.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

static pthread_mutex_t queue_mu = PTHREAD_MUTEX_INITIALIZER;
static PhaseoGoCall *queue_items;
static size_t queue_head, queue_len, queue_cap;
static int queue_fd = -1;
static bool queue_sleeping = true;

static __thread bool driving;     // this thread polls a driven run (phaseo_go_poll)
static __thread bool completing;  // this thread answers a call (phaseo_go_complete)
static __thread uintptr_t woken;  // the driver that answer made ready (0: none)

int phaseo_go_queue_open(void) {
  pthread_mutex_lock(&queue_mu);
  if (queue_fd < 0) queue_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  int fd = queue_fd;
  pthread_mutex_unlock(&queue_mu);
  return fd;
}

// Doubles the ring (under queue_mu); false when out of memory.
static bool queue_grow(void) {
  size_t cap = queue_cap ? queue_cap * 2 : 1024;
  PhaseoGoCall *items = malloc(cap * sizeof *items);
  if (!items) return false;
  for (size_t i = 0; i < queue_len; i++) items[i] = queue_items[(queue_head + i) % queue_cap];
  free(queue_items);
  queue_items = items;
  queue_cap = cap;
  queue_head = 0;
  return true;
}

// Appends an item; false when out of memory. On a driving thread the dispatcher is not
// woken: the driver takes the queue when its poll returns.
static bool queue_put(PhaseoGoCall item) {
  pthread_mutex_lock(&queue_mu);
  if (queue_len == queue_cap && !queue_grow()) {
    pthread_mutex_unlock(&queue_mu);
    return false;
  }
  queue_items[(queue_head + queue_len) % queue_cap] = item;
  queue_len++;
  bool wake = false;
  if (!driving) {
    wake = queue_sleeping;
    queue_sleeping = false;
  }
  int fd = queue_fd;
  pthread_mutex_unlock(&queue_mu);
  if (wake && fd >= 0) {
    uint64_t one = 1;
    ssize_t written = write(fd, &one, sizeof one);
    (void)written;  // a full counter (impossible: the reader drains it) still wakes the reader
  }
  return true;
}

static void phaseo_go_enqueue(void *user_data, PhaseoCall *call) {
  const char *args = phaseo_call_args(call);
  PhaseoGoCall item = {(uintptr_t)user_data,
                       (uintptr_t)phaseo_call_run_user_data(call),
                       call,
                       phaseo_call_callback(call),
                       (int)phaseo_call_kind(call),
                       args,
                       args ? strlen(args) : 0};
  if (!queue_put(item)) phaseo_call_complete(call, "phaseoagent: out of memory queueing the call", true);
}

// The wake function of a driven run: data is its driver's cgo.Handle. Within
// phaseo_go_complete the driver is handed back to Go; elsewhere a wake item is queued.
static void phaseo_go_wake(void *data) {
  uintptr_t driver = (uintptr_t)data;
  if (completing && (woken == 0 || woken == driver)) {
    woken = driver;
    return;
  }
  PhaseoGoCall item = {driver, 0, NULL, 0, PHASEO_GO_WAKE, NULL, 0};
  while (!queue_put(item)) usleep(1000);  // a lost wake-up would hang the run: retry
}

PhaseoStatus phaseo_go_poll(PhaseoRun *run, uintptr_t driver, char **out_error) {
  driving = true;
  PhaseoStatus st = phaseo_run_poll(run, phaseo_go_wake, (void *)driver, out_error);
  driving = false;
  return st;
}

uintptr_t phaseo_go_complete(PhaseoCall *call, const char *text, bool is_error) {
  completing = true;
  woken = 0;
  phaseo_call_complete(call, text, is_error);
  completing = false;
  uintptr_t driver = woken;
  woken = 0;
  return driver;
}

int phaseo_go_take(PhaseoGoCall *out, int max) {
  pthread_mutex_lock(&queue_mu);
  size_t n = queue_len < (size_t)max ? queue_len : (size_t)max;
  for (size_t i = 0; i < n; i++) out[i] = queue_items[(queue_head + i) % queue_cap];
  if (n > 0) {
    queue_head = (queue_head + n) % queue_cap;
    queue_len -= n;
  } else {
    queue_sleeping = true;  // the next enqueue writes to the eventfd
  }
  pthread_mutex_unlock(&queue_mu);
  return (int)n;
}

// The host's callbacks: the Go functions, given the handle as an integer (see bridge.h).
static void phaseo_go_on_event(void *user_data, const char *event_json) {
  goPhaseoEvent((uintptr_t)user_data, (char *)event_json);
}
static void phaseo_go_on_done(void *user_data) { goPhaseoDone((uintptr_t)user_data); }
static void phaseo_go_release(void *user_data) { goPhaseoRelease((uintptr_t)user_data); }
static void phaseo_go_cancelled(void *user_data) { goPhaseoCancel((uintptr_t)user_data); }

static PhaseoHost agent_host(uintptr_t handle) {
  PhaseoHost host = {(void *)handle, phaseo_go_enqueue, NULL, NULL, phaseo_go_release};
  return host;
}

static PhaseoHost run_host(uintptr_t handle, bool events) {
  PhaseoHost host = {(void *)handle, phaseo_go_enqueue, events ? phaseo_go_on_event : NULL, phaseo_go_on_done,
                     phaseo_go_release};
  return host;
}

enum PhaseoStatus phaseo_go_agent_new(const char *definition_json, const PhaseoStore *store, uintptr_t handle,
                                      PhaseoAgent **out_agent, char **out_error) {
  return phaseo_agent_new(definition_json, store, agent_host(handle), out_agent, out_error);
}

enum PhaseoStatus phaseo_go_client_host_stream(uintptr_t handle, uint64_t generate_callback,
                                               uint64_t stream_callback, PhaseoClient **out_client,
                                               char **out_error) {
  return phaseo_client_host_stream(agent_host(handle), generate_callback, stream_callback, out_client, out_error);
}

enum PhaseoStatus phaseo_go_store_accessor(uintptr_t handle, uint64_t load_callback, uint64_t save_callback,
                                           PhaseoStore **out_store, char **out_error) {
  return phaseo_store_accessor(agent_host(handle), load_callback, save_callback, out_store, out_error);
}

enum PhaseoStatus phaseo_go_serve_mcp(const char *options_json, const PhaseoClient *client, uintptr_t handle,
                                      bool events, PhaseoMcpServer **out_server, char **out_error) {
  return phaseo_serve_mcp(options_json, client, run_host(handle, events), out_server, out_error);
}

enum PhaseoStatus phaseo_go_run_driven(const PhaseoAgent *agent, const char *options_json,
                                       const PhaseoClient *client, const PhaseoStore *store, uintptr_t handle,
                                       bool events, PhaseoRun **out_run, char **out_error) {
  return phaseo_agent_run_driven(agent, options_json, client, store, run_host(handle, events), out_run, out_error);
}

enum PhaseoStatus phaseo_go_continue_driven(const PhaseoAgent *agent, const char *state_json,
                                            const char *run_id, const char *options_json,
                                            const PhaseoClient *client, const PhaseoStore *store,
                                            uintptr_t handle, bool events, PhaseoRun **out_run,
                                            char **out_error) {
  return phaseo_agent_continue_driven(agent, state_json, run_id, options_json, client, store,
                                      run_host(handle, events), out_run, out_error);
}

enum PhaseoStatus phaseo_go_recover_driven(const PhaseoAgent *agent, const char *run_id,
                                           const char *options_json, const PhaseoClient *client,
                                           const PhaseoStore *store, uintptr_t handle, bool events,
                                           PhaseoRun **out_run, char **out_error) {
  return phaseo_agent_recover_driven(agent, run_id, options_json, client, store, run_host(handle, events), out_run,
                                     out_error);
}

enum PhaseoStatus phaseo_go_stream(const PhaseoAgent *agent, const char *options_json,
                                   const PhaseoClient *client, const PhaseoStore *store, uintptr_t handle,
                                   bool events, PhaseoStream **out_stream, char **out_error) {
  return phaseo_agent_stream(agent, options_json, client, store, run_host(handle, events), out_stream, out_error);
}

enum PhaseoStatus phaseo_go_continue_stream(const PhaseoAgent *agent, const char *state_json,
                                            const char *run_id, const char *options_json,
                                            const PhaseoClient *client, const PhaseoStore *store,
                                            uintptr_t handle, bool events, PhaseoStream **out_stream,
                                            char **out_error) {
  return phaseo_agent_continue_stream(agent, state_json, run_id, options_json, client, store,
                                      run_host(handle, events), out_stream, out_error);
}

PhaseoStatus phaseo_go_on_cancel(PhaseoCall *call, uintptr_t handle, char **out_error) {
  return phaseo_call_on_cancel(call, phaseo_go_cancelled, (void *)handle, out_error);
}
