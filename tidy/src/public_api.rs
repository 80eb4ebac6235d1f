//! A crate's public types, read with `syn`: where untyped JSON (`serde_json::Value`, `Map`,
//! `RawValue`) appears in what other crates can see.
//!
//! "Public" is approximated from the source alone: an item declared `pub` counts when every
//! module above it is `pub`, or when its name is re-exported by a `pub use` (or a glob
//! `pub use` of its module) anywhere in the crate. Items under `#[cfg(test)]` do not count.
//! In a public type, its `pub` fields and every enum variant's fields count; in a public
//! function or method, its arguments and result; and `pub type`, `pub const` and `pub static`
//! items, and the methods of public traits.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// The names under which `serde_json` calls untyped JSON.
const UNTYPED: [&str; 3] = ["Value", "Map", "RawValue"];

/// One place where untyped JSON is in a crate's public surface.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Offence {
    pub file: PathBuf,
    pub line: usize,
    /// What the untyped JSON is part of (`pub struct Event, field detail`).
    pub place: String,
}

struct SourceFile {
    path: PathBuf,
    ast: syn::File,
    /// Whether every module above this file's items is `pub`.
    public_module: bool,
    /// The file's module name (`lib` for the root).
    module: String,
}

/// Every place in the crate rooted at `lib` (its `src/lib.rs`) where a public item exposes
/// `serde_json`'s untyped JSON.
pub fn untyped_json_in_public_types(lib: &Path) -> Vec<Offence> {
    let mut files = Vec::new();
    collect_files(lib, "lib", true, &mut files);
    let mut reexported = BTreeSet::new();
    for file in &files {
        collect_reexports(&file.ast.items, &mut reexported);
    }
    let mut offences = Vec::new();
    for file in &files {
        let aliases = json_aliases(&file.ast.items);
        let mut checker = Checker { file, aliases, offences: &mut offences };
        let public_module = file.public_module || reexported.contains(&file.module);
        checker.items(&file.ast.items, public_module, &reexported);
    }
    offences
}

fn collect_files(path: &Path, module: &str, public_module: bool, files: &mut Vec<SourceFile>) {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|err| panic!("{}: cannot read: {err}", path.display()));
    let ast = syn::parse_file(&text)
        .unwrap_or_else(|err| panic!("{}: cannot parse: {err}", path.display()));
    // `lib.rs` and `mod.rs` hold their submodules beside them; `name.rs` in `name/`.
    let dir = match path.file_name().and_then(|n| n.to_str()) {
        Some("lib.rs" | "mod.rs") => path.parent().expect("a file has a folder").to_path_buf(),
        _ => path.with_extension(""),
    };
    for item in &ast.items {
        if let syn::Item::Mod(m) = item
            && m.content.is_none()
            && !is_test_only(&m.attrs)
        {
            let name = m.ident.to_string();
            let candidates = [dir.join(format!("{name}.rs")), dir.join(&name).join("mod.rs")];
            if let Some(file) = candidates.iter().find(|c| c.exists()) {
                let public = public_module && matches!(m.vis, syn::Visibility::Public(_));
                collect_files(file, &name, public, files);
            }
        }
    }
    files.push(SourceFile { path: path.to_owned(), ast, public_module, module: module.to_owned() });
}

/// The last names of every `pub use` path, and the module names of glob re-exports.
fn collect_reexports(items: &[syn::Item], names: &mut BTreeSet<String>) {
    fn walk(tree: &syn::UseTree, parent: Option<&syn::Ident>, names: &mut BTreeSet<String>) {
        match tree {
            syn::UseTree::Path(p) => walk(&p.tree, Some(&p.ident), names),
            syn::UseTree::Name(n) => {
                names.insert(n.ident.to_string());
            }
            syn::UseTree::Rename(r) => {
                names.insert(r.ident.to_string());
            }
            syn::UseTree::Glob(_) => {
                if let Some(module) = parent {
                    names.insert(module.to_string());
                }
            }
            syn::UseTree::Group(g) => {
                for tree in &g.items {
                    walk(tree, parent, names);
                }
            }
        }
    }
    for item in items {
        match item {
            syn::Item::Use(u) if matches!(u.vis, syn::Visibility::Public(_)) => {
                walk(&u.tree, None, names)
            }
            syn::Item::Mod(m) if !is_test_only(&m.attrs) => {
                if let Some((_, inner)) = &m.content {
                    collect_reexports(inner, names);
                }
            }
            _ => {}
        }
    }
}

