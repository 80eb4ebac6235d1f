use flame_workspace::{MAX_LISTED_FILES, WorkspaceError};

use crate::Fixture;

fn sample(f: &Fixture) {
    f.put("src/main.rs", "fn main() {}\n");
    f.put("src/lib/util.rs", "\n");
    f.put("README.md", "# x\n");
    f.put("target/debug/out.rs", "\n");
    f.put("notes/draft.md", "\n");
    f.put(".hidden/secret.rs", "\n");
    f.put(".env", "KEY=1\n");
    f.put(".gitignore", "target/\n");
    f.put(".ignore", "notes/\n");
}

#[test]
fn listing_honours_gitignore_ignore_and_hidden_files_in_a_git_repository() {
    let f = Fixture::new();
    f.git_init();
    sample(&f);
    let list = f.workspace.list_files(None).expect("list");
    assert_eq!(list.files, ["README.md", "src/lib/util.rs", "src/main.rs"]);
    assert_eq!(list.total, 3);
    assert_eq!(list.render(), "README.md\nsrc/lib/util.rs\nsrc/main.rs\n");
}

#[test]
fn gitignore_is_honoured_outside_a_git_repository_too() {
    let f = Fixture::new();
    sample(&f);
    let list = f.workspace.list_files(None).expect("list");
    assert_eq!(list.files, ["README.md", "src/lib/util.rs", "src/main.rs"]);
}

#[test]
fn a_glob_without_a_slash_matches_names_and_with_one_whole_paths() {
    let f = Fixture::new();
    sample(&f);
    let by_name = f.workspace.list_files(Some("*.rs")).expect("list");
    assert_eq!(by_name.files, ["src/lib/util.rs", "src/main.rs"]);
    let one_level = f.workspace.list_files(Some("src/*.rs")).expect("list");
    assert_eq!(one_level.files, ["src/main.rs"]);
    let any_depth = f.workspace.list_files(Some("./src/**/*.rs")).expect("list");
    assert_eq!(any_depth.files, ["src/lib/util.rs", "src/main.rs"]);
    let none = f.workspace.list_files(Some("*.py")).expect("list");
    assert_eq!(none.render(), "No files match \"*.py\".");
}

#[test]
fn an_invalid_glob_is_a_clear_error() {
    let f = Fixture::new();
    let error = f.workspace.list_files(Some("src/[a")).expect_err("invalid");
    assert!(matches!(error, WorkspaceError::InvalidGlob { .. }), "{error:?}");
    assert!(error.to_string().contains("src/[a"), "{error}");
}

#[test]
fn past_the_cap_the_first_paths_are_listed_and_the_rest_counted() {
    let f = Fixture::new();
    let count = MAX_LISTED_FILES + 7;
    for index in 0..count {
        f.put(&format!("files/{index:05}.txt"), "");
    }
    let list = f.workspace.list_files(Some("*.txt")).expect("list");
    assert_eq!(list.files.len(), MAX_LISTED_FILES);
    assert_eq!(list.total, count as u64);
    assert_eq!(list.files[0], "files/00000.txt");
    assert_eq!(list.files[MAX_LISTED_FILES - 1], format!("files/{:05}.txt", MAX_LISTED_FILES - 1));
    assert!(
        list.render().ends_with("[7 more file(s) match; narrow the glob, such as src/**/*.rs]\n")
    );
}
