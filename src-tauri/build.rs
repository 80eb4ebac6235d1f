// The real Tauri config lives at the repository root (see ARCHITECTURE.md), so the build script is
// pointed at it explicitly instead of looking beside this crate.
//
// Every command is declared to Tauri (`AppManifest::commands`), which makes every app command
// refused unless a capability grants it (`capabilities/default.json` grants the window only those
// it uses); without the declaration Tauri lets the window call every command whatever the
// capabilities say. The names are read from the one list of commands, `collect_commands!` in
// `src/bindings.rs`, and written to `$OUT_DIR/command_names.rs` for the tests to read back; a test
// there checks them against the commands the bindings call.

use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=src/bindings.rs");
    println!("cargo:rerun-if-changed=capabilities");
    let bindings = std::fs::read_to_string("src/bindings.rs").expect("src/bindings.rs is readable");
    let names = command_names(&bindings);
    assert!(!names.is_empty(), "no commands found in src/bindings.rs' collect_commands!");
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    let listed: String = names.iter().map(|name| format!("    {name:?},\n")).collect();
    std::fs::write(
        Path::new(&out).join("command_names.rs"),
        format!("/// Every command the shell registers, by name.\npub const COMMAND_NAMES: &[&str] = &[\n{listed}];\n"),
    )
    .expect("the command names are written to OUT_DIR");
    // Tauri keeps the names for the whole build; the script ends right after.
    let names: &'static [&'static str] =
        Vec::leak(names.into_iter().map(|name| &*String::leak(name)).collect());
    let manifest = tauri_build::AppManifest::new().commands(names);
    tauri_build::try_build(
        tauri_build::Attributes::new().config_path("../tauri.conf.json").app_manifest(manifest),
    )
    .expect("tauri-build failed to read ../tauri.conf.json");
}

/// The names in the `collect_commands![…]` block of `bindings`: each `commands::name` entry.
fn command_names(bindings: &str) -> Vec<String> {
    let Some((_, block)) = bindings.split_once("collect_commands![") else { return Vec::new() };
    let block = block.split_once(']').map_or(block, |(inside, _)| inside);
    block
        .split(',')
        .filter_map(|entry| entry.trim().strip_prefix("commands::"))
        .map(str::to_owned)
        .collect()
}
