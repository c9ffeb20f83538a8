//! FITS header text: 80-character cards, with or without newlines, parsed into keyword values.
//!
//! Values are parsed leniently (a bad value in a keyword nobody asks for is not an error) and
//! checked strictly when the WCS reads them: [`Header::float`] reports a non-numeric or
//! non-finite value, [`Header::string`] a number where text is expected, and a keyword given
//! twice with different values is [`Error::DuplicateKeyword`].

use std::collections::HashMap;

use crate::error::{Error, Result};

/// The width of a FITS header card.
///
/// ```
/// use reproject::wcs::header::{Header, CARD_LEN};
/// assert_eq!(CARD_LEN, 80);
/// let text = format!("{:<80}{:<80}", "NAXIS   =                    2", "END");
/// assert_eq!(text.len(), 2 * CARD_LEN);
/// assert_eq!(Header::parse(&text)?.int("NAXIS")?, Some(2));
/// # Ok::<(), reproject::Error>(())
/// ```
pub const CARD_LEN: usize = 80;

/// A parsed card value.
///
/// ```
/// use reproject::wcs::header::{Header, Value};
/// let h = Header::parse("BUNIT = 'Jy/beam '\nCDELT1 = -1.5D-3\nSIMPLE = T\nNAXIS = 2\n")?;
/// assert_eq!(h.value("BUNIT")?, Some(&Value::Str("Jy/beam".into())));
/// assert_eq!(h.value("CDELT1")?, Some(&Value::Float(-1.5e-3)));
/// assert_eq!(h.value("SIMPLE")?, Some(&Value::Bool(true)));
/// assert_eq!(h.value("NAXIS")?, Some(&Value::Int(2)));
/// # Ok::<(), reproject::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A quoted string, trailing blanks removed.
    Str(String),
    /// An integer.
    Int(i64),
    /// A floating-point number (FITS `E` or `D` exponent).
    Float(f64),
    /// A logical `T` or `F`.
    Bool(bool),
    /// A keyword with an empty value field.
    Empty,
    /// A value field that is none of the above (kept verbatim, an error if the WCS needs it).
    Unparsed(String),
}

/// A FITS header: keyword → values in card order.
///
/// ```
/// use reproject::wcs::header::Header;
/// let h = Header::parse("CRVAL1  =               12.5 / RA\nCTYPE1  = 'RA---TAN'\nEND").unwrap();
/// assert_eq!(h.float("CRVAL1").unwrap(), Some(12.5));
/// assert_eq!(h.string("CTYPE1").unwrap().as_deref(), Some("RA---TAN"));
/// assert_eq!(h.float("CRVAL2").unwrap(), None);
/// ```
#[derive(Debug, Clone, Default)]
pub struct Header {
    /// (keyword, value, 1-based card number) in card order.
    cards: Vec<(String, Value, usize)>,
    /// keyword → indices into `cards`.
    index: HashMap<String, Vec<usize>>,
}

impl Header {
    /// Parses header text: cards separated by newlines, or concatenated 80-character cards as
    /// in a FITS file. Parsing stops at `END`.
    ///
    /// ```
    /// use reproject::wcs::header::Header;
    /// let lines = Header::parse("NAXIS1  = 100\nEND\nNAXIS2  = 50\n")?;
    /// assert!(lines.contains("NAXIS1") && !lines.contains("NAXIS2")); // stops at END
    /// let cards = format!("{:<80}{:<80}", "NAXIS1  =                  100", "END");
    /// assert_eq!(Header::parse(&cards)?.int("NAXIS1")?, Some(100));
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn parse(text: &str) -> Result<Header> {
        let mut header = Header::default();
        for (number, card) in split_cards(text)? {
            if card.trim_end() == "END" {
                break;
            }
            if let Some((keyword, value)) = parse_card(card, number)? {
                header.push(keyword, value, number);
            }
        }
        Ok(header)
    }

    fn push(&mut self, keyword: String, value: Value, number: usize) {
        self.index
            .entry(keyword.clone())
            .or_default()
            .push(self.cards.len());
        self.cards.push((keyword, value, number));
    }

    /// Whether the keyword is present.
    ///
    /// ```
    /// use reproject::wcs::header::Header;
    /// let h = Header::parse("CRVAL1  = 12.5\nCOMMENT CRVAL2 = 3\n")?;
    /// assert!(h.contains("CRVAL1"));
    /// assert!(!h.contains("CRVAL2")); // commentary cards have no value
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn contains(&self, keyword: &str) -> bool {
        self.index.contains_key(keyword)
    }

