//! The command list, and the TypeScript bindings generated from it.
//!
//! `collect_commands!` below is the one list of commands: `build.rs` reads the names from it to
//! declare them to Tauri, and `ui/src/bindings.ts` is generated from it and the Rust types. The
//! window's grants (`capabilities/default.json`) are the one other list, a choice rather than a
//! copy: the bindings end with `WindowCommand`, the granted commands' names, from which the UI's
//! `Backend` is made, so the UI can call no command it is not granted and a grant of a command
//! that does not exist fails the typecheck. The test below fails when the bindings are stale;
//! `FLAME_BLESS=1 cargo test -p flame-desktop bindings` rewrites them.

use std::path::{Path, PathBuf};

use specta_typescript::Typescript;
use tauri::Runtime;
use tauri_specta::{Builder, collect_commands, collect_events};

use crate::{change_watch, commands, damage_watch, follower, gateway};

const HEADER: &str = "// Generated from the Rust types by src-tauri/src/bindings.rs. Do not edit by hand:\n\
// run `make bindings` (FLAME_BLESS=1 cargo test -p flame-desktop bindings) after changing them.";

/// Every command and event the UI may use, for the given runtime.
pub fn builder<R: Runtime>() -> Builder<R> {
    // Counts, ids and millisecond timestamps stay far below 2^53, so they cross as plain
    // numbers rather than BigInt.
    Builder::<R>::new()
        .dangerously_cast_bigints_to_number()
        .commands(collect_commands![
            commands::app_info,
            commands::outline,
            commands::outline_preview,
            commands::frame_cost,
            commands::frame_detail,
            commands::frame_messages,
            commands::frame_view,
            commands::earlier_messages,
            commands::update_results,
            commands::frame_context,
            commands::rebuild_context,
            commands::send_message,
            commands::answer_request,
            commands::answer_again,
            commands::waiting_request,
            commands::cancel_answer,
            commands::generate_results,
            commands::get_settings,
            commands::save_settings,
            commands::list_models,
            commands::mcp_servers,
            commands::find_mcp_servers,
            commands::create_tree,
            commands::set_tree_workspace,
            commands::list_trees,
            commands::search,
            commands::delete_tree,
            commands::focus_frame,
            commands::push_frame,
            commands::plan_frames,
            commands::move_frame,
            commands::start_frame,
            commands::pop_frame,
            commands::resume_frame,
            commands::retry_frame,
            commands::retry_frame_from_start,
            commands::frame_changes,
            commands::rollback_frame,
            commands::checkpoint_storage,
            commands::invalidate_frame,
            commands::edit_frame,
            commands::delete_frame,
            commands::import_session,
            commands::export_frames,
            commands::export_context,
            commands::choose_save_path,
            commands::choose_folder,
            commands::sessions,
            commands::follow_session,
            commands::unfollow_session,
            commands::follow_agent,
            commands::frame_budget,
            commands::set_frame_budget,
            commands::gateway_status,
            commands::set_gateway,
            commands::gateway_sessions,
            commands::gateway_frame,
        ])
        .events(collect_events![
            change_watch::TreeChanged,
            damage_watch::DatabaseDamaged,
            follower::FollowRead,
            gateway::GatewayCalled
        ])
        // The outline the window works with, which it makes from the `outline` command's columns.
        .typ::<flame_api::TreeOutline>()
}

/// Where the committed bindings live.
pub fn committed_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../ui/src/bindings.ts")
}

/// Writes the bindings to `path`, ending with the names of the commands the window is granted.
pub fn export(path: &Path) -> Result<(), String> {
    builder::<tauri::Wry>()
        .export(Typescript::default().header(HEADER), path)
        .map_err(|e| format!("cannot export the TypeScript bindings to {}: {e}", path.display()))?;
    let granted = granted_commands()?;
    let union: Vec<String> =
        granted.iter().map(|name| format!("\n  | {:?}", camel_case(name))).collect();
    let declaration = format!(
        "\n/** The commands the window is granted (capabilities/default.json), as `commands` names them. */\nexport type WindowCommand ={};\n",
        union.concat()
    );
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .map_err(|e| format!("cannot reopen {}: {e}", path.display()))?;
    std::io::Write::write_all(&mut file, declaration.as_bytes())
        .map_err(|e| format!("cannot write to {}: {e}", path.display()))
}

