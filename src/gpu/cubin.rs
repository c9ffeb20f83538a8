//! The resources of a CUBIN's entry points read from the CUBIN itself, for builds whose NVRTC
//! log holds no ptxas report.
//!
//! NVRTC 13.0 keeps a compute cache (`~/.nv/ComputeCache`). A build it has compiled before,
//! in this process or another, comes back from that cache in a tenth of a second: the same
//! CUBIN, an empty log. This was found on the H100 machine, where the general sm_90 build
//! that the runtime had compiled minutes earlier came back that way, even with a comment
//! added to its source (docs/measurements/h100-2026-11-27-session17). Every CUBIN still
//! carries what the budgets need, in its ELF sections:
//!
//! * `.nv.info`, the module's attribute records: each kernel's register count
//!   (`EIATTR_REGCOUNT`) and stack frame (`EIATTR_FRAME_SIZE`), keyed by its symbol;
//! * `.nv.info.NAME`, one per entry point;
//! * `.nv.shared.NAME`, the size of an entry point's static shared memory. On sm_90 this
//!   includes the 1 KiB per block that the system reserves; such a module also has a
//!   `.nv.shared.reserved.0` section. That 1 KiB is taken off here, so the figure is ptxas's.
//!
//! Spill counts are not in the CUBIN. A kernel without a stack frame has none (spills live in
//! the frame); for one with a frame they are unknown ([`KernelResources::spills_known`]).
//! `tests/gpu_kernels_compile.rs` holds this reader to ptxas's report for every build.

use super::ptxas::{KernelResources, ReportSource};

/// `.nv.info` attribute: a function's stack frame in bytes.
const EIATTR_FRAME_SIZE: u8 = 0x11;
/// `.nv.info` attribute: a function's registers per thread.
const EIATTR_REGCOUNT: u8 = 0x2f;
/// Shared memory the system reserves per block on the architectures whose CUBINs have a
/// `.nv.shared.reserved.*` section (sm_90), counted in each kernel's `.nv.shared.NAME`.
const RESERVED_SHARED: u64 = 1024;

/// One section: its name, and its bytes in the file (empty for NOBITS sections, whose
/// `size` is all there is).
struct Section<'a> {
    name: &'a str,
    bytes: &'a [u8],
    size: u64,
}

/// `N` bytes of `data` at `at`, or why not.
fn field<const N: usize>(data: &[u8], at: u64) -> Result<[u8; N], String> {
    usize::try_from(at)
        .ok()
        .and_then(|at| data.get(at..at.checked_add(N)?))
        .map(|b| b.try_into().expect("N bytes"))
        .ok_or_else(|| format!("the CUBIN ends before byte {at} + {N}"))
}

fn u16_at(data: &[u8], at: u64) -> Result<u16, String> {
    field(data, at).map(u16::from_le_bytes)
}

fn u32_at(data: &[u8], at: u64) -> Result<u32, String> {
    field(data, at).map(u32::from_le_bytes)
}

fn u64_at(data: &[u8], at: u64) -> Result<u64, String> {
    field(data, at).map(u64::from_le_bytes)
}

/// `len` bytes of `data` from `at`, or why not.
fn slice(data: &[u8], at: u64, len: u64) -> Result<&[u8], String> {
    let end = at.checked_add(len);
    usize::try_from(at)
        .ok()
        .zip(end.and_then(|e| usize::try_from(e).ok()))
        .and_then(|(a, e)| data.get(a..e))
        .ok_or_else(|| format!("bytes {at} + {len} lie outside the CUBIN"))
}

/// The NUL-terminated name at `at` in the string table `table`.
fn name_at(table: &[u8], at: u32) -> Result<&str, String> {
    let rest = table
        .get(at as usize..)
        .ok_or_else(|| format!("name {at} lies outside its string table"))?;
    let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
    std::str::from_utf8(&rest[..end]).map_err(|e| format!("name {at}: {e}"))
}

