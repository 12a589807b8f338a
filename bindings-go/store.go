package phaseoagent

/*
#include "bridge.h"
*/
import "C"

import (
	"encoding/json"
	"runtime"
	"sync"
	"time"
)

// RunStore keeps runs durably (docs/behaviour.md §10): every checkpoint is saved, a paused run can be
// continued by id from any process (its pause is claimed once), and a run whose worker
// died can be recovered. Give it to AgentDefinition.Store or to a run's options.
type RunStore struct {
	mu  sync.Mutex
	ptr *C.PhaseoStore
}

func newStore(open func(out **C.PhaseoStore, e **C.char) C.enum_PhaseoStatus) (*RunStore, error) {
	var ptr *C.PhaseoStore
	if _, err := status(func(e **C.char) C.enum_PhaseoStatus { return open(&ptr, e) }); err != nil {
		return nil, err
	}
	s := &RunStore{ptr: ptr}
	runtime.SetFinalizer(s, (*RunStore).Close)
	return s, nil
}

// NewMemoryStore is a store in this process's memory.
func NewMemoryStore() *RunStore {
	s, _ := newStore(func(out **C.PhaseoStore, e **C.char) C.enum_PhaseoStatus { return C.phaseo_store_memory(out, e) })
	return s
}

// OpenSQLiteStore opens (creating if needed) a SQLite store at path.
func OpenSQLiteStore(path string) (*RunStore, error) {
	cp := cString(path)
	defer freeC(cp)
	return newStore(func(out **C.PhaseoStore, e **C.char) C.enum_PhaseoStatus { return C.phaseo_store_sqlite(cp, out, e) })
}

// ConnectPostgresStore connects to PostgreSQL (a postgres:// URL) and creates the store's
// tables if needed.
func ConnectPostgresStore(url string) (*RunStore, error) {
	cu := cString(url)
	defer freeC(cu)
	return newStore(func(out **C.PhaseoStore, e **C.char) C.enum_PhaseoStatus { return C.phaseo_store_postgres(cu, out, e) })
}

// Close frees the store handle (runs and agents using it keep it alive).
func (s *RunStore) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ptr != nil {
		C.phaseo_store_free(s.ptr)
		s.ptr = nil
	}
}

// StoredRun is one run of a store.
type StoredRun struct {
	RunID            string          `json:"runId"`            // the run id
	AgentID          string          `json:"agentId"`          // the owning agent
	Status           string          `json:"status"`           // the row's status (running once a pause is claimed)
	PauseID          *string         `json:"pauseId"`          // the pause of a waiting run
	Version          int64           `json:"version"`          // row version (the compare-and-set token)
	CreatedAtMs      int64           `json:"createdAtMs"`      // creation time (ms since the epoch)
	UpdatedAtMs      int64           `json:"updatedAtMs"`      // last write (ms since the epoch)
	LeaseOwner       *string         `json:"leaseOwner"`       // the worker holding the run
	LeaseExpiresAtMs *int64          `json:"leaseExpiresAtMs"` // when that hold ends
	StateJSON        json.RawMessage `json:"state"`            // the canonical state
}

// State parses the stored run's state.
func (r StoredRun) State() (RunResult, error) { return ParseRunResult(string(r.StateJSON)) }

// Load returns run runID, or nil when the store has none.
func (s *RunStore) Load(runID string) (*StoredRun, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := cString(runID)
	defer freeC(id)
	var out *C.char
	if _, err := status(func(e **C.char) C.enum_PhaseoStatus { return C.phaseo_store_load(s.ptr, id, &out, e) }); err != nil {
		return nil, err
	}
	if out == nil {
		return nil, nil
	}
	var run StoredRun
	if err := json.Unmarshal([]byte(takeString(out)), &run); err != nil {
		return nil, err
	}
	return &run, nil
}

// ListQuery selects runs: by status and agent, newest first, a page at a time.
type ListQuery struct {
	Statuses []string `json:"statuses,omitempty"` // only these statuses (empty = all)
	AgentID  string   `json:"agentId,omitempty"`  // only this agent's runs
	Limit    int      `json:"limit,omitempty"`    // page size (0 = the default)
	Cursor   string   `json:"cursor,omitempty"`   // a previous page's NextCursor
}

// RunPage is a page of runs; NextCursor continues the listing (nil at the end).
type RunPage struct {
	Runs       []StoredRun `json:"runs"`       // the runs, newest first
	NextCursor *string     `json:"nextCursor"` // the next page (nil = none)
}

// List lists runs.
func (s *RunStore) List(q ListQuery) (RunPage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	text, _ := json.Marshal(q)
	cq := cString(string(text))
	defer freeC(cq)
	var out *C.char
	if _, err := status(func(e **C.char) C.enum_PhaseoStatus { return C.phaseo_store_list(s.ptr, cq, &out, e) }); err != nil {
		return RunPage{}, err
	}
	var page RunPage
	err := json.Unmarshal([]byte(takeString(out)), &page)
	return page, err
}

// Delete deletes run runID; it reports whether the run existed.
func (s *RunStore) Delete(runID string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := cString(runID)
	defer freeC(id)
	var deleted C.bool
	_, err := status(func(e **C.char) C.enum_PhaseoStatus { return C.phaseo_store_delete(s.ptr, id, &deleted, e) })
	return bool(deleted), err
}

// Prune deletes the runs of statuses (e.g. "completed", "cancelled") last updated more
// than olderThan ago; it reports how many. An unknown status name is refused, naming it.
func (s *RunStore) Prune(statuses []string, olderThan time.Duration) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if statuses == nil {
		statuses = []string{}
	}
	text, err := json.Marshal(statuses)
	if err != nil {
		return 0, err
	}
	cs := cString(string(text))
	defer freeC(cs)
	cutoff := time.Now().Add(-olderThan).UnixMilli()
	var count C.uint64_t
	_, err = status(func(e **C.char) C.enum_PhaseoStatus {
		return C.phaseo_store_prune(s.ptr, cs, C.int64_t(cutoff), &count, e)
	})
	return int64(count), err
}
