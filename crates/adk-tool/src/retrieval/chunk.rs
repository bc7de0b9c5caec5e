//! Cutting a document into chunks: sections at Markdown headings, paragraphs packed up to a size
//! limit with an overlap, each chunk kept as a byte range of its source with its line range.

use serde::Serialize;

/// Where a passage lies in its source: a byte range (`start` inclusive, `end` exclusive) and the
/// lines it covers (from 1, both inclusive). `&source[start..end]` is the passage's text exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Span {
    /// The offset of the passage's first byte.
    pub start: usize,
    /// The offset just past the passage's last byte.
    pub end: usize,
    /// The line of the first byte, from 1.
    pub start_line: usize,
    /// The line of the last byte, from 1.
    pub end_line: usize,
}

/// One chunk of a document as the chunker cut it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Piece {
    /// The chunk's place in the document.
    pub span: Span,
    /// The headings above the chunk, outermost first, joined by `" > "`; empty outside any.
    pub section: String,
}

/// How documents are cut: chunks of at most `max_bytes`, consecutive chunks of one section
/// sharing up to `overlap_bytes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ChunkOptions {
    pub max_bytes: usize,
    pub overlap_bytes: usize,
}

/// A run of the document that chunks are made of: a heading line or a paragraph (lines up to a
/// blank line; a fenced code block is one paragraph, blank lines and all).
#[derive(Debug, Clone, Copy)]
struct Block {
    start: usize,
    end: usize,
    /// The heading's level (1 to 6), for a heading line.
    heading: Option<usize>,
}

/// The chunks of `text`, in order. Headings start a new chunk, so no chunk spans two sections.
/// Paragraphs of a section are packed while the chunk stays within `max_bytes`; when one is full,
/// the next starts with its last paragraphs that fit in `overlap_bytes`, so a passage cut at a
/// chunk's end is whole in the next. A paragraph longer than `max_bytes` is cut at whitespace
/// into windows that overlap the same way. Every chunk is trimmed of surrounding whitespace.
pub(crate) fn chunk(text: &str, options: ChunkOptions) -> Vec<Piece> {
    let max = options.max_bytes.max(1);
    let overlap = options.overlap_bytes.min(max / 2);
    let lines = LineIndex::new(text);
    let mut pieces = Vec::new();
    let mut headings: Vec<(usize, &str)> = Vec::new();
    let mut section = String::new();
    let mut packed: Vec<(usize, usize)> = Vec::new();
    let emit = |start: usize, end: usize, section: &str, pieces: &mut Vec<Piece>| {
        pieces.push(Piece {
            span: lines.span(start, end),
            section: section.to_owned(),
        });
    };
    for block in blocks(text) {
        if let Some(level) = block.heading {
            if let Some(&(first, _)) = packed.first() {
                emit(first, packed[packed.len() - 1].1, &section, &mut pieces);
                packed.clear();
            }
            headings.retain(|&(outer, _)| outer < level);
            headings.push((level, heading_text(&text[block.start..block.end])));
            section = headings
                .iter()
                .map(|&(_, title)| title)
                .collect::<Vec<_>>()
                .join(" > ");
        }
        if block.end - block.start > max {
            if let Some(&(first, _)) = packed.first() {
                emit(first, packed[packed.len() - 1].1, &section, &mut pieces);
                packed.clear();
            }
            for (start, end) in windows(text, block.start, block.end, max, overlap) {
                emit(start, end, &section, &mut pieces);
            }
            continue;
        }
        if let Some(&(first, _)) = packed.first()
            && block.end - first > max
        {
            emit(first, packed[packed.len() - 1].1, &section, &mut pieces);
            let last_end = packed[packed.len() - 1].1;
            let keep_from = packed
                .iter()
                .position(|&(start, _)| last_end - start <= overlap && block.end - start <= max)
                .unwrap_or(packed.len());
            packed.drain(..keep_from);
        }
        packed.push((block.start, block.end));
    }
    if let Some(&(first, _)) = packed.first() {
        emit(first, packed[packed.len() - 1].1, &section, &mut pieces);
    }
    pieces
}

