//! The crate's modules depend one way (crate docs, "Pipeline"): every `crate::<module>` path in a
//! module's code (its tests left out) names a module of an earlier layer of [`LAYERS`], so the
//! stages plan → lower → check → render → program are the shape of the code and no two modules
//! import each other.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use proc_macro2::{Delimiter, TokenStream, TokenTree};
use quote::ToTokens;

/// The top-level modules, each depending only on modules before it.
const LAYERS: &[&str] = &[
    "device",
    "layout",
    "plan",
    "kir",
    "multicast",
    "ops",
    "arena",
    "lower",
    "staging",
    "dispatch",
    "check",
    "render",
    "program",
    "emit",
    "summary",
    "runner",
    "report",
    "phases",
    "model",
    "variants",
];

/// Whether `attrs` hold `#[cfg(test)]`.
fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs
        .iter()
        .any(|a| a.path().is_ident("cfg") && a.meta.to_token_stream().to_string().contains("test"))
}

/// The first identifier of each comma-separated item of a `{ ... }` use group.
fn group_heads(stream: TokenStream, out: &mut BTreeSet<String>) {
    let mut at_start = true;
    for tree in stream {
        match &tree {
            TokenTree::Ident(ident) if at_start => {
                out.insert(ident.to_string());
                at_start = false;
            }
            TokenTree::Punct(p) if p.as_char() == ',' => at_start = true,
            _ => at_start = false,
        }
    }
}

/// The modules named by `crate::<module>` paths anywhere in `stream`.
fn crate_paths(stream: TokenStream, out: &mut BTreeSet<String>) {
    let trees: Vec<TokenTree> = stream.into_iter().collect();
    for (i, tree) in trees.iter().enumerate() {
        match tree {
            TokenTree::Group(g) => crate_paths(g.stream(), out),
            TokenTree::Ident(ident) if ident == "crate" => {
                let colons = trees[i + 1..]
                    .iter()
                    .take(2)
                    .all(|t| matches!(t, TokenTree::Punct(p) if p.as_char() == ':'));
                match trees.get(i + 3) {
                    Some(TokenTree::Ident(module)) if colons => {
                        out.insert(module.to_string());
                    }
                    Some(TokenTree::Group(g)) if colons && g.delimiter() == Delimiter::Brace => {
                        group_heads(g.stream(), out)
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
}

/// The modules one source file's code (not its tests) names through `crate::`.
fn dependencies(source: &str) -> Result<BTreeSet<String>, syn::Error> {
    let mut file = syn::parse_file(source)?;
    file.items.retain(|item| match item {
        syn::Item::Mod(m) => !is_test(&m.attrs),
        syn::Item::Fn(f) => !is_test(&f.attrs),
        _ => true,
    });
    let mut out = BTreeSet::new();
    crate_paths(file.into_token_stream(), &mut out);
    Ok(out)
}

/// Every edge `(from, to)` between top-level modules that breaks the order of `layers`, and
/// every module missing from it, given each module's sources.
fn violations(
    modules: &BTreeMap<String, Vec<String>>,
    layers: &[&str],
) -> Result<Vec<String>, syn::Error> {
    let rank = |m: &str| layers.iter().position(|l| *l == m);
    let mut found = Vec::new();
    for (module, sources) in modules {
        let Some(own) = rank(module) else {
            found.push(format!("`{module}` is not in LAYERS"));
            continue;
        };
        let mut deps = BTreeSet::new();
        for source in sources {
            deps.extend(dependencies(source)?);
        }
        for dep in deps.iter().filter(|d| *d != module) {
            match rank(dep) {
                Some(r) if r < own => {}
                Some(_) => found.push(format!("`{module}` uses `{dep}`, a later layer")),
                None => found.push(format!("`{module}` uses `{dep}`, which is not in LAYERS")),
            }
        }
    }
    Ok(found)
}

/// The sources under `src/`, by top-level module (`lib.rs` and `main.rs` are the roots).
fn crate_modules() -> BTreeMap<String, Vec<String>> {
    fn walk(dir: &Path, module: Option<&str>, out: &mut BTreeMap<String, Vec<String>>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .expect("reads src/")
            .flatten()
            .map(|e| e.path())
            .collect();
        entries.sort();
        for path in entries {
            let stem = path
                .file_stem()
                .and_then(|s| s.to_str())
                .expect("a UTF-8 file name")
                .to_string();
            let owner = module.map_or(stem.clone(), str::to_string);
            if path.is_dir() {
                walk(&path, Some(&owner), out);
            } else if path.extension().is_some_and(|e| e == "rs")
                && !(module.is_none() && (stem == "lib" || stem == "main"))
            {
                let text = std::fs::read_to_string(&path).expect("reads a source file");
                out.entry(owner).or_default().push(text);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        None,
        &mut out,
    );
    out
}

#[test]
fn modules_depend_only_on_earlier_layers() {
    let modules = crate_modules();
    assert!(modules.contains_key("plan") && modules.contains_key("ops"));
    let found = violations(&modules, LAYERS).expect("the sources parse");
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// The checker finds `crate::` paths in `use` groups and in expressions, ignores comments and
/// tests, and reports an upward edge and a module it does not know.
#[test]
fn the_checker_catches_an_upward_edge() {
    let source = |text: &str| vec![text.to_string()];
    let modules = BTreeMap::from([
        (
            "kir".to_string(),
            source(
                "//! Not a dependency: crate::ops.\n\
                 use crate::{device::Core, plan::{NodePlan}};\n\
                 fn f() -> u32 { crate::ops::N }\n\
                 #[cfg(test)] mod tests { use crate::lower::lower; }",
            ),
        ),
        ("plan".to_string(), source("use crate::device::Core;")),
        ("extra".to_string(), source("")),
    ]);
    let found = violations(&modules, LAYERS).expect("parses");
    assert_eq!(
        found,
        vec![
            "`extra` is not in LAYERS".to_string(),
            "`kir` uses `ops`, a later layer".to_string(),
        ]
    );
    let deps = dependencies("use crate::{device::Core, plan::{NodePlan}};").expect("parses");
    assert_eq!(
        deps,
        BTreeSet::from(["device".to_string(), "plan".to_string()])
    );
}