    /// All keywords, in card order (repeated keywords repeated).
    ///
    /// ```
    /// use reproject::wcs::header::Header;
    /// let h = Header::parse("NAXIS = 2\nHISTORY fixed\nNAXIS1 = 10\nNAXIS = 2\n")?;
    /// let keys: Vec<&str> = h.keywords().collect();
    /// assert_eq!(keys, ["NAXIS", "NAXIS1", "NAXIS"]); // repeats kept, HISTORY skipped
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn keywords(&self) -> impl Iterator<Item = &str> {
        self.cards.iter().map(|(k, _, _)| k.as_str())
    }

    /// The single value of a keyword; `Err(DuplicateKeyword)` when it is given more than once
    /// with different values.
    ///
    /// ```
    /// use reproject::{wcs::header::{Header, Value}, Error};
    /// let h = Header::parse("CRVAL1 = 1\nCRVAL1 = 1\nCRVAL2 = 1\nCRVAL2 = 2\n")?;
    /// assert_eq!(h.value("CRVAL1")?, Some(&Value::Int(1))); // repeated, but the same
    /// assert_eq!(h.value("CRVAL2"), Err(Error::DuplicateKeyword("CRVAL2".into())));
    /// assert_eq!(h.value("CRVAL3")?, None);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn value(&self, keyword: &str) -> Result<Option<&Value>> {
        let Some(indices) = self.index.get(keyword) else {
            return Ok(None);
        };
        let first = &self.cards[indices[0]].1;
        if indices.iter().any(|&i| &self.cards[i].1 != first) {
            return Err(Error::DuplicateKeyword(keyword.to_string()));
        }
        Ok(Some(first))
    }

    /// A numeric keyword as `f64`: must be a finite number if present.
    ///
    /// ```
    /// use reproject::wcs::header::Header;
    /// let h = Header::parse("CRPIX1 = 16\nCDELT1 = -2.5E-3\nCRVAL1 = 'abc'\nCRVAL2 = 1e999\n")?;
    /// assert_eq!(h.float("CRPIX1")?, Some(16.0)); // an integer card reads as a float
    /// assert_eq!(h.float("CDELT1")?, Some(-0.0025));
    /// assert!(h.float("CRVAL1").is_err()); // a string
    /// assert!(h.float("CRVAL2").is_err()); // not finite
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn float(&self, keyword: &str) -> Result<Option<f64>> {
        let invalid = |reason: &str| Error::InvalidValue {
            keyword: keyword.to_string(),
            reason: reason.to_string(),
        };
        match self.value(keyword)? {
            None => Ok(None),
            Some(Value::Int(i)) => Ok(Some(*i as f64)),
            Some(Value::Float(f)) if f.is_finite() => Ok(Some(*f)),
            Some(Value::Float(_)) => Err(invalid("not a finite number")),
            Some(Value::Empty) => Err(invalid("empty value")),
            Some(Value::Str(s)) => Err(invalid(&format!("expected a number, found '{s}'"))),
            Some(Value::Bool(_)) => Err(invalid("expected a number, found a logical")),
            Some(Value::Unparsed(s)) => Err(invalid(&format!("'{s}' is not a number"))),
        }
    }

    /// An integer keyword: must be a whole number if present.
    ///
    /// ```
    /// use reproject::wcs::header::Header;
    /// let h = Header::parse("NAXIS = 3\nNAXIS1 = 2048.0\nNAXIS2 = 2.5\n")?;
    /// assert_eq!(h.int("NAXIS")?, Some(3));
    /// assert_eq!(h.int("NAXIS1")?, Some(2048)); // a whole number written as a real
    /// assert!(h.int("NAXIS2").is_err());
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn int(&self, keyword: &str) -> Result<Option<i64>> {
        match self.value(keyword)? {
            Some(Value::Int(i)) => Ok(Some(*i)),
            Some(Value::Float(f)) if f.fract() == 0.0 && f.abs() < 9.0e15 => Ok(Some(*f as i64)),
            None => Ok(None),
            Some(_) => Err(Error::InvalidValue {
                keyword: keyword.to_string(),
                reason: "expected an integer".into(),
            }),
        }
    }

    /// A string keyword, trailing blanks removed.
    ///
    /// ```
    /// use reproject::wcs::header::Header;
    /// let h = Header::parse("OBJECT  = 'O''Brien  ' / quoted\nEQUINOX = 2000\n")?;
    /// assert_eq!(h.string("OBJECT")?.as_deref(), Some("O'Brien")); // '' is a quote
    /// assert!(h.string("EQUINOX").is_err()); // a number, not text
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn string(&self, keyword: &str) -> Result<Option<String>> {
        match self.value(keyword)? {
            None => Ok(None),
            Some(Value::Str(s)) => Ok(Some(s.clone())),
            Some(_) => Err(Error::InvalidValue {
                keyword: keyword.to_string(),
                reason: "expected a quoted string".into(),
            }),
        }
    }
}

