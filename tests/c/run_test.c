#define _DEFAULT_SOURCE
/* Drives the C ABI directly (compiled by `make c-tests`, linked to the static library):
 * a run with a tool answered from another thread, a pause + continue, a failed run, a
 * refused continue, an invalid definition, a cancelled run whose tool sees the
 * cancellation, runs driven by the caller's thread (phaseo_run_poll), and driven runs of
 * queue hosts (phaseo_queue_run_poll). Exits non-zero on the first failed check. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "phaseo_agent.h"

static int failures = 0;

#define CHECK(cond, ...)                                                       \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                     \
      fprintf(stderr, __VA_ARGS__);                                            \
      fprintf(stderr, "\n");                                                   \
      failures++;                                                              \
    }                                                                          \
  } while (0)

#define CONTAINS(text, needle)                                                 \
  CHECK((text) != NULL && strstr((text), (needle)) != NULL,                    \
        "expected %s to contain %s", (text) ? (text) : "(null)", (needle))

/* Callback ids of the agent definition. */
enum { CB_ADD = 1, CB_DEPLOY = 2, CB_BROKEN = 3, CB_SLOW = 4 };

typedef struct {
  atomic_int calls;
  atomic_int released;
  atomic_int cancelled_seen;
  atomic_int saw_cancelled_flag;
  /* phaseo_call_run_user_data of the last `add` and `deploy` calls: their run's host. */
  _Atomic(void *) add_run;
  _Atomic(void *) deploy_run;
} HostState;

typedef struct {
  atomic_int events;
  atomic_int done;
  atomic_int released;
} RunState;

/* While set, `add` answers only once the driving thread's poll has returned pending
 * (`driver_pending`, set by `drive`), so that the driven check's answer comes while the
 * driver waits, however the threads are scheduled: a driver descheduled mid-poll for longer
 * than the tool's delay would otherwise see the answer within that poll, and never wait. */
static atomic_int add_waits_for_driver;
static atomic_int driver_pending;

/* Answers `add` later, from a thread of its own: the asynchronous completion path. */
static void *answer_add(void *arg) {
  PhaseoCall *call = arg;
  if (atomic_load(&add_waits_for_driver)) {
    for (int i = 0; i < 10000 && atomic_load(&driver_pending) == 0; i++) usleep(1000);
  }
  const char *args = phaseo_call_args(call);
  int a = 0, b = 0;
  const char *pa = strstr(args, "\"a\":");
  const char *pb = strstr(args, "\"b\":");
  if (pa) a = atoi(pa + 4);
  if (pb) b = atoi(pb + 4);
  char *err = NULL;
  phaseo_call_emit_progress(call, "{\"step\":\"adding\"}", &err);
  phaseo_string_free(err);
  usleep(1000);
  char answer[64];
  snprintf(answer, sizeof answer, "{\"sum\":%d}", a + b);
  phaseo_call_complete(call, answer, false);
  return NULL;
}

static void on_cancel(void *user_data) {
  HostState *state = user_data;
  atomic_fetch_add(&state->cancelled_seen, 1);
}

static HostState *slow_state;

/* The slow tool never answers by itself: it answers once its on_cancel told it to stop
 * (and then sees the call cancelled when it polls as well). */
static void *answer_when_cancelled(void *arg) {
  PhaseoCall *call = arg;
  while (atomic_load(&slow_state->cancelled_seen) == 0) usleep(1000);
  atomic_store(&slow_state->saw_cancelled_flag, phaseo_call_is_cancelled(call) ? 1 : -1);
  phaseo_call_complete(call, "tool stopped", true);
  return NULL;
}

static void invoke(void *user_data, PhaseoCall *call) {
  HostState *state = user_data;
  atomic_fetch_add(&state->calls, 1);
  pthread_t thread;
  switch (phaseo_call_callback(call)) {
  case CB_ADD:
    atomic_store(&state->add_run, phaseo_call_run_user_data(call));
    pthread_create(&thread, NULL, answer_add, call);
    pthread_detach(thread);
    break;
  case CB_DEPLOY:
    atomic_store(&state->deploy_run, phaseo_call_run_user_data(call));
    /* Answered synchronously, inside invoke: also allowed. */
    phaseo_call_complete(call, "{\"deployed\":true}", false);
    break;
  case CB_BROKEN:
    phaseo_call_complete(call, "disk full", true);
    break;
  case CB_SLOW: {
    char *err = NULL;
    slow_state = state;
    if (phaseo_call_on_cancel(call, on_cancel, state, &err) != PHASEO_STATUS_OK) {
      fprintf(stderr, "on_cancel: %s\n", err);
      phaseo_string_free(err);
    }
    pthread_create(&thread, NULL, answer_when_cancelled, call);
    pthread_detach(thread);
    break;
  }
  default:
    phaseo_call_complete(call, "unknown callback", true);
  }
}

