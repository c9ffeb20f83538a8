//! FITS header text for outputs: splitting header text into cards, formatting cards, and
//! provenance HISTORY cards.

use std::time::{SystemTime, UNIX_EPOCH};

/// Splits header text (80-character cards with or without newlines) into cards, trailing
/// blanks removed, stopping at `END`.
pub fn cards(text: &str) -> Vec<String> {
    let raw: Vec<&str> = if text.contains('\n') {
        text.lines().collect()
    } else {
        text.as_bytes()
            .chunks(80)
            .map(|c| std::str::from_utf8(c).unwrap_or(""))
            .collect()
    };
    let mut out = Vec::new();
    for card in raw {
        let card = card.trim_end_matches(['\r', ' ']);
        if keyword(card) == "END" {
            break;
        }
        if !card.trim().is_empty() {
            out.push(card.to_string());
        }
    }
    out
}

/// The keyword of a card (its first 8 characters, trailing blanks removed).
pub fn keyword(card: &str) -> &str {
    card.get(..card.len().min(8)).unwrap_or("").trim_end()
}

/// A fixed-format card with a numeric or logical value (right-aligned to column 30).
pub fn card(key: &str, value: impl std::fmt::Display, comment: &str) -> String {
    finish(format!("{key:<8}= {value:>20}"), comment)
}

/// A fixed-format card with a string value.
pub fn card_str(key: &str, value: &str, comment: &str) -> String {
    let quoted = format!("'{:<8}'", ascii(value).replace('\'', "''"));
    finish(format!("{key:<8}= {quoted:<20}"), comment)
}

/// A card with a float value in the shortest exact form (`1.5`, `-0.025`, `266.40499`).
pub fn card_f64(key: &str, value: f64, comment: &str) -> String {
    let mut v = format!("{value:?}");
    if v.contains('e') && !v.contains('.') {
        v = v.replacen('e', ".0E", 1);
    } else {
        v = v.replace('e', "E");
    }
    card(key, v, comment)
}

fn finish(mut s: String, comment: &str) -> String {
    if !comment.is_empty() && s.len() + 3 < 80 {
        s.push_str(" / ");
        s.push_str(&ascii(comment));
    }
    s.truncate(80);
    s.trim_end().to_string()
}

/// Printable ASCII only (others become `?`).
pub fn ascii(s: &str) -> String {
    s.chars()
        .map(|c| if (' '..='~').contains(&c) { c } else { '?' })
        .collect()
}

/// `HISTORY` cards carrying `text`, wrapped at spaces over as many cards as needed (a word
/// longer than a card is cut).
pub fn history(text: &str) -> Vec<String> {
    const WIDTH: usize = 72;
    let mut lines: Vec<String> = vec![String::new()];
    for word in ascii(text).split(' ').filter(|w| !w.is_empty()) {
        let mut word = word.to_string();
        loop {
            let line = lines.last_mut().expect("never empty");
            let room = WIDTH.saturating_sub(line.len() + usize::from(!line.is_empty()));
            if word.len() <= room {
                if !line.is_empty() {
                    line.push(' ');
                }
                line.push_str(&word);
                break;
            }
            if line.is_empty() {
                // Too long for any card: cut it.
                let rest = word.split_off(WIDTH);
                line.push_str(&word);
                word = rest;
            }
            lines.push(String::new());
        }
    }
    lines
        .into_iter()
        .filter(|l| !l.is_empty())
        .map(|l| format!("HISTORY {l}"))
        .collect()
}

/// The current UTC time as `YYYY-MM-DDThh:mm:ss`.
pub fn utc_now() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (days, rem) = ((secs / 86400) as i64, secs % 86400);
    let (y, m, d) = reproject::wcs::calendar::civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cards_from_both_layouts() {
        let a = format!(
            "{:<80}{:<80}{:<80}",
            "NAXIS   = 2", "CTYPE1  = 'RA---TAN'", "END"
        );
        assert_eq!(cards(&a), vec!["NAXIS   = 2", "CTYPE1  = 'RA---TAN'"]);
        let b = "NAXIS   = 2\r\nCTYPE1  = 'RA---TAN'\n\nEND\nJUNK\n";
        assert_eq!(cards(b), cards(&a));
    }

    #[test]
    fn card_formats() {
        assert_eq!(card("NAXIS", 2, "").len(), 30);
        assert_eq!(
            &card_f64("CDELT1", -0.025, "")[10..],
            "              -0.025"
        );
        assert!(card_f64("X", 1e-30, "").ends_with("1.0E-30"));
        assert_eq!(card_str("CTYPE1", "RA---TAN", ""), "CTYPE1  = 'RA---TAN'");
        assert!(card_str("OBJECT", "it's", "c").starts_with("OBJECT  = 'it''s   '"));
        let h = history(&"x".repeat(100));
        assert_eq!(h.len(), 2);
        let h = history(&format!("{} {}", "x".repeat(72), "y".repeat(3)));
        assert_eq!(h.len(), 2);
        assert!(h.iter().all(|c| c.len() <= 80));
        let h = history(&format!(
            "{} roundtrip_coords=True, {}",
            "a".repeat(60),
            "b".repeat(150)
        ));
        assert_eq!(
            h.iter().map(|c| c.len()).collect::<Vec<_>>(),
            [8 + 60, 8 + 22, 80, 80, 8 + 6]
        );
        assert_eq!(h[1], "HISTORY roundtrip_coords=True,");
        let now = utc_now();
        assert_eq!(now.len(), 19);
        assert!(now.starts_with("20"));
    }
}
