// Declarations shared by bridge.c and the cgo preambles.
#ifndef PHASEO_GO_BRIDGE_H
#define PHASEO_GO_BRIDGE_H
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "include/phaseo_agent.h"

extern void goPhaseoInvoke(void *user_data, PhaseoCall *call);
extern void goPhaseoEvent(void *user_data, char *event_json);
extern void goPhaseoDone(void *user_data);
extern void goPhaseoRelease(void *user_data);
extern void goPhaseoCancel(void *user_data);

PhaseoHost phaseo_go_agent_host(uintptr_t handle);
PhaseoHost phaseo_go_run_host(uintptr_t handle, bool with_events);
PhaseoStatus phaseo_go_on_cancel(PhaseoCall *call, uintptr_t handle, char **out_error);
#endif