/// The sections of a 64-bit little-endian ELF file (what NVRTC makes).
fn sections(elf: &[u8]) -> Result<Vec<Section<'_>>, String> {
    if elf.get(..6) != Some(b"\x7fELF\x02\x01".as_slice()) {
        return Err("not a 64-bit little-endian ELF file".into());
    }
    let (offset, entry) = (u64_at(elf, 0x28)?, u64::from(u16_at(elf, 0x3a)?));
    let (count, names) = (u16_at(elf, 0x3c)?, u16_at(elf, 0x3e)?);
    if entry < 64 {
        return Err(format!("section headers of {entry} bytes"));
    }
    // (name offset, type, file offset, size) of each section header.
    let headers = (0..u64::from(count))
        .map(|i| {
            let at = offset
                .checked_add(i * entry)
                .ok_or("section headers past the end of the address space")?;
            let header = slice(elf, at, entry)?;
            Ok((
                u32_at(header, 0)?,
                u32_at(header, 4)?,
                u64_at(header, 24)?,
                u64_at(header, 32)?,
            ))
        })
        .collect::<Result<Vec<_>, String>>()?;
    const NOBITS: u32 = 8;
    let bytes = |&(_, kind, at, size): &(u32, u32, u64, u64)| {
        if kind == NOBITS {
            Ok(&elf[..0])
        } else {
            slice(elf, at, size)
        }
    };
    let table = headers
        .get(usize::from(names))
        .ok_or("no section-name table")
        .map(bytes)??;
    headers
        .iter()
        .map(|h| {
            Ok(Section {
                name: name_at(table, h.0)?,
                bytes: bytes(h)?,
                size: h.3,
            })
        })
        .collect()
}

/// The names of the symbols of `.symtab`, by index.
fn symbol_names<'a>(sections: &[Section<'a>]) -> Result<Vec<&'a str>, String> {
    let find = |name: &str| {
        sections
            .iter()
            .find(|s| s.name == name)
            .map(|s| s.bytes)
            .ok_or_else(|| format!("no {name} section"))
    };
    let (symbols, strings) = (find(".symtab")?, find(".strtab")?);
    symbols
        .chunks_exact(24)
        .map(|symbol| name_at(strings, u32_at(symbol, 0)?))
        .collect()
}

/// The `(attribute, symbol index, value)` of the records of `.nv.info` that give one value of
/// one function (8 bytes: the symbol, the value).
fn function_attributes(info: &[u8]) -> Result<Vec<(u8, u32, u32)>, String> {
    // Each record: format, attribute, then by format nothing (1), a byte (2), two bytes
    // (3), or a two-byte length and that many bytes (4).
    let mut records = Vec::new();
    let mut at = 0u64;
    while (at as usize) < info.len() {
        let [format, attribute] = field(info, at)?;
        at += 2;
        match format {
            1 => {}
            2 => at += 1,
            3 => at += 2,
            4 => {
                let len = u64::from(u16_at(info, at)?);
                let value = slice(info, at + 2, len)?;
                if len == 8 {
                    records.push((attribute, u32_at(value, 0)?, u32_at(value, 4)?));
                }
                at += 2 + len;
            }
            other => return Err(format!("an .nv.info record of format {other}")),
        }
    }
    Ok(records)
}

/// Each entry point's resources in `cubin` (an NVRTC CUBIN), in the order of its sections:
/// registers, stack frame and static shared memory as ptxas reports them, and spills of 0,
/// known only where the frame is 0 ([`KernelResources::spills_known`]). Errors name what is
/// missing or malformed.
///
/// ```
/// use reproject::gpu::resources::{cubin_resources, kernel_resources};
/// // Where NVRTC is installed: the CUBIN says what ptxas says.
/// if let Ok((cubin, reported)) = kernel_resources("sm_90") {
///     let read = cubin_resources(&cubin)?;
///     let block = |ks: &[reproject::gpu::resources::KernelResources]| {
///         let k = ks.iter().find(|k| k.name == "rp_reproject_block").unwrap().clone();
///         (k.registers, k.stack_frame, k.shared_memory)
///     };
///     assert_eq!(block(&read), block(&reported));
/// }
/// assert!(cubin_resources(b"not an ELF file").is_err());
/// # Ok::<(), String>(())
/// ```
pub fn cubin_resources(cubin: &[u8]) -> Result<Vec<KernelResources>, String> {
    let sections = sections(cubin)?;
    let symbols = symbol_names(&sections)?;
    let info = sections
        .iter()
        .find(|s| s.name == ".nv.info")
        .ok_or("no .nv.info section")?;
    let attributes = function_attributes(info.bytes)?;
    let value_of = |attribute: u8, kernel: &str| {
        attributes
            .iter()
            .find(|&&(a, symbol, _)| {
                a == attribute && symbols.get(symbol as usize) == Some(&kernel)
            })
            .map(|&(_, _, value)| value)
    };
    let reserved = sections
        .iter()
        .any(|s| s.name.starts_with(".nv.shared.reserved."));
    sections
        .iter()
        .filter_map(|s| s.name.strip_prefix(".nv.info."))
        .map(|kernel| {
            let registers = value_of(EIATTR_REGCOUNT, kernel)
                .ok_or_else(|| format!("no register count for {kernel}"))?;
            let shared = sections
                .iter()
                .find(|s| s.name.strip_prefix(".nv.shared.") == Some(kernel))
                .map_or(0, |s| {
                    if reserved {
                        s.size.saturating_sub(RESERVED_SHARED)
                    } else {
                        s.size
                    }
                });
            Ok(KernelResources {
                name: kernel.to_string(),
                registers,
                stack_frame: value_of(EIATTR_FRAME_SIZE, kernel).unwrap_or(0),
                shared_memory: u32::try_from(shared)
                    .map_err(|_| format!("{shared} B of shared memory for {kernel}"))?,
                source: ReportSource::Cubin,
                ..KernelResources::default()
            })
        })
        .collect()
}