impl Header {
    /// Every value of a keyword, in card order (none if absent): the cards of a
    /// record-valued keyword such as `DP1 = 'EXTVER: 1'`, `DP1 = 'AXIS.1: 1'`.
    ///
    /// ```
    /// use reproject::wcs::header::{Header, Value};
    /// let h = Header::parse("DP1 = 'EXTVER: 1'\nNAXIS = 2\nDP1 = 'AXIS.1: 1'\n")?;
    /// let values: Vec<&Value> = h.values("DP1").collect();
    /// assert_eq!(values, [&Value::Str("EXTVER: 1".into()), &Value::Str("AXIS.1: 1".into())]);
    /// assert_eq!(h.values("DP2").count(), 0);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn values(&self, keyword: &str) -> impl Iterator<Item = &Value> {
        let indices = self.index.get(keyword).map_or(&[][..], Vec::as_slice);
        indices.iter().map(|&i| &self.cards[i].1)
    }

    /// The header without the cards whose keyword `drop` selects.
    ///
    /// ```
    /// use reproject::wcs::header::Header;
    /// let h = Header::parse("CRVAL1 = 1\nDP1 = 'EXTVER: 1'\nCRVAL2 = 2\n")?;
    /// let kept = h.without(|k| k.starts_with("DP"));
    /// assert_eq!(kept.keywords().collect::<Vec<_>>(), ["CRVAL1", "CRVAL2"]);
    /// # Ok::<(), reproject::Error>(())
    /// ```
    pub fn without(&self, drop: impl Fn(&str) -> bool) -> Header {
        let mut kept = Header::default();
        for (keyword, value, number) in &self.cards {
            if !drop(keyword) {
                kept.push(keyword.clone(), value.clone(), *number);
            }
        }
        kept
    }
}

/// Cuts header text into numbered cards.
fn split_cards(text: &str) -> Result<Vec<(usize, &str)>> {
    let text = text.trim_end_matches(['\n', '\r', '\0']);
    if text.contains('\n') {
        return Ok(text
            .lines()
            .map(|l| l.trim_end_matches('\r'))
            .enumerate()
            .map(|(i, l)| (i + 1, l))
            .collect());
    }
    if !text.is_ascii() {
        return Err(Error::MalformedCard {
            card: 1,
            reason: "header text without newlines must be ASCII 80-character cards".into(),
        });
    }
    let mut cards = Vec::with_capacity(text.len() / CARD_LEN + 1);
    let mut rest = text;
    let mut number = 1;
    while !rest.is_empty() {
        let len = rest.len().min(CARD_LEN);
        let (card, tail) = rest.split_at(len);
        if len < CARD_LEN && !card.trim().is_empty() && card.trim_end() != "END" {
            return Err(Error::MalformedCard {
                card: number,
                reason: format!("truncated: {len} of {CARD_LEN} characters"),
            });
        }
        cards.push((number, card));
        rest = tail;
        number += 1;
    }
    Ok(cards)
}

/// Parses one card into (keyword, value); commentary cards and cards without a value
/// indicator give `None`.
fn parse_card(card: &str, number: usize) -> Result<Option<(String, Value)>> {
    let malformed = |reason: String| Error::MalformedCard {
        card: number,
        reason,
    };
    let not_a_keyword =
        |k: &str| malformed(format!("'{k}' is not a keyword (A-Z 0-9 - _, no blanks)"));
    if !card.is_ascii() {
        return Err(malformed("non-ASCII characters".into()));
    }
    if card.len() > CARD_LEN {
        return Err(malformed(format!(
            "{} characters, more than {CARD_LEN}",
            card.len()
        )));
    }
    let keyword = card[..card.len().min(8)].trim_end();
    if keyword.is_empty() || matches!(keyword, "COMMENT" | "HISTORY" | "CONTINUE" | "HIERARCH") {
        return Ok(None);
    }
    let field = if card.len() >= 10 && &card[8..10] == "= " {
        &card[10..]
    } else if card.len() == 9 && card.as_bytes()[8] == b'=' {
        // "KEYWORD =" cut short: an empty value.
        ""
    } else {
        // Hand-written text such as "CRVAL1 = 10.0": accept a valid keyword before an '='
        // within the first ten columns.
        match card.find('=').filter(|&p| p <= 9) {
            Some(p) if is_keyword(card[..p].trim()) => {
                let value = parse_value(&card[p + 1..]).map_err(malformed)?;
                return Ok(Some((card[..p].trim().to_string(), value)));
            }
            _ if !is_keyword(keyword) => return Err(not_a_keyword(keyword)),
            _ => return Ok(None),
        }
    };
    if !is_keyword(keyword) {
        return Err(not_a_keyword(keyword));
    }
    Ok(Some((
        keyword.to_string(),
        parse_value(field).map_err(malformed)?,
    )))
}

