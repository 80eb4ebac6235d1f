//! The repository's own rules, checked on every `make test`.

use std::fs;
use std::path::{Path, PathBuf};

use tidy::module_graph::{circles, crate_names, module_of};
use tidy::public_api::untyped_json_in_public_types;
use tidy::rust_source::{code_outside_tests, is_test_file, std_group_members};
use tidy::{Workspace, files_with_extension, repo_root};

/// Crates that speak HTTP: clients and the protocol stacks under them.
const HTTP_CRATES: [&str; 9] =
    ["reqwest", "hyper", "hyper-util", "h2", "ureq", "isahc", "surf", "attohttpc", "curl"];

/// Crates whose only purpose is I/O: files, sockets, processes, async runtimes, databases.
const IO_CRATES: [&str; 15] = [
    "tokio",
    "mio",
    "async-std",
    "smol",
    "socket2",
    "reqwest",
    "hyper",
    "ureq",
    "rusqlite",
    "libsqlite3-sys",
    "tempfile",
    "dirs",
    "walkdir",
    "ignore",
    "notify",
];

/// The crates ARCHITECTURE.md says do no I/O.
const PURE_CRATES: [&str; 3] = ["flame-model", "flame-context", "flame-tokens"];

/// The crates ARCHITECTURE.md says stay synchronous and offline (the store, the facade and
/// everything under them).
const OFFLINE_CRATES: [&str; 6] =
    ["flame-store", "flame-api", "flame-import", "flame-model", "flame-context", "flame-tokens"];

fn relative(path: &Path) -> PathBuf {
    path.strip_prefix(repo_root()).unwrap_or(path).to_path_buf()
}

#[test]
fn no_crate_under_crates_depends_on_tauri() {
    let workspace = Workspace::load();
    let core: Vec<_> = workspace.members.iter().filter(|m| m.dir.starts_with("crates")).collect();
    assert!(!core.is_empty(), "no crates found under crates/");
    for member in core {
        let tauri: Vec<_> = workspace
            .transitive_dependencies(&member.name)
            .into_iter()
            .filter(|name| name == "tauri" || name.starts_with("tauri-") || name == "wry")
            .collect();
        assert!(
            tauri.is_empty(),
            "{} is under crates/ but depends on {tauri:?}; only src-tauri may know Tauri",
            member.name
        );
    }
}

#[test]
fn only_the_store_talks_to_sqlite() {
    let workspace = Workspace::load();
    let mut offences = Vec::new();
    for member in &workspace.members {
        if member.name == "flame-store" {
            continue;
        }
        // Through flame-store is the one allowed way, tests and benches included.
        let reached = workspace.reachable_avoiding(&member.name, &["flame-store"], true);
        for sqlite in ["rusqlite", "libsqlite3-sys"] {
            if let Some(chain) = reached.get(sqlite) {
                offences.push(format!("{}/Cargo.toml: {chain}", member.dir.display()));
            }
        }
    }
    assert!(
        offences.is_empty(),
        "only flame-store may link SQLite; these reach it another way:\n{}",
        offences.join("\n")
    );
}

/// The crates that speak HTTP: the providers, the gateway (a server on 127.0.0.1 that forwards an
/// agent's calls to the upstreams it was given, following no redirect), and the MCP client for
/// servers reached over streamable HTTP (rmcp's client, which follows redirects only within the
/// server's origin).
const HTTP_SPEAKERS: [&str; 3] = ["flame-models", "flame-gateway", "flame-mcp-client"];

/// rmcp's features that bring in an HTTP crate. Cargo resolves one set of features for the whole
/// workspace, so rmcp reaches reqwest for every crate once the MCP client turns these on; a crate
/// speaks HTTP through rmcp only if it turns one of them on itself.
const RMCP_HTTP_FEATURES: [&str; 4] =
    ["reqwest", "transport-streamable-http", "server-side-http", "auth"];

