// The real Tauri config lives at the repository root (see ARCHITECTURE.md), so the build script is
// pointed at it explicitly instead of looking beside this crate.

include!("src/command_names.rs");

fn main() {
    println!("cargo:rerun-if-changed=src/command_names.rs");
    println!("cargo:rerun-if-changed=capabilities");
    let manifest = tauri_build::AppManifest::new().commands(COMMAND_NAMES);
    tauri_build::try_build(
        tauri_build::Attributes::new().config_path("../tauri.conf.json").app_manifest(manifest),
    )
    .expect("tauri-build failed to read ../tauri.conf.json");
}
