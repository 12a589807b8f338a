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

// The Go functions exported in host.go. They take the cgo.Handle as an integer: in a Go
// pointer-typed value (an unsafe.Pointer argument, a PhaseoHost's user_data) a handle,
// a small integer, is an invalid pointer, which the Go runtime throws on ("invalid pointer
// found on stack") when it moves a goroutine's stack while the value is in a frame. So no
// PhaseoHost is ever made in Go: the functions below take the handle and build the host
// here, and the host's callbacks are C functions that pass the handle on as an integer.
extern void goPhaseoEvent(uintptr_t user_data, char *event_json);
extern void goPhaseoDone(uintptr_t user_data);
extern void goPhaseoRelease(uintptr_t user_data);
extern void goPhaseoCancel(uintptr_t user_data);

int phaseo_go_queue_open(void);
int phaseo_go_take(PhaseoGoCall *out, int max);

// The core's functions that take a PhaseoHost, with the host made from `handle`: an agent's
// host (its callbacks and the release), or a run's (also its events when `events`, and the
// end of the run).
enum PhaseoStatus phaseo_go_agent_new(const char *definition_json, const PhaseoStore *store, uintptr_t handle,
                                      PhaseoAgent **out_agent, char **out_error);
enum PhaseoStatus phaseo_go_client_host_stream(uintptr_t handle, uint64_t generate_callback,
                                               uint64_t stream_callback, PhaseoClient **out_client,
                                               char **out_error);
enum PhaseoStatus phaseo_go_store_accessor(uintptr_t handle, uint64_t load_callback, uint64_t save_callback,
                                           PhaseoStore **out_store, char **out_error);
enum PhaseoStatus phaseo_go_serve_mcp(const char *options_json, const PhaseoClient *client, uintptr_t handle,
                                      bool events, PhaseoMcpServer **out_server, char **out_error);
enum PhaseoStatus phaseo_go_run_driven(const PhaseoAgent *agent, const char *options_json,
                                       const PhaseoClient *client, const PhaseoStore *store, uintptr_t handle,
                                       bool events, PhaseoRun **out_run, char **out_error);
enum PhaseoStatus phaseo_go_continue_driven(const PhaseoAgent *agent, const char *state_json,
                                            const char *run_id, const char *options_json,
                                            const PhaseoClient *client, const PhaseoStore *store,
                                            uintptr_t handle, bool events, PhaseoRun **out_run,
                                            char **out_error);
enum PhaseoStatus phaseo_go_recover_driven(const PhaseoAgent *agent, const char *run_id,
                                           const char *options_json, const PhaseoClient *client,
                                           const PhaseoStore *store, uintptr_t handle, bool events,
                                           PhaseoRun **out_run, char **out_error);
enum PhaseoStatus phaseo_go_stream(const PhaseoAgent *agent, const char *options_json,
                                   const PhaseoClient *client, const PhaseoStore *store, uintptr_t handle,
                                   bool events, PhaseoStream **out_stream, char **out_error);
enum PhaseoStatus phaseo_go_continue_stream(const PhaseoAgent *agent, const char *state_json,
                                            const char *run_id, const char *options_json,
                                            const PhaseoClient *client, const PhaseoStore *store,
                                            uintptr_t handle, bool events, PhaseoStream **out_stream,
                                            char **out_error);
PhaseoStatus phaseo_go_on_cancel(PhaseoCall *call, uintptr_t handle, char **out_error);
PhaseoStatus phaseo_go_poll(PhaseoRun *run, uintptr_t driver, char **out_error);
uintptr_t phaseo_go_complete(PhaseoCall *call, const char *text, bool is_error);
#endif
