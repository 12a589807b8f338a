//! `include/phaseo_agent.h` is what cbindgen generates from the crate today: this test
//! fails when it is stale. `PHASEO_UPDATE_HEADER=1` rewrites it instead.

use std::path::Path;

#[test]
fn committed_header_matches_a_fresh_generation() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(dir.join("cbindgen.toml")).expect("cbindgen.toml");
    let mut fresh = Vec::new();
    cbindgen::Builder::new()
        .with_crate(dir)
        .with_config(config)
        .generate()
        .expect("cbindgen generates the header")
        .write(&mut fresh);
    let fresh = String::from_utf8(fresh).expect("UTF-8 header");
    let path = dir.join("include/phaseo_agent.h");
    if std::env::var_os("PHASEO_UPDATE_HEADER").is_some() {
        std::fs::write(&path, &fresh).expect("write the header");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == fresh,
        "bindings-c/include/phaseo_agent.h differs from a fresh cbindgen generation; \
         regenerate it with `PHASEO_UPDATE_HEADER=1 cargo test -p phaseo-agent-c --test header`"
    );
}
