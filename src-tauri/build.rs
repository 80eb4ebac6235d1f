// The real Tauri config lives at the repository root (see ARCHITECTURE.md), so the build script is
// pointed at it explicitly instead of looking beside this crate.
fn main() {
    tauri_build::try_build(tauri_build::Attributes::new().config_path("../tauri.conf.json"))
        .expect("tauri-build failed to read ../tauri.conf.json");
}
