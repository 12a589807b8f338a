//! Schema helpers a binding needs when it generates a tool's `parameters` from host types
//! (docs/behaviour.md §20).

use std::ffi::c_char;

use crate::error::{guard, read_str, write_out, CError, PhaseoStatus};

/// The strict form of the JSON Schema `schema_json` (the core's `make_strict`: every object
/// closed, every property required, optional ones nullable) into `out_json`.
#[no_mangle]
pub unsafe extern "C" fn phaseo_schema_strict(
    schema_json: *const c_char,
    out_json: *mut *mut c_char,
    out_error: *mut *mut c_char,
) -> PhaseoStatus {
    guard(out_error, || {
        let text = read_str(schema_json, "schema_json")?;
        let schema: serde_json::Value = serde_json::from_str(text)
            .map_err(|e| CError::argument(format!("schema_json is not JSON: {e}")))?;
        let strict = phaseo_agent::make_strict(&schema);
        write_out(out_json, strict.to_string());
        Ok(PhaseoStatus::Ok)
    })
}

#[cfg(test)]
mod tests {
    use std::ffi::{CStr, CString};

    use super::*;
    use crate::error::phaseo_string_free;

    #[test]
    fn strict_form_and_a_clear_error_for_text_that_is_not_json() {
        let mut out = std::ptr::null_mut();
        let mut err = std::ptr::null_mut();
        let schema =
            CString::new(r#"{"type":"object","properties":{"a":{"type":"string"}}}"#).unwrap();
        let status = unsafe { phaseo_schema_strict(schema.as_ptr(), &mut out, &mut err) };
        assert!(matches!(status, PhaseoStatus::Ok));
        let text = unsafe { CStr::from_ptr(out) }.to_str().unwrap().to_owned();
        unsafe { phaseo_string_free(out) };
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value["required"], serde_json::json!(["a"]));
        assert_eq!(
            value["properties"]["a"]["type"],
            serde_json::json!(["string", "null"])
        );

        let bad = CString::new("{nope").unwrap();
        let status = unsafe { phaseo_schema_strict(bad.as_ptr(), &mut out, &mut err) };
        assert!(matches!(status, PhaseoStatus::Error));
        let message = unsafe { CStr::from_ptr(err) }.to_str().unwrap().to_owned();
        unsafe { phaseo_string_free(err) };
        assert!(message.contains("schema_json is not JSON"), "{message}");
    }
}
