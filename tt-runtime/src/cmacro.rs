//! Object-like C macros of a header, and the integer value of one: enough of the preprocessor to
//! read tt-metal's memory-map headers (`#define MEM_X (MEM_Y + 24 * 1024)`), which define sizes
//! through chains of other macros. Comments and line continuations are handled; conditionals and
//! function-like macros are not (a function-like macro is not recorded, so using one is an
//! undefined name).

use std::collections::BTreeMap;

/// Why a macro has no integer value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MacroError {
    #[error("`{0}` is not defined")]
    Undefined(String),
    #[error("`{0}` is defined in terms of itself")]
    Cycle(String),
    #[error("cannot parse `{text}`: {why}")]
    Syntax { text: String, why: String },
    #[error("`{0}` overflows or divides by zero")]
    Arithmetic(String),
}

/// Replaces `//` and `/* */` comments by a space (string literals are not special-cased: the
/// headers read here have none that hold comment markers).
pub fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find('/') {
        out.push_str(&rest[..i]);
        let after = &rest[i..];
        if after.starts_with("//") {
            let end = after.find('\n').unwrap_or(after.len());
            out.push(' ');
            rest = &after[end..];
        } else if let Some(body) = after.strip_prefix("/*") {
            out.push(' ');
            rest = body.find("*/").map_or("", |end| &body[end + 2..]);
        } else {
            out.push('/');
            rest = &after[1..];
        }
    }
    out.push_str(rest);
    out
}

/// The object-like `#define`s of a header, by name (a later definition wins, as it would after
/// an `#undef`).
#[derive(Debug, Clone, Default)]
pub struct Defines {
    bodies: BTreeMap<String, String>,
}

impl Defines {
    /// Collects the object-like macros of `text`.
    pub fn parse(text: &str) -> Defines {
        let joined = strip_comments(&text.replace("\\\r\n", " ").replace("\\\n", " "));
        let mut bodies = BTreeMap::new();
        for line in joined.lines() {
            let Some(rest) = line.trim_start().strip_prefix('#') else {
                continue;
            };
            let Some(rest) = rest.trim_start().strip_prefix("define") else {
                continue;
            };
            if !rest.starts_with([' ', '\t']) {
                continue;
            }
            let rest = rest.trim_start();
            let name_len = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            let (name, body) = rest.split_at(name_len);
            if name.is_empty() || body.starts_with('(') {
                continue;
            }
            bodies.insert(name.to_string(), body.trim().to_string());
        }
        Defines { bodies }
    }

    /// The integer value of macro `name`, its body expanded and evaluated.
    pub fn evaluate(&self, name: &str) -> Result<u64, MacroError> {
        let value = self.value(name, &mut Vec::new())?;
        u64::try_from(value).map_err(|_| MacroError::Arithmetic(name.to_string()))
    }

    fn value(&self, name: &str, expanding: &mut Vec<String>) -> Result<i64, MacroError> {
        if expanding.iter().any(|n| n == name) {
            return Err(MacroError::Cycle(name.to_string()));
        }
        let body = self
            .bodies
            .get(name)
            .ok_or_else(|| MacroError::Undefined(name.to_string()))?;
        expanding.push(name.to_string());
        let tokens = tokenize(body)?;
        let mut parser = Parser {
            defines: self,
            expanding,
            tokens: &tokens,
            at: 0,
            text: body,
        };
        let v = parser.expression(0)?;
        if parser.at != tokens.len() {
            return Err(parser.syntax("trailing tokens"));
        }
        expanding.pop();
        Ok(v)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Number(i64),
    Name(String),
    Op(&'static str),
}

const OPS: [&str; 13] = [
    "<<", ">>", "+", "-", "*", "/", "%", "&", "|", "^", "~", "(", ")",
];

fn tokenize(text: &str) -> Result<Vec<Token>, MacroError> {
    let syntax = |why: String| MacroError::Syntax {
        text: text.to_string(),
        why,
    };
    let mut out = Vec::new();
    let mut rest = text.trim_start();
    while !rest.is_empty() {
        let first = rest.chars().next().unwrap_or(' ');
        let len = if first.is_ascii_digit() {
            let len = rest
                .find(|c: char| !c.is_ascii_alphanumeric())
                .unwrap_or(rest.len());
            let literal = rest[..len].trim_end_matches(['u', 'U', 'l', 'L']);
            let value = match literal.strip_prefix("0x").or(literal.strip_prefix("0X")) {
                Some(hex) => i64::from_str_radix(hex, 16),
                None => literal.parse(),
            }
            .map_err(|_| syntax(format!("bad number `{}`", &rest[..len])))?;
            out.push(Token::Number(value));
            len
        } else if first.is_ascii_alphabetic() || first == '_' {
            let len = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            out.push(Token::Name(rest[..len].to_string()));
            len
        } else if let Some(op) = OPS.into_iter().find(|op| rest.starts_with(op)) {
            out.push(Token::Op(op));
            op.len()
        } else {
            return Err(syntax(format!("unexpected `{first}`")));
        };
        rest = rest[len..].trim_start();
    }
    Ok(out)
}

/// Binary operators by precedence, loosest first (C's order).
const LEVELS: [&[&str]; 6] = [
    &["|"],
    &["^"],
    &["&"],
    &["<<", ">>"],
    &["+", "-"],
    &["*", "/", "%"],
];

struct Parser<'a> {
    defines: &'a Defines,
    expanding: &'a mut Vec<String>,
    tokens: &'a [Token],
    at: usize,
    text: &'a str,
}

impl Parser<'_> {
    fn syntax(&self, why: &str) -> MacroError {
        MacroError::Syntax {
            text: self.text.to_string(),
            why: why.to_string(),
        }
    }

