//! A crate's module tree read from its source: each module's children, the items it defines,
//! what it re-exports, and every path it uses that starts at `crate`, `super` or `self`.
//!
//! The tree starts at `src/lib.rs` (or `src/main.rs`) and follows `mod` declarations, inline and
//! in files, skipping modules and items compiled only for tests (`#[cfg(test)]`). Paths are read
//! from `use` trees, from the code (types, expressions, patterns) and from the tokens of macro
//! calls, whose bodies are not parsed.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use proc_macro2::{TokenStream, TokenTree};
use syn::visit::Visit;

/// A module's path below the crate root: empty for the root, `["flow", "steps"]` for
/// `crate::flow::steps`.
pub type ModulePath = Vec<String>;

/// A path a module uses, where it is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    /// The path's segments, starting with `crate`, `super` or `self`.
    pub segments: Vec<String>,
    /// The file the path is written in, relative to the workspace root.
    pub file: PathBuf,
    /// The 1-based line of the path.
    pub line: usize,
}

/// What one module holds, as far as the cycle check needs.
#[derive(Debug, Default)]
pub struct Module {
    /// Its child modules' names.
    pub children: BTreeSet<String>,
    /// The names of the items it defines (types, functions, traits, constants, statics, macros).
    pub items: BTreeSet<String>,
    /// Its named re-exports (`pub use a::b::Name;`, `pub(crate) use a::{Name}`): name to path.
    pub reexports: BTreeMap<String, Vec<String>>,
    /// The paths of its glob re-exports (`pub use a::b::*;`).
    pub glob_reexports: Vec<Vec<String>>,
    /// The paths it uses that start at `crate`, `super` or `self`.
    pub references: Vec<Reference>,
}

/// A crate's modules, by path.
#[derive(Debug, Default)]
pub struct ModuleTree {
    /// Every module of the crate, the root's path being empty.
    pub modules: BTreeMap<ModulePath, Module>,
}

/// Why a crate's module tree could not be read.
#[derive(Debug)]
pub struct ReadError {
    /// The file that could not be read or parsed, relative to the workspace root.
    pub file: PathBuf,
    /// The 1-based line of a parse error (1 when the file could not be read).
    pub line: usize,
    /// What went wrong.
    pub message: String,
}

impl ModuleTree {
    /// Reads the module tree whose root file is `root_file` (a `lib.rs` or `main.rs`); paths in
    /// the result are relative to `workspace`.
    pub fn read(workspace: &Path, root_file: &Path) -> Result<Self, ReadError> {
        let mut tree = Self::default();
        tree.read_file(workspace, root_file, Vec::new(), true)?;
        Ok(tree)
    }

    /// Reads the module in `file` at `path`; `owns_dir` says whether its children's files sit
    /// beside it (`lib.rs`, `main.rs`, `mod.rs`) rather than in a directory named after it.
    fn read_file(
        &mut self,
        workspace: &Path,
        file: &Path,
        path: ModulePath,
        owns_dir: bool,
    ) -> Result<(), ReadError> {
        let relative = super::relative_to(workspace, file);
        let text = std::fs::read_to_string(file).map_err(|err| ReadError {
            file: relative.clone(),
            line: 1,
            message: format!("cannot read: {err}"),
        })?;
        let parsed = syn::parse_file(&text).map_err(|err| ReadError {
            file: relative.clone(),
            line: err.span().start().line,
            message: format!("cannot parse: {err}"),
        })?;
        let parent = file.parent().unwrap_or(Path::new(""));
        let dir = if owns_dir {
            parent.to_path_buf()
        } else {
            let stem = file.file_stem().unwrap_or_default();
            parent.join(stem)
        };
        self.read_items(workspace, &relative, &dir, path, &parsed.items)
    }