/// The app commands the window's capability grants, in snake case, in the file's order.
fn granted_commands() -> Result<Vec<String>, String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("capabilities/default.json");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let capability: Capability = serde_json::from_str(&text)
        .map_err(|e| format!("{} is not a capability: {e}", path.display()))?;
    Ok(capability
        .permissions
        .iter()
        .filter_map(|permission| permission.strip_prefix("allow-"))
        .map(|command| command.replace('-', "_"))
        .collect())
}

/// The part of a capability file the bindings read.
#[derive(serde::Deserialize)]
struct Capability {
    permissions: Vec<String>,
}

/// `retry_frame_from_start` as the bindings name it: `retryFrameFromStart`.
fn camel_case(snake: &str) -> String {
    let mut words = snake.split('_');
    let first = words.next().unwrap_or_default().to_owned();
    words.fold(first, |mut name, word| {
        let mut chars = word.chars();
        if let Some(head) = chars.next() {
            name.extend(head.to_uppercase());
            name.push_str(chars.as_str());
        }
        name
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    include!(concat!(env!("OUT_DIR"), "/command_names.rs"));

    /// The command names the generated bindings call, in snake case.
    fn bound_commands(bindings: &str) -> Vec<String> {
        bindings
            .lines()
            .filter_map(|line| {
                // `__TAURI_INVOKE("name"` or, for a typed return, `__TAURI_INVOKE<T>("name"`.
                let call = line.split_once("__TAURI_INVOKE")?.1;
                call.split_once("(\"")?.1.split_once('"')
            })
            .map(|(name, _)| name.to_owned())
            .collect()
    }

    #[test]
    fn every_registered_command_is_declared_to_tauri() {
        let fresh = tempfile::NamedTempFile::new().unwrap();
        export(fresh.path()).unwrap();
        let mut bound = bound_commands(&std::fs::read_to_string(fresh.path()).unwrap());
        let mut declared: Vec<String> = COMMAND_NAMES.iter().map(|n| (*n).to_owned()).collect();
        assert!(bound.len() > 20, "the bindings name too few commands: {bound:?}");
        bound.sort();
        declared.sort();
        assert_eq!(
            bound, declared,
            "build.rs must read every registered command from collect_commands!"
        );
    }

    /// The window's capability grants app commands only by name, and only declared ones; no
    /// plugin's commands (the save dialog is opened from Rust).
    #[test]
    fn the_window_is_granted_named_commands_and_events_only() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("capabilities/default.json");
        let capability: Capability =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        for permission in &capability.permissions {
            if permission == "core:event:default" {
                continue;
            }
            assert!(
                permission.starts_with("allow-"),
                "{permission} is not an app command's allow-"
            );
        }
        for command in granted_commands().unwrap() {
            assert!(COMMAND_NAMES.contains(&command.as_str()), "allow-{command} names no command");
        }
        assert_eq!(camel_case("retry_frame_from_start"), "retryFrameFromStart");
        assert_eq!(camel_case("search"), "search");
    }

    #[test]
    fn bindings_are_fresh() {
        let fresh = tempfile::NamedTempFile::new().unwrap();
        export(fresh.path()).unwrap();
        let fresh = std::fs::read_to_string(fresh.path()).unwrap();
        let committed_path = committed_path();
        if std::env::var_os("FLAME_BLESS").is_some() {
            std::fs::write(&committed_path, &fresh).unwrap();
            return;
        }
        let committed = std::fs::read_to_string(&committed_path).unwrap_or_default();
        assert!(
            committed == fresh,
            "{} is stale: run `make bindings` and commit the result",
            committed_path.display()
        );
    }
}
