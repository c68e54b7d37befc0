//! Declarations a header set offers to kernels, read with libclang and reduced to comparable text:
//! each is a qualified name, a kind and a signature built from canonical types (so `uint32_t` and
//! `std::uint32_t` compare equal, and template parameters compare by position), with default
//! arguments compared by their source tokens.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use clang::source::SourceRange;
use clang::token::TokenKind;
use clang::{Accessibility, Entity, EntityKind, TranslationUnit};

/// What a declaration is; two declarations match only when kind, name and signature agree.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    Function,
    Type,
    Field,
    EnumValue,
    Variable,
    Macro,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Function => "function",
            Kind::Type => "type",
            Kind::Field => "field",
            Kind::EnumValue => "enum value",
            Kind::Variable => "variable",
            Kind::Macro => "macro",
        }
    }
}

/// One declaration: `name` is qualified (`tt::CBIndex::c_0`, `InterleavedAddrGen::get_noc_addr`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Decl {
    pub kind: Kind,
    pub name: String,
    pub signature: String,
    /// Where it is declared; `<command line>` for a define the JIT passes.
    pub file: PathBuf,
    pub line: u32,
}

/// Every declaration of `tu` in a file `keep` accepts (command-line defines are offered as
/// `<command line>`), outside the namespaces and names `hidden` rejects.
pub fn extract(
    tu: &TranslationUnit,
    keep: &dyn Fn(&Path) -> bool,
    hidden: &dyn Fn(&str) -> bool,
) -> Vec<Decl> {
    let mut out = BTreeSet::new();
    let mut walker = Walker {
        keep,
        hidden,
        out: &mut out,
    };
    walker.scope(tu.get_entity(), "");
    out.into_iter().collect()
}

struct Walker<'a> {
    keep: &'a dyn Fn(&Path) -> bool,
    hidden: &'a dyn Fn(&str) -> bool,
    out: &'a mut BTreeSet<Decl>,
}

impl Walker<'_> {
    /// Declarations directly in a namespace (or the translation unit), recursing into namespaces.
    fn scope(&mut self, parent: Entity, prefix: &str) {
        for child in parent.get_children() {
            let kind = child.get_kind();
            match kind {
                EntityKind::Namespace => {
                    if let Some(name) = child.get_name() {
                        if !(self.hidden)(&name) {
                            self.scope(child, &format!("{prefix}{name}::"));
                        }
                    }
                }
                EntityKind::LinkageSpec | EntityKind::UnexposedDecl => self.scope(child, prefix),
                _ => self.declaration(child, prefix),
            }
        }
    }

    fn declaration(&mut self, entity: Entity, prefix: &str) {
        let Some(name) = entity.get_name() else {
            return;
        };
        if (self.hidden)(&name) {
            return;
        }
        let Some((file, line)) = self.location(entity) else {
            return;
        };
        let qualified = format!("{prefix}{name}");
        let mut push = |kind: Kind, signature: String| {
            self.out.insert(Decl {
                kind,
                name: qualified.clone(),
                signature,
                file: file.clone(),
                line,
            });
        };
        match entity.get_kind() {
            EntityKind::FunctionDecl | EntityKind::FunctionTemplate | EntityKind::Method => {
                push(Kind::Function, function_signature(entity))
            }
            EntityKind::StructDecl | EntityKind::ClassDecl | EntityKind::ClassTemplate
                if entity.is_definition() =>
            {
                push(
                    Kind::Type,
                    format!("{}{}", template_signature(entity), record_keyword(entity)),
                );
                self.members(entity, &format!("{qualified}::"));
            }
            EntityKind::EnumDecl => {
                let underlying = entity
                    .get_enum_underlying_type()
                    .map(canonical)
                    .unwrap_or_default();
                let scoped = if entity.is_scoped() {
                    "enum class"
                } else {
                    "enum"
                };
                push(Kind::Type, format!("{scoped} : {underlying}"));
                for value in entity.get_children() {
                    if let (Some(value_name), Some((number, _))) =
                        (value.get_name(), value.get_enum_constant_value())
                    {
                        if let Some((value_file, value_line)) = self.location(value) {
                            self.out.insert(Decl {
                                kind: Kind::EnumValue,
                                name: format!("{qualified}::{value_name}"),
                                signature: format!("= {number}"),
                                file: value_file,
                                line: value_line,
                            });
                        }
                    }
                }
            }
            EntityKind::TypedefDecl | EntityKind::TypeAliasDecl => {
                let target = entity
                    .get_typedef_underlying_type()
                    .map(canonical)
                    .unwrap_or_default();
                push(Kind::Type, format!("= {target}"));
            }
            EntityKind::VarDecl => push(
                Kind::Variable,
                entity.get_type().map(canonical).unwrap_or_default(),
            ),
            EntityKind::FieldDecl => push(
                Kind::Field,
                entity.get_type().map(canonical).unwrap_or_default(),
            ),
            EntityKind::MacroDefinition if !entity.is_builtin_macro() => {
                push(Kind::Macro, macro_signature(entity))
            }
            _ => {}
        }
    }

    /// The public members of a struct or class.
    fn members(&mut self, record: Entity, prefix: &str) {
        let default_public = record.get_kind() != EntityKind::ClassDecl;
        for member in record.get_children() {
            let public = match member.get_accessibility() {
                Some(access) => access == Accessibility::Public,
                None => default_public,
            };
            if public {
                self.declaration(member, prefix);
            }
        }
    }

    /// The file and line of `entity`, if it is kept; `None` for files the walker skips.
    fn location(&self, entity: Entity) -> Option<(PathBuf, u32)> {
        match entity.get_location() {
            Some(location) => {
                let spot = location.get_file_location();
                match spot.file {
                    Some(file) => {
                        let path = file.get_path();
                        (self.keep)(&path).then_some((path, spot.line))
                    }
                    None => (self.keep)(Path::new("<command line>"))
                        .then(|| (PathBuf::from("<command line>"), 0)),
                }
            }
            None => None,
        }
    }
}