/// The names by which this file refers to `serde_json`'s untyped JSON through a `use`.
fn json_aliases(items: &[syn::Item]) -> BTreeSet<String> {
    fn walk(tree: &syn::UseTree, path: &mut Vec<String>, out: &mut BTreeSet<String>) {
        let from_json = path.first().is_some_and(|p| p == "serde_json");
        match tree {
            syn::UseTree::Path(p) => {
                path.push(p.ident.to_string());
                walk(&p.tree, path, out);
                path.pop();
            }
            syn::UseTree::Name(n)
                if from_json && UNTYPED.contains(&n.ident.to_string().as_str()) =>
            {
                out.insert(n.ident.to_string());
            }
            syn::UseTree::Rename(r)
                if from_json && UNTYPED.contains(&r.ident.to_string().as_str()) =>
            {
                out.insert(r.rename.to_string());
            }
            syn::UseTree::Glob(_) if from_json => {
                out.extend(UNTYPED.iter().map(|n| (*n).to_owned()));
            }
            syn::UseTree::Group(g) => {
                for tree in &g.items {
                    walk(tree, path, out);
                }
            }
            _ => {}
        }
    }
    let mut out = BTreeSet::new();
    for item in items {
        if let syn::Item::Use(u) = item {
            walk(&u.tree, &mut Vec::new(), &mut out);
        }
    }
    out
}

fn is_test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.parse_args::<syn::Meta>().is_ok_and(|m| m.path().is_ident("test"))
    })
}

fn is_pub(vis: &syn::Visibility) -> bool {
    matches!(vis, syn::Visibility::Public(_))
}

struct Checker<'a> {
    file: &'a SourceFile,
    aliases: BTreeSet<String>,
    offences: &'a mut Vec<Offence>,
}

