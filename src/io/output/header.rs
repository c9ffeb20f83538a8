//! Header encoding: the `.npy` header, and FITS cards (fixed-format values, structural
//! keywords, the user's cards) padded to 2880-byte blocks.

use super::OutputType;
use crate::error::{Error, Result};

/// FITS block size.
pub(super) const BLOCK: usize = 2880;
/// FITS card length.
const CARD: usize = 80;

pub(super) fn pad_to(n: usize, block: usize) -> usize {
    n.div_ceil(block) * block
}

/// A `.npy` header (magic, version, length, dict, padding) whose length is a multiple of 64.
pub(super) fn npy_header(shape: &[usize], dtype: OutputType) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(|n| n.to_string()).collect();
    let shape_txt = match dims.len() {
        1 => format!("({},)", dims[0]),
        _ => format!("({})", dims.join(", ")),
    };
    let dict = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': {shape_txt}, }}",
        dtype.npy_descr()
    );
    let (version, prefix) = if dict.len() + 11 < 65536 {
        (1u8, 10usize)
    } else {
        (2u8, 12usize)
    };
    let total = (prefix + dict.len() + 1).div_ceil(64) * 64;
    let hlen = total - prefix;
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(b"\x93NUMPY");
    out.push(version);
    out.push(0);
    if version == 1 {
        out.extend_from_slice(&(hlen as u16).to_le_bytes());
    } else {
        out.extend_from_slice(&(hlen as u32).to_le_bytes());
    }
    out.extend_from_slice(dict.as_bytes());
    out.resize(total - 1, b' ');
    out.push(b'\n');
    out
}

/// A fixed-format card `KEYWORD = value` (value right-justified to column 30).
pub(super) fn card_value(key: &str, value: &str) -> String {
    let s = if value.starts_with('\'') {
        format!("{key:<8}= {value}")
    } else {
        format!("{key:<8}= {value:>20}")
    };
    format!("{s:<80}")
}

pub(super) fn push_image_cards(head: &mut Vec<String>, shape: &[usize], dtype: OutputType) {
    head.push(card_value("BITPIX", &dtype.bitpix().to_string()));
    head.push(card_value("NAXIS", &shape.len().to_string()));
    for (i, n) in shape.iter().rev().enumerate() {
        head.push(card_value(&format!("NAXIS{}", i + 1), &n.to_string()));
    }
}

/// Joins cards, appends END and pads with blanks to a multiple of 2880 bytes.
pub(super) fn finish_header(mut cards: Vec<String>) -> Vec<u8> {
    cards.push(format!("{:<80}", "END"));
    let mut out: Vec<u8> = cards.concat().into_bytes();
    out.resize(pad_to(out.len(), BLOCK), b' ');
    out
}

/// The keyword of a card (first 8 characters, trailing blanks removed).
pub(super) fn keyword(card: &str) -> &str {
    card[..card.len().min(8)].trim_end()
}

/// Whether a keyword is structural (written by us, or meaningless for the new data).
fn is_structural(key: &str) -> bool {
    let indexed = |prefix: &str| {
        key.strip_prefix(prefix)
            .is_some_and(|rest| !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()))
    };
    matches!(
        key,
        "SIMPLE"
            | "XTENSION"
            | "BITPIX"
            | "NAXIS"
            | "EXTEND"
            | "PCOUNT"
            | "GCOUNT"
            | "BSCALE"
            | "BZERO"
            | "BLANK"
            | "CHECKSUM"
            | "DATASUM"
            | "END"
            | "ZIMAGE"
            | "ZSIMPLE"
            | "ZTENSION"
            | "ZBITPIX"
            | "ZNAXIS"
            | "ZEXTEND"
            | "ZCMPTYPE"
            | "ZQUANTIZ"
            | "ZDITHER0"
            | "ZBLANK"
            | "ZSCALE"
            | "ZZERO"
            | "ZPCOUNT"
            | "ZGCOUNT"
            | "ZHECKSUM"
            | "ZDATASUM"
            | "TFIELDS"
            | "THEAP"
    ) || indexed("NAXIS")
        || indexed("ZNAXIS")
        || indexed("ZTILE")
        || indexed("ZNAME")
        || indexed("ZVAL")
        || indexed("TTYPE")
        || indexed("TFORM")
}

/// Splits header text into 80-character cards, dropping structural ones; stops at END.
pub(super) fn user_cards(text: &str) -> Result<Vec<String>> {
    let raw: Vec<&str> = if text.contains('\n') {
        text.split('\n').map(|l| l.trim_end_matches('\r')).collect()
    } else if text.len() > CARD && text.len().is_multiple_of(CARD) && text.is_ascii() {
        (0..text.len() / CARD)
            .map(|i| &text[i * CARD..(i + 1) * CARD])
            .collect()
    } else {
        vec![text]
    };
    let mut cards = Vec::new();
    for (i, card) in raw.into_iter().enumerate() {
        if card.trim().is_empty() {
            continue;
        }
        if !card.bytes().all(|b| (0x20..=0x7e).contains(&b)) {
            return Err(Error::InvalidArgument(format!(
                "header card {}: only printable ASCII is allowed: {card:?}",
                i + 1
            )));
        }
        if card.len() > CARD {
            return Err(Error::InvalidArgument(format!(
                "header card {} is {} characters long, more than 80: {card:?}",
                i + 1,
                card.len()
            )));
        }
        let key = keyword(card);
        if key == "END" {
            break;
        }
        if is_structural(key) {
            continue;
        }
        cards.push(format!("{card:<80}"));
    }
    Ok(cards)
}