static void release_host(void *user_data) {
  atomic_fetch_add(&((HostState *)user_data)->released, 1);
}

static void on_event(void *user_data, const char *event_json) {
  (void)event_json;
  atomic_fetch_add(&((RunState *)user_data)->events, 1);
}

static void on_done(void *user_data) { atomic_fetch_add(&((RunState *)user_data)->done, 1); }

static void release_run(void *user_data) {
  atomic_fetch_add(&((RunState *)user_data)->released, 1);
}

static PhaseoHost run_host(RunState *state) {
  PhaseoHost host = {state, NULL, on_event, on_done, release_run};
  return host;
}

static const char *DEFINITION =
    "{\"id\":\"c-agent\",\"tools\":["
    "{\"id\":\"add\",\"parameters\":{\"type\":\"object\",\"required\":[\"a\",\"b\"]},"
    " \"execute\":{\"$callback\":1}},"
    "{\"id\":\"deploy\",\"requireApproval\":true,\"execute\":{\"$callback\":2}},"
    "{\"id\":\"broken\",\"execute\":{\"$callback\":3}},"
    "{\"id\":\"slow\",\"execute\":{\"$callback\":4}}]}";

static const char *SCRIPT =
    "["
    "{\"toolCalls\":[{\"id\":\"c1\",\"name\":\"add\",\"arguments\":\"{\\\"a\\\":2,\\\"b\\\":3}\"}]},"
    "{\"text\":\"5\"},"
    "{\"toolCalls\":[{\"id\":\"d1\",\"name\":\"deploy\",\"arguments\":\"{}\"}]},"
    "{\"text\":\"Deployed.\"},"
    "{\"toolCalls\":[{\"id\":\"b1\",\"name\":\"broken\",\"arguments\":\"{}\"}]},"
    "{\"toolCalls\":[{\"id\":\"s1\",\"name\":\"slow\",\"arguments\":\"{}\"}]}"
    "]";

/* Runs to the end: returns the status, fills *json (state) or *err. */
static PhaseoStatus run_once(PhaseoAgent *agent, PhaseoClient *client, const char *state_json,
                             const char *options, RunState *rs, char **json, char **err) {
  PhaseoRun *run = NULL;
  PhaseoStatus status =
      state_json
          ? phaseo_agent_continue(agent, state_json, NULL, options, client, NULL, run_host(rs),
                                  &run, err)
          : phaseo_agent_run(agent, options, client, NULL, run_host(rs), &run, err);
  if (status != PHASEO_STATUS_OK) return status;
  status = phaseo_run_wait(run, json, err);
  phaseo_run_free(run);
  return status;
}

/* The wake-up of a driven run: a flag and a condition variable the driving thread waits on. */
typedef struct {
  pthread_mutex_t mu;
  pthread_cond_t cond;
  int woken;
  atomic_int wakes;
} Waker;

static void wake_driver(void *data) {
  Waker *w = data;
  atomic_fetch_add(&w->wakes, 1);
  pthread_mutex_lock(&w->mu);
  w->woken = 1;
  pthread_cond_signal(&w->cond);
  pthread_mutex_unlock(&w->mu);
}

/* Polls a driven run on this thread until it ends; returns how many polls it took. */
static int drive(PhaseoRun *run, Waker *w, char **err) {
  int polls = 0;
  for (;;) {
    polls++;
    PhaseoStatus st = phaseo_run_poll(run, wake_driver, w, err);
    if (st != PHASEO_STATUS_PENDING) return st == PHASEO_STATUS_OK ? polls : -1;
    atomic_store(&driver_pending, 1);
    pthread_mutex_lock(&w->mu);
    while (!w->woken) pthread_cond_wait(&w->cond, &w->mu);
    w->woken = 0;
    pthread_mutex_unlock(&w->mu);
  }
}

/* Runs driven by this thread: a tool answered from another thread (the wake-up comes from
 * there), one answered inside invoke (during the poll), a continue, a cancellation, and
 * the misuses the ABI refuses. */
