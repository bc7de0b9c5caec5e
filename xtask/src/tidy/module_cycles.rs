//! The module-cycle check: inside each crate, sibling modules depend on each other one way only.
//!
//! Module `a` depends on its sibling `b` when code in `a` (or below it) uses an item defined in
//! `b` (or below it), directly or through a re-export (`crate::LlmAgent` re-exported at the root
//! from `llm_agent` is a use of `llm_agent`). A child using its parent's items, or a parent its
//! child's, is not a dependency between siblings. Modules that depend on each other, directly
//! or around a loop, form a cycle: the code no longer reads in one direction, so the check
//! reports each cycle with the line behind each of its edges. Test-only code does not count.
//!
//! Two modules whose types name each other (an agent and the context it runs in) are no
//! exception: one lives inside the other, as a child may use its parent.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::modules::{ModulePath, ModuleTree, Reference};
use super::{Violation, display_path};

/// The directories whose crates are checked: each `*/src/lib.rs` and `*/src/main.rs` under
/// them is a crate root (and `xtask/src` itself).
const CRATE_DIRS: &[&str] = &["crates", "examples"];

/// How many re-exports a path may pass through before resolution gives up (a re-export loop is
/// a compile error, so only malformed input reaches this).
const MAX_REEXPORT_DEPTH: usize = 16;

/// Runs the module-cycle check on every crate of the workspace at `root`: every cycle is a
/// violation, as is a crate that cannot be read.
pub fn check(root: &Path) -> Vec<Violation> {
    let (cycles, mut violations) = cycles(root);
    violations.extend(cycles.into_iter().map(|cycle| cycle.violation));
    violations
}

/// Every module cycle of the workspace at `root`, and a violation for each crate that cannot be
/// read.
pub fn cycles(root: &Path) -> (Vec<Cycle>, Vec<Violation>) {
    let mut cycles = Vec::new();
    let mut violations = Vec::new();
    for root_file in crate_roots(root) {
        match ModuleTree::read(root, &root_file) {
            Ok(tree) => cycles.extend(check_tree(&tree)),
            Err(err) => violations.push(Violation::new(err.file, err.line, err.message)),
        }
    }
    (cycles, violations)
}

/// The crate root files of the workspace at `root`, sorted.
fn crate_roots(root: &Path) -> Vec<PathBuf> {
    let mut package_dirs = vec![root.join("xtask")];
    for dir in CRATE_DIRS {
        if let Ok(entries) = std::fs::read_dir(root.join(dir)) {
            package_dirs.extend(entries.filter_map(Result::ok).map(|entry| entry.path()));
        }
    }
    let mut roots: Vec<PathBuf> = package_dirs
        .iter()
        .flat_map(|dir| ["lib.rs", "main.rs"].map(|file| dir.join("src").join(file)))
        .filter(|file| file.is_file())
        .collect();
    roots.sort();
    roots
}

/// A cycle among sibling modules.
#[derive(Debug)]
pub struct Cycle {
    /// The modules' parent, as a path below the crate root.
    pub parent: ModulePath,
    /// The modules, sorted by name.
    pub modules: Vec<String>,
    /// The violation that reports it, naming the line behind each edge.
    pub violation: Violation,
}

/// The cycles among sibling modules of one crate's tree.
pub fn check_tree(tree: &ModuleTree) -> Vec<Cycle> {
    let edges = sibling_edges(tree);
    let mut by_parent: BTreeMap<&ModulePath, BTreeMap<&str, BTreeSet<&str>>> = BTreeMap::new();
    for (parent, from, to) in edges.keys() {
        by_parent
            .entry(parent)
            .or_default()
            .entry(from)
            .or_default()
            .insert(to);
    }
    let mut cycles = Vec::new();
    for (parent, graph) in by_parent {
        for modules in strongly_connected(&graph) {
            cycles.push(Cycle {
                parent: parent.clone(),
                violation: cycle_violation(parent, &modules, &edges),
                modules: modules.into_iter().map(str::to_owned).collect(),
            });
        }
    }
    cycles
}

/// An edge between siblings: their parent, the module that depends, the module depended on.
type Edge = (ModulePath, String, String);

/// Every dependency between sibling modules, with the first reference that makes it.
fn sibling_edges(tree: &ModuleTree) -> BTreeMap<Edge, &Reference> {
    let mut edges = BTreeMap::new();
    for (from, module) in &tree.modules {
        for reference in &module.references {
            let Some(to) = resolve(tree, from, &reference.segments, 0) else {
                continue;
            };
            let shared = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
            if shared < from.len() && shared < to.len() {
                let edge = (
                    from[..shared].to_vec(),
                    from[shared].clone(),
                    to[shared].clone(),
                );
                edges.entry(edge).or_insert(reference);
            }
        }
    }
    edges
}