#[test]
fn only_flame_models_the_gateway_and_the_mcp_client_speak_http() {
    let workspace = Workspace::load();
    for speaker in HTTP_SPEAKERS {
        assert!(workspace.members.iter().any(|m| m.name == speaker), "{speaker} is gone");
    }
    let mut offences = Vec::new();
    for member in &workspace.members {
        if HTTP_SPEAKERS.contains(&member.name.as_str()) {
            continue;
        }
        for rmcp in member.declared.iter().filter(|d| d.name == "rmcp") {
            for feature in &rmcp.features {
                if RMCP_HTTP_FEATURES.iter().any(|http| feature.starts_with(http)) {
                    offences.push(format!(
                        "{}/Cargo.toml: turns on rmcp's HTTP feature {feature}",
                        member.dir.display()
                    ));
                }
            }
        }
        // Through flame-models, flame-gateway, flame-mcp-client or rmcp (whose HTTP features are
        // checked above) is the one allowed way. The shell also reaches reqwest through tauri itself, which it
        // does not use to make requests; any other way is an offence, tests and benches included.
        let through: &[&str] = if member.dir.starts_with("src-tauri") {
            &["flame-models", "flame-gateway", "flame-mcp-client", "rmcp", "tauri"]
        } else {
            &["flame-models", "flame-gateway", "flame-mcp-client", "rmcp"]
        };
        let reached = workspace.reachable_avoiding(&member.name, through, true);
        for http in HTTP_CRATES {
            if let Some(chain) = reached.get(http) {
                offences.push(format!("{}/Cargo.toml: {chain}", member.dir.display()));
            }
        }
    }
    assert!(
        offences.is_empty(),
        "only flame-models, flame-gateway and flame-mcp-client may speak HTTP; these reach an HTTP crate another way:\n{}",
        offences.join("\n")
    );
}

#[test]
fn only_the_facade_takes_checkpoints() {
    let workspace = Workspace::load();
    let mut offences = Vec::new();
    for member in &workspace.members {
        if ["flame-api", "flame-checkpoint"].contains(&member.name.as_str()) {
            continue;
        }
        // Through the facade is the one allowed way, tests and benches included: it records
        // which snapshot belongs to which frame and call, which a snapshot taken elsewhere would
        // not be.
        let reached = workspace.reachable_avoiding(&member.name, &["flame-api"], true);
        if let Some(chain) = reached.get("flame-checkpoint") {
            offences.push(format!("{}/Cargo.toml: {chain}", member.dir.display()));
        }
        // A workspace call is one facade operation (`Flame::run_workspace_call`), which takes the
        // checkpoints around it; a crate above the facade taking them itself would split the
        // call again.
        if !workspace.transitive_dependencies(&member.name).contains("flame-api") {
            continue;
        }
        for_each_product_line(&member.dir, |place, line| {
            if line.contains("CheckpointReason::BeforeCall")
                || line.contains("CheckpointReason::AfterCall")
            {
                offences.push(format!("{place}: {}", line.trim()));
            }
        });
    }
    assert!(
        offences.is_empty(),
        "only the facade (flame-api) takes checkpoints, and the ones around a workspace call \
         only in Flame::run_workspace_call:\n{}",
        offences.join("\n")
    );
}

#[test]
fn the_store_and_the_facade_stay_synchronous_and_offline() {
    let workspace = Workspace::load();
    let mut offences = Vec::new();
    for name in OFFLINE_CRATES {
        let member = workspace.members.iter().find(|m| m.name == name);
        let member = member.unwrap_or_else(|| panic!("{name} is not a workspace member"));
        let reached = workspace.reachable_avoiding(name, &[], true);
        for banned in HTTP_CRATES.iter().chain(&["tokio", "async-std", "smol", "flame-models"]) {
            if let Some(chain) = reached.get(*banned) {
                offences.push(format!("{}/Cargo.toml: {chain}", member.dir.display()));
            }
        }
    }
    assert!(
        offences.is_empty(),
        "the store, the facade and the crates under them are synchronous and offline:\n{}",
        offences.join("\n")
    );
}

