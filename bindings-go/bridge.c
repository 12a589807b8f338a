// The C side of the cgo bridge: builds PhaseoHost values whose callbacks are the Go
// functions exported in host.go. Kept in a .c file because a Go file with //export may
// only declare C functions in its preamble.
#include "bridge.h"

PhaseoHost phaseo_go_agent_host(uintptr_t handle) {
  PhaseoHost host = {(void *)handle, goPhaseoInvoke, NULL, NULL, goPhaseoRelease};
  return host;
}

PhaseoHost phaseo_go_run_host(uintptr_t handle, bool with_events) {
  PhaseoHost host = {(void *)handle, goPhaseoInvoke, with_events ? (PhaseoEventFn)goPhaseoEvent : NULL,
                     goPhaseoDone, goPhaseoRelease};
  return host;
}

PhaseoStatus phaseo_go_on_cancel(PhaseoCall *call, uintptr_t handle, char **out_error) {
  return phaseo_call_on_cancel(call, goPhaseoCancel, (void *)handle, out_error);
}