fn canonical(ty: clang::Type) -> String {
    ty.get_canonical_type().get_display_name()
}

/// A by-value parameter's top-level `const` is not part of a function's type ([dcl.fct]/5): it
/// changes nothing for a caller, so `const uint32_t n` and `uint32_t n` compare equal.
fn without_top_level_const(ty: String) -> String {
    match ty.strip_prefix("const ") {
        Some(rest) if !ty.contains('&') && !ty.contains('*') => rest.to_string(),
        _ => ty,
    }
}

fn record_keyword(entity: Entity) -> &'static str {
    match entity.get_kind() {
        EntityKind::ClassDecl => "class",
        EntityKind::ClassTemplate => "class or struct",
        _ => "struct",
    }
}

/// `template <...> (params) -> result [const]`, or without the template part for a plain function.
fn function_signature(entity: Entity) -> String {
    let params: Vec<String> = entity
        .get_children()
        .into_iter()
        .filter(|child| child.get_kind() == EntityKind::ParmDecl)
        .map(|param| {
            let ty = param
                .get_type()
                .map(canonical)
                .map(without_top_level_const)
                .unwrap_or_default();
            match default_tokens(param) {
                Some(default) => format!("{ty} = {default}"),
                None => ty,
            }
        })
        .collect();
    let result = entity.get_result_type().map(canonical).unwrap_or_default();
    let constness = if entity.is_const_method() {
        " const"
    } else {
        ""
    };
    format!(
        "{}({}) -> {result}{constness}",
        template_signature(entity),
        params.join(", ")
    )
}

/// `template <typename, bool = false> ` for a template, empty otherwise.
fn template_signature(entity: Entity) -> String {
    let params: Vec<String> = entity
        .get_children()
        .into_iter()
        .filter_map(|child| {
            let head = match child.get_kind() {
                EntityKind::TemplateTypeParameter => "typename".to_string(),
                EntityKind::NonTypeTemplateParameter => {
                    child.get_type().map(canonical).unwrap_or_default()
                }
                EntityKind::TemplateTemplateParameter => "template".to_string(),
                _ => return None,
            };
            Some(match default_tokens(child) {
                Some(default) => format!("{head} = {default}"),
                None => head,
            })
        })
        .collect();
    if matches!(
        entity.get_kind(),
        EntityKind::FunctionTemplate | EntityKind::ClassTemplate
    ) {
        format!("template <{}> ", params.join(", "))
    } else {
        String::new()
    }
}

/// The source tokens after the `=` of a parameter, joined without spaces; `None` without a default.
/// Tokens are read where they are spelled, so a parameter written inside a macro body (the
/// stand-in generates families of functions with macros) reads as written there.
fn default_tokens(param: Entity) -> Option<String> {
    let range = param.get_range()?;
    let start = range.get_start().get_spelling_location();
    let end = range.get_end().get_spelling_location();
    let file = start.file?;
    if end.file != Some(file) {
        return None;
    }
    let tokens = SourceRange::new(
        file.get_location(start.line, start.column),
        file.get_location(end.line, end.column),
    )
    .tokenize();
    let mut depth = 0i32;
    let mut start = None;
    for (index, token) in tokens.iter().enumerate() {
        let spelling = token.get_spelling();
        match spelling.as_str() {
            "<" | "(" | "[" | "{" => depth += 1,
            ">" | ")" | "]" | "}" => depth -= 1,
            "=" if depth == 0 && token.get_kind() == TokenKind::Punctuation => {
                start = Some(index + 1);
                break;
            }
            _ => {}
        }
    }
    let start = start?;
    Some(
        tokens[start..]
            .iter()
            .map(|token| token.get_spelling())
            .collect::<Vec<_>>()
            .join(""),
    )
}

/// `(a, b)` for a function-like macro, `object-like` otherwise.
fn macro_signature(entity: Entity) -> String {
    if !entity.is_function_like_macro() {
        return "object-like".to_string();
    }
    let Some(range) = entity.get_range() else {
        return "()".to_string();
    };
    let tokens: Vec<String> = range
        .tokenize()
        .iter()
        .map(|token| token.get_spelling())
        .collect();
    let end = tokens
        .iter()
        .position(|token| token == ")")
        .unwrap_or(tokens.len());
    let params: Vec<&str> = tokens
        .iter()
        .take(end)
        .skip(2)
        .map(String::as_str)
        .filter(|token| *token != ",")
        .collect();
    format!("({})", params.join(", "))
}
