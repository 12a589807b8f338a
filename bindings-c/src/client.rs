//! Model clients as `PhaseoClient` handles: scripted (with a cursor that survives runs and
//! continues), the offline test client, the HTTP clients and host clients.

use std::ffi::c_char;
use std::sync::Arc;

use phaseo_agent::{ModelClient, ScriptedClient, Value};

use crate::error::{guard, read_opt_str, read_str, CError, PhaseoStatus};
use crate::host::{Host, HostFn, PhaseoHost};
use phaseo_agent::json_host::JsonModel;

/// A model client, shared by the runs given it.
pub struct PhaseoClient {
    pub(crate) client: Arc<dyn ModelClient>,
    scripted: Option<Arc<ScriptedClient>>,
}

pub(crate) unsafe fn out_client(
    out: *mut *mut PhaseoClient,
    client: Arc<dyn ModelClient>,
    scripted: Option<Arc<ScriptedClient>>,
) -> Result<PhaseoStatus, CError> {
    if out.is_null() {
        return Err(CError::argument("out_client is NULL"));
    }
    *out = Box::into_raw(Box::new(PhaseoClient { client, scripted }));
    Ok(PhaseoStatus::Ok)
}

/// Borrows a client handle.
pub(crate) unsafe fn client_arg(
    client: *const PhaseoClient,
) -> Result<Arc<dyn ModelClient>, CError> {
    client
        .as_ref()
        .map(|c| c.client.clone())
        .ok_or_else(|| CError::argument("the client handle is NULL"))
}

/// A scripted client: `responses_json` is a JSON array of responses `{text?, toolCalls?,
/// usage?, cost?, finishReason?, fail?}`, consumed in order across every run and continue
/// it serves; the first `used` entries are skipped (a run resumed elsewhere).
#[no_mangle]
pub unsafe extern "C" fn phaseo_client_scripted(
    responses_json: *const c_char,
    used: usize,
    out_client_ptr: *mut *mut PhaseoClient,
    out_error: *mut *mut c_char,
) -> PhaseoStatus {
    guard(out_error, || {
        let text = read_str(responses_json, "responses_json")?;
        let entries: Vec<Value> = serde_json::from_str(text).map_err(|e| {
            CError::definition(format!(
                "ScriptedClient: responses must be a JSON array ({e})"
            ))
        })?;
        let client = ScriptedClient::from_script(&entries)
            .map_err(|e| CError::definition(format!("ScriptedClient: {e}")))?;
        let client = Arc::new(client.skipping(used));
        out_client(out_client_ptr, client.clone(), Some(client))
    })
}

/// How many scripted responses the client has consumed (0 for other clients).
#[no_mangle]
pub unsafe extern "C" fn phaseo_client_cursor(client: *const PhaseoClient) -> usize {
    client
        .as_ref()
        .and_then(|c| c.scripted.as_ref())
        .map_or(0, |s| s.cursor())
}

/// The offline test client (answers without a network).
#[no_mangle]
pub unsafe extern "C" fn phaseo_client_test(
    out_client_ptr: *mut *mut PhaseoClient,
    out_error: *mut *mut c_char,
) -> PhaseoStatus {
    guard(out_error, || {
        out_client(
            out_client_ptr,
            Arc::new(phaseo_agent::TestClient::new()),
            None,
        )
    })
}

/// An HTTP client: `kind` is `"gateway"` (the Phaseo gateway, Responses API) or
/// `"openai-compatible"` (Chat Completions); `options_json` (NULL = defaults and the
/// environment) is `{apiKey?, baseUrl?, model?, timeoutMs?, headers?, preset?,
/// bodyDefaults?}` (the last two: gateway only).
#[no_mangle]
pub unsafe extern "C" fn phaseo_client_http(
    kind: *const c_char,
    options_json: *const c_char,
    out_client_ptr: *mut *mut PhaseoClient,
    out_error: *mut *mut c_char,
) -> PhaseoStatus {
    guard(out_error, || {
        let kind = read_str(kind, "kind")?;
        let options = match read_opt_str(options_json, "options_json")? {
            None => Value::Null,
            Some(t) => serde_json::from_str(t)
                .map_err(|e| CError::definition(format!("Invalid HTTP client options: {e}")))?,
        };
        // The host names itself (`X-Phaseo-Client`) in `headers`.
        let options = phaseo_agent::spec::http_client_options(options)?;
        let client = phaseo_agent::spec::http_client(kind, &options)?;
        out_client(out_client_ptr, client, None)
    })
}

/// A host model client: each model request is a `Generate` call to `host.invoke` with
/// `callback` as its id. `host.release` runs when the client and every run using it are
/// gone.
#[no_mangle]
pub unsafe extern "C" fn phaseo_client_host(
    host: PhaseoHost,
    callback: u64,
    out_client_ptr: *mut *mut PhaseoClient,
    out_error: *mut *mut c_char,
) -> PhaseoStatus {
    let host = Host::new(host);
    guard(out_error, || {
        let f = HostFn { host, id: callback };
        out_client(out_client_ptr, Arc::new(JsonModel(f)), None)
    })
}

/// Frees a client handle (runs using it keep it alive). NULL is ignored.
#[no_mangle]
pub unsafe extern "C" fn phaseo_client_free(client: *mut PhaseoClient) {
    if !client.is_null() {
        drop(Box::from_raw(client));
    }
}