/// A FITS keyword: 1 to 8 characters of A-Z, 0-9, '-' and '_'.
fn is_keyword(k: &str) -> bool {
    !k.is_empty()
        && k.len() <= 8
        && k.bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
}

/// Parses a value field (everything after `= `), dropping the comment.
fn parse_value(field: &str) -> std::result::Result<Value, String> {
    let trimmed = field.trim_start();
    if let Some(rest) = trimmed.strip_prefix('\'') {
        // A string: '' is an escaped quote; the string ends at the first lone quote.
        let mut out = String::new();
        let mut chars = rest.chars().peekable();
        loop {
            match chars.next() {
                None => return Err("unterminated string".into()),
                Some('\'') if chars.peek() == Some(&'\'') => {
                    chars.next();
                    out.push('\'');
                }
                Some('\'') => break,
                Some(c) => out.push(c),
            }
        }
        return Ok(Value::Str(out.trim_end().to_string()));
    }
    let raw = trimmed.split('/').next().unwrap_or("").trim();
    if raw.is_empty() {
        return Ok(Value::Empty);
    }
    match raw {
        "T" => return Ok(Value::Bool(true)),
        "F" => return Ok(Value::Bool(false)),
        _ => {}
    }
    Ok(parse_number(raw).unwrap_or_else(|| Value::Unparsed(raw.to_string())))
}

/// A FITS integer or real (with `E` or `D` exponent); `None` for anything else, including the
/// `inf`/`nan` spellings Rust's parser would accept.
fn parse_number(raw: &str) -> Option<Value> {
    if !raw
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'+' | b'-' | b'.' | b'E' | b'e' | b'D' | b'd'))
    {
        return None;
    }
    if !raw.bytes().any(|b| b.is_ascii_digit()) {
        return None;
    }
    if let Ok(i) = raw.parse::<i64>() {
        return Some(Value::Int(i));
    }
    raw.replace(['D', 'd'], "E")
        .parse::<f64>()
        .ok()
        .map(Value::Float)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn card(s: &str) -> String {
        format!("{s:<80}")
    }

    #[test]
    fn parses_concatenated_cards() {
        let text = [
            card("SIMPLE  =                    T"),
            card("CRPIX1  =  -1.832937255632E+02"),
            card("CDELT1  =   -6.666666666667D-02 / comment"),
            card("CTYPE1  = 'RA---ZPN'           / with 'quote'"),
            card("OBJECT  = 'O''Brien  '"),
            card("END"),
            card("CRVAL1  = 3.0"),
        ]
        .concat();
        let h = Header::parse(&text).unwrap();
        assert_eq!(h.float("CRPIX1").unwrap(), Some(-183.2937255632));
        assert_eq!(h.float("CDELT1").unwrap(), Some(-0.06666666666667));
        assert_eq!(h.string("CTYPE1").unwrap().as_deref(), Some("RA---ZPN"));
        assert_eq!(h.string("OBJECT").unwrap().as_deref(), Some("O'Brien"));
        assert!(!h.contains("CRVAL1"), "cards after END are ignored");
    }

    #[test]
    fn reports_bad_values_only_when_read() {
        let h = Header::parse("CRVAL1  = abc\nCRVAL2  = nan\nOBJECT  = 12\n").unwrap();
        assert!(matches!(h.float("CRVAL1"), Err(Error::InvalidValue { .. })));
        assert!(matches!(h.float("CRVAL2"), Err(Error::InvalidValue { .. })));
        assert!(h.string("OBJECT").is_err());
    }

    #[test]
    fn duplicates_must_agree() {
        let h = Header::parse("CRVAL1  = 1.0\nCRVAL1  = 1.0\nCRVAL2  = 1\nCRVAL2  = 2\n").unwrap();
        assert_eq!(h.float("CRVAL1").unwrap(), Some(1.0));
        assert_eq!(
            h.float("CRVAL2"),
            Err(Error::DuplicateKeyword("CRVAL2".into()))
        );
    }

    #[test]
    fn truncated_final_card_is_an_error() {
        let text = card("NAXIS   = 2") + "CRVAL1  =   1";
        assert!(matches!(
            Header::parse(&text),
            Err(Error::MalformedCard { card: 2, .. })
        ));
    }

    #[test]
    fn unterminated_string_is_an_error() {
        assert!(matches!(
            Header::parse("CTYPE1  = 'RA---TAN\n"),
            Err(Error::MalformedCard { card: 1, .. })
        ));
    }
}