#[test]
fn model_context_and_tokens_do_no_io() {
    let workspace = Workspace::load();
    let mut offences = Vec::new();
    for name in PURE_CRATES {
        let member = workspace.members.iter().find(|m| m.name == name);
        let member = member.unwrap_or_else(|| panic!("{name} is not a workspace member"));
        // What the crate ships with; its tests may use temporary files.
        let reached = workspace.reachable_avoiding(name, &[], false);
        for io in IO_CRATES {
            if let Some(chain) = reached.get(io) {
                offences.push(format!("{}/Cargo.toml: {chain}", member.dir.display()));
            }
        }
        for_each_product_line(&member.dir, |place, line| {
            offences.extend(io_in(line).into_iter().map(|what| format!("{place}: {what}")));
        });
    }
    assert!(
        offences.is_empty(),
        "flame-model, flame-context and flame-tokens do no I/O and read no clock:\n{}",
        offences.join("\n")
    );
}

/// Calls `visit` with each line of code a crate ships (its `src/` outside tests, comments and
/// literals blanked) and where it is (`path:line`).
fn for_each_product_line(crate_dir: &Path, mut visit: impl FnMut(&str, &str)) {
    for file in files_with_extension(&crate_dir.join("src"), "rs") {
        if is_test_file(&relative(&file)) {
            continue;
        }
        let code = code_outside_tests(&fs::read_to_string(&file).unwrap());
        for (number, line) in code.lines().enumerate() {
            visit(&format!("{}:{}", relative(&file).display(), number + 1), line);
        }
    }
}

/// The I/O a line of code (comments and literals blanked) names.
fn io_in(line: &str) -> Vec<String> {
    const PATHS: [&str; 8] = [
        "std::fs",
        "std::net",
        "std::process",
        "std::env",
        "std::io::stdin",
        "std::io::stdout",
        "std::io::stderr",
        "std::os",
    ];
    const NAMES: [&str; 9] = [
        "tokio",
        "reqwest",
        "println!",
        "print!",
        "eprintln!",
        "eprint!",
        "SystemTime",
        "Instant",
        "thread::sleep",
    ];
    let mut found: Vec<String> = PATHS
        .iter()
        .chain(&NAMES)
        .filter(|word| contains_word(line, word))
        .map(|word| (*word).to_owned())
        .collect();
    for member in std_group_members(line) {
        if ["fs", "net", "process", "env", "os"].contains(&member.as_str()) {
            found.push(format!("std::{member} (in a `std::{{…}}` group)"));
        }
    }
    found
}

/// Whether `word` occurs in `line` not as part of a longer name.
fn contains_word(line: &str, word: &str) -> bool {
    let is_name = |c: char| c.is_alphanumeric() || c == '_';
    line.match_indices(word).any(|(at, _)| {
        let before = line[..at].chars().next_back();
        let after = line[at + word.len()..].chars().next();
        let joined_before = before.is_some_and(is_name);
        let joined_after = word.ends_with(is_name) && after.is_some_and(is_name);
        !joined_before && !joined_after
    })
}

#[test]
fn the_ui_never_parses_text_as_html() {
    const SINKS: [&str; 6] = [
        "innerHTML",
        "outerHTML",
        "dangerouslySetInnerHTML",
        "insertAdjacentHTML",
        "document.write",
        "createContextualFragment",
    ];
    let mut offences = Vec::new();
    let mut files = Vec::new();
    for extension in ["ts", "tsx", "js", "jsx", "mjs"] {
        files.extend(files_with_extension(Path::new("ui/src"), extension));
    }
    assert!(!files.is_empty(), "no UI sources found under ui/src");
    for file in files {
        let text = fs::read_to_string(&file).unwrap();
        for (number, line) in text.lines().enumerate() {
            let code = line.trim_start();
            // A comment may name what it warns against.
            if code.starts_with("//") || code.starts_with('*') || code.starts_with("/*") {
                continue;
            }
            for sink in SINKS.iter().filter(|sink| line.contains(*sink)) {
                offences.push(format!("{}:{}: {sink}", relative(&file).display(), number + 1));
            }
        }
    }
    assert!(
        offences.is_empty(),
        "message text is untrusted and never parsed as HTML; these use an HTML sink:\n{}",
        offences.join("\n")
    );
}