static void check_driven(PhaseoAgent *agent, HostState *hs) {
  char *err = NULL;
  PhaseoClient *client = NULL;
  CHECK(phaseo_client_scripted(SCRIPT, 0, &client, &err) == PHASEO_STATUS_OK, "client: %s", err);
  Waker w = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0};

  RunState rs = {0};
  PhaseoRun *run = NULL;
  CHECK(phaseo_agent_run_driven(agent, "{\"input\":\"2+3?\"}", client, NULL, run_host(&rs), &run,
                                &err) == PHASEO_STATUS_OK,
        "driven run: %s", err);
  usleep(20000);
  CHECK(atomic_load(&rs.events) == 0, "a driven run does nothing before it is polled");
  char *state = NULL;
  CHECK(phaseo_run_wait(run, &state, &err) == PHASEO_STATUS_ERROR, "wait before the end is refused");
  CONTAINS(err, "poll it with phaseo_run_poll until it ends");
  phaseo_string_free(err);
  err = NULL;
  atomic_store(&driver_pending, 0);
  atomic_store(&add_waits_for_driver, 1);
  int polls = drive(run, &w, &err);
  atomic_store(&add_waits_for_driver, 0);
  CHECK(polls >= 2, "the tool answered from another thread woke the driver (%d polls): %s", polls, err);
  CHECK(atomic_load(&w.wakes) >= 1, "wake was called");
  CHECK(rs.done == 1 && rs.released == 1, "done %d released %d when the poll ended it", rs.done,
        rs.released);
  CHECK(phaseo_run_is_done(run), "ended");
  CHECK(phaseo_run_wait(run, &state, &err) == PHASEO_STATUS_OK, "result: %s", err);
  CONTAINS(state, "\"status\":\"completed\"");
  CONTAINS(state, "{\"sum\":5}");
  CHECK(phaseo_run_poll(run, wake_driver, &w, &err) == PHASEO_STATUS_OK, "an ended run polls as ended");
  /* The state taken natively: its head without the history, its whole text on demand. */
  PhaseoState *native = NULL;
  char *head = NULL;
  CHECK(phaseo_run_take_state(run, &native, &head, &err) == PHASEO_STATUS_OK, "take: %s", err);
  CHECK(native != NULL, "a state handle");
  CONTAINS(head, "\"status\":\"completed\"");
  CONTAINS(head, "\"messages\":[]");
  CONTAINS(head, "\"stepResults\":[]");
  CHECK(strstr(head, "{\"sum\":5}") == NULL, "the head holds no tool result: %s", head);
  CONTAINS(head, "\"output\":\"5\"");
  char *whole = phaseo_state_json(native);
  CHECK(whole != NULL && strcmp(whole, state) == 0, "the handle's text is the state's: %s", whole);
  /* Without its items: the whole text with `,"items":[…]` (its last part here) cut out. */
  char *without = phaseo_state_json_without_items(native);
  const char *items = strstr(whole, ",\"items\":[");
  CHECK(without != NULL && items != NULL && strncmp(without, whole, (size_t)(items - whole)) == 0 &&
            strcmp(without + (items - whole), "}") == 0 && strcmp(whole + strlen(whole) - 2, "]}") == 0,
        "the text without items: %s", without);
  CONTAINS(without, "{\"sum\":5}");
  CHECK(phaseo_state_json_without_items(NULL) == NULL, "NULL state, no text");
  phaseo_string_free(without);
  CHECK(phaseo_state_size(native) > 0, "a state has a size");
  CHECK(phaseo_state_size(NULL) == 0 && phaseo_state_json(NULL) == NULL, "NULL state");
  PhaseoState *again = NULL;
  CHECK(phaseo_run_take_state(run, &again, &head, &err) == PHASEO_STATUS_ERROR && again == NULL,
        "a state is taken once");
  CONTAINS(err, "already taken");
  phaseo_string_free(err);
  err = NULL;
  char *after = NULL;
  CHECK(phaseo_run_wait(run, &after, &err) == PHASEO_STATUS_ERROR && after == NULL,
        "wait after the take is refused");
  CONTAINS(err, "already taken");
  phaseo_string_free(err);
  err = NULL;
  CHECK(phaseo_run_take_state(run, NULL, NULL, &err) == PHASEO_STATUS_ERROR, "NULL out_state");
  CONTAINS(err, "out_state is NULL");
  phaseo_string_free(err);
  err = NULL;
  phaseo_run_free(run);
  /* The state outlives its run. */
  char *later = phaseo_state_json(native);
  CHECK(later != NULL && strcmp(later, state) == 0, "the state outlives its run");
  phaseo_string_free(whole);
  phaseo_string_free(later);
  phaseo_string_free(head);
  phaseo_state_free(native);
  phaseo_state_free(NULL);
  phaseo_string_free(state);

  /* A tool answered inside invoke, during the poll; then the pause is continued, driven. */
  RunState rs2 = {0};
  run = NULL;
  CHECK(phaseo_agent_run_driven(agent, "{\"input\":\"deploy\"}", client, NULL, run_host(&rs2), &run,
                                &err) == PHASEO_STATUS_OK,
        "driven run 2: %s", err);
  CHECK(drive(run, &w, &err) > 0, "driven run 2: %s", err);
  char *paused = NULL;
  CHECK(phaseo_run_wait(run, &paused, &err) == PHASEO_STATUS_OK, "paused: %s", err);
  CONTAINS(paused, "\"status\":\"waiting_for_human\"");
  phaseo_run_free(run);
  RunState rs3 = {0};
  run = NULL;
  CHECK(phaseo_agent_continue_driven(agent, paused, NULL, "{\"approvals\":[\"d1\"]}", client, NULL,
                                     run_host(&rs3), &run, &err) == PHASEO_STATUS_OK,
        "driven continue: %s", err);
  CHECK(drive(run, &w, &err) > 0, "driven continue: %s", err);
  char *done = NULL;
  CHECK(phaseo_run_wait(run, &done, &err) == PHASEO_STATUS_OK, "continued: %s", err);
  CONTAINS(done, "Deployed.");
  CHECK(atomic_load(&hs->deploy_run) == &rs3, "the approved call names the driven continue's run");
  phaseo_run_free(run);
  phaseo_string_free(paused);
  phaseo_string_free(done);

  /* Skip the broken turn; the slow tool holds the run until it is cancelled. */
  RunState rs4 = {0};
  run = NULL;
  CHECK(phaseo_agent_run_driven(agent, "{\"input\":\"break\"}", client, NULL, run_host(&rs4), &run,
                                &err) == PHASEO_STATUS_OK,
        "driven run 4: %s", err);
  CHECK(drive(run, &w, &err) < 0 || phaseo_run_wait(run, &state, &err) == PHASEO_STATUS_ERROR,
        "the broken tool fails the driven run");
  CONTAINS(err, "disk full");
  phaseo_string_free(err);
  err = NULL;
  for (int i = 0; i < 2; i++) {
    PhaseoState *failed_state = NULL;
    CHECK(phaseo_run_take_state(run, &failed_state, NULL, &err) == PHASEO_STATUS_ERROR &&
              failed_state == NULL,
          "a failed run has no state to take (asked %d times)", i + 1);
    CONTAINS(err, "disk full");
    phaseo_string_free(err);
    err = NULL;
  }
  phaseo_run_free(run);
  RunState rs5 = {0};
  run = NULL;
  atomic_store(&hs->cancelled_seen, 0);
  atomic_store(&hs->saw_cancelled_flag, 0);
  CHECK(phaseo_agent_run_driven(agent, "{\"input\":\"slow\"}", client, NULL, run_host(&rs5), &run,
                                &err) == PHASEO_STATUS_OK,
        "driven run 5: %s", err);
  int calls_before = atomic_load(&hs->calls);
  while (atomic_load(&hs->calls) == calls_before) {
    CHECK(phaseo_run_poll(run, wake_driver, &w, &err) == PHASEO_STATUS_PENDING, "the slow tool holds it");
    if (atomic_load(&hs->calls) != calls_before) break;
    pthread_mutex_lock(&w.mu);
    while (!w.woken) pthread_cond_wait(&w.cond, &w.mu);
    w.woken = 0;
    pthread_mutex_unlock(&w.mu);
  }
  phaseo_run_cancel(run);
  CHECK(drive(run, &w, &err) > 0, "cancelled driven run: %s", err);
  char *cancelled = NULL;
  CHECK(phaseo_run_wait(run, &cancelled, &err) == PHASEO_STATUS_OK, "cancelled: %s", err);
  CONTAINS(cancelled, "\"status\":\"cancelled\"");
  phaseo_string_free(cancelled);
  phaseo_run_free(run);
  for (int i = 0; i < 1000 && atomic_load(&hs->saw_cancelled_flag) == 0; i++) usleep(1000);
  CHECK(hs->saw_cancelled_flag == 1, "the driven run's cancelled call polls as cancelled");

  /* Misuse: NULL, a run the core runs itself, no wake function; a driven run freed
   * before its end is cancelled and lets its host go. */
  CHECK(phaseo_run_poll(NULL, wake_driver, &w, &err) == PHASEO_STATUS_ERROR, "NULL run refused");
  CONTAINS(err, "the run handle is NULL");
  phaseo_string_free(err);
  err = NULL;
  RunState rs6 = {0};
  run = NULL;
  CHECK(phaseo_agent_run(agent, "{\"input\":\"x\"}", client, NULL, run_host(&rs6), &run, &err) ==
            PHASEO_STATUS_OK,
        "spawned run: %s", err);
  CHECK(phaseo_run_poll(run, wake_driver, &w, &err) == PHASEO_STATUS_ERROR, "a spawned run is not polled");
  CONTAINS(err, "not started driven");
  phaseo_string_free(err);
  err = NULL;
  phaseo_run_wait(run, &state, &err);
  phaseo_string_free(state);
  phaseo_string_free(err);
  err = NULL;
  phaseo_run_free(run);
  RunState rs7 = {0};
  run = NULL;
  CHECK(phaseo_agent_run_driven(agent, "{\"input\":\"x\"}", client, NULL, run_host(&rs7), &run, &err) ==
            PHASEO_STATUS_OK,
        "driven run 7: %s", err);
  CHECK(phaseo_run_poll(run, NULL, NULL, &err) == PHASEO_STATUS_ERROR, "a poll without wake is refused");
  CONTAINS(err, "wake is NULL");
  phaseo_string_free(err);
  err = NULL;
  phaseo_run_free(run);
  CHECK(rs7.released == 1 && rs7.done == 0, "a driven run freed unpolled releases its host (%d)",
        rs7.released);
  phaseo_client_free(client);
}