/// The module that defines what `segments` (starting at `crate`, `super` or `self`, written
/// in module `from`) names, following re-exports; `None` when the path leaves the crate.
fn resolve(
    tree: &ModuleTree,
    from: &ModulePath,
    segments: &[String],
    depth: usize,
) -> Option<ModulePath> {
    if depth > MAX_REEXPORT_DEPTH {
        return None;
    }
    let (first, rest) = segments.split_first()?;
    let mut current = match first.as_str() {
        "crate" => Vec::new(),
        "self" => from.clone(),
        "super" => from[..from.len().checked_sub(1)?].to_vec(),
        _ => return None,
    };
    for (index, segment) in rest.iter().enumerate() {
        let module = tree.modules.get(&current)?;
        if segment == "super" {
            current.pop()?;
        } else if module.children.contains(segment) {
            current.push(segment.clone());
        } else if module.items.contains(segment) {
            return Some(current);
        } else if let Some(target) = module.reexports.get(segment) {
            return resolve_reexport(tree, &current, target, depth);
        } else if let Some(glob) = glob_source(tree, &current, segment, depth) {
            let mut path = glob;
            path.extend(rest[index..].iter().cloned());
            let mut absolute = vec!["crate".to_owned()];
            absolute.extend(path);
            return resolve(tree, &Vec::new(), &absolute, depth + 1);
        } else {
            return Some(current);
        }
    }
    Some(current)
}

/// The module a re-export in `module` of `target` points at; `None` for another crate's item.
fn resolve_reexport(
    tree: &ModuleTree,
    module: &ModulePath,
    target: &[String],
    depth: usize,
) -> Option<ModulePath> {
    let first = target.first()?;
    let reexporting = tree.modules.get(module)?;
    if matches!(first.as_str(), "crate" | "self" | "super") {
        resolve(tree, module, target, depth + 1)
    } else if reexporting.children.contains(first) {
        let mut relative = vec!["self".to_owned()];
        relative.extend(target.iter().cloned());
        resolve(tree, module, &relative, depth + 1)
    } else {
        None
    }
}

/// The module (as a path below the crate root) whose glob re-export in `module` brings `name`
/// in, if one does.
fn glob_source(
    tree: &ModuleTree,
    module: &ModulePath,
    name: &str,
    depth: usize,
) -> Option<ModulePath> {
    let globs = &tree.modules.get(module)?.glob_reexports;
    globs.iter().find_map(|glob| {
        let source = resolve_reexport(tree, module, glob, depth)?;
        let defines = tree.modules.get(&source).is_some_and(|source| {
            source.children.contains(name)
                || source.items.contains(name)
                || source.reexports.contains_key(name)
        });
        defines.then_some(source)
    })
}

/// The strongly connected components of more than one module in `graph` (Tarjan's algorithm),
/// each sorted by name, in a stable order.
fn strongly_connected<'a>(graph: &BTreeMap<&'a str, BTreeSet<&'a str>>) -> Vec<Vec<&'a str>> {
    struct Search<'g, 'a> {
        graph: &'g BTreeMap<&'a str, BTreeSet<&'a str>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        components: Vec<Vec<&'a str>>,
    }

    impl<'a> Search<'_, 'a> {
        fn visit(&mut self, node: &'a str) {
            let order = self.index.len();
            self.index.insert(node, order);
            self.low.insert(node, order);
            self.stack.push(node);
            self.on_stack.insert(node);
            for &next in self.graph.get(node).into_iter().flatten() {
                if !self.index.contains_key(next) {
                    self.visit(next);
                    let low = self.low[node].min(self.low[next]);
                    self.low.insert(node, low);
                } else if self.on_stack.contains(next) {
                    let low = self.low[node].min(self.index[next]);
                    self.low.insert(node, low);
                }
            }
            if self.low[node] == self.index[node] {
                let mut component = Vec::new();
                while let Some(member) = self.stack.pop() {
                    self.on_stack.remove(member);
                    component.push(member);
                    if member == node {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort_unstable();
                    self.components.push(component);
                }
            }
        }
    }

    let mut search = Search {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        components: Vec::new(),
    };
    for &node in graph.keys() {
        if !search.index.contains_key(node) {
            search.visit(node);
        }
    }
    search.components.sort();
    search.components
}

/// The violation for one cycle: located at its first edge's reference, naming every edge.
fn cycle_violation(
    parent: &ModulePath,
    cycle: &[&str],
    edges: &BTreeMap<Edge, &Reference>,
) -> Violation {
    let members: BTreeSet<&str> = cycle.iter().copied().collect();
    let inside: Vec<(&Edge, &&Reference)> = edges
        .iter()
        .filter(|((edge_parent, from, to), _)| {
            edge_parent == parent
                && members.contains(from.as_str())
                && members.contains(to.as_str())
        })
        .collect();
    let described: Vec<String> = inside
        .iter()
        .map(|((_, from, to), reference)| {
            format!(
                "{from} -> {to} ({}:{} `{}`)",
                display_path(&reference.file),
                reference.line,
                reference.segments.join("::")
            )
        })
        .collect();
    let under = if parent.is_empty() {
        "the crate root".to_owned()
    } else {
        format!("`{}`", parent.join("::"))
    };
    let (file, line) = inside
        .first()
        .map_or((PathBuf::new(), 1), |(_, reference)| {
            (reference.file.clone(), reference.line)
        });
    Violation::new(
        file,
        line,
        format!(
            "module cycle under {under} between {}: {}; give what they share a home both can \
             depend on, so the modules read in one direction",
            cycle.join(", "),
            described.join(", ")
        ),
    )
}
