// The status structure every call through the generated bindings passes to the library
// (`UniffiRustCallStatus`: a code and an error buffer, written by the library only when the
// call fails). As generated, every call makes a new one: a JNA structure whose native memory
// JNA allocates, records in a process-wide map and frees through a cleaner after a
// collection, and a second such allocation for its error buffer; the statuses, not the
// calls, would then be most of the cost of a run with no tool calls. So each thread keeps
// the statuses it used and hands them out again (`bindings-uniffi/scripts/generate.sh` makes
// the generated calls take them from here).
package app.phaseo.agent

/**
 * The call statuses of one thread, reused. A status is in use from [take] to [give]; a
 * call made while another is in progress on the same thread (a callback of the library
 * that calls it again) takes another one, so at most as many exist as calls nest.
 */
internal object CallStatuses {
    private val free = ThreadLocal.withInitial { ArrayList<UniffiRustCallStatus>(2) }

    /** A status with no error recorded, for one call of this thread. */
    fun take(): UniffiRustCallStatus {
        val mine = free.get()
        val status = if (mine.isEmpty()) UniffiRustCallStatus() else mine.removeAt(mine.size - 1)
        // The library writes the status only when a call fails: clear what a failed call
        // left, so that the next call reads success unless it fails too.
        status.code = UNIFFI_CALL_SUCCESS
        status.error_buf.capacity = 0
        status.error_buf.len = 0
        status.error_buf.data = null
        return status
    }

    /** Returns [status], whose call is over (its error, if any, already read), to this thread. */
    fun give(status: UniffiRustCallStatus) {
        free.get().add(status)
    }
}