// The later entry points (tracing, a run's traceparent, host
// stream clients, state accessors): their refusals; the Go tests drive them end to end.
/* Takes the queued items until none comes within timeout_ms; counts them by kind. */
static void drain_queue(uint32_t timeout_ms, int counts[7]) {
  PhaseoQueued item;
  char *err = NULL;
  while (phaseo_queue_next(timeout_ms, &item, &err) == PHASEO_STATUS_OK) {
    if ((int)item.kind >= 0 && (int)item.kind < 7) counts[item.kind]++;
    if (item.kind == PHASEO_QUEUED_KIND_EVENT) phaseo_string_free(item.event_json);
    if (item.kind == PHASEO_QUEUED_KIND_INVOKE) phaseo_call_complete(item.call, "unexpected", true);
  }
  phaseo_string_free(err);
}

static void *complete_later(void *call) {
  usleep(2000);
  phaseo_call_complete(call, "{\"sum\":7}", false);
  return NULL;
}

/* A driven run of a queue host: the calls its polls produce stay with the polling thread,
 * an answer given while that thread runs the call wakes nothing, and an answer from
 * elsewhere queues a WAKE item naming the driver. */
static void check_queue_driven(void) {
  char *err = NULL;
  void *tag = (void *)0x7a6;
  void *driver = (void *)0x77;
  PhaseoAgent *agent = NULL;
  CHECK(phaseo_agent_new("{\"id\":\"q\",\"tools\":[{\"id\":\"add\",\"execute\":{\"$callback\":1}}]}",
                         NULL, phaseo_queue_host(tag, false, false), &agent, &err) == PHASEO_STATUS_OK,
        "queue agent: %s", err);
  PhaseoClient *client = NULL;
  CHECK(phaseo_client_scripted(
            "[{\"toolCalls\":[{\"id\":\"q1\",\"name\":\"add\",\"arguments\":\"{}\"}]},"
            "{\"toolCalls\":[{\"id\":\"q2\",\"name\":\"add\",\"arguments\":\"{}\"}]},{\"text\":\"ok\"}]",
            0, &client, &err) == PHASEO_STATUS_OK,
        "queue client: %s", err);
  PhaseoRun *run = NULL;
  CHECK(phaseo_agent_run_driven(agent, "{\"input\":\"go\"}", client, NULL, phaseo_queue_host(tag, false, true),
                                &run, &err) == PHASEO_STATUS_OK,
        "queue driven run: %s", err);
  CHECK(phaseo_queue_run_poll(run, driver, &err) == PHASEO_STATUS_PENDING, "waits for q1: %s", err);
  PhaseoQueued item;
  CHECK(phaseo_queue_take_local(&item, &err) == PHASEO_STATUS_OK, "q1 kept for this thread");
  CHECK(item.kind == PHASEO_QUEUED_KIND_INVOKE && item.user_data == tag && phaseo_call_callback(item.call) == 1,
        "q1 is the add call of the agent's host");
  PhaseoCallInfo info;
  CHECK(phaseo_call_read(item.call, &info) == PHASEO_STATUS_OK, "q1 read");
  CHECK(info.kind == PHASEO_CALL_KIND_EXECUTE && info.callback == 1 && info.args == phaseo_call_args(item.call) &&
            info.args_len == strlen(info.args) && strncmp(info.args, "[{},", 4) == 0,
        "q1 read in one call: kind, callback and arguments as read one by one (%s)", info.args);
  CHECK(phaseo_call_read(NULL, &info) == PHASEO_STATUS_ERROR && phaseo_call_read(item.call, NULL) == PHASEO_STATUS_ERROR,
        "a NULL call or info is refused");
  PhaseoQueued none;
  CHECK(phaseo_queue_take_local(&none, &err) == PHASEO_STATUS_END, "one call only");
  int counts[7] = {0};
  drain_queue(20, counts);
  CHECK(counts[PHASEO_QUEUED_KIND_INVOKE] == 0, "the call did not go through the queue");

  /* Answered while this thread runs it for the driver: no wake-up is queued. */
  void *previous = phaseo_queue_inline_begin(driver);
  phaseo_call_complete(item.call, "{\"sum\":5}", false);
  phaseo_queue_inline_end(previous);
  drain_queue(20, counts);
  CHECK(counts[PHASEO_QUEUED_KIND_WAKE] == 0, "an inline answer queues no wake-up");

  /* Polled again: q2, answered from another thread, queues one wake-up for the driver. */
  CHECK(phaseo_queue_run_poll(run, driver, &err) == PHASEO_STATUS_PENDING, "waits for q2: %s", err);
  CHECK(phaseo_queue_take_local(&item, &err) == PHASEO_STATUS_OK, "q2 kept for this thread");
  pthread_t thread;
  pthread_create(&thread, NULL, complete_later, item.call);
  PhaseoQueued wake;
  CHECK(phaseo_queue_next(5000, &wake, &err) == PHASEO_STATUS_OK && wake.kind == PHASEO_QUEUED_KIND_WAKE &&
            wake.user_data == driver,
        "the answer from another thread queues a WAKE naming the driver");
  pthread_join(thread, NULL);
  CHECK(phaseo_queue_run_poll(run, driver, &err) == PHASEO_STATUS_OK, "the run ends: %s", err);
  char *state = NULL;
  CHECK(phaseo_run_wait(run, &state, &err) == PHASEO_STATUS_OK, "queue driven result: %s", err);
  CONTAINS(state, "\"status\":\"completed\"");
  CONTAINS(state, "{\\\"sum\\\":7}");
  phaseo_string_free(state);
  phaseo_run_free(run);
  memset(counts, 0, sizeof counts);
  drain_queue(50, counts);
  CHECK(counts[PHASEO_QUEUED_KIND_DONE] == 1, "the run's end is queued once: %d", counts[PHASEO_QUEUED_KIND_DONE]);
  CHECK(counts[PHASEO_QUEUED_KIND_WAKE] == 0, "no wake-up after the end");
  CHECK(phaseo_queue_take_local(NULL, &err) == PHASEO_STATUS_ERROR, "NULL item refused");
  CONTAINS(err, "out_item is NULL");
  phaseo_string_free(err);
  phaseo_client_free(client);
  phaseo_agent_free(agent);
}

