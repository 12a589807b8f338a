//! Python binding of the Phaseo Agent SDK: the private `phaseo_agent._native` module.
//! The public, idiomatic layer is the `phaseo_agent` package in `python/`.

mod agent;
mod awaitable;
mod convert;
mod driver;
mod errors;
mod hooks;
mod host;
mod lifecycle;
mod limits;
mod mcp;
mod reader;
mod result;
mod runtime;
mod serve;
mod store;
mod stream;
mod tool;
mod tracing;
mod typed;
mod workers;

use pyo3::prelude::*;

/// mimalloc for everything the module allocates in Rust (as pydantic-core does): runs
/// allocate many small short-lived values, also on tokio threads, where glibc keeps
/// growing and trimming its arenas. Python objects keep using Python's allocator.
#[global_allocator]
static ALLOCATOR: phaseo_agent::allocator::MiMalloc = phaseo_agent::allocator::MiMalloc;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<agent::PyAgent>()?;
    m.add_class::<agent::PyCancelToken>()?;
    m.add_class::<tool::PyTool>()?;
    m.add_class::<tool::PyJsonSchemaValidator>()?;
    m.add_class::<result::PyRunResult>()?;
    m.add_class::<result::PyUsage>()?;
    m.add_class::<result::PyPendingToolCall>()?;
    m.add_class::<runtime::PyToolRuntime>()?;
    m.add_class::<runtime::PyCancelledFlag>()?;
    m.add_class::<hooks::PyStopCondition>()?;
    m.add_class::<hooks::PyScriptedClient>()?;
    m.add_class::<hooks::PyTestClient>()?;
    m.add_class::<hooks::PyHttpClient>()?;
    m.add_class::<hooks::PyStreamSink>()?;
    m.add_function(wrap_pyfunction!(hooks::http_client, m)?)?;
    m.add_class::<store::PyRunStore>()?;
    m.add_class::<mcp::PyMcpServer>()?;
    m.add_class::<serve::PyMcpToolServer>()?;
    m.add_function(wrap_pyfunction!(serve::serve_mcp, m)?)?;
    m.add_class::<stream::PyAgentStream>()?;
    m.add_class::<stream::PyCursor>()?;
    m.add_class::<host::PyLoopBridge>()?;
    m.add_class::<host::TaskDone>()?;
    m.add_function(wrap_pyfunction!(hooks::step_count_is, m)?)?;
    m.add_function(wrap_pyfunction!(hooks::max_tokens_used, m)?)?;
    m.add_function(wrap_pyfunction!(hooks::max_cost, m)?)?;
    m.add_function(wrap_pyfunction!(hooks::max_duration, m)?)?;
    m.add_function(wrap_pyfunction!(hooks::has_tool_call, m)?)?;
    m.add_function(wrap_pyfunction!(hooks::finish_reason_is, m)?)?;
    m.add_function(wrap_pyfunction!(lifecycle::_shutdown, m)?)?;
    m.add_function(wrap_pyfunction!(workers::_next_call, m)?)?;
    m.add_class::<workers::CallDone>()?;
    m.add_function(wrap_pyfunction!(tracing::enable_tracing, m)?)?;
    m.add_function(wrap_pyfunction!(tracing::flush_tracing, m)?)?;
    m.add_function(wrap_pyfunction!(tracing::shutdown_tracing, m)?)?;
    m.add_function(wrap_pyfunction!(typed::_input_problem, m)?)?;
    m.add("STATE_VERSION", phaseo_agent::STATE_VERSION)?;
    Ok(())
}