    fn arithmetic(&self) -> MacroError {
        MacroError::Arithmetic(self.text.to_string())
    }

    fn peek_op(&self) -> Option<&'static str> {
        match self.tokens.get(self.at) {
            Some(Token::Op(op)) => Some(op),
            _ => None,
        }
    }

    fn expression(&mut self, level: usize) -> Result<i64, MacroError> {
        let Some(ops) = LEVELS.get(level) else {
            return self.unary();
        };
        let mut left = self.expression(level + 1)?;
        while let Some(op) = self.peek_op().filter(|op| ops.contains(op)) {
            self.at += 1;
            let right = self.expression(level + 1)?;
            left = match op {
                "|" => Some(left | right),
                "^" => Some(left ^ right),
                "&" => Some(left & right),
                "<<" => u32::try_from(right).ok().and_then(|r| left.checked_shl(r)),
                ">>" => u32::try_from(right).ok().and_then(|r| left.checked_shr(r)),
                "+" => left.checked_add(right),
                "-" => left.checked_sub(right),
                "*" => left.checked_mul(right),
                "/" => left.checked_div(right),
                _ => left.checked_rem(right),
            }
            .ok_or_else(|| self.arithmetic())?;
        }
        Ok(left)
    }

    fn unary(&mut self) -> Result<i64, MacroError> {
        match self.tokens.get(self.at).cloned() {
            Some(Token::Op("-")) => {
                self.at += 1;
                self.unary()?.checked_neg().ok_or_else(|| self.arithmetic())
            }
            Some(Token::Op("+")) => {
                self.at += 1;
                self.unary()
            }
            Some(Token::Op("~")) => {
                self.at += 1;
                Ok(!self.unary()?)
            }
            Some(Token::Op("(")) => {
                self.at += 1;
                let v = self.expression(0)?;
                if self.peek_op() != Some(")") {
                    return Err(self.syntax("missing `)`"));
                }
                self.at += 1;
                Ok(v)
            }
            Some(Token::Number(v)) => {
                self.at += 1;
                Ok(v)
            }
            Some(Token::Name(name)) => {
                self.at += 1;
                self.defines.value(&name, self.expanding)
            }
            Some(Token::Op(op)) => Err(self.syntax(&format!("unexpected `{op}`"))),
            None => Err(self.syntax("expression ends early")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(text: &str, name: &str) -> Result<u64, MacroError> {
        Defines::parse(text).evaluate(name)
    }

    #[test]
    fn chains_of_macros_evaluate_with_c_precedence() {
        let text = "\
#define A (24 * 1024)
#define B A
#  define C (B + 16 * 2) // comment
#define D ((C + 31) & ~31)
#define E 0x7CE00U
#define F (1 << 4 | 2)
#define G(x) (x + 1)
";
        assert_eq!(eval(text, "B"), Ok(24576));
        assert_eq!(eval(text, "C"), Ok(24608));
        assert_eq!(eval(text, "D"), Ok(24608));
        assert_eq!(eval(text, "E"), Ok(0x7CE00));
        assert_eq!(eval(text, "F"), Ok(18));
        assert_eq!(eval(text, "G"), Err(MacroError::Undefined("G".into())));
    }

    #[test]
    fn continuations_and_block_comments_are_joined() {
        let text = "#define A \\\n    (3 /* three */ * \\\n 5)\n/* #define A 1 */\n";
        assert_eq!(eval(text, "A"), Ok(15));
    }

    #[test]
    fn bad_bodies_are_typed_errors() {
        assert_eq!(
            eval("#define A B\n#define B A\n", "A"),
            Err(MacroError::Cycle("A".into()))
        );
        assert!(matches!(
            eval("#define A (1 + \n", "A"),
            Err(MacroError::Syntax { .. })
        ));
        assert!(matches!(
            eval("#define A 1 2\n", "A"),
            Err(MacroError::Syntax { .. })
        ));
        assert!(matches!(
            eval("#define A 12abc\n", "A"),
            Err(MacroError::Syntax { .. })
        ));
        assert!(matches!(
            eval("#define A (1 / 0)\n", "A"),
            Err(MacroError::Arithmetic(_))
        ));
        assert!(matches!(
            eval("#define A (0 - 1)\n", "A"),
            Err(MacroError::Arithmetic(_))
        ));
        assert!(matches!(
            eval("#define A \"x\"\n", "A"),
            Err(MacroError::Syntax { .. })
        ));
    }
}