static void check_additions(PhaseoAgent *agent, PhaseoClient *client) {
  char *err = NULL;
  CHECK(phaseo_tracing_enable("{\"endpoint\":\"not a url\"}", &err) == PHASEO_STATUS_ERROR,
        "a bad tracing endpoint is refused");
  CONTAINS(err, "\"code\":\"definition_invalid\"");
  CONTAINS(err, "endpoint 'not a url' is not a URL");
  phaseo_string_free(err);
  err = NULL;
  CHECK(phaseo_tracing_enable("{\"colour\":1}", &err) == PHASEO_STATUS_ERROR, "unknown tracing option");
  CONTAINS(err, "unknown field `colour`");
  phaseo_string_free(err);
  err = NULL;
  CHECK(!phaseo_tracing_is_enabled(), "tracing stays off");
  CHECK(phaseo_tracing_flush(&err) == PHASEO_STATUS_OK, "flush while off is a no-op: %s", err);

  RunState rs = {0};
  PhaseoRun *run = NULL;
  PhaseoStatus st = phaseo_agent_run(agent, "{\"input\":1,\"traceparent\":7}", client, NULL,
                                     run_host(&rs), &run, &err);
  CHECK(st == PHASEO_STATUS_ERROR, "a traceparent that is not a string is refused");
  CONTAINS(err, "traceparent: invalid type: integer `7`, expected a string");
  phaseo_string_free(err);
  err = NULL;

  PhaseoHost none = {0};
  PhaseoClient *streaming = NULL;
  CHECK(phaseo_client_host_stream(none, 0, 0, &streaming, &err) == PHASEO_STATUS_ERROR,
        "a host client needs a callback");
  CONTAINS(err, "needs a generate or a stream callback");
  phaseo_string_free(err);
  err = NULL;
  PhaseoStore *store = NULL;
  CHECK(phaseo_store_accessor(none, 1, 0, &store, &err) == PHASEO_STATUS_ERROR,
        "an accessor needs load and save");
  CONTAINS(err, "needs a load and a save callback");
  phaseo_string_free(err);
  err = NULL;
  CHECK(phaseo_call_stream_event(NULL, "{}", &err) == PHASEO_STATUS_ERROR, "NULL call refused");
  CONTAINS(err, "\"code\":\"invalid_argument\"");
  phaseo_string_free(err);
}

