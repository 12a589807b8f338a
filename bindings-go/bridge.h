// Declarations shared by bridge.c and the cgo preambles.
#ifndef PHASEO_GO_BRIDGE_H
#define PHASEO_GO_BRIDGE_H
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "include/phaseo_agent.h"

// A call waiting for the Go dispatcher: its host (a cgo.Handle), the call, and what the
// dispatcher needs of it (read on the core thread, so Go makes no C call for them). args
// belongs to the call (valid until it is completed). run is the run host (a cgo.Handle)
// of the run whose tool call this is, 0 for other calls.
typedef struct {
  uintptr_t handle;
  uintptr_t run;
  PhaseoCall *call;
  uint64_t callback;
  int kind;
  const char *args;
  size_t args_len;  // strlen(args), taken on the core thread: a C call less for Go
} PhaseoGoCall;

// The kind of a queued item that is no call: the driven run whose driver (a cgo.Handle in
// `handle`) is to poll it again.
#define PHASEO_GO_WAKE (-1)

extern void goPhaseoEvent(void *user_data, char *event_json);
extern void goPhaseoDone(void *user_data);
extern void goPhaseoRelease(void *user_data);
extern void goPhaseoCancel(void *user_data);

int phaseo_go_queue_open(void);
int phaseo_go_take(PhaseoGoCall *out, int max);
PhaseoHost phaseo_go_agent_host(uintptr_t handle);
PhaseoHost phaseo_go_run_host(uintptr_t handle, bool with_events);
PhaseoStatus phaseo_go_on_cancel(PhaseoCall *call, uintptr_t handle, char **out_error);
PhaseoStatus phaseo_go_poll(PhaseoRun *run, uintptr_t driver, char **out_error);
uintptr_t phaseo_go_complete(PhaseoCall *call, const char *text, bool is_error);
#endif