/// The heading lines and paragraphs of `text`, each trimmed of surrounding whitespace.
fn blocks(text: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut paragraph: Option<(usize, usize)> = None;
    let mut fence: Option<&str> = None;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let content = line.trim_end();
        let trimmed = content.trim_start();
        let end = start + content.len();
        let first_byte = start + (content.len() - trimmed.len());
        if let Some(marker) = fence {
            if trimmed.starts_with(marker) {
                fence = None;
            }
            extend(&mut paragraph, first_byte, end);
            continue;
        }
        if let Some(marker) = ["```", "~~~"].into_iter().find(|m| trimmed.starts_with(m)) {
            fence = Some(marker);
            extend(&mut paragraph, first_byte, end);
            continue;
        }
        if trimmed.is_empty() {
            blocks.extend(paragraph.take().map(|(start, end)| Block {
                start,
                end,
                heading: None,
            }));
            continue;
        }
        if let Some(level) = heading_level(trimmed) {
            blocks.extend(paragraph.take().map(|(start, end)| Block {
                start,
                end,
                heading: None,
            }));
            blocks.push(Block {
                start: first_byte,
                end,
                heading: Some(level),
            });
            continue;
        }
        extend(&mut paragraph, first_byte, end);
    }
    blocks.extend(paragraph.map(|(start, end)| Block {
        start,
        end,
        heading: None,
    }));
    blocks
}

/// Extends the paragraph being read to `end`, or starts one at `start`.
fn extend(paragraph: &mut Option<(usize, usize)>, start: usize, end: usize) {
    match paragraph {
        Some((_, last)) => *last = end,
        None => *paragraph = Some((start, end)),
    }
}

/// The level of a Markdown ATX heading (`#` to `######` followed by a space or nothing).
fn heading_level(line: &str) -> Option<usize> {
    let level = line.bytes().take_while(|&b| b == b'#').count();
    let rest = &line[level..];
    ((1..=6).contains(&level) && (rest.is_empty() || rest.starts_with([' ', '\t'])))
        .then_some(level)
}

/// A heading line's title, without its `#` marks.
fn heading_text(line: &str) -> &str {
    line.trim_start_matches('#')
        .trim()
        .trim_end_matches('#')
        .trim()
}

/// `text[start..end]` cut into windows of at most `max` bytes at whitespace (a word longer than
/// `max` is cut at a character boundary), each next window starting up to `overlap` bytes before
/// the previous one ended, at the start of a word.
fn windows(
    text: &str,
    start: usize,
    end: usize,
    max: usize,
    overlap: usize,
) -> Vec<(usize, usize)> {
    let mut windows = Vec::new();
    let mut from = start;
    loop {
        let mut to = (from + max).min(end);
        while !text.is_char_boundary(to) {
            to -= 1;
        }
        if to < end
            && let Some(space) = text[from..to]
                .rfind(char::is_whitespace)
                .filter(|&at| at > 0)
        {
            to = from + space;
        }
        if to <= from {
            // A single character longer than `max` bytes: take it whole.
            to = from + text[from..].chars().next().map_or(1, char::len_utf8);
        }
        let window_end = from + text[from..to].trim_end().len();
        windows.push((from, window_end));
        if to >= end {
            return windows;
        }
        // The next window starts at the first word that begins within the overlap, or right
        // after this one.
        let mut next = to.saturating_sub(overlap).max(from + 1);
        while !text.is_char_boundary(next) {
            next += 1;
        }
        next = if next < to {
            text[next..to]
                .find(char::is_whitespace)
                .map_or(to, |at| next + at)
        } else {
            to
        };
        next += text[next..end].len() - text[next..end].trim_start().len();
        if next >= end {
            return windows;
        }
        from = next;
    }
}