    /// Records the module at `path` made of `items`, written in `file`, whose out-of-line
    /// children live in `dir`.
    fn read_items(
        &mut self,
        workspace: &Path,
        file: &Path,
        dir: &Path,
        path: ModulePath,
        items: &[syn::Item],
    ) -> Result<(), ReadError> {
        let mut module = Module::default();
        let mut children = Vec::new();
        for item in items.iter().filter(|item| !is_test_only(item_attrs(item))) {
            match item {
                syn::Item::Mod(child) => {
                    module.children.insert(child.ident.to_string());
                    children.push(child);
                }
                syn::Item::Use(item_use) => {
                    if !matches!(item_use.vis, syn::Visibility::Inherited) {
                        collect_reexports(&item_use.tree, Vec::new(), &mut module);
                    }
                    let mut found = Vec::new();
                    use_tree_paths(&item_use.tree, Vec::new(), &mut found);
                    let line = item_use.use_token.span.start().line;
                    module.references.extend(
                        found
                            .into_iter()
                            .filter(|segments| starts_in_crate(segments))
                            .map(|segments| Reference {
                                segments,
                                file: file.to_path_buf(),
                                line,
                            }),
                    );
                }
                other => {
                    if let Some(name) = item_name(other) {
                        module.items.insert(name);
                    }
                    let mut visitor = PathVisitor {
                        file,
                        found: &mut module.references,
                    };
                    visitor.visit_item(other);
                }
            }
        }
        self.modules.insert(path.clone(), module);
        for child in children {
            let name = child.ident.to_string();
            let mut child_path = path.clone();
            child_path.push(name.clone());
            match &child.content {
                Some((_, items)) => {
                    let child_dir = dir.join(&name);
                    self.read_items(workspace, file, &child_dir, child_path, items)?;
                }
                None => {
                    let (child_file, owns_dir) = child_file(dir, &name, &child.attrs);
                    self.read_file(workspace, &child_file, child_path, owns_dir)?;
                }
            }
        }
        Ok(())
    }
}

/// The file of the out-of-line module `name` declared in a module whose children live in `dir`:
/// its `#[path]`, `name.rs`, or `name/mod.rs`; and whether its own children sit beside it.
fn child_file(dir: &Path, name: &str, attrs: &[syn::Attribute]) -> (PathBuf, bool) {
    let explicit = attrs.iter().find_map(|attr| match &attr.meta {
        syn::Meta::NameValue(meta) if meta.path.is_ident("path") => match &meta.value {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(path),
                ..
            }) => Some(path.value()),
            _ => None,
        },
        _ => None,
    });
    if let Some(path) = explicit {
        return (dir.join(path), true);
    }
    let flat = dir.join(format!("{name}.rs"));
    if flat.exists() {
        (flat, false)
    } else {
        (dir.join(name).join("mod.rs"), true)
    }
}

/// Whether the attributes compile their item only for tests: `#[cfg(test)]`.
fn is_test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|attr| {
        attr.path().is_ident("cfg")
            && attr
                .parse_args::<syn::Ident>()
                .is_ok_and(|ident| ident == "test")
    })
}

/// An item's attributes (none for the kinds the check does not look into).
fn item_attrs(item: &syn::Item) -> &[syn::Attribute] {
    match item {
        syn::Item::Const(item) => &item.attrs,
        syn::Item::Enum(item) => &item.attrs,
        syn::Item::Fn(item) => &item.attrs,
        syn::Item::Impl(item) => &item.attrs,
        syn::Item::Macro(item) => &item.attrs,
        syn::Item::Mod(item) => &item.attrs,
        syn::Item::Static(item) => &item.attrs,
        syn::Item::Struct(item) => &item.attrs,
        syn::Item::Trait(item) => &item.attrs,
        syn::Item::Type(item) => &item.attrs,
        syn::Item::Union(item) => &item.attrs,
        syn::Item::Use(item) => &item.attrs,
        _ => &[],
    }
}

/// The name an item defines in its module's namespace, if it defines one.
fn item_name(item: &syn::Item) -> Option<String> {
    let ident = match item {
        syn::Item::Const(item) => &item.ident,
        syn::Item::Enum(item) => &item.ident,
        syn::Item::Fn(item) => &item.sig.ident,
        syn::Item::Macro(item) => item.ident.as_ref()?,
        syn::Item::Static(item) => &item.ident,
        syn::Item::Struct(item) => &item.ident,
        syn::Item::Trait(item) => &item.ident,
        syn::Item::Type(item) => &item.ident,
        syn::Item::Union(item) => &item.ident,
        _ => return None,
    };
    Some(ident.to_string())
}

/// Whether a path starts at the crate, the current module or its parent.
fn starts_in_crate(segments: &[String]) -> bool {
    segments
        .first()
        .is_some_and(|first| matches!(first.as_str(), "crate" | "super" | "self"))
}

/// Every full path a `use` tree names (a glob names the module it imports from).
fn use_tree_paths(tree: &syn::UseTree, prefix: Vec<String>, found: &mut Vec<Vec<String>>) {
    match tree {
        syn::UseTree::Path(path) => {
            let mut prefix = prefix;
            prefix.push(path.ident.to_string());
            use_tree_paths(&path.tree, prefix, found);
        }
        // `use a::b::{self}` names the module `a::b` itself.
        syn::UseTree::Name(name) if name.ident == "self" => found.push(prefix),
        syn::UseTree::Name(name) => found.push(with_segment(prefix, &name.ident)),
        syn::UseTree::Rename(rename) => found.push(with_segment(prefix, &rename.ident)),
        syn::UseTree::Glob(_) => found.push(prefix),
        syn::UseTree::Group(group) => {
            for tree in &group.items {
                use_tree_paths(tree, prefix.clone(), found);
            }
        }
    }
}