/// The untyped JSON still allowed in the public types of flame-model and flame-store, each for
/// a reason: a tool call's arguments are whatever the model sent (each tool checks them against
/// its own schema), and a tool's schema is a JSON Schema document.
const KNOWN_UNTYPED_JSON: [&str; 2] =
    ["pub struct ToolCall, field arguments", "pub struct ToolSpec, field schema"];

#[test]
fn no_untyped_json_in_the_public_types_of_model_and_store() {
    let mut offences = Vec::new();
    for dir in ["crates/flame-model", "crates/flame-store"] {
        for offence in untyped_json_in_public_types(&repo_root().join(dir).join("src/lib.rs")) {
            if KNOWN_UNTYPED_JSON.contains(&offence.place.as_str()) {
                continue;
            }
            offences.push(format!(
                "{}:{}: {}",
                relative(&offence.file).display(),
                offence.line,
                offence.place
            ));
        }
    }
    assert!(
        offences.is_empty(),
        "public types of flame-model and flame-store carry serde_json's untyped JSON; give \
         them a type:\n{}",
        offences.join("\n")
    );
}

#[test]
fn every_crate_says_what_it_is_for_and_architecture_md_names_it() {
    let architecture = fs::read_to_string(repo_root().join("ARCHITECTURE.md")).unwrap();
    for member in Workspace::load().members {
        assert!(
            member.description.as_deref().is_some_and(|d| !d.is_empty()),
            "{} has no `description` in its Cargo.toml",
            member.name
        );
        assert!(
            architecture.contains(&format!("`{}`", member.name)),
            "ARCHITECTURE.md does not name the crate `{}`",
            member.name
        );
        let lib = repo_root().join(&member.dir).join("src/lib.rs");
        if lib.exists() {
            let text = fs::read_to_string(&lib).unwrap();
            assert!(
                text.starts_with("//!"),
                "{} does not open with a //! doc comment",
                lib.display()
            );
        }
    }
}

/// The most ARCHITECTURE.md may weigh: a newcomer reads it in ten minutes, and the details live
/// in the modules' own docs.
const MAX_ARCHITECTURE_BYTES: usize = 30 * 1024;

#[test]
fn architecture_md_stays_short() {
    let size = fs::metadata(repo_root().join("ARCHITECTURE.md")).unwrap().len();
    assert!(
        size < MAX_ARCHITECTURE_BYTES as u64,
        "ARCHITECTURE.md is {size} bytes, over the {MAX_ARCHITECTURE_BYTES} it may weigh; keep \
         each crate's job and invariants there and move the details into the owning module's \
         `//!` doc"
    );
}

/// Test support that lives in a crate behind a feature: the store's synthetic trees, the
/// generated export, the scripted model server.
const TEST_SUPPORT_FEATURES: [(&str, &str); 3] =
    [("flame-store", "synthetic"), ("flame-import", "scale"), ("flame-models", "replay")];

#[test]
fn no_product_code_depends_on_test_support() {
    let mut offences = Vec::new();
    for member in Workspace::load().members {
        for (owner, feature) in TEST_SUPPORT_FEATURES {
            if member.name == owner && member.default_features.iter().any(|f| f == feature) {
                offences.push(format!("{owner} turns on its `{feature}` by default"));
            }
            for dep in member.declared.iter().filter(|d| d.name == owner && d.kind != "dev") {
                if dep.features.iter().any(|f| f == feature) {
                    offences.push(format!(
                        "{}/Cargo.toml: a {} dependency on {owner} with `{feature}`",
                        member.dir.display(),
                        dep.kind
                    ));
                }
            }
        }
    }
    assert!(
        offences.is_empty(),
        "test support is for tests and benchmarks only (a dev-dependency's feature):\n{}",
        offences.join("\n")
    );
}