/// The offsets of the line starts of a text, to turn byte offsets into line numbers.
struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    fn new(text: &str) -> Self {
        let starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(at, _)| at + 1))
            .collect();
        Self { starts }
    }

    /// The line (from 1) of byte `offset`.
    fn line(&self, offset: usize) -> usize {
        self.starts.partition_point(|&start| start <= offset)
    }

    fn span(&self, start: usize, end: usize) -> Span {
        Span {
            start,
            end,
            start_line: self.line(start),
            end_line: self.line(end.saturating_sub(1).max(start)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(max_bytes: usize, overlap_bytes: usize) -> ChunkOptions {
        ChunkOptions {
            max_bytes,
            overlap_bytes,
        }
    }

    /// Every chunk's span holds its text exactly, within the limit, with the right lines, and no
    /// word of the text is left out of every chunk.
    fn check(text: &str, pieces: &[Piece], max: usize) {
        let mut covered = vec![false; text.len()];
        for piece in pieces {
            let Span {
                start,
                end,
                start_line,
                end_line,
            } = piece.span;
            let chunk = &text[start..end];
            assert!(!chunk.is_empty() && chunk.trim() == chunk, "{chunk:?}");
            assert!(chunk.len() <= max, "{} > {max}: {chunk:?}", chunk.len());
            assert_eq!(start_line, text[..start].matches('\n').count() + 1);
            assert_eq!(end_line, start_line + chunk.matches('\n').count());
            covered[start..end].iter_mut().for_each(|c| *c = true);
        }
        for (at, c) in text.char_indices() {
            assert!(
                c.is_whitespace() || covered[at],
                "byte {at} ({c:?}) is in no chunk"
            );
        }
    }

    #[test]
    fn headings_start_chunks_and_name_their_section() {
        let text = "# Guide\n\nIntro line.\n\n## Install\n\nRun the installer.\nThen restart.\n\n\
                    ## Use\n\nOpen the app.\n";
        let pieces = chunk(text, options(1_000, 100));
        check(text, &pieces, 1_000);
        let found: Vec<(&str, &str, usize, usize)> = pieces
            .iter()
            .map(|p| {
                let s = p.span;
                (
                    &text[s.start..s.end],
                    p.section.as_str(),
                    s.start_line,
                    s.end_line,
                )
            })
            .collect();
        assert_eq!(
            found,
            [
                ("# Guide\n\nIntro line.", "Guide", 1, 3),
                (
                    "## Install\n\nRun the installer.\nThen restart.",
                    "Guide > Install",
                    5,
                    8
                ),
                ("## Use\n\nOpen the app.", "Guide > Use", 10, 12),
            ]
        );
    }

    #[test]
    fn paragraphs_are_packed_to_the_limit_and_overlap() {
        let paragraphs: Vec<String> = (0..12)
            .map(|n| format!("Paragraph {n} says something short."))
            .collect();
        let text = paragraphs.join("\n\n");
        let pieces = chunk(&text, options(120, 60));
        check(&text, &pieces, 120);
        assert!(pieces.len() > 3);
        for pair in pieces.windows(2) {
            // Each chunk after the first starts with the last paragraph of the one before.
            assert!(pair[1].span.start < pair[0].span.end, "{pair:?}");
        }
        let without_overlap = chunk(&text, options(120, 0));
        check(&text, &without_overlap, 120);
        for pair in without_overlap.windows(2) {
            assert!(pair[1].span.start > pair[0].span.end);
        }
    }

    #[test]
    fn a_long_paragraph_is_cut_into_overlapping_windows_at_whitespace() {
        let text = format!("Title line\n\n{}", "wörd ".repeat(400).trim_end());
        let pieces = chunk(&text, options(200, 50));
        check(&text, &pieces, 200);
        for pair in pieces.windows(2).skip(1) {
            assert!(pair[1].span.start < pair[0].span.end);
            assert!(pair[0].span.end - pair[1].span.start <= 50);
        }
        // A word longer than the limit is cut at a character boundary.
        let word = "é".repeat(300);
        let pieces = chunk(&word, options(101, 10));
        check(&word, &pieces, 101);
    }

    #[test]
    fn fenced_code_stays_whole_and_its_hashes_are_no_headings() {
        let text = "Before.\n\n```sh\n# not a heading\n\nrun it\n```\n\nAfter.";
        let pieces = chunk(text, options(1_000, 0));
        check(text, &pieces, 1_000);
        assert_eq!(pieces.len(), 1);
        assert_eq!(pieces[0].section, "");
        let small = chunk(text, options(40, 0));
        check(text, &small, 40);
        assert!(small.iter().any(|p| {
            &text[p.span.start..p.span.end] == "```sh\n# not a heading\n\nrun it\n```"
        }));
    }

    #[test]
    fn empty_and_blank_texts_have_no_chunks_and_crlf_lines_count() {
        assert!(chunk("", options(100, 10)).is_empty());
        assert!(chunk(" \n\n\t\n", options(100, 10)).is_empty());
        let text = "a\r\nb\r\n\r\nc";
        let pieces = chunk(text, options(100, 0));
        check(text, &pieces, 100);
        assert_eq!(
            &text[pieces[0].span.start..pieces[0].span.end],
            "a\r\nb\r\n\r\nc"
        );
    }

    proptest::proptest! {
        #[test]
        fn any_text_is_covered_by_exact_spans(
            text in "([a-zé#` ]{0,12}(\n|\r\n)?){0,60}",
            max in 8usize..200,
            overlap in 0usize..100,
        ) {
            let pieces = chunk(&text, options(max, overlap));
            check(&text, &pieces, max.max(2));
        }
    }
}