/// The resources of a build's entry points: ptxas's report in `log` where it has one,
/// otherwise what `cubin` says ([`cubin_resources`]; none when it cannot be read).
#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
pub(crate) fn build_resources(cubin: &[u8], log: &str) -> Vec<KernelResources> {
    let reported = super::ptxas::parse_ptxas_log(log);
    if reported.is_empty() {
        cubin_resources(cubin).unwrap_or_default()
    } else {
        reported
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal ELF of the sections given ((name, bytes) each, PROGBITS), with the
    /// section-name table last.
    fn elf(sections: &[(&str, Vec<u8>)]) -> Vec<u8> {
        let mut names = vec![0u8];
        let mut name_offsets = Vec::new();
        for (name, _) in sections.iter().chain([(".shstrtab", Vec::new())].iter()) {
            name_offsets.push(names.len() as u32);
            names.extend_from_slice(name.as_bytes());
            names.push(0);
        }
        let mut file = vec![0u8; 64];
        file[..6].copy_from_slice(b"\x7fELF\x02\x01");
        let mut placed = Vec::new();
        for (_, bytes) in sections {
            placed.push((file.len() as u64, bytes.len() as u64));
            file.extend_from_slice(bytes);
        }
        placed.push((file.len() as u64, names.len() as u64));
        file.extend_from_slice(&names);
        let headers = file.len() as u64;
        // Section 0 is the null section; the others follow.
        file.extend_from_slice(&[0u8; 64]);
        for (name, (at, size)) in name_offsets.iter().zip(&placed) {
            let mut header = [0u8; 64];
            header[..4].copy_from_slice(&name.to_le_bytes());
            header[4..8].copy_from_slice(&1u32.to_le_bytes());
            header[24..32].copy_from_slice(&at.to_le_bytes());
            header[32..40].copy_from_slice(&size.to_le_bytes());
            file.extend_from_slice(&header);
        }
        file[0x28..0x30].copy_from_slice(&headers.to_le_bytes());
        file[0x3a..0x3c].copy_from_slice(&64u16.to_le_bytes());
        let count = placed.len() as u16 + 1;
        file[0x3c..0x3e].copy_from_slice(&count.to_le_bytes());
        file[0x3e..0x40].copy_from_slice(&(count - 1).to_le_bytes());
        file
    }

    fn record(attribute: u8, symbol: u32, value: u32) -> Vec<u8> {
        let mut r = vec![4, attribute, 8, 0];
        r.extend_from_slice(&symbol.to_le_bytes());
        r.extend_from_slice(&value.to_le_bytes());
        r
    }

    fn symbols(names: &[&str]) -> (Vec<u8>, Vec<u8>) {
        let (mut table, mut strings) = (vec![0u8; 24], vec![0u8]);
        for name in names {
            let mut symbol = [0u8; 24];
            symbol[..4].copy_from_slice(&(strings.len() as u32).to_le_bytes());
            table.extend_from_slice(&symbol);
            strings.extend_from_slice(name.as_bytes());
            strings.push(0);
        }
        (table, strings)
    }

    #[test]
    fn registers_frames_and_shared_memory_of_each_entry_point() {
        let (symtab, strtab) = symbols(&["k", "$k$helper", "other"]);
        let mut info = vec![3, 0x50, 0, 0]; // a two-byte record, skipped
        info.extend(record(EIATTR_REGCOUNT, 1, 164));
        info.extend(record(EIATTR_FRAME_SIZE, 2, 496)); // the helper's frame, not k's
        info.extend(record(EIATTR_FRAME_SIZE, 1, 16));
        info.extend(record(EIATTR_REGCOUNT, 3, 40));
        info.extend([1, 0x99]); // a record without a value
        let cubin = elf(&[
            (".symtab", symtab.clone()),
            (".strtab", strtab.clone()),
            (".nv.info", info.clone()),
            (".nv.info.k", vec![]),
            (".nv.info.other", vec![]),
            (".nv.shared.k", vec![0; 232]),
        ]);
        let read = cubin_resources(&cubin).unwrap();
        let summary: Vec<_> = read
            .iter()
            .map(|k| (k.name.as_str(), k.registers, k.stack_frame, k.shared_memory))
            .collect();
        assert_eq!(summary, [("k", 164, 16, 232), ("other", 40, 0, 0)]);
        assert!(read.iter().all(|k| k.source == ReportSource::Cubin));
        assert!(!read[0].spills_known() && read[1].spills_known());
        // With the system's reserved block (sm_90), the shared memory is ptxas's.
        let sm90 = elf(&[
            (".symtab", symtab),
            (".strtab", strtab),
            (".nv.info", info),
            (".nv.info.k", vec![]),
            (".nv.shared.reserved.0", vec![]),
            (".nv.shared.k", vec![0; 1024 + 232]),
        ]);
        assert_eq!(cubin_resources(&sm90).unwrap()[0].shared_memory, 232);
        // The log's report wins where there is one.
        let log = "ptxas info    : Compiling entry function 'k' for 'sm_90'\n\
                   ptxas info    : Used 38 registers, used 0 barriers, 232 bytes smem\n";
        assert_eq!(build_resources(&cubin, log)[0].registers, 38);
        assert_eq!(build_resources(&cubin, "")[0].registers, 164);
        assert!(build_resources(b"", "").is_empty());
    }

    #[test]
    fn malformed_cubins_are_errors() {
        let (symtab, strtab) = symbols(&["k"]);
        let good = elf(&[
            (".symtab", symtab.clone()),
            (".strtab", strtab.clone()),
            (".nv.info", record(EIATTR_REGCOUNT, 1, 64)),
            (".nv.info.k", vec![]),
        ]);
        assert_eq!(cubin_resources(&good).unwrap()[0].registers, 64);
        // Every truncation, and every byte set to 0xff (offsets and sizes far past the end
        // among them), is an error or some answer, never a panic.
        for len in 0..good.len() {
            let _ = cubin_resources(&good[..len]);
            let mut bad = good.clone();
            bad[len] = 0xff;
            let _ = cubin_resources(&bad);
        }
        let mut far = good.clone();
        far[0x28..0x30].copy_from_slice(&(u64::MAX - 8).to_le_bytes());
        assert!(cubin_resources(&far).is_err());
        assert!(cubin_resources(b"\x7fELF\x01\x01").is_err());
        let missing = |sections: &[(&str, Vec<u8>)], what: &str| {
            let e = cubin_resources(&elf(sections)).unwrap_err();
            assert!(e.contains(what), "{e}");
        };
        missing(&[(".strtab", strtab.clone())], ".symtab");
        missing(
            &[(".symtab", symtab.clone()), (".strtab", strtab.clone())],
            ".nv.info",
        );
        missing(
            &[
                (".symtab", symtab.clone()),
                (".strtab", strtab.clone()),
                (".nv.info", vec![]),
                (".nv.info.k", vec![]),
            ],
            "no register count for k",
        );
        missing(
            &[
                (".symtab", symtab),
                (".strtab", strtab),
                (".nv.info", vec![7, 0x2f]),
                (".nv.info.k", vec![]),
            ],
            "format 7",
        );
    }
}