/// Records the names a visible `use` tree re-exports, and its globs.
fn collect_reexports(tree: &syn::UseTree, prefix: Vec<String>, module: &mut Module) {
    match tree {
        syn::UseTree::Path(path) => {
            let mut prefix = prefix;
            prefix.push(path.ident.to_string());
            collect_reexports(&path.tree, prefix, module);
        }
        syn::UseTree::Name(name) => {
            let target = with_segment(prefix, &name.ident);
            module.reexports.insert(name.ident.to_string(), target);
        }
        syn::UseTree::Rename(rename) => {
            let target = with_segment(prefix, &rename.ident);
            module.reexports.insert(rename.rename.to_string(), target);
        }
        syn::UseTree::Glob(_) => module.glob_reexports.push(prefix),
        syn::UseTree::Group(group) => {
            for tree in &group.items {
                collect_reexports(tree, prefix.clone(), module);
            }
        }
    }
}

/// `prefix` followed by `ident`.
fn with_segment(mut prefix: Vec<String>, ident: &syn::Ident) -> Vec<String> {
    prefix.push(ident.to_string());
    prefix
}

/// Collects the paths starting at `crate`, `super` or `self` in an item's code, skipping nested
/// modules (read as modules of their own) and test-only items.
struct PathVisitor<'a> {
    file: &'a Path,
    found: &'a mut Vec<Reference>,
}

impl PathVisitor<'_> {
    fn push(&mut self, segments: Vec<String>, line: usize) {
        if starts_in_crate(&segments) {
            self.found.push(Reference {
                segments,
                file: self.file.to_path_buf(),
                line,
            });
        }
    }

    /// Finds `crate::a::b`-shaped runs in a macro call's tokens.
    fn scan_tokens(&mut self, tokens: TokenStream) {
        let tokens: Vec<TokenTree> = tokens.into_iter().collect();
        let mut index = 0;
        while index < tokens.len() {
            match &tokens[index] {
                TokenTree::Group(group) => self.scan_tokens(group.stream()),
                TokenTree::Ident(ident)
                    if matches!(ident.to_string().as_str(), "crate" | "super" | "self") =>
                {
                    let line = ident.span().start().line;
                    let mut segments = vec![ident.to_string()];
                    while let Some(next) = path_step(&tokens, index) {
                        segments.push(next);
                        index += 3;
                    }
                    if segments.len() > 1 {
                        self.push(segments, line);
                    }
                }
                _ => {}
            }
            index += 1;
        }
    }
}

/// The identifier after `::` at `index + 1`, if the tokens there are `:`, `:`, identifier.
fn path_step(tokens: &[TokenTree], index: usize) -> Option<String> {
    match tokens.get(index + 1..index + 4)? {
        [
            TokenTree::Punct(a),
            TokenTree::Punct(b),
            TokenTree::Ident(ident),
        ] if a.as_char() == ':' && b.as_char() == ':' => Some(ident.to_string()),
        _ => None,
    }
}

impl<'ast> Visit<'ast> for PathVisitor<'_> {
    fn visit_path(&mut self, path: &'ast syn::Path) {
        let segments = path
            .segments
            .iter()
            .map(|segment| segment.ident.to_string())
            .collect();
        let line = path
            .segments
            .first()
            .map_or(1, |segment| segment.ident.span().start().line);
        self.push(segments, line);
        syn::visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.scan_tokens(mac.tokens.clone());
        syn::visit::visit_macro(self, mac);
    }

    fn visit_item_mod(&mut self, _: &'ast syn::ItemMod) {}

    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        let mut found = Vec::new();
        use_tree_paths(&item.tree, Vec::new(), &mut found);
        let line = item.use_token.span.start().line;
        for segments in found {
            self.push(segments, line);
        }
    }

    fn visit_item(&mut self, item: &'ast syn::Item) {
        if !is_test_only(item_attrs(item)) {
            syn::visit::visit_item(self, item);
        }
    }

    fn visit_impl_item_fn(&mut self, item: &'ast syn::ImplItemFn) {
        if !is_test_only(&item.attrs) {
            syn::visit::visit_impl_item_fn(self, item);
        }
    }
}
