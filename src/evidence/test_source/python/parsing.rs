//! A Python file's bytes made a tree as Python reads them: the source encoding it declares,
//! and a parse that reads its comment-only lines as blank (tree-sitter is slow on long runs).

use tree_sitter::Node;

/// The source encoding the first two lines of Python `text` declare (PEP 263's
/// `# -*- coding: NAME -*-`), with its 1-based line, when it is one guard does not read as
/// Python does. Python decodes the whole file from it before reading it, and guard reads
/// UTF-8: in UTF-7 `+AAo-` is a line feed, in Shift JIS `\x83\x5c` is one character whose
/// second byte is a backslash, so a `return` or a string's end that Python reads is not
/// where guard reads one. UTF-8, ASCII and the ASCII-compatible single-byte encodings
/// (Latin-1, ISO 8859, Windows' code pages) read the same. Both lines are looked at
/// whatever the first holds: a declaration Python would not take refuses nothing it reads.
pub(crate) fn unread_encoding(text: &[u8]) -> Option<(String, usize)> {
    static DECLARATION: std::sync::OnceLock<regex::bytes::Regex> = std::sync::OnceLock::new();
    static READ_ALIKE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    // Compiled when a line names a coding at all: most test files declare none, and
    // compiling the two patterns costs more than judging a push of a hundred files.
    let declaration = || {
        DECLARATION.get_or_init(|| {
            regex::bytes::Regex::new(r"^[ \t\x0c]*#.*?coding[:=][ \t]*([-_.a-zA-Z0-9]+)")
                .expect("PEP 263's pattern compiles")
        })
    };
    let read_alike = || {
        READ_ALIKE.get_or_init(|| {
            regex::Regex::new(
                r"^(utf-?8(-.*)?|(us-)?ascii|646|latin-?[0-9]+|l[0-9]+|iso-?8859-[0-9]+|iso-latin-[0-9]+|cp(819|125[0-8])|windows-125[0-8])$",
            )
            .expect("the pattern compiles")
        })
    };
    let mut start = 0;
    for number in 1..=2 {
        let rest = text.get(start..)?;
        let len = memchr::memchr2(b'\n', b'\r', rest).unwrap_or(rest.len());
        let line = &rest[..len];
        let names_coding = memchr::memmem::find(line, b"coding").is_some();
        if let Some(name) = names_coding
            .then(|| declaration().captures(line))
            .flatten()
            .and_then(|c| c.get(1))
        {
            let name = String::from_utf8_lossy(name.as_bytes()).to_ascii_lowercase();
            let normal = name.replace('_', "-");
            return (!read_alike().is_match(&normal)).then_some((name, number));
        }
        start += len
            + if rest[len..].starts_with(b"\r\n") {
                2
            } else {
                1
            };
    }
    None
}

/// How many times `parse` parses with fewer lines read as blank before it parses the text
/// as it is.
const MASK_ROUNDS: usize = 4;

/// Parses Python `text`, its comment-only lines read as blank ones (they are, to Python's
/// tokenizer, and no comment is read here). tree-sitter-python's scanner looks past every
/// comment line that follows a line end, to the next line of code, to decide whether the
/// block ends there; it does so at each of them, so a run of comment lines cost its length
/// squared (BENCHMARKS.md, "Measured choices", M9).
///
/// A line is taken for a comment only if it still is in the parse: a line that starts with
/// `#` may be inside a triple-quoted string. The lines read as blank are the same length,
/// so every node spans the same bytes of `text` (and the same lines) as it would in the
/// text itself. The parse is kept when it has no error and none of those lines lies inside
/// a string: then, read from the start, the first such line begins outside any string in
/// the text itself too (the text before it is the same), so it is a comment there, which
/// Python reads as a blank line, and so on for the next. Lines found inside strings are
/// read as they are and the text parsed again; after `MASK_ROUNDS`, or on a parse error,
/// the text is parsed as it is.
///
/// Below `MASK_FROM_LINES` comment lines the text is parsed as it is: they cost little.
/// Either way a line that ends in a carriage return alone ends there (`lf_line_ends`).
pub(crate) fn parse(parser: &mut tree_sitter::Parser, text: &[u8]) -> Option<tree_sitter::Tree> {
    parse_masked(parser, text, MASK_FROM_LINES)
}

/// Comment lines a Python file has before `parse` reads them as blank: a run of 64 lines of
/// 40 characters costs the scanner about 80,000 steps (a fraction of a millisecond).
const MASK_FROM_LINES: usize = 64;

/// `parse`, reading comment lines as blank from `from_lines` of them.
pub(crate) fn parse_masked(
    parser: &mut tree_sitter::Parser,
    text: &[u8],
    from_lines: usize,
) -> Option<tree_sitter::Tree> {
    let text = &lf_line_ends(text);
    let mut blank = comment_lines(text);
    if blank.len() < from_lines {
        blank.clear();
    }
    for _ in 0..MASK_ROUNDS {
        if blank.is_empty() {
            break;
        }
        let mut masked = text.to_vec();
        for line in &blank {
            masked[line.clone()].fill(b' ');
        }
        let tree = parser.parse(&masked, None)?;
        let root = tree.root_node();
        if root.has_error() {
            break;
        }
        let before = blank.len();
        blank.retain(|line| !inside_string(root, line.start));
        if blank.len() == before {
            return Some(tree);
        }
    }
    parser.parse(text, None)
}

/// `text` with each carriage return that ends a line alone (the old Macintosh line end, which
/// Python reads as one, and tree-sitter's grammar does not) made a line feed: the same
/// length, so every node spans the same bytes of `text`. Python reads a carriage return
/// inside a string as a line feed too.
fn lf_line_ends(text: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    let lone = |at: usize| text.get(at + 1) != Some(&b'\n');
    if !memchr::memchr_iter(b'\r', text).any(lone) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut lf = text.to_vec();
    for at in memchr::memchr_iter(b'\r', text).filter(|&at| lone(at)) {
        lf[at] = b'\n';
    }
    std::borrow::Cow::Owned(lf)
}

/// The byte ranges of the comments that fill a line of `text` (from the `#` to the line's
/// end, without `\r`), past its indentation; not on a line that a backslash continues.
fn comment_lines(text: &[u8]) -> Vec<std::ops::Range<usize>> {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut continued = false;
    while start < text.len() {
        let end = memchr::memchr(b'\n', &text[start..]).map_or(text.len(), |at| start + at);
        let line = &text[start..end];
        let content = line.strip_suffix(b"\r").unwrap_or(line);
        let indent = content
            .iter()
            .take_while(|b| matches!(b, b' ' | b'\t' | b'\x0c'))
            .count();
        if !continued && content.get(indent) == Some(&b'#') {
            lines.push(start + indent..start + content.len());
        }
        continued = content.ends_with(b"\\");
        start = end + 1;
    }
    lines
}

/// Whether the byte at `at` lies inside a string literal of the tree under `root`.
fn inside_string(root: Node, at: usize) -> bool {
    let mut node = root.descendant_for_byte_range(at, at + 1);
    while let Some(n) = node {
        if n.kind() == "string" {
            return true;
        }
        node = n.parent();
    }
    false
}