impl Checker<'_> {
    fn items(&mut self, items: &[syn::Item], public_module: bool, reexported: &BTreeSet<String>) {
        let visible = |vis: &syn::Visibility, name: &syn::Ident| {
            is_pub(vis) && (public_module || reexported.contains(&name.to_string()))
        };
        // Types of this module that others see, so that their methods count too.
        let mut public_types = BTreeSet::new();
        for item in items {
            match item {
                syn::Item::Struct(s) if visible(&s.vis, &s.ident) => {
                    public_types.insert(s.ident.to_string());
                }
                syn::Item::Enum(e) if visible(&e.vis, &e.ident) => {
                    public_types.insert(e.ident.to_string());
                }
                _ => {}
            }
        }
        for item in items {
            match item {
                _ if item_attrs(item).is_some_and(is_test_only) => {}
                syn::Item::Struct(s) if visible(&s.vis, &s.ident) => {
                    for field in &s.fields {
                        if is_pub(&field.vis) {
                            let name = field
                                .ident
                                .as_ref()
                                .map_or("(unnamed)".to_owned(), |i| i.to_string());
                            self.ty(&field.ty, format!("pub struct {}, field {name}", s.ident));
                        }
                    }
                }
                syn::Item::Enum(e) if visible(&e.vis, &e.ident) => {
                    for variant in &e.variants {
                        for field in &variant.fields {
                            self.ty(
                                &field.ty,
                                format!("pub enum {}, variant {}", e.ident, variant.ident),
                            );
                        }
                    }
                }
                syn::Item::Fn(f) if visible(&f.vis, &f.sig.ident) => {
                    self.signature(&f.sig, format!("pub fn {}", f.sig.ident));
                }
                syn::Item::Type(t) if visible(&t.vis, &t.ident) => {
                    self.ty(&t.ty, format!("pub type {}", t.ident));
                }
                syn::Item::Const(c) if visible(&c.vis, &c.ident) => {
                    self.ty(&c.ty, format!("pub const {}", c.ident));
                }
                syn::Item::Static(s) if visible(&s.vis, &s.ident) => {
                    self.ty(&s.ty, format!("pub static {}", s.ident));
                }
                syn::Item::Trait(t) if visible(&t.vis, &t.ident) => {
                    for item in &t.items {
                        if let syn::TraitItem::Fn(f) = item {
                            self.signature(
                                &f.sig,
                                format!("pub trait {}, fn {}", t.ident, f.sig.ident),
                            );
                        }
                    }
                }
                syn::Item::Impl(i) => {
                    let Some(owner) = type_name(&i.self_ty) else { continue };
                    if !public_types.contains(&owner) && !reexported.contains(&owner) {
                        continue;
                    }
                    let trait_impl = i.trait_.is_some();
                    if let Some((_, path, _)) = &i.trait_ {
                        let mut finder = Finder { aliases: &self.aliases, found: Vec::new() };
                        finder.visit_path(path);
                        self.report(finder.found, format!("impl of a trait for {owner}"));
                    }
                    for item in &i.items {
                        if let syn::ImplItem::Fn(f) = item
                            && (trait_impl || is_pub(&f.vis))
                            && !is_test_only(&f.attrs)
                        {
                            self.signature(&f.sig, format!("{owner}::{}", f.sig.ident));
                        }
                    }
                }
                syn::Item::Mod(m) => {
                    if let Some((_, inner)) = &m.content {
                        self.items(inner, public_module && is_pub(&m.vis), reexported);
                    }
                }
                _ => {}
            }
        }
    }

    fn signature(&mut self, sig: &syn::Signature, place: String) {
        let mut finder = Finder { aliases: &self.aliases, found: Vec::new() };
        for input in &sig.inputs {
            finder.visit_fn_arg(input);
        }
        finder.visit_return_type(&sig.output);
        self.report(finder.found, place);
    }

    fn ty(&mut self, ty: &syn::Type, place: String) {
        let mut finder = Finder { aliases: &self.aliases, found: Vec::new() };
        finder.visit_type(ty);
        self.report(finder.found, place);
    }

    fn report(&mut self, lines: Vec<usize>, place: String) {
        for line in lines {
            self.offences.push(Offence {
                file: self.file.path.clone(),
                line,
                place: place.clone(),
            });
        }
    }
}

fn item_attrs(item: &syn::Item) -> Option<&[syn::Attribute]> {
    Some(match item {
        syn::Item::Struct(i) => &i.attrs,
        syn::Item::Enum(i) => &i.attrs,
        syn::Item::Fn(i) => &i.attrs,
        syn::Item::Type(i) => &i.attrs,
        syn::Item::Const(i) => &i.attrs,
        syn::Item::Static(i) => &i.attrs,
        syn::Item::Trait(i) => &i.attrs,
        syn::Item::Impl(i) => &i.attrs,
        syn::Item::Mod(i) => &i.attrs,
        _ => return None,
    })
}

/// The last name of a type path (`crate::frames::Change` gives `Change`).
fn type_name(ty: &syn::Type) -> Option<String> {
    match ty {
        syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
        _ => None,
    }
}

/// Finds the lines of untyped-JSON type paths inside what it visits.
struct Finder<'a> {
    aliases: &'a BTreeSet<String>,
    found: Vec<usize>,
}

impl<'ast> Visit<'ast> for Finder<'_> {
    fn visit_path(&mut self, path: &'ast syn::Path) {
        let names: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        let untyped = match names.as_slice() {
            [only] => self.aliases.contains(only),
            [first, .., last] => first == "serde_json" && UNTYPED.contains(&last.as_str()),
            [] => false,
        };
        if untyped {
            let line = path.segments.first().map_or(0, |s| s.ident.span().start().line);
            self.found.push(line);
        }
        syn::visit::visit_path(self, path);
    }
}