#[test]
fn no_circles_between_a_crate_s_modules() {
    let mut offences = Vec::new();
    for member in Workspace::load().members {
        let src = member.dir.join("src");
        let mut graph: std::collections::BTreeMap<String, std::collections::BTreeSet<String>> =
            Default::default();
        for file in files_with_extension(&src, "rs") {
            let file = relative(&file);
            if is_test_file(&file) {
                continue;
            }
            let inside = file.strip_prefix(&src).unwrap().to_string_lossy().into_owned();
            let Some(module) = module_of(&inside) else { continue };
            let code = code_outside_tests(&fs::read_to_string(repo_root().join(&file)).unwrap());
            let names = graph.entry(module.clone()).or_default();
            names.extend(crate_names(&code).into_iter().filter(|name| *name != module));
        }
        for circle in circles(&graph) {
            offences.push(format!("{}: {}", member.name, circle.join(" <-> ")));
        }
    }
    assert!(
        offences.is_empty(),
        "modules of one crate name each other in a circle; move what both need into a module \
         of its own, below both:\n{}",
        offences.join("\n")
    );
}

/// The names of the platform's configuration folder in `dirs`, where the settings file lives.
const CONFIG_FOLDERS: [&str; 3] = ["config_dir", "config_local_dir", "preference_dir"];

#[test]
fn only_flame_settings_finds_the_settings_file_and_reaches_the_keyring() {
    let workspace = Workspace::load();
    assert!(workspace.members.iter().any(|m| m.name == "flame-settings"), "flame-settings is gone");
    let mut offences = Vec::new();
    for member in workspace.members.iter().filter(|m| m.name != "flame-settings") {
        // Through flame-settings is the one allowed way, tests and benches included.
        let reached = workspace.reachable_avoiding(&member.name, &["flame-settings"], true);
        if let Some(chain) = reached.get("keyring") {
            offences.push(format!("{}/Cargo.toml: {chain}", member.dir.display()));
        }
        for_each_product_line(&member.dir, |place, line| {
            let named = CONFIG_FOLDERS.iter().filter(|folder| contains_word(line, folder));
            offences.extend(named.map(|folder| format!("{place}: {folder}")));
        });
    }
    assert!(
        offences.is_empty(),
        "only flame-settings finds the settings file (in the configuration folder) and keeps \
         keys in the keyring; ask it (`Settings::default_path`, `SettingsFile`):\n{}",
        offences.join("\n")
    );
}

#[test]
fn every_crate_uses_the_workspace_lints() {
    for member in Workspace::load().members {
        let manifest =
            fs::read_to_string(repo_root().join(&member.dir).join("Cargo.toml")).unwrap();
        assert!(
            manifest.contains("[lints]\nworkspace = true"),
            "{} does not inherit [workspace.lints]",
            member.name
        );
    }
}

#[test]
fn the_tauri_config_at_the_root_is_the_one_the_shell_reads() {
    let build = fs::read_to_string(repo_root().join("src-tauri/build.rs")).unwrap();
    let lib = fs::read_to_string(repo_root().join("src-tauri/src/lib.rs")).unwrap();
    assert!(build.contains("\"../tauri.conf.json\""), "build.rs must read ../tauri.conf.json");
    assert!(lib.contains("generate_context!(\"../tauri.conf.json\")"));
    assert!(!Path::new(&repo_root().join("src-tauri/tauri.conf.json")).exists());
}

#[test]
fn no_debugging_leftovers_in_sources() {
    let mut offenders = Vec::new();
    for dir in ["crates", "src-tauri/src", "tidy/src"] {
        for file in files_with_extension(Path::new(dir), "rs") {
            let text = fs::read_to_string(&file).unwrap();
            for (number, line) in text.lines().enumerate() {
                if ["todo!(", "dbg!(", "unimplemented!("].iter().any(|bad| line.contains(bad)) {
                    offenders.push(format!("{}:{}", file.display(), number + 1));
                }
            }
        }
    }
    for file in files_with_extension(Path::new("ui/src"), "ts")
        .into_iter()
        .chain(files_with_extension(Path::new("ui/src"), "tsx"))
    {
        let text = fs::read_to_string(&file).unwrap();
        if text.contains("debugger;") || text.contains("console.log(") {
            offenders.push(file.display().to_string());
        }
    }
    assert!(offenders.is_empty(), "debugging leftovers: {offenders:?}");
}
