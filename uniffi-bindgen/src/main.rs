//! `cargo run -p uniffi-bindgen -- generate <cdylib> --language kotlin --out-dir …`: the
//! uniffi 0.32 generator, built in the dev profile only (never part of a release build).

fn main() {
    uniffi::uniffi_bindgen_main()
}
