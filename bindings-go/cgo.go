package phaseoagent

/*
#cgo CFLAGS: -I${SRCDIR}
#cgo LDFLAGS: ${SRCDIR}/lib/linux_amd64/libphaseo_agent_c.a -lpthread -ldl -lm
#include "bridge.h"
*/
import "C"

import (
	"encoding/json"
	"unsafe"
)

// linkedLibrary is set by the repository's builds (-ldflags -X) to the checksum of the
// static library they link: the go command does not hash files named in #cgo LDFLAGS, so
// without it a build after the library changed could reuse a binary linked with the old
// one. Empty in a module from a proxy, whose library is fixed by its version.
var linkedLibrary string

// cString copies s into C memory; the caller frees it with C.free.
func cString(s string) *C.char { return C.CString(s) }

// freeC frees C memory allocated by cString (NULL is fine).
func freeC(p *C.char) {
	if p != nil {
		C.free(unsafe.Pointer(p))
	}
}

// takeString copies and frees a string the SDK returned.
func takeString(p *C.char) string {
	if p == nil {
		return ""
	}
	s := C.GoString(p)
	C.phaseo_string_free(p)
	return s
}

// errorJSON is the `{"code", "message", "state"?}` object of every C ABI error.
type errorJSON struct {
	Code    string          `json:"code"`
	Message string          `json:"message"`
	State   json.RawMessage `json:"state"`
}

// takeError turns an `out_error` text into an *Error (with its failed run, if any).
func takeError(p *C.char) error {
	text := takeString(p)
	var e errorJSON
	if err := json.Unmarshal([]byte(text), &e); err != nil {
		return &Error{Code: "internal", Message: "unreadable error from the core: " + text}
	}
	out := &Error{Code: e.Code, Message: e.Message}
	if len(e.State) > 0 && string(e.State) != "null" {
		if r, err := ParseRunResult(string(e.State)); err == nil {
			out.Result = &r
		}
	}
	return out
}

// status runs a C function returning a PhaseoStatus with an out_error.
func status(call func(outError **C.char) C.enum_PhaseoStatus) (C.enum_PhaseoStatus, error) {
	var cerr *C.char
	st := call(&cerr)
	if st == C.PHASEO_STATUS_ERROR {
		return st, takeError(cerr)
	}
	if cerr != nil {
		C.phaseo_string_free(cerr)
	}
	return st, nil
}
