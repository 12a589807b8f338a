//! The JSON Schema validator helper of docs/behaviour.md §2 (`PhaseoSchema`): a schema compiled once by
//! the core, for hosts that build their own validators on it.

use std::ffi::c_char;

use phaseo_agent::JsonSchema;

use crate::error::{guard, read_str, write_out, CError, PhaseoStatus};

/// A compiled JSON Schema (draft 2020-12).
pub struct PhaseoSchema(JsonSchema);

/// Compiles `schema_json`; an invalid schema is `definition_invalid`.
#[no_mangle]
pub unsafe extern "C" fn phaseo_schema_new(
    schema_json: *const c_char,
    out_schema: *mut *mut PhaseoSchema,
    out_error: *mut *mut c_char,
) -> PhaseoStatus {
    guard(out_error, || {
        let text = read_str(schema_json, "schema_json")?;
        let schema = phaseo_agent::parse_json_text(text)
            .map_err(|e| CError::definition(format!("Invalid JSON Schema: not JSON ({e})")))?;
        let compiled = JsonSchema::compile(&schema)
            .map_err(|e| CError::definition(format!("Invalid JSON Schema: {e}")))?;
        if out_schema.is_null() {
            return Err(CError::argument("out_schema is NULL"));
        }
        *out_schema = Box::into_raw(Box::new(PhaseoSchema(compiled)));
        Ok(PhaseoStatus::Ok)
    })
}

/// Validates `value_json`. Valid: `PHASEO_STATUS_OK` and `out_json` (may be NULL) receives
/// the value. Invalid: `PHASEO_STATUS_ERROR` with the core's message (`<instance path>:
/// <reason>`) in the error's `message`.
#[no_mangle]
pub unsafe extern "C" fn phaseo_schema_validate(
    schema: *const PhaseoSchema,
    value_json: *const c_char,
    out_json: *mut *mut c_char,
    out_error: *mut *mut c_char,
) -> PhaseoStatus {
    guard(out_error, || {
        let schema = schema
            .as_ref()
            .ok_or_else(|| CError::argument("the schema handle is NULL"))?;
        let text = read_str(value_json, "value_json")?;
        let value = phaseo_agent::parse_json_text(text)
            .map_err(|e| CError::argument(format!("the value is not valid JSON: {e}")))?;
        schema
            .0
            .check(&value)
            .map_err(|e| CError::new(phaseo_agent::ErrorCode::ToolInputInvalid, e))?;
        write_out(out_json, phaseo_agent::json::to_canonical_string(&value));
        Ok(PhaseoStatus::Ok)
    })
}

/// Frees a schema. NULL is ignored.
#[no_mangle]
pub unsafe extern "C" fn phaseo_schema_free(schema: *mut PhaseoSchema) {
    if !schema.is_null() {
        drop(Box::from_raw(schema));
    }
}