int main(void) {
  HostState hs = {0};
  PhaseoHost host = {&hs, invoke, NULL, NULL, release_host};
  PhaseoAgent *agent = NULL;
  char *err = NULL;
  CHECK(phaseo_agent_new(DEFINITION, NULL, host, &agent, &err) == PHASEO_STATUS_OK, "agent: %s",
        err);

  PhaseoClient *client = NULL;
  CHECK(phaseo_client_scripted(SCRIPT, 0, &client, &err) == PHASEO_STATUS_OK, "client: %s", err);

  /* 1. A run with a tool answered from another thread. */
  RunState rs1 = {0};
  char *state = NULL;
  PhaseoStatus st = run_once(agent, client, NULL, "{\"input\":\"2+3?\"}", &rs1, &state, &err);
  CHECK(st == PHASEO_STATUS_OK, "run: %s", err);
  CONTAINS(state, "\"status\":\"completed\"");
  CONTAINS(state, "{\"sum\":5}");
  CONTAINS(state, "{\"step\":\"adding\"}");
  CHECK(rs1.events > 5, "events: %d", rs1.events);
  /* A tool call names its run: the user_data of the run's host. */
  CHECK(atomic_load(&hs.add_run) == &rs1, "the add call's run user_data");
  /* on_done and release follow the outcome (wait may return first). */
  for (int i = 0; i < 1000 && atomic_load(&rs1.released) == 0; i++) usleep(1000);
  CHECK(rs1.done == 1 && rs1.released == 1, "done %d released %d", rs1.done, rs1.released);
  phaseo_string_free(state);

  /* 2. Pause for approval, then continue from the state's JSON text. */
  RunState rs2 = {0};
  char *paused = NULL;
  st = run_once(agent, client, NULL, "{\"input\":\"deploy\"}", &rs2, &paused, &err);
  CHECK(st == PHASEO_STATUS_OK, "run 2: %s", err);
  CONTAINS(paused, "\"status\":\"waiting_for_human\"");
  CONTAINS(paused, "\"kind\":\"tool_approval\"");
  char *done = NULL;
  RunState rs2c = {0};
  st = run_once(agent, client, paused, "{\"approvals\":[\"d1\"]}", &rs2c, &done, &err);
  CHECK(st == PHASEO_STATUS_OK, "continue: %s", err);
  CONTAINS(done, "\"status\":\"completed\"");
  CONTAINS(done, "Deployed.");
  CHECK(atomic_load(&hs.deploy_run) == &rs2c, "the approved call names the continue's run");
  CHECK(phaseo_call_run_user_data(NULL) == NULL, "NULL call: no run");

  /* 3. A refused continue: the run is no longer waiting; no state comes back. */
  char *refused = NULL;
  st = run_once(agent, client, done, "{\"approvals\":[\"d1\"]}", &rs2, &refused, &err);
  CHECK(st == PHASEO_STATUS_ERROR, "refused continue should fail");
  CONTAINS(err, "\"code\":\"continue_invalid\"");
  CONTAINS(err, "is not waiting for human input");
  CHECK(strstr(err, "\"state\"") == NULL, "a refused continue carries no state: %s", err);
  CHECK(refused == NULL, "no result on error");
  phaseo_string_free(err);
  err = NULL;
  phaseo_string_free(paused);
  phaseo_string_free(done);

  /* 4. A tool error fails the run (fail-run): the error carries the failed state. */
  RunState rs3 = {0};
  char *failed = NULL;
  st = run_once(agent, client, NULL, "{\"input\":\"break\"}", &rs3, &failed, &err);
  CHECK(st == PHASEO_STATUS_ERROR, "the broken tool should fail the run");
  CONTAINS(err, "\"code\":\"tool_failed\"");
  CONTAINS(err, "disk full");
  CONTAINS(err, "\"state\":{");
  CONTAINS(err, "\"status\":\"failed\"");
  phaseo_string_free(err);
  err = NULL;

  /* 5. Cancelling a run reaches the host's tool; the run ends `cancelled`. */
  RunState rs4 = {0};
  PhaseoRun *run = NULL;
  st = phaseo_agent_run(agent, "{\"input\":\"slow\"}", client, NULL, run_host(&rs4), &run, &err);
  CHECK(st == PHASEO_STATUS_OK, "run 5: %s", err);
  while (atomic_load(&hs.calls) < 4) usleep(1000);
  CHECK(!phaseo_run_is_done(run), "the slow tool holds the run");
  phaseo_run_cancel(run);
  char *cancelled = NULL;
  st = phaseo_run_wait(run, &cancelled, &err);
  CHECK(st == PHASEO_STATUS_OK, "cancelled run: %s", err);
  CONTAINS(cancelled, "\"status\":\"cancelled\"");
  phaseo_string_free(cancelled);
  phaseo_run_free(run);
  for (int i = 0; i < 1000 && atomic_load(&hs.cancelled_seen) == 0; i++) usleep(1000);
  CHECK(hs.cancelled_seen == 1, "on_cancel called once: %d", hs.cancelled_seen);
  for (int i = 0; i < 1000 && atomic_load(&hs.saw_cancelled_flag) == 0; i++) usleep(1000);
  CHECK(hs.saw_cancelled_flag == 1, "the cancelled call polls as cancelled");
  CHECK(phaseo_client_cursor(client) == 6, "cursor %zu", phaseo_client_cursor(client));

  /* 6. Bad input: an invalid definition, a NULL handle, a JSON Schema helper. */
  PhaseoAgent *bad = NULL;
  HostState hs2 = {0};
  PhaseoHost host2 = {&hs2, invoke, NULL, NULL, release_host};
  st = phaseo_agent_new("{\"id\":\"x\",\"tools\":[{\"id\":\"t\",\"timeoutMs\":-1}]}", NULL, host2,
                        &bad, &err);
  CHECK(st == PHASEO_STATUS_ERROR && bad == NULL, "negative timeout refused");
  CONTAINS(err, "\"code\":\"definition_invalid\"");
  CHECK(hs2.released == 1, "a refused agent releases its host");
  phaseo_string_free(err);
  err = NULL;
  st = phaseo_agent_run(NULL, NULL, client, NULL, run_host(&rs4), &run, &err);
  CHECK(st == PHASEO_STATUS_ERROR, "NULL agent refused");
  CONTAINS(err, "\"code\":\"invalid_argument\"");
  phaseo_string_free(err);
  err = NULL;
  st = phaseo_agent_run(agent, "{\"input\":1,\"colour\":2}", client, NULL, run_host(&rs4), &run,
                        &err);
  CHECK(st == PHASEO_STATUS_ERROR, "unknown option refused");
  CONTAINS(err, "unknown field `colour`");
  phaseo_string_free(err);
  err = NULL;
  PhaseoSchema *schema = NULL;
  CHECK(phaseo_schema_new("{\"type\":\"object\",\"required\":[\"a\"]}", &schema, &err) ==
            PHASEO_STATUS_OK,
        "schema: %s", err);
  CHECK(phaseo_schema_validate(schema, "{\"a\":1}", NULL, &err) == PHASEO_STATUS_OK, "valid");
  CHECK(phaseo_schema_validate(schema, "{}", NULL, &err) == PHASEO_STATUS_ERROR, "invalid");
  CONTAINS(err, "/: \\\"a\\\" is a required property");
  phaseo_string_free(err);
  phaseo_schema_free(schema);

  check_additions(agent, client);
  check_driven(agent, &hs);
  check_queue_driven();

  /* HTTP client options are read by the core: wrong values name their field. */
  PhaseoClient *http = NULL;
  CHECK(phaseo_client_http("gateway",
                           "{\"baseUrl\":\"http://127.0.0.1:9/v1\",\"preset\":\"@p\","
                           "\"headers\":{\"X-Phaseo-Client\":\"c-test\"},\"timeoutMs\":500}",
                           &http, &err) == PHASEO_STATUS_OK,
        "gateway client: %s", err);
  phaseo_client_free(http);
  const char *refused_http[][3] = {
      {"openai-compatible", "{\"timeoutMs\":-5}",
       "Invalid HTTP client options: timeoutMs must be a positive number of milliseconds, got -5"},
      {"gateway", "{\"headers\":{\"X-N\":5}}", "Invalid HTTP client options: headers.X-N must be a string, got 5"},
      {"openai-compatible", "{\"preset\":\"p\"}", "preset, requestOptions and the body options (bodyDefaults, toolChoice, responseFormat, …) are gateway options"},
      {"anthropic", NULL, "Unknown HTTP client kind \\\"anthropic\\\""},
  };
  for (size_t i = 0; i < sizeof refused_http / sizeof refused_http[0]; i++) {
    http = NULL;
    st = phaseo_client_http(refused_http[i][0], refused_http[i][1], &http, &err);
    CHECK(st == PHASEO_STATUS_ERROR && http == NULL, "HTTP options %zu refused", i);
    CONTAINS(err, "\"code\":\"definition_invalid\"");
    CONTAINS(err, refused_http[i][2]);
    phaseo_string_free(err);
    err = NULL;
  }

  phaseo_client_free(client);
  phaseo_agent_free(agent);
  CHECK(hs.released == 1, "the agent's host is released once freed: %d", hs.released);

  if (failures) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("C ABI test: all checks passed\n");
  return 0;
}
