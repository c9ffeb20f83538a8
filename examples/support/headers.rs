//! Embedded sample headers shared by the demo example and the benchmarks.

/// A 2-D celestial header: `code` projection centred on (`lon`, `lat`) in `frame` axes
/// ("RA"/"DEC" or "GLON"/"GLAT"), `n`x`n` pixels of `scale` degrees, with extra cards.
pub fn header(
    code: &str,
    frame: (&str, &str),
    lon: f64,
    lat: f64,
    n: usize,
    scale: f64,
    extra: &str,
) -> String {
    let pad = |axis: &str| format!("{axis:-<5}{code}");
    let cards = [
        "NAXIS   = 2".to_string(),
        format!("NAXIS1  = {n}"),
        format!("NAXIS2  = {n}"),
        format!("CTYPE1  = '{}'", pad(frame.0)),
        format!("CTYPE2  = '{}'", pad(frame.1)),
        format!("CRPIX1  = {}", n as f64 / 2.0 + 0.5),
        format!("CRPIX2  = {}", n as f64 / 2.0 + 0.5),
        format!("CRVAL1  = {lon:.6}"),
        format!("CRVAL2  = {lat:.6}"),
        format!("CDELT1  = {:.8}", -scale),
        format!("CDELT2  = {scale:.8}"),
        "RADESYS = 'ICRS'".to_string(),
    ];
    let mut text: String = cards.iter().map(|c| format!("{c:<80}")).collect();
    for line in extra.lines().filter(|l| !l.trim().is_empty()) {
        text.push_str(&format!("{:<80}", line.trim()));
    }
    text
}

/// A TAN header centred on `crval`, reference pixel (`crpix`, `crpix`), `cdelt` degrees a
/// pixel, rotated by `rot` degrees (PCi_j): the GPU benchmark's jobs.
pub fn rotated_tan(crval: (f64, f64), crpix: f64, cdelt: f64, rot: f64) -> String {
    let (s, c) = rot.to_radians().sin_cos();
    format!(
        "CTYPE1 = 'RA---TAN'\nCTYPE2 = 'DEC--TAN'\nCRVAL1 = {:?}\nCRVAL2 = {:?}\n\
         CRPIX1 = {crpix:?}\nCRPIX2 = {crpix:?}\nCDELT1 = {:?}\nCDELT2 = {cdelt:?}\n\
         PC1_1 = {c:?}\nPC1_2 = {:?}\nPC2_1 = {s:?}\nPC2_2 = {c:?}\n",
        crval.0, crval.1, -cdelt, -s
    )
}

/// One sample header per projection code: (code, header).
pub fn all_projections(n: usize) -> Vec<(&'static str, String)> {
    let eq = ("RA", "DEC");
    let gal = ("GLON", "GLAT");
    let wide = 180.0 / n as f64;
    vec![
        ("AZP", header("AZP", eq, 120.0, 40.0, n, wide, "PV2_1   = 2.0\nPV2_2   = 30.0")),
        ("SZP", header("SZP", eq, 120.0, 40.0, n, wide, "PV2_1   = 2.0\nPV2_2   = 180.0\nPV2_3   = 60.0")),
        ("TAN", header("TAN", eq, 120.0, 40.0, n, 0.05, "")),
        ("STG", header("STG", eq, 120.0, 40.0, n, wide, "")),
        ("SIN", header("SIN", eq, 120.0, 40.0, n, wide, "")),
        ("ARC", header("ARC", eq, 120.0, 40.0, n, wide, "")),
        ("ZPN", header("ZPN", eq, 120.0, 40.0, n, wide, "PV2_0   = 0.05\nPV2_1   = 0.975\nPV2_2   = -0.807\nPV2_3   = 0.337\nPV2_4   = -0.065")),
        ("ZEA", header("ZEA", eq, 120.0, 40.0, n, wide, "")),
        ("AIR", header("AIR", eq, 120.0, 40.0, n, wide, "PV2_1   = 45.0")),
        ("CYP", header("CYP", gal, 0.0, 0.0, n, 2.0 * wide, "PV2_1   = 1.0\nPV2_2   = 0.707")),
        ("CEA", header("CEA", gal, 0.0, 0.0, n, 2.0 * wide, "PV2_1   = 1.0")),
        ("CAR", header("CAR", gal, 0.0, 0.0, n, 2.0 * wide, "")),
        ("MER", header("MER", gal, 0.0, 0.0, n, 2.0 * wide, "")),
        ("SFL", header("SFL", gal, 0.0, 0.0, n, 2.0 * wide, "")),
        ("PAR", header("PAR", gal, 0.0, 0.0, n, 2.0 * wide, "")),
        ("MOL", header("MOL", gal, 0.0, 0.0, n, 2.0 * wide, "")),
        ("AIT", header("AIT", gal, 0.0, 0.0, n, 2.0 * wide, "")),
        ("COP", header("COP", eq, 120.0, 45.0, n, wide, "PV2_1   = 45.0\nPV2_2   = 25.0")),
        ("COE", header("COE", eq, 120.0, 45.0, n, wide, "PV2_1   = 45.0\nPV2_2   = 25.0")),
        ("COD", header("COD", eq, 120.0, 45.0, n, wide, "PV2_1   = 45.0\nPV2_2   = 25.0")),
        ("COO", header("COO", eq, 120.0, 45.0, n, wide, "PV2_1   = 45.0\nPV2_2   = 25.0")),
        ("BON", header("BON", eq, 120.0, 0.0, n, 2.0 * wide, "PV2_1   = 45.0")),
        ("PCO", header("PCO", eq, 120.0, 0.0, n, 2.0 * wide, "")),
        ("TSC", header("TSC", gal, 0.0, 0.0, n, 4.0 * wide, "")),
        ("CSC", header("CSC", gal, 0.0, 0.0, n, 4.0 * wide, "")),
        ("QSC", header("QSC", gal, 0.0, 0.0, n, 4.0 * wide, "")),
        ("HPX", header("HPX", gal, 0.0, 0.0, n, 2.0 * wide, "")),
        ("XPH", header("XPH", gal, 0.0, 90.0, n, 2.0 * wide, "")),
    ]
}
